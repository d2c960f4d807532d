// Copyright 2026 The Zeus C++ Authors.

#include "testing/emulator_clock.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace zeus::testing {

EmulatorClock::EmulatorClock(const std::string& library_path) {
  handle_ = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ != nullptr) {
    now_ns_ = reinterpret_cast<int (*)(unsigned long long*)>(dlsym(handle_, "zeusEmulatorNowNs"));
    advance_ns_ = reinterpret_cast<int (*)(unsigned long long)>(dlsym(handle_, "zeusEmulatorAdvanceTimeNs"));
  }
  if (now_ns_ == nullptr || advance_ns_ == nullptr) {
    std::fprintf(stderr, "EmulatorClock: cannot use %s\n", library_path.c_str());
    std::abort();
  }
}

EmulatorClock::~EmulatorClock() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::chrono::nanoseconds EmulatorClock::Now() const {
  unsigned long long ns = 0;
  if (now_ns_(&ns) != 0) {
    std::fprintf(stderr, "EmulatorClock: the emulator is not initialised\n");
    std::abort();
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}

void EmulatorClock::SleepFor(std::chrono::nanoseconds duration) const {
  if (duration.count() <= 0) return;
  if (advance_ns_(static_cast<unsigned long long>(duration.count())) != 0) {
    std::fprintf(stderr, "EmulatorClock: the scenario's clock is not manual\n");
    std::abort();
  }
}

}  // namespace zeus::testing
