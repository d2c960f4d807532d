// Copyright 2026 The Zeus C++ Authors.
//
// The Collector's state and its prometheus-cpp face (private to
// src/exporter): MetricsServer registers `collectable` with an Exposer.

#ifndef ZEUS_SRC_EXPORTER_COLLECTOR_IMPL_H_
#define ZEUS_SRC_EXPORTER_COLLECTOR_IMPL_H_

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/serial_worker.h"
#include "exporter/process_collector.h"
#include "zeus/exporter/collector.h"
#include "zeus/monitor/power_monitor.h"

namespace zeus::exporter {

struct Collector::Impl {
  struct GpuInfo {
    std::string index, uuid, model;
    bool has_counter = false;
  };
  const device::GpuSet* gpus = nullptr;
  const device::CpuSet* cpus = nullptr;
  const Clock* clock = nullptr;
  std::string hostname;
  LogFunction log;
  std::vector<GpuInfo> gpu_info;
  std::unique_ptr<monitor::PowerMonitor> power_monitor;  // null without GPUs
  std::chrono::nanoseconds sample_interval{0};
  std::chrono::milliseconds device_timeout{1000};
  std::optional<double> carbon_intensity_g_per_kwh;
  std::string carbon_zone;
  std::vector<std::unique_ptr<base::SerialWorker>> gpu_readers;  // one per GPU: scrape reads
  std::shared_ptr<prometheus::Collectable> collectable;
  std::unique_ptr<ProcessCollector> processes;  // --per-process with GPUs, else null

  mutable std::mutex state_mu;
  mutable std::vector<bool> gpu_up, cpu_up;  // last reported state, guarded by state_mu

  // Abandons a reader still inside a hung call after device_timeout.
  ~Impl();

  std::vector<prometheus::MetricFamily> Collect() const;
  // Appends each CPU package's energy counters and its zeus_device_up to the families.
  void CollectCpus(prometheus::MetricFamily& cpu_energy, prometheus::MetricFamily& dram_energy,
                   prometheus::MetricFamily& up) const;
  // Logs a device's state change (once per change).
  void ReportState(bool gpu, std::size_t index, bool up, const std::string& why) const;
};

}  // namespace zeus::exporter

#endif  // ZEUS_SRC_EXPORTER_COLLECTOR_IMPL_H_
