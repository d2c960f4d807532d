// Copyright 2026 The Zeus C++ Authors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <span>
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

TEST(OptimumSelectorTest, CustomGetsTheMeasurementsAndTheJobsGpuCount) {
  std::vector<PowerLimitMeasurement> seen;
  int seen_gpus = 0;
  auto selector = OptimumSelector::Custom(
      [&](std::span<const PowerLimitMeasurement> measurements, int total_gpus) -> Result<double> {
        seen.assign(measurements.begin(), measurements.end());
        seen_gpus = total_gpus;
        return measurements[3].power_limit_w;  // a choice no built-in selector makes here
      },
      "FourthOfFive");
  EXPECT_EQ(SelectPowerLimitW(selector, kProfile, 4).value(), 150);
  ASSERT_EQ(seen.size(), kProfile.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].power_limit_w, kProfile[i].power_limit_w);
    EXPECT_EQ(seen[i].energy_j, kProfile[i].energy_j);
    EXPECT_EQ(seen[i].time_s, kProfile[i].time_s);
  }
  EXPECT_EQ(seen_gpus, 4);
}

TEST(OptimumSelectorTest, CustomErrorsAndBadAnswersAreErrors) {
  auto failing = OptimumSelector::Custom(
      [](std::span<const PowerLimitMeasurement>, int) -> Result<double> {
        return Fail(ErrorCode::kInternal, "select() raised ZeroDivisionError");
      },
      "Broken");
  auto error = SelectPowerLimitW(failing, kProfile, 1).error();
  EXPECT_EQ(error.code(), ErrorCode::kInternal);
  EXPECT_THAT(error.message(), HasSubstr("ZeroDivisionError"));
  for (double answer : {0.0, -100.0, std::nan(""), HUGE_VAL}) {
    auto bad = OptimumSelector::Custom(
        [answer](std::span<const PowerLimitMeasurement>, int) -> Result<double> { return answer; }, "Bad");
    auto result = SelectPowerLimitW(bad, kProfile, 1);
    ASSERT_FALSE(result) << answer;
    EXPECT_EQ(result.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(result.error().message(), HasSubstr("custom(Bad) returned"));
  }
}

TEST(OptimumSelectorTest, CustomIsNotCalledOnBadMeasurementsOrWithoutAFunction) {
  int calls = 0;
  auto counting = OptimumSelector::Custom(
      [&](std::span<const PowerLimitMeasurement>, int) -> Result<double> { return ++calls, 300.0; }, "Counting");
  EXPECT_FALSE(SelectPowerLimitW(counting, {}, 1));
  EXPECT_FALSE(SelectPowerLimitW(counting, kProfile, 0));
  EXPECT_EQ(calls, 0);
  OptimumSelector empty = OptimumSelector::Custom(nullptr, "Empty");
  EXPECT_THAT(ValidateSelector(empty).error().message(), HasSubstr("needs a function"));
  EXPECT_FALSE(SelectPowerLimitW(empty, kProfile, 1));
}

TEST(OptimumSelectorTest, Describes) {
  EXPECT_EQ(OptimumSelector::Custom(nullptr, "MySelector").Describe(), "custom(MySelector)");
  EXPECT_EQ(OptimumSelector::ZeusCost(0.5).Describe(), "zeus-cost(eta=0.5)");
  EXPECT_EQ(OptimumSelector::MaxSlowdown(1.1).Describe(), "max-slowdown(1.1)");
  EXPECT_EQ(OptimumSelector::Energy().Describe(), "energy");
}

}  // namespace
}  // namespace zeus::runtime
