// Copyright 2026 The Zeus C++ Authors.

#include "zeus/device/counter_check.h"

#include <algorithm>
#include <cstddef>
#include <future>
#include <memory>
#include <optional>

#include <fmt/format.h>

namespace zeus::device {
namespace {

using std::chrono::nanoseconds;

enum class Phase : std::uint8_t { kFirstStep, kWindow, kDone };

// One GPU's progress through the check.
struct Probe {
  Phase phase = Phase::kDone;
  std::uint64_t last_counter_mj = 0;
  std::uint64_t start_counter_mj = 0;
  nanoseconds last_step{0};   // the last step seen, or the first read (for the step timeout)
  nanoseconds last_poll{0};   // the previous read
  nanoseconds start_time{0};  // the first step
  std::optional<bool> use_instant;
  std::optional<std::pair<nanoseconds, std::uint32_t>> last_power;  // (time, mW)
  double integrated_mj = 0.0;
  EnergyCounterCheck result;
};

double Seconds(nanoseconds d) { return std::chrono::duration<double>(d).count(); }

// Reads power: the instant field where the GPU has one (decided at the first
// read), else PowerUsageMw().
Result<std::uint32_t> ReadPower(Gpu& gpu, Probe& probe) {
  if (!probe.use_instant) {
    auto instant = gpu.InstantPowerMw();
    probe.use_instant = instant.has_value();
    probe.result.power_source = *probe.use_instant ? "instant" : "power_usage";
    if (instant) return instant;
  }
  return *probe.use_instant ? gpu.InstantPowerMw() : gpu.PowerUsageMw();
}

void Finish(Probe& probe, CounterVerdict verdict, std::string detail) {
  probe.phase = Phase::kDone;
  probe.result.verdict = verdict;
  probe.result.detail = std::move(detail);
}

// Adds a power sample at `now`, integrating from the previous one.
Status SamplePower(Gpu& gpu, Probe& probe, nanoseconds now) {
  auto power = ReadPower(gpu, probe);
  if (!power) return Fail(power.error());
  if (probe.last_power) {
    const auto& [then, then_mw] = *probe.last_power;
    probe.integrated_mj += (static_cast<double>(then_mw) + *power) / 2.0 * Seconds(now - then);
  }
  probe.last_power = {now, *power};
  return {};
}

// The verdict once the second step is seen at `now` with counter `counter_mj`.
void Judge(Probe& probe, std::uint64_t counter_mj, nanoseconds now, const EnergyCounterCheckOptions& options) {
  EnergyCounterCheck& r = probe.result;
  r.counter_energy_mj = static_cast<double>(counter_mj - probe.start_counter_mj);
  r.integrated_energy_mj = probe.integrated_mj;
  r.duration_s = Seconds(now - probe.start_time);
  const double average_w = r.duration_s > 0 ? r.integrated_energy_mj / r.duration_s / 1000.0 : 0.0;
  if (average_w * 1000.0 < options.min_power_mw) {
    Finish(probe, CounterVerdict::kInconclusive,
           fmt::format("the GPU drew {:.2f} W on average over {:.2f} s, under the {:.1f} W needed to compare", average_w,
                       r.duration_s, options.min_power_mw / 1000.0));
    return;
  }
  r.ratio = r.counter_energy_mj / r.integrated_energy_mj;
  const bool agrees = r.ratio >= 1.0 / options.max_ratio && r.ratio <= options.max_ratio;
  Finish(probe, agrees ? CounterVerdict::kAgrees : CounterVerdict::kDisagrees,
         fmt::format("the counter measured {:.3f} J and {} power integrated to {:.3f} J over {:.2f} s (ratio {:.3f}; "
                     "a counter agrees within {:.2f}x either way)",
                     r.counter_energy_mj / 1000.0, r.power_source == "instant" ? "instant" : "the driver's",
                     r.integrated_energy_mj / 1000.0, r.duration_s, r.ratio, options.max_ratio));
}

// A counter that has not stepped for the step timeout: stuck if the GPU
// draws power, else nothing to compare.
void Stuck(Gpu& gpu, Probe& probe, nanoseconds waited, const EnergyCounterCheckOptions& options) {
  auto power = ReadPower(gpu, probe);
  if (!power) {
    Finish(probe, CounterVerdict::kInconclusive, fmt::format("reading power failed: {}", power.error().message()));
  } else if (*power < options.min_power_mw) {
    Finish(probe, CounterVerdict::kInconclusive,
           fmt::format("the counter did not advance in {:.2f} s and the GPU draws {:.2f} W: nothing to compare",
                       Seconds(waited), *power / 1000.0));
  } else {
    Finish(probe, CounterVerdict::kDisagrees,
           fmt::format("the counter did not advance in {:.2f} s while the GPU drew {:.2f} W (a stuck counter)",
                       Seconds(waited), *power / 1000.0));
  }
}

// The longest gap between two reads for a step between them to be timed:
// a 25th of the window, so that each end of the window is off by at most 4%.
nanoseconds MaxStepGap(const EnergyCounterCheckOptions& options) {
  return std::max<nanoseconds>(options.window / 25, 2 * options.poll_period);
}

// One poll of one GPU at `now`.
void Poll(Gpu& gpu, Probe& probe, nanoseconds now, const EnergyCounterCheckOptions& options) {
  auto counter = gpu.TotalEnergyMj();
  if (!counter) {
    Finish(probe, CounterVerdict::kInconclusive,
           fmt::format("reading the energy counter failed: {}", counter.error().message()));
    return;
  }
  if (*counter < probe.last_counter_mj) {
    Finish(probe, CounterVerdict::kInconclusive, "the energy counter went back (a driver reload or a counter reset)");
    return;
  }
  const bool stepped = *counter != probe.last_counter_mj;
  probe.last_counter_mj = *counter;
  // A step is timed only to within the gap since the previous read: one seen
  // after a late poll (a loaded machine) is not used as the window's start or
  // end; the next step is.
  const bool timely = now - probe.last_poll <= MaxStepGap(options);
  probe.last_poll = now;
  if (stepped) {
    probe.last_step = now;
  } else if (now - probe.last_step > options.step_timeout) {
    Stuck(gpu, probe, now - probe.last_step, options);
    return;
  }
  if (probe.phase == Phase::kFirstStep) {
    if (!stepped || !timely) return;
    probe.phase = Phase::kWindow;
    probe.start_counter_mj = *counter;
    probe.start_time = now;
  }
  if (Status sampled = SamplePower(gpu, probe, now); !sampled) {
    Finish(probe, CounterVerdict::kInconclusive, fmt::format("reading power failed: {}", sampled.error().message()));
    return;
  }
  const nanoseconds elapsed = now - probe.start_time;
  if (elapsed < options.window) return;
  if (stepped && timely) {
    Judge(probe, *counter, now, options);
  } else if (elapsed > options.window + 4 * options.step_timeout) {
    Finish(probe, CounterVerdict::kInconclusive,
           fmt::format("no counter step could be timed within {} ms in {:.1f} s (the polls were late)",
                       MaxStepGap(options).count() / 1'000'000, Seconds(elapsed)));
  }
}

}  // namespace

std::string_view CounterVerdictName(CounterVerdict verdict) {
  switch (verdict) {
    case CounterVerdict::kAgrees:
      return "agrees";
    case CounterVerdict::kDisagrees:
      return "disagrees";
    case CounterVerdict::kNoCounter:
      return "no_counter";
    case CounterVerdict::kInconclusive:
      break;
  }
  return "inconclusive";
}

namespace {

std::vector<EnergyCounterCheck> CheckAll(const std::vector<Gpu*>& gpus, const Clock& clock,
                                         const EnergyCounterCheckOptions& options) {
  std::vector<Probe> probes(gpus.size());
  // A stopped clock (an emulator's manual clock) cannot time a window: say
  // so before any GPU is read, so that such a run sees no extra driver call.
  const nanoseconds first = clock.Now();
  clock.SleepFor(options.poll_period);
  const bool stopped_at_start = clock.Now() == first;
  if (stopped_at_start) {
    for (Probe& probe : probes) {
      Finish(probe, CounterVerdict::kInconclusive,
             "the driver's clock is stopped (an emulator's manual clock): nothing to compare");
    }
  }
  bool pending = false;
  for (std::size_t i = 0; i < gpus.size() && !stopped_at_start; ++i) {
    Probe& probe = probes[i];
    Gpu& gpu = *gpus[i];
    if (!gpu.SupportsEnergyCounter()) {
      Finish(probe, CounterVerdict::kNoCounter, "the GPU has no energy counter; energy is integrated power");
      continue;
    }
    auto counter = gpu.TotalEnergyMj();
    if (!counter) {
      Finish(probe, CounterVerdict::kInconclusive,
             fmt::format("reading the energy counter failed: {}", counter.error().message()));
      continue;
    }
    probe.phase = Phase::kFirstStep;
    probe.last_counter_mj = *counter;
    probe.last_step = probe.last_poll = clock.Now();
    pending = true;
  }
  // A clock that does not move (an emulator's manual clock) must not hang
  // the check: it ends on the wall clock too.
  const nanoseconds wall_limit = options.window + 5 * options.step_timeout + std::chrono::seconds(1);
  const nanoseconds wall_start = SteadyClock().Now();
  while (pending) {
    const nanoseconds before = clock.Now();
    clock.SleepFor(options.poll_period);
    const bool stopped = clock.Now() == before;
    const bool out_of_time = SteadyClock().Now() - wall_start > wall_limit && &clock != &SteadyClock();
    pending = false;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (probes[i].phase == Phase::kDone) continue;
      if (stopped || out_of_time) {
        Finish(probes[i], CounterVerdict::kInconclusive,
               stopped ? std::string("the driver's clock is stopped (an emulator's manual clock): nothing to compare")
                       : fmt::format("the driver's clock did not advance {} ms in {:.1f} s of wall time",
                                     options.window.count(), Seconds(wall_limit)));
        continue;
      }
      Poll(*gpus[i], probes[i], clock.Now(), options);
      pending = pending || probes[i].phase != Phase::kDone;
    }
  }
  std::vector<EnergyCounterCheck> results;
  results.reserve(probes.size());
  for (Probe& probe : probes) results.push_back(std::move(probe.result));
  return results;
}

}  // namespace

