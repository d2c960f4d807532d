// Copyright 2026 The Zeus C++ Authors.

#include "zeus/base/clock.h"

#include <gtest/gtest.h>

#include "testing/fake_clock.h"

namespace zeus {
namespace {

TEST(SteadyClockTest, NeverGoesBackwards) {
  const Clock& clock = SteadyClock();
  auto a = clock.Now();
  auto b = clock.Now();
  EXPECT_LE(a, b);
  clock.SleepFor(std::chrono::microseconds(200));
  EXPECT_GE(clock.Now() - a, std::chrono::microseconds(200));
}

TEST(FakeClockTest, MovesOnlyWhenTold) {
  testing::FakeClock clock(std::chrono::seconds(5));
  EXPECT_EQ(clock.Now(), std::chrono::seconds(5));
  clock.Advance(std::chrono::milliseconds(250));
  EXPECT_EQ(clock.Now(), std::chrono::milliseconds(5250));
  clock.SleepFor(std::chrono::seconds(1));
  EXPECT_EQ(clock.Now(), std::chrono::milliseconds(6250));
}

}  // namespace
}  // namespace zeus
