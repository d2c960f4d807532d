// Copyright 2026 The Zeus C++ Authors.
//
// HttpServer on Boost.Beast with classic asynchronous callbacks.
//
// Thread model: one io_context run by N worker threads. The acceptor lives on
// its own strand, and each connection (Session) on a strand of its own, so a
// session's state is only ever touched by one thread at a time and needs no
// lock. The handler runs synchronously on the worker thread inside the
// session's strand, so a slow handler blocks its connection and one worker
// thread, nothing else.
//
// Transport: sockets of the generic stream protocol, so that one code path
// serves TCP and Unix sockets.
//
// Streamed bodies (HttpResponse::stream): the header goes out with chunked
// encoding, then each Next() as one chunk; with nothing ready the session
// waits for the producer's wakeup (posted to its strand). Meanwhile one read
// is pending, only to notice the client going away. A write that takes longer
// than request_timeout (a client that stopped reading) closes the connection,
// so a slow client costs only its own connection.
//
// Shutdown: a `stopping_` flag is raised, the acceptor is closed on its
// strand, and every live session is asked, on its strand, to close if it is
// idle (waiting for the first byte of a request). A session that is reading,
// handling or writing finishes that request, answers with Connection: close,
// and closes. The io_context has no work guard: once the acceptor and every
// session are gone, the worker threads return from run() by themselves. The
// thread that calls Shutdown() waits for that (at most shutdown_grace), then
// stops the io_context, joins the workers, and destroys the io_context, which
// closes any connection that overstayed the grace period.

#include <pthread.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>

#include "http/http.h"
#include "http/http_util.h"
#include "http/request_framing.h"

namespace zeus::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using stream_protocol = net::generic::stream_protocol;
using Socket = stream_protocol::socket;
using Stream = beast::basic_stream<stream_protocol>;
using boost::system::error_code;

// Bytes asked for by the first read of a request (the read that waits while
// the connection is idle).
constexpr std::size_t kFirstReadBytes = 4096;
// A connection buffer larger than this is given back after its request.
constexpr std::size_t kMaxIdleBufferBytes = 64 << 10;
// After a response with Connection: close, the server half-closes and reads
// (and drops) whatever the client still sends, for at most this long, so that
// unread request bytes do not turn the close into a reset that could destroy
// the response before the client reads it.
constexpr std::chrono::milliseconds kLingerTime{1000};

class ServerImpl;

// The server whose worker thread the current thread is, or null.
thread_local const ServerImpl* tls_worker_of = nullptr;

Error SystemError(ErrorCode code, std::string message, const error_code& ec) {
  if (ec.category() == boost::system::system_category()) {
    return Error(code, std::move(message), NativeSpace::kErrno, ec.value());
  }
  return Error(code, std::move(message));
}

// True for errors of the HTTP parser that mean the request is malformed (as
// opposed to the connection ending early).
bool IsMalformedRequest(const error_code& ec) {
  static const boost::system::error_category& http_category =
      http::make_error_code(http::error::bad_target).category();
  return ec.category() == http_category && ec != http::error::end_of_stream && ec != http::error::partial_message;
}

