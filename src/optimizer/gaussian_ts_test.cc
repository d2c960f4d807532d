// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/gaussian_ts.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "testing/result.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/numpy_math.h"

namespace zeus::optimizer {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

GaussianTs Make(std::vector<int> arms, GaussianTsOptions options = {}, std::uint64_t seed = 1) {
  return zeus::testing::Unwrap(GaussianTs::Create(std::move(arms), options, seed));
}

TEST(GaussianTsTest, FitWithFlatPriorIsSampleMeanAndNOverVariance) {
  GaussianTs ts = Make({8});
  // rewards -10, -20: var 25, reward precision 0.04, precision 2 * 0.04,
  // mean (0.04 * -30) / 0.08 = -15.
  ASSERT_TRUE(ts.SetRewards(8, std::vector<double>{-10, -20}));
  const ArmPosterior p = ts.Posteriors()[0];
  EXPECT_EQ(p.num_observations, 2);
  EXPECT_DOUBLE_EQ(p.precision, 0.08);
  EXPECT_DOUBLE_EQ(p.mean, -15);
}

TEST(GaussianTsTest, FitWithInformativePrior) {
  GaussianTs ts = Make({8}, {.prior_mean = 5, .prior_precision = 1});
  ASSERT_TRUE(ts.SetRewards(8, std::vector<double>{-10, -20}));
  const ArmPosterior p = ts.Posteriors()[0];
  EXPECT_DOUBLE_EQ(p.precision, 1.08);
  EXPECT_DOUBLE_EQ(p.mean, (1 * 5 + 0.04 * -30) / 1.08);
}

TEST(GaussianTsTest, IdenticalRewardsGiveInfinitePrecisionAtTheirMean) {
  GaussianTs ts = Make({8});
  ASSERT_TRUE(ts.SetRewards(8, std::vector<double>{-3, -3, -3}));
  EXPECT_EQ(ts.Posteriors()[0].precision, kInf);
  EXPECT_EQ(ts.Posteriors()[0].mean, -3);
}

// A variance whose reciprocal overflows is as certain as a zero one:
// precision +inf at the rewards' mean, where the reference's formula gives a
// NaN mean (inf/inf) or 0. Rewards 0 and 1e-160 have the subnormal variance
// 2.5e-321; with the informative prior too, in each branch of the fit.
TEST(GaussianTsTest, VarianceWhoseReciprocalOverflowsIsCertainNotNaN) {
  const std::vector<double> rewards = {0.0, 1e-160};
  ASSERT_TRUE(std::isinf(1.0 / NumpyVar(rewards)));
  for (const GaussianTsOptions& o : {GaussianTsOptions{}, GaussianTsOptions{.prior_mean = 5, .prior_precision = 1}}) {
    const ArmPosterior numpy = FitArm(8, rewards, o);
    EXPECT_EQ(numpy.precision, kInf);
    EXPECT_EQ(numpy.mean, 1e-160 / 2);
    const ArmPosterior streaming = FitArmFromMoments(8, MomentsOf(rewards), o);
    EXPECT_EQ(streaming.precision, kInf);
    EXPECT_EQ(streaming.mean, 1e-160 / 2);
    // 1/v finite (1e307) but n/v overflowing: the reference's mean is
    // -1e299 / inf = -0 at infinite precision.
    const ArmPosterior many = FitArmFromMoments(8, {.count = 100, .mean = -1e-10, .m2 = 1e-305}, o);
    EXPECT_EQ(many.precision, kInf);
    EXPECT_EQ(many.mean, -1e-10);
    // Pooled: 1e-10 x (1e-150)^2 = 1e-310, subnormal.
    const ArmPosterior pooled = FitArmPooled(8, MomentsOf(std::vector<double>{1e-150, 1e-150}), 1e-10, o);
    EXPECT_EQ(pooled.precision, kInf);
    EXPECT_EQ(pooled.mean, 1e-150);
    GaussianTs ts = Make({8}, o);
    ASSERT_TRUE(ts.SetRewards(8, rewards));
    EXPECT_EQ(ts.Posteriors()[0].precision, kInf);
    EXPECT_EQ(ts.Posteriors()[0].mean, 1e-160 / 2);
  }
}

TEST(GaussianTsTest, WindowKeepsOnlyTheNewestRewards) {
  GaussianTs ts = Make({8}, {.window_size = 2});
  ASSERT_TRUE(ts.SetRewards(8, std::vector<double>{-1000, -10}));
  ASSERT_TRUE(ts.Observe(8, -20));  // -1000 drops out
  EXPECT_EQ(ts.Posteriors()[0].num_observations, 2);
  EXPECT_DOUBLE_EQ(ts.Posteriors()[0].mean, -15);
}

TEST(GaussianTsTest, UnknownArmIsNotFound) {
  GaussianTs ts = Make({8, 16});
  EXPECT_EQ(ts.Observe(12, -1).error().code(), ErrorCode::kNotFound);
}

TEST(GaussianTsTest, ArmsBelowTheExplorationCountAreTriedFirst) {
  GaussianTs ts = Make({8, 16, 32});
  ASSERT_TRUE(ts.SetRewards(8, std::vector<double>{-1, -2}));
  ASSERT_TRUE(ts.SetRewards(32, std::vector<double>{-1, -2}));
  ASSERT_TRUE(ts.SetRewards(16, std::vector<double>{-1}));
  EXPECT_EQ(ts.Predict(), 16);
  EXPECT_TRUE(ts.last_samples().empty());
}

TEST(GaussianTsTest, CertainArmsPickTheBestMean) {
  GaussianTs ts = Make({8, 16, 32});
  ASSERT_TRUE(ts.SetRewards(8, std::vector<double>{-9, -9}));
  ASSERT_TRUE(ts.SetRewards(16, std::vector<double>{-4, -4}));
  ASSERT_TRUE(ts.SetRewards(32, std::vector<double>{-6, -6}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ts.Predict(), 16);
  EXPECT_EQ(ts.last_samples(), (std::vector<double>{-9, -4, -6}));
}

TEST(GaussianTsTest, PredictDrawsAPermutationThenOneNormalPerArmInArmOrder) {
  const std::uint64_t seed = 77;
  GaussianTs ts = Make({32, 8, 16}, {}, seed);
  ASSERT_TRUE(ts.SetRewards(8, std::vector<double>{-10, -14}));
  ASSERT_TRUE(ts.SetRewards(16, std::vector<double>{-11, -12}));
  ASSERT_TRUE(ts.SetRewards(32, std::vector<double>{-10, -30}));
  // Posteriors by hand, in ascending arm order (flat prior: mean = sample
  // mean, precision = n / variance):
  //   8: {-10, -14}: mean -12, variance 4, precision 2 / 4 = 0.5;
  //   16: {-11, -12}: mean -11.5, variance 0.25, precision 2 / 0.25 = 8;
  //   32: {-10, -30}: mean -20, variance 100, precision 2 / 100 = 0.02.
  // The replay draws from NumpyRandom, pinned to numpy's own outputs by
  // numpy_random_test.cc.
  ASSERT_EQ(ts.arms(), (std::vector<int>{8, 16, 32}));
  const double means[] = {-12, -11.5, -20};
  const double precisions[] = {0.5, 8, 0.02};
  NumpyRandom replay(seed);
  for (int round = 0; round < 20; ++round) {
    const int chosen = ts.Predict();
    (void)replay.ChoiceWithoutReplacement(3, 3);
    std::vector<double> expected;
    std::size_t best = 0;
    for (std::size_t arm = 0; arm < 3; ++arm) {
      expected.push_back(replay.Normal(means[arm], std::sqrt(1.0 / precisions[arm])));
      if (expected.back() > expected[best]) best = expected.size() - 1;
    }
    ASSERT_EQ(ts.last_samples(), expected);
    ASSERT_EQ(chosen, ts.arms()[best]);
  }
}

TEST(BatchSizeOptimizerTest, PrunesThenBuildsTheBanditFromAllPastRewards) {
  Result<BatchSizeOptimizer> bso = BatchSizeOptimizer::Create({8, 16, 32}, 16, {});
  ASSERT_TRUE(bso) << bso.error().message();
  auto step = [&](int expected_bs, double cost, bool reached) {
    Result<int> bs = bso->Predict();
    ASSERT_TRUE(bs);
    ASSERT_EQ(*bs, expected_bs);
    ASSERT_TRUE(bso->Observe(*bs, cost, reached));
  };
  // Round 1 from 16: 16, 8 (fails), then 32. Round 2 over [16, 32] from 16.
  step(16, 100, true);
  step(8, 500, false);
  step(32, 120, true);
  step(16, 110, true);
  EXPECT_EQ(bso->stage(), BatchSizeStage::kPruning);
  step(32, 90, true);
  EXPECT_EQ(bso->stage(), BatchSizeStage::kPruning);  // built at the next Predict
  ASSERT_TRUE(bso->Predict());
  ASSERT_EQ(bso->stage(), BatchSizeStage::kThompsonSampling);
  const std::vector<ArmPosterior> arms = bso->bandit()->Posteriors();
  ASSERT_EQ(arms.size(), 2U);
  EXPECT_EQ(arms[0].arm, 16);
  EXPECT_DOUBLE_EQ(arms[0].mean, -105);  // rewards -100, -110
  EXPECT_DOUBLE_EQ(arms[1].mean, -105);  // rewards -120, -90
  EXPECT_DOUBLE_EQ(arms[0].precision, 2 / 25.0);
  EXPECT_DOUBLE_EQ(arms[1].precision, 2 / 225.0);
  ASSERT_TRUE(bso->Observe(16, 100, true));
  EXPECT_EQ(bso->bandit()->Posteriors()[0].num_observations, 3);
  EXPECT_EQ(bso->Observe(8, 1, true).error().code(), ErrorCode::kNotFound);
}

TEST(BatchSizeOptimizerTest, NoSurvivorsIsAFailedPrecondition) {
  Result<BatchSizeOptimizer> bso = BatchSizeOptimizer::Create({8, 16}, 8, {});
  ASSERT_TRUE(bso);
  ASSERT_TRUE(bso->Observe(8, 1, false));
  ASSERT_TRUE(bso->Observe(16, 1, false));
  Result<int> bs = bso->Predict();
  ASSERT_FALSE(bs);
  EXPECT_EQ(bs.error().code(), ErrorCode::kFailedPrecondition);
}

}  // namespace
}  // namespace zeus::optimizer

