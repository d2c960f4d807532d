// Copyright 2026 The Zeus C++ Authors.

#include "testing/fake_clock.h"

namespace zeus::testing {

std::chrono::nanoseconds FakeClock::Now() const { return std::chrono::nanoseconds(now_ns_.load()); }

void FakeClock::SleepFor(std::chrono::nanoseconds duration) const { now_ns_.fetch_add(duration.count()); }

void FakeClock::Advance(std::chrono::nanoseconds duration) { now_ns_.fetch_add(duration.count()); }

}  // namespace zeus::testing
