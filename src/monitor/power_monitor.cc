// Copyright 2026 The Zeus C++ Authors.

#include "zeus/monitor/power_monitor.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <stop_token>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "monitor/ring_buffer.h"
#include "zeus/monitor/power_integral.h"

namespace zeus::monitor {
namespace {

using std::chrono::nanoseconds;

// A retained sample plus the running integral at its time.
struct Stored {
  PowerSample sample;
  double power_w = 0.0;  // the power held from this sample on
  double cumulative_j = 0.0;
};

constexpr std::size_t kPeriodHistory = 32;
// Sampling periods up to this use plain sleeps (see Loop).
constexpr std::chrono::milliseconds kShortPeriod{20};

struct Device {
  Device(device::Gpu* g, std::size_t i, std::size_t capacity) : gpu(g), index(i), samples(capacity) {}
  device::Gpu* gpu;
  std::size_t index;
  // Held while this GPU is being read: by its sampling thread, or by a
  // SampleOnce caller that found it free.
  std::mutex sample_mu;
  bool use_instant_field = true;               // guarded by sample_mu
  std::optional<nanoseconds> last_slow;        // guarded by sample_mu
  RingBuffer<Stored> samples;
  // Running integral (independent of the buffer), in mJ; the power held is
  // the last good instant reading.
  PowerIntegral integral;
  std::optional<Error> last_error;
  std::uint64_t failures = 0;
  // When the read in progress began (none between reads), and how many
  // reads took longer than late_read_after.
  std::optional<nanoseconds> reading_since;
  std::uint64_t late_reads = 0;
  // Update-period inference.
  std::optional<std::uint32_t> last_value_mw;
  std::optional<nanoseconds> last_change;
  std::vector<nanoseconds> change_intervals;  // ring of kPeriodHistory
  std::size_t change_next = 0;
};

}  // namespace

struct PowerMonitor::Impl {
  PowerMonitorOptions options;
  const Clock* clock = nullptr;
  std::vector<std::size_t> indices;
  nanoseconds start{0};
  mutable std::mutex mu;  // guards devices' data (not sample_mu's fields)
  // A deque: Device holds a mutex and must not move.
  std::deque<Device> devices;
  std::mutex wake_mu;
  std::condition_variable_any wake;
  // One sampling thread per GPU, so that a slow or hung driver call on one
  // GPU does not stop the others' timelines.
  std::vector<std::jthread> threads;

  const Device* Find(std::size_t gpu) const {
    for (const Device& d : devices) {
      if (d.index == gpu) return &d;
    }
    return nullptr;
  }

  // The integral up to `t` from the retained timeline (hold-last-value; held
  // backwards before the first sample).
  static double CumulativeAt(const RingBuffer<Stored>& buf, nanoseconds t, bool* extrapolated) {
    // Last sample with time <= t.
    std::size_t lo = 0;
    std::size_t hi = buf.size();
    while (lo < hi) {
      std::size_t mid = (lo + hi) / 2;
      if (buf[mid].sample.time <= t) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == 0) {
      *extrapolated = true;
      const Stored& first = buf[0];
      return first.cumulative_j - first.power_w * ToSeconds(first.sample.time - t);
    }
    const Stored& s = buf[lo - 1];
    return s.cumulative_j + s.power_w * ToSeconds(t - s.sample.time);
  }

  // Reads `d` once and stores the sample. If another thread is reading `d`
  // now, waits for it when `wait`, else returns without sampling.
  void SampleDevice(Device& d, bool wait);

