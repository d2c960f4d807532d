// Copyright 2026 The Zeus C++ Authors.

#include "python/src/bindings.h"

namespace zeus::python {

void RegisterBatchSize(py::module_& m) { (void)m.def_submodule("batch_size"); }

}  // namespace zeus::python
