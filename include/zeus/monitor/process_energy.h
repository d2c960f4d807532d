// Copyright 2026 The Zeus C++ Authors.
//
// ProcessEnergyTracker: per-process GPU energy on a shared node, the one
// implementation behind `zeus exporter --per-process`, `zeus monitor
// --per-process`, `zeus top` and Python. It drives the model of
// zeus/monitor/attribution.h (read that file's limits first) from the GPUs'
// own readings, and names each process (zeus/device/process_identity.h).
//
// Each Sample() reads, per GPU:
//   1. the energy since the previous Sample(): the driver's cumulative counter
//      (Volta and newer), else the power reading times the time since the
//      previous Sample() (hold-last-value);
//   2. the power, fed to the GPU's IdlePowerEstimator;
//   3. the processes with a compute context (RunningProcesses) and the
//      driver's per-process utilization samples newer than the newest one
//      already seen (ProcessUtilization).
// and splits the energy by AttributeInterval into the ledger. The first
// Sample() only sets the baseline.
//
// Utilization between driver samples. The driver samples per-process
// utilization every 1/6 s to 1 s, so at 10 Hz most intervals see no new
// sample. An interval with no new sample is split by the most recent
// samples if they came at most `max_sample_age` ago (the shares carry
// forward until the driver's next sample), else its active energy is
// unattributed. A running process without a sample in the
// interval is listed with utilization 0 (seen, share 0).
//
// Who a process is. A PID is identified (IdentifyProcess) when it first
// appears, and its start time is re-read at most every `identity_refresh`:
// a PID the kernel reused for another process becomes a new ProcessKey. A
// process that the reader cannot see (another PID namespace, exited between
// calls) keeps its energy under its PID with start time 0 and empty labels;
// a process whose /proc files are unreadable (another user's, hidepid) gets
// the labels that could be read.
//
// Faults. A GPU whose energy read fails gets no interval this time (its
// LastIntervals() entry holds the error; the energy is counted in the next
// good interval, from the counter). A GPU that refuses the per-process calls
// (kNotSupported, or any error) still has its total, idle and unattributed
// parts; the error is in its view and logged once. Nothing is dropped: per
// GPU, the ledger's totals add up to the measured energy (attribution.h).
//
// Thread-safety: Sample() calls must not overlap (one sampling thread);
// Snapshot(), LastIntervals() and Labels() may be called from any thread at
// any time.

#ifndef ZEUS_MONITOR_PROCESS_ENERGY_H_
#define ZEUS_MONITOR_PROCESS_ENERGY_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/device/gpu.h"
#include "zeus/device/process_identity.h"
#include "zeus/monitor/attribution.h"

namespace zeus::monitor {

// What a process is labelled with; empty strings where unknown.
struct ProcessLabels {
  std::string comm;
  std::string user;
  std::string slurm_job_id;  // the numeric ID, else the SLUID
  std::string slurm_step;
  std::string pod;        // Kubernetes pod UID
  std::string container;  // container ID
  std::string systemd_unit;
  std::optional<std::uint32_t> parent_pid;
};

// The labels of an identity (e.g. the tracker's, or a caller's own).
ProcessLabels LabelsOf(const device::ProcessIdentity& identity);

struct ProcessEnergyOptions {
  IdlePowerOptions idle;
  // Retention and the cap on (GPU, process) entries. Its clock is ignored:
  // the tracker's clock below is used.
  AttributionLedgerOptions ledger;
  device::ProcessIdentityOptions identity;
  std::chrono::nanoseconds max_sample_age = std::chrono::seconds(2);
  std::chrono::nanoseconds identity_refresh = std::chrono::seconds(2);
  // Times the intervals. Null: the GPUs' driver clock where they have one
  // (the emulator's), else SteadyClock(). Must outlive the tracker.
  const Clock* clock = nullptr;
  // Called (on the sampling thread) once for each new process key, after it
  // is identified, while the process is most likely still alive: `zeus
  // monitor --per-process` uses it to tell which keys belong to its command's
  // process tree. May be null.
  std::function<void(const ProcessKey&, const device::ProcessIdentity&)> on_new_process;
};

// One GPU's most recent interval, for live views (`zeus top`).
struct GpuIntervalView {
  std::size_t gpu_index = 0;
  std::chrono::nanoseconds duration{0};  // 0 before the first interval
  IntervalAttribution split;
  std::optional<std::uint32_t> power_mw;  // the last power reading
  std::uint32_t idle_power_mw = 0;
  IdlePowerSource idle_source = IdlePowerSource::kNone;
  // Why the interval or its per-process part is missing (the energy read's
  // error, else the per-process calls' error).
  std::optional<Error> error;
};

class ProcessEnergyTracker {
 public:
  // `gpus` must outlive the tracker. Errors: kInvalidArgument for bad
  // options (a retention, window or age <= 0).
  static Result<std::unique_ptr<ProcessEnergyTracker>> Create(const device::GpuSet& gpus,
                                                              ProcessEnergyOptions options = {});
  ~ProcessEnergyTracker();
  ProcessEnergyTracker(const ProcessEnergyTracker&) = delete;
  ProcessEnergyTracker& operator=(const ProcessEnergyTracker&) = delete;

  // One round over every GPU (see the top of this file). Never fails as a
  // whole: a GPU's error is in its view.
  void Sample();

  // The ledger: every GPU's totals and every live (GPU, process) entry.
  AttributionSnapshot Snapshot();
  // Every GPU's most recent interval, in GPU order.
  std::vector<GpuIntervalView> LastIntervals() const;
  // The labels of a process key seen by this tracker (empty when unknown).
  ProcessLabels Labels(const ProcessKey& process) const;

 private:
  struct Impl;
  explicit ProcessEnergyTracker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Calls tracker.Sample() at once and then every `interval` (wall time) on a
// thread of its own, until Stop() or destruction, which take one last
// Sample() so that a report made after them covers everything up to then.
// The one sampling loop of `zeus monitor --per-process`, the exporter and
// Python. `tracker` must outlive the sampler. Thread-safety: Stop() may be
// called from any thread, more than once.
class PeriodicProcessSampler {
 public:
  PeriodicProcessSampler(ProcessEnergyTracker& tracker, std::chrono::nanoseconds interval);
  ~PeriodicProcessSampler();
  PeriodicProcessSampler(const PeriodicProcessSampler&) = delete;
  PeriodicProcessSampler& operator=(const PeriodicProcessSampler&) = delete;
  void Stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace zeus::monitor

#endif  // ZEUS_MONITOR_PROCESS_ENERGY_H_
