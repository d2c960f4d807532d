// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/gaussian_ts.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "zeus/optimizer/batch_size_optimizer.h"

namespace zeus::optimizer {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

GaussianTs Make(std::vector<int> arms, GaussianTsOptions options = {}, std::uint64_t seed = 1) {
  Result<GaussianTs> ts = GaussianTs::Create(std::move(arms), options, seed);
  EXPECT_TRUE(ts) << ts.error().message();
  return std::move(*ts);
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

}  // namespace
}  // namespace zeus::optimizer
