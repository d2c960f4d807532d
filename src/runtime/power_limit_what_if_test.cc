// Copyright 2026 The Zeus C++ Authors.
//
// The what-if report's arithmetic against hand-computed values.
//
// The profile (10 steps per window, one GPU):
//   limit W  energy J  time s   per step J  per step s   ZeusCost(0.5), max 300 W: 0.5 E + 150 T
//   300      3000      10       300         1.0          3000
//   250      2600      11       260         1.1          2950  <- least
//   200      2400      13       240         1.3          3150
//   150      2500      16       250         1.6          3650  (dominated by 200 W)

#include "zeus/runtime/power_limit_what_if.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace zeus::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<optimizer::PowerLimitMeasurement> kWhatIfProfile = {
    {300, 3000, 10}, {250, 2600, 11}, {200, 2400, 13}, {150, 2500, 16}};

PowerLimitWhatIfOptions Options() {
  PowerLimitWhatIfOptions o;
  o.profile_steps = 10;
  o.steps_per_epoch = 100;
  o.epochs = 5;
  o.total_gpus = 1;
  o.eta = 0.5;
  o.max_slowdown = 1.35;  // 300 W takes 10 s: 13.5 s allowed, so 200 W
  o.baseline_power_limit_w = 250;
  return o;
}

TEST(PowerLimitWhatIfTest, ChoicesAndSavingsPerEpochAndRun) {
  auto r = ComputePowerLimitWhatIf(kWhatIfProfile, Options());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->baseline_power_limit_w, 250);
  EXPECT_TRUE(r->baseline_is_requested);
  EXPECT_DOUBLE_EQ(r->baseline_energy_per_step_j, 260);
  EXPECT_DOUBLE_EQ(r->baseline_time_per_step_s, 1.1);
  EXPECT_THAT(r->pareto, ElementsAre(true, true, true, false));
  ASSERT_EQ(r->choices.size(), 4u);

  const auto& energy = r->choices[0];  // 200 W: 20 J and -0.2 s per step
  EXPECT_EQ(energy.selector, "energy");
  EXPECT_EQ(energy.power_limit_w, 200);
  EXPECT_DOUBLE_EQ(energy.energy_per_step_j, 240);
  EXPECT_DOUBLE_EQ(energy.time_per_step_s, 1.3);
  EXPECT_NEAR(energy.energy_saved_per_epoch_j, 2000, 1e-9);
  EXPECT_NEAR(energy.time_saved_per_epoch_s, -20, 1e-9);
  EXPECT_NEAR(energy.energy_saved_run_j, 10000, 1e-9);
  EXPECT_NEAR(energy.time_saved_run_s, -100, 1e-9);
  EXPECT_NEAR(energy.energy_saved_percent, 100.0 * 20 / 260, 1e-9);  // 7.69%
  EXPECT_NEAR(energy.time_saved_percent, -100.0 * 0.2 / 1.1, 1e-9);  // -18.18%

  const auto& time = r->choices[1];  // 300 W: -40 J and +0.1 s per step
  EXPECT_EQ(time.selector, "time");
  EXPECT_EQ(time.power_limit_w, 300);
  EXPECT_NEAR(time.energy_saved_per_epoch_j, -4000, 1e-9);
  EXPECT_NEAR(time.time_saved_per_epoch_s, 10, 1e-9);
  EXPECT_NEAR(time.energy_saved_run_j, -20000, 1e-9);
  EXPECT_NEAR(time.time_saved_run_s, 50, 1e-9);
  EXPECT_NEAR(time.energy_saved_percent, -100.0 * 40 / 260, 1e-9);
  EXPECT_NEAR(time.time_saved_percent, 100.0 * 0.1 / 1.1, 1e-9);

  const auto& cost = r->choices[2];  // the baseline itself: nothing saved
  EXPECT_EQ(cost.selector, "zeus-cost(eta=0.5)");
  EXPECT_EQ(cost.power_limit_w, 250);
  EXPECT_NEAR(cost.energy_saved_run_j, 0, 1e-9);
  EXPECT_NEAR(cost.time_saved_run_s, 0, 1e-9);

  const auto& slowdown = r->choices[3];
  EXPECT_EQ(slowdown.selector, "max-slowdown(1.35)");
  EXPECT_EQ(slowdown.power_limit_w, 200);
  EXPECT_NEAR(slowdown.energy_saved_run_j, 10000, 1e-9);
}