// One connection. Lives as long as an operation on it is pending (each
// completion handler holds a shared_ptr). All member functions except the
// public ones run on the connection's strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(ServerImpl& server, Socket socket) : server_(server), stream_(std::move(socket)) {}
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts serving. Call once; any thread.
  void Start();
  // Answers 503 (the server is at max_connections) and closes. Instead of
  // Start(); any thread.
  void Reject();
  // Closes the connection now if it is idle (between requests); otherwise it
  // closes after the response to its current request. Any thread.
  void StopWhenIdle();

  void set_id(std::uint64_t id) { id_ = id; }
  void set_counted() { counted_ = true; }

 private:
  enum class State { kIdle, kReading, kHandling, kWriting, kStreaming, kClosing, kClosed };

  void WaitForRequest();
  void OnFirstBytes(const error_code& ec, std::size_t bytes);
  void ReadRequest();
  void OnHeader(const error_code& ec);
  void OnRequest(const error_code& ec);
  void Handle();
  void Write();
  void OnWrite(const error_code& ec);
  void StartStream(unsigned version);
  void WatchForDisconnect();
  void StreamNext();
  void OnWakeup();
  void SendError(http::status status, std::string_view message, bool retry_after = false);
  // Balances a successful ServerImpl::TryBeginRequest, once.
  void EndRequest();
  void CloseAfterResponse();
  void Drain();
  void Close();

  ServerImpl& server_;
  std::uint64_t id_ = 0;  // 0: not registered with the server
  bool counted_ = false;    // counts as an open connection (not a rejected one)
  bool in_flight_ = false;  // a request counts as in flight
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  State state_ = State::kIdle;
  // A streamed body: the producer, the header, the chunk being written, and
  // whether the session waits for the producer's wakeup.
  std::shared_ptr<HttpBodyStream> body_stream_;
  std::optional<http::response<http::empty_body>> stream_header_;
  std::optional<http::response_serializer<http::empty_body>> stream_serializer_;
  std::string chunk_;
  bool waiting_for_data_ = false;
  beast::flat_buffer discard_;
};

class ServerImpl final : public HttpServer {
 public:
  ServerImpl(const HttpServerOptions& options, HttpHandler handler)
      : options_(options),
        handler_(std::move(handler)),
        threads_(options.threads > 0 ? options.threads
                                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
    ioc_.emplace(threads_);
    acceptor_.emplace(net::make_strand(*ioc_));
    accept_retry_timer_.emplace(acceptor_->get_executor());
  }

  ~ServerImpl() override {
    if (tls_worker_of == this) {
      std::fputs("zeus: HttpServer destroyed from its own handler; aborting\n", stderr);
      std::abort();
    }
    Shutdown();
  }

  ServerImpl(const ServerImpl&) = delete;
  ServerImpl& operator=(const ServerImpl&) = delete;

  Status Listen(const stream_protocol::endpoint& endpoint) {
    const bool unix_socket = !options_.unix_socket_path.empty();
    const std::string where =
        unix_socket ? options_.unix_socket_path : internal::HostPort(options_.host, options_.port);
    error_code ec;
    acceptor_->open(endpoint.protocol(), ec);
    if (ec) return Fail(SystemError(ErrorCode::kUnavailable, fmt::format("cannot listen on {}: {}", where, ec.message()), ec));
    if (!unix_socket) acceptor_->set_option(net::socket_base::reuse_address(true), ec);
    if (ec) return Fail(SystemError(ErrorCode::kUnavailable, fmt::format("cannot listen on {}: {}", where, ec.message()), ec));
    acceptor_->bind(endpoint, ec);
    if (ec) return Fail(SystemError(ErrorCode::kUnavailable, fmt::format("cannot listen on {}: {}", where, ec.message()), ec));
    acceptor_->listen(net::socket_base::max_listen_connections, ec);
    if (ec) return Fail(SystemError(ErrorCode::kUnavailable, fmt::format("cannot listen on {}: {}", where, ec.message()), ec));
    if (unix_socket) return OkStatus();
    const stream_protocol::endpoint local = acceptor_->local_endpoint(ec);
    if (ec) return Fail(SystemError(ErrorCode::kUnavailable, fmt::format("cannot listen on {}: {}", where, ec.message()), ec));
    tcp::endpoint local_tcp;
    if (local.size() <= local_tcp.capacity()) {
      std::memcpy(local_tcp.data(), local.data(), local.size());
      local_tcp.resize(local.size());
      port_ = local_tcp.port();
    }
    return OkStatus();
  }

