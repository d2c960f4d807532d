// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native: the C++ engine under the Python package. Python code imports
// it through the pure-Python modules of python/zeus/, never directly.

#include "python/src/bindings.h"

PYBIND11_MODULE(_native, m) {
  m.doc() = "Zeus's native engine (C++). Use the zeus package's modules, not this one.";
  zeus::python::RegisterErrors(m);
  zeus::python::RegisterDevice(m);
  zeus::python::RegisterMonitor(m);
  zeus::python::RegisterPowerLimit(m);
  zeus::python::RegisterBatchSize(m);
  zeus::python::RegisterMetric(m);
  zeus::python::RegisterZeusd(m);
  zeus::python::RegisterPowerStreaming(m);
}
