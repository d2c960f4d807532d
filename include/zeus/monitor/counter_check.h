// Copyright 2026 The Zeus C++ Authors.
//
// Trust, but check: does a GPU's cumulative energy counter agree with its
// power integrated over the same time? Drivers get this wrong in the field
// (counters that advance at the wrong rate or in the wrong units, counters
// that stay constant, notably on AMD; see docs/architecture.md), and a
// measurement built on such a counter is wrong by the same factor.
//
// Who runs it (docs/architecture.md, "The energy counter check"): the
// long-running daemons (zeusd, the exporter; each GPU on its own thread, as
// CheckEnergyCountersOnGpuThreads does) and `zeus info`, which shows the
// verdict. Opening GPUs (device::OpenGpus) never runs it, so no start waits
// for it. $ZEUS_ENERGY_COUNTER_CHECK=0 (device::ChooseEnergyCounterCheck)
// turns it off in those three, as --no-counter-check does.
//
// The method, for one GPU (or every GPU of a set in one loop):
//   1. Poll the counter until it steps (a counter advances every 10-100 ms
//      on real drivers: measuring from step to step removes that
//      quantization); that read is the start. A step is timed only to within
//      the gap since the previous read, so one seen after a late read (more
//      than a 25th of the window, a loaded machine) is skipped for the next.
//   2. Read power at every poll: the instant power field where the GPU has
//      it, else PowerUsageMw() (an average over up to 1 s on most GPUs), and
//      integrate the readings (PowerIntegral, hold-last-value).
//   3. Once `window` has passed, poll until the counter steps again; that
//      read is the end.
//   4. ratio = counter energy / integrated energy. The counter agrees when
//      1 / max_ratio <= ratio <= max_ratio (default 1.25).
// An averaged power field lags a changing load (a 150 <-> 400 W load gives
// ratios near 1.6 at an edge), so with only such a field a window whose
// readings spread by more than max_average_power_swing of their mean is
// inconclusive, never "disagrees". A GPU whose counter does not step for
// step_timeout while it draws power disagrees (a stuck counter). A GPU
// drawing less than min_power_mw on average, or whose reads fail, is
// inconclusive: nothing to compare.
//
// Bounds, on every clock (SteadyClock included) and by construction: the
// check ends, inconclusive, at the first poll after `wall_deadline` of
// steady (wall) time or after `max_polls` polls, whichever comes first; one
// poll is poll_period of sleep on the check's clock plus one counter and
// one power read per GPU still pending. So a check of N GPUs takes at most
// wall_deadline + poll_period + N x (two driver calls), and makes at most
// max_polls + 1 counter reads per GPU (+1 to stop a stuck counter).
// Without late polls it takes one window plus up to two counter steps
// (about 0.4 s on a real driver), on the set's driver clock (an emulator's
// scaled clock runs it faster; a stopped, manual one ends it after one
// poll, inconclusive, before any GPU is read).

#ifndef ZEUS_MONITOR_COUNTER_CHECK_H_
#define ZEUS_MONITOR_COUNTER_CHECK_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/device/gpu.h"

