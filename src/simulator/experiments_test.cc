// Copyright 2026 The Zeus C++ Authors.
//
// Potential savings, the drifting workload, the simulation across the shift
// and its regret, on tiny hand-computable traces.

#include "zeus/simulator/experiments.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "zeus/simulator/trace.h"
#include "simulator/tiny_trace_test_util.h"
#include "testing/result.h"

namespace zeus::simulator {
namespace {

using ::testing::HasSubstr;

using tiny_trace::Build;
using tiny_trace::kPowerHeader;
using tiny_trace::kTrainHeader;

// Two batch sizes, two limits each; every path reaches the target.
//   bs 32 (default), 2 paths: 3 and 5 epochs (mean 4).
//     200 W: 10 s at 150 W = 1500 J/epoch -> 6000 J;  100 W: 20 s at 70 W = 1400 J/epoch -> 5600 J.
//   bs 16, 1 path: 2 epochs.
//     200 W: 12 s at 100 W = 1200 J/epoch -> 2400 J;  100 W: 16 s at 80 W = 1280 J/epoch -> 2560 J.
JobTrace TwoBatchSizes() {
  return Build("w,n,32,sgd,0.1,1,0.9,3\nw,n,32,sgd,0.1,2,0.9,5\nw,n,16,sgd,0.1,1,0.9,2\n",
               "w,n,32,sgd,200,10,150\nw,n,32,sgd,100,20,70\nw,n,16,sgd,200,12,100\nw,n,16,sgd,100,16,80\n", 32);
}

TEST(PotentialSavingsTest, HandComputed) {
  Result<PotentialSavings> p = ComputePotentialSavings(TwoBatchSizes());
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->default_config.batch_size, 32);
  EXPECT_EQ(p->default_config.power_limit_w, 200);
  EXPECT_DOUBLE_EQ(p->default_config.energy_j, 6000);
  // Best of all: 16@200 (2400 J): 60% saved.
  EXPECT_EQ(p->best.batch_size, 16);
  EXPECT_EQ(p->best.power_limit_w, 200);
  EXPECT_DOUBLE_EQ(p->best_pct, 60);
  // Best limit at 32: 100 W (5600 J): 6.666...%.
  EXPECT_EQ(p->best_power_limit.power_limit_w, 100);
  EXPECT_NEAR(p->power_limit_pct, 100.0 / 15.0, 1e-12);
  // Best batch size at its maximum limit: 16@200, 60%.
  EXPECT_EQ(p->best_batch_size.batch_size, 16);
  EXPECT_DOUBLE_EQ(p->batch_size_pct, 60);
}

TEST(PotentialSavingsTest, ConfigurationsThatSometimesMissDoNotCount) {
  // bs 16 misses the target on its only path: only bs 32 counts.
  const JobTrace job = Build("w,n,32,sgd,0.1,1,0.9,3\nw,n,16,sgd,0.1,1,0.9,nan\n",
                             "w,n,32,sgd,200,10,150\nw,n,32,sgd,100,20,70\nw,n,16,sgd,200,1,1\n", 32);
  Result<PotentialSavings> p = ComputePotentialSavings(job);
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->best.batch_size, 32);
  EXPECT_EQ(p->best.power_limit_w, 100);  // 4200 J against 4500 J
  EXPECT_NEAR(p->best_pct, 100.0 / 15.0, 1e-12);
  EXPECT_EQ(p->best_batch_size.batch_size, 32);
  EXPECT_DOUBLE_EQ(p->batch_size_pct, 0);
}

TEST(PotentialSavingsTest, ADefaultThatMissesIsAnError) {
  const JobTrace job = Build("w,n,32,sgd,0.1,1,0.9,nan\nw,n,16,sgd,0.1,1,0.9,2\n",
                             "w,n,32,sgd,200,10,150\nw,n,16,sgd,200,12,100\n", 32);
  Result<PotentialSavings> p = ComputePotentialSavings(job);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(p.error().message(), HasSubstr("default batch size 32"));
}

