// Copyright 2026 The Zeus C++ Authors.
//
// Test access to the NVML emulator's hang faults (emulator_control.h):
// how many calls are blocked, waiting for a given number with a deadline,
// and releasing them. Requires the emulator library to be loaded and
// initialised in this process (e.g. by an open GpuSet).

#ifndef ZEUS_TESTING_EMULATOR_FAULTS_H_
#define ZEUS_TESTING_EMULATOR_FAULTS_H_

#include <chrono>
#include <string>

namespace zeus::testing {

class EmulatorFaults {
 public:
  // `library_path` is the emulator .so already loaded by the device layer.
  // Aborts if it lacks the control functions.
  explicit EmulatorFaults(const std::string& library_path);
  ~EmulatorFaults();
  EmulatorFaults(const EmulatorFaults&) = delete;
  EmulatorFaults& operator=(const EmulatorFaults&) = delete;

  // Calls of this process blocked in a hang fault now.
  unsigned long long HungCalls() const;
  // Polls HungCalls() until it is at least `count`; false if `deadline`
  // passes first (a generous deadline: this is a readiness wait).
  bool WaitForHungCalls(unsigned long long count, std::chrono::seconds deadline = std::chrono::seconds(60)) const;
  // Unblocks every hung call (and every later one). True on success.
  bool Release() const;

 private:
  void* handle_ = nullptr;
  unsigned long long (*hung_calls_)() = nullptr;
  int (*release_)() = nullptr;
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_EMULATOR_FAULTS_H_