namespace zeus::monitor {

struct EnergyCounterCheckOptions {
  std::chrono::milliseconds window{250};
  // How long to wait for each counter step before calling the counter stuck.
  std::chrono::milliseconds step_timeout{1000};
  std::chrono::milliseconds poll_period{5};
  double max_ratio = 1.25;            // > 1
  std::uint32_t min_power_mw = 1000;  // below this average: inconclusive
  // With only an averaged power field: the largest (max - min) / mean of
  // the window's power readings that is still compared.
  double max_average_power_swing = 0.1;
  // The bounds (see above). The deadline is on the steady clock whatever
  // `clock` is.
  std::chrono::milliseconds wall_deadline{3000};
  std::uint32_t max_polls = 1000;
  // Null: the set's driver_clock(), else SteadyClock().
  const Clock* clock = nullptr;
};

enum class CounterVerdict : std::uint8_t {
  kAgrees,        // within the tolerance: the counter can be trusted
  kDisagrees,     // off by more than the tolerance, or stuck
  kNoCounter,     // the GPU has no energy counter (SupportsEnergyCounter)
  kInconclusive,  // too little power, a swinging load, late polls, a read failed, or no time left
};
std::string_view CounterVerdictName(CounterVerdict verdict);  // "agrees", "disagrees", "no_counter", "inconclusive"

struct EnergyCounterCheck {
  CounterVerdict verdict = CounterVerdict::kInconclusive;
  double counter_energy_mj = 0.0;     // between the two counter steps
  double integrated_energy_mj = 0.0;  // power over the same time
  double ratio = 0.0;                 // counter / integrated; 0 when not computed
  double duration_s = 0.0;            // from the first step to the second
  std::string power_source;           // "instant" or "power_usage"; empty when none was read
  std::string detail;                 // one sentence: the figures, or why inconclusive
  // Why an inconclusive check could not compare, as a code: a failed read's
  // error; kTimeout when the check ran out of its bounds (late polls) or,
  // on a GPU's own thread, did not end by the caller's deadline (a driver
  // call that may hang); kAborted when that thread dropped it. Callers
  // recognise a timeout by this code, never by the detail's words.
  std::optional<Error> error;
  std::uint32_t polls = 0;  // polls made (at most max_polls)
};

// Checks every GPU of `gpus` in one polling loop, in index order. Never
// fails as a whole: a GPU whose reads fail is kInconclusive with the error.
// Nothing is distrusted: see ApplyCounterChecks.
// REQUIRES: options.window > 0, options.poll_period > 0, options.max_ratio > 1.
std::vector<EnergyCounterCheck> CheckEnergyCounters(const device::GpuSet& gpus,
                                                    const EnergyCounterCheckOptions& options = {});

// The same check for one GPU, timed on `clock` (options.clock, when set,
// wins). For a caller that runs each GPU's check on that GPU's own thread,
// so that a GPU whose driver call hangs holds up only its own check.
EnergyCounterCheck CheckEnergyCounter(device::Gpu& gpu, const Clock& clock,
                                      const EnergyCounterCheckOptions& options = {});

// Runs each GPU's CheckEnergyCounter as a task handed to `run_on_gpu(i,
// task)`, which must run it on GPU i's own thread, waits at most `deadline`
// in all, and applies the verdicts (ApplyCounterChecks). A GPU whose check
// has not ended by then is kInconclusive with error kTimeout; its task stays
// with its thread, which must stop before `gpus` is destroyed.
std::vector<EnergyCounterCheck> CheckEnergyCountersOnGpuThreads(
    const device::GpuSet& gpus, const std::function<void(std::size_t, std::function<void()>)>& run_on_gpu,
    std::chrono::milliseconds deadline, const EnergyCounterCheckOptions& options = {});

// The one place that decides what a verdict means. Whether a GPU's counter
// must not be used: only a counter that was compared and disagreed.
bool ShouldDistrust(const EnergyCounterCheck& check);
// Distrusts (Gpu::DistrustEnergyCounter) each GPU i of `gpus` for which
// ShouldDistrust(checks[i]). REQUIRES: checks.size() <= gpus.size().
void ApplyCounterChecks(const device::GpuSet& gpus, const std::vector<EnergyCounterCheck>& checks);
// What Gpu::DistrustEnergyCounter is told for a counter that disagreed.
std::string DistrustReason(const EnergyCounterCheck& check);
// The one wording of a verdict for people (a log line, zeus info's
// problems): for GPU `gpu_index`, a counter that disagrees (with what Zeus
// does instead and how to turn the check off) or a check that timed out
// (error kTimeout); nullopt for every other verdict, which needs no word.
std::optional<std::string> CounterCheckWarning(std::size_t gpu_index, const EnergyCounterCheck& check);

}  // namespace zeus::monitor

#endif  // ZEUS_MONITOR_COUNTER_CHECK_H_
