// Copyright 2026 The Zeus C++ Authors.
//
// The daemon: its parts (middleware.h, gpu_routes.h, cpu_routes.h,
// power_pollers.h) put together, the route table, the routes of no device
// (/discover, /time, /auth/whoami, /metrics), and shutdown.

#include "zeusd/daemon.h"

#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/serial_worker.h"
#include "zeusd/answers.h"
#include "zeusd/cpu_routes.h"
#include "zeusd/gpu_calls.h"
#include "zeusd/gpu_routes.h"
#include "zeusd/middleware.h"
#include "zeusd/power_pollers.h"
#include "zeusd/query.h"

namespace zeus::zeusd {
namespace {

using http::HttpRequest;
using http::HttpResponse;
using json = nlohmann::json;

json ScopesJson(const std::vector<ApiGroup>& scopes) {
  json out = json::array();
  for (ApiGroup group : scopes) out.push_back(std::string(ApiGroupName(group)));
  return out;
}

// Each GPU's name, PCI address, counter and power-limit range, read once.
std::vector<GpuInfo> ReadGpuInfo(const device::GpuSet* gpus) {
  std::vector<GpuInfo> infos;
  for (std::size_t i = 0; gpus != nullptr && i < gpus->size(); ++i) {
    device::Gpu& gpu = gpus->gpu(i);
    GpuInfo info;
    auto name = gpu.Name();
    info.name = name ? *name : "unknown";
    auto pci = gpu.PciBusId();
    info.pci_address = pci ? ZeusdPciAddress(*pci) : "unknown";
    info.cumulative_energy_available = gpu.SupportsEnergyCounter();
    if (auto constraints = gpu.PowerLimitConstraintsMw()) info.constraints = *constraints;
    infos.push_back(std::move(info));
  }
  return infos;
}

GpuOpRunner DriverRunner() {
  return [](device::Gpu& gpu, std::size_t, GpuOp op, const GpuOpArgs& args) { return ApplyGpuOp(gpu, op, args); };
}

GpuRouteOptions GpuRouteOptionsOf(const DaemonOptions& options) {
  GpuRouteOptions out;
  out.runner = options.gpu_op_runner ? options.gpu_op_runner : DriverRunner();
  out.call_timeout = options.gpu_call_timeout;
  out.write_timeout = options.gpu_write_timeout.count() > 0 ? options.gpu_write_timeout : options.gpu_call_timeout;
  out.unix_time_ms = options.unix_time_ms;
  return out;
}

bool IsGpuRead(std::string_view path) {
  return path == "/gpu/get_power_limit" || path == "/gpu/get_power_limit_constraints" ||
         path == "/gpu/get_persistence_mode" || path == "/gpu/get_cumulative_energy" || path == "/gpu/get_power";
}

}  // namespace

std::string ZeusdPciAddress(std::string_view nvml_bus_id) {
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned device = 0;
  unsigned function = 0;
  const std::string text(nvml_bus_id);
  int consumed = 0;
  // The function is one hex digit and nothing may follow it (a bare %x would
  // also take "0x" as a prefix).
  if (std::sscanf(text.c_str(), "%x:%x:%x.%1x%n", &domain, &bus, &device, &function, &consumed) != 4 ||
      static_cast<std::size_t>(consumed) != text.size()) {
    return text;
  }
  // Linux names a domain with at least four hex digits and keeps wider ones
  // (Intel VMD domains such as 10000), so a wide domain is not cut to 16 bits.
  return fmt::format("{:04x}:{:02x}:{:02x}.0", domain, bus, device);
}

class Daemon::Impl {
 public:
  Impl(DaemonOptions options, const device::GpuSet* gpus, const device::CpuSet* cpus)
      : options_(std::move(options)),
        gpus_(gpus),
        cpus_(cpus),
        enabled_(options_.enabled_groups),
        gpu_routes_(gpus, ReadGpuInfo(gpus), GpuRouteOptionsOf(options_)),
        cpu_routes_(cpus, PeriodOf(options_.cpu_power_poll_hz), options_.unix_time_ms),
        pollers_(gpus, cpus, options_.gpu_power_poll_hz, options_.cpu_power_poll_hz, options_.unix_time_ms) {
    if (options_.energy_counter_check_deadline.count() > 0 && gpus != nullptr) CheckEnergyCounters();
    if (enabled_.Has(ApiGroup::kMetrics)) StartCollector();
  }

  ~Impl() {
    if (!stopped_) StopDeviceThreads(options_.gpu_call_timeout);
  }

  bool StopDeviceThreads(std::chrono::milliseconds deadline) {
    if (stopped_) return clean_;
    stopped_ = true;
    ShutdownDeadline shutdown(deadline);
    if (collector_) {  // its sampling threads may be inside a hung call too
      base::SerialWorker closer("zeusd-close");
      closer.Post([owned = std::shared_ptr<exporter::Collector>(std::move(collector_))]() mutable { owned.reset(); });
      shutdown.Note(closer.StopWithin(shutdown.left()), "the metrics collector's sampler of GPUs", 0);
    }
    pollers_.StopWithin(shutdown);
    gpu_routes_.StopWithin(shutdown);
    clean_ = shutdown.clean();
    return clean_;
  }

  HttpResponse Handle(const HttpRequest& request) {
    auto target = ParseTarget(request.target);
    if (!target) return ErrorAnswer(400, target.error().message());
    Admission admission = Admit(request, target->path, enabled_, options_.signing_key, NowMs() / 1000);
    if (admission.refusal) return std::move(*admission.refusal);
    return Route(request, *target, admission.claims);
  }

