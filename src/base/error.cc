// Copyright 2026 The Zeus C++ Authors.

#include "zeus/base/error.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace zeus {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "OK";
    case ErrorCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case ErrorCode::kNotFound: return "NOT_FOUND";
    case ErrorCode::kNotSupported: return "NOT_SUPPORTED";
    case ErrorCode::kPermissionDenied: return "PERMISSION_DENIED";
    case ErrorCode::kUnavailable: return "UNAVAILABLE";
    case ErrorCode::kDeviceLost: return "DEVICE_LOST";
    case ErrorCode::kTimeout: return "TIMEOUT";
    case ErrorCode::kIoError: return "IO_ERROR";
    case ErrorCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case ErrorCode::kAlreadyExists: return "ALREADY_EXISTS";
    case ErrorCode::kAborted: return "ABORTED";
    case ErrorCode::kInternal: return "INTERNAL";
  }
  return "INTERNAL";
}

Error Error::WithContext(std::string_view context) const {
  Error copy = *this;
  copy.message_ = fmt::format("{}: {}", context, message_);
  return copy;
}

Error ErrorFromErrno(int errno_value, std::string_view what) {
  ErrorCode code = ErrorCode::kIoError;
  std::string hint;
  switch (errno_value) {
    case EACCES:
    case EPERM:
      code = ErrorCode::kPermissionDenied;
      hint = "; run as root, or grant read access to this file";
      break;
    case ENOENT:
    case ENODEV:
    case ENXIO:
      code = ErrorCode::kNotFound;
      break;
    case EINVAL:
      code = ErrorCode::kInvalidArgument;
      break;
    case EOPNOTSUPP:
      code = ErrorCode::kNotSupported;
      break;
    case ETIMEDOUT:
      code = ErrorCode::kTimeout;
      break;
    case ECONNREFUSED:
    case EAGAIN:
      code = ErrorCode::kUnavailable;
      break;
    case EEXIST:
      code = ErrorCode::kAlreadyExists;
      break;
    case EIO:
    default:
      code = ErrorCode::kIoError;
      break;
  }
  return Error(code, fmt::format("{}: {}{}", what, std::strerror(errno_value), hint), NativeSpace::kErrno,
               errno_value);
}

int ExitCodeFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return 0;
    case ErrorCode::kInvalidArgument: return 2;
    case ErrorCode::kPermissionDenied: return 3;
    case ErrorCode::kUnavailable: return 4;
    case ErrorCode::kNotSupported: return 5;
    case ErrorCode::kNotFound:
    case ErrorCode::kDeviceLost:
    case ErrorCode::kTimeout:
    case ErrorCode::kIoError:
    case ErrorCode::kFailedPrecondition:
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kAborted:
    case ErrorCode::kInternal: return 1;
  }
  return 1;
}

}  // namespace zeus
