// Copyright 2026 The Zeus C++ Authors.

#include "testing/emulator_clock.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace zeus::testing {

EmulatorClock::EmulatorClock(const device::GpuSet& gpus, const std::string& library_path)
    : driver_clock_(gpus.driver_clock()) {
  handle_ = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ != nullptr) {
    advance_ns_ = reinterpret_cast<int (*)(unsigned long long)>(dlsym(handle_, "zeusEmulatorAdvanceTimeNs"));
  }
  if (driver_clock_ == nullptr || advance_ns_ == nullptr) {
    std::fprintf(stderr, "EmulatorClock: cannot use %s\n", library_path.c_str());
    std::abort();
  }
}

EmulatorClock::~EmulatorClock() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::chrono::nanoseconds EmulatorClock::Now() const { return driver_clock_->Now(); }

void EmulatorClock::SleepFor(std::chrono::nanoseconds duration) const {
  if (duration.count() <= 0) return;
  if (advance_ns_(static_cast<unsigned long long>(duration.count())) != 0) {
    std::fprintf(stderr, "EmulatorClock: the scenario's clock is not manual\n");
    std::abort();
  }
}

}  // namespace zeus::testing
