// Copyright 2026 The Zeus C++ Authors.

#include "zeus/monitor/process_energy.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "zeus/base/log.h"
#include "zeus/monitor/power_integral.h"

namespace zeus::monitor {
namespace {

constexpr std::string_view kComponent = "process-energy";

// What the tracker knows of one PID now.
struct PidEntry {
  ProcessKey key;
  std::chrono::nanoseconds checked{0};    // when its start time was last read
  std::chrono::nanoseconds last_seen{0};  // when a GPU last reported it
};

struct GpuState {
  std::string model;
  bool has_counter = false;
  std::optional<IdlePowerEstimator> idle;
  // Baselines of the energy reading.
  std::optional<std::chrono::nanoseconds> last_time;
  std::optional<std::uint64_t> last_counter_mj;
  PowerIntegral power_integral;           // GPUs without a counter
  double integrated_remainder_mj = 0.0;  // the fraction below 1 mJ carried to the next interval
  std::int64_t idle_carry_mj = 0;        // idle energy owed by the last interval (attribution.h)
  // Per-process utilization.
  std::uint64_t last_sample_timestamp_us = 0;
  std::vector<ProcessUtilizationSample> carried;  // the newest interval's samples
  std::chrono::nanoseconds carried_at{0};         // when they came
  std::string per_process_error_text;             // the last logged one: log a change once
};

}  // namespace

ProcessLabels LabelsOf(const device::ProcessIdentity& identity) {
  ProcessLabels labels;
  labels.comm = identity.comm.value_or("");
  labels.user = identity.user.value_or("");
  labels.parent_pid = identity.parent_pid;
  if (identity.cgroup) {
    const device::CgroupIdentity& cgroup = *identity.cgroup;
    labels.slurm_job_id = cgroup.slurm_job_id.value_or(cgroup.slurm_job_sluid.value_or(""));
    labels.slurm_step = cgroup.slurm_step.value_or("");
    labels.pod = cgroup.k8s_pod_uid.value_or("");
    labels.container = cgroup.container_id.value_or("");
    labels.systemd_unit = cgroup.systemd_unit.value_or("");
  }
  return labels;
}

struct ProcessEnergyTracker::Impl {
  const device::GpuSet* gpus = nullptr;
  ProcessEnergyOptions options;
  const Clock* clock = nullptr;
  std::unique_ptr<AttributionLedger> ledger;
  std::vector<GpuState> states;  // sampling thread only

  std::map<std::uint32_t, PidEntry> pids;  // sampling thread only

  mutable std::mutex mu;  // guards views and labels
  std::vector<GpuIntervalView> views;
  struct LabelEntry {
    ProcessLabels labels;
    std::chrono::nanoseconds last_seen{0};
  };
  std::map<ProcessKey, LabelEntry> labels;