namespace zeus::optimizer {
namespace {

// The free functions the service uses give what GaussianTs gives.
TEST(GaussianTsFreeFunctionsTest, MatchTheBandit) {
  GaussianTsOptions options;
  Result<GaussianTs> ts = GaussianTs::Create({8, 16, 32}, options, 5);
  ASSERT_TRUE(ts);
  const std::vector<std::vector<double>> rewards = {{-3, -4, -3.5}, {-2, -2.5}, {-5, -5}};
  std::vector<ArmPosterior> posteriors;
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(ts->SetRewards(ts->arms()[i], rewards[i]));
    posteriors.push_back(FitArm(ts->arms()[i], rewards[i], options));
  }
  const std::vector<ArmPosterior> expected = ts->Posteriors();
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(posteriors[i].mean, expected[i].mean);
    EXPECT_EQ(posteriors[i].precision, expected[i].precision);
    EXPECT_EQ(posteriors[i].num_observations, expected[i].num_observations);
  }
  EXPECT_EQ(posteriors[2].precision, std::numeric_limits<double>::infinity());  // zero variance
  EXPECT_EQ(FitArm(4, {}, options).precision, options.prior_precision);       // no rewards: the prior
  NumpyRandom rng(5);
  for (int i = 0; i < 20; ++i) {
    std::vector<double> samples;
    ASSERT_EQ(ThompsonChoose(posteriors, options.num_explorations, rng, &samples), ts->Predict());
    EXPECT_EQ(samples, ts->last_samples());
  }
}