  const PowerPollers& pollers() const { return pollers_; }

 private:
  std::int64_t NowMs() const { return UnixNowMs(options_.unix_time_ms); }

  // The route table. Each route takes one method (GET also answers HEAD);
  // another is 405 with an Allow header.
  HttpResponse Route(const HttpRequest& request, const Target& target, const std::optional<TokenClaims>& claims) {
    const std::string& path = target.path;
    const auto with = [&](std::string_view method, const auto& handler) -> HttpResponse {
      if (request.method == method || (method == "GET" && request.method == "HEAD")) return handler();
      HttpResponse response = ErrorAnswer(405, fmt::format("{} needs {} (got {})", path, method, request.method));
      response.headers.emplace_back("Allow", std::string(method));
      return response;
    };
    if (path == "/discover") return with("GET", [&] { return Discover(target); });
    if (path == "/time") return with("GET", [&] { return Time(target); });
    if (path == "/auth/whoami") return with("GET", [&] { return Whoami(*claims); });
    if (path.starts_with("/gpu/set_") || path.starts_with("/gpu/reset_")) {
      if (auto op = GpuOpFromName(std::string_view(path).substr(5))) {
        return with("POST", [&] { return gpu_routes_.Write(target, *op); });
      }
    }
    if (IsGpuRead(path)) return with("GET", [&] { return gpu_routes_.Read(target); });
    if (path == "/metrics") return with("GET", [&] { return Metrics(target); });
    if (path == "/gpu/stream_power" || path == "/cpu/stream_power") {
      return with("GET", [&] { return pollers_.Stream(target, path == "/gpu/stream_power"); });
    }
    if (path == "/cpu/get_cumulative_energy") return with("GET", [&] { return cpu_routes_.Energy(target); });
    if (path == "/cpu/get_power") return with("GET", [&] { return cpu_routes_.Power(target); });
    return ErrorAnswer(404, fmt::format("No route for {}", path));
  }

  HttpResponse Discover(const Target& target) const {
    QueryFields fields(target, {});
    if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
    json gpus = json::array();
    const std::vector<GpuInfo>& info = gpu_routes_.info();
    for (std::size_t i = 0; i < info.size(); ++i) {
      gpus.push_back({{"id", i},
                      {"name", info[i].name},
                      {"pci_address", info[i].pci_address},
                      {"cumulative_energy_available", info[i].cumulative_energy_available}});
    }
    json cpus = json::array();
    for (std::size_t i = 0; i < cpu_routes_.count(); ++i) {
      cpus.push_back({{"id", i}, {"dram_available", cpus_->cpu(i).has_dram()}});
    }
    json groups = json::array();
    for (ApiGroup group : kAllApiGroups) {
      if (enabled_.Has(group)) groups.push_back(std::string(ApiGroupName(group)));
    }
    return JsonAnswer(200, json{{"gpus", gpus},
                                {"cpus", cpus},
                                {"enabled_api_groups", groups},
                                {"auth_required", options_.signing_key.has_value()}});
  }

  HttpResponse Time(const Target& target) const {
    QueryFields fields(target, {});
    if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
    return JsonAnswer(200, json{{"timestamp_ms", NowMs()}});
  }

  // Reached only with a verified token: without a signing key /auth/* is 404.
  static HttpResponse Whoami(const TokenClaims& claims) {
    json body = {{"sub", claims.sub}, {"scopes", ScopesJson(claims.scopes)}};
    if (claims.exp) body["exp"] = *claims.exp;
    return JsonAnswer(200, body);
  }

  void CheckEnergyCounters() {
    const std::vector<monitor::EnergyCounterCheck> checks =
        gpu_routes_.CheckEnergyCounters(options_.energy_counter_check_deadline);
    for (std::size_t id = 0; id < checks.size(); ++id) {
      // A distrusted GPU's cumulative energy answers 400, as Zeus's daemon does.
      if (auto line = monitor::CounterCheckWarning(id, checks[id])) std::fprintf(stderr, "zeusd: %s\n", line->c_str());
    }
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

  HttpResponse Metrics(const Target& target) const {
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

  DaemonOptions options_;
  const device::GpuSet* gpus_;
  const device::CpuSet* cpus_;
  EnabledGroups enabled_;
  GpuRoutes gpu_routes_;
  CpuRoutes cpu_routes_;
  PowerPollers pollers_;
  bool stopped_ = false;
  bool clean_ = true;
  std::unique_ptr<exporter::Collector> collector_;  // set when the metrics group is enabled and it started
  std::optional<Error> collector_error_;
};

Daemon::Daemon(DaemonOptions options, const device::GpuSet* gpus, const device::CpuSet* cpus)
    : impl_(std::make_unique<Impl>(std::move(options), gpus, cpus)) {}
Daemon::~Daemon() = default;

http::HttpResponse Daemon::Handle(const http::HttpRequest& request) { return impl_->Handle(request); }
bool Daemon::StopDeviceThreads(std::chrono::milliseconds deadline) { return impl_->StopDeviceThreads(deadline); }
std::vector<std::uint64_t> Daemon::GpuPollCounts() const { return impl_->pollers().PollCounts(/*gpu=*/true); }
std::vector<std::uint64_t> Daemon::CpuPollCounts() const { return impl_->pollers().PollCounts(/*gpu=*/false); }
std::vector<std::uint64_t> Daemon::GpuPollerIdles() const { return impl_->pollers().IdleCounts(/*gpu=*/true); }
std::vector<std::uint64_t> Daemon::CpuPollerIdles() const { return impl_->pollers().IdleCounts(/*gpu=*/false); }

}  // namespace zeus::zeusd