  // Starts accepting and the worker threads.
  void Run() {
    Accept();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_workers_ = threads_;
    }
    workers_.reserve(static_cast<std::size_t>(threads_));
    for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { WorkerMain(); });
  }

  std::uint16_t port() const override { return port_; }

  HttpServerStats stats() const override {
    HttpServerStats s;
    s.connections_accepted = connections_accepted_.load();
    s.connections_rejected = connections_rejected_.load();
    s.open_connections = open_connections_.load();
    s.requests_started = requests_started_.load();
    s.requests_rejected = requests_rejected_.load();
    s.requests_in_flight = requests_in_flight_.load();
    s.responses_sent = responses_sent_.load();
    return s;
  }

  // A request begins: false (and counted as rejected) when max_requests_in_flight
  // are in flight already.
  bool TryBeginRequest() {
    requests_started_.fetch_add(1);
    const auto cap = static_cast<std::uint64_t>(std::max(0, options_.max_requests_in_flight));
    std::uint64_t current = requests_in_flight_.load();
    do {
      if (cap > 0 && current >= cap) {
        requests_rejected_.fetch_add(1);
        return false;
      }
    } while (!requests_in_flight_.compare_exchange_weak(current, current + 1));
    return true;
  }
  void EndRequest() { requests_in_flight_.fetch_sub(1); }
  void ResponseSent() { responses_sent_.fetch_add(1); }
  void ConnectionClosed() { open_connections_.fetch_sub(1); }

  void Shutdown() override {
    std::vector<std::shared_ptr<Session>> live;
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!shutdown_started_) {
        shutdown_started_ = true;
        first = true;
        stopping_.store(true, std::memory_order_release);
        shutdown_deadline_ = std::chrono::steady_clock::now() + options_.shutdown_grace;
        live.reserve(sessions_.size());
        for (auto& entry : sessions_) {
          if (auto session = entry.second.lock()) live.push_back(std::move(session));
        }
      }
    }
    if (first) {
      net::post(acceptor_->get_executor(), [this] {
        error_code ignored;
        acceptor_->close(ignored);
        accept_retry_timer_->cancel();
      });
      for (auto& session : live) session->StopWhenIdle();
      // Dropped outside mutex_: the last reference runs ~Session, which locks it.
      live.clear();
    }
    // A worker thread cannot wait for its own request to finish; the workers
    // run out of work by themselves, and the destructor joins them.
    if (tls_worker_of == this) return;

    std::lock_guard<std::mutex> join_lock(join_mutex_);
    if (joined_) return;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      sessions_done_.wait_until(lock, shutdown_deadline_, [this] { return sessions_.empty(); });
    }
    ioc_->stop();
    for (auto& worker : workers_) {
      if (worker.joinable()) worker.join();
    }
    // No thread runs the io_context now. Destroying it (acceptor and timer
    // first) closes the listening socket and any session that outlived the
    // grace period.
    accept_retry_timer_.reset();
    acceptor_.reset();
    ioc_.reset();
    joined_ = true;
  }

  void Wait() override {
    std::unique_lock<std::mutex> lock(mutex_);
    workers_done_.wait(lock, [this] { return running_workers_ == 0; });
  }

  // For sessions.
  const HttpServerOptions& options() const { return options_; }
  const HttpHandler& handler() const { return handler_; }
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }

  // Adds a session to the set that Shutdown() closes. False when shutting
  // down (the session must then close).
  bool Register(const std::shared_ptr<Session>& session) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (shutdown_started_) return false;
    const std::uint64_t id = next_session_id_++;
    sessions_.emplace(id, session);
    session->set_id(id);
    return true;
  }

  void Unregister(std::uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    sessions_.erase(id);
    if (sessions_.empty()) sessions_done_.notify_all();
  }

 private:
  // Runs on the acceptor's strand (or before the workers start).
  void Accept() {
    acceptor_->async_accept(net::make_strand(*ioc_),
                            [this](const error_code& ec, Socket socket) { OnAccept(ec, std::move(socket)); });
  }

  void OnAccept(const error_code& ec, Socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_->is_open()) return;
    if (ec) {
      // Out of descriptors or a connection that died in the backlog: try
      // again shortly rather than spin.
      accept_retry_timer_->expires_after(std::chrono::milliseconds(50));
      accept_retry_timer_->async_wait([this](const error_code& wait_ec) {
        if (!wait_ec && acceptor_->is_open()) Accept();
      });
      return;
    }
    if (!stopping()) {
      connections_accepted_.fetch_add(1);
      error_code ignored;
      if (options_.unix_socket_path.empty()) socket.set_option(tcp::no_delay(true), ignored);
      auto session = std::make_shared<Session>(*this, std::move(socket));
      // Only this strand adds connections, so the count cannot overshoot.
      const bool full = options_.max_connections > 0 &&
                        open_connections_.load() >= static_cast<std::uint64_t>(options_.max_connections);
      if (Register(session)) {
        if (full) {
          connections_rejected_.fetch_add(1);
          session->Reject();
        } else {
          open_connections_.fetch_add(1);
          session->set_counted();
          session->Start();
        }
      }
    }
    Accept();
  }

  void WorkerMain() {
    tls_worker_of = this;
    pthread_setname_np(pthread_self(), "zeus-http");  // shown by top -H, perf, gdb
    for (;;) {
      try {
        ioc_->run();
        break;
      } catch (...) {  // NOLINT(bugprone-empty-catch): a failed handler must not take the server down
      }
    }
    tls_worker_of = nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    if (--running_workers_ == 0) workers_done_.notify_all();
  }

  const HttpServerOptions options_;
  const HttpHandler handler_;
  const int threads_;  // worker threads, at least 1
  std::uint16_t port_ = 0;

  std::mutex mutex_;
  std::condition_variable sessions_done_;  // sessions_ became empty
  std::condition_variable workers_done_;   // running_workers_ became 0
  std::unordered_map<std::uint64_t, std::weak_ptr<Session>> sessions_;  // guarded by mutex_
  std::uint64_t next_session_id_ = 1;                                   // guarded by mutex_
  int running_workers_ = 0;                                             // guarded by mutex_
  bool shutdown_started_ = false;                                       // guarded by mutex_
  std::chrono::steady_clock::time_point shutdown_deadline_;             // guarded by mutex_
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> connections_accepted_{0};
  std::atomic<std::uint64_t> connections_rejected_{0};
  std::atomic<std::uint64_t> open_connections_{0};
  std::atomic<std::uint64_t> requests_started_{0};
  std::atomic<std::uint64_t> requests_rejected_{0};
  std::atomic<std::uint64_t> requests_in_flight_{0};
  std::atomic<std::uint64_t> responses_sent_{0};

  std::mutex join_mutex_;  // serialises the waiting part of Shutdown()
  bool joined_ = false;    // guarded by join_mutex_
  std::vector<std::thread> workers_;

  // Declared last: destroyed first (acceptor and timer before the io_context).
  std::optional<net::io_context> ioc_;
  std::optional<net::basic_socket_acceptor<stream_protocol>> acceptor_;
  std::optional<net::steady_timer> accept_retry_timer_;
};

