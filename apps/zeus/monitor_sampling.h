// Copyright 2026 The Zeus C++ Authors.
//
// What measures `zeus monitor`'s command: the devices it opened, the GPUs'
// power sampling (for --timeline, --plot and the peak), the energy window
// (pushed to a Pushgateway with --pushgateway) and zeusd's remote devices
// (--zeusd), all on one clock: the emulator's when the GPUs are emulated (its
// energy counters count emulated time, which a scenario may scale), else the
// steady clock.

#ifndef ZEUS_APPS_ZEUS_MONITOR_SAMPLING_H_
#define ZEUS_APPS_ZEUS_MONITOR_SAMPLING_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "apps/zeus/monitor_child.h"
#include "apps/zeus/monitor_flags.h"
#include "apps/zeus/monitor_processes.h"
#include "apps/zeus/monitor_zeusd.h"
#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/monitor/monitor.h"
#include "zeus/monitor/power_monitor.h"

namespace zeus::cli {

// The devices `zeus monitor` opened for its flags (OpenDevices).
struct Devices {
  std::unique_ptr<device::GpuSet> gpus;
  std::unique_ptr<device::CpuSet> cpus;
  std::vector<std::size_t> gpu_indices;
  std::vector<std::size_t> cpu_indices;
  std::vector<std::string> notes;  // for stderr: no driver, no RAPL, CPUs through zeusd
};

// One run of the command inside the window.
struct MeasuredRun {
  ChildOutcome child;
  monitor::Measurement measurement;
  std::chrono::nanoseconds start{};  // the window, on the measurement's clock
  std::chrono::nanoseconds end{};
  double wall_time_s = 0;  // the same run on the steady clock
};

class CommandMeasurement {
 public:
  // Starts sampling `devices` (which must outlive the result) as `flags` ask:
  // power every --interval-ms on the GPUs to measure, the window's monitor,
  // --pushgateway's histogram, --zeusd's streams (waiting up to 30 s for a
  // first reading of every remote device). Errors carry the ErrorCode of the
  // exit code: kInvalidArgument for a bad --pushgateway or token file,
  // kNotSupported for --pushgateway in a build without the exporter, else the
  // failing part's.
  static Result<std::unique_ptr<CommandMeasurement>> Start(const MonitorFlags& flags, const Devices& devices);
  ~CommandMeasurement();

  // Runs flags.command through `relay` (SignalRelay::Run, with
  // --kill-after) inside the window "command", then waits up to 5 s for the
  // remote devices' readings past its end. Errors: the child's (fork, wait)
  // or the window's.
  Result<MeasuredRun> Run(SignalRelay& relay, const MonitorFlags& flags);

  // Whether time and energy are the emulator's (its clock, not the wall's).
  bool emulator_clock() const { return emulator_clock_; }
  // The GPUs' power timelines; null without GPUs to measure.
  const monitor::PowerMonitor* power() const { return power_.get(); }
  // zeusd's devices; null without --zeusd.
  const RemoteMeasurement* remote() const { return remote_.get(); }
  // The command's process tree per GPU; null without --per-process.
  const ProcessTreeMeasurement* processes() const { return processes_.get(); }

 private:
  class Pusher;  // --pushgateway's EnergyHistogram, in builds with the exporter
  CommandMeasurement() = default;
  Status StartRemote(const MonitorFlags& flags);

  const Clock* clock_ = nullptr;
  bool emulator_clock_ = false;
  // Destroyed in reverse: the streams, the pusher, the monitor, then the sampler they read.
  std::unique_ptr<monitor::PowerMonitor> power_;
  std::unique_ptr<monitor::Monitor> monitor_;
  std::unique_ptr<Pusher> push_;
  std::unique_ptr<RemoteMeasurement> remote_;
  std::unique_ptr<ProcessTreeMeasurement> processes_;
};

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_MONITOR_SAMPLING_H_
