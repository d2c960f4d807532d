// Copyright 2026 The Zeus C++ Authors.
//
// The injectable time seam. Library code that needs "now" or needs to wait
// takes a Clock&, so tests can drive time by hand (testing/fake_clock.h)
// instead of sleeping.

#ifndef ZEUS_BASE_CLOCK_H_
#define ZEUS_BASE_CLOCK_H_

#include <chrono>

namespace zeus {

// A monotonic clock. Implementations must be thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Time since an arbitrary fixed origin; never decreases.
  virtual std::chrono::nanoseconds Now() const = 0;
  // Blocks the calling thread for `duration` of this clock's time.
  virtual void SleepFor(std::chrono::nanoseconds duration) const = 0;
};

// The process-wide real monotonic clock (std::chrono::steady_clock).
// Returns a reference to a static object; never null, never destroyed early.
const Clock& SteadyClock();

// A duration in seconds, as a double: for rates, averages and reports.
constexpr double ToSeconds(std::chrono::nanoseconds duration) {
  return std::chrono::duration<double>(duration).count();
}

}  // namespace zeus

#endif  // ZEUS_BASE_CLOCK_H_