Session::~Session() {
  EndRequest();
  if (counted_) server_.ConnectionClosed();
  if (id_ != 0) server_.Unregister(id_);
}

void Session::Start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->WaitForRequest(); });
}

void Session::Reject() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->SendError(http::status::service_unavailable,
                    fmt::format("the server has {} connections open, its limit; retry later",
                                self->server_.options().max_connections),
                    /*retry_after=*/true);
  });
}

void Session::EndRequest() {
  if (!in_flight_) return;
  in_flight_ = false;
  server_.EndRequest();
}

void Session::StopWhenIdle() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->state_ == State::kIdle || self->state_ == State::kStreaming) self->Close();
  });
}

void Session::WaitForRequest() {
  if (server_.stopping()) return Close();
  state_ = State::kIdle;
  const HttpServerOptions& options = server_.options();
  parser_.emplace();
  parser_->body_limit(static_cast<std::uint64_t>(options.max_body_bytes));
  parser_->header_limit(static_cast<std::uint32_t>(
      std::min<std::size_t>(options.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  if (buffer_.size() > 0) return ReadRequest();  // a pipelined request is already here
  if (buffer_.capacity() > kMaxIdleBufferBytes) buffer_.shrink_to_fit();
  stream_.expires_after(options.request_timeout);
  stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                          [self = shared_from_this()](const error_code& ec, std::size_t bytes) {
                            self->OnFirstBytes(ec, bytes);
                          });
}

void Session::OnFirstBytes(const error_code& ec, std::size_t bytes) {
  // EOF, reset, idle timeout, or closed by StopWhenIdle.
  if (ec) return Close();
  buffer_.commit(bytes);
  ReadRequest();
}

void Session::ReadRequest() {
  if (!server_.TryBeginRequest()) {
    return SendError(http::status::service_unavailable,
                     fmt::format("the server has {} requests in flight, its limit; retry later",
                                 server_.options().max_requests_in_flight),
                     /*retry_after=*/true);
  }
  in_flight_ = true;
  state_ = State::kReading;
  stream_.expires_after(server_.options().request_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](const error_code& ec, std::size_t) { self->OnHeader(ec); });
}

void Session::OnHeader(const error_code& ec) {
  if (ec) return OnRequest(ec);
  const http::request<http::string_body>& message = parser_->get();
  std::vector<std::string_view> codings;
  for (auto [it, end] = message.equal_range(http::field::transfer_encoding); it != end; ++it) {
    codings.emplace_back(it->value().data(), it->value().size());
  }
  const internal::FramingVerdict verdict = internal::CheckRequestTransferEncoding(codings, message.version());
  if (verdict.kind == internal::FramingVerdict::kBadRequest) {
    return SendError(http::status::bad_request, fmt::format("malformed HTTP request: {}", verdict.reason));
  }
  if (verdict.kind == internal::FramingVerdict::kNotImplemented) {
    return SendError(http::status::not_implemented, verdict.reason);
  }
  if (parser_->is_done()) return OnRequest({});
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](const error_code& body_ec, std::size_t) { self->OnRequest(body_ec); });
}

