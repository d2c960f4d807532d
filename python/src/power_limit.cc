// Copyright 2026 The Zeus C++ Authors.

#include "python/src/bindings.h"

namespace zeus::python {

void RegisterPowerLimit(py::module_& m) { (void)m.def_submodule("power_limit"); }

}  // namespace zeus::python
