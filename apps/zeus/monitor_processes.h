// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor --per-process -- CMD`: the energy of CMD's process tree on
// each GPU, next to the GPU's total, from a ProcessEnergyTracker
// (zeus/monitor/process_energy.h: a model, with the limits stated there)
// sampled on a thread of its own while the command runs.
//
// The command's tree is every process whose chain of parents reaches this
// `zeus` process, checked when a process first shows up on a GPU. A process
// that left the tree before it used a GPU (a daemon that double-forked,
// re-parented to init) counts as another process.

#ifndef ZEUS_APPS_ZEUS_MONITOR_PROCESSES_H_
#define ZEUS_APPS_ZEUS_MONITOR_PROCESSES_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/device/gpu.h"

namespace zeus::cli {

class ProcessTreeMeasurement {
 public:
  // Starts sampling every GPU of `gpus` (which must outlive the result) at
  // `interval` on `clock`; the report covers `gpu_indices`.
  static Result<std::unique_ptr<ProcessTreeMeasurement>> Start(const device::GpuSet& gpus,
                                                               std::vector<std::size_t> gpu_indices,
                                                               std::chrono::nanoseconds interval, const Clock* clock);
  ~ProcessTreeMeasurement();  // stops the thread

  // Takes a last sample and stops sampling. Idempotent.
  void Stop();

  // Per GPU of gpu_indices: {"index", "measured_energy_j", "command_energy_j",
  // "other_processes_energy_j", "idle_energy_j", "unattributed_energy_j",
  // "idle_power_source", "error", "processes": [{"pid", "comm", "user",
  // "energy_j", "command"}]}, processes by energy, largest first.
  nlohmann::json Report() const;
  // The same as table rows for the text report.
  static std::string Text(const nlohmann::json& report);

 private:
  struct Impl;
  explicit ProcessTreeMeasurement(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_MONITOR_PROCESSES_H_
