// Copyright 2026 The Zeus C++ Authors.
//
// The batch-size optimizer service as an embeddable server: the REST API of
// zeus/bso/models.h over HTTP, state in SQLite or PostgreSQL. `zeus
// bso-server` runs one until SIGTERM; tests and tools embed it.

#ifndef ZEUS_BSO_SERVER_H_
#define ZEUS_BSO_SERVER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "zeus/base/error.h"

namespace zeus::bso {

struct ServerOptions {
  std::string listen = "127.0.0.1:8000";  // HOST:PORT; port 0 picks a free one
  std::string database_url = "sqlite:///zeus_bso.db";
  // HTTP worker threads, 0 to kMaxWorkerThreads; 0: DefaultWorkerThreads().
  // Handlers block on the database (SQLite group-commits the requests that
  // wait together), so more threads than cores pay.
  int threads = 0;
  // Open connections at most, 1 to kMaxConnectionsCap. Past it a connection
  // is answered 503 with Retry-After, not left waiting. Keep it below the
  // process's descriptor limit (ulimit -n) less the database connections.
  int max_connections = 512;
  // Requests read, handled or answered at once at most, 1 to
  // kMaxConnectionsCap; past it 503 with Retry-After. Bounds the memory the
  // bodies take (max_body_bytes each).
  int max_requests_in_flight = 128;
  std::size_t max_body_bytes = 64 << 10;
  std::chrono::milliseconds request_timeout{30000};
  std::chrono::milliseconds shutdown_grace{10000};
  std::string log_level = "info";  // trace, debug, info, warn, error, off
  bool access_log = true;          // one JSON line per request at info level
  // A dispatched exploration not heard of for this long (no report since it
  // was dispatched or since its last per-epoch report) is marked failed
  // when its job next asks for a batch size, so pruning goes on without it
  // (its client died without a word: SIGKILL, the OOM killer, a lost node).
  // The default, 6 h, exceeds any plausible epoch plus evaluation; 0: never
  // (the original's behaviour: such a client stalls pruning for ever).
  std::chrono::seconds exploration_timeout{6 * 3600};
};

inline constexpr int kMaxWorkerThreads = 1024;
inline constexpr int kMaxConnectionsCap = 65536;
// Caps of the other options: a body is held in memory (64 MiB); timeouts at
// most an hour; an exploration timeout of at most a year (its microseconds
// must fit the service's 64-bit timestamps).
inline constexpr std::size_t kMaxBodyBytesCap = std::size_t{64} << 20;
inline constexpr int kMaxRequestTimeoutMs = 3'600'000;
inline constexpr int kMaxShutdownGraceMs = 3'600'000;
inline constexpr std::int64_t kMaxExplorationTimeoutS = 365LL * 24 * 3600;

// 4 x the cores, at least 8, at most kMaxWorkerThreads.
int DefaultWorkerThreads();

// Checks the ranges above; kInvalidArgument names the option, its value and
// the range ("max_connections must be between 1 and 65536 (got 0)"). BsoServer::Start checks first of all, before anything slow.
Status ValidateServerOptions(const ServerOptions& options);

// Overrides `options` from ZEUS_BSO_LISTEN, ZEUS_BSO_DATABASE_URL,
// ZEUS_BSO_THREADS, ZEUS_BSO_MAX_CONNECTIONS,
// ZEUS_BSO_MAX_REQUESTS_IN_FLIGHT, ZEUS_BSO_LOG_LEVEL, ZEUS_BSO_ACCESS_LOG
// (true/false) and ZEUS_BSO_EXPLORATION_TIMEOUT (seconds), where set.
// kInvalidArgument names the variable and the value, in the words of the
// matching flag: "ZEUS_BSO_THREADS must be between 0 and 1024 (got '-1')";
// a negative or oversized number is rejected, never wrapped.
Status ApplyServerEnvironment(ServerOptions& options);

// Splits "HOST:PORT" ("[::1]:8000" for IPv6). kInvalidArgument otherwise.
Status ParseListenAddress(const std::string& listen, std::string& host, std::uint16_t& port);

class BsoServer {
 public:
  // Opens (and migrates) the database, then listens. Fails with the
  // database's or the listener's error, each naming what to fix.
  static Result<std::unique_ptr<BsoServer>> Start(const ServerOptions& options);
  virtual ~BsoServer() = default;

  virtual std::uint16_t port() const = 0;
  // "http://HOST:PORT"
  virtual std::string url() const = 0;
  // Graceful stop: in-flight requests finish; see HttpServer::Shutdown.
  virtual void Shutdown() = 0;
  virtual void Wait() = 0;
};

}  // namespace zeus::bso

#endif  // ZEUS_BSO_SERVER_H_