TEST(DriftTest, FactorsFollowTheDocumentedRule) {
  // Oracle at eta 0.5 (max power 200 W): 16@200 costs 0.5 * 2400 + 100 * 24 = 3600 (the least).
  const JobTrace job = TwoBatchSizes();
  Result<DriftedJob> d = DriftedJobTrace(job, {2.0, 1}, 0.5);
  ASSERT_TRUE(d) << d.error().message();
  ASSERT_EQ(d->batch_sizes, (std::vector<int>{16, 32}));
  // 16 is the Oracle's batch size: the full magnitude (its draw, the first, is discarded).
  EXPECT_EQ(d->factors[0], 2.0);
  // 32 takes numpy.random.default_rng(1).random()'s second value, 0.9504636963259353:
  // u = 0.9009273926518706, factor = 2^u = 1.867...
  EXPECT_NEAR(d->factors[1], std::pow(2.0, 2 * 0.9504636963259353 - 1), 1e-12);
  // Every epoch of bs 32 scales: time and energy of every path and profile, and the profiling epoch.
  const BatchSizeTrace* before = job.Find(32);
  const BatchSizeTrace* after = d->job.Find(32);
  const double f = d->factors[1];
  EXPECT_NEAR(after->paths[0][0].time_per_epoch_s, 10 * f, 1e-12);
  EXPECT_NEAR(after->paths[0][1].energy_per_epoch_j, 1500 * f, 1e-9);
  EXPECT_EQ(after->paths[0][1].target_epoch, 5);  // convergence is unchanged
  EXPECT_NEAR(after->profiles[1].time_s, 20 * f, 1e-12);
  EXPECT_EQ(after->profiles[1].average_power_w, before->profiles[1].average_power_w);
  EXPECT_NEAR(after->profiling_epoch_energy_j, before->profiling_epoch_energy_j * f, 1e-9);
  EXPECT_NEAR(d->job.Find(16)->paths[1][0].time_per_epoch_s, 32, 1e-12);
}

TEST(DriftTest, MagnitudeMustExceedOne) {
  for (double m : {1.0, 0.5, std::numeric_limits<double>::infinity(), std::nan("")}) {
    Result<DriftedJob> d = DriftedJobTrace(TwoBatchSizes(), {m, 1}, 0.5);
    ASSERT_FALSE(d) << m;
    EXPECT_THAT(d.error().message(), HasSubstr("drift magnitude"));
  }
}

// One batch size, one path of 2 epochs, one limit: 10 s at 100 W = 1000 J/epoch.
// Cost (eta 0.5, max 100 W) of a non-profiling run: 0.5 * 2000 + 50 * 20 = 2000;
// the first run profiles, but with one limit the profiling epoch is the same epoch.
TEST(DriftTest, SimulationSwitchesTracesAfterTheShift) {
  const JobTrace job = Build("w,n,8,sgd,0.1,1,0.9,2\n", "w,n,8,sgd,100,10,100\n", 8);
  Result<DriftedJob> d = DriftedJobTrace(job, {1.5, 7}, 0.5);
  ASSERT_TRUE(d);
  ASSERT_EQ(d->factors, std::vector<double>{1.5});  // the only batch size is the Oracle's
  SimulationOptions options;
  options.num_recurrences = 5;
  options.drifted_job = &d->job;
  options.drift_after_recurrence = 3;
  Result<SimulationResult> sim = Simulate(job, options);
  ASSERT_TRUE(sim) << sim.error().message();
  ASSERT_EQ(sim->recurrences.size(), 5U);
  for (int r = 0; r < 3; ++r) EXPECT_DOUBLE_EQ(sim->recurrences[r].cost, 2000) << r;
  // After the shift: 3000 per run; the budget 2 * 2000 // 1500 = 2 epochs still reaches the target.
  for (int r = 3; r < 5; ++r) {
    EXPECT_DOUBLE_EQ(sim->recurrences[r].cost, 3000) << r;
    EXPECT_DOUBLE_EQ(sim->recurrences[r].energy_j, 3000) << r;
  }

  Result<Baselines> before = ComputeBaselines(job, 0.5);
  Result<Baselines> after = ComputeBaselines(d->job, 0.5);
  ASSERT_TRUE(before && after);
  const DriftSummary s = SummarizeDrift(*sim, *before, *after, 3, 10);
  EXPECT_DOUBLE_EQ(s.regret_before, 0);
  EXPECT_DOUBLE_EQ(s.regret_after, 0);  // the Oracle moved with the costs
  EXPECT_EQ(s.last_n, 2);                // only two recurrences after the shift
  EXPECT_DOUBLE_EQ(s.last_n_oracle_fraction, 1);
}