TEST(PowerLimitWhatIfTest, ZeusCostCountsTheJobsGpus) {
  auto o = Options();
  o.total_gpus = 2;  // 0.5 E + 300 T: 300 W 4500, 250 W 4600
  auto r = ComputePowerLimitWhatIf(kWhatIfProfile, o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->choices[2].power_limit_w, 300);
}

TEST(PowerLimitWhatIfTest, AnUnprofiledBaselineFallsBackToTheHighestLimit) {
  auto o = Options();
  o.baseline_power_limit_w = 260;
  auto r = ComputePowerLimitWhatIf(kWhatIfProfile, o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->baseline_power_limit_w, 300);
  EXPECT_FALSE(r->baseline_is_requested);
  // Energy (200 W) against 300 W: 60 J and -0.3 s per step.
  EXPECT_NEAR(r->choices[0].energy_saved_per_epoch_j, 6000, 1e-9);
  EXPECT_NEAR(r->choices[0].time_saved_run_s, -150, 1e-9);
  EXPECT_THAT(FormatPowerLimitWhatIfText(*r), HasSubstr("260 W was not profiled"));
  o.baseline_power_limit_w.reset();
  auto unset = ComputePowerLimitWhatIf(kWhatIfProfile, o);
  ASSERT_TRUE(unset);
  EXPECT_EQ(unset->baseline_power_limit_w, 300);
}

TEST(PowerLimitWhatIfTest, RejectsBadInput) {
  auto o = Options();
  EXPECT_EQ(ComputePowerLimitWhatIf({}, o).error().code(), ErrorCode::kInvalidArgument);
  o.steps_per_epoch = 0;
  auto no_steps = ComputePowerLimitWhatIf(kWhatIfProfile, o);
  ASSERT_FALSE(no_steps);
  EXPECT_THAT(no_steps.error().message(), HasSubstr("steps per epoch must be >= 1"));
  o = Options();
  o.max_slowdown = 0.5;
  EXPECT_FALSE(ComputePowerLimitWhatIf(kWhatIfProfile, o));
  o = Options();
  const std::vector<optimizer::PowerLimitMeasurement> zero = {{250, 0, 11}, {200, 2400, 13}};
  auto zero_base = ComputePowerLimitWhatIf(zero, o);
  ASSERT_FALSE(zero_base);
  EXPECT_THAT(zero_base.error().message(), HasSubstr("energy and time above 0"));
}

TEST(PowerLimitWhatIfTest, TextAndJsonCarryTheFigures) {
  auto r = ComputePowerLimitWhatIf(kWhatIfProfile, Options());
  ASSERT_TRUE(r);
  const std::string text = FormatPowerLimitWhatIfText(*r);
  EXPECT_THAT(text, HasSubstr("baseline: 250 W, 260 J and 1.1 s per step"));
  EXPECT_THAT(text, HasSubstr("(+7.7%)"));
  EXPECT_THAT(text, HasSubstr("(-18.2%)"));
  const auto j = nlohmann::json::parse(PowerLimitWhatIfJson(*r));
  EXPECT_EQ(j["steps_per_epoch"], 100);
  EXPECT_EQ(j["baseline"]["power_limit_w"], 250.0);
  EXPECT_EQ(j["measurements"][3]["pareto"], false);
  EXPECT_EQ(j["selectors"][0]["power_limit_w"], 200.0);
  EXPECT_NEAR(j["selectors"][0]["energy_saved_run_j"].get<double>(), 10000, 1e-9);
  EXPECT_NEAR(j["selectors"][1]["time_saved_per_epoch_s"].get<double>(), 10, 1e-9);
}

}  // namespace
}  // namespace zeus::runtime
