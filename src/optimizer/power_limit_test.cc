// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/power_limit.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace zeus::optimizer {
namespace {

// Per-epoch costs with eta = 0.5 and max limit 300 W (hand-computed):
//   300 W: (0.5*250 + 0.5*300) * 10 = 2750
//   250 W: (0.5*220 + 0.5*300) * 11 = 2860
//   200 W: (0.5*180 + 0.5*300) * 13 = 3120
// and with eta = 1 (energy only): 2500, 2420, 2340.
const std::vector<PowerLimitProfile> kProfiles = {{200, 13, 180}, {300, 10, 250}, {250, 11, 220}};

TEST(ChoosePowerLimitTest, BalancedEtaPicksTheFastLimit) {
  Result<PowerLimitChoice> c = ChoosePowerLimit(kProfiles, 0.5);
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->power_limit_w, 300);
  EXPECT_DOUBLE_EQ(c->cost, 2750);
}

TEST(ChoosePowerLimitTest, EnergyOnlyPicksTheFrugalLimit) {
  Result<PowerLimitChoice> c = ChoosePowerLimit(kProfiles, 1.0);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->power_limit_w, 200);
  EXPECT_DOUBLE_EQ(c->cost, 2340);
}

TEST(ChoosePowerLimitTest, ATieGoesToTheHigherLimitWhateverTheInputOrder) {
  // eta = 1: 100 W * 10 s == 50 W * 20 s == 1000.
  const std::vector<PowerLimitProfile> tie = {{100, 20, 50}, {200, 10, 100}};
  Result<PowerLimitChoice> c = ChoosePowerLimit(tie, 1.0);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->power_limit_w, 200);
}

TEST(ChoosePowerLimitTest, BadInputIsAnError) {
  EXPECT_EQ(ChoosePowerLimit({}, 0.5).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ChoosePowerLimit(kProfiles, 1.5).error().code(), ErrorCode::kInvalidArgument);
  const std::vector<PowerLimitProfile> negative = {{200, -1, 100}};
  EXPECT_EQ(ChoosePowerLimit(negative, 0.5).error().code(), ErrorCode::kInvalidArgument);
  const std::vector<PowerLimitProfile> nan = {{200, 10, std::nan("")}};
  EXPECT_EQ(ChoosePowerLimit(nan, 0.5).error().code(), ErrorCode::kInvalidArgument);
}

TEST(ChoosePowerLimitFromMeasurementsTest, UsesMaxLimitTimesWorldSize) {
  // eta = 0.5, world size 2 -> max power 600 W.
  //   300 W: 0.5*5000 + 0.5*600*20 = 8500
  //   200 W: 0.5*4000 + 0.5*600*22 = 8600
  // With world size 1 (300 W): 7500 vs 5300 -> 200 W.
  const std::vector<PowerLimitMeasurement> m = {{300, 5000, 20}, {200, 4000, 22}};
  Result<PowerLimitChoice> two = ChoosePowerLimitFromMeasurements(m, 0.5, 2);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->power_limit_w, 300);
  EXPECT_DOUBLE_EQ(two->cost, 8500);
  Result<PowerLimitChoice> one = ChoosePowerLimitFromMeasurements(m, 0.5, 1);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->power_limit_w, 200);
  EXPECT_DOUBLE_EQ(one->cost, 5300);
  EXPECT_EQ(ChoosePowerLimitFromMeasurements(m, 0.5, 0).error().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace zeus::optimizer