void Session::OnRequest(const error_code& ec) {
  if (!ec) return Handle();
  if (ec == http::error::body_limit) {
    return SendError(http::status::payload_too_large,
                     fmt::format("request body exceeds the limit of {} bytes", server_.options().max_body_bytes));
  }
  if (ec == http::error::header_limit) {
    return SendError(http::status::request_header_fields_too_large,
                     fmt::format("request headers exceed the limit of {} bytes", server_.options().max_header_bytes));
  }
  if (IsMalformedRequest(ec)) {
    return SendError(http::status::bad_request, fmt::format("malformed HTTP request: {}", ec.message()));
  }
  // Timeout (the socket is closed already), the client went away mid-request,
  // or a socket error: nobody to answer.
  Close();
}

void Session::Handle() {
  state_ = State::kHandling;
  http::request<http::string_body>& message = parser_->get();
  const bool head = message.method() == http::verb::head;
  const unsigned version = message.version();
  bool keep_alive = message.keep_alive();

  HttpRequest request;
  request.method.assign(message.method_string().data(), message.method_string().size());
  request.target.assign(message.target().data(), message.target().size());
  const auto content_type = message[http::field::content_type];
  request.content_type.assign(content_type.data(), content_type.size());
  request.body = std::move(message.body());
  for (const auto& field : message) {
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }

  HttpResponse response;
  try {
    response = server_.handler()(request);
  } catch (const std::exception& e) {
    response = HttpResponse{500, internal::JsonMessage(fmt::format("internal error: {}", e.what())),
                            "application/json"};
  } catch (...) {
    response = HttpResponse{500, internal::JsonMessage("internal error: unknown exception"), "application/json"};
  }
  if (response.status < 200 || response.status > 999) {
    response = HttpResponse{
        500, internal::JsonMessage(fmt::format("internal error: the handler returned status {}", response.status)),
        "application/json"};
  }
  // A request that was in flight when Shutdown() began is the last one.
  if (server_.stopping()) keep_alive = false;
  if (response.stream != nullptr && !head && response.status == 200 && !server_.stopping()) {
    body_stream_ = std::move(response.stream);
    stream_header_.emplace();
    stream_header_->result(http::status::ok);
    stream_header_->version(version);
    if (!response.content_type.empty()) stream_header_->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) stream_header_->set(name, value);
    return StartStream(version);
  }

  response_ = {};
  try {
    response_.result(static_cast<unsigned>(response.status));
    response_.version(version);
    if (!response.content_type.empty()) response_.set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) response_.set(name, value);
    const bool no_body = response.status == 204 || response.status == 304;
    if (!no_body) response_.body() = std::move(response.body);
    response_.keep_alive(keep_alive);
    response_.prepare_payload();
    if (head) response_.body().clear();  // Content-Length stays that of the GET body
  } catch (const std::exception& e) {
    response_ = {};
    response_.result(http::status::internal_server_error);
    response_.version(version);
    response_.set(http::field::content_type, "application/json");
    response_.body() = internal::JsonMessage(fmt::format("internal error: {}", e.what()));
    response_.keep_alive(false);
    response_.prepare_payload();
  }
  Write();
}

