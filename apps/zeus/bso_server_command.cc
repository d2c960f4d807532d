// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/bso_server_command.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/chrono.h>
#include <fmt/format.h>

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
};

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
    const std::string tmp = flags.ready_file + ".tmp";
    {
      std::ofstream out(tmp);
      out << (*server)->url() << "\n";
    }
    std::rename(tmp.c_str(), flags.ready_file.c_str());
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
  cmd->add_option("--threads", flags->threads, "HTTP worker threads, 0 = 4 per core, at least 8 (env ZEUS_BSO_THREADS)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error or off (env ZEUS_BSO_LOG_LEVEL)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  cmd->add_flag("--no-access-log", flags->no_access_log, "Do not log one line per request (env ZEUS_BSO_ACCESS_LOG)");
  cmd->add_option("--max-body-bytes", flags->max_body_bytes, "Largest request body accepted (default 65536)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--request-timeout-ms", flags->request_timeout_ms,
                  "A request must arrive within this time (default 30000)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--shutdown-grace-ms", flags->shutdown_grace_ms,
                  "On SIGTERM, in-flight requests get this long to finish (default 10000)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--exploration-timeout", flags->exploration_timeout_s,
                  "Seconds after which an unreported exploration counts as failed, so that pruning goes on without "
                  "a client that died; set it above your longest training run (default 0 = never; env "
                  "ZEUS_BSO_EXPLORATION_TIMEOUT)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--ready-file", flags->ready_file, "Write the server's URL to this file once it listens");
  cmd->footer(
      "The REST API is the original Zeus batch-size server's: POST /jobs, GET /jobs/batch_size?job_id=,\n"
      "POST /report, PATCH /trials, DELETE /jobs?job_id=, plus GET /healthz. Logs are JSON lines on\n"
      "stderr. SIGTERM or SIGINT stops it gracefully. Several servers may share one PostgreSQL.");
  cmd->callback([flags, exit_code] { *exit_code = RunBsoServer(*flags); });
}

}  // namespace zeus::cli
