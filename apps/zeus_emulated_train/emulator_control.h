// Copyright 2026 The Zeus C++ Authors.
//
// The NVML emulator's control functions (emulator/emulator_control.h), looked
// up in the emulator library this process already loaded as NVML, and a
// zeus::Clock over the emulator's time (the GpuSet's driver clock) so
// measurement windows and the emulated GPUs share one time line.
//
// Thread-safety: the emulator's functions are thread-safe; so is this.

#ifndef ZEUS_APPS_ZEUS_EMULATED_TRAIN_EMULATOR_CONTROL_H_
#define ZEUS_APPS_ZEUS_EMULATED_TRAIN_EMULATOR_CONTROL_H_

#include <chrono>
#include <memory>
#include <string>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/device/gpu.h"

namespace zeus::apps {

class EmulatorControl {
 public:
  // `gpus`: the GPUs OpenGpus opened from `library_path` ($ZEUS_NVML_LIBRARY);
  // it must outlive the control. kUnavailable when it is not the Zeus NVML
  // emulator.
  static Result<std::unique_ptr<EmulatorControl>> Open(const device::GpuSet& gpus, const std::string& library_path);
  ~EmulatorControl();
  EmulatorControl(const EmulatorControl&) = delete;
  EmulatorControl& operator=(const EmulatorControl&) = delete;

  // The workload's iteration time of the GPU with this NVML index at the
  // limit in force. kNotSupported when its scenario has no iteration_time_s.
  Result<double> IterationTimeS(unsigned int nvml_index) const;
  // Emulated time since the state epoch.
  std::chrono::nanoseconds Now() const;
  // Whether the scenario's clock is manual (time moves only by Advance).
  bool manual() const { return manual_; }
  // Manual clock only: moves emulated time forward for every process.
  Status Advance(std::chrono::nanoseconds duration) const;

 private:
  EmulatorControl() = default;
  void* handle_ = nullptr;
  int (*iteration_time_s_)(unsigned int, double*) = nullptr;
  const Clock* driver_clock_ = nullptr;
  int (*advance_ns_)(unsigned long long) = nullptr;
  bool manual_ = false;
};

// Now() is the emulator's time. SleepFor advances a manual clock, or waits
// until a wall clock running `time_scale` emulated seconds per real second
// has moved that far.
class EmulatorTimeClock final : public Clock {
 public:
  EmulatorTimeClock(const EmulatorControl& control, double time_scale) : control_(control), time_scale_(time_scale) {}
  std::chrono::nanoseconds Now() const override { return control_.Now(); }
  void SleepFor(std::chrono::nanoseconds duration) const override;

 private:
  const EmulatorControl& control_;
  double time_scale_;
};

}  // namespace zeus::apps

#endif  // ZEUS_APPS_ZEUS_EMULATED_TRAIN_EMULATOR_CONTROL_H_