void Session::Write() {
  state_ = State::kWriting;
  stream_.expires_after(server_.options().request_timeout);
  http::async_write(stream_, response_,
                    [self = shared_from_this()](const error_code& ec, std::size_t) { self->OnWrite(ec); });
}

void Session::OnWrite(const error_code& ec) {
  EndRequest();
  if (ec) return Close();
  server_.ResponseSent();
  if (!response_.keep_alive()) return CloseAfterResponse();
  response_ = {};  // frees the body
  WaitForRequest();
}

void Session::SendError(http::status status, std::string_view message, bool retry_after) {
  response_ = {};
  response_.result(status);
  response_.version(11);
  response_.set(http::field::content_type, "application/json");
  if (retry_after) response_.set(http::field::retry_after, std::to_string(server_.options().retry_after.count()));
  response_.body() = internal::JsonMessage(message);
  response_.keep_alive(false);
  response_.prepare_payload();
  Write();
}

void Session::CloseAfterResponse() {
  state_ = State::kClosing;
  error_code ec;
  stream_.socket().shutdown(net::socket_base::shutdown_send, ec);
  if (ec) return Close();
  stream_.expires_after(std::min<std::chrono::milliseconds>(server_.options().request_timeout, kLingerTime));
  buffer_.clear();
  Drain();
}

void Session::Drain() {
  stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                          [self = shared_from_this()](const error_code& ec, std::size_t) {
                            if (ec) return self->Close();  // EOF (the client closed), timeout or reset
                            self->Drain();
                          });
}

void Session::StartStream(unsigned version) {
  state_ = State::kStreaming;
  try {
    if (version < 11) {
      stream_header_->keep_alive(false);  // HTTP/1.0 has no chunked encoding: the body ends at the close
    } else {
      stream_header_->chunked(true);
    }
    stream_serializer_.emplace(*stream_header_);
  } catch (const std::exception&) {
    return Close();
  }
  std::weak_ptr<Session> weak = weak_from_this();
  auto executor = stream_.get_executor();
  body_stream_->SetWakeup([weak, executor] {
    if (weak.expired()) return;
    net::post(executor, [weak] {
      if (auto self = weak.lock()) self->OnWakeup();
    });
  });
  stream_.expires_after(server_.options().request_timeout);
  http::async_write_header(stream_, *stream_serializer_, [self = shared_from_this()](const error_code& ec, std::size_t) {
    self->EndRequest();
    if (ec) return self->Close();
    self->server_.ResponseSent();
    self->stream_.expires_never();
    self->WatchForDisconnect();
    self->StreamNext();
  });
}

void Session::WatchForDisconnect() {
  stream_.async_read_some(discard_.prepare(kFirstReadBytes), [self = shared_from_this()](const error_code& ec, std::size_t) {
    if (ec) return self->Close();  // the client went away (or the server closed the connection)
    self->discard_.clear();
    self->WatchForDisconnect();
  });
}

