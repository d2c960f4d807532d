// Copyright 2026 The Zeus C++ Authors.

#include "python/src/bindings.h"

namespace zeus::python {

void RegisterDevice(py::module_& m) { (void)m.def_submodule("device"); }

}  // namespace zeus::python
