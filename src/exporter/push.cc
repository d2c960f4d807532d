// Copyright 2026 The Zeus C++ Authors.

#include "zeus/exporter/push.h"

#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "exporter/pusher.h"

namespace zeus::exporter {
namespace {

constexpr const char* kGpuEnergy = "energy_monitor_gpu_energy_joules";
constexpr const char* kCpuEnergy = "energy_monitor_cpu_energy_joules";
constexpr const char* kDramEnergy = "energy_monitor_dram_energy_joules";
// Counters: the names Zeus's Python client exposes them under (it appends _total).
constexpr const char* kGpuEnergyTotal = "energy_monitor_gpu_energy_joules_total";
constexpr const char* kCpuEnergyTotal = "energy_monitor_cpu_energy_joules_total";
constexpr const char* kDramEnergyTotal = "energy_monitor_dram_energy_joules_total";

Status CheckBuckets(const std::vector<double>& buckets, const char* what) {
  if (buckets.empty()) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("{} bucket range cannot be empty", what));
  }
  if (!std::is_sorted(buckets.begin(), buckets.end()) ||
      std::adjacent_find(buckets.begin(), buckets.end()) != buckets.end()) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("{} bucket range must be strictly increasing", what));
  }
  return OkStatus();
}

bool HasDram(const monitor::Measurement& m) {
  return std::any_of(m.cpus.begin(), m.cpus.end(), [](const auto& c) { return c.dram_energy_j.has_value(); });
}

// The per-window thread of the counter and the gauge: calls `tick` every
// `period` until stopped, then `last` once.
class PeriodicThread {
 public:
  PeriodicThread(std::chrono::nanoseconds period, std::function<void()> tick, std::function<void()> last)
      : thread_([this, period, tick = std::move(tick), last = std::move(last)] {
          std::unique_lock lock(mu_);
          while (!cv_.wait_for(lock, period, [&] { return stop_; })) {
            lock.unlock();
            tick();
            lock.lock();
          }
          lock.unlock();
          last();
        }) {}
  ~PeriodicThread() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace

// ---------------------------------------------------------------- EnergyHistogram

struct EnergyHistogram::Impl {
  monitor::Monitor* monitor = nullptr;
  EnergyBuckets buckets;
  std::shared_ptr<prometheus::Registry> registry;
  prometheus::Family<prometheus::Histogram>* gpu = nullptr;
  prometheus::Family<prometheus::Histogram>* cpu = nullptr;
  prometheus::Family<prometheus::Histogram>* dram = nullptr;  // created when first needed
  std::unique_ptr<Pusher> pusher;
  std::mutex mu;