TEST(DriftTest, SummaryCountsRegretAgainstEachPhasesOracle) {
  SimulationResult r;
  // Before (oracle cost 100): 150, 100 -> 0.5 oracle jobs. After (oracle 200): 300, 200, 250 -> 0.75.
  const double costs[] = {150, 100, 300, 200, 250};
  for (int i = 0; i < 5; ++i) {
    RecurrenceRecord rec;
    rec.recurrence = i + 1;
    rec.cost = costs[i];
    rec.batch_size = i == 3 ? 16 : 8;
    rec.power_limit_w = 100;
    r.recurrences.push_back(rec);
  }
  Baselines before, after;
  before.oracle.cost = 100;
  after.oracle.cost = 200;
  after.oracle.batch_size = 16;
  after.oracle.power_limit_w = 100;
  const DriftSummary s = SummarizeDrift(r, before, after, 2, 2);
  EXPECT_DOUBLE_EQ(s.regret_before, 0.5);
  EXPECT_DOUBLE_EQ(s.regret_after, 0.75);
  EXPECT_EQ(s.last_n, 2);
  EXPECT_DOUBLE_EQ(s.last_n_regret, (0.0 + 0.25) / 2);
  EXPECT_DOUBLE_EQ(s.last_n_oracle_fraction, 0.5);
}

TEST(DriftTest, ADriftedJobMustMatchTheJob) {
  const JobTrace job = TwoBatchSizes();
  const JobTrace other = Build("w,n,8,sgd,0.1,1,0.9,2\n", "w,n,8,sgd,100,10,100\n", 8);
  SimulationOptions options;
  options.drifted_job = &other;
  Result<SimulationResult> sim = Simulate(job, options);
  ASSERT_FALSE(sim);
  EXPECT_THAT(sim.error().message(), HasSubstr("same batch sizes and power limits"));
}

TEST(EarlyStoppingTest, InfiniteBetaRunsEveryRunToTheTargetOrMaxEpochs) {
  // bs 16 never reaches the target; with beta = inf it runs all 5 epochs each try instead of being cut.
  const JobTrace job = Build("w,n,32,sgd,0.1,1,0.9,1\nw,n,16,sgd,0.1,1,0.9,nan\n",
                             "w,n,32,sgd,200,10,150\nw,n,16,sgd,200,30,1000\n", 32);
  SimulationOptions options;
  options.beta = std::numeric_limits<double>::infinity();
  options.num_recurrences = 2;
  Result<SimulationResult> sim = Simulate(job, options);
  ASSERT_TRUE(sim) << sim.error().message();
  ASSERT_GE(sim->tries.size(), 2U);
  bool saw_16 = false;
  for (const TryRecord& t : sim->tries) {
    EXPECT_TRUE(std::isinf(t.cost_ub));
    EXPECT_EQ(t.epoch_budget, 5);
    if (t.batch_size == 16) {
      saw_16 = true;
      EXPECT_EQ(t.epochs, 5);
      EXPECT_FALSE(t.reached);
    }
  }
  EXPECT_TRUE(saw_16);
  options.beta = -1;
  EXPECT_FALSE(Simulate(job, options));
  options.beta = std::nan("");
  EXPECT_FALSE(Simulate(job, options));
}

}  // namespace
}  // namespace zeus::simulator
