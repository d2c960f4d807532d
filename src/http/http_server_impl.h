// Copyright 2026 The Zeus C++ Authors.
//
// Private to zeus_http: the HttpServer behind HttpServer::Start. Its methods
// live in http_server.cc (threads, accepting, shutdown) and
// http_server_listen.cc (binding the socket); its sessions in
// http_server_session.{h,cc}. See http_server.cc for the thread model.

#ifndef ZEUS_SRC_HTTP_HTTP_SERVER_IMPL_H_
#define ZEUS_SRC_HTTP_HTTP_SERVER_IMPL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "http/http.h"
#include "http/http_server_session.h"

namespace zeus::http::internal {

// Where to listen: the Unix socket path when one is set, else options.host
// (an IP literal as is, "localhost" as 127.0.0.1, another name through the
// resolver, preferring IPv4) and port. kInvalidArgument for an unusable one
// (http_server_listen.cc).
Result<stream_protocol::endpoint> ResolveListenEndpoint(const HttpServerOptions& options);

class ServerImpl final : public HttpServer {
 public:
  ServerImpl(const HttpServerOptions& options, HttpHandler handler);
  // Aborts when called from one of its own worker threads (a handler that
  // destroys its server); otherwise shuts down.
  ~ServerImpl() override;
  ServerImpl(const ServerImpl&) = delete;
  ServerImpl& operator=(const ServerImpl&) = delete;

  // Opens, binds and listens on `endpoint` (http_server_listen.cc); records
  // the bound TCP port. kUnavailable naming host:port or the socket path.
  Status Listen(const stream_protocol::endpoint& endpoint);
  // Starts accepting and the worker threads.
  void Run();

  std::uint16_t port() const override { return port_; }
  HttpServerStats stats() const override;
  void Shutdown() override;
  void Wait() override;

  // For sessions.
  const HttpServerOptions& options() const { return options_; }
  const HttpHandler& handler() const { return handler_; }
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  // A request begins: false (and counted as rejected) when
  // max_requests_in_flight are in flight already.
  bool TryBeginRequest();
  void EndRequest() { requests_in_flight_.fetch_sub(1); }
  void ResponseSent() { responses_sent_.fetch_add(1); }
  void ConnectionClosed() { open_connections_.fetch_sub(1); }
  // Adds a session to the set that Shutdown() closes. False when shutting
  // down (the session must then close).
  bool Register(const std::shared_ptr<ServerSession>& session);
  void Unregister(std::uint64_t id);

 private:
  // Run on the acceptor's strand (or before the workers start).
  void Accept();
  void OnAccept(const error_code& ec, Socket socket);
  void WorkerMain();
  // The first part of Shutdown(): closes the acceptor and idle sessions.
  void StopAccepting();

  const HttpServerOptions options_;
  const HttpHandler handler_;
  const int threads_;  // worker threads, at least 1
  std::uint16_t port_ = 0;

  std::mutex mutex_;
  std::condition_variable sessions_done_;  // sessions_ became empty
  std::condition_variable workers_done_;   // running_workers_ became 0
  std::unordered_map<std::uint64_t, std::weak_ptr<ServerSession>> sessions_;  // guarded by mutex_
  std::uint64_t next_session_id_ = 1;                                         // guarded by mutex_
  int running_workers_ = 0;                                                   // guarded by mutex_
  bool shutdown_started_ = false;                                             // guarded by mutex_
  std::chrono::steady_clock::time_point shutdown_deadline_;                   // guarded by mutex_
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> connections_accepted_{0};
  std::atomic<std::uint64_t> connections_rejected_{0};
  std::atomic<std::uint64_t> open_connections_{0};
  std::atomic<std::uint64_t> requests_started_{0};
  std::atomic<std::uint64_t> requests_rejected_{0};
  std::atomic<std::uint64_t> requests_in_flight_{0};
  std::atomic<std::uint64_t> responses_sent_{0};

  // Held for all of StopAccepting(), so that a concurrent Shutdown() cannot
  // destroy the io_context while another caller still posts to it.
  std::mutex stop_mutex_;
  std::mutex join_mutex_;  // serialises the waiting part of Shutdown()
  bool joined_ = false;    // guarded by join_mutex_
  std::vector<std::thread> workers_;

  // Declared last: destroyed first (acceptor and timer before the io_context).
  std::optional<net::io_context> ioc_;
  std::optional<net::basic_socket_acceptor<stream_protocol>> acceptor_;
  std::optional<net::steady_timer> accept_retry_timer_;
};

}  // namespace zeus::http::internal

#endif  // ZEUS_SRC_HTTP_HTTP_SERVER_IMPL_H_