  void Loop(Device& d, std::stop_token stop) {
    const nanoseconds period = options.interval;
    nanoseconds next = clock->Now() + period;
    if (period <= kShortPeriod) {
      // Fast rates: a plain sleep per tick is far cheaper than a condition
      // wait with a stop callback; stopping waits at most one period.
      while (!stop.stop_requested()) {
        const nanoseconds now = clock->Now();
        if (now < next) {
          std::this_thread::sleep_for(next - now);
          continue;
        }
        SampleDevice(d, /*wait=*/true);
        next += period;
        if (const nanoseconds after = clock->Now(); after > next + period) next = after + period;
      }
      return;
    }
    std::unique_lock lock(wake_mu);
    while (!stop.stop_requested()) {
      const nanoseconds now = clock->Now();
      if (now < next) {
        wake.wait_for(lock, stop, next - now, [] { return false; });
        continue;
      }
      lock.unlock();
      SampleDevice(d, /*wait=*/true);
      lock.lock();
      next += period;
      // After a stall, skip the missed ticks rather than bursting.
      if (const nanoseconds after = clock->Now(); after > next + period) next = after + period;
    }
  }
};

PowerMonitor::PowerMonitor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<PowerMonitor>> PowerMonitor::Create(const device::GpuSet& gpus,
                                                           std::vector<std::size_t> gpu_indices,
                                                           PowerMonitorOptions options) {
  if (options.interval <= nanoseconds(0)) {
    return Fail(ErrorCode::kInvalidArgument, "the sampling interval must be positive");
  }
  if (options.capacity == 0) return Fail(ErrorCode::kInvalidArgument, "the sample buffer capacity must be positive");
  if (options.late_read_after < nanoseconds(0)) {
    return Fail(ErrorCode::kInvalidArgument, "the late-read threshold must not be negative (0 chooses the default)");
  }
  if (options.late_read_after == nanoseconds(0)) {
    options.late_read_after = std::max<nanoseconds>(4 * options.interval, std::chrono::milliseconds(100));
  }
  if (gpu_indices.empty()) {
    for (std::size_t i = 0; i < gpus.size(); ++i) gpu_indices.push_back(i);
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->clock = options.clock != nullptr ? options.clock : &SteadyClock();
  for (std::size_t i : gpu_indices) {
    if (i >= gpus.size()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("GPU {} does not exist: {} GPU{} visible", i, gpus.size(), gpus.size() == 1 ? "" : "s"));
    }
    if (std::count(gpu_indices.begin(), gpu_indices.end(), i) > 1) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("GPU {} is listed twice", i));
    }
    impl->devices.emplace_back(&gpus.gpu(i), i, options.capacity);
  }
  impl->indices = std::move(gpu_indices);
  impl->start = impl->clock->Now();
  std::unique_ptr<PowerMonitor> monitor(new PowerMonitor(std::move(impl)));
  monitor->SampleOnce();
  if (options.start_thread) {
    Impl* raw = monitor->impl_.get();
    for (Device& d : raw->devices) {
      raw->threads.emplace_back([raw, &d](std::stop_token stop) { raw->Loop(d, stop); });
    }
  }
  return monitor;
}

PowerMonitor::~PowerMonitor() {
  for (std::jthread& thread : impl_->threads) thread.request_stop();
  impl_->wake.notify_all();
  for (std::jthread& thread : impl_->threads) thread.join();
}

void PowerMonitor::SampleOnce() {
  for (Device& d : impl_->devices) impl_->SampleDevice(d, /*wait=*/false);
}

void PowerMonitor::Impl::SampleDevice(Device& d, bool wait) {
  std::unique_lock sample_lock(d.sample_mu, std::defer_lock);
  if (wait) {
    sample_lock.lock();
  } else if (!sample_lock.try_lock()) {
    return;  // being read by another thread, perhaps in a slow call: do not wait for it
  }
  const nanoseconds now = clock->Now();
  const bool slow = !d.last_slow || now - *d.last_slow >= options.slow_interval;
  if (slow) d.last_slow = now;
  {
    std::lock_guard lock(mu);
    d.reading_since = now;
  }
  {
    // Device reads happen outside the data lock.
    PowerSample sample;
    sample.time = now;
    std::optional<Error> error;
    Result<std::uint32_t> instant = d.use_instant_field ? d.gpu->InstantPowerMw() : d.gpu->PowerUsageMw();
    if (!instant && d.use_instant_field && instant.error().code() == ErrorCode::kNotSupported) {
      d.use_instant_field = false;
      instant = d.gpu->PowerUsageMw();
    }
    if (instant) {
      sample.instant_mw = *instant;
    } else {
      error = instant.error();
    }
    if (slow) {
      if (options.sample_average_power) {
        if (auto avg = d.gpu->AveragePowerMw()) sample.average_mw = *avg;
      }
      if (options.sample_memory_power) {
        if (auto mem = d.gpu->MemoryPowerMw()) sample.memory_mw = *mem;
      }
      if (options.sample_temperature) {
        if (auto temp = d.gpu->TemperatureC()) sample.temperature_c = *temp;
      }
    }

    const nanoseconds read_end = clock->Now();
    std::lock_guard lock(mu);
    d.reading_since.reset();
    if (read_end - now > options.late_read_after) ++d.late_reads;
    d.integral.AdvanceTo(now);
    if (sample.instant_mw) {
      d.integral.Hold(*sample.instant_mw);
      d.last_error.reset();
      if (d.last_value_mw && *d.last_value_mw != *sample.instant_mw) {
        if (d.last_change) {
          const nanoseconds gap = now - *d.last_change;
          if (d.change_intervals.size() < kPeriodHistory) {
            d.change_intervals.push_back(gap);
          } else {
            d.change_intervals[d.change_next] = gap;
          }
          d.change_next = (d.change_next + 1) % kPeriodHistory;
        }
        d.last_change = now;
      }
      d.last_value_mw = *sample.instant_mw;
    } else {
      // Keep holding the last good value, but remember the failure.
      d.last_error = error;
      ++d.failures;
    }
    d.samples.Push(Stored{sample, d.integral.power_mw().value_or(0.0) / 1000.0, d.integral.energy_mj() / 1000.0});
  }
}

