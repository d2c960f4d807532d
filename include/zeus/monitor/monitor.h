// Copyright 2026 The Zeus C++ Authors.
//
// zeus::Monitor: energy and time of named measurement windows over chosen
// GPUs and CPUs.
//
//   auto monitor = zeus::monitor::Monitor::Create(gpus.get(), cpus.get(), {}).value();
//   monitor->BeginWindow("epoch_1");
//   ... train ...
//   auto m = monitor->EndWindow("epoch_1");   // m->time_s, m->gpus[i].energy_j, ...
//
// Windows may overlap and nest; each name has its own start snapshot.
//
// How energy is obtained, per GPU:
//   * kCounter: the driver's energy counter (Volta and newer), end - begin.
//   * kIntegratedPower: for GPUs without a counter, a PowerMonitor owned by
//     this Monitor samples power and the window integrates it
//     (hold-last-value, clipped at the window's edges).
// A window shorter than the counter's update period may see the counter not
// move; then (and whenever the counter did not move in a non-empty window)
// the energy is estimated as instant power x duration and marked `uncertain`
// (never a silent 0). A counter that goes backwards (driver
// reload) or a GPU that fails mid-window gives an error for that GPU only;
// the other devices' results are kept.
//
// Thread-safety: all methods may be called from any thread; one Monitor can
// serve a whole training process.

#ifndef ZEUS_MONITOR_MONITOR_H_
#define ZEUS_MONITOR_MONITOR_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/device/soc.h"
#include "zeus/monitor/power_monitor.h"

namespace zeus::monitor {

enum class EnergySource : std::uint8_t {
  kCounter,           // the device's energy counter
  kIntegratedPower,   // integrated power samples
  kInstantEstimate,   // instant power x duration (window too short for the counter)
};
std::string_view EnergySourceName(EnergySource source);  // "counter", "integrated_power", "instant_estimate"

struct GpuMeasurement {
  std::size_t index = 0;  // GpuSet index
  double energy_j = 0.0;  // 0 when `error` is set
  EnergySource source = EnergySource::kCounter;
  // The figure may be off by more than the usual accuracy: the window was
  // shorter than the counter's update period, or power samples did not cover
  // it (too short, or a power read slow or hung in it: see
  // PowerMonitorOptions::late_read_after).
  bool uncertain = false;
  std::optional<Error> error;  // this GPU's failure; the other devices are still valid
};

struct CpuMeasurement {
  std::size_t index = 0;  // CpuSet index
  double package_energy_j = 0.0;
  std::optional<double> dram_energy_j;  // absent without a DRAM domain
  bool uncertain = false;               // a counter wrap may have been missed
  std::optional<Error> error;
};

// An SoC's energy in one window, in mJ (Zeus's SoC unit). A kind is absent
// when the SoC has no rail of that kind, or when a read of its rail failed
// during the window (its energy is then unknown, and `errors` holds the
// failure, naming the file); the other kinds are still measured.
struct SocMeasurement {
  std::optional<double> cpu_energy_mj;
  std::optional<double> gpu_energy_mj;
  std::optional<double> total_energy_mj;
  std::vector<Error> errors;
};

struct Measurement {
  std::string name;
  double time_s = 0.0;  // elapsed, monotonic clock
  std::vector<GpuMeasurement> gpus;
  std::vector<CpuMeasurement> cpus;
  // Present when the Monitor measures an SoC (MonitorOptions::soc); zeros
  // for a cancelled window.
  std::optional<SocMeasurement> soc;
  // Sum of every valid GPU, package and DRAM figure (not the SoC's: its
  // rails overlap each other and may include the GPU and CPU).
  double total_energy_j = 0.0;
  bool cancelled = false;
};

struct MonitorOptions {
  // GpuSet indices to measure; nullopt: all. Empty: none.
  std::optional<std::vector<std::size_t>> gpu_indices;
  // CpuSet indices; nullopt: all.
  std::optional<std::vector<std::size_t>> cpu_indices;
  // Called before readings at begin and end, to wait for queued device work
  // (e.g. torch.cuda.synchronize). Optional.
  std::function<void()> sync;
  // Append one CSV row per ended (not cancelled) window to this file.
  std::optional<std::string> log_csv_path;
  // The energy counter's update period, below which a window is uncertain.
  std::chrono::nanoseconds counter_update_period = std::chrono::milliseconds(100);
  // Options of the PowerMonitor started for GPUs without an energy counter.
  PowerMonitorOptions power_monitor;
  // Use this running PowerMonitor instead of starting one (it must monitor
  // every GPU without a counter, over the same GpuSet, and outlive the
  // Monitor). Lets a tool that already samples power for a timeline share it.
  PowerMonitor* power_source = nullptr;
  // Must outlive the Monitor. Null: SteadyClock().
  const Clock* clock = nullptr;
  // An SoC (NVIDIA Jetson) to measure in every window, read at each window's
  // begin and end with the other devices. Null: none. Must outlive the
  // Monitor; its clock should be `clock`, so its energy and the windows'
  // times agree.
  device::Soc* soc = nullptr;
};

class Monitor {
 public:
  // `gpus` and `cpus` may be null (nothing of that kind is measured) and must
  // outlive the Monitor. Errors: kInvalidArgument for an index out of range;
  // an I/O error if the CSV log cannot be opened.
  static Result<std::unique_ptr<Monitor>> Create(const device::GpuSet* gpus, const device::CpuSet* cpus,
                                                 MonitorOptions options = {});
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // Starts the window `name`. kAlreadyExists if a window of that name is open.
  // With restart, an open window of that name is replaced by the new one
  // (its start is dropped) instead: concurrent restarts of one name never
  // fail, the last one wins.
  Status BeginWindow(std::string_view name, bool restart = false);
  // Ends it and returns its measurement. kNotFound for a name never begun.
  // With cancel, the window is dropped: the measurement has cancelled = true
  // and zero figures, and nothing is logged.
  Result<Measurement> EndWindow(std::string_view name, bool cancel = false);
  // Ends the window `name` like EndWindow and begins it again from the same
  // end reading, so consecutive calls tile time: no energy between them is
  // lost or counted twice (for periodic sub-windows).
  Result<Measurement> EndWindowAndRestart(std::string_view name);
  // Names of the windows open now.
  std::vector<std::string> OpenWindows() const;

  const std::vector<std::size_t>& gpu_indices() const;
  const std::vector<std::size_t>& cpu_indices() const;
  // The PowerMonitor for GPUs without an energy counter (null if none).
  PowerMonitor* power_monitor() const;

 private:
  struct Impl;
  explicit Monitor(std::unique_ptr<Impl> impl);
  Result<Measurement> End(std::string_view name, bool cancel, bool restart);
  std::unique_ptr<Impl> impl_;
};

// RFC 4180 quoting for one CSV field (quotes fields with commas, quotes or
// line breaks; doubles embedded quotes).
std::string CsvEscape(std::string_view field);

}  // namespace zeus::monitor

#endif  // ZEUS_MONITOR_MONITOR_H_
