// Copyright 2026 The Zeus C++ Authors.

#include "zeus/base/clock.h"

#include <thread>

namespace zeus {
namespace {

class SteadyClockImpl final : public Clock {
 public:
  std::chrono::nanoseconds Now() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch());
  }
  void SleepFor(std::chrono::nanoseconds duration) const override { std::this_thread::sleep_for(duration); }
};

}  // namespace

const Clock& SteadyClock() {
  static const SteadyClockImpl clock;
  return clock;
}

}  // namespace zeus
