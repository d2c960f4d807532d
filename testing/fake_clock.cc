// Copyright 2026 The Zeus C++ Authors.

#include "testing/fake_clock.h"

#include <cstdio>
#include <cstdlib>

namespace zeus::testing {

std::chrono::nanoseconds FakeClock::Now() const { return std::chrono::nanoseconds(now_ns_.load()); }

void FakeClock::SleepFor(std::chrono::nanoseconds duration) const {
  if (duration.count() > 0) now_ns_.fetch_add(duration.count());
}

void FakeClock::Advance(std::chrono::nanoseconds duration) {
  if (duration.count() < 0) {
    std::fprintf(stderr, "FakeClock::Advance(%lld ns): a clock never goes back\n",
                 static_cast<long long>(duration.count()));
    std::abort();
  }
  now_ns_.fetch_add(duration.count());
}

}  // namespace zeus::testing
