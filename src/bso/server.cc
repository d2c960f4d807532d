// Copyright 2026 The Zeus C++ Authors.

#include "zeus/bso/server.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <thread>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "http/http.h"
#include "bso/router.h"
#include "bso/service.h"
#include "bso/sql/sql_connection.h"

namespace zeus::bso {
namespace {

// One JSON object per line: {"ts": ..., "level": ..., <fields>}.
std::shared_ptr<spdlog::logger> MakeLogger(const std::string& level) {
  auto logger = std::make_shared<spdlog::logger>("zeus-bso", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%v})", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  return logger;
}

// The fields of a log line: a JSON object without its braces.
std::string Fields(const nlohmann::json& fields) {
  std::string s = fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.substr(1, s.size() - 2);
}

}  // namespace

int DefaultWorkerThreads() {
  return std::min(kMaxWorkerThreads, static_cast<int>(std::max(8u, 4 * std::thread::hardware_concurrency())));
}

Status ValidateServerOptions(const ServerOptions& options) {
  auto range = [](std::string_view name, std::int64_t value, std::int64_t low, std::int64_t high,
                  std::string_view note = "") -> Status {
    if (value >= low && value <= high) return OkStatus();
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} must be between {} and {}{} (got {})", name, low, high, note, value));
  };
  if (Status s = range("threads", options.threads, 0, kMaxWorkerThreads, "; 0 = 4 per core, at least 8"); !s) return s;
  if (Status s = range("max_connections", options.max_connections, 1, kMaxConnectionsCap); !s) return s;
  if (Status s = range("max_requests_in_flight", options.max_requests_in_flight, 1, kMaxConnectionsCap); !s) return s;
  if (options.max_body_bytes < 1 || options.max_body_bytes > kMaxBodyBytesCap) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("max_body_bytes must be between 1 and {} (got {})",
                                                         kMaxBodyBytesCap, options.max_body_bytes));
  }
  if (Status s = range("request_timeout_ms", options.request_timeout.count(), 1, kMaxRequestTimeoutMs); !s) return s;
  if (Status s = range("shutdown_grace_ms", options.shutdown_grace.count(), 0, kMaxShutdownGraceMs); !s) return s;
  if (Status s = range("exploration_timeout_s", options.exploration_timeout.count(), 0, kMaxExplorationTimeoutS,
                       "; 0 = never");
      !s) {
    return s;
  }
  return OkStatus();
}

namespace {

class BsoServerImpl : public BsoServer {
 public:
  BsoServerImpl(std::unique_ptr<BsoService> service, std::shared_ptr<spdlog::logger> logger, std::string host)
      : service_(std::move(service)), logger_(std::move(logger)), host_(std::move(host)) {}
  ~BsoServerImpl() override {
    Shutdown();
    Wait();
  }

  Status Listen(const ServerOptions& options, const std::string& host, std::uint16_t port) {
    HttpServerOptions http;
    http.host = host;
    http.port = port;
    http.threads = options.threads > 0 ? options.threads : DefaultWorkerThreads();
    http.max_connections = options.max_connections;
    http.max_requests_in_flight = options.max_requests_in_flight;
    http.max_body_bytes = options.max_body_bytes;
    http.request_timeout = options.request_timeout;
    http.shutdown_grace = options.shutdown_grace;
    const bool access_log = options.access_log;
    Result<std::unique_ptr<HttpServer>> server = HttpServer::Start(http, [this, access_log](const HttpRequest& r) {
      const auto start = std::chrono::steady_clock::now();
      HttpResponse response = HandleBsoRequest(*service_, r);
      const auto us =
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
      if (response.status >= 500) {
        logger_->error(Fields({{"event", "request"}, {"method", r.method}, {"target", r.target},
                               {"status", response.status}, {"duration_us", us}, {"response", response.body}}));
      } else if (access_log && logger_->should_log(spdlog::level::info)) {
        logger_->info(Fields({{"event", "request"}, {"method", r.method}, {"target", r.target},
                              {"status", response.status}, {"duration_us", us}}));
      }
      return response;
    });
    if (!server) return Fail(server.error());
    http_ = std::move(*server);
    return OkStatus();
  }

  std::uint16_t port() const override { return http_->port(); }
  std::string url() const override {
    const bool v6 = host_.find(':') != std::string::npos;
    return fmt::format("http://{}{}{}:{}", v6 ? "[" : "", host_, v6 ? "]" : "", port());
  }
  void Shutdown() override {
    if (http_) http_->Shutdown();
  }
  void Wait() override {
    if (http_) http_->Wait();
  }

 private:
  std::unique_ptr<BsoService> service_;
  std::shared_ptr<spdlog::logger> logger_;
  std::string host_;
  std::unique_ptr<HttpServer> http_;
};

}  // namespace

