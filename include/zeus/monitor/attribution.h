// Copyright 2026 The Zeus C++ Authors.
//
// Who used the energy: a model that splits one GPU's measured energy among
// the processes that ran on it (issue 24, part 1). There is no per-process
// energy in hardware; everything here is a model over the GPU's measured
// total and the driver's per-process utilization samples, and it is stated
// as one. This file makes no driver calls: the caller reads the energy
// counter, power and NVML's process utilization, and hands the figures in.
//
// The rule, per GPU and per interval (AttributeInterval):
//
//   idle   = min(measured, idle_power x duration)
//   active = measured - idle
//   share of process p = active x util(p) / sum over processes of util(q)
//
// where util(p) is the sum of p's SM-utilization samples in the interval
// (nvmlDeviceGetProcessUtilization's `smUtil`, one sample per process per
// driver sample period; a process sampled k times weighs k samples). This
// is the rule Kepler documents for GPUs (a process's share of the active
// power is its share of the processes' summed utilization), so figures are
// comparable with Kepler's. When no process has nonzero utilization, the
// whole active part goes to the interval's `unattributed` bucket: it is
// kept, never lost, and never given to processes that did nothing.
//
// Exact conservation. Energies are integer millijoules, and for every
// interval idle + unattributed + sum of shares == measured, exactly. Shares
// are rounded by the largest-remainder method: each process gets the floor
// of its exact quotient, and the millijoules left over (fewer than the
// number of processes) go one each to the processes with the largest
// remainders, ties to the smaller ProcessKey. The result is deterministic:
// the same input gives the same split on every machine.
//
// Limits of the model (read these before trusting a per-process figure):
//   * SM utilization is the share of time a process had a kernel running,
//     not the power its kernels drew: a memory-bound kernel and a
//     compute-bound kernel at the same utilization get the same share.
//   * Utilizations are percent in 1/1000 steps (finer digits are rounded),
//     and the driver's sample period (1/6 s to 1 s by product, per NVML's
//     documentation) limits what a short interval can resolve: an interval
//     with no sample of a process gives it nothing.
//   * Idle power is an estimate (IdlePowerEstimator): an operator-set value
//     per GPU model, or the lowest power seen over a trailing window. Under a
//     load that never stops, the window's minimum is a loaded power, so idle
//     is overestimated and the processes' shares underestimated; set the
//     model's idle power where that matters.
//   * Memory power and the power of a process that holds the GPU without
//     running kernels are not separated: they are idle or active by the
//     same rule as everything else.
//
// AttributionLedger accumulates the splits per (GPU, process) for output
// (exporter counters), drops ended processes after a retention time and caps
// the number of live entries, with every millijoule still accounted for.
//
// Thread-safety: AttributeInterval is a pure function. IdlePowerEstimator is
// thread-compatible (one per GPU; the caller serializes calls on one
// object). AttributionLedger is thread-safe: it is internally locked, so one
// thread may add intervals while others take snapshots.

#ifndef ZEUS_MONITOR_ATTRIBUTION_H_
#define ZEUS_MONITOR_ATTRIBUTION_H_

#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"

