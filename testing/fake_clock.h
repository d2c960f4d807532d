// Copyright 2026 The Zeus C++ Authors.
//
// A Clock that moves only when told to. SleepFor advances it at once.
// Thread-safe.

#ifndef ZEUS_TESTING_FAKE_CLOCK_H_
#define ZEUS_TESTING_FAKE_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>

#include "zeus/base/clock.h"

namespace zeus::testing {

class FakeClock final : public Clock {
 public:
  // Starts at `start` (1000 s by default: not 0, so code that takes 0 for
  // "never" is caught).
  explicit FakeClock(std::chrono::nanoseconds start = std::chrono::seconds(1000)) : now_ns_(start.count()) {}
  std::chrono::nanoseconds Now() const override;
  // Advances by `duration` at once; a zero or negative duration returns
  // without moving the clock, as a real sleep would (time never goes back).
  void SleepFor(std::chrono::nanoseconds duration) const override;
  // REQUIRES: duration >= 0 (a Clock never goes back); aborts otherwise.
  void Advance(std::chrono::nanoseconds duration);

 private:
  mutable std::atomic<std::int64_t> now_ns_;
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_FAKE_CLOCK_H_