Status ParseListenAddress(const std::string& listen, std::string& host, std::uint16_t& port) {
  const std::size_t colon = listen.rfind(':');
  auto bad = [&]() {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("bad listen address '{}': expected HOST:PORT, e.g. 127.0.0.1:8000 or [::1]:8000", listen));
  };
  if (colon == std::string::npos || colon == 0) return bad();
  host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port_text = listen.substr(colon + 1);
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
  if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() || value > 65535) {
    return bad();
  }
  port = static_cast<std::uint16_t>(value);
  return OkStatus();
}

Status ApplyServerEnvironment(ServerOptions& options) {
  auto get = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
  if (auto v = get("ZEUS_BSO_LISTEN")) options.listen = *v;
  if (auto v = get("ZEUS_BSO_DATABASE_URL")) options.database_url = *v;
  // A whole-number variable in [low, high], in the words of the matching
  // flag's check. Digits with an optional sign only; a value past int64 is
  // out of range, never wrapped.
  auto integer = [&](const char* name, std::int64_t low, std::int64_t high, auto& out) -> Status {
    const std::optional<std::string> v = get(name);
    if (!v) return OkStatus();
    const std::size_t sign = !v->empty() && (v->front() == '-' || v->front() == '+') ? 1 : 0;
    const bool digits = v->size() > sign && std::all_of(v->begin() + static_cast<std::ptrdiff_t>(sign), v->end(),
                                                       [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{} must be a whole number (got '{}')", name, *v));
    }
    std::int64_t value = 0;
    const char* first = v->data() + (v->front() == '+' ? 1 : 0);
    const auto [ptr, ec] = std::from_chars(first, v->data() + v->size(), value);
    if (ec != std::errc() || ptr != v->data() + v->size() || value < low || value > high) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} must be between {} and {} (got '{}')", name, low, high, *v));
    }
    out = static_cast<std::remove_reference_t<decltype(out)>>(value);
    return OkStatus();
  };
  if (Status s = integer("ZEUS_BSO_THREADS", 0, kMaxWorkerThreads, options.threads); !s) return s;
  if (Status s = integer("ZEUS_BSO_MAX_CONNECTIONS", 1, kMaxConnectionsCap, options.max_connections); !s) return s;
  if (Status s = integer("ZEUS_BSO_MAX_REQUESTS_IN_FLIGHT", 1, kMaxConnectionsCap, options.max_requests_in_flight);
      !s) {
    return s;
  }
  std::int64_t exploration_timeout_s = options.exploration_timeout.count();
  if (Status s = integer("ZEUS_BSO_EXPLORATION_TIMEOUT", 0, kMaxExplorationTimeoutS, exploration_timeout_s); !s) {
    return s;
  }
  options.exploration_timeout = std::chrono::seconds(exploration_timeout_s);
  if (auto v = get("ZEUS_BSO_LOG_LEVEL")) {
    std::string level = *v;
    for (char& c : level) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (level == "warning") level = "warn";
    if (level == "notset") level = "trace";
    if (level == "critical") level = "error";
    if (spdlog::level::from_str(level) == spdlog::level::off && level != "off") {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("ZEUS_BSO_LOG_LEVEL must be one of trace, debug, info, warn, error, off (got '{}')", *v));
    }
    options.log_level = level;
  }
  if (auto v = get("ZEUS_BSO_ACCESS_LOG")) {
    if (*v == "true" || *v == "1") {
      options.access_log = true;
    } else if (*v == "false" || *v == "0") {
      options.access_log = false;
    } else {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("ZEUS_BSO_ACCESS_LOG must be one of true, false, 1, 0 (got '{}')", *v));
    }
  }
  return OkStatus();
}

Result<std::unique_ptr<BsoServer>> BsoServer::Start(const ServerOptions& options) {
  if (Status s = ValidateServerOptions(options); !s) return Fail(s.error());
  std::string host;
  std::uint16_t port = 0;
  if (Status s = ParseListenAddress(options.listen, host, port); !s) return Fail(s.error());
  auto logger = MakeLogger(options.log_level);
  ServiceOptions service_options;
  service_options.exploration_timeout = options.exploration_timeout;
  Result<std::unique_ptr<BsoService>> service = BsoService::Open(options.database_url, service_options);
  if (!service) {
    return Fail(service.error().WithContext(
        fmt::format("cannot open the database {}", RedactDatabaseUrl(options.database_url))));
  }
  const SqlDialect dialect = (*service)->dialect();
  auto server = std::make_unique<BsoServerImpl>(std::move(*service), logger, host);
  if (Status s = server->Listen(options, host, port); !s) return Fail(s.error());
  logger->info(Fields({{"event", "listening"},
                       {"url", server->url()},
                       {"database", RedactDatabaseUrl(options.database_url)},
                       {"dialect", dialect == SqlDialect::kPostgres ? "postgresql" : "sqlite"},
                       {"exploration_timeout_s", options.exploration_timeout.count()},
                       {"max_connections", options.max_connections},
                       {"max_requests_in_flight", options.max_requests_in_flight}}));
  return std::unique_ptr<BsoServer>(std::move(server));
}

}  // namespace zeus::bso
