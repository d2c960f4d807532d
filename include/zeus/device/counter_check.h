// Copyright 2026 The Zeus C++ Authors.
//
// Trust, but check: does a GPU's cumulative energy counter agree with its
// power integrated over the same time? Drivers get this wrong in the field
// (counters that advance at the wrong rate or in the wrong units, counters
// that stay constant, notably on AMD; see docs/architecture.md), and a
// measurement built on such a counter is wrong by the same factor. Zeus
// checks AMD counters at start; this check is vendor-independent.
//
// The method, for every GPU of a set at once (one window, not one per GPU):
//   1. Poll the counter until it steps (a counter advances every 10-100 ms
//      on real drivers: measuring from step to step removes that
//      quantization); that read is the start. A step is timed only to within
//      the gap since the previous read, so one seen after a late read (more
//      than a 25th of the window, a loaded machine) is skipped for the next.
//   2. Sample power at every poll: the instant power field where the GPU
//      has it, else PowerUsageMw(). Integrate the samples (trapezoids).
//   3. Once `window` has passed, poll until the counter steps again; that
//      read is the end.
//   4. ratio = counter energy / integrated energy. The counter agrees when
//      1 / max_ratio <= ratio <= max_ratio (default 1.25: power sampled
//      every poll and a 1 s average power field on some GPUs make a few
//      percent of disagreement normal; a wrong rate or unit is far beyond).
// A GPU whose counter does not step for step_timeout while it draws power
// disagrees (a stuck counter); one whose steps can never be timed (late
// reads for window + 4 x step_timeout) is inconclusive. A GPU drawing less than
// min_power_mw on average, or whose reads fail, is inconclusive: nothing
// to compare.
//
// Cost: one window (250 ms by default: measuring from step to step, the
// timing error is at most two polls, 4%) plus up to two counter steps
// (about 0.4 s in all on a real driver), on the set's driver clock (an
// emulator's scaled clock runs it faster; a stopped, manual one ends it
// after one poll, inconclusive, before any GPU is read).

#ifndef ZEUS_DEVICE_COUNTER_CHECK_H_
#define ZEUS_DEVICE_COUNTER_CHECK_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/clock.h"
#include "zeus/device/gpu.h"

namespace zeus::device {

struct EnergyCounterCheckOptions {
  std::chrono::milliseconds window{250};
  // How long to wait for each counter step before calling the counter stuck.
  std::chrono::milliseconds step_timeout{1000};
  std::chrono::milliseconds poll_period{5};
  double max_ratio = 1.25;           // > 1
  std::uint32_t min_power_mw = 1000;  // below this average: inconclusive
  // Null: the set's driver_clock(), else SteadyClock().
  const Clock* clock = nullptr;
};

enum class CounterVerdict : std::uint8_t {
  kAgrees,        // within the tolerance: the counter can be trusted
  kDisagrees,     // off by more than the tolerance, or stuck
  kNoCounter,     // the GPU has no energy counter (SupportsEnergyCounter)
  kInconclusive,  // too little power to compare, or a read failed
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
};

// Checks every GPU of `gpus`, in index order. Never fails as a whole: a GPU
// whose reads fail is kInconclusive with the error in `detail`.
// REQUIRES: options.window > 0, options.poll_period > 0, options.max_ratio > 1.
std::vector<EnergyCounterCheck> CheckEnergyCounters(const GpuSet& gpus, const EnergyCounterCheckOptions& options = {});

// The same check for one GPU, timed on `clock` (its set's driver_clock(),
// else SteadyClock(); options.clock, when set, wins). For a daemon that runs
// each GPU's check on that GPU's own thread, so that a GPU whose driver call
// hangs holds up only its own check.
EnergyCounterCheck CheckEnergyCounter(Gpu& gpu, const Clock& clock, const EnergyCounterCheckOptions& options = {});

// What Gpu::DistrustEnergyCounter is told for a counter that disagreed.
std::string DistrustReason(const EnergyCounterCheck& check);

// Trust, but check, for daemons (zeusd, the exporter), whose start a hung GPU
// must not block: runs each GPU's CheckEnergyCounter as a task handed to
// `run_on_gpu(i, task)`, which must run it on GPU i's own thread, waits at
// most `deadline` in all, and distrusts (Gpu::DistrustEnergyCounter) each GPU
// whose counter disagrees. A GPU whose check has not ended by then (a driver
// call that hangs) is reported kInconclusive, its detail saying so; its task
// stays with its thread, which must stop before `gpus` is destroyed.
std::vector<EnergyCounterCheck> CheckEnergyCountersOnGpuThreads(
    const GpuSet& gpus, const std::function<void(std::size_t, std::function<void()>)>& run_on_gpu,
    std::chrono::milliseconds deadline, const EnergyCounterCheckOptions& options = {});

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_COUNTER_CHECK_H_
