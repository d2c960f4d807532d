// Copyright 2026 The Zeus C++ Authors.
//
// A Clock that is the NVML emulator's manual clock, so that a test's
// measurement code and the emulated GPUs share one time line: Now() reads the
// emulator's time and SleepFor() advances it (for every process sharing the
// emulator's state). Requires a scenario with "clock": "manual" and an
// initialised emulator in this process (e.g. an open GpuSet).

#ifndef ZEUS_TESTING_EMULATOR_CLOCK_H_
#define ZEUS_TESTING_EMULATOR_CLOCK_H_

#include <string>

#include "zeus/base/clock.h"

namespace zeus::testing {

class EmulatorClock final : public Clock {
 public:
  // `library_path` is the emulator .so already loaded by the device layer.
  explicit EmulatorClock(const std::string& library_path);
  ~EmulatorClock() override;
  EmulatorClock(const EmulatorClock&) = delete;
  EmulatorClock& operator=(const EmulatorClock&) = delete;

  std::chrono::nanoseconds Now() const override;
  void SleepFor(std::chrono::nanoseconds duration) const override;

 private:
  void* handle_ = nullptr;
  int (*now_ns_)(unsigned long long*) = nullptr;
  int (*advance_ns_)(unsigned long long) = nullptr;
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_EMULATOR_CLOCK_H_
