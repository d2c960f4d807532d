// Copyright 2026 The Zeus C++ Authors.

#include "http/http_status.h"

#include <initializer_list>
#include <utility>

namespace zeus::http {
namespace {

using Row = std::pair<ErrorCode, int>;

// A table from rows, one per code; a code left out stays 0, which
// EveryCodeHasAStatus rejects at compile time.
constexpr std::array<int, kErrorCodeCount> ByCode(std::initializer_list<Row> rows) {
  std::array<int, kErrorCodeCount> statuses{};
  for (const auto& [code, status] : rows) statuses[static_cast<std::size_t>(code)] = status;
  return statuses;
}

constexpr bool EveryCodeHasAStatus(const std::array<int, kErrorCodeCount>& statuses) {
  for (int status : statuses) {
    if (status < 200 || status > 599) return false;
  }
  return true;
}

constexpr std::array<int, kErrorCodeCount> kBso = ByCode({
    {ErrorCode::kOk, 200},
    {ErrorCode::kInvalidArgument, 400},
    {ErrorCode::kNotFound, 404},
    {ErrorCode::kNotSupported, 500},
    {ErrorCode::kPermissionDenied, 403},
    {ErrorCode::kUnavailable, 503},
    {ErrorCode::kDeviceLost, 500},
    {ErrorCode::kTimeout, 504},
    {ErrorCode::kIoError, 500},
    {ErrorCode::kFailedPrecondition, 409},
    {ErrorCode::kAlreadyExists, 409},
    {ErrorCode::kAborted, 503},
    {ErrorCode::kInternal, 500},
});
static_assert(EveryCodeHasAStatus(kBso));

constexpr std::array<int, kErrorCodeCount> kZeusd = ByCode({
    {ErrorCode::kOk, 200},
    {ErrorCode::kInvalidArgument, 400},
    {ErrorCode::kNotFound, 500},
    {ErrorCode::kNotSupported, 400},
    {ErrorCode::kPermissionDenied, 403},
    {ErrorCode::kUnavailable, 500},
    {ErrorCode::kDeviceLost, 500},
    {ErrorCode::kTimeout, 500},
    {ErrorCode::kIoError, 500},
    {ErrorCode::kFailedPrecondition, 500},
    {ErrorCode::kAlreadyExists, 500},
    {ErrorCode::kAborted, 500},
    {ErrorCode::kInternal, 500},
});
static_assert(EveryCodeHasAStatus(kZeusd));

}  // namespace

const ErrorStatusTable kBsoErrorStatuses{"batch-size service", kBso};
const ErrorStatusTable kZeusdErrorStatuses{"zeusd", kZeusd};

int HttpStatusFor(const ErrorStatusTable& table, ErrorCode code) {
  const auto index = static_cast<std::size_t>(code);
  return index < table.status_by_code.size() ? table.status_by_code[index] : 500;
}

int HttpStatusForError(const ErrorStatusTable& table, const Error& error) {
  if (error.native_space() == NativeSpace::kHttp) {
    const int status = *error.native_code();
    if (status >= 400 && status <= 599) return status;
  }
  return HttpStatusFor(table, error.code());
}

ErrorCode ErrorCodeForHttpStatus(int status) {
  if (status >= 200 && status < 300) return ErrorCode::kOk;
  switch (status) {
    case 401:
    case 403: return ErrorCode::kPermissionDenied;
    case 404: return ErrorCode::kNotFound;
    case 409: return ErrorCode::kFailedPrecondition;
    case 503: return ErrorCode::kUnavailable;
    case 504: return ErrorCode::kTimeout;
    default: break;
  }
  if (status >= 400 && status < 500) return ErrorCode::kInvalidArgument;
  return ErrorCode::kInternal;
}

}  // namespace zeus::http