  void Observe(prometheus::Family<prometheus::Histogram>& family, const std::vector<double>& bounds,
               const std::string& window, std::size_t index, double value, const char* what) {
    // The value and the device index stay out of the text: the same advice
    // for every epoch is one warning under a "show once" filter.
    if (value > bounds.back()) {
      pusher->Log(LogLevel::kWarning,
                  fmt::format("{} energy of window \"{}\" exceeds the largest bucket {:g} J; consider a larger "
                              "{} bucket range",
                              what, window, bounds.back(), what),
                  /*user_warning=*/true);
    } else if (value < bounds.front()) {
      pusher->Log(LogLevel::kWarning,
                  fmt::format("{} energy of window \"{}\" is below the smallest bucket {:g} J; consider a smaller "
                              "{} bucket range",
                              what, window, bounds.front(), what),
                  /*user_warning=*/true);
    }
    family.Add({{"window", window}, {"index", std::to_string(index)}}, bounds).Observe(value);
  }
};

EnergyHistogram::EnergyHistogram(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EnergyHistogram::~EnergyHistogram() = default;

Result<std::unique_ptr<EnergyHistogram>> EnergyHistogram::Create(monitor::Monitor& monitor, PushTarget target,
                                                                 EnergyBuckets buckets) {
  if (auto s = CheckBuckets(buckets.gpu, "GPU"); !s) return Fail(s.error());
  if (auto s = CheckBuckets(buckets.cpu, "CPU"); !s) return Fail(s.error());
  if (auto s = CheckBuckets(buckets.dram, "DRAM"); !s) return Fail(s.error());
  auto impl = std::make_unique<Impl>();
  impl->monitor = &monitor;
  impl->buckets = std::move(buckets);
  impl->registry = std::make_shared<prometheus::Registry>();
  impl->gpu = &prometheus::BuildHistogram().Name(kGpuEnergy).Help("Energy of a GPU per window, joules.")
                   .Register(*impl->registry);
  impl->cpu = &prometheus::BuildHistogram().Name(kCpuEnergy).Help("Energy of a CPU package per window, joules.")
                   .Register(*impl->registry);
  auto pusher = Pusher::Create(std::move(target), impl->registry);
  if (!pusher) return Fail(pusher.error());
  impl->pusher = std::move(*pusher);
  return std::unique_ptr<EnergyHistogram>(new EnergyHistogram(std::move(impl)));
}

Status EnergyHistogram::BeginWindow(std::string_view name) {
  return impl_->monitor->BeginWindow(fmt::format("__EnergyHistogram_{}", name));
}

Result<monitor::Measurement> EnergyHistogram::EndWindow(std::string_view name) {
  auto m = impl_->monitor->EndWindow(fmt::format("__EnergyHistogram_{}", name));
  if (!m) return m;
  const std::string window(name);
  {
    std::lock_guard lock(impl_->mu);
    for (const auto& g : m->gpus) {
      if (!g.error) impl_->Observe(*impl_->gpu, impl_->buckets.gpu, window, g.index, g.energy_j, "GPU");
    }
    if (HasDram(*m) && impl_->dram == nullptr) {
      impl_->dram = &prometheus::BuildHistogram().Name(kDramEnergy).Help("Energy of a DRAM domain per window, joules.")
                         .Register(*impl_->registry);
    }
    for (const auto& c : m->cpus) {
      if (c.error) continue;
      impl_->Observe(*impl_->cpu, impl_->buckets.cpu, window, c.index, c.package_energy_j, "CPU");
      if (c.dram_energy_j) impl_->Observe(*impl_->dram, impl_->buckets.dram, window, c.index, *c.dram_energy_j, "DRAM");
    }
  }
  impl_->pusher->Request(impl_->pusher->NewWindow(), window);
  m->name = window;
  return m;
}

std::uint64_t EnergyHistogram::pushes_attempted() const { return impl_->pusher->attempted(); }
std::uint64_t EnergyHistogram::pushes_failed() const { return impl_->pusher->failed(); }

// ---------------------------------------------------------------- EnergyCumulativeCounter

struct EnergyCumulativeCounter::Impl {
  monitor::Monitor* monitor = nullptr;
  std::chrono::nanoseconds period{0};
  std::shared_ptr<prometheus::Registry> registry;
  prometheus::Family<prometheus::Counter>* gpu = nullptr;
  prometheus::Family<prometheus::Counter>* cpu = nullptr;
  prometheus::Family<prometheus::Counter>* dram = nullptr;
  std::unique_ptr<Pusher> pusher;
  std::mutex mu;  // guards the families' creation and `windows`
  std::map<std::string, std::unique_ptr<PeriodicThread>, std::less<>> windows;

  static std::string MonitorName(std::string_view name) { return fmt::format("__EnergyCumulativeCounter_{}", name); }

  void Add(const std::string& window, std::uint64_t window_id, const Result<monitor::Measurement>& m) {
    if (!m) {
      pusher->Log(LogLevel::kWarning, fmt::format("window \"{}\": {}", window, m.error().message()));
      return;
    }
    {
      std::lock_guard lock(mu);
      for (const auto& g : m->gpus) {
        if (!g.error) gpu->Add({{"window", window}, {"index", std::to_string(g.index)}}).Increment(g.energy_j);
      }
      if (HasDram(*m) && dram == nullptr) {
        dram = &prometheus::BuildCounter().Name(kDramEnergyTotal).Help("Energy of a DRAM domain, joules.")
                    .Register(*registry);
      }
      for (const auto& c : m->cpus) {
        if (c.error) continue;
        const prometheus::Labels labels{{"window", window}, {"index", std::to_string(c.index)}};
        cpu->Add(labels).Increment(c.package_energy_j);
        if (c.dram_energy_j) dram->Add(labels).Increment(*c.dram_energy_j);
      }
    }
    pusher->Request(window_id, window);
  }
};

EnergyCumulativeCounter::EnergyCumulativeCounter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EnergyCumulativeCounter::~EnergyCumulativeCounter() {
  std::vector<std::string> open;
  {
    std::lock_guard lock(impl_->mu);
    for (const auto& [name, thread] : impl_->windows) open.push_back(name);
  }
  for (const auto& name : open) (void)EndWindow(name);
}

Result<std::unique_ptr<EnergyCumulativeCounter>> EnergyCumulativeCounter::Create(
    monitor::Monitor& monitor, std::chrono::nanoseconds update_period, PushTarget target) {
  if (update_period <= std::chrono::nanoseconds::zero()) {
    return Fail(ErrorCode::kInvalidArgument, "update_period must be positive");
  }
  auto impl = std::make_unique<Impl>();
  impl->monitor = &monitor;
  impl->period = update_period;
  impl->registry = std::make_shared<prometheus::Registry>();
  impl->gpu = &prometheus::BuildCounter().Name(kGpuEnergyTotal).Help("Energy of a GPU, joules.")
                   .Register(*impl->registry);
  impl->cpu =
      &prometheus::BuildCounter().Name(kCpuEnergyTotal).Help("Energy of a CPU package, joules.")
           .Register(*impl->registry);
  auto pusher = Pusher::Create(std::move(target), impl->registry);
  if (!pusher) return Fail(pusher.error());
  impl->pusher = std::move(*pusher);
  return std::unique_ptr<EnergyCumulativeCounter>(new EnergyCumulativeCounter(std::move(impl)));
}

Status EnergyCumulativeCounter::BeginWindow(std::string_view name) {
  std::lock_guard lock(impl_->mu);
  if (impl_->windows.contains(name)) {
    return Fail(ErrorCode::kAlreadyExists, fmt::format("window \"{}\" is already open; end it first", name));
  }
  const std::string monitor_name = Impl::MonitorName(name);
  if (auto s = impl_->monitor->BeginWindow(monitor_name); !s) return s;
  const std::string window(name);
  const std::uint64_t id = impl_->pusher->NewWindow();
  Impl* impl = impl_.get();
  impl_->windows.emplace(
      window, std::make_unique<PeriodicThread>(
                  impl_->period, [impl, window, monitor_name, id] {
                    impl->Add(window, id, impl->monitor->EndWindowAndRestart(monitor_name));
                  },
                  [impl, window, monitor_name, id] { impl->Add(window, id, impl->monitor->EndWindow(monitor_name)); }));
  return OkStatus();
}

Status EnergyCumulativeCounter::EndWindow(std::string_view name) {
  std::unique_ptr<PeriodicThread> thread;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->windows.find(name);
    if (it == impl_->windows.end()) {
      return Fail(ErrorCode::kNotFound, fmt::format("Measurement window '{}' does not exist", name));
    }
    thread = std::move(it->second);
    impl_->windows.erase(it);
  }
  thread.reset();  // the final update and push request happen here
  return OkStatus();
}

std::uint64_t EnergyCumulativeCounter::pushes_attempted() const { return impl_->pusher->attempted(); }
std::uint64_t EnergyCumulativeCounter::pushes_failed() const { return impl_->pusher->failed(); }

// ---------------------------------------------------------------- PowerGauge

struct PowerGauge::Impl {
  const device::GpuSet* gpus = nullptr;
  std::vector<std::size_t> gpu_indices;
  std::chrono::nanoseconds period{0};
  std::shared_ptr<prometheus::Registry> registry;
  prometheus::Family<prometheus::Gauge>* power = nullptr;
  std::unique_ptr<Pusher> pusher;
  std::mutex mu;  // guards `windows`
  struct Window {
    std::unique_ptr<monitor::PowerMonitor> monitor;
    std::unique_ptr<PeriodicThread> thread;  // after monitor: stopped first
  };
  std::map<std::string, Window, std::less<>> windows;