// Pooled relative variance by hand, prior cv 0.1 with weight 2:
// arm A rewards {-9, -11}: mean -10, m2 = 2, m2/mean^2 = 0.02, 1 dof;
// arm B rewards {-20, -20, -26}: mean -22, m2 = 4+4+16 = 24,
// 24/484 = 0.04958677..., 2 dof; arm C one reward (no dof).
// (2 x 0.01 + 0.02 + 24/484) / (2 + 1 + 2) = 0.0179173553...
TEST(PooledVarianceTest, PooledRelativeVarianceByHand) {
  GaussianTsOptions o;
  o.variance_model = VarianceModel::kPooledRelative;
  const std::vector<RewardMoments> arms = {MomentsOf(std::vector<double>{-9, -11}),
                                           MomentsOf(std::vector<double>{-20, -20, -26}),
                                           MomentsOf(std::vector<double>{-5})};
  EXPECT_NEAR(PooledRelativeVariance(arms, o), (0.02 + 0.02 + 24.0 / 484.0) / 5.0, 1e-15);
  // No arm with two rewards: the prior, 0.1^2.
  EXPECT_NEAR(PooledRelativeVariance(std::vector<RewardMoments>{arms[2]}, o), 0.01, 1e-17);
}

// Two identical rewards make the original's arm certain (precision inf);
// the pooled fit gives variance cv^2 x mean^2 = 0.01 x 100 = 1, so
// precision 2 / 1 = 2 and the mean -10. One reward: precision 1.
TEST(PooledVarianceTest, CloseRewardsDoNotMakeAnArmCertain) {
  GaussianTsOptions o;
  o.variance_model = VarianceModel::kPooledRelative;
  const std::vector<double> same = {-10, -10};
  EXPECT_TRUE(std::isinf(FitArm(16, same, GaussianTsOptions{}).precision));
  const ArmPosterior pooled = FitArmPooled(16, MomentsOf(same), 0.01, o);
  EXPECT_EQ(pooled.arm, 16);
  EXPECT_EQ(pooled.num_observations, 2);
  EXPECT_DOUBLE_EQ(pooled.mean, -10.0);
  EXPECT_DOUBLE_EQ(pooled.precision, 2.0);
  const ArmPosterior one = FitArmPooled(16, MomentsOf(std::vector<double>{-10}), 0.01, o);
  EXPECT_DOUBLE_EQ(one.precision, 1.0);
  // With a prior N(-4, precision 1): precision 1 + 2 = 3, mean (1 x -4 + 2 x -10) / 3 = -8.
  o.prior_mean = -4;
  o.prior_precision = 1;
  const ArmPosterior with_prior = FitArmPooled(16, MomentsOf(same), 0.01, o);
  EXPECT_DOUBLE_EQ(with_prior.precision, 3.0);
  EXPECT_DOUBLE_EQ(with_prior.mean, -8.0);
}

