// Copyright 2026 The Zeus C++ Authors.

#include "zeus/monitor/power_integral.h"

#include <gtest/gtest.h>

namespace zeus::monitor {
namespace {

using namespace std::chrono_literals;

TEST(PowerIntegralTest, EachReadingIsHeldUntilTheNext) {
  PowerIntegral integral;
  EXPECT_EQ(integral.Add(1s, 100'000.0), 0.0);  // the start
  EXPECT_DOUBLE_EQ(integral.Add(3s, 300'000.0), 200'000.0);  // 100 W held for 2 s
  EXPECT_DOUBLE_EQ(integral.Add(3500ms, 0.0), 150'000.0);    // 300 W for 0.5 s
  EXPECT_DOUBLE_EQ(integral.energy_mj(), 350'000.0);
  EXPECT_DOUBLE_EQ(integral.EnergyAtMj(10s), 350'000.0);     // 0 W held
  EXPECT_EQ(integral.last_time(), 3500ms);
}

TEST(PowerIntegralTest, NoPowerHeldAddsNothingAndTimeNeverGoesBack) {
  PowerIntegral integral;
  EXPECT_FALSE(integral.last_time().has_value());
  EXPECT_EQ(integral.AdvanceTo(1s), 0.0);  // a failed first read: the time only
  EXPECT_EQ(integral.AdvanceTo(2s), 0.0);  // still no power held
  integral.Hold(50'000.0);
  EXPECT_DOUBLE_EQ(integral.EnergyAtMj(4s), 100'000.0);  // extended, not stored
  EXPECT_DOUBLE_EQ(integral.AdvanceTo(3s), 50'000.0);
  EXPECT_EQ(integral.AdvanceTo(2s), 0.0);  // back in time: ignored
  EXPECT_EQ(integral.last_time(), 3s);
  EXPECT_DOUBLE_EQ(integral.EnergyAtMj(1s), 50'000.0);
  EXPECT_EQ(integral.power_mw(), 50'000.0);
}

}  // namespace
}  // namespace zeus::monitor
