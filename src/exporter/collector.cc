// Copyright 2026 The Zeus C++ Authors.

#include <fmt/format.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <optional>

#include "exporter/collector_impl.h"
#include "http/http.h"
#include "exporter/process_metrics.h"
#include "zeus/base/log.h"
#include "zeus/monitor/counter_check.h"

namespace zeus::exporter {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

class CollectableAdapter : public prometheus::Collectable {
 public:
  explicit CollectableAdapter(const Collector::Impl* impl) : impl_(impl) {}
  std::vector<MetricFamily> Collect() const override { return impl_->Collect(); }

 private:
  const Collector::Impl* impl_;
};

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

ClientMetric Metric(std::vector<ClientMetric::Label> labels, double value, MetricType type) {
  ClientMetric m;
  m.label = std::move(labels);
  if (type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return m;
}

// What a scrape reads from one GPU on its reader thread.
struct GpuReads {
  Result<std::uint32_t> limit_mw = Fail(ErrorCode::kInternal, "not read");
  std::optional<Result<std::uint64_t>> energy_mj;  // with an energy counter
};

}  // namespace

Collector::Impl::~Impl() {
  for (auto& reader : gpu_readers) reader->StopWithin(device_timeout);
}

void Collector::Impl::ReportState(bool gpu, std::size_t index, bool up, const std::string& why) const {
  {
    std::lock_guard lock(state_mu);
    std::vector<bool>& states = gpu ? gpu_up : cpu_up;
    if (states[index] == up) return;
    states[index] = up;
  }
  const char* kind = gpu ? "GPU" : "CPU package";
  const std::string line = up ? fmt::format("{} {} is up again", kind, index)
                              : fmt::format("{} {} is down: {}", kind, index, why);
  if (log) {
    log(line);
  } else {
    zeus::Log({.level = up ? LogLevel::kInfo : LogLevel::kWarning, .component = "exporter", .message = line});
  }
}

void Collector::Impl::CollectCpus(MetricFamily& cpu_energy, MetricFamily& dram_energy, MetricFamily& up) const {
  const std::size_t cpu_count = cpus ? cpus->size() : 0;
  for (std::size_t k = 0; k < cpu_count; ++k) {
    std::vector<ClientMetric::Label> labels{{"hostname", hostname}, {"package", std::to_string(k)}};
    auto energy = cpus->cpu(k).TotalEnergy();
    if (energy) {
      cpu_energy.metric.push_back(Metric(labels, energy->package_mj / 1000.0, MetricType::Counter));
      if (energy->dram_mj) dram_energy.metric.push_back(Metric(labels, *energy->dram_mj / 1000.0, MetricType::Counter));
    }
    labels.insert(labels.begin(), {"device", "cpu"});
    up.metric.push_back(Metric(std::move(labels), energy ? 1 : 0, MetricType::Gauge));
    ReportState(false, k, energy.has_value(), energy ? "" : energy.error().message());
  }
}

std::vector<MetricFamily> Collector::Impl::Collect() const {
  const auto started = std::chrono::steady_clock::now();
  MetricFamily power{"zeus_gpu_power_watts", "GPU power draw, latest sample.", MetricType::Gauge, {}};
  MetricFamily limit{"zeus_gpu_power_limit_watts", "GPU power limit in force.", MetricType::Gauge, {}};
  MetricFamily temperature{"zeus_gpu_temperature_celsius", "GPU temperature, latest sample.", MetricType::Gauge, {}};
  MetricFamily gpu_energy{"zeus_gpu_energy_joules_total", "GPU energy since the driver loaded (energy counter) or "
                          "since the exporter started (integrated power).", MetricType::Counter, {}};
  MetricFamily cpu_energy{"zeus_cpu_energy_joules_total", "CPU package energy (RAPL) since the exporter started.",
                          MetricType::Counter, {}};
  MetricFamily dram_energy{"zeus_dram_energy_joules_total", "DRAM energy (RAPL) since the exporter started.",
                           MetricType::Counter, {}};
  MetricFamily emissions{"zeus_gpu_emissions_grams_total",
                         "GPU carbon emissions (gCO2eq): zeus_gpu_energy_joules_total at the zone's yearly average "
                         "carbon intensity (zeus exporter --carbon).",
                         MetricType::Counter, {}};
  auto add_emissions = [&](const std::vector<ClientMetric::Label>& labels, double energy_j) {
    if (!carbon_intensity_g_per_kwh) return;
    std::vector<ClientMetric::Label> with_zone = labels;
    with_zone.push_back({"zone", carbon_zone});
    emissions.metric.push_back(Metric(std::move(with_zone), energy_j / 3.6e6 * *carbon_intensity_g_per_kwh,
                                      MetricType::Counter));
  };
  MetricFamily up{"zeus_device_up", "1 when every read of the device succeeded at this scrape, else 0.",
                  MetricType::Gauge, {}};

  const std::size_t gpu_count = gpus ? gpus->size() : 0;
  // Every GPU's reads are started before any is awaited, each on its own
  // reader, so that a hung GPU costs a scrape at most device_timeout.
  std::vector<std::optional<std::future<GpuReads>>> reads(gpu_count);
  std::vector<std::string> problems(gpu_count);
  for (std::size_t i = 0; i < gpu_count; ++i) {
    if (const auto busy = gpu_readers[i]->busy_for(); busy > device_timeout) {
      problems[i] = fmt::format("it has not answered a driver call for {:.1f} s (a hung driver?)",
                                std::chrono::duration<double>(busy).count());
      continue;
    }
    auto promise = std::make_shared<std::promise<GpuReads>>();
    reads[i] = promise->get_future();
    gpu_readers[i]->Post([gpu = &gpus->gpu(i), counter = gpu_info[i].has_counter, promise] {
      GpuReads r;
      r.limit_mw = gpu->PowerLimitMw();
      if (counter) r.energy_mj = gpu->TotalEnergyMj();
      promise->set_value(std::move(r));
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + device_timeout;
  const auto stale_after = std::max<std::chrono::nanoseconds>(10 * sample_interval, std::chrono::seconds(5));
  for (std::size_t i = 0; i < gpu_count; ++i) {
    const GpuInfo& info = gpu_info[i];
    std::vector<ClientMetric::Label> labels{
        {"gpu", info.index}, {"hostname", hostname}, {"model", info.model}, {"uuid", info.uuid}};
    std::string problem = problems[i];
    // The newest sample: power and temperature (read on every tick here).
    std::vector<monitor::PowerSample> timeline = power_monitor->Timeline(i);
    const auto now = clock->Now();
    if (timeline.empty()) {
      if (problem.empty()) problem = "no power sample yet";
    } else if (const auto age = now - timeline.back().time; age > stale_after) {
      if (problem.empty()) {
        problem = fmt::format("no power sample for {:.1f} s (a hung driver?)", std::chrono::duration<double>(age).count());
      }
    } else if (timeline.back().instant_mw) {
      power.metric.push_back(Metric(labels, *timeline.back().instant_mw / 1000.0, MetricType::Gauge));
      if (timeline.back().temperature_c) {
        temperature.metric.push_back(Metric(labels, *timeline.back().temperature_c, MetricType::Gauge));
      }
    } else if (problem.empty()) {
      problem = "its latest power sample failed";
    }
    std::optional<GpuReads> got;
    if (reads[i] && reads[i]->wait_until(deadline) == std::future_status::ready) {
      got = reads[i]->get();
    } else if (reads[i]) {
      problem = fmt::format("it did not answer within {} ms (a hung driver?)", device_timeout.count());
    }
    if (got && got->limit_mw) {
      limit.metric.push_back(Metric(labels, *got->limit_mw / 1000.0, MetricType::Gauge));
    } else if (got) {
      problem = got->limit_mw.error().message();
    }
    if (info.has_counter) {
      if (got && got->energy_mj && *got->energy_mj) {
        gpu_energy.metric.push_back(
            Metric(labels, static_cast<double>(**got->energy_mj) / 1000.0, MetricType::Counter));
        add_emissions(labels, static_cast<double>(**got->energy_mj) / 1000.0);
      } else if (got && got->energy_mj) {
        problem = got->energy_mj->error().message();
      }
    } else if (auto energy_j = power_monitor->CumulativeEnergyJ(i, clock->Now())) {
      gpu_energy.metric.push_back(Metric(labels, *energy_j, MetricType::Counter));
      add_emissions(labels, *energy_j);
    } else {
      problem = energy_j.error().message();
    }
    labels.insert(labels.begin(), {"device", "gpu"});
    up.metric.push_back(Metric(std::move(labels), problem.empty() ? 1 : 0, MetricType::Gauge));
    ReportState(true, i, problem.empty(), problem);
  }

  CollectCpus(cpu_energy, dram_energy, up);

  std::vector<MetricFamily> families;
  for (MetricFamily* family : {&power, &limit, &temperature, &gpu_energy, &emissions, &cpu_energy, &dram_energy, &up}) {
    if (!family->metric.empty()) families.push_back(std::move(*family));
  }
  if (processes) processes->Append(families);
  AppendProcessMetrics(families);
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  MetricFamily duration{"zeus_exporter_scrape_duration_seconds", "Time this collection of device metrics took.",
                        MetricType::Gauge, {}};
  duration.metric.push_back(Metric({{"hostname", hostname}}, elapsed_s, MetricType::Gauge));
  families.push_back(std::move(duration));
  return families;
}

Collector::Collector(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Collector::~Collector() = default;

Result<std::unique_ptr<Collector>> Collector::Create(const device::GpuSet* gpus, const device::CpuSet* cpus,
                                                     CollectorOptions options) {
  if (options.sample_interval <= std::chrono::nanoseconds::zero()) {
    return Fail(ErrorCode::kInvalidArgument, "the exporter's sample interval must be positive");
  }
  auto impl = std::make_shared<Impl>();
  impl->gpus = gpus;
  impl->cpus = cpus;
  impl->hostname = options.hostname.empty() ? Hostname() : options.hostname;
  impl->log = std::move(options.log);
  impl->clock = gpus && gpus->driver_clock() ? gpus->driver_clock() : &SteadyClock();
  if (gpus && !gpus->empty()) {
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      impl->gpu_readers.push_back(std::make_unique<base::SerialWorker>(fmt::format("zeus-scrape{}", i)));
    }
    if (options.energy_counter_check_deadline.count() > 0) {
      const std::vector<monitor::EnergyCounterCheck> checks = monitor::CheckEnergyCountersOnGpuThreads(
          *gpus, [&impl](std::size_t i, std::function<void()> task) { impl->gpu_readers[i]->Post(std::move(task)); },
          options.energy_counter_check_deadline);
      for (std::size_t i = 0; i < checks.size(); ++i) {
        const std::optional<std::string> line = monitor::CounterCheckWarning(i, checks[i]);
        if (!line) continue;
        if (impl->log) {
          impl->log(*line);
        } else {
          zeus::Log({.level = LogLevel::kWarning, .component = "exporter", .message = *line});
        }
      }
    }
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      device::Gpu& gpu = gpus->gpu(i);
      Impl::GpuInfo info;
      info.index = std::to_string(i);
      info.uuid = gpu.Uuid().value_or("unknown");
      info.model = gpu.Name().value_or("unknown");
      info.has_counter = gpu.SupportsEnergyCounter();
      impl->gpu_info.push_back(std::move(info));
    }
    monitor::PowerMonitorOptions pm;
    pm.interval = options.sample_interval;
    pm.slow_interval = options.sample_interval;
    pm.capacity = 4;  // only the newest sample is exported; the integral does not need the timeline
    pm.sample_average_power = false;
    pm.sample_memory_power = false;
    pm.clock = impl->clock;
    auto monitor = monitor::PowerMonitor::Create(*gpus, {}, pm);
    if (!monitor) return Fail(monitor.error());
    impl->power_monitor = std::move(*monitor);
    if (options.per_process) {
      std::vector<std::string> index, uuid;
      for (const Impl::GpuInfo& info : impl->gpu_info) {
        index.push_back(info.index);
        uuid.push_back(info.uuid);
      }
      auto processes = ProcessCollector::Create(*gpus, std::move(index), std::move(uuid), impl->hostname,
                                                std::move(options.process_energy));
      if (!processes) return Fail(processes.error());
      impl->processes = std::move(*processes);
      impl->processes->StartSampling(options.sample_interval);
    }
  }
  impl->sample_interval = options.sample_interval;
  impl->device_timeout = options.device_timeout;
  impl->carbon_intensity_g_per_kwh = options.carbon_intensity_g_per_kwh;
  impl->carbon_zone = options.carbon_zone;
  impl->gpu_up.assign(gpus ? gpus->size() : 0, true);
  impl->cpu_up.assign(cpus ? cpus->size() : 0, true);
  impl->collectable = std::make_shared<CollectableAdapter>(impl.get());
  return std::unique_ptr<Collector>(new Collector(std::move(impl)));
}

std::string Collector::Scrape() const {
  prometheus::TextSerializer serializer;
  return serializer.Serialize(impl_->Collect());
}

struct MetricsServer::Impl {
  std::unique_ptr<http::HttpServer> server;
};

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MetricsServer::~MetricsServer() = default;

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const Collector& collector, const std::string& listen) {
  const auto colon = listen.rfind(':');
  std::uint16_t port = 0;
  const bool port_ok = colon != std::string::npos && colon + 1 < listen.size() && listen.size() - colon - 1 <= 5 &&
                       listen.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
                       std::stoul(listen.substr(colon + 1)) <= 65535;
  std::string host = port_ok ? listen.substr(0, colon) : "";
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (!port_ok || host.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("listen address \"{}\" is not ADDR:PORT (e.g. 0.0.0.0:9401, [::]:9401 or 127.0.0.1:0)",
                            listen));
  }
  port = static_cast<std::uint16_t>(std::stoul(listen.substr(colon + 1)));
  http::HttpServerOptions options;
  options.host = host;
  options.port = port;
  options.threads = 2;  // a scrape is a few device reads; idle connections hold no thread
  options.request_timeout = std::chrono::seconds(10);
  options.shutdown_grace = std::chrono::seconds(2);
  options.max_connections = 256;
  options.max_requests_in_flight = 64;
  options.max_body_bytes = 4096;
  const Collector* source = &collector;
  auto server = http::HttpServer::Start(options, [source](const http::HttpRequest& request) {
    http::HttpResponse response;
    const std::string_view path = std::string_view(request.target).substr(0, request.target.find('?'));
    if (path != "/metrics") {
      response.status = 404;
      response.content_type = "text/plain; charset=utf-8";
      response.body = "Not found: the metrics are at /metrics\n";
    } else if (request.method != "GET" && request.method != "HEAD") {
      response.status = 405;
      response.content_type = "text/plain; charset=utf-8";
      response.headers.emplace_back("Allow", "GET, HEAD");
      response.body = "/metrics takes GET\n";
    } else {
      response.status = 200;
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      response.body = source->Scrape();
    }
    return response;
  });
  if (!server) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("cannot listen on {}: {} (is the port in use? choose another with --listen)", listen,
                            server.error().message()));
  }
  auto impl = std::make_unique<Impl>();
  impl->server = std::move(*server);
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

int MetricsServer::port() const { return impl_->server->port(); }

}  // namespace zeus::exporter
