// Copyright 2026 The Zeus C++ Authors.
//
// The project's one error convention (see docs/architecture.md):
//
//   * Expected run-time failures are values: a function that can fail returns
//     `zeus::Result<T>` (or `zeus::Status` when there is no value).
//   * An `Error` carries a small, stable `ErrorCode`, a message written for the
//     person who will read it (what went wrong and what to do), and, when the
//     failure came from a foreign error space, the native code (an
//     nvmlReturn_t, an errno value, an HTTP status).
//   * Each foreign error space is translated in exactly one table; the tables
//     live beside the code that talks to that space (NVML:
//     src/device/nvml/nvml_error.cc; errno and exit codes: here).
//   * Exceptions never cross a public API. Programming errors abort.
//
// Thread-safety: all types here are values; distinct objects may be used from
// distinct threads freely.

#ifndef ZEUS_BASE_ERROR_H_
#define ZEUS_BASE_ERROR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace zeus {

// A small, stable set of failure kinds. Callers branch on these; the message
// is for people.
enum class ErrorCode : std::uint8_t {
  kOk = 0,
  kInvalidArgument,     // bad input: a flag, a file, a request, a value out of range
  kNotFound,            // the named thing does not exist
  kNotSupported,        // the device or platform cannot do this
  kPermissionDenied,    // the caller lacks the privilege
  kUnavailable,         // a library, driver or daemon is absent or not initialised
  kDeviceLost,          // the device fell off the bus or needs a reset
  kTimeout,             // an operation took too long
  kIoError,             // a read or write failed
  kFailedPrecondition,  // the call is not valid in the current state
  kAlreadyExists,       // the thing to create exists already
  kAborted,             // a concurrent change conflicted; the operation may be retried
  kInternal,            // an unexpected failure (a bug, or an unknown native code)
};

// Stable upper-snake name of a code, e.g. "PERMISSION_DENIED". Used in JSON.
std::string_view ErrorCodeName(ErrorCode code);

// Which foreign error space an Error's native code belongs to.
enum class NativeSpace : std::uint8_t { kNone = 0, kNvml, kErrno, kHttp, kAmdSmi };

class Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  Error(ErrorCode code, std::string message, NativeSpace space, int native_code)
      : code_(code), message_(std::move(message)), space_(space), native_code_(native_code) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  NativeSpace native_space() const { return space_; }
  // The foreign code this error was translated from, if any.
  std::optional<int> native_code() const {
    if (space_ == NativeSpace::kNone) return std::nullopt;
    return native_code_;
  }

  // Returns a copy whose message is "<context>: <message>". Code and native
  // code are kept.
  Error WithContext(std::string_view context) const;

 private:
  ErrorCode code_;
  std::string message_;
  NativeSpace space_ = NativeSpace::kNone;
  int native_code_ = 0;
};

// A value or an Error. [[nodiscard]] so that a dropped failure is a compile
// warning (an error under ZEUS_WERROR).
template <class T>
class [[nodiscard]] Result : public tl::expected<T, Error> {
 public:
  using tl::expected<T, Error>::expected;
  Result(tl::expected<T, Error> e) : tl::expected<T, Error>(std::move(e)) {}  // NOLINT
};

using Status = Result<void>;

// The success value of a Status.
inline Status OkStatus() { return {}; }

// Shorthand for returning a failure: `return Fail(ErrorCode::kNotFound, "...")`.
inline tl::unexpected<Error> Fail(ErrorCode code, std::string message) {
  return tl::unexpected<Error>(Error(code, std::move(message)));
}
inline tl::unexpected<Error> Fail(Error error) { return tl::unexpected<Error>(std::move(error)); }

// errno -> ErrorCode, the one table for the errno space. `what` names the
// object (usually a path) and is put at the front of the message.
Error ErrorFromErrno(int errno_value, std::string_view what);

// ErrorCode -> process exit code, the one table for exit codes:
//   0 ok, 1 runtime failure, 2 usage error (kInvalidArgument),
//   3 permission denied, 4 unavailable (no driver, no daemon), 5 not supported.
int ExitCodeFor(ErrorCode code);

}  // namespace zeus

#endif  // ZEUS_BASE_ERROR_H_
