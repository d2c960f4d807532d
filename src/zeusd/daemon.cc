// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/daemon.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeusd/power_stream.h"
#include "zeusd/query.h"
#include "base/serial_worker.h"
#include "zeusd/gpu_calls.h"

namespace zeus::zeusd {
namespace {

using http::HttpRequest;
using http::HttpResponse;
using json = nlohmann::json;

HttpResponse JsonAnswer(int status, const json& body) {
  HttpResponse response;
  response.status = status;
  response.body = body.dump();
  return response;
}

HttpResponse ErrorAnswer(int status, std::string_view message) {
  return JsonAnswer(status, json{{"error", message}});
}

HttpResponse ErrorAnswer(const Error& error) { return ErrorAnswer(HttpStatusForError(error), error.message()); }

HttpResponse EmptyOk() {
  HttpResponse response;
  response.status = 200;
  response.content_type.clear();
  return response;
}

// Per-device failures: {"errors": {"<id>": "<message>"}} with the worst status.
HttpResponse DeviceErrors(const std::map<std::size_t, Error>& errors) {
  json body = json::object();
  int status = 400;
  for (const auto& [id, error] : errors) {
    body[std::to_string(id)] = error.message();
    status = std::max(status, HttpStatusForError(error));
  }
  return JsonAnswer(status, json{{"errors", body}});
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The bearer token of an Authorization header, or nullopt.
std::optional<std::string> BearerToken(std::string_view header) {
  header = Trim(header);
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = header[i] >= 'A' && header[i] <= 'Z' ? static_cast<char>(header[i] - 'A' + 'a') : header[i];
    if (c != kScheme[i]) return std::nullopt;
  }
  const std::string_view token = Trim(header.substr(kScheme.size()));
  if (token.empty()) return std::nullopt;
  return std::string(token);
}

json ScopesJson(const std::vector<ApiGroup>& scopes) {
  json out = json::array();
  for (ApiGroup group : scopes) out.push_back(std::string(ApiGroupName(group)));
  return out;
}

struct GpuInfo {
  std::string name;
  std::string pci_address;
  bool cumulative_energy_available = false;
  std::optional<device::PowerLimitConstraints> constraints;  // read at start-up
};

}  // namespace

int HttpStatusForError(const Error& error) {
  switch (error.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotSupported:
    case ErrorCode::kNotFound:
      return 400;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kTimeout:
    case ErrorCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

std::string ZeusdPciAddress(std::string_view nvml_bus_id) {
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned device = 0;
  unsigned function = 0;
  const std::string text(nvml_bus_id);
  char tail = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) != 4) {
    return text;
  }
  return fmt::format("{:04x}:{:02x}:{:02x}.0", domain & 0xffffu, bus, device);
}

class Daemon::Impl {
 public:
  Impl(DaemonOptions options, const device::GpuSet* gpus, const device::CpuSet* cpus)
      : options_(std::move(options)), gpus_(gpus), cpus_(cpus) {
    if (!options_.gpu_op_runner) {
      options_.gpu_op_runner = [](device::Gpu& gpu, std::size_t, GpuOp op, const GpuOpArgs& args) {
        return ApplyGpuOp(gpu, op, args);
      };
    }
    for (ApiGroup group : options_.enabled_groups) enabled_[static_cast<std::size_t>(group)] = true;
    const auto gpu_period = PeriodOf(options_.gpu_power_poll_hz);
    for (std::size_t i = 0; i < gpu_count(); ++i) {
      device::Gpu& gpu = gpus_->gpu(i);
      GpuInfo info;
      auto name = gpu.Name();
      info.name = name ? *name : "unknown";
      auto pci = gpu.PciBusId();
      info.pci_address = pci ? ZeusdPciAddress(*pci) : "unknown";
      info.cumulative_energy_available = gpu.SupportsEnergyCounter();
      if (auto constraints = gpu.PowerLimitConstraintsMw()) info.constraints = *constraints;
      gpu_info_.push_back(std::move(info));
      gpu_workers_.push_back(std::make_unique<base::SerialWorker>(fmt::format("zeusd-gpu{}", i)));
      gpu_readers_.push_back(std::make_unique<base::SerialWorker>(fmt::format("zeusd-gread{}", i)));
      gpu_pollers_.push_back(std::make_shared<Poller>(fmt::format("zeusd-gpoll{}", i), gpu_period, GpuPollFn(i)));
    }
    const auto cpu_period = PeriodOf(options_.cpu_power_poll_hz);
    for (std::size_t i = 0; i < cpu_count(); ++i) {
      cpu_pollers_.push_back(std::make_shared<Poller>(fmt::format("zeusd-cpoll{}", i), cpu_period, CpuPollFn(i)));
    }
    if (enabled_[static_cast<std::size_t>(ApiGroup::kMetrics)]) StartCollector();
  }

