// Copyright 2026 The Zeus C++ Authors.
//
// A small HTTP/1.1 server and client on Boost.Beast, for the batch-size
// service and zeusd, over TCP or a Unix socket. JSON bodies; the server's own
// errors as {"message": "..."}; streamed (chunked) bodies for server-sent
// events.

#ifndef ZEUS_SRC_HTTP_HTTP_H_
#define ZEUS_SRC_HTTP_HTTP_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/http_url.h"
#include "zeus/base/error.h"

namespace zeus::http {

struct HttpRequest {
  std::string method;  // "GET", "POST", ... as sent
  std::string target;  // path with query, e.g. "/jobs/batch_size?job_id=a-1"
  std::string body;
  std::string content_type;  // the Content-Type header, or empty
  // Every header as received (names as sent; compare them ignoring case).
  std::vector<std::pair<std::string, std::string>> headers{};
};

// A response body produced over time (server-sent events), sent with
// Transfer-Encoding: chunked until the client goes away or the server shuts
// down; then the server destroys it (which is how a producer learns that
// nobody listens any more).
class HttpBodyStream {
 public:
  virtual ~HttpBodyStream() = default;
  // Called once, before the first Next(), with a function the producer calls
  // (from any thread, any number of times, even after the connection closed)
  // when it has data for Next(). Must not call `wakeup` from inside itself.
  virtual void SetWakeup(std::function<void()> wakeup) = 0;
  // The data ready now, or "" when none (then the server waits for wakeup).
  // Never blocks. Called on one thread at a time. A producer that must not
  // fall behind a slow client keeps only what it can afford between calls.
  virtual std::string Next() = 0;
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  // Further headers, e.g. {"Allow", "GET, HEAD"} or {"Retry-After", "1"}. A
  // response from HttpClient has every header but Content-Type here.
  std::vector<std::pair<std::string, std::string>> headers{};
  // Server side only: when set, `body` is ignored and the body is this
  // stream's output (status and headers go out first).
  std::shared_ptr<HttpBodyStream> stream{};
};

// Called concurrently from the server's worker threads; must be thread-safe
// and must not throw.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  // Non-empty: listen on this Unix socket instead of host:port. The caller
  // prepares the path (a stale socket file there makes the bind fail with
  // "Address already in use"); the server neither removes nor chmods it.
  std::string unix_socket_path;
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000;  // 0: an ephemeral port (see HttpServer::port())
  int threads = 0;            // worker threads; 0: std::thread::hardware_concurrency()
  std::size_t max_body_bytes = 1 << 20;
  std::size_t max_header_bytes = 16 << 10;
  // A request must arrive completely within this time once its first byte has
  // (and a kept-alive connection is closed after this long idle).
  std::chrono::milliseconds request_timeout{30000};
  // On Shutdown(), in-flight requests get this long to finish.
  std::chrono::milliseconds shutdown_grace{10000};
  // Open connections at most; 0: no cap. A connection past the cap is
  // answered 503 with Retry-After and closed.
  int max_connections = 0;
  // Requests being read, handled or answered at most; 0: no cap. A request
  // past the cap is answered 503 with Retry-After (Connection: close).
  int max_requests_in_flight = 0;
  // The Retry-After of those 503 answers.
  std::chrono::seconds retry_after{1};
};

// Counters, for monitoring and for tests to wait on.
struct HttpServerStats {
  std::uint64_t connections_accepted = 0;  // including those rejected
  std::uint64_t connections_rejected = 0;  // past max_connections
  std::uint64_t open_connections = 0;      // served now, not counting rejected ones
  std::uint64_t requests_started = 0;      // a request's first byte arrived
  std::uint64_t requests_rejected = 0;     // past max_requests_in_flight
  std::uint64_t requests_in_flight = 0;    // started and not yet answered
  std::uint64_t responses_sent = 0;        // written completely, including rejections
};

// The server answers protocol problems itself, each with a JSON
// {"message": ...} body: malformed HTTP -> 400, body over max_body_bytes ->
// 413, headers over max_header_bytes -> 431, past max_connections or
// max_requests_in_flight -> 503 with Retry-After. A request that does not
// arrive within request_timeout closes the connection. HEAD is passed to the
// handler as is; its answer goes out without the body. Everything else goes
// to the handler.
class HttpServer {
 public:
  // Binds and listens, then serves on `threads` worker threads. Fails with
  // kUnavailable naming host:port (or the socket path) when it cannot bind
  // (in use, no such address or directory), kInvalidArgument for an
  // unparsable host.
  static Result<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options, HttpHandler handler);
  virtual ~HttpServer() = default;  // shuts down, see Shutdown()

  // The bound port (the real one when options.port was 0); 0 on a Unix socket.
  virtual std::uint16_t port() const = 0;
  virtual HttpServerStats stats() const = 0;
  // Graceful stop: stops accepting, lets requests already being handled
  // finish and send their responses (with Connection: close), closes idle
  // connections, waits up to shutdown_grace, then stops the threads.
  // Idempotent; callable from any thread, including a signal-watching one.
  virtual void Shutdown() = 0;
  // Blocks until the server has stopped.
  virtual void Wait() = 0;
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{30000};  // send + receive of one request
  // Non-empty: connect to this Unix socket; the base URL then only gives the
  // Host header and the path prefix (e.g. "http://localhost").
  std::string unix_socket_path;
  // Sent with every request, e.g. {"Authorization", "Bearer ..."}.
  std::vector<std::pair<std::string, std::string>> headers{};
};

// A client over one kept-alive connection to one server.
// Thread-safety: not for concurrent use; use one client per thread.
class HttpClient {
 public:
  // base_url: "http://host:port" with an optional path prefix that is
  // prepended to every target (ParseHttpUrl). Fails with kInvalidArgument
  // otherwise (https is not supported; the message says so).
  static Result<std::unique_ptr<HttpClient>> Create(std::string_view base_url, const HttpClientOptions& options = {});
  virtual ~HttpClient() = default;

  // Sends one request (Content-Type application/json when body is not empty)
  // and returns the response, whatever its status. Connects on first use; if
  // a kept-alive connection turns out closed by the server before any
  // response byte arrives, reconnects and resends once. Fails with
  // kUnavailable ("cannot connect to http://host:port: Connection refused"),
  // kTimeout, or kIoError for a broken response.
  virtual Result<HttpResponse> Send(std::string_view method, std::string_view target, std::string_view body = {}) = 0;

  virtual const std::string& base_url() const = 0;
};

// The value of the first header called `name` (any case), or null.
const std::string* FindHeader(const HttpResponse& response, std::string_view name);

}  // namespace zeus::http

#endif  // ZEUS_SRC_HTTP_HTTP_H_
