// Copyright 2026 The Zeus C++ Authors.
//
// HttpStreamReader: one GET whose response body is handed over piece by piece
// as it arrives (server-sent events), over TCP or a Unix socket, cancellable
// from another thread. Chunked decoding is Beast's.

#ifndef ZEUS_SRC_HTTP_HTTP_STREAM_H_
#define ZEUS_SRC_HTTP_HTTP_STREAM_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::http {

struct HttpStreamOptions {
  std::chrono::milliseconds connect_timeout{5000};
  // Until the response head has arrived after connecting.
  std::chrono::milliseconds head_timeout{30000};
  // The longest silence while reading the body; 0: none.
  std::chrono::milliseconds idle_timeout{0};
  // Non-empty: connect to this Unix socket (the base URL then gives only the
  // Host header and the path prefix).
  std::string unix_socket_path;
  // Sent with the request, e.g. {"Authorization", "Bearer ..."}.
  std::vector<std::pair<std::string, std::string>> headers{};
  // The most body kept for a non-2xx answer (the rest is read and dropped).
  std::size_t max_error_body_bytes = 64 << 10;
};

// How a stream ended normally: the status, and for a non-2xx answer its body.
struct HttpStreamEnd {
  int status = 0;
  std::string body;  // non-2xx only
};

// One reader per stream; Get() may be called again after it returned (a new
// connection each time). Cancel() may be called from any thread at any time.
class HttpStreamReader {
 public:
  // base_url as for HttpClient ("http://host:port[/prefix]"); kInvalidArgument
  // otherwise.
  static Result<std::unique_ptr<HttpStreamReader>> Create(std::string_view base_url,
                                                          const HttpStreamOptions& options = {});
  virtual ~HttpStreamReader() = default;

  // Connects and sends GET target. On a 2xx answer, calls on_open(status) once
  // the head arrived, then on_data with each piece of body as it arrives
  // (pieces split anywhere), and returns once the server ended the body. On
  // another status, calls neither and returns the status with its body.
  // Fails with kUnavailable (cannot connect), kTimeout (no head within
  // head_timeout, or silent past idle_timeout), kIoError (the connection
  // broke or the answer is malformed), kAborted (Cancel()ed; also when
  // Cancel() came before the call).
  virtual Result<HttpStreamEnd> Get(std::string_view target, const std::function<void(int status)>& on_open,
                                    const std::function<void(std::string_view data)>& on_data) = 0;

  // Makes the running Get() (or the next one) return kAborted promptly.
  // Permanent: every later Get() fails the same way.
  virtual void Cancel() = 0;
};

}  // namespace zeus::http

#endif  // ZEUS_SRC_HTTP_HTTP_STREAM_H_
