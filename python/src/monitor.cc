// Copyright 2026 The Zeus C++ Authors.

#include "python/src/bindings.h"

namespace zeus::python {

void RegisterMonitor(py::module_& m) { (void)m.def_submodule("monitor"); }

}  // namespace zeus::python