const std::vector<std::size_t>& PowerMonitor::gpu_indices() const { return impl_->indices; }
nanoseconds PowerMonitor::interval() const { return impl_->options.interval; }
std::size_t PowerMonitor::capacity() const { return impl_->options.capacity; }
nanoseconds PowerMonitor::start_time() const { return impl_->start; }

std::size_t PowerMonitor::buffer_bytes() const {
  std::lock_guard lock(impl_->mu);
  std::size_t bytes = 0;
  for (const Device& d : impl_->devices) bytes += d.samples.bytes();
  return bytes;
}

Result<double> PowerMonitor::CumulativeEnergyJ(std::size_t gpu, nanoseconds at) const {
  std::lock_guard lock(impl_->mu);
  const Device* d = impl_->Find(gpu);
  if (d == nullptr) return Fail(ErrorCode::kNotFound, fmt::format("GPU {} is not monitored", gpu));
  if (d->last_error) return Fail(*d->last_error);
  return d->integral.EnergyAtMj(at) / 1000.0;
}

std::uint64_t PowerMonitor::ReadFailures(std::size_t gpu) const {
  std::lock_guard lock(impl_->mu);
  const Device* d = impl_->Find(gpu);
  return d == nullptr ? 0 : d->failures;
}

std::uint64_t PowerMonitor::LateReads(std::size_t gpu) const {
  std::lock_guard lock(impl_->mu);
  const Device* d = impl_->Find(gpu);
  return d == nullptr ? 0 : d->late_reads;
}

bool PowerMonitor::ReadLateAt(std::size_t gpu, nanoseconds at) const {
  std::lock_guard lock(impl_->mu);
  const Device* d = impl_->Find(gpu);
  return d != nullptr && d->reading_since && at - *d->reading_since > impl_->options.late_read_after;
}

nanoseconds PowerMonitor::late_read_after() const { return impl_->options.late_read_after; }

Result<EnergyEstimate> PowerMonitor::Energy(std::size_t gpu, nanoseconds start, nanoseconds end) const {
  if (end < start) return Fail(ErrorCode::kInvalidArgument, "the interval ends before it starts");
  std::lock_guard lock(impl_->mu);
  const Device* d = impl_->Find(gpu);
  if (d == nullptr) return Fail(ErrorCode::kNotFound, fmt::format("GPU {} is not monitored", gpu));
  EnergyEstimate estimate;
  if (d->samples.empty()) {
    estimate.extrapolated = true;
    return estimate;
  }
  const double a = Impl::CumulativeAt(d->samples, start, &estimate.extrapolated);
  const double b = Impl::CumulativeAt(d->samples, end, &estimate.extrapolated);
  estimate.energy_j = b - a;
  return estimate;
}

namespace {

std::optional<std::uint32_t> DomainMw(const PowerSample& s, PowerDomain domain) {
  switch (domain) {
    case PowerDomain::kInstant: return s.instant_mw;
    case PowerDomain::kAverage: return s.average_mw;
    case PowerDomain::kMemory: return s.memory_mw;
  }
  return std::nullopt;
}

// The power `watts` held over [from, to] clipped to [start, end], in J.
double HeldEnergyJ(double watts, nanoseconds from, nanoseconds to, nanoseconds start, nanoseconds end) {
  const nanoseconds a = std::max(from, start);
  const nanoseconds b = std::min(to, end);
  return b > a ? watts * ToSeconds(b - a) : 0.0;
}

}  // namespace

Result<EnergyEstimate> PowerMonitor::Energy(std::size_t gpu, nanoseconds start, nanoseconds end,
                                            PowerDomain domain) const {
  if (domain == PowerDomain::kInstant) return Energy(gpu, start, end);
  if (end < start) return Fail(ErrorCode::kInvalidArgument, "the interval ends before it starts");
  std::lock_guard lock(impl_->mu);
  const Device* d = impl_->Find(gpu);
  if (d == nullptr) return Fail(ErrorCode::kNotFound, fmt::format("GPU {} is not monitored", gpu));
  EnergyEstimate estimate;
  std::optional<nanoseconds> held_since;  // the previous reading of the domain
  double held_w = 0.0;
  for (std::size_t i = 0; i < d->samples.size(); ++i) {
    const PowerSample& s = d->samples[i].sample;
    const std::optional<std::uint32_t> mw = DomainMw(s, domain);
    if (!mw) continue;
    if (held_since) {
      estimate.energy_j += HeldEnergyJ(held_w, *held_since, s.time, start, end);
    } else {
      // The first reading is held backwards.
      estimate.extrapolated = start < s.time;
      estimate.energy_j += HeldEnergyJ(*mw / 1000.0, start, s.time, start, end);
    }
    held_since = s.time;
    held_w = *mw / 1000.0;
  }
  if (!held_since) {
    estimate.extrapolated = true;
    return estimate;
  }
  estimate.energy_j += HeldEnergyJ(held_w, *held_since, end, start, end);
  return estimate;
}

