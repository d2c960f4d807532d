// Copyright 2026 The Zeus C++ Authors.
//
// The one power integrator of zeus::monitor: energy from power readings,
// hold-last-value (each reading's power is held until the next reading, as
// Zeus integrates). PowerMonitor's timelines, ProcessEnergyTracker's GPUs
// without a counter and the energy counter check (counter_check.h) all
// integrate through it, so they cannot disagree on the rule.
//
// Not thread-safe: its owner guards it.

#ifndef ZEUS_MONITOR_POWER_INTEGRAL_H_
#define ZEUS_MONITOR_POWER_INTEGRAL_H_

#include <chrono>
#include <optional>

namespace zeus::monitor {

class PowerIntegral {
 public:
  // Moves the integral to `time`, holding the current power over the gap,
  // and returns the energy added, in mJ. The first call only sets the start
  // (0 mJ); so does every call before the first Hold. A `time` before the
  // last one adds nothing and keeps the last time.
  double AdvanceTo(std::chrono::nanoseconds time);
  // The power held from the last time on.
  void Hold(double power_mw) { power_mw_ = power_mw; }
  // AdvanceTo(time), then Hold(power_mw): one reading. Returns the energy
  // added up to `time` (by the previous reading's power), in mJ.
  double Add(std::chrono::nanoseconds time, double power_mw);

  // The energy integrated up to the last time, in mJ.
  double energy_mj() const { return energy_mj_; }
  // The energy up to `time`, the held power extended to it (never back).
  double EnergyAtMj(std::chrono::nanoseconds time) const;
  std::optional<std::chrono::nanoseconds> last_time() const { return last_time_; }
  std::optional<double> power_mw() const { return power_mw_; }

 private:
  double energy_mj_ = 0.0;
  std::optional<std::chrono::nanoseconds> last_time_;
  std::optional<double> power_mw_;
};

}  // namespace zeus::monitor

#endif  // ZEUS_MONITOR_POWER_INTEGRAL_H_
