// Copyright 2026 The Zeus C++ Authors.
//
// HttpServer on Boost.Beast with classic asynchronous callbacks: the server
// (threads, accepting, shutdown) and HttpServer::Start. The listening socket
// is set up in http_server_listen.cc, connections are served by
// ServerSession (http_server_session.cc, http_server_stream.cc).
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
// Streamed bodies: see http_server_stream.cc; a slow client costs only its
// own connection.
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

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <fmt/format.h>

#include "http/http_server_impl.h"
#include "http/http_util.h"

namespace zeus::http {
namespace internal {
namespace {

// The server whose worker thread the current thread is, or null.
thread_local const ServerImpl* tls_worker_of = nullptr;

}  // namespace

ServerImpl::ServerImpl(const HttpServerOptions& options, HttpHandler handler)
    : options_(options),
      handler_(std::move(handler)),
      threads_(options.threads > 0 ? options.threads
                                   : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
  ioc_.emplace(threads_);
  acceptor_.emplace(net::make_strand(*ioc_));
  accept_retry_timer_.emplace(acceptor_->get_executor());
}

ServerImpl::~ServerImpl() {
  if (tls_worker_of == this) {
    std::fputs("zeus: HttpServer destroyed from its own handler; aborting\n", stderr);
    std::abort();
  }
  Shutdown();
}

void ServerImpl::Run() {
  Accept();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_workers_ = threads_;
  }
  workers_.reserve(static_cast<std::size_t>(threads_));
  for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { WorkerMain(); });
}

HttpServerStats ServerImpl::stats() const {
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

bool ServerImpl::TryBeginRequest() {
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

void ServerImpl::StopAccepting() {
  std::lock_guard<std::mutex> stop_lock(stop_mutex_);
  std::vector<std::shared_ptr<ServerSession>> live;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (shutdown_started_) return;
    shutdown_started_ = true;
    stopping_.store(true, std::memory_order_release);
    shutdown_deadline_ = std::chrono::steady_clock::now() + options_.shutdown_grace;
    live.reserve(sessions_.size());
    for (auto& entry : sessions_) {
      if (auto session = entry.second.lock()) live.push_back(std::move(session));
    }
  }
  net::post(acceptor_->get_executor(), [this] {
    error_code ignored;
    acceptor_->close(ignored);
    accept_retry_timer_->cancel();
  });
  for (auto& session : live) session->StopWhenIdle();
  // `live` is dropped outside mutex_: the last reference runs ~ServerSession, which locks it.
}

void ServerImpl::Shutdown() {
  StopAccepting();
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

void ServerImpl::Wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  workers_done_.wait(lock, [this] { return running_workers_ == 0; });
}

bool ServerImpl::Register(const std::shared_ptr<ServerSession>& session) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (shutdown_started_) return false;
  const std::uint64_t id = next_session_id_++;
  sessions_.emplace(id, session);
  session->set_id(id);
  return true;
}

void ServerImpl::Unregister(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  sessions_.erase(id);
  if (sessions_.empty()) sessions_done_.notify_all();
}

void ServerImpl::Accept() {
  acceptor_->async_accept(net::make_strand(*ioc_),
                          [this](const error_code& ec, Socket socket) { OnAccept(ec, std::move(socket)); });
}

void ServerImpl::OnAccept(const error_code& ec, Socket socket) {
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
    if (options_.unix_socket_path.empty()) socket.set_option(net::ip::tcp::no_delay(true), ignored);
    auto session = std::make_shared<ServerSession>(*this, std::move(socket));
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

void ServerImpl::WorkerMain() {
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

}  // namespace internal

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options, HttpHandler handler) {
  if (!handler) return Fail(ErrorCode::kInvalidArgument, "HttpServer::Start: the handler is empty");
  try {
    Result<internal::stream_protocol::endpoint> endpoint = internal::ResolveListenEndpoint(options);
    if (!endpoint) return Fail(endpoint.error());
    auto server = std::make_unique<internal::ServerImpl>(options, std::move(handler));
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
