// Copyright 2026 The Zeus C++ Authors.
//
// The long-history rule of gaussian_ts.h: numpy-exact fits up to
// kExactFitMaxRewards rewards per arm, Welford moments beyond, updated in
// O(1) without keeping the rewards.

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/gaussian_ts.h"
#include "zeus/optimizer/numpy_math.h"
#include "zeus/optimizer/numpy_random.h"

namespace zeus::optimizer {
namespace {

const double kInfinity = std::numeric_limits<double>::infinity();
constexpr auto kLimit = static_cast<std::size_t>(kExactFitMaxRewards);

// Rewards shaped like the simulator's: -cost around -1e5 J-equivalents with
// a few percent of spread, from numpy's normal stream.
std::vector<double> Rewards(std::size_t n, std::uint64_t seed, double mean = -1.0e5, double sd = 4.0e3) {
  NumpyRandom rng(seed);
  std::vector<double> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(rng.Normal(mean, sd));
  return out;
}

double Relative(double a, double b) { return std::fabs(a - b) / std::fabs(b); }

TEST(RewardMomentsTest, WelfordByHand) {
  // -10, -20, -30: mean -10 -> -15 -> -20; m2 0 -> 50 (d = -10, x - mean = -5)
  // -> 50 + (-15)(-10) = 200; population variance 200 / 3.
  RewardMoments m = AddReward({}, -10);
  EXPECT_EQ(m, (RewardMoments{1, -10, 0}));
  m = AddReward(m, -20);
  EXPECT_EQ(m, (RewardMoments{2, -15, 50}));
  m = AddReward(m, -30);
  EXPECT_EQ(m, (RewardMoments{3, -20, 200}));
  EXPECT_EQ(MomentsOf(std::vector<double>{-10, -20, -30}), m);
}

TEST(RewardMomentsTest, FitFromMomentsByHand) {
  // Two rewards -10, -20: var 25, precision 2/25, mean -15 (flat prior).
  const ArmPosterior flat = FitArmFromMoments(8, {2, -15, 50}, {});
  EXPECT_EQ(flat.arm, 8);
  EXPECT_EQ(flat.num_observations, 2);
  EXPECT_DOUBLE_EQ(flat.precision, 0.08);
  EXPECT_DOUBLE_EQ(flat.mean, -15);
  // Prior mean 5, precision 1: precision 1.08, mean (5 + 0.04 * -30) / 1.08.
  const ArmPosterior prior = FitArmFromMoments(8, {2, -15, 50}, {.prior_mean = 5, .prior_precision = 1});
  EXPECT_DOUBLE_EQ(prior.precision, 1.08);
  EXPECT_DOUBLE_EQ(prior.mean, (5 - 0.04 * 30) / 1.08);
  // Equal rewards: certain at their mean; none: the prior.
  const ArmPosterior certain = FitArmFromMoments(8, MomentsOf(std::vector<double>(5000, -3.25)), {});
  EXPECT_EQ(certain.precision, kInfinity);
  EXPECT_EQ(certain.mean, -3.25);
  EXPECT_EQ(FitArmFromMoments(8, {}, {.prior_mean = 2, .prior_precision = 3}).mean, 2);
}

TEST(LongHistoryRuleTest, NumpyUpToTheLimitMomentsBeyond) {
  const std::vector<double> rewards = Rewards(kLimit + 1, 11);
  const std::span<const double> at_limit(rewards.data(), kLimit);
  const ArmPosterior exact = FitArm(4, at_limit, {});
  const ArmPosterior numpy = FitArmNumpy(4, at_limit, {});
  EXPECT_EQ(exact.mean, numpy.mean);
  EXPECT_EQ(exact.precision, numpy.precision);
  const ArmPosterior beyond = FitArm(4, rewards, {});
  const ArmPosterior streaming = FitArmFromMoments(4, MomentsOf(rewards), {});
  EXPECT_EQ(beyond.mean, streaming.mean);
  EXPECT_EQ(beyond.precision, streaming.precision);
  EXPECT_EQ(beyond.num_observations, static_cast<int>(kLimit + 1));
}

// Across the switch a posterior moves by rounding only: the streaming fit of
// the limit + 1 rewards is within 1e-13 (mean) and 1e-10 (precision) of
// numpy's fit of the same rewards, on several streams and spreads.
TEST(LongHistoryRuleTest, TheSwitchIsSeamless) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    for (double sd : {1.0, 4.0e3, 3.0e4}) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " sd " << sd);
      const std::vector<double> rewards = Rewards(kLimit + 1, seed, -1.0e5, sd);
      const ArmPosterior numpy = FitArmNumpy(16, rewards, {});
      const ArmPosterior streaming = FitArm(16, rewards, {});
      EXPECT_LE(Relative(streaming.mean, numpy.mean), 1e-13);
      EXPECT_LE(Relative(streaming.precision, numpy.precision), 1e-10);
      // ... and the last exact fit is numpy's own.
      const std::span<const double> before(rewards.data(), kLimit);
      EXPECT_EQ(FitArm(16, before, {}).precision, FitArmNumpy(16, before, {}).precision);
    }
  }
}