Result<PowerStats> PowerMonitor::Stats(std::size_t gpu, nanoseconds start, nanoseconds end) const {
  auto energy = Energy(gpu, start, end);
  if (!energy) return Fail(energy.error());
  PowerStats stats;
  const double seconds = ToSeconds(end - start);
  stats.average_power_w = seconds > 0 ? energy->energy_j / seconds : 0.0;
  std::lock_guard lock(impl_->mu);
  const Device* d = impl_->Find(gpu);
  if (d == nullptr) return Fail(ErrorCode::kNotFound, fmt::format("GPU {} is not monitored", gpu));
  for (std::size_t i = 0; i < d->samples.size(); ++i) {
    const Stored& s = d->samples[i];
    // The sample in force at `start` counts too.
    const bool in_force_at_start = s.sample.time <= start && (i + 1 == d->samples.size() ||
                                                              d->samples[i + 1].sample.time > start);
    if ((s.sample.time >= start && s.sample.time <= end) || in_force_at_start) {
      if (s.sample.instant_mw) {
        stats.peak_power_w = std::max(stats.peak_power_w, *s.sample.instant_mw / 1000.0);
        ++stats.samples;
      }
    }
  }
  return stats;
}

std::vector<PowerSample> PowerMonitor::Timeline(std::size_t gpu) const {
  std::lock_guard lock(impl_->mu);
  std::vector<PowerSample> out;
  const Device* d = impl_->Find(gpu);
  if (d == nullptr) return out;
  out.reserve(d->samples.size());
  for (std::size_t i = 0; i < d->samples.size(); ++i) out.push_back(d->samples[i].sample);
  return out;
}

std::optional<nanoseconds> PowerMonitor::UpdatePeriod(std::size_t gpu) const {
  std::lock_guard lock(impl_->mu);
  const Device* d = impl_->Find(gpu);
  if (d == nullptr || d->change_intervals.size() < 3) return std::nullopt;
  std::vector<nanoseconds> sorted = d->change_intervals;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  return sorted[sorted.size() / 2];
}

namespace {
std::string Cell(const std::optional<std::uint32_t>& mw) {
  return mw ? fmt::format("{:.3f}", *mw / 1000.0) : std::string();
}
}  // namespace

Status PowerMonitor::WriteTimelineCsv(const std::string& path) const {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Fail(ErrorFromErrno(errno, path));
  out << "gpu,time_s,instant_power_w,average_power_w,memory_power_w,temperature_c\n";
  for (std::size_t gpu : impl_->indices) {
    for (const PowerSample& s : Timeline(gpu)) {
      out << fmt::format("{},{:.6f},{},{},{},{}\n", gpu, ToSeconds(s.time - impl_->start), Cell(s.instant_mw),
                         Cell(s.average_mw), Cell(s.memory_mw),
                         s.temperature_c ? std::to_string(*s.temperature_c) : std::string());
    }
  }
  out.flush();
  if (!out) return Fail(ErrorCode::kIoError, fmt::format("{}: write failed", path));
  return OkStatus();
}

Status PowerMonitor::WriteTimelineJson(const std::string& path) const {
  using nlohmann::json;
  json doc;
  doc["gpus"] = json::array();
  for (std::size_t gpu : impl_->indices) {
    json g;
    g["index"] = gpu;
    auto period = UpdatePeriod(gpu);
    g["update_period_s"] = period ? json(ToSeconds(*period)) : json(nullptr);
    g["samples"] = json::array();
    for (const PowerSample& s : Timeline(gpu)) {
      auto w = [](const std::optional<std::uint32_t>& mw) { return mw ? json(*mw / 1000.0) : json(nullptr); };
      g["samples"].push_back({{"time_s", ToSeconds(s.time - impl_->start)},
                              {"instant_power_w", w(s.instant_mw)},
                              {"average_power_w", w(s.average_mw)},
                              {"memory_power_w", w(s.memory_mw)},
                              {"temperature_c", s.temperature_c ? json(*s.temperature_c) : json(nullptr)}});
    }
    doc["gpus"].push_back(g);
  }
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Fail(ErrorFromErrno(errno, path));
  out << doc.dump(1) << "\n";
  out.flush();
  if (!out) return Fail(ErrorCode::kIoError, fmt::format("{}: write failed", path));
  return OkStatus();
}

}  // namespace zeus::monitor
