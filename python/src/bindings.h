// Copyright 2026 The Zeus C++ Authors.
//
// Shared declarations of the native module zeus._native (pybind11). Each
// Register* function adds one submodule; module.cc calls them in order.
//
// Errors: a native zeus::Error reaching Python is raised through ThrowError,
// the one translation table from (domain, ErrorCode) to the exception classes
// of zeus.exception (errors.cc, tested in python/tests/test_exceptions.py).
//
// The GIL: every call that can block (NVML, RAPL, HTTP, a sleep) runs with
// the GIL released, through ReleaseGil (log.h), which then delivers the log
// records the call produced to Python.

#ifndef ZEUS_PYTHON_SRC_BINDINGS_H_
#define ZEUS_PYTHON_SRC_BINDINGS_H_

#include <pybind11/pybind11.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <utility>

#include "python/src/log.h"
#include "zeus/base/error.h"

namespace zeus::python {

namespace py = pybind11;

// Which part of Zeus raised the error: it picks the exception family
// (ZeusBaseGPUError subclasses for GPUs, the ZeusBSO* classes for the
// batch-size optimizer, ...).
enum class ErrorDomain { kGeneral, kGpu, kCpu, kBatchSize, kZeusd, kSoc };

// Raises the Python exception for `error` (sets the Python error and throws
// py::error_already_set). Needs the GIL.
[[noreturn]] void ThrowError(const Error& error, ErrorDomain domain = ErrorDomain::kGeneral);

// The value of `result`, or ThrowError.
template <class T>
T Unwrap(Result<T> result, ErrorDomain domain = ErrorDomain::kGeneral) {
  if (!result) ThrowError(result.error(), domain);
  if constexpr (!std::is_void_v<T>) return std::move(*result);
}

// Seconds from Python (a float) as the nearest nanoseconds.
inline std::chrono::nanoseconds Nanoseconds(double seconds) {
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(seconds * 1e9)));
}

void RegisterErrors(py::module_& m);
void RegisterDevice(py::module_& m);
void RegisterMonitor(py::module_& m);
// Adds ProcessEnergyMonitor to the monitor submodule `sub`.
void RegisterProcessEnergy(py::module_& sub);
void RegisterPowerLimit(py::module_& m);
void RegisterBatchSize(py::module_& m);
void RegisterMetric(py::module_& m);
void RegisterZeusd(py::module_& m);
void RegisterPowerStreaming(py::module_& m);
void RegisterHttpFetch(py::module_& m);

}  // namespace zeus::python

#endif  // ZEUS_PYTHON_SRC_BINDINGS_H_
