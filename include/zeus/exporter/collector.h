// Copyright 2026 The Zeus C++ Authors.
//
// zeus::exporter::Collector: the Prometheus metrics of one host's devices,
// for `zeus exporter` and (later) zeusd's `--enable metrics`.
//
// Metrics (base units, Prometheus naming rules), every series labelled
// `hostname`:
//   zeus_gpu_power_watts{gpu,uuid,model}            gauge, latest sampled power
//   zeus_gpu_power_limit_watts{gpu,uuid,model}      gauge, read at scrape time
//   zeus_gpu_temperature_celsius{gpu,uuid,model}    gauge, latest sampled
//   zeus_gpu_energy_joules_total{gpu,uuid,model}    counter: the driver's
//       energy counter (Volta and newer), else the sampled power integrated
//   zeus_cpu_energy_joules_total{package}           counter (RAPL, wraps folded in)
//   zeus_dram_energy_joules_total{package}          counter (packages with DRAM)
//   zeus_device_up{device="gpu",gpu,uuid,model}     1 when every read of the
//   zeus_device_up{device="cpu",package}            device succeeded, else 0
//   zeus_exporter_scrape_duration_seconds           gauge, this collection
//   process_cpu_seconds_total, process_resident_memory_bytes,
//   process_virtual_memory_bytes, process_start_time_seconds, process_open_fds
//
// With `per_process` (`zeus exporter --per-process`), per-process GPU energy
// from a monitor::ProcessEnergyTracker sampled every `sample_interval` (read
// zeus/monitor/attribution.h for what the model can and cannot tell):
//   zeus_gpu_process_energy_joules_total{gpu,uuid,pid,comm,user,slurm_job_id,
//       pod,container}   counter: the process's share of the GPU's active
//       energy since its series appeared; labels it lacks are ""
//   zeus_gpu_idle_energy_joules_total{gpu,uuid}   counter: below idle power
//   zeus_gpu_unlisted_energy_joules_total{gpu,kind,uuid}   counter: active
//       energy in no live process series: kind="unattributed" (no process
//       had utilization), "other" (processes that found max_entries series
//       alive), "ended" (processes whose series were dropped)
//   zeus_gpu_attributed_energy_joules_total{gpu,uuid}   counter: the energy
//       the attribution measured since the exporter started
//   zeus_exporter_process_series   gauge: process series in this scrape
// How they add up: at every scrape, exactly (millijoules), per GPU,
//   sum by (gpu) (zeus_gpu_process_energy_joules_total)
//     + zeus_gpu_idle_energy_joules_total
//     + sum by (gpu) (zeus_gpu_unlisted_energy_joules_total)
//     == zeus_gpu_attributed_energy_joules_total,
// and the attributed counter grows as zeus_gpu_energy_joules_total does
// (it counts from the exporter's first sample, and lags it by at most one
// sample interval's energy), so their increase() over a range agree. Sum the
// parts as counters, not their increase(): a process series dropped after
// the retention moves its whole total into kind="ended" at once.
// Retention: a process in no interval of its GPU for
// process_energy.ledger.retention (5 min by default) has its series dropped
// from the next scrape on. Cap: at most process_energy.ledger.max_entries
// (1000 by default) process series over all GPUs; a process past it has no
// series (its energy is kind="other") until series end. A PID reused within
// the retention by a process with the same labels on the same GPU shares
// its series.
//
// A device whose reads fail keeps its zeus_device_up series (at 0) and loses
// only its value series; the other devices are unaffected. Each change of a
// device's state is logged once. A GPU whose driver call hangs counts as a
// failed read: a scrape reads each GPU on a thread of its own and waits at
// most `device_timeout` for it (then the GPU is down, "did not answer"); a
// GPU still inside a call from an earlier scrape is down at once; and a GPU
// whose newest power sample is older than max(10 sample intervals, 5 s) is
// down ("no power sample for N s"), so one hung GPU never stalls a scrape. Label values are bounded: indices, UUIDs and
// model names of the devices opened at construction.
//
// Power and temperature come from a PowerMonitor sampling every GPU at
// `sample_interval`; a scrape reads only the energy counters and limits, so
// its cost does not grow with the sampling rate.
//
// Thread-safety: Scrape() may be called from several threads at once.

#ifndef ZEUS_EXPORTER_COLLECTOR_H_
#define ZEUS_EXPORTER_COLLECTOR_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "zeus/base/error.h"
#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/monitor/process_energy.h"

namespace zeus::exporter {

// Receives one log line (no trailing newline). Null: the process's log seam
// (zeus/base/log.h), component "exporter".
using LogFunction = std::function<void(std::string_view)>;

struct CollectorOptions {
  // Power and temperature sampling period.
  std::chrono::nanoseconds sample_interval = std::chrono::milliseconds(100);
  // The `hostname` label; empty: gethostname().
  std::string hostname;
  // How long a scrape waits for one GPU's reads (limit, energy counter).
  std::chrono::milliseconds device_timeout{1000};
  LogFunction log;
  // When set (`zeus exporter --carbon ZONE`): zeus_gpu_emissions_grams_total,
  // each GPU's energy counter times this intensity (gCO2eq/kWh, the zone's
  // yearly average from zeus::carbon), labelled zone=carbon_zone.
  std::optional<double> carbon_intensity_g_per_kwh;
  std::string carbon_zone;
  // Per-process GPU energy (`zeus exporter --per-process`): the metrics
  // above, from a tracker with `process_energy` (its retention, series cap,
  // idle power per model, proc root and clock; a null clock: the GPUs'
  // driver clock, else the steady clock). Ignored without GPUs.
  bool per_process = false;
  monitor::ProcessEnergyOptions process_energy;
  // Trust, but check (zeus/monitor/counter_check.h): at Create, each GPU's
  // energy counter against its power on the GPU's own scrape thread, at most
  // this long in all; a counter that disagrees is not used (its energy is
  // integrated from power instead, one logged line). Zero: no check.
  std::chrono::milliseconds energy_counter_check_deadline{0};
};

class Collector {
 public:
  // `gpus` and `cpus` may be null (no such devices) and must outlive the
  // Collector. Errors: kInvalidArgument for a sample_interval <= 0.
  static Result<std::unique_ptr<Collector>> Create(const device::GpuSet* gpus, const device::CpuSet* cpus,
                                                   CollectorOptions options = {});
  ~Collector();  // stops the sampling threads
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // The metrics now, in the Prometheus text exposition format 0.0.4.
  std::string Scrape() const;

  // Internal: the prometheus-cpp view of this collector (see src/exporter/).
  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  explicit Collector(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// Serves a Collector's metrics at http://<listen>/metrics (GET and HEAD;
// other paths 404, other methods 405) on the project's HTTP server
// (src/http, asynchronous): an idle or slow connection holds no thread, so a
// port scanner or a load balancer's open connections never delay a scrape.
// At most 256 connections are open at once (past that: 503 and close), and
// one idle for 10 s is closed.
class MetricsServer {
 public:
  // `listen` is "ADDR:PORT" (port 0: any free port, see port()). The
  // collector must outlive the server. Errors: kInvalidArgument for a
  // malformed address; kUnavailable when it cannot be bound.
  static Result<std::unique_ptr<MetricsServer>> Start(const Collector& collector, const std::string& listen);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The port actually bound.
  int port() const;

 private:
  struct Impl;
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::exporter

#endif  // ZEUS_EXPORTER_COLLECTOR_H_
