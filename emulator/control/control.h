// Copyright 2026 The Zeus C++ Authors.
//
// The C++ side of the NVML emulator's control functions (emulator_control.h),
// for the programs and tests that drive an emulator this process has loaded
// as its NVML library: the emulated time and its manual clock, the workload's
// iteration time, and the hang faults. One library for zeus-emulated-train
// and the tests; it links only zeus::base and reaches the functions with
// dlsym in the already loaded library, as the device layer reaches NVML.
//
// Thread-safety: the emulator's functions are thread-safe, and so are these
// classes (immutable after Open / construction).

#ifndef ZEUS_EMULATOR_CONTROL_CONTROL_H_
#define ZEUS_EMULATOR_CONTROL_CONTROL_H_

#include <chrono>
#include <memory>
#include <string>

#include "emulator/emulator_control.h"
#include "zeus/base/clock.h"
#include "zeus/base/error.h"

namespace zeus::emulator {

class EmulatorControl {
 public:
  // `library_path`: the emulator library this process loaded and initialised
  // as NVML (e.g. by OpenGpus with that ZEUS_NVML_LIBRARY); it must stay
  // initialised while the control is used. kUnavailable when it is not the
  // Zeus NVML emulator, or when no nvmlInit_v2 of it is in force.
  static Result<std::unique_ptr<EmulatorControl>> Open(const std::string& library_path);
  ~EmulatorControl();
  EmulatorControl(const EmulatorControl&) = delete;
  EmulatorControl& operator=(const EmulatorControl&) = delete;

  // Emulated time since the state epoch (zeusEmulatorNowNs), the time line of
  // the GpuSet's driver_clock().
  std::chrono::nanoseconds Now() const;
  // Whether the scenario's clock is manual: time moves only by Advance.
  bool manual() const { return manual_; }
  // Manual clock only: moves emulated time forward by `duration` for every
  // process sharing the emulator's state; nothing for a duration <= 0.
  // kFailedPrecondition on a wall clock, kUnavailable when the emulator
  // refuses (no longer initialised, time would overflow, state lock).
  Status Advance(std::chrono::nanoseconds duration) const;

  // The workload's iteration time of the GPU with this NVML index at the
  // limit in force. kNotSupported when its scenario has no iteration_time_s.
  Result<double> IterationTimeS(unsigned int nvml_index) const;

  // Processes on emulated GPUs (emulator_control.h): attaches the live
  // process `pid` to the GPU with this NVML index at `sm_util_percent`
  // (0..100) SM utilization from now on, changes its utilization, detaches it.
  // kInvalidArgument (no such GPU or process, a percent over 100, already
  // attached / not attached, table full), kNotSupported (the GPU refuses
  // per-process calls), kUnavailable (emulator not initialised, state lock).
  Status AttachProcess(unsigned int nvml_index, unsigned int pid, unsigned int sm_util_percent) const;
  Status SetProcessUtilization(unsigned int nvml_index, unsigned int pid, unsigned int sm_util_percent) const;
  Status DetachProcess(unsigned int nvml_index, unsigned int pid) const;

  // How many of this process's calls are blocked in a "hang" fault now.
  unsigned long long HungCalls() const;
  // Unblocks every hung call, and every later one until the scenario is
  // loaded again. kUnavailable when the emulator is not initialised.
  Status ReleaseHungCalls() const;

 private:
  EmulatorControl() = default;

  void* handle_ = nullptr;
  std::string library_path_;
  decltype(&zeusEmulatorNowNs) now_ns_ = nullptr;
  decltype(&zeusEmulatorAdvanceTimeNs) advance_ns_ = nullptr;
  decltype(&zeusEmulatorIterationTimeS) iteration_time_s_ = nullptr;
  decltype(&zeusEmulatorHungCalls) hung_calls_ = nullptr;
  decltype(&zeusEmulatorReleaseHungCalls) release_hung_calls_ = nullptr;
  decltype(&zeusEmulatorAttachProcess) attach_process_ = nullptr;
  decltype(&zeusEmulatorSetProcessUtilization) set_process_utilization_ = nullptr;
  decltype(&zeusEmulatorDetachProcess) detach_process_ = nullptr;
  bool manual_ = false;
};

// A Clock on the emulator's time line, so that measurement code and the
// emulated GPUs share one time: Now() is the emulated time; SleepFor()
// advances a manual clock, or on a wall clock waits until the emulated time
// (running `time_scale` emulated seconds per real second, the scenario's
// time_scale) has moved that far.
// REQUIRES: a manual clock can be advanced (the emulator stays initialised);
// SleepFor aborts with a message otherwise.
class EmulatorClock final : public Clock {
 public:
  // `control` must outlive the clock.
  explicit EmulatorClock(const EmulatorControl& control, double time_scale = 1.0)
      : control_(control), time_scale_(time_scale) {}

  std::chrono::nanoseconds Now() const override { return control_.Now(); }
  void SleepFor(std::chrono::nanoseconds duration) const override;

 private:
  const EmulatorControl& control_;
  double time_scale_;
};

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_CONTROL_CONTROL_H_