  void Update(const std::string& window, std::uint64_t id, const monitor::PowerMonitor& monitor) {
    for (std::size_t i : gpu_indices) {
      const auto timeline = monitor.Timeline(i);
      if (timeline.empty() || !timeline.back().instant_mw) continue;
      power->Add({{"window", window}, {"index", std::to_string(i)}}).Set(*timeline.back().instant_mw / 1000.0);
    }
    pusher->Request(id, window);
  }
};

PowerGauge::PowerGauge(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PowerGauge::~PowerGauge() {
  std::lock_guard lock(impl_->mu);
  impl_->windows.clear();
}

Result<std::unique_ptr<PowerGauge>> PowerGauge::Create(const device::GpuSet& gpus, std::vector<std::size_t> gpu_indices,
                                                       std::chrono::nanoseconds update_period, PushTarget target) {
  if (update_period <= std::chrono::nanoseconds::zero()) {
    return Fail(ErrorCode::kInvalidArgument, "update_period must be positive");
  }
  if (gpu_indices.empty()) {
    for (std::size_t i = 0; i < gpus.size(); ++i) gpu_indices.push_back(i);
  }
  for (std::size_t i : gpu_indices) {
    if (i >= gpus.size()) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("GPU index {} out of range (there are {})", i, gpus.size()));
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->gpus = &gpus;
  impl->gpu_indices = std::move(gpu_indices);
  impl->period = update_period;
  impl->registry = std::make_shared<prometheus::Registry>();
  impl->power = &prometheus::BuildGauge().Name("power_monitor_gpu_power_watts").Help("GPU power draw, watts.")
                     .Register(*impl->registry);
  auto pusher = Pusher::Create(std::move(target), impl->registry);
  if (!pusher) return Fail(pusher.error());
  impl->pusher = std::move(*pusher);
  return std::unique_ptr<PowerGauge>(new PowerGauge(std::move(impl)));
}

Status PowerGauge::BeginWindow(std::string_view name) {
  std::lock_guard lock(impl_->mu);
  if (impl_->windows.contains(name)) {
    return Fail(ErrorCode::kAlreadyExists, fmt::format("PowerGauge metric '{}' already exists", name));
  }
  monitor::PowerMonitorOptions options;
  options.interval = std::min<std::chrono::nanoseconds>(impl_->period, std::chrono::milliseconds(100));
  options.capacity = 4;
  options.sample_average_power = false;
  options.sample_memory_power = false;
  options.sample_temperature = false;
  options.clock = impl_->gpus->driver_clock();
  auto monitor = monitor::PowerMonitor::Create(*impl_->gpus, impl_->gpu_indices, options);
  if (!monitor) return Fail(monitor.error());
  Impl::Window w;
  w.monitor = std::move(*monitor);
  const std::string window(name);
  const std::uint64_t id = impl_->pusher->NewWindow();
  Impl* impl = impl_.get();
  const monitor::PowerMonitor* pm = w.monitor.get();
  w.thread = std::make_unique<PeriodicThread>(
      impl_->period, [impl, window, id, pm] { impl->Update(window, id, *pm); }, [] {});
  impl_->windows.emplace(window, std::move(w));
  return OkStatus();
}

Status PowerGauge::EndWindow(std::string_view name) {
  Impl::Window w;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->windows.find(name);
    if (it == impl_->windows.end()) {
      return Fail(ErrorCode::kNotFound, fmt::format("PowerGauge metric '{}' does not exist", name));
    }
    w = std::move(it->second);
    impl_->windows.erase(it);
  }
  w.thread.reset();
  return OkStatus();
}

std::uint64_t PowerGauge::pushes_attempted() const { return impl_->pusher->attempted(); }
std::uint64_t PowerGauge::pushes_failed() const { return impl_->pusher->failed(); }

}  // namespace zeus::exporter
