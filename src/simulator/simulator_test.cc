// Copyright 2026 The Zeus C++ Authors.
//
// The simulation loop on tiny hand-computable traces, and the baselines.

#include "zeus/simulator/simulator.h"

#include <cmath>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "zeus/simulator/metrics.h"
#include "zeus/simulator/trace.h"
#include "simulator/tiny_trace_test_util.h"
#include "testing/result.h"

namespace zeus::simulator {
namespace {

using ::testing::HasSubstr;

using tiny_trace::Build;
using tiny_trace::kPowerHeader;
using tiny_trace::kTrainHeader;

// One batch size, one run reaching the target at epoch 3, two limits:
//   200 W: 10 s/epoch at 150 W (1500 J/epoch);  100 W: 20 s/epoch at 80 W (1600 J).
// JIT profiling (eta 0.5, max 200 W): 200 W costs (75 + 100) * 10 = 1750 per
// epoch, 100 W (40 + 100) * 20 = 2800, so 200 W.
JobTrace OneBatchSize() { return Build("w,n,32,sgd,0.1,1,0.9,3\n", "w,n,32,sgd,200,10,150\nw,n,32,sgd,100,20,80\n", 32); }

TEST(SimulateTest, HandComputedRecurrences) {
  const JobTrace job = OneBatchSize();
  EXPECT_EQ(job.default_recurrences, 4);  // 2 * 1 batch size * 2 limits
  Result<SimulationResult> sim = Simulate(job, {});
  ASSERT_TRUE(sim) << sim.error().message();
  ASSERT_EQ(sim->recurrences.size(), 4U);
  ASSERT_EQ(sim->tries.size(), 4U);
  // Recurrence 1 profiles: first epoch = mean over (200 W, 100 W) rows:
  // E = 1550 + 1500 * 2 = 4550 J, T = 15 + 10 * 2 = 35 s,
  // cost = 0.5 * 4550 + 0.5 * 200 * 35 = 5775.
  const TryRecord& first = sim->tries[0];
  EXPECT_EQ(first.stage, "pruning");
  EXPECT_TRUE(first.profiled);
  EXPECT_EQ(first.power_limit_w, 200);
  EXPECT_EQ(first.epoch_budget, 5);  // no success yet: max_epochs
  EXPECT_TRUE(std::isinf(first.cost_ub));
  EXPECT_DOUBLE_EQ(first.energy_j, 4550);
  EXPECT_DOUBLE_EQ(first.time_s, 35);
  EXPECT_DOUBLE_EQ(first.cost, 5775);
  // Later: E = 4500, T = 30, cost 5250; budget = min(11550 // 1750, 5) = 5.
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_FALSE(sim->tries[i].profiled);
    EXPECT_DOUBLE_EQ(sim->tries[i].energy_j, 4500);
    EXPECT_DOUBLE_EQ(sim->tries[i].cost, 5250);
    EXPECT_EQ(sim->tries[i].epoch_budget, 5);
  }
  EXPECT_DOUBLE_EQ(sim->tries[1].cost_ub, 2 * 5775.0);
  EXPECT_DOUBLE_EQ(sim->tries[2].cost_ub, 2 * 5250.0);
  EXPECT_EQ(sim->tries[1].stage, "pruning");  // round 2
  EXPECT_EQ(sim->tries[2].stage, "ts");       // a one-arm bandit
}

TEST(SimulateTest, EarlyStoppingCutsAnExpensiveRun) {
  // bs 32 reaches at epoch 1 (cost 1750); bs 16 never reaches and costs
  // (0.5*1000 + 0.5*200) * 30 = 18000 per epoch > 2 * 1750: budget 0, so it
  // cannot run even one epoch.
  const JobTrace job = Build("w,n,32,sgd,0.1,1,0.9,1\nw,n,16,sgd,0.1,1,0.9,nan\n",
                             "w,n,32,sgd,200,10,150\nw,n,16,sgd,200,30,1000\n", 32);
  SimulationOptions options;
  options.num_recurrences = 2;
  Result<SimulationResult> sim = Simulate(job, options);
  ASSERT_TRUE(sim) << sim.error().message();
  ASSERT_GE(sim->tries.size(), 3U);
  const TryRecord& cut = sim->tries[1];
  EXPECT_EQ(cut.batch_size, 16);
  EXPECT_EQ(cut.epoch_budget, 0);
  EXPECT_FALSE(cut.ran);
  EXPECT_EQ(cut.energy_j, 0);
  EXPECT_EQ(sim->tries[2].batch_size, 32);  // the retry in the same recurrence
  EXPECT_EQ(sim->tries[2].recurrence, 2);
}

TEST(SimulateTest, DefaultThatNeverConvergesIsAnError) {
  const JobTrace job = Build("w,n,32,sgd,0.1,1,0.9,9\n", "w,n,32,sgd,200,10,150\n", 32);
  Result<SimulationResult> sim = Simulate(job, {});
  ASSERT_FALSE(sim);
  EXPECT_EQ(sim.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(sim.error().message(), HasSubstr("default batch size 32"));
}

TEST(SimulateTest, BadOptionsAreRejected) {
  const JobTrace job = OneBatchSize();
  SimulationOptions o;
  o.eta = 2;
  EXPECT_EQ(Simulate(job, o).error().code(), ErrorCode::kInvalidArgument);
  o = {};
  o.beta = 0;
  EXPECT_EQ(Simulate(job, o).error().code(), ErrorCode::kInvalidArgument);
  o = {};
  o.num_recurrences = -1;
  EXPECT_EQ(Simulate(job, o).error().code(), ErrorCode::kInvalidArgument);
}

// Three batch sizes, two runs each (so paths are sampled), two limits.
JobTrace ThreeBatchSizes() {
  return Build(
      "w,n,16,sgd,0.1,1,0.9,4\nw,n,16,sgd,0.1,2,0.9,5\n"
      "w,n,32,sgd,0.1,1,0.9,3\nw,n,32,sgd,0.1,2,0.9,3\n"
      "w,n,64,sgd,0.1,1,0.9,2\nw,n,64,sgd,0.1,2,0.9,nan\n",
      "w,n,16,sgd,200,12,120\nw,n,16,sgd,150,14,100\n"
      "w,n,32,sgd,200,10,150\nw,n,32,sgd,150,12,120\n"
      "w,n,64,sgd,200,7,190\nw,n,64,sgd,150,9,150\n",
      32, 8);
}

TEST(SimulateTest, SameSeedSameResultDifferentSeedDifferentPaths) {
  const JobTrace job = ThreeBatchSizes();
  SimulationOptions options;
  options.num_recurrences = 40;
  Result<SimulationResult> a = Simulate(job, options);
  Result<SimulationResult> b = Simulate(job, options);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->tries.size(), b->tries.size());
  std::set<int> runs_seen;
  for (std::size_t i = 0; i < a->tries.size(); ++i) {
    EXPECT_EQ(a->tries[i].batch_size, b->tries[i].batch_size);
    EXPECT_EQ(a->tries[i].sampled_run, b->tries[i].sampled_run);
    EXPECT_EQ(a->tries[i].cost, b->tries[i].cost);
    runs_seen.insert(a->tries[i].sampled_run);
  }
  EXPECT_EQ(runs_seen.size(), 2U);  // both paths get sampled
  bool differs = false;
  for (std::uint64_t seed = 2; seed < 6 && !differs; ++seed) {
    options.seed = seed;
    Result<SimulationResult> c = Simulate(job, options);
    ASSERT_TRUE(c);
    for (std::size_t i = 0; i < std::min(a->tries.size(), c->tries.size()) && !differs; ++i) {
      differs = a->tries[i].sampled_run != c->tries[i].sampled_run;
    }
  }
  EXPECT_TRUE(differs);
}

TEST(SimulateTest, GridSearchTriesEveryConfigurationOnceInOrderThenExploits) {
  const JobTrace job = ThreeBatchSizes();
  SimulationOptions options;
  options.policy = Policy::kGridSearch;
  options.num_recurrences = 12;
  Result<SimulationResult> sim = Simulate(job, options);
  ASSERT_TRUE(sim) << sim.error().message();
  const std::vector<std::pair<int, double>> grid = {{16, 200}, {16, 150}, {32, 200}, {32, 150}, {64, 200}, {64, 150}};
  for (std::size_t i = 0; i < grid.size(); ++i) {
    EXPECT_EQ(sim->tries[i].stage, "grid");
    EXPECT_EQ(sim->tries[i].batch_size, grid[i].first) << i;
    EXPECT_EQ(sim->tries[i].power_limit_w, grid[i].second) << i;
  }
  EXPECT_EQ(sim->tries.back().stage, "exploit");
}

TEST(SimulateTest, SingleKnobPolicies) {
  const JobTrace job = ThreeBatchSizes();
  SimulationOptions options;
  options.num_recurrences = 12;
  options.policy = Policy::kPowerLimitOnly;
  Result<SimulationResult> pl_only = Simulate(job, options);
  ASSERT_TRUE(pl_only) << pl_only.error().message();
  for (const TryRecord& t : pl_only->tries) EXPECT_EQ(t.batch_size, 32);
  EXPECT_TRUE(pl_only->tries[0].profiled);
  options.policy = Policy::kBatchSizeOnly;
  Result<SimulationResult> bs_only = Simulate(job, options);
  ASSERT_TRUE(bs_only) << bs_only.error().message();
  std::set<int> sizes;
  for (const TryRecord& t : bs_only->tries) {
    EXPECT_EQ(t.power_limit_w, 200);  // each size's maximum
    EXPECT_FALSE(t.profiled);
    sizes.insert(t.batch_size);
  }
  EXPECT_GT(sizes.size(), 1U);
}

TEST(BaselinesTest, DefaultIsTheDefaultAtMaxLimitAndOracleTheCheapestSureConfig) {
  const JobTrace job = ThreeBatchSizes();
  Result<Baselines> b = ComputeBaselines(job, 0.5);
  ASSERT_TRUE(b) << b.error().message();
  // Default: 32 @ 200 W, both paths 3 epochs: E = 4500, T = 30,
  // cost = 0.5 * 4500 + 0.5 * 200 * 30 = 5250.
  EXPECT_EQ(b->default_config.batch_size, 32);
  EXPECT_EQ(b->default_config.power_limit_w, 200);
  EXPECT_DOUBLE_EQ(b->default_config.energy_j, 4500);
  EXPECT_DOUBLE_EQ(b->default_config.cost, 5250);
  // 64 never qualifies (one path never reaches). Per-config expected costs:
  //   16@200: E = 1440*4.5 = 6480, T = 54 -> 3240 + 5400 = 8640
  //   16@150: E = 1400*4.5 = 6300, T = 63 -> 3150 + 6300 = 9450
  //   32@150: E = 1440*3 = 4320, T = 36 -> 2160 + 3600 = 5760
  EXPECT_EQ(b->oracle.batch_size, 32);
  EXPECT_EQ(b->oracle.power_limit_w, 200);
  const std::vector<ConfigExpectation> all = ExpectedConfigs(job, 0.5);
  ASSERT_EQ(all.size(), 6U);
  EXPECT_DOUBLE_EQ(all[0].cost, 8640);
  EXPECT_DOUBLE_EQ(all[1].cost, 9450);
  EXPECT_DOUBLE_EQ(all[3].cost, 5760);
  EXPECT_EQ(all[4].reach_fraction, 0.5);
}

TEST(SummarizeTest, SavingsAndRegretAgainstBaselines) {
  SimulationResult r;
  for (int i = 1; i <= 4; ++i) {
    RecurrenceRecord rec;
    rec.recurrence = i;
    rec.batch_size = i <= 2 ? 16 : 32;
    rec.power_limit_w = 200;
    rec.energy_j = i <= 2 ? 200 : 50;
    rec.time_s = 10;
    rec.cost = i <= 2 ? 300 : 100;
    r.recurrences.push_back(rec);
  }
  Baselines b;
  b.default_config = {32, 200, 100, 10, 150, 1};
  b.oracle = {32, 200, 50, 5, 90, 1};
  const RunSummary s = Summarize(r, b, 2);
  EXPECT_DOUBLE_EQ(s.savings_all_pct, 100 * (1 - 500.0 / 400.0));  // -25 %
  EXPECT_DOUBLE_EQ(s.time_change_all_pct, 0);
  EXPECT_DOUBLE_EQ(s.savings_last_n_pct, 50);
  EXPECT_DOUBLE_EQ(s.cum_regret, (300 - 90) * 2 + (100 - 90) * 2);
  EXPECT_DOUBLE_EQ(s.cum_regret_over_oracle_cost, 440.0 / 90);
  EXPECT_EQ(s.last_n_mode_batch_size, 32);
  EXPECT_DOUBLE_EQ(s.last_n_oracle_fraction, 1.0);
}

}  // namespace
}  // namespace zeus::simulator
