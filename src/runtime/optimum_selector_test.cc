// Copyright 2026 The Zeus C++ Authors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "zeus/runtime/power_limit_optimizer.h"

namespace zeus::runtime {
namespace {

using optimizer::PowerLimitMeasurement;
using ::testing::HasSubstr;

// Profiling order: high to low. Energy falls with the limit, time rises.
const std::vector<PowerLimitMeasurement> kProfile = {
    {300, 254.8, 0.98}, {250, 240.0, 1.0}, {200, 220.0, 1.1}, {150, 210.0, 1.4}, {100, 200.0, 2.0}};

TEST(OptimumSelectorTest, EnergyPicksTheLeastEnergy) {
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::Energy(), kProfile, 1).value(), 100);
}

TEST(OptimumSelectorTest, TimePicksTheLeastTime) {
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::Time(), kProfile, 1).value(), 300);
}

TEST(OptimumSelectorTest, ZeusCostWeighsEnergyAgainstTime) {
  // eta 0.5, max power 300 W: costs 274.4, 270, 275, 315, 400.
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::ZeusCost(0.5), kProfile, 1).value(), 250);
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::ZeusCost(1.0), kProfile, 1).value(), 100);
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::ZeusCost(0.0), kProfile, 1).value(), 300);
}

TEST(OptimumSelectorTest, ZeusCostCountsEveryGpuOfTheJob) {
  // Energy of 4 GPUs (4x) with max power of 1 GPU would favour low limits;
  // with max power x 4 the choice is the single-GPU one.
  std::vector<PowerLimitMeasurement> four = kProfile;
  for (auto& m : four) m.energy_j *= 4;
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::ZeusCost(0.5), four, 4).value(), 250);
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::ZeusCost(0.5), four, 1).value(), 200);
}

TEST(OptimumSelectorTest, MaxSlowdownPicksTheLowestLimitWithinTheFactor) {
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::MaxSlowdown(1.15), kProfile, 1).value(), 200);
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::MaxSlowdown(1.0), kProfile, 1).value(), 300);
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::MaxSlowdown(3.0), kProfile, 1).value(), 100);
}

TEST(OptimumSelectorTest, MaxSlowdownReferenceIsTheHighestLimitWhateverTheOrder) {
  std::vector<PowerLimitMeasurement> shuffled = {kProfile[2], kProfile[0], kProfile[4], kProfile[1], kProfile[3]};
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::MaxSlowdown(1.15), shuffled, 1).value(), 200);
}

TEST(OptimumSelectorTest, TiesGoToTheHigherLimit) {
  const std::vector<PowerLimitMeasurement> tie = {{300, 100, 1}, {200, 100, 1}};
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::Energy(), tie, 1).value(), 300);
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::Time(), tie, 1).value(), 300);
}

TEST(OptimumSelectorTest, ZeroEnergyIsAValidMeasurement) {
  const std::vector<PowerLimitMeasurement> idle = {{300, 0.0, 1}, {200, 0.0, 1.5}};
  EXPECT_EQ(SelectPowerLimitW(OptimumSelector::Energy(), idle, 1).value(), 300);
}

TEST(OptimumSelectorTest, RejectsBadInput) {
  EXPECT_THAT(SelectPowerLimitW(OptimumSelector::ZeusCost(1.5), kProfile, 1).error().message(), HasSubstr("eta"));
  EXPECT_THAT(SelectPowerLimitW(OptimumSelector::MaxSlowdown(0.9), kProfile, 1).error().message(),
              HasSubstr(">= 1"));
  EXPECT_FALSE(SelectPowerLimitW(OptimumSelector::Energy(), {}, 1));
  EXPECT_FALSE(SelectPowerLimitW(OptimumSelector::MaxSlowdown(1.1), {}, 1));
  EXPECT_FALSE(SelectPowerLimitW(OptimumSelector::Energy(), kProfile, 0));
  const std::vector<PowerLimitMeasurement> negative = {{300, -1, 1}};
  EXPECT_FALSE(SelectPowerLimitW(OptimumSelector::MaxSlowdown(1.1), negative, 1));
}

TEST(OptimumSelectorTest, Describes) {
  EXPECT_EQ(OptimumSelector::ZeusCost(0.5).Describe(), "zeus-cost(eta=0.5)");
  EXPECT_EQ(OptimumSelector::MaxSlowdown(1.1).Describe(), "max-slowdown(1.1)");
  EXPECT_EQ(OptimumSelector::Energy().Describe(), "energy");
}

}  // namespace
}  // namespace zeus::runtime