  void SampleGpu(std::size_t index, std::chrono::nanoseconds now);
  std::optional<std::int64_t> ReadEnergy(std::size_t index, GpuState& state, std::chrono::nanoseconds& now,
                                         GpuIntervalView& view);
  std::vector<ProcessUtilizationSample> ReadProcesses(std::size_t index, GpuState& state,
                                                      std::chrono::nanoseconds now, GpuIntervalView& view);
  ProcessKey KeyOf(std::uint32_t pid, std::chrono::nanoseconds now);
  ProcessKey Identify(std::uint32_t pid, std::chrono::nanoseconds now);
  void Forget(std::chrono::nanoseconds now);
};

// The energy of GPU `index` since the previous reading, in whole mJ; nullopt
// for the baseline reading or a failed one (then `view.error` says why).
std::optional<std::int64_t> ProcessEnergyTracker::Impl::ReadEnergy(std::size_t index, GpuState& state,
                                                                   std::chrono::nanoseconds& now,
                                                                   GpuIntervalView& view) {
  device::Gpu& gpu = gpus->gpu(index);
  auto power = gpu.PowerUsageMw();
  if (power) {
    view.power_mw = *power;
    (void)state.idle->AddSample(now, *power);
  }
  std::optional<std::int64_t> energy_mj;
  if (state.has_counter) {
    // The interval's end is the counter read, not the tick: a slow call for
    // another GPU or for power must not stretch or shrink this GPU's interval.
    now = clock->Now();
    auto counter = gpu.TotalEnergyMj();
    if (!counter) {
      view.error = counter.error();
      return std::nullopt;
    }
    if (state.last_counter_mj) {
      // A counter that went back (a driver reload) restarts from 0.
      energy_mj = static_cast<std::int64_t>(*counter >= *state.last_counter_mj ? *counter - *state.last_counter_mj
                                                                                 : *counter);
    }
    state.last_counter_mj = *counter;
  } else {
    if (!power) {
      view.error = power.error();
      return std::nullopt;
    }
    // Hold-last-value: the previous reading's power over the interval.
    const bool had_reading = state.power_integral.power_mw().has_value();
    const double exact_mj = state.power_integral.Add(now, *power) + state.integrated_remainder_mj;
    if (had_reading) {
      const double whole_mj = std::floor(exact_mj);
      state.integrated_remainder_mj = exact_mj - whole_mj;
      energy_mj = static_cast<std::int64_t>(whole_mj);
    }
  }
  return energy_mj;
}

ProcessKey ProcessEnergyTracker::Impl::Identify(std::uint32_t pid, std::chrono::nanoseconds now) {
  ProcessKey key{pid, 0};
  ProcessLabels found;
  auto identity = device::IdentifyProcess(pid, options.identity);
  if (identity) {
    key.start_time = identity->start_time_ticks.value_or(0);
    found = LabelsOf(*identity);
  }
  pids[pid] = PidEntry{key, now, now};
  {
    std::lock_guard lock(mu);
    auto& entry = labels[key];
    entry.labels = std::move(found);
    entry.last_seen = now;
  }
  if (identity && options.on_new_process) options.on_new_process(key, *identity);
  return key;
}

// The key of `pid` now: identified when first seen, its start time re-read
// every identity_refresh so that a reused PID becomes a new key.
ProcessKey ProcessEnergyTracker::Impl::KeyOf(std::uint32_t pid, std::chrono::nanoseconds now) {
  auto it = pids.find(pid);
  if (it == pids.end()) return Identify(pid, now);
  PidEntry& entry = it->second;
  entry.last_seen = now;
  if (now - entry.checked >= options.identity_refresh) {
    entry.checked = now;
    auto stat = device::ReadProcessStat(pid, options.identity);
    if (stat && stat->start_time_ticks != entry.key.start_time) return Identify(pid, now);
  }
  return entry.key;
}

std::vector<ProcessUtilizationSample> ProcessEnergyTracker::Impl::ReadProcesses(std::size_t index, GpuState& state,
                                                                                std::chrono::nanoseconds now,
                                                                                GpuIntervalView& view) {
  device::Gpu& gpu = gpus->gpu(index);
  auto running = gpu.RunningProcesses();
  Result<std::vector<device::GpuProcessUtilization>> driver_samples =
      running ? gpu.ProcessUtilization(state.last_sample_timestamp_us) : Fail(running.error());
  if (!driver_samples) {
    view.error = driver_samples.error();
    const std::string text = driver_samples.error().message();
    if (text != state.per_process_error_text) {
      state.per_process_error_text = text;
      Log({LogLevel::kWarning, kComponent,
           fmt::format("GPU {}: no per-process figures ({}); its whole active energy is counted as unattributed",
                       index, text)});
    }
    state.carried.clear();
    return {};
  }
  state.per_process_error_text.clear();
  std::vector<ProcessUtilizationSample> samples;
  for (const device::GpuProcessUtilization& s : *driver_samples) {
    state.last_sample_timestamp_us = std::max(state.last_sample_timestamp_us, s.timestamp_us);
    samples.push_back({KeyOf(s.pid, now), static_cast<double>(std::min(s.sm_util_percent, 100u))});
  }
  if (!samples.empty()) {
    state.carried = samples;
    state.carried_at = now;
  } else if (!state.carried.empty() && now - state.carried_at <= options.max_sample_age) {
    samples = state.carried;
  }
  // Running processes without a sample: seen, share 0.
  std::set<ProcessKey> present;
  for (const auto& s : samples) present.insert(s.process);
  for (const device::GpuProcess& p : *running) {
    const ProcessKey key = KeyOf(p.pid, now);
    if (present.insert(key).second) samples.push_back({key, 0.0});
  }
  return samples;
}

void ProcessEnergyTracker::Impl::SampleGpu(std::size_t index, std::chrono::nanoseconds tick) {
  GpuState& state = states[index];
  std::chrono::nanoseconds now = tick;
  GpuIntervalView view;
  view.gpu_index = index;
  const std::optional<std::int64_t> energy_mj = ReadEnergy(index, state, now, view);
  const bool energy_failed = view.error.has_value();
  std::vector<ProcessUtilizationSample> samples;
  if (!energy_failed) samples = ReadProcesses(index, state, now, view);
  view.idle_power_mw = state.idle->IdlePowerMw();
  view.idle_source = state.idle->source();
  if (energy_mj && state.last_time) {
    view.duration = now - *state.last_time;
    auto split = AttributeInterval(*energy_mj, view.duration, view.idle_power_mw, samples, state.idle_carry_mj);
    if (split) {
      // At most one second of idle power carries over (attribution.h).
      state.idle_carry_mj = std::min<std::int64_t>(split->idle_shortfall_mj, view.idle_power_mw);
      (void)ledger->Add(index, *split);
      view.split = std::move(*split);
    } else {
      view.error = split.error();
    }
  }
  if (!energy_failed) state.last_time = now;
  std::lock_guard lock(mu);
  if (energy_failed) {
    // Keep the last good interval's figures, with the error.
    views[index].error = view.error;
    views[index].power_mw = view.power_mw;
  } else {
    views[index] = std::move(view);
  }
}

// Drops what the tracker keeps of PIDs and labels not seen for longer than
// the ledger's retention.
void ProcessEnergyTracker::Impl::Forget(std::chrono::nanoseconds now) {
  const auto retention = options.ledger.retention;
  std::erase_if(pids, [&](const auto& item) { return now - item.second.last_seen >= retention; });
  std::lock_guard lock(mu);
  std::erase_if(labels, [&](const auto& item) {
    if (pids.contains(item.first.pid) && pids.at(item.first.pid).key == item.first) return false;
    return now - item.second.last_seen >= retention;
  });
}

Result<std::unique_ptr<ProcessEnergyTracker>> ProcessEnergyTracker::Create(const device::GpuSet& gpus,
                                                                           ProcessEnergyOptions options) {
  if (options.max_sample_age <= std::chrono::nanoseconds::zero() ||
      options.identity_refresh <= std::chrono::nanoseconds::zero()) {
    return Fail(ErrorCode::kInvalidArgument,
                "per-process energy: max_sample_age and identity_refresh must be greater than 0");
  }
  auto impl = std::make_unique<Impl>();
  impl->gpus = &gpus;
  impl->clock = options.clock ? options.clock : (gpus.driver_clock() ? gpus.driver_clock() : &SteadyClock());
  options.ledger.clock = impl->clock;
  auto ledger = AttributionLedger::Create(options.ledger);
  if (!ledger) return Fail(ledger.error());
  impl->ledger = std::move(*ledger);
  impl->states.resize(gpus.size());
  impl->views.resize(gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    GpuState& state = impl->states[i];
    state.model = gpus.gpu(i).Name().value_or("");
    state.has_counter = gpus.gpu(i).SupportsEnergyCounter();
    auto idle = IdlePowerEstimator::Create(state.model, options.idle);
    if (!idle) return Fail(idle.error());
    state.idle = std::move(*idle);
    impl->views[i].gpu_index = i;
  }
  impl->options = std::move(options);
  return std::unique_ptr<ProcessEnergyTracker>(new ProcessEnergyTracker(std::move(impl)));
}

ProcessEnergyTracker::ProcessEnergyTracker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessEnergyTracker::~ProcessEnergyTracker() = default;

void ProcessEnergyTracker::Sample() {
  const auto now = impl_->clock->Now();
  for (std::size_t i = 0; i < impl_->states.size(); ++i) impl_->SampleGpu(i, now);
  impl_->Forget(now);
}

AttributionSnapshot ProcessEnergyTracker::Snapshot() { return impl_->ledger->Snapshot(); }

std::vector<GpuIntervalView> ProcessEnergyTracker::LastIntervals() const {
  std::lock_guard lock(impl_->mu);
  return impl_->views;
}

ProcessLabels ProcessEnergyTracker::Labels(const ProcessKey& process) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->labels.find(process);
  return it == impl_->labels.end() ? ProcessLabels{} : it->second.labels;
}

struct PeriodicProcessSampler::State {
  ProcessEnergyTracker* tracker = nullptr;
  std::chrono::nanoseconds interval{};
  std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;  // guarded by mu
  std::mutex join_mu;     // one Stop() at a time joins
  std::thread thread;
};

PeriodicProcessSampler::PeriodicProcessSampler(ProcessEnergyTracker& tracker, std::chrono::nanoseconds interval)
    : state_(std::make_unique<State>()) {
  state_->tracker = &tracker;
  state_->interval = interval;
  tracker.Sample();  // the first, on the caller's thread: the baseline is taken when this returns
  State* s = state_.get();
  s->thread = std::thread([s] {
    std::unique_lock lock(s->mu);
    while (!s->wake.wait_for(lock, s->interval, [s] { return s->stopping; })) {
      lock.unlock();
      s->tracker->Sample();
      lock.lock();
    }
  });
}

PeriodicProcessSampler::~PeriodicProcessSampler() { Stop(); }

void PeriodicProcessSampler::Stop() {
  std::lock_guard join_lock(state_->join_mu);
  {
    std::lock_guard lock(state_->mu);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  if (state_->thread.joinable()) {
    state_->thread.join();
    state_->tracker->Sample();
  }
}

}  // namespace zeus::monitor
