// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/bso_server_command.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "apps/zeus/cli_flags.h"
#include "zeus/base/error.h"
#include "zeus/bso/server.h"

namespace zeus::cli {
namespace {

struct Flags {
  std::string listen;
  std::string database;
  int threads = -1;
  std::string log_level;
  bool no_access_log = false;
  std::size_t max_body_bytes = 0;
  int request_timeout_ms = 0;
  int shutdown_grace_ms = -1;
  std::string ready_file;
  std::int64_t exploration_timeout_s = -1;
  int max_connections = 0;
  int max_requests_in_flight = 0;
};

// The ready file's directory must exist and be writable, and the path must
// not be a directory, before the server starts (afterwards a failure would
// leave a script waiting for ever).
Status CheckReadyFile(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path file(path);
  fs::path dir = file.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--ready-file {}: the directory {} does not exist; create it first", path, dir.string()));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--ready-file {}: cannot write in the directory {}: {}", path, dir.string(),
                            std::strerror(errno)));
  }
  if (fs::is_directory(file, ec)) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("--ready-file {}: is a directory; name a file", path));
  }
  return OkStatus();
}

// Writes url to path atomically (a temporary file, then rename).
Status WriteReadyFile(const std::string& path, const std::string& url) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << url << "\n";
    out.flush();
    if (!out) {
      return Fail(ErrorCode::kIoError, fmt::format("--ready-file {}: cannot write {}: {}", path, tmp, std::strerror(errno)));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Fail(ErrorCode::kIoError, fmt::format("--ready-file {}: cannot rename {} to it: {}", path, tmp,
                                                 std::strerror(errno)));
  }
  return OkStatus();
}

// One JSON log line in the server's format: {"ts":...,"level":"info",<fields>}.
void LogLine(std::string_view fields) {
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
  fmt::print(stderr, "{{\"ts\":\"{:%Y-%m-%dT%H:%M:%S}Z\",\"level\":\"info\",{}}}\n", now, fields);
  std::fflush(stderr);
}

int RunBsoServer(const Flags& flags) {
  bso::ServerOptions options;
  if (Status s = bso::ApplyServerEnvironment(options); !s) {
    std::fprintf(stderr, "error: %s\n", s.error().message().c_str());
    return ExitCodeFor(s.error().code());
  }
  if (!flags.listen.empty()) options.listen = flags.listen;
  if (!flags.database.empty()) options.database_url = flags.database;
  if (flags.threads >= 0) options.threads = flags.threads;
  if (!flags.log_level.empty()) options.log_level = flags.log_level;
  if (flags.no_access_log) options.access_log = false;
  if (flags.max_body_bytes > 0) options.max_body_bytes = flags.max_body_bytes;
  if (flags.request_timeout_ms > 0) options.request_timeout = std::chrono::milliseconds(flags.request_timeout_ms);
  if (flags.shutdown_grace_ms >= 0) options.shutdown_grace = std::chrono::milliseconds(flags.shutdown_grace_ms);
  if (flags.exploration_timeout_s >= 0) options.exploration_timeout = std::chrono::seconds(flags.exploration_timeout_s);
  if (flags.max_connections > 0) options.max_connections = flags.max_connections;
  if (flags.max_requests_in_flight > 0) options.max_requests_in_flight = flags.max_requests_in_flight;
  // Before anything slow: a bad value fails at once, naming the range.
  if (Status s = bso::ValidateServerOptions(options); !s) {
    std::fprintf(stderr, "error: %s\n", s.error().message().c_str());
    return ExitCodeFor(s.error().code());
  }
  if (!flags.ready_file.empty()) {
    if (Status s = CheckReadyFile(flags.ready_file); !s) {
      std::fprintf(stderr, "error: %s\n", s.error().message().c_str());
      return ExitCodeFor(s.error().code());
    }
  }

  // SIGINT and SIGTERM are taken by sigwait below: block them before any
  // server thread starts so that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Result<std::unique_ptr<bso::BsoServer>> server = bso::BsoServer::Start(options);
  if (!server) {
    std::fprintf(stderr, "error: %s\n", server.error().message().c_str());
    return ExitCodeFor(server.error().code());
  }
  if (!flags.ready_file.empty()) {
    if (Status s = WriteReadyFile(flags.ready_file, (*server)->url()); !s) {
      std::fprintf(stderr, "error: %s\n", s.error().message().c_str());
      (*server)->Shutdown();
      (*server)->Wait();
      return 1;
    }
  }
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  LogLine(fmt::format(R"("event":"shutdown","signal":"{}")", signal_number == SIGINT ? "SIGINT" : "SIGTERM"));
  (*server)->Shutdown();
  (*server)->Wait();
  LogLine(R"("event":"stopped")");
  return 0;
}

}  // namespace

void RegisterBsoServerCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "bso-server",
      "Run the batch-size optimizer service: recurring jobs ask it for a batch size and report their results");
  cmd->add_option("--listen", flags->listen, "HOST:PORT to listen on (default 127.0.0.1:8000; env ZEUS_BSO_LISTEN)");
  cmd->add_option("--database", flags->database,
                  "sqlite:///relative.db, sqlite:////absolute.db or postgresql://user@host:port/db "
                  "(default sqlite:///zeus_bso.db; env ZEUS_BSO_DATABASE_URL)");
  cmd->add_option("--threads", flags->threads,
                  fmt::format("HTTP worker threads, 1 to {}; 0 = 4 per core, at least 8 (env ZEUS_BSO_THREADS)",
                              bso::kMaxWorkerThreads))
      ->transform(IntegerFlag<int>(0, bso::kMaxWorkerThreads));
  cmd->add_option("--max-connections", flags->max_connections,
                  fmt::format("Open connections at most (1 to {}, default 512; env ZEUS_BSO_MAX_CONNECTIONS); past it "
                              "a connection gets 503 with Retry-After. Keep it below ulimit -n",
                              bso::kMaxConnectionsCap))
      ->transform(IntegerFlag<int>(1, bso::kMaxConnectionsCap));
  cmd->add_option("--max-requests-in-flight", flags->max_requests_in_flight,
                  fmt::format("Requests being read, handled or answered at most (1 to {}, default 128; env "
                              "ZEUS_BSO_MAX_REQUESTS_IN_FLIGHT); past it 503 with Retry-After",
                              bso::kMaxConnectionsCap))
      ->transform(IntegerFlag<int>(1, bso::kMaxConnectionsCap));
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error or off (env ZEUS_BSO_LOG_LEVEL)")
      ->check(OneOf({"trace", "debug", "info", "warn", "error", "off"}));
  cmd->add_flag("--no-access-log", flags->no_access_log, "Do not log one line per request (env ZEUS_BSO_ACCESS_LOG)");
  cmd->add_option("--max-body-bytes", flags->max_body_bytes,
                  fmt::format("Largest request body accepted, 1 to {} (default 65536)", bso::kMaxBodyBytesCap))
      ->transform(IntegerFlag<std::size_t>(1, bso::kMaxBodyBytesCap));
  cmd->add_option("--request-timeout-ms", flags->request_timeout_ms,
                  fmt::format("A request must arrive within this time, 1 to {} (default 30000)",
                              bso::kMaxRequestTimeoutMs))
      ->transform(IntegerFlag<int>(1, bso::kMaxRequestTimeoutMs));
  cmd->add_option("--shutdown-grace-ms", flags->shutdown_grace_ms,
                  fmt::format("On SIGTERM, in-flight requests get this long to finish, 0 to {} (default 10000)",
                              bso::kMaxShutdownGraceMs))
      ->transform(IntegerFlag<int>(0, bso::kMaxShutdownGraceMs));
  cmd->add_option("--exploration-timeout", flags->exploration_timeout_s,
                  fmt::format("Seconds without a report (clients report every epoch) after which an exploration counts "
                              "as failed, so that pruning goes on without a client that died (SIGKILL, OOM killer); "
                              "set it above your longest epoch plus evaluation (default 21600 = 6 h; 0 = never; at "
                              "most {} = 1 year; env ZEUS_BSO_EXPLORATION_TIMEOUT)",
                              bso::kMaxExplorationTimeoutS))
      ->transform(IntegerFlag<std::int64_t>(0, bso::kMaxExplorationTimeoutS));
  cmd->add_option("--ready-file", flags->ready_file,
                  "Write the server's URL to this file once it listens (its directory must exist and be writable)");
  cmd->footer(
      "The REST API is the original Zeus batch-size server's: POST /jobs, GET /jobs/batch_size?job_id=,\n"
      "POST /report, PATCH /trials, DELETE /jobs?job_id=, plus GET /healthz. Logs are JSON lines on\n"
      "stderr. SIGTERM or SIGINT stops it gracefully. Several servers may share one PostgreSQL.");
  cmd->callback([flags, exit_code] { *exit_code = RunBsoServer(*flags); });
}

}  // namespace zeus::cli