// Welford's moments over 10^6 rewards against a two-pass long-double
// reference. The mean's rounding errors add up like a random walk, about
// sqrt(n) * eps / 2 = 1.1e-13 here (measured: 3.6e-14 to 4.2e-14), so it is
// held to 2e-13; the variance to 1e-12 for realistic spreads (measured:
// 2.1e-15 and 2.9e-14) and to 1e-10 with a spread of 1e-5 of the mean
// (measured: 1.9e-12; Welford's error grows with mean^2 / variance). A posterior's own spread is
// sd / sqrt(n), 4e-5 of the mean here: eight orders of magnitude above.
TEST(LongHistoryRuleTest, StreamingMomentsAreAccurateOverAMillionRewards) {
  struct Case {
    double mean, sd, mean_tol, var_tol;
  };
  for (const Case c : {Case{-1.0e5, 4.0e3, 2e-13, 1e-12}, Case{-2.5e4, 2.0e4, 2e-13, 1e-12},
                       Case{-1.0e5, 1.0, 2e-13, 1e-10}}) {
    SCOPED_TRACE(::testing::Message() << "mean " << c.mean << " sd " << c.sd);
    const std::vector<double> rewards = Rewards(1'000'000, 3, c.mean, c.sd);
    long double sum = 0;
    for (double r : rewards) sum += r;
    const long double mean = sum / static_cast<long double>(rewards.size());
    long double m2 = 0;
    for (double r : rewards) m2 += (r - mean) * (r - mean);
    const long double var = m2 / static_cast<long double>(rewards.size());
    const RewardMoments m = MomentsOf(rewards);
    EXPECT_LE(std::fabs((static_cast<long double>(m.mean) - mean) / mean), c.mean_tol);
    const long double streaming_var = static_cast<long double>(m.m2) / static_cast<long double>(m.count);
    EXPECT_LE(std::fabs((streaming_var - var) / var), c.var_tol);
  }
}

// Observe's O(1) updates give FitArm over the arm's whole history, bit for
// bit, before, at and after the switch.
TEST(LongHistoryRuleTest, IncrementalObserveEqualsFitArmOverEveryReward) {
  Result<GaussianTs> ts = GaussianTs::Create({8}, {}, 1);
  ASSERT_TRUE(ts);
  const std::vector<double> rewards = Rewards(kLimit + 600, 21);
  for (std::size_t n = 1; n <= rewards.size(); ++n) {
    ASSERT_TRUE(ts->Observe(8, rewards[n - 1]));
    if (n % 97 != 0 && (n < kLimit - 2 || n > kLimit + 2)) continue;
    const ArmPosterior expected = FitArm(8, std::span<const double>(rewards.data(), n), {});
    const ArmPosterior got = ts->Posteriors()[0];
    ASSERT_EQ(got.num_observations, static_cast<int>(n));
    ASSERT_EQ(got.mean, expected.mean) << n;
    ASSERT_EQ(got.precision, expected.precision) << n;
  }
  // SetRewards of a long history then Observe: the same.
  ASSERT_TRUE(ts->SetRewards(8, std::span<const double>(rewards.data(), kLimit + 100)));
  ASSERT_TRUE(ts->Observe(8, rewards[kLimit + 100]));
  const ArmPosterior expected = FitArm(8, std::span<const double>(rewards.data(), kLimit + 101), {});
  EXPECT_EQ(ts->Posteriors()[0].mean, expected.mean);
  EXPECT_EQ(ts->Posteriors()[0].precision, expected.precision);
}

// A window longer than the limit: FitArm of the newest W rewards.
TEST(LongHistoryRuleTest, LongWindowsFitTheirNewestRewards) {
  const int window = static_cast<int>(kLimit) + 300;
  Result<GaussianTs> ts = GaussianTs::Create({8}, {.window_size = window}, 1);
  ASSERT_TRUE(ts);
  const std::vector<double> rewards = Rewards(static_cast<std::size_t>(window) + 500, 5);
  for (double r : rewards) ASSERT_TRUE(ts->Observe(8, r));
  const std::span<const double> newest(rewards.data() + 500, static_cast<std::size_t>(window));
  const ArmPosterior expected = FitArm(8, newest, {});
  EXPECT_EQ(ts->Posteriors()[0].num_observations, window);
  EXPECT_EQ(ts->Posteriors()[0].mean, expected.mean);
  EXPECT_EQ(ts->Posteriors()[0].precision, expected.precision);
  EXPECT_NE(ts->Posteriors()[0].mean, FitArm(8, rewards, {}).mean);
}

}  // namespace
}  // namespace zeus::optimizer
