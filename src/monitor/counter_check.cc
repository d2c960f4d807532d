// Copyright 2026 The Zeus C++ Authors.

#include "zeus/monitor/counter_check.h"

#include <algorithm>
#include <cstddef>
#include <future>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "zeus/device/environment.h"
#include "zeus/monitor/power_integral.h"

namespace zeus::monitor {

using device::Gpu;
using device::GpuSet;

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
  PowerIntegral integral;  // from the first step
  std::uint32_t min_power_mw = UINT32_MAX;  // the window's readings
  std::uint32_t max_power_mw = 0;
  EnergyCounterCheck result;
};

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

void Finish(Probe& probe, CounterVerdict verdict, std::string detail, std::optional<Error> error = std::nullopt) {
  probe.phase = Phase::kDone;
  probe.result.verdict = verdict;
  probe.result.detail = std::move(detail);
  probe.result.error = std::move(error);
}

void FinishFailed(Probe& probe, std::string_view what, const Error& error) {
  Finish(probe, CounterVerdict::kInconclusive, fmt::format("{} failed: {}", what, error.message()), error);
}

// Adds a power reading at `now` to the window's integral.
Status SamplePower(Gpu& gpu, Probe& probe, nanoseconds now) {
  auto power = ReadPower(gpu, probe);
  if (!power) return Fail(power.error());
  probe.integral.Add(now, *power);
  probe.min_power_mw = std::min(probe.min_power_mw, *power);
  probe.max_power_mw = std::max(probe.max_power_mw, *power);
  return {};
}

// The verdict once the second step is seen at `now` with counter `counter_mj`.
void Judge(Probe& probe, std::uint64_t counter_mj, nanoseconds now, const EnergyCounterCheckOptions& options) {
  EnergyCounterCheck& r = probe.result;
  r.counter_energy_mj = static_cast<double>(counter_mj - probe.start_counter_mj);
  r.integrated_energy_mj = probe.integral.energy_mj();
  r.duration_s = ToSeconds(now - probe.start_time);
  const double average_mw = r.duration_s > 0 ? r.integrated_energy_mj / r.duration_s : 0.0;
  if (average_mw < options.min_power_mw) {
    Finish(probe, CounterVerdict::kInconclusive,
           fmt::format("the GPU drew {:.2f} W on average over {:.2f} s, under the {:.1f} W needed to compare",
                       average_mw / 1000.0, r.duration_s, options.min_power_mw / 1000.0));
    return;
  }
  const bool averaged = r.power_source != "instant";
  const double swing = static_cast<double>(probe.max_power_mw - probe.min_power_mw) / average_mw;
  if (averaged && swing > options.max_average_power_swing) {
    // An averaged field lags a changing load: comparing would blame the
    // counter for the field's lag.
    Finish(probe, CounterVerdict::kInconclusive,
           fmt::format("the GPU's averaged power moved between {:.1f} and {:.1f} W within {:.2f} s (more than {:.0f}% "
                       "of its mean); this GPU has no instant power field, and an average lags such a load, so "
                       "nothing is compared",
                       probe.min_power_mw / 1000.0, probe.max_power_mw / 1000.0, r.duration_s,
                       options.max_average_power_swing * 100.0));
    return;
  }
  r.ratio = r.counter_energy_mj / r.integrated_energy_mj;
  const bool agrees = r.ratio >= 1.0 / options.max_ratio && r.ratio <= options.max_ratio;
  Finish(probe, agrees ? CounterVerdict::kAgrees : CounterVerdict::kDisagrees,
         fmt::format("the counter measured {:.3f} J and {} power integrated to {:.3f} J over {:.2f} s (ratio {:.3f}; "
                     "a counter agrees within {:.2f}x either way)",
                     r.counter_energy_mj / 1000.0, averaged ? "the driver's" : "instant",
                     r.integrated_energy_mj / 1000.0, r.duration_s, r.ratio, options.max_ratio));
}