namespace zeus::monitor {

// Who a process is: its PID and its start time, so that a PID the kernel
// reuses for a new process is a new key. `start_time` is opaque here (the
// caller's choice, e.g. the start time in clock ticks from /proc/PID/stat);
// 0 when unknown. Ordered by pid, then start_time.
struct ProcessKey {
  std::uint32_t pid = 0;
  std::uint64_t start_time = 0;
  auto operator<=>(const ProcessKey&) const = default;
};

// One driver sample of one process's SM utilization, as
// nvmlDeviceGetProcessUtilization gives it (`smUtil`), or the caller's mean
// of several. Percent, 0 to 100 (finite).
struct ProcessUtilizationSample {
  ProcessKey process;
  double sm_util_percent = 0.0;
};

// One process's share of an interval's active energy.
struct ProcessEnergy {
  ProcessKey process;
  std::int64_t energy_mj = 0;
};

// The split of one GPU's energy over one interval. Invariant:
// idle_energy_mj + unattributed_energy_mj + sum(processes[i].energy_mj)
// == measured_energy_mj, and every figure is >= 0.
struct IntervalAttribution {
  std::int64_t measured_energy_mj = 0;
  std::int64_t idle_energy_mj = 0;
  // The active part when no process had nonzero utilization (else 0).
  std::int64_t unattributed_energy_mj = 0;
  // The idle energy the interval was allowed (idle power x duration plus the
  // carry passed in) but did not measure: allowance - idle_energy_mj, >= 0.
  // A caller that passes it (bounded) as the next interval's carry keeps a
  // counter that advances in steps from reading as activity (see below).
  std::int64_t idle_shortfall_mj = 0;
  // Every distinct process of the samples, in ProcessKey order, with its
  // share (0 for a process whose utilization was 0: it was seen, it did not
  // compute).
  std::vector<ProcessEnergy> processes;
};

// Splits `measured_energy_mj`, one GPU's energy over an interval of
// `duration`, into idle, the processes' shares and unattributed, by the rule
// at the top of this file. `idle_power_mw` is the GPU's idle power estimate
// (IdlePowerEstimator::IdlePowerMw()); idle energy is idle_power_mw x
// duration rounded down to a millijoule, plus `idle_carry_mj`, and never
// more than measured.
//
// Why a carry: a real energy counter advances in steps (the driver updates
// it every few to hundreds of ms), and the caller's clock and the counter
// read are never at one instant. An interval then measures a little less or
// a little more than the GPU drew in it. Without a carry the shortfall of
// one interval is lost to idle and the excess of the next is read as
// activity, so an idle GPU shows a steady active power. Passing the previous
// interval's idle_shortfall_mj (the tracker bounds it to one second of idle
// power) makes the excess that follows a shortfall idle again.
// Samples may name a process several times (several driver samples); its
// utilizations are summed. No samples: the active part is unattributed.
// Errors (kInvalidArgument, naming the value): negative measured energy,
// negative duration, a negative carry, a utilization that is not a finite number between 0
// and 100.
Result<IntervalAttribution> AttributeInterval(std::int64_t measured_energy_mj, std::chrono::nanoseconds duration,
                                              std::uint32_t idle_power_mw,
                                              std::span<const ProcessUtilizationSample> samples,
                                              std::int64_t idle_carry_mj = 0);

// Where an IdlePowerEstimator's figure comes from.
enum class IdlePowerSource : std::uint8_t {
  kNone,              // no operator value and no sample yet: 0 mW (all energy active)
  kOperator,          // IdlePowerOptions::idle_power_mw_by_model
  kTrailingMinimum,   // the lowest power sample in the trailing window
};
std::string_view IdlePowerSourceName(IdlePowerSource source);  // "none", "operator", "trailing_minimum"

struct IdlePowerOptions {
  // Operator-set idle power in mW per GPU model name (the name as the
  // driver gives it, e.g. "NVIDIA H100 80GB HBM3"; matched exactly). A
  // model listed here always uses its value; samples are then ignored.
  std::map<std::string, std::uint32_t, std::less<>> idle_power_mw_by_model;
  // Without an operator value, the estimate is the lowest power sample whose
  // time is within `window` of the newest sample (newest - window, newest].
  // Ten minutes by default: long enough to include the pauses between a
  // job's phases and between jobs, short enough to follow a change of
  // clocks or temperature. Must be > 0.
  std::chrono::nanoseconds window = std::chrono::minutes(10);
};

// One GPU's idle power estimate. Feed it the GPU's power samples (e.g.
// PowerSample::time and instant_mw of a PowerMonitor) in time order; it
// keeps the trailing window's minimum in a monotonic queue, so AddSample is
// amortized O(1) and IdlePowerMw O(1). Memory: at most one entry per sample
// in the window, in practice a handful (a sample removes every earlier one
// at or above its power).
// Thread-compatible: the caller serializes calls on one object.
class IdlePowerEstimator {
 public:
  // `model` is the GPU's model name, looked up in the operator's table.
  // Errors: kInvalidArgument when options.window <= 0.
  static Result<IdlePowerEstimator> Create(std::string_view model, const IdlePowerOptions& options);

