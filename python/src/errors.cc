// Copyright 2026 The Zeus C++ Authors.
//
// The one translation table from native errors to Python exceptions. The
// classes live in zeus/exception.py; each row names one. A code that has no
// row in its domain falls back to the kGeneral row of that code.

#include <pybind11/stl.h>

#include <array>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "python/src/bindings.h"

namespace zeus::python {
namespace {

struct Row {
  ErrorDomain domain;
  ErrorCode code;
  const char* exception;  // a class of zeus.exception
};

constexpr Row kTable[] = {
    // Every code, outside any family. Each class also derives from the
    // builtin exception Zeus raises for that kind of failure (ValueError for
    // bad arguments and unknown or duplicate names, as ZeusMonitor's windows).
    {ErrorDomain::kGeneral, ErrorCode::kInvalidArgument, "ZeusInvalidArgumentError"},
    {ErrorDomain::kGeneral, ErrorCode::kNotFound, "ZeusNotFoundError"},
    {ErrorDomain::kGeneral, ErrorCode::kNotSupported, "ZeusNotSupportedError"},
    {ErrorDomain::kGeneral, ErrorCode::kPermissionDenied, "ZeusPermissionError"},
    {ErrorDomain::kGeneral, ErrorCode::kUnavailable, "ZeusUnavailableError"},
    {ErrorDomain::kGeneral, ErrorCode::kDeviceLost, "ZeusDeviceLostError"},
    {ErrorDomain::kGeneral, ErrorCode::kTimeout, "ZeusTimeoutError"},
    {ErrorDomain::kGeneral, ErrorCode::kIoError, "ZeusIOError"},
    {ErrorDomain::kGeneral, ErrorCode::kFailedPrecondition, "ZeusFailedPreconditionError"},
    {ErrorDomain::kGeneral, ErrorCode::kAlreadyExists, "ZeusAlreadyExistsError"},
    {ErrorDomain::kGeneral, ErrorCode::kAborted, "ZeusAbortedError"},
    {ErrorDomain::kGeneral, ErrorCode::kInternal, "ZeusInternalError"},
    // GPUs: Zeus's ZeusBaseGPUError family.
    {ErrorDomain::kGpu, ErrorCode::kInvalidArgument, "ZeusGPUInvalidArgError"},
    {ErrorDomain::kGpu, ErrorCode::kNotFound, "ZeusGPUNotFoundError"},
    {ErrorDomain::kGpu, ErrorCode::kNotSupported, "ZeusGPUNotSupportedError"},
    {ErrorDomain::kGpu, ErrorCode::kPermissionDenied, "ZeusGPUNoPermissionError"},
    {ErrorDomain::kGpu, ErrorCode::kUnavailable, "ZeusGPUInitError"},
    {ErrorDomain::kGpu, ErrorCode::kDeviceLost, "ZeusGPULostError"},
    {ErrorDomain::kGpu, ErrorCode::kTimeout, "ZeusGPUTimeoutError"},
    {ErrorDomain::kGpu, ErrorCode::kIoError, "ZeusGPUUnknownError"},
    {ErrorDomain::kGpu, ErrorCode::kAborted, "ZeusGPUUnknownError"},
    {ErrorDomain::kGpu, ErrorCode::kInternal, "ZeusGPUUnknownError"},
    // CPUs (RAPL).
    {ErrorDomain::kCpu, ErrorCode::kPermissionDenied, "ZeusCPUNoPermissionError"},
    {ErrorDomain::kCpu, ErrorCode::kUnavailable, "ZeusCPUInitError"},
    {ErrorDomain::kCpu, ErrorCode::kNotFound, "ZeusCPUInitError"},
    {ErrorDomain::kCpu, ErrorCode::kNotSupported, "ZeusCPUInitError"},
    {ErrorDomain::kCpu, ErrorCode::kIoError, "ZeusCPUIOError"},
    // SoCs (NVIDIA Jetson): nothing to measure, or a rail that cannot be read.
    {ErrorDomain::kSoc, ErrorCode::kUnavailable, "ZeusSoCInitError"},
    {ErrorDomain::kSoc, ErrorCode::kNotFound, "ZeusSoCInitError"},
    {ErrorDomain::kSoc, ErrorCode::kNotSupported, "ZeusSoCInitError"},
    {ErrorDomain::kSoc, ErrorCode::kIoError, "ZeusSoCIOError"},
    // The batch-size optimizer's client (Zeus's ZeusBSO* classes).
    {ErrorDomain::kZeusd, ErrorCode::kInvalidArgument, "ZeusdError"},
    {ErrorDomain::kZeusd, ErrorCode::kNotFound, "ZeusdError"},
    {ErrorDomain::kZeusd, ErrorCode::kNotSupported, "ZeusdError"},
    {ErrorDomain::kZeusd, ErrorCode::kPermissionDenied, "ZeusdAuthError"},
    {ErrorDomain::kZeusd, ErrorCode::kUnavailable, "ZeusdConnectionError"},
    {ErrorDomain::kZeusd, ErrorCode::kDeviceLost, "ZeusdError"},
    {ErrorDomain::kZeusd, ErrorCode::kTimeout, "ZeusdConnectionError"},
    {ErrorDomain::kZeusd, ErrorCode::kIoError, "ZeusdConnectionError"},
    {ErrorDomain::kZeusd, ErrorCode::kFailedPrecondition, "ZeusdCapabilityError"},
    {ErrorDomain::kZeusd, ErrorCode::kAlreadyExists, "ZeusdError"},
    {ErrorDomain::kZeusd, ErrorCode::kAborted, "ZeusdError"},
    {ErrorDomain::kZeusd, ErrorCode::kInternal, "ZeusdError"},

    {ErrorDomain::kBatchSize, ErrorCode::kInvalidArgument, "ZeusBSOConfigError"},
    {ErrorDomain::kBatchSize, ErrorCode::kFailedPrecondition, "ZeusBSOOperationOrderError"},
    {ErrorDomain::kBatchSize, ErrorCode::kNotFound, "ZeusBSORuntimError"},
    {ErrorDomain::kBatchSize, ErrorCode::kNotSupported, "ZeusBSORuntimError"},
    {ErrorDomain::kBatchSize, ErrorCode::kPermissionDenied, "ZeusBSORuntimError"},
    {ErrorDomain::kBatchSize, ErrorCode::kUnavailable, "ZeusBSORuntimError"},
    {ErrorDomain::kBatchSize, ErrorCode::kTimeout, "ZeusBSORuntimError"},
    {ErrorDomain::kBatchSize, ErrorCode::kIoError, "ZeusBSORuntimError"},
    {ErrorDomain::kBatchSize, ErrorCode::kAlreadyExists, "ZeusBSORuntimError"},
    {ErrorDomain::kBatchSize, ErrorCode::kAborted, "ZeusBSORuntimError"},
    {ErrorDomain::kBatchSize, ErrorCode::kInternal, "ZeusBSORuntimError"},
};

const char* ExceptionFor(ErrorDomain domain, ErrorCode code) {
  for (const Row& row : kTable) {
    if (row.domain == domain && row.code == code) return row.exception;
  }
  for (const Row& row : kTable) {
    if (row.domain == ErrorDomain::kGeneral && row.code == code) return row.exception;
  }
  return "ZeusInternalError";  // kOk used as a failure: a bug
}

constexpr std::array<std::pair<ErrorDomain, std::string_view>, 6> kDomainNames = {{
    {ErrorDomain::kGeneral, "general"},
    {ErrorDomain::kGpu, "gpu"},
    {ErrorDomain::kCpu, "cpu"},
    {ErrorDomain::kBatchSize, "batch_size"},
    {ErrorDomain::kZeusd, "zeusd"},
    {ErrorDomain::kSoc, "soc"},
}};

std::string_view DomainName(ErrorDomain domain) {
  for (const auto& [d, name] : kDomainNames) {
    if (d == domain) return name;
  }
  return "general";
}

ErrorDomain DomainFromName(std::string_view name) {
  for (const auto& [d, n] : kDomainNames) {
    if (n == name) return d;
  }
  throw py::value_error("unknown error domain '" + std::string(name) + "'");
}

ErrorCode CodeFromName(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(ErrorCode::kInternal); ++i) {
    const auto code = static_cast<ErrorCode>(i);
    if (ErrorCodeName(code) == name) return code;
  }
  throw py::value_error("unknown error code '" + std::string(name) + "'");
}

}  // namespace