// A counter that has not stepped for the step timeout: stuck if the GPU
// draws power, else nothing to compare.
void Stuck(Gpu& gpu, Probe& probe, nanoseconds waited, const EnergyCounterCheckOptions& options) {
  auto power = ReadPower(gpu, probe);
  if (!power) {
    FinishFailed(probe, "reading power", power.error());
  } else if (*power < options.min_power_mw) {
    Finish(probe, CounterVerdict::kInconclusive,
           fmt::format("the counter did not advance in {:.2f} s and the GPU draws {:.2f} W: nothing to compare",
                       ToSeconds(waited), *power / 1000.0));
  } else {
    Finish(probe, CounterVerdict::kDisagrees,
           fmt::format("the counter did not advance in {:.2f} s while the GPU drew {:.2f} W (a stuck counter)",
                       ToSeconds(waited), *power / 1000.0));
  }
}

// The longest gap between two reads for a step between them to be timed:
// a 25th of the window, so that each end of the window is off by at most 4%.
nanoseconds MaxStepGap(const EnergyCounterCheckOptions& options) {
  return std::max<nanoseconds>(options.window / 25, 2 * options.poll_period);
}

// One poll of one GPU at `now`.
void Poll(Gpu& gpu, Probe& probe, nanoseconds now, const EnergyCounterCheckOptions& options) {
  ++probe.result.polls;
  auto counter = gpu.TotalEnergyMj();
  if (!counter) {
    FinishFailed(probe, "reading the energy counter", counter.error());
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
    FinishFailed(probe, "reading power", sampled.error());
    return;
  }
  if (now - probe.start_time >= options.window && stepped && timely) Judge(probe, *counter, now, options);
}

constexpr std::string_view kStoppedClock =
    "the driver's clock is stopped (an emulator's manual clock): nothing to compare";

std::vector<EnergyCounterCheck> CheckAll(const std::vector<Gpu*>& gpus, const Clock& clock,
                                         const EnergyCounterCheckOptions& options) {
  // The bounds hold on every clock: the deadline is on the steady clock.
  const nanoseconds wall_end = SteadyClock().Now() + options.wall_deadline;
  std::vector<Probe> probes(gpus.size());
  // A stopped clock (an emulator's manual clock) cannot time a window: say
  // so before any GPU is read, so that such a run sees no extra driver call.
  const nanoseconds first = clock.Now();
  clock.SleepFor(options.poll_period);
  const bool stopped_at_start = clock.Now() == first;
  if (stopped_at_start) {
    for (Probe& probe : probes) Finish(probe, CounterVerdict::kInconclusive, std::string(kStoppedClock));
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
      FinishFailed(probe, "reading the energy counter", counter.error());
      continue;
    }
    probe.phase = Phase::kFirstStep;
    probe.last_counter_mj = *counter;
    probe.last_step = probe.last_poll = clock.Now();
    pending = true;
  }
  for (std::uint32_t poll = 0; pending; ++poll) {
    const nanoseconds before = clock.Now();
    clock.SleepFor(options.poll_period);
    const bool stopped = clock.Now() == before;
    const bool out_of_bounds = poll >= options.max_polls || SteadyClock().Now() >= wall_end;
    pending = false;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (probes[i].phase == Phase::kDone) continue;
      if (stopped) {
        Finish(probes[i], CounterVerdict::kInconclusive, std::string(kStoppedClock));
      } else if (out_of_bounds) {
        const std::string detail =
            fmt::format("no counter step could be timed within {} ms in {} polls and {} ms of wall time (the polls "
                        "were late, or the driver's clock is slow)",
                        std::chrono::duration_cast<std::chrono::milliseconds>(MaxStepGap(options)).count(),
                        probes[i].result.polls, options.wall_deadline.count());
        Finish(probes[i], CounterVerdict::kInconclusive, detail, Error(ErrorCode::kTimeout, detail));
      } else {
        Poll(*gpus[i], probes[i], clock.Now(), options);
        pending = pending || probes[i].phase != Phase::kDone;
      }
    }
  }
  std::vector<EnergyCounterCheck> results;
  results.reserve(probes.size());
  for (Probe& probe : probes) results.push_back(std::move(probe.result));
  return results;
}

