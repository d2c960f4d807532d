// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/policy.h"

#include <cmath>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::optimizer {
namespace {

TEST(BatchSizePolicyTest, NamesRoundTripAndUnknownNamesAreRejected) {
  for (BatchSizePolicy p : {BatchSizePolicy::kZeus, BatchSizePolicy::kZeusRobust}) {
    EXPECT_EQ(ParseBatchSizePolicy(BatchSizePolicyName(p)).value(), p);
  }
  EXPECT_EQ(BatchSizePolicyName(BatchSizePolicy::kZeusRobust), "zeus-robust");
  Result<BatchSizePolicy> bad = ParseBatchSizePolicy("Zeus");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(bad.error().message(), ::testing::HasSubstr("zeus, zeus-robust"));
}

TEST(BatchSizePolicyTest, ZeusLeavesTheOptionsAloneAndRobustSetsItsOwn) {
  BatchSizeOptimizerOptions base;
  base.seed = 9;
  base.bandit.window_size = 4;
  const BatchSizeOptimizerOptions zeus = ApplyBatchSizePolicy(BatchSizePolicy::kZeus, base);
  EXPECT_EQ(zeus.num_pruning_rounds, 2);
  EXPECT_EQ(zeus.pruning_stop.cost_ratio, 0.0);
  EXPECT_EQ(zeus.bandit.variance_model, VarianceModel::kPerArm);
  EXPECT_EQ(zeus.bandit.num_explorations, 2);
  const BatchSizeOptimizerOptions robust = ApplyBatchSizePolicy(BatchSizePolicy::kZeusRobust, base);
  EXPECT_EQ(robust.num_pruning_rounds, 1);
  EXPECT_EQ(robust.pruning_stop.cost_ratio, 1.5);
  EXPECT_EQ(robust.pruning_stop.patience, 1);
  EXPECT_EQ(robust.bandit.variance_model, VarianceModel::kPooledRelative);
  EXPECT_EQ(robust.bandit.prior_cv, 0.1);
  EXPECT_EQ(robust.bandit.num_explorations, 1);
  EXPECT_EQ(robust.seed, 9u);                 // the caller's
  EXPECT_EQ(robust.bandit.window_size, 4);  // the caller's
}

// zeus-robust end to end on hand-made costs: sizes {16, 32, 64, 128}, default
// 64. One round: 64 costs 10, 32 costs 16 (> 1.5 x 10: ends "down", 16
// never runs), 128 costs 9 (best). The bandit starts right away over
// {32, 64, 128}, each with its single reward.
TEST(BatchSizePolicyTest, RobustExploresOnceThenSamples) {
  BatchSizeOptimizerOptions o = ApplyBatchSizePolicy(BatchSizePolicy::kZeusRobust, {});
  Result<BatchSizeOptimizer> bso = BatchSizeOptimizer::Create({16, 32, 64, 128}, 64, o);
  ASSERT_TRUE(bso) << bso.error().message();
  for (auto [bs, cost] : std::vector<std::pair<int, double>>{{64, 10}, {32, 16}, {128, 9}}) {
    ASSERT_EQ(bso->Predict().value(), bs);
    ASSERT_TRUE(bso->Observe(bs, cost, true));
  }
  Result<int> next = bso->Predict();
  ASSERT_TRUE(next);
  EXPECT_EQ(bso->stage(), BatchSizeStage::kThompsonSampling);
  EXPECT_EQ(bso->bandit()->arms(), (std::vector<int>{32, 64, 128}));
  for (const ArmPosterior& p : bso->bandit()->Posteriors()) {
    EXPECT_EQ(p.num_observations, 1);
    EXPECT_TRUE(std::isfinite(p.precision));
  }
}

}  // namespace
}  // namespace zeus::optimizer
