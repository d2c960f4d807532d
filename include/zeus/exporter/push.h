// Copyright 2026 The Zeus C++ Authors.
//
// Zeus's Prometheus push helpers (zeus/metric.py), with Zeus's metric names
// and labels so that existing dashboards keep working:
//
//   EnergyHistogram          energy_monitor_{gpu,cpu,dram}_energy_joules    histogram {window, index}
//   EnergyCumulativeCounter  energy_monitor_{gpu,cpu,dram}_energy_joules    counter   {window, index}
//   PowerGauge               power_monitor_gpu_power_watts                  gauge     {window, index}
//
// Each pushes its registry to a Pushgateway under a job name (HTTP PUT of
// /metrics/job/<job>, prometheus-cpp's Gateway::Push, like Zeus's
// push_to_gateway). Pushes run on a background thread of the helper: the
// caller's thread never waits for the network. Requests that arrive while a
// push is in flight are coalesced into one push of the newest values. A
// failed push (gateway unreachable, an HTTP error) is logged at most once per
// window and never reported to the caller.
//
// The DRAM family exists only when a measured CPU has a DRAM domain.
//
// Thread-safety: the methods of one helper may be called from any thread.

#ifndef ZEUS_EXPORTER_PUSH_H_
#define ZEUS_EXPORTER_PUSH_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/device/gpu.h"
#include "zeus/exporter/collector.h"
#include "zeus/monitor/monitor.h"

namespace zeus::exporter {

struct PushTarget {
  // "http://host:port", "https://host:port" or "host:port" (http). Without a
  // port: 80 for http, 443 for https.
  std::string pushgateway_url;
  // The Pushgateway job label; not empty.
  std::string job;
  // Receives the helper's log lines instead of the process's log seam
  // (zeus/base/log.h, component "metric"). Null: the seam.
  LogFunction log;
  // How long the destructor waits for pushes still queued or in flight
  // (e.g. a gateway that accepts connections and never answers) before
  // leaving them to finish on their own.
  std::chrono::milliseconds flush_timeout{5000};
};

// Zeus's default bucket upper bounds, joules.
struct EnergyBuckets {
  std::vector<double> gpu{50, 100, 200, 500, 1000};
  std::vector<double> cpu{10, 50, 100, 500, 1000};
  std::vector<double> dram{5, 10, 20, 50, 150};
};

class Pusher;  // src/exporter/pusher.h

// Observes each window's energy per GPU, CPU package and DRAM into a
// histogram and pushes. A value above the largest bucket or below the
// smallest is logged as a user warning (it still lands in +Inf / the first
// bucket) whose text names the kind of device, the window and the bucket
// bound but not the value, so that a reader's "show once" filter (Python's
// default) shows a repeat once.
class EnergyHistogram {
 public:
  // `monitor` measures (its GPUs and CPUs) and must outlive the helper.
  // Errors: kInvalidArgument for an empty or unsorted bucket list, an empty
  // job or a malformed URL.
  static Result<std::unique_ptr<EnergyHistogram>> Create(monitor::Monitor& monitor, PushTarget target,
                                                         EnergyBuckets buckets = {});
  ~EnergyHistogram();
  EnergyHistogram(const EnergyHistogram&) = delete;
  EnergyHistogram& operator=(const EnergyHistogram&) = delete;

  // Begins the monitor window "__EnergyHistogram_<name>". kAlreadyExists if open.
  Status BeginWindow(std::string_view name);
  // Ends it, observes every device's energy, queues a push and returns the
  // measurement. kNotFound for a window not begun.
  Result<monitor::Measurement> EndWindow(std::string_view name);

  // Pushes attempted and failed so far (for tests and diagnostics).
  std::uint64_t pushes_attempted() const;
  std::uint64_t pushes_failed() const;

 private:
  struct Impl;
  explicit EnergyHistogram(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// While a window is open, a thread adds each device's energy to the counters
// every `update_period` and pushes. Sub-windows are chained with
// Monitor::EndWindowAndRestart, so no energy between them is lost; EndWindow
// adds the last partial period.
class EnergyCumulativeCounter {
 public:
  // Errors: kInvalidArgument for update_period <= 0, an empty job or a
  // malformed URL.
  static Result<std::unique_ptr<EnergyCumulativeCounter>> Create(monitor::Monitor& monitor,
                                                                 std::chrono::nanoseconds update_period,
                                                                 PushTarget target);
  ~EnergyCumulativeCounter();  // ends open windows
  EnergyCumulativeCounter(const EnergyCumulativeCounter&) = delete;
  EnergyCumulativeCounter& operator=(const EnergyCumulativeCounter&) = delete;

  // Starts counting under label window=<name>. kAlreadyExists if open.
  Status BeginWindow(std::string_view name);
  // Stops the window's thread after a final update and push. kNotFound
  // (Zeus: ValueError) for a window not begun.
  Status EndWindow(std::string_view name);

  std::uint64_t pushes_attempted() const;
  std::uint64_t pushes_failed() const;

 private:
  struct Impl;
  explicit EnergyCumulativeCounter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// While a window is open, a thread sets each GPU's latest sampled power every
// `update_period` and pushes. GPUs only.
class PowerGauge {
 public:
  // Samples gpus.gpu(i) for i in gpu_indices (all when empty); `gpus` must
  // outlive the helper. Errors: kInvalidArgument as above or for a bad index.
  static Result<std::unique_ptr<PowerGauge>> Create(const device::GpuSet& gpus, std::vector<std::size_t> gpu_indices,
                                                    std::chrono::nanoseconds update_period, PushTarget target);
  ~PowerGauge();
  PowerGauge(const PowerGauge&) = delete;
  PowerGauge& operator=(const PowerGauge&) = delete;

  // kAlreadyExists (Zeus: ValueError) for a window already open.
  Status BeginWindow(std::string_view name);
  // kNotFound for a window not begun.
  Status EndWindow(std::string_view name);

  std::uint64_t pushes_attempted() const;
  std::uint64_t pushes_failed() const;

 private:
  struct Impl;
  explicit PowerGauge(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::exporter

#endif  // ZEUS_EXPORTER_PUSH_H_