  ~Impl() {
    if (!stopped_) StopDeviceThreads(options_.gpu_call_timeout);
  }

  bool StopDeviceThreads(std::chrono::milliseconds deadline) {
    if (stopped_) return clean_;
    stopped_ = true;
    const auto end = std::chrono::steady_clock::now() + deadline;
    const auto left = [end] {
      return std::max(std::chrono::milliseconds(0),
                      std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()));
    };
    bool clean = true;
    const auto note = [&clean](bool stopped, const char* what, std::size_t id) {
      if (stopped) return;
      clean = false;
      std::fprintf(stderr, "zeusd: %s %zu is still inside a driver call; leaving it behind\n", what, id);
    };
    if (collector_) {  // its sampling threads may be inside a hung call too
      base::SerialWorker closer("zeusd-close");
      closer.Post([owned = std::shared_ptr<exporter::Collector>(std::move(collector_))]() mutable { owned.reset(); });
      note(closer.StopWithin(left()), "the metrics collector's sampler of GPUs", 0);
    }
    for (std::size_t i = 0; i < gpu_pollers_.size(); ++i) note(gpu_pollers_[i]->StopWithin(left()), "the power poller of GPU", i);
    for (std::size_t i = 0; i < cpu_pollers_.size(); ++i) note(cpu_pollers_[i]->StopWithin(left()), "the power poller of CPU", i);
    for (std::size_t i = 0; i < gpu_workers_.size(); ++i) note(gpu_workers_[i]->StopWithin(left()), "the writer of GPU", i);
    for (std::size_t i = 0; i < gpu_readers_.size(); ++i) note(gpu_readers_[i]->StopWithin(left()), "the reader of GPU", i);
    clean_ = clean;
    return clean;
  }

