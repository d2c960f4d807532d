// Copyright 2026 The Zeus C++ Authors.
//
// A Clock that is the NVML emulator's manual clock, so that a test's
// measurement code and the emulated GPUs share one time line: Now() reads the
// emulator's time and SleepFor() advances it (for every process sharing the
// emulator's state). Requires a scenario with "clock": "manual" and a GpuSet
// open on the emulator, whose driver_clock() Now() reads.

#ifndef ZEUS_TESTING_EMULATOR_CLOCK_H_
#define ZEUS_TESTING_EMULATOR_CLOCK_H_

#include <string>

#include "zeus/base/clock.h"
#include "zeus/device/gpu.h"

namespace zeus::testing {

class EmulatorClock final : public Clock {
 public:
  // `gpus` (which must outlive this clock) was opened from `library_path`,
  // the emulator .so, with a manual-clock scenario.
  EmulatorClock(const device::GpuSet& gpus, const std::string& library_path);
  ~EmulatorClock() override;
  EmulatorClock(const EmulatorClock&) = delete;
  EmulatorClock& operator=(const EmulatorClock&) = delete;

  std::chrono::nanoseconds Now() const override;
  void SleepFor(std::chrono::nanoseconds duration) const override;

 private:
  void* handle_ = nullptr;
  const Clock* driver_clock_ = nullptr;
  int (*advance_ns_)(unsigned long long) = nullptr;
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_EMULATOR_CLOCK_H_