std::vector<EnergyCounterCheck> CheckEnergyCounters(const GpuSet& gpus, const EnergyCounterCheckOptions& options) {
  const Clock& clock = options.clock != nullptr        ? *options.clock
                       : gpus.driver_clock() != nullptr ? *gpus.driver_clock()
                                                        : SteadyClock();
  std::vector<Gpu*> all;
  for (std::size_t i = 0; i < gpus.size(); ++i) all.push_back(&gpus.gpu(i));
  return CheckAll(all, clock, options);
}

EnergyCounterCheck CheckEnergyCounter(Gpu& gpu, const Clock& clock, const EnergyCounterCheckOptions& options) {
  return CheckAll({&gpu}, options.clock != nullptr ? *options.clock : clock, options).front();
}

std::vector<EnergyCounterCheck> CheckEnergyCountersOnGpuThreads(
    const GpuSet& gpus, const std::function<void(std::size_t, std::function<void()>)>& run_on_gpu,
    std::chrono::milliseconds deadline, const EnergyCounterCheckOptions& options) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  const Clock& clock = options.clock != nullptr        ? *options.clock
                       : gpus.driver_clock() != nullptr ? *gpus.driver_clock()
                                                        : SteadyClock();
  std::vector<std::future<EnergyCounterCheck>> futures;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    auto promise = std::make_shared<std::promise<EnergyCounterCheck>>();
    futures.push_back(promise->get_future());
    Gpu* gpu = &gpus.gpu(i);
    run_on_gpu(i, [gpu, &clock, options, promise] { promise->set_value(CheckEnergyCounter(*gpu, clock, options)); });
  }
  std::vector<EnergyCounterCheck> checks(futures.size());
  for (std::size_t i = 0; i < futures.size(); ++i) {
    if (futures[i].wait_until(end) != std::future_status::ready) {
      checks[i].verdict = CounterVerdict::kInconclusive;
      checks[i].detail = fmt::format("GPU {} did not finish the energy counter check within {} ms; its driver call "
                                     "may hang",
                                     i, deadline.count());
      continue;
    }
    try {
      checks[i] = futures[i].get();
    } catch (const std::future_error&) {  // the thread dropped the task: it is stopping
      checks[i].verdict = CounterVerdict::kInconclusive;
      checks[i].detail = fmt::format("GPU {}'s thread stopped before the energy counter check ran", i);
      continue;
    }
    if (checks[i].verdict == CounterVerdict::kDisagrees) gpus.gpu(i).DistrustEnergyCounter(DistrustReason(checks[i]));
  }
  return checks;
}

std::string DistrustReason(const EnergyCounterCheck& check) {
  return fmt::format("at start it disagreed with the GPU's power ({}), so energy is integrated from power instead",
                     check.detail);
}

}  // namespace zeus::device