// The bandit's posteriors under the pooled model equal FitArmsPooled of its
// arms' moments, and an arm with one reward is sampled without exploration.
TEST(PooledVarianceTest, BanditUsesThePooledFit) {
  GaussianTsOptions o;
  o.variance_model = VarianceModel::kPooledRelative;
  o.num_explorations = 1;
  Result<GaussianTs> ts = GaussianTs::Create({8, 16}, o, 5);
  ASSERT_TRUE(ts);
  ASSERT_TRUE(ts->SetRewards(8, std::vector<double>{-9, -11}));
  ASSERT_TRUE(ts->SetRewards(16, std::vector<double>{-30}));
  const std::vector<ArmPosterior> p = ts->Posteriors();
  // cv^2 = (0.02 + 0.02) / 3; arm 8: precision 2 / (cv^2 x 100); arm 16: 1 / (cv^2 x 900).
  const double cv2 = 0.04 / 3.0;
  EXPECT_NEAR(p[0].precision, 2.0 / (cv2 * 100.0), 1e-9);
  EXPECT_NEAR(p[1].precision, 1.0 / (cv2 * 900.0), 1e-9);
  EXPECT_EQ(p[1].mean, -30.0);
  ts->Predict();
  EXPECT_EQ(ts->last_samples().size(), 2u);  // sampled, not an exploration pick
  o.prior_cv = -1;
  EXPECT_FALSE(GaussianTs::Create({8}, o, 5));
}

}  // namespace
}  // namespace zeus::optimizer
