// Copyright 2026 The Zeus C++ Authors.
//
// The per-process part of the Collector (`zeus exporter --per-process`,
// private to src/exporter): a monitor::ProcessEnergyTracker sampled on a
// thread of its own, and its ledger as Prometheus families. The metrics and
// how they add up are documented in zeus/exporter/collector.h.
//
// Each Append() takes one Snapshot() of the ledger, which drops the entries
// ended by then (retention), so a dropped entry's series is absent from that
// scrape on: the families are built afresh at each scrape, nothing is
// registered. Live entries whose exported labels coincide (a PID reused
// within the retention by a process with the same command, user and
// workload on the same GPU) are summed into one series.
//
// Thread-safety: Append() may be called from several threads at once and
// while the sampling thread runs; Sample() must not overlap itself (it is
// called only by the sampling thread, or by a test that started none).

#ifndef ZEUS_SRC_EXPORTER_PROCESS_COLLECTOR_H_
#define ZEUS_SRC_EXPORTER_PROCESS_COLLECTOR_H_

#include <prometheus/metric_family.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/device/gpu.h"
#include "zeus/monitor/process_energy.h"

namespace zeus::exporter {

class ProcessCollector {
 public:
  // The labels of GPU i: gpu_index[i] and gpu_uuid[i]; both as long as
  // `gpus`. `gpus` must outlive the collector. Errors: the tracker's
  // (kInvalidArgument for bad options).
  static Result<std::unique_ptr<ProcessCollector>> Create(const device::GpuSet& gpus,
                                                          std::vector<std::string> gpu_index,
                                                          std::vector<std::string> gpu_uuid, std::string hostname,
                                                          monitor::ProcessEnergyOptions options);
  ~ProcessCollector();  // stops the sampling (waits for a Sample() in progress)
  ProcessCollector(const ProcessCollector&) = delete;
  ProcessCollector& operator=(const ProcessCollector&) = delete;

  // Calls Sample() now and then every `interval` (wall time) on a thread of
  // its own (monitor::PeriodicProcessSampler), until destroyed. At most once.
  void StartSampling(std::chrono::nanoseconds interval);
  // One tick: the tracker's Sample().
  void Sample();

  // Appends zeus_gpu_process_energy_joules_total, zeus_gpu_idle_energy_joules_total,
  // zeus_gpu_unlisted_energy_joules_total, zeus_gpu_attributed_energy_joules_total
  // and zeus_exporter_process_series to `families`.
  void Append(std::vector<prometheus::MetricFamily>& families) const;

 private:
  ProcessCollector() = default;

  std::unique_ptr<monitor::ProcessEnergyTracker> tracker_;
  std::vector<std::string> gpu_index_, gpu_uuid_;
  std::string hostname_;
  std::unique_ptr<monitor::PeriodicProcessSampler> sampler_;  // declared last: stopped first
};

}  // namespace zeus::exporter

#endif  // ZEUS_SRC_EXPORTER_PROCESS_COLLECTOR_H_