  // Adds a power sample taken at `time` (a zeus::Clock time). Errors:
  // kInvalidArgument when `time` is before the previous sample's (the
  // sample is not added).
  Status AddSample(std::chrono::nanoseconds time, std::uint32_t power_mw);

  // The estimate now: the operator's value, else the trailing window's
  // minimum, else 0 before any sample.
  std::uint32_t IdlePowerMw() const;
  IdlePowerSource source() const;

 private:
  struct Entry {
    std::chrono::nanoseconds time;
    std::uint32_t power_mw;
  };
  IdlePowerEstimator(std::optional<std::uint32_t> operator_mw, std::chrono::nanoseconds window)
      : operator_mw_(operator_mw), window_(window) {}

  std::optional<std::uint32_t> operator_mw_;
  std::chrono::nanoseconds window_;
  // Samples in the window whose power is below every later sample's:
  // increasing in time and in power; the front is the minimum.
  std::deque<Entry> minima_;
  std::optional<std::chrono::nanoseconds> last_time_;
};

struct AttributionLedgerOptions {
  // An entry whose process was in no interval of its GPU for this long
  // (last_seen + retention <= now) is ended: it is dropped and its energy
  // moves to the GPU's ended_energy_mj, so an exporter's series of it
  // disappear. Five minutes by default: longer than a scrape interval and a
  // driver hiccup, short enough that a node running many short jobs sheds
  // their series. Must be > 0.
  std::chrono::nanoseconds retention = std::chrono::minutes(5);
  // The most (GPU, process) entries alive at once, over all GPUs (a ledger
  // serves one node). A process that would exceed it gets no entry: its
  // share goes to its GPU's other_energy_mj. It gets an entry at its first
  // interval after room is made (entries ended), from then on; what went to
  // `other` stays there. The per-GPU totals (and so `other`) are outside the
  // cap: a snapshot has at most max_entries + number of GPUs series.
  std::size_t max_entries = 1000;
  // Time for retention. Must outlive the ledger. Null: SteadyClock().
  const Clock* clock = nullptr;
};

// One (GPU, process) entry: the process's energy on that GPU since its
// entry was made.
struct ProcessEnergyEntry {
  std::size_t gpu_index = 0;
  ProcessKey process;
  std::int64_t energy_mj = 0;
  std::chrono::nanoseconds last_seen{0};  // clock time of its last interval
};

// One GPU's totals since the ledger began. Invariant, per GPU:
// measured = idle + unattributed + other + ended + sum of its live entries.
struct GpuEnergyTotals {
  std::size_t gpu_index = 0;
  std::int64_t measured_energy_mj = 0;
  std::int64_t idle_energy_mj = 0;
  std::int64_t unattributed_energy_mj = 0;
  // Shares of processes that found the ledger full (max_entries).
  std::int64_t other_energy_mj = 0;
  // Energy of entries dropped after `retention` (ended processes).
  std::int64_t ended_energy_mj = 0;
};

struct AttributionSnapshot {
  std::vector<GpuEnergyTotals> gpus;         // in gpu_index order
  std::vector<ProcessEnergyEntry> processes;  // in (gpu_index, process) order
};

// Cumulative energy per (GPU, process) over many intervals, for output.
// Thread-safe (internally locked); AttributeInterval runs outside it.
class AttributionLedger {
 public:
  // Errors: kInvalidArgument for a retention <= 0.
  static Result<std::unique_ptr<AttributionLedger>> Create(AttributionLedgerOptions options = {});
  ~AttributionLedger();
  AttributionLedger(const AttributionLedger&) = delete;
  AttributionLedger& operator=(const AttributionLedger&) = delete;

  // Adds one interval of GPU `gpu_index` (any number the caller uses for its
  // GPUs, e.g. the GpuSet index), stamping its processes as seen now.
  // Errors: kInvalidArgument when `interval` breaks IntervalAttribution's
  // invariant (nothing is added).
  Status Add(std::size_t gpu_index, const IntervalAttribution& interval);

  // Drops the entries ended by now, then returns every GPU's totals and
  // every live entry.
  AttributionSnapshot Snapshot();

 private:
  struct Impl;
  explicit AttributionLedger(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::monitor

#endif  // ZEUS_MONITOR_ATTRIBUTION_H_
