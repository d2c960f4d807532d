// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native: the C++ engine under the Python package. Python code imports
// it through the pure-Python modules of python/zeus/, never directly.
//
// Two definitions come from python/CMakeLists.txt, on this file alone:
// ZEUS_PYTHON_VERSION (the project's version, zeus.__version__) and
// ZEUS_HAVE_EXPORTER (1 when the exporter component is built: then the
// submodule `metric`, Zeus's Prometheus push helpers, exists).

#include "python/src/bindings.h"

#ifndef ZEUS_PYTHON_VERSION
#define ZEUS_PYTHON_VERSION "unknown"
#endif

PYBIND11_MODULE(_native, m) {
  m.doc() = "Zeus's native engine (C++). Use the zeus package's modules, not this one.";
  m.attr("__version__") = ZEUS_PYTHON_VERSION;
  zeus::python::RegisterLog(m);
  zeus::python::RegisterErrors(m);
  zeus::python::RegisterDevice(m);
  zeus::python::RegisterMonitor(m);
  zeus::python::RegisterPowerLimit(m);
  zeus::python::RegisterBatchSize(m);
#if defined(ZEUS_HAVE_EXPORTER) && ZEUS_HAVE_EXPORTER
  zeus::python::RegisterMetric(m);
#endif
  zeus::python::RegisterZeusd(m);
  zeus::python::RegisterPowerStreaming(m);
  zeus::python::RegisterHttpFetch(m);
}