void Session::OnWakeup() {
  if (state_ != State::kStreaming || !waiting_for_data_) return;
  waiting_for_data_ = false;
  StreamNext();
}

void Session::StreamNext() {
  if (state_ != State::kStreaming) return;
  chunk_ = body_stream_->Next();
  if (chunk_.empty()) {
    waiting_for_data_ = true;
    return;
  }
  stream_.expires_after(server_.options().request_timeout);
  auto on_written = [self = shared_from_this()](const error_code& ec, std::size_t) {
    if (ec) return self->Close();
    self->stream_.expires_never();
    self->StreamNext();
  };
  if (stream_header_->chunked()) {
    net::async_write(stream_, http::make_chunk(net::buffer(chunk_)), std::move(on_written));
  } else {
    net::async_write(stream_, net::buffer(chunk_), std::move(on_written));
  }
}

void Session::Close() {
  EndRequest();
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  waiting_for_data_ = false;
  body_stream_.reset();  // the producer learns that nobody listens
  error_code ignored;
  stream_.socket().shutdown(net::socket_base::shutdown_both, ignored);
  stream_.close();
}

// Resolves options.host for listening: an IP literal as is, "localhost" as
// 127.0.0.1, another name through the resolver, preferring IPv4.
Result<tcp::endpoint> ResolveTcpEndpoint(const HttpServerOptions& options) {
  error_code ec;
  const net::ip::address address = net::ip::make_address(options.host, ec);
  if (!ec) return tcp::endpoint(address, options.port);
  if (internal::IsLocalhost(options.host)) return tcp::endpoint(net::ip::address_v4::loopback(), options.port);
  if (options.host.empty()) return Fail(ErrorCode::kInvalidArgument, "cannot listen: the host is empty");
  net::io_context ioc;
  tcp::resolver resolver(ioc);
  const auto results = resolver.resolve(options.host, std::to_string(options.port), tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("cannot listen on {}: cannot resolve host '{}': {}",
                            internal::HostPort(options.host, options.port), options.host,
                            ec ? ec.message() : std::string("no address")));
  }
  for (const auto& entry : results) {
    if (entry.endpoint().address().is_v4()) return entry.endpoint();
  }
  return results.begin()->endpoint();
}

// The Unix socket path when one is set, else the TCP endpoint.
Result<stream_protocol::endpoint> ResolveListenEndpoint(const HttpServerOptions& options) {
  if (!options.unix_socket_path.empty()) {
    if (options.unix_socket_path.size() >= sizeof(sockaddr_un::sun_path)) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("cannot listen on {}: the socket path is longer than {} bytes", options.unix_socket_path,
                              sizeof(sockaddr_un::sun_path) - 1));
    }
    return stream_protocol::endpoint(net::local::stream_protocol::endpoint(options.unix_socket_path));
  }
  Result<tcp::endpoint> tcp_endpoint = ResolveTcpEndpoint(options);
  if (!tcp_endpoint) return Fail(tcp_endpoint.error());
  return stream_protocol::endpoint(*tcp_endpoint);
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options, HttpHandler handler) {
  if (!handler) return Fail(ErrorCode::kInvalidArgument, "HttpServer::Start: the handler is empty");
  try {
    Result<stream_protocol::endpoint> endpoint = ResolveListenEndpoint(options);
    if (!endpoint) return Fail(endpoint.error());
    auto server = std::make_unique<ServerImpl>(options, std::move(handler));
    Status listening = server->Listen(*endpoint);
    if (!listening) return Fail(listening.error());
    server->Run();
    return std::unique_ptr<HttpServer>(std::move(server));
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kInternal,
                fmt::format("cannot start the HTTP server on {}: {}",
                            options.unix_socket_path.empty() ? internal::HostPort(options.host, options.port)
                                                             : options.unix_socket_path,
                            e.what()));
  }
}

}  // namespace zeus::http