void ThrowError(const Error& error, ErrorDomain domain) {
  // Zeus's batch-size client raises ZeusBSORuntimError for every error answer of the service, whatever its
  // status (a 400 for an unknown trial, a 409 when pruning found no converging batch size); so do we.
  const bool service_answer = domain == ErrorDomain::kBatchSize && error.native_space() == NativeSpace::kHttp;
  const char* name = service_answer ? "ZeusBSORuntimError" : ExceptionFor(domain, error.code());
  py::object cls = py::module_::import("zeus.exception").attr(name);
  py::object native = error.native_code() ? py::object(py::int_(*error.native_code())) : py::object(py::none());
  py::object exception = cls(error.message(), py::str(std::string(ErrorCodeName(error.code()))), native);
  PyErr_SetObject(cls.ptr(), exception.ptr());
  throw py::error_already_set();
}

void RegisterErrors(py::module_& m) {
  py::module_ errors = m.def_submodule("errors", "The native error table (for zeus.exception and its tests).");
  errors.def(
      "table",
      [] {
        std::vector<std::tuple<std::string, std::string, std::string>> rows;
        for (const Row& row : kTable) {
          rows.emplace_back(std::string(DomainName(row.domain)), std::string(ErrorCodeName(row.code)),
                            row.exception);
        }
        return rows;
      },
      "Rows (domain, code, exception class name) of the translation table.");
  errors.def(
      "exception_for",
      [](std::string_view domain, std::string_view code) {
        return std::string(ExceptionFor(DomainFromName(domain), CodeFromName(code)));
      },
      py::arg("domain"), py::arg("code"), "The exception class name a native error of this domain and code raises.");
  errors.def(
      "raise_error",
      [](std::string_view domain, std::string_view code, const std::string& message) {
        ThrowError(Error(CodeFromName(code), message), DomainFromName(domain));
      },
      py::arg("domain"), py::arg("code"), py::arg("message"),
      "Raises what a native error of this domain and code raises (for tests).");
}

}  // namespace zeus::python