  HttpResponse Handle(const HttpRequest& request) {
    auto target = ParseTarget(request.target);
    if (!target) return ErrorAnswer(400, target.error().message());
    const std::string& path = target->path;

    // (1) A disabled group is 404 whatever the token.
    if (auto group = GroupOfPath(path); group && !enabled_[static_cast<std::size_t>(*group)]) {
      return ErrorAnswer(404, fmt::format("API group '{}' is not enabled on this server.", ApiGroupName(*group)));
    }
    std::optional<TokenClaims> claims;
    if (!options_.signing_key) {
      // (2) No auth: /auth/* does not exist, tokens are ignored.
      if (path.starts_with("/auth/")) return ErrorAnswer(404, fmt::format("No route for {}", path));
    } else if (path != "/discover" && path != "/time" && path != "/metrics") {  // (3) open routes
      // (4) A bearer token is required.
      std::optional<std::string> token;
      for (const auto& [name, value] : request.headers) {
        if (name.size() == 13 && std::equal(name.begin(), name.end(), "authorization", [](char a, char b) {
              return (a >= 'A' && a <= 'Z' ? a - 'A' + 'a' : a) == b;
            })) {
          token = BearerToken(value);
          break;
        }
      }
      if (!token) {
        HttpResponse response = ErrorAnswer(401, "Missing or malformed Authorization header. Expected: Bearer <token>");
        response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"zeusd\"");
        return response;
      }
      // (5) A valid token.
      auto verified = VerifyToken(*options_.signing_key, *token, NowMs() / 1000);
      if (!verified) {
        HttpResponse response = ErrorAnswer(401, verified.error().message());
        response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"zeusd\", error=\"invalid_token\"");
        return response;
      }
      // (6) The route's scope.
      if (auto group = GroupOfPath(path);
          group && std::find(verified->scopes.begin(), verified->scopes.end(), *group) == verified->scopes.end()) {
        std::string scopes;
        for (ApiGroup scope : verified->scopes) scopes += fmt::format("{}{}", scopes.empty() ? "" : ", ", ApiGroupName(scope));
        return ErrorAnswer(403, fmt::format("Token lacks the required scope '{}'. Token scopes: [{}]",
                                            ApiGroupName(*group), scopes));
      }
      claims = std::move(*verified);
    }
    return Route(request, *target, claims);
  }

  std::vector<std::uint64_t> GpuPollCounts() const {
    std::vector<std::uint64_t> counts;
    for (const auto& poller : gpu_pollers_) counts.push_back(poller->polls());
    return counts;
  }
  std::vector<std::uint64_t> CpuPollCounts() const {
    std::vector<std::uint64_t> counts;
    for (const auto& poller : cpu_pollers_) counts.push_back(poller->polls());
    return counts;
  }

 private:
  std::size_t gpu_count() const { return gpus_ == nullptr ? 0 : gpus_->size(); }
  std::size_t cpu_count() const { return cpus_ == nullptr ? 0 : cpus_->size(); }

  static std::chrono::microseconds PeriodOf(double hz) {
    const double us = hz > 0 ? 1e6 / hz : 1e6;
    return std::chrono::microseconds(std::max<std::int64_t>(1, static_cast<std::int64_t>(us)));
  }

  std::int64_t NowMs() const { return UnixNowMs(options_.unix_time_ms); }

  std::chrono::milliseconds WriteTimeout() const {
    return options_.gpu_write_timeout.count() > 0 ? options_.gpu_write_timeout : options_.gpu_call_timeout;
  }

  HttpResponse Route(const HttpRequest& request, const Target& target, const std::optional<TokenClaims>& claims) {
    const std::string& path = target.path;
    auto method_is = [&](std::string_view method) -> std::optional<HttpResponse> {
      if (request.method == method || (method == "GET" && request.method == "HEAD")) return std::nullopt;
      HttpResponse response = ErrorAnswer(405, fmt::format("{} needs {} (got {})", path, method, request.method));
      response.headers.emplace_back("Allow", std::string(method));
      return response;
    };
    if (path == "/discover") {
      if (auto wrong = method_is("GET")) return *wrong;
      return Discover(target);
    }
    if (path == "/time") {
      if (auto wrong = method_is("GET")) return *wrong;
      QueryFields fields(target, {});
      if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
      return JsonAnswer(200, json{{"timestamp_ms", NowMs()}});
    }
    if (path == "/auth/whoami") {
      if (auto wrong = method_is("GET")) return *wrong;
      json body = {{"sub", claims->sub}, {"scopes", ScopesJson(claims->scopes)}};
      if (claims->exp) body["exp"] = *claims->exp;
      return JsonAnswer(200, body);
    }
    if (path.starts_with("/gpu/set_") || path.starts_with("/gpu/reset_")) {
      auto op = GpuOpFromName(std::string_view(path).substr(5));
      if (op) {
        if (auto wrong = method_is("POST")) return *wrong;
        return GpuWrite(target, *op);
      }
    }
    if (path == "/gpu/get_power_limit" || path == "/gpu/get_power_limit_constraints" ||
        path == "/gpu/get_persistence_mode" || path == "/gpu/get_cumulative_energy" || path == "/gpu/get_power") {
      if (auto wrong = method_is("GET")) return *wrong;
      return GpuRead(target);
    }
    if (path == "/metrics") {
      if (auto wrong = method_is("GET")) return *wrong;
      return Metrics(target);
    }
    if (path == "/gpu/stream_power" || path == "/cpu/stream_power") {
      if (auto wrong = method_is("GET")) return *wrong;
      return Stream(target, path == "/gpu/stream_power");
    }
    if (path == "/cpu/get_cumulative_energy") {
      if (auto wrong = method_is("GET")) return *wrong;
      return CpuEnergy(target);
    }
    if (path == "/cpu/get_power") {
      if (auto wrong = method_is("GET")) return *wrong;
      return CpuPower(target);
    }
    return ErrorAnswer(404, fmt::format("No route for {}", path));
  }

  HttpResponse Discover(const Target& target) {
    QueryFields fields(target, {});
    if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
    json gpus = json::array();
    for (std::size_t i = 0; i < gpu_info_.size(); ++i) {
      gpus.push_back({{"id", i},
                      {"name", gpu_info_[i].name},
                      {"pci_address", gpu_info_[i].pci_address},
                      {"cumulative_energy_available", gpu_info_[i].cumulative_energy_available}});
    }
    json cpus = json::array();
    for (std::size_t i = 0; i < cpu_count(); ++i) {
      cpus.push_back({{"id", i}, {"dram_available", cpus_->cpu(i).has_dram()}});
    }
    json groups = json::array();
    for (ApiGroup group : kAllApiGroups) {
      if (enabled_[static_cast<std::size_t>(group)]) groups.push_back(std::string(ApiGroupName(group)));
    }
    return JsonAnswer(200, json{{"gpus", gpus},
                                {"cpus", cpus},
                                {"enabled_api_groups", groups},
                                {"auth_required", options_.signing_key.has_value()}});
  }

  void StartCollector() {
    exporter::CollectorOptions metrics = options_.metrics;
    if (!metrics.log) {
      metrics.log = [](std::string_view line) {
        std::fprintf(stderr, "zeusd: metrics: %.*s\n", static_cast<int>(line.size()), line.data());
      };
    }
    auto collector = exporter::Collector::Create(gpus_, cpus_, std::move(metrics));
    if (collector) {
      collector_ = std::move(*collector);
    } else {
      collector_error_ = collector.error();
      std::fprintf(stderr, "zeusd: metrics: cannot start the collector: %s\n", collector_error_->message().c_str());
    }
  }

  HttpResponse Metrics(const Target& target) {
    QueryFields fields(target, {});
    if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
    if (!collector_) {
      return ErrorAnswer(500, fmt::format("The metrics collector did not start: {}",
                                          collector_error_ ? collector_error_->message() : "unknown error"));
    }
    HttpResponse response;
    response.status = 200;
    response.content_type = "text/plain; version=0.0.4; charset=utf-8";
    response.body = collector_->Scrape();
    return response;
  }

  HttpResponse GpuWrite(const Target& target, GpuOp op) {
    std::vector<std::string_view> names{"gpu_ids"};
    switch (op) {
      case GpuOp::kSetPowerLimit: names.push_back("power_limit_mw"); break;
      case GpuOp::kSetPersistenceMode: names.push_back("enabled"); break;
      case GpuOp::kSetGpuLockedClocks:
      case GpuOp::kSetMemLockedClocks:
        names.push_back("min_clock_mhz");
        names.push_back("max_clock_mhz");
        break;
      default: break;
    }
    names.push_back("block");
    QueryFields fields(target, names);
    auto ids_text = fields.Require("gpu_ids");
    if (!ids_text) return ErrorAnswer(ids_text.error());
    auto ids = ParseIdList("gpu_ids", *ids_text, gpu_count(), "GPU");
    if (!ids) return ErrorAnswer(ids.error());
    GpuOpArgs args;
    constexpr std::uint64_t kU32Max = 0xffffffffu;
    switch (op) {
      case GpuOp::kSetPowerLimit: {
        auto mw = fields.RequireUnsigned("power_limit_mw", kU32Max);
        if (!mw) return ErrorAnswer(mw.error());
        args.power_limit_mw = static_cast<std::uint32_t>(*mw);
        break;
      }
      case GpuOp::kSetPersistenceMode: {
        auto enabled = fields.RequireBool("enabled");
        if (!enabled) return ErrorAnswer(enabled.error());
        args.enabled = *enabled;
        break;
      }
      case GpuOp::kSetGpuLockedClocks:
      case GpuOp::kSetMemLockedClocks: {
        auto min_mhz = fields.RequireUnsigned("min_clock_mhz", kU32Max);
        if (!min_mhz) return ErrorAnswer(min_mhz.error());
        auto max_mhz = fields.RequireUnsigned("max_clock_mhz", kU32Max);
        if (!max_mhz) return ErrorAnswer(max_mhz.error());
        args.min_clock_mhz = static_cast<unsigned>(*min_mhz);
        args.max_clock_mhz = static_cast<unsigned>(*max_mhz);
        break;
      }
      default: break;
    }
    auto block = fields.RequireBool("block");
    if (!block) return ErrorAnswer(block.error());
    if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());

    // Everything is checked for every GPU before any is changed.
    std::map<std::size_t, Error> errors;
    for (std::size_t id : *ids) {
      const auto& constraints = gpu_info_[id].constraints;
      if (op == GpuOp::kSetPowerLimit && constraints &&
          (args.power_limit_mw < constraints->min_mw || args.power_limit_mw > constraints->max_mw)) {
        errors.emplace(id, Error(ErrorCode::kInvalidArgument,
                                 fmt::format("power_limit_mw {} is outside GPU {}'s range [{}, {}] mW; nothing was "
                                             "changed",
                                             args.power_limit_mw, id, constraints->min_mw, constraints->max_mw)));
      } else if (auto hung = HungGpuError(id, *gpu_workers_[id], WriteTimeout(), "a write")) {
        errors.emplace(id, *hung);
      }
    }
    if (!errors.empty()) return DeviceErrors(errors);

    using Promise = std::promise<Status>;
    std::vector<std::pair<std::size_t, std::future<Status>>> results;
    {
      // One global order: every GPU applies concurrent requests in the same order.
      std::lock_guard<std::mutex> lock(post_mutex_);
      for (std::size_t id : *ids) {
        auto promise = std::make_shared<Promise>();
        if (*block) results.emplace_back(id, promise->get_future());
        device::Gpu* gpu = &gpus_->gpu(id);
        gpu_workers_[id]->Post([runner = options_.gpu_op_runner, gpu, id, op, args, promise, blocking = *block] {
          Status status = runner(*gpu, id, op, args);
          if (!status && !blocking) {
            std::fprintf(stderr, "zeusd: GPU %zu %s (non-blocking) failed: %s\n", id,
                         std::string(GpuOpName(op)).c_str(), status.error().message().c_str());
          }
          promise->set_value(std::move(status));
        });
      }
    }
    const auto deadline = std::chrono::steady_clock::now() + WriteTimeout();
    for (auto& [id, future] : results) {
      Status status = AwaitGpu(future, deadline, id, WriteTimeout(), GpuOpName(op));
      if (!status) errors.emplace(id, status.error());
    }
    if (!errors.empty()) return DeviceErrors(errors);
    return EmptyOk();
  }

  HttpResponse GpuRead(const Target& target) {
    QueryFields fields(target, {"gpu_ids"});
    auto ids = OptionalIdList(fields, "gpu_ids", gpu_count(), "GPU");
    if (!ids) return ErrorAnswer(ids.error());
    if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
    const std::string& path = target.path;
    json answer = json::object();
    std::map<std::size_t, Error> errors;
    const std::int64_t timestamp_ms = NowMs();
    // The GPUs are read in parallel, each on its own reader thread.
    std::vector<std::pair<std::size_t, std::future<Result<json>>>> pending;
    for (std::size_t id : *ids) {
      if (auto hung = HungGpuError(id, *gpu_readers_[id], options_.gpu_call_timeout, path)) {
        errors.emplace(id, *hung);
        continue;
      }
      auto promise = std::make_shared<std::promise<Result<json>>>();
      pending.emplace_back(id, promise->get_future());
      device::Gpu* gpu = &gpus_->gpu(id);
      gpu_readers_[id]->Post([gpu, path, promise] { promise->set_value(ReadGpuValue(*gpu, path)); });
    }
    const auto deadline = std::chrono::steady_clock::now() + options_.gpu_call_timeout;
    for (auto& [id, future] : pending) {
      Result<json> value = AwaitGpu(future, deadline, id, options_.gpu_call_timeout, path);
      if (!value) {
        errors.emplace(id, value.error());
        continue;
      }
      answer[std::to_string(id)] = std::move(*value);
    }
    if (!errors.empty()) return DeviceErrors(errors);
    if (path == "/gpu/get_power") return JsonAnswer(200, json{{"timestamp_ms", timestamp_ms}, {"power_mw", answer}});
    return JsonAnswer(200, answer);
  }

  // Reads the CPUs' energy: (cpu uJ, dram uJ or none) per id.
  struct CpuReading {
    double package_mj = 0;
    std::optional<double> dram_mj;
  };
  Result<CpuReading> ReadCpu(std::size_t id) { return ReadCpuOf(cpus_, id); }
  static Result<CpuReading> ReadCpuOf(const device::CpuSet* cpus, std::size_t id) {
    auto energy = cpus->cpu(id).TotalEnergy();
    if (!energy) return Fail(energy.error());
    return CpuReading{energy->package_mj, energy->dram_mj};
  }

  HttpResponse CpuEnergy(const Target& target) {
    QueryFields fields(target, {"cpu_ids", "cpu", "dram"});
    auto ids = OptionalIdList(fields, "cpu_ids", cpu_count(), "CPU");
    if (!ids) return ErrorAnswer(ids.error());
    auto want_cpu = fields.RequireBool("cpu");
    if (!want_cpu) return ErrorAnswer(want_cpu.error());
    auto want_dram = fields.RequireBool("dram");
    if (!want_dram) return ErrorAnswer(want_dram.error());
    if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
    json answer = json::object();
    std::map<std::size_t, Error> errors;
    for (std::size_t id : *ids) {
      auto reading = ReadCpu(id);
      if (!reading) { errors.emplace(id, reading.error()); continue; }
      json entry = {{"cpu_energy_uj", nullptr}, {"dram_energy_uj", nullptr}};
      if (*want_cpu) entry["cpu_energy_uj"] = static_cast<std::uint64_t>(reading->package_mj * 1000.0 + 0.5);
      if (*want_dram && reading->dram_mj) {
        entry["dram_energy_uj"] = static_cast<std::uint64_t>(*reading->dram_mj * 1000.0 + 0.5);
      }
      answer[std::to_string(id)] = entry;
    }
    if (!errors.empty()) return DeviceErrors(errors);
    return JsonAnswer(200, answer);
  }

  static std::uint64_t PowerMw(double delta_mj, double elapsed_s) {
    if (!(delta_mj > 0) || !(elapsed_s > 0)) return 0;
    return static_cast<std::uint64_t>(delta_mj / elapsed_s + 0.5);
  }

  HttpResponse CpuPower(const Target& target) {
    QueryFields fields(target, {"cpu_ids"});
    auto ids = OptionalIdList(fields, "cpu_ids", cpu_count(), "CPU");
    if (!ids) return ErrorAnswer(ids.error());
    if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
    std::map<std::size_t, Error> errors;
    std::map<std::size_t, CpuReading> first;
    for (std::size_t id : *ids) {
      auto reading = ReadCpu(id);
      if (!reading) { errors.emplace(id, reading.error()); continue; }
      first.emplace(id, *reading);
    }
    if (!errors.empty()) return DeviceErrors(errors);
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(PeriodOf(options_.cpu_power_poll_hz));
    json power = json::object();
    for (std::size_t id : *ids) {
      auto reading = ReadCpu(id);
      if (!reading) { errors.emplace(id, reading.error()); continue; }
      const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      json entry = {{"cpu_mw", PowerMw(reading->package_mj - first[id].package_mj, elapsed_s)}, {"dram_mw", nullptr}};
      if (reading->dram_mj && first[id].dram_mj) entry["dram_mw"] = PowerMw(*reading->dram_mj - *first[id].dram_mj, elapsed_s);
      power[std::to_string(id)] = entry;
    }
    if (!errors.empty()) return DeviceErrors(errors);
    return JsonAnswer(200, json{{"timestamp_ms", NowMs()}, {"power_mw", power}});
  }

  HttpResponse Stream(const Target& target, bool gpu) {
    const std::string_view name = gpu ? "gpu_ids" : "cpu_ids";
    QueryFields fields(target, {name});
    auto ids = OptionalIdList(fields, name, gpu ? gpu_count() : cpu_count(), gpu ? "GPU" : "CPU");
    if (!ids) return ErrorAnswer(ids.error());
    if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
    std::vector<std::shared_ptr<Poller>> pollers;
    for (std::size_t id : *ids) pollers.push_back(gpu ? gpu_pollers_[id] : cpu_pollers_[id]);
    HttpResponse response;
    response.status = 200;
    response.content_type = "text/event-stream";
    response.headers.emplace_back("Cache-Control", "no-cache");
    response.stream = std::make_shared<Subscription>(std::move(pollers));
    return response;
  }

  // A GPU poller publishes when the reading changed, and at least once a
  // second even when it did not, so that a silent stream means a stalled
  // daemon, never a constant draw (W15).
  Poller::PollFn GpuPollFn(std::size_t id) {
    struct State {
      std::optional<std::uint32_t> last_mw;
      std::chrono::steady_clock::time_point last_sent;
    };
    auto state = std::make_shared<State>();
    // Captures no `this`: a poll stuck in a hung driver call may outlive the daemon.
    return [gpus = gpus_, clock = options_.unix_time_ms, id, state](bool resumed) -> std::optional<std::string> {
      if (resumed) state->last_mw.reset();
      auto mw = gpus->gpu(id).PowerUsageMw();
      if (!mw) {
        std::fprintf(stderr, "zeusd: reading GPU %zu's power: %s\n", id, mw.error().message().c_str());
        return std::nullopt;
      }
      const auto now = std::chrono::steady_clock::now();
      if (state->last_mw == *mw && now - state->last_sent < std::chrono::seconds(1)) return std::nullopt;
      state->last_mw = *mw;
      state->last_sent = now;
      return json{{"timestamp_ms", UnixNowMs(clock)}, {"gpu_id", id}, {"power_mw", *mw}}.dump();
    };
  }

  // A CPU poller divides each energy difference by the time measured between
  // the two reads (not the nominal period, W15), and publishes when a value
  // changed or at least once a second.
  Poller::PollFn CpuPollFn(std::size_t id) {
    struct State {
      std::optional<CpuReading> last;
      std::chrono::steady_clock::time_point last_read;
      std::optional<std::pair<std::uint64_t, std::optional<std::uint64_t>>> last_sent_mw;
      std::chrono::steady_clock::time_point last_sent;
    };
    auto state = std::make_shared<State>();
    return [cpus = cpus_, clock = options_.unix_time_ms, id, state](bool resumed) -> std::optional<std::string> {
      if (resumed) {
        state->last.reset();
        state->last_sent_mw.reset();
      }
      auto reading = ReadCpuOf(cpus, id);
      const auto now = std::chrono::steady_clock::now();
      if (!reading) {
        std::fprintf(stderr, "zeusd: reading CPU %zu's energy: %s\n", id, reading.error().message().c_str());
        return std::nullopt;
      }
      std::optional<CpuReading> previous = state->last;
      const auto previous_time = state->last_read;
      state->last = *reading;
      state->last_read = now;
      if (!previous) return std::nullopt;  // the baseline
      const double elapsed_s = std::chrono::duration<double>(now - previous_time).count();
      const std::uint64_t cpu_mw = PowerMw(reading->package_mj - previous->package_mj, elapsed_s);
      std::optional<std::uint64_t> dram_mw;
      if (reading->dram_mj && previous->dram_mj) dram_mw = PowerMw(*reading->dram_mj - *previous->dram_mj, elapsed_s);
      const auto values = std::make_pair(cpu_mw, dram_mw);
      if (state->last_sent_mw == values && now - state->last_sent < std::chrono::seconds(1)) return std::nullopt;
      state->last_sent_mw = values;
      state->last_sent = now;
      json event = {{"timestamp_ms", UnixNowMs(clock)}, {"cpu_id", id}, {"cpu_mw", cpu_mw}, {"dram_mw", nullptr}};
      if (dram_mw) event["dram_mw"] = *dram_mw;
      return event.dump();
    };
  }

  DaemonOptions options_;
  const device::GpuSet* gpus_;
  const device::CpuSet* cpus_;
  bool enabled_[std::size(kAllApiGroups)] = {};
  std::vector<GpuInfo> gpu_info_;
  std::vector<std::unique_ptr<base::SerialWorker>> gpu_workers_;  // writes, one GPU each
  std::vector<std::unique_ptr<base::SerialWorker>> gpu_readers_;  // reads, one GPU each
  std::mutex post_mutex_;  // writes of one request are queued on their GPUs together
  bool stopped_ = false;
  bool clean_ = true;
  std::vector<std::shared_ptr<Poller>> gpu_pollers_;
  std::vector<std::shared_ptr<Poller>> cpu_pollers_;
  std::unique_ptr<exporter::Collector> collector_;  // set when the metrics group is enabled and it started
  std::optional<Error> collector_error_;
};

Daemon::Daemon(DaemonOptions options, const device::GpuSet* gpus, const device::CpuSet* cpus)
    : impl_(std::make_unique<Impl>(std::move(options), gpus, cpus)) {}
Daemon::~Daemon() = default;

http::HttpResponse Daemon::Handle(const http::HttpRequest& request) { return impl_->Handle(request); }
bool Daemon::StopDeviceThreads(std::chrono::milliseconds deadline) { return impl_->StopDeviceThreads(deadline); }
std::vector<std::uint64_t> Daemon::GpuPollCounts() const { return impl_->GpuPollCounts(); }
std::vector<std::uint64_t> Daemon::CpuPollCounts() const { return impl_->CpuPollCounts(); }

}  // namespace zeus::zeusd