const Clock& ClockFor(const GpuSet& gpus, const EnergyCounterCheckOptions& options) {
  return options.clock != nullptr        ? *options.clock
         : gpus.driver_clock() != nullptr ? *gpus.driver_clock()
                                          : SteadyClock();
}

}  // namespace

std::string_view CounterVerdictName(CounterVerdict verdict) {
  switch (verdict) {
    case CounterVerdict::kAgrees: return "agrees";
    case CounterVerdict::kDisagrees: return "disagrees";
    case CounterVerdict::kNoCounter: return "no_counter";
    case CounterVerdict::kInconclusive: break;
  }
  return "inconclusive";
}

std::vector<EnergyCounterCheck> CheckEnergyCounters(const GpuSet& gpus, const EnergyCounterCheckOptions& options) {
  std::vector<Gpu*> all;
  for (std::size_t i = 0; i < gpus.size(); ++i) all.push_back(&gpus.gpu(i));
  return CheckAll(all, ClockFor(gpus, options), options);
}

EnergyCounterCheck CheckEnergyCounter(Gpu& gpu, const Clock& clock, const EnergyCounterCheckOptions& options) {
  return CheckAll({&gpu}, options.clock != nullptr ? *options.clock : clock, options).front();
}

std::vector<EnergyCounterCheck> CheckEnergyCountersOnGpuThreads(
    const GpuSet& gpus, const std::function<void(std::size_t, std::function<void()>)>& run_on_gpu,
    std::chrono::milliseconds deadline, const EnergyCounterCheckOptions& options) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  const Clock& clock = ClockFor(gpus, options);
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
      checks[i].detail = fmt::format("the check did not finish within {} ms; the GPU's driver call may hang",
                                     deadline.count());
      checks[i].error = Error(ErrorCode::kTimeout, checks[i].detail);
      continue;
    }
    try {
      checks[i] = futures[i].get();
    } catch (const std::future_error&) {  // the thread dropped the task: it is stopping
      checks[i].detail = "the GPU's thread stopped before the energy counter check ran";
      checks[i].error = Error(ErrorCode::kAborted, checks[i].detail);
    }
  }
  ApplyCounterChecks(gpus, checks);
  return checks;
}

bool ShouldDistrust(const EnergyCounterCheck& check) { return check.verdict == CounterVerdict::kDisagrees; }

void ApplyCounterChecks(const GpuSet& gpus, const std::vector<EnergyCounterCheck>& checks) {
  for (std::size_t i = 0; i < checks.size() && i < gpus.size(); ++i) {
    if (ShouldDistrust(checks[i])) gpus.gpu(i).DistrustEnergyCounter(DistrustReason(checks[i]));
  }
}

std::string DistrustReason(const EnergyCounterCheck& check) {
  return fmt::format("it disagreed with the GPU's power ({}), so energy is integrated from power instead",
                     check.detail);
}

std::optional<std::string> CounterCheckWarning(std::size_t gpu_index, const EnergyCounterCheck& check) {
  if (ShouldDistrust(check)) {
    return fmt::format("GPU {}: the energy counter disagrees with the GPU's power ({}); Zeus measures this GPU by "
                       "integrating its power instead, and other tools that read the counter are off by that factor. "
                       "{}=0 or --no-counter-check turns the check off",
                       gpu_index, check.detail, device::kEnergyCounterCheckVariable);
  }
  if (check.error && check.error->code() == ErrorCode::kTimeout) {
    return fmt::format("GPU {}: the energy counter could not be checked: {}", gpu_index, check.detail);
  }
  return std::nullopt;
}

}  // namespace zeus::monitor
