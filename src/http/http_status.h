// Copyright 2026 The Zeus C++ Authors.
//
// The one pair of tables between ErrorCode and HTTP status (private to the
// project: src/http), shared by the batch-size service and zeusd, servers
// and clients:
//
//   * servers answer an error with HttpStatusForError(protocol, error), where
//     `protocol` is the table of statuses that protocol documents
//     (kBsoErrorStatuses, kZeusdErrorStatuses: data, not code);
//   * clients of either protocol read an answer's status back with
//     ErrorCodeForHttpStatus, the one inverse.
//
// The pair is consistent (http_status_test.cc checks every ErrorCode and
// every status): a status that a protocol's table answers reads back as a
// code that the table answers with that same status, and a code reads back
// as itself wherever its status is its own; the codes that share a status
// read back as the one listed at ErrorCodeForHttpStatus.

#ifndef ZEUS_SRC_HTTP_HTTP_STATUS_H_
#define ZEUS_SRC_HTTP_HTTP_STATUS_H_

#include <array>
#include <cstddef>
#include <string_view>

#include "zeus/base/error.h"

namespace zeus::http {

inline constexpr std::size_t kErrorCodeCount = static_cast<std::size_t>(ErrorCode::kInternal) + 1;

// The HTTP status one protocol's servers answer for each ErrorCode.
struct ErrorStatusTable {
  std::string_view protocol;                        // for people: "batch-size service", "zeusd"
  std::array<int, kErrorCodeCount> status_by_code;  // indexed by the ErrorCode's value
};

// The batch-size service (Zeus's FastAPI server, zeus-reference 3.1): kOk
// 200; kInvalidArgument 400; kPermissionDenied 403; kNotFound 404;
// kAlreadyExists and kFailedPrecondition 409 (the original's status for a
// job registered again with another configuration); kAborted and
// kUnavailable 503 (nothing was committed; retry later); kTimeout 504 (a
// statement was cancelled; nothing was committed); kNotSupported,
// kDeviceLost, kIoError and kInternal 500. Request bodies that fail
// validation are answered 422 by the router itself.
extern const ErrorStatusTable kBsoErrorStatuses;

// zeusd (zeus-reference 3.4, "Status codes"): kOk 200; kInvalidArgument
// (bad input, an id out of range: "GPU 5 not found") and kNotSupported (the
// driver's NOT_SUPPORTED) 400; kPermissionDenied (the driver's
// NO_PERMISSION) 403; every other code 500 ("other driver errors, task
// failures, failed override command": a driver's NOT_FOUND or timeout
// included). The daemon answers 401 (token), 404 (a disabled group, an
// unknown route) and 405 itself, and 503 for a GPU past its deadline
// (HungGpuError, AwaitGpu in src/zeusd/gpu_calls.h: errors that carry 503).
extern const ErrorStatusTable kZeusdErrorStatuses;

// The status a server of `table`'s protocol answers for `code`.
int HttpStatusFor(const ErrorStatusTable& table, ErrorCode code);

// The status a server answers for `error`: the error status (400-599) the
// error carries when it was made as an HTTP answer (native space kHttp, e.g.
// zeusd's 503 for a hung GPU, or an answer relayed from another server),
// else the table's for its code.
int HttpStatusForError(const ErrorStatusTable& table, const Error& error);

// What a client of either protocol reads from an answer's status:
//   2xx                       kOk
//   400, 422, other 4xx       kInvalidArgument (the request was wrong)
//   401, 403                  kPermissionDenied (no, a bad or a weak token; no privilege)
//   404                       kNotFound
//   409                       kFailedPrecondition (the service's kAlreadyExists reads back as this;
//                             BsoClient::RegisterJob turns it into kAlreadyExists, its only meaning there)
//   503                       kUnavailable (the service's kAborted; zeusd's hung GPU)
//   504                       kTimeout
//   500, other 5xx, 1xx, 3xx  kInternal (the server failed, or answered what neither protocol uses)
// Callers that know more about one answer (zeusd's client for /auth/whoami's
// 401, a stream's 401/403) decide that answer themselves.
ErrorCode ErrorCodeForHttpStatus(int status);

}  // namespace zeus::http

#endif  // ZEUS_SRC_HTTP_HTTP_STATUS_H_
