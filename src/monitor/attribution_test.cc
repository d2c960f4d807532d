// Copyright 2026 The Zeus C++ Authors.

#include "zeus/monitor/attribution.h"

#include <cmath>
#include <limits>
#include <map>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/fake_clock.h"
#include "testing/result.h"

namespace zeus::monitor {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using zeus::testing::FakeClock;
using zeus::testing::Unwrap;

ProcessUtilizationSample Sample(std::uint32_t pid, double util, std::uint64_t start_time = 0) {
  return {ProcessKey{pid, start_time}, util};
}

IntervalAttribution Split(std::int64_t measured_mj, nanoseconds duration, std::uint32_t idle_mw,
                          const std::vector<ProcessUtilizationSample>& samples) {
  return Unwrap(AttributeInterval(measured_mj, duration, idle_mw, samples));
}

std::int64_t SumParts(const IntervalAttribution& a) {
  std::int64_t sum = a.idle_energy_mj + a.unattributed_energy_mj;
  for (const ProcessEnergy& p : a.processes) sum += p.energy_mj;
  return sum;
}

// measured = idle + unattributed + other + ended + live entries, per GPU.
void ExpectLedgerConserves(const AttributionSnapshot& snapshot) {
  std::map<std::size_t, std::int64_t> live;
  for (const ProcessEnergyEntry& e : snapshot.processes) live[e.gpu_index] += e.energy_mj;
  for (const GpuEnergyTotals& g : snapshot.gpus) {
    EXPECT_EQ(g.measured_energy_mj, g.idle_energy_mj + g.unattributed_energy_mj + g.other_energy_mj +
                                        g.ended_energy_mj + live[g.gpu_index])
        << "GPU " << g.gpu_index;
  }
}

TEST(AttributeIntervalTest, ThreeToOneUtilizationGetsThreeToOneOfActiveEnergy) {
  // 1 s at 100 W idle: 100,000 mJ idle of 500,000; 400,000 active.
  IntervalAttribution a = Split(500'000, seconds(1), 100'000, {Sample(10, 75), Sample(20, 25)});
  EXPECT_EQ(a.idle_energy_mj, 100'000);
  EXPECT_EQ(a.unattributed_energy_mj, 0);
  ASSERT_EQ(a.processes.size(), 2u);
  EXPECT_EQ(a.processes[0].process.pid, 10u);
  EXPECT_EQ(a.processes[0].energy_mj, 300'000);
  EXPECT_EQ(a.processes[1].process.pid, 20u);
  EXPECT_EQ(a.processes[1].energy_mj, 100'000);
}

TEST(AttributeIntervalTest, SeveralSamplesOfOneProcessAreSummed) {
  // Pid 10 sampled three times at 30 %, pid 20 once at 30 %: 3:1.
  IntervalAttribution a = Split(4'000, seconds(1), 0, {Sample(10, 30), Sample(20, 30), Sample(10, 30), Sample(10, 30)});
  ASSERT_EQ(a.processes.size(), 2u);
  EXPECT_EQ(a.processes[0].energy_mj, 3'000);
  EXPECT_EQ(a.processes[1].energy_mj, 1'000);
}

TEST(AttributeIntervalTest, LoneProcessGetsAllActiveEnergy) {
  IntervalAttribution a = Split(12'345, milliseconds(100), 50'000, {Sample(7, 3)});
  EXPECT_EQ(a.idle_energy_mj, 5'000);
  ASSERT_EQ(a.processes.size(), 1u);
  EXPECT_EQ(a.processes[0].energy_mj, 7'345);
  EXPECT_EQ(a.unattributed_energy_mj, 0);
}

TEST(AttributeIntervalTest, NoBusyProcessLeavesActiveEnergyUnattributed) {
  IntervalAttribution a = Split(1'000, milliseconds(100), 2'000, {Sample(3, 0), Sample(4, 0)});
  EXPECT_EQ(a.idle_energy_mj, 200);
  EXPECT_EQ(a.unattributed_energy_mj, 800);
  ASSERT_EQ(a.processes.size(), 2u);  // seen, with nothing
  EXPECT_EQ(a.processes[0].energy_mj, 0);
  EXPECT_EQ(a.processes[1].energy_mj, 0);
  IntervalAttribution none = Split(1'000, milliseconds(100), 2'000, {});
  EXPECT_EQ(none.unattributed_energy_mj, 800);
  EXPECT_TRUE(none.processes.empty());
}

TEST(AttributeIntervalTest, ZeroUtilizationProcessGetsNothingBesideABusyOne) {
  IntervalAttribution a = Split(1'001, seconds(1), 0, {Sample(1, 0), Sample(2, 40)});
  ASSERT_EQ(a.processes.size(), 2u);
  EXPECT_EQ(a.processes[0].energy_mj, 0);
  EXPECT_EQ(a.processes[1].energy_mj, 1'001);
}

TEST(AttributeIntervalTest, LeftoverMillijoulesGoToLargestRemaindersThenSmallerPid) {
  // 10 mJ over three equal processes: 3 each, the 1 left over to the
  // smallest pid (equal remainders).
  IntervalAttribution even = Split(10, seconds(1), 0, {Sample(30, 20), Sample(10, 20), Sample(20, 20)});
  ASSERT_EQ(even.processes.size(), 3u);
  EXPECT_EQ(even.processes[0].process.pid, 10u);
  EXPECT_EQ(even.processes[0].energy_mj, 4);
  EXPECT_EQ(even.processes[1].energy_mj, 3);
  EXPECT_EQ(even.processes[2].energy_mj, 3);
  // 10 mJ at 1:2 is 3.33 / 6.67: the larger remainder (pid 9) gets the 1.
  IntervalAttribution uneven = Split(10, seconds(1), 0, {Sample(5, 10), Sample(9, 20)});
  EXPECT_EQ(uneven.processes[0].energy_mj, 3);
  EXPECT_EQ(uneven.processes[1].energy_mj, 7);
}

TEST(AttributeIntervalTest, IdleNeverExceedsMeasured) {
  // 300 W idle for 1 s would be 300 J; only 120 J was measured.
  IntervalAttribution a = Split(120'000, seconds(1), 300'000, {Sample(1, 90)});
  EXPECT_EQ(a.idle_energy_mj, 120'000);
  EXPECT_EQ(a.processes[0].energy_mj, 0);
  // A huge idle power over a huge duration saturates instead of wrapping.
  IntervalAttribution big = Split(5, nanoseconds(std::numeric_limits<std::int64_t>::max()),
                                  std::numeric_limits<std::uint32_t>::max(), {Sample(1, 50)});
  EXPECT_EQ(big.idle_energy_mj, 5);
}

TEST(AttributeIntervalTest, ConservesEnergyExactlyOverManyRandomIntervals) {
  std::mt19937_64 rng(20260824);
  std::uniform_int_distribution<std::int64_t> energy(0, 5'000'000);
  std::uniform_int_distribution<std::int64_t> duration_ms(0, 2'000);
  std::uniform_int_distribution<std::uint32_t> idle_mw(0, 400'000);
  std::uniform_int_distribution<int> count(0, 60);
  std::uniform_int_distribution<std::uint32_t> pid(1, 40);
  std::uniform_real_distribution<double> util(0.0, 100.0);
  for (int i = 0; i < 20'000; ++i) {
    std::vector<ProcessUtilizationSample> samples;
    const int n = count(rng);
    for (int k = 0; k < n; ++k) samples.push_back(Sample(pid(rng), k % 5 == 0 ? 0.0 : util(rng)));
    const std::int64_t measured = i == 0 ? std::numeric_limits<std::int64_t>::max() : energy(rng);
    IntervalAttribution a = Split(measured, milliseconds(duration_ms(rng)), idle_mw(rng), samples);
    ASSERT_EQ(SumParts(a), measured) << "interval " << i;
    ASSERT_LE(a.idle_energy_mj, measured);
    ASSERT_GE(a.unattributed_energy_mj, 0);
    for (const ProcessEnergy& p : a.processes) ASSERT_GE(p.energy_mj, 0);
  }
}

TEST(AttributeIntervalTest, PidsWithDifferentStartTimesAreDifferentProcesses) {
  IntervalAttribution a = Split(400, seconds(1), 0, {Sample(5, 30, 111), Sample(5, 10, 222)});
  ASSERT_EQ(a.processes.size(), 2u);
  EXPECT_EQ(a.processes[0].process, (ProcessKey{5, 111}));
  EXPECT_EQ(a.processes[0].energy_mj, 300);
  EXPECT_EQ(a.processes[1].energy_mj, 100);
}

TEST(AttributeIntervalTest, BadInputsAreErrorsNamingTheProblem) {
  auto negative_energy = AttributeInterval(-1, seconds(1), 0, {});
  ASSERT_FALSE(negative_energy);
  EXPECT_EQ(negative_energy.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(negative_energy.error().message(), HasSubstr("measured energy must not be negative (got -1 mJ)"));

  auto negative_duration = AttributeInterval(10, nanoseconds(-5), 0, {});
  ASSERT_FALSE(negative_duration);
  EXPECT_THAT(negative_duration.error().message(), HasSubstr("duration must not be negative (got -5 ns)"));

  const std::vector<ProcessUtilizationSample> over = {Sample(1, 50), Sample(42, 100.5)};
  auto over_100 = AttributeInterval(10, seconds(1), 0, over);
  ASSERT_FALSE(over_100);
  EXPECT_EQ(over_100.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(over_100.error().message(), HasSubstr("process 42's SM utilization"));
  EXPECT_THAT(over_100.error().message(), HasSubstr("(got 100.5)"));

  const std::vector<ProcessUtilizationSample> under = {Sample(3, -1)};
  EXPECT_FALSE(AttributeInterval(10, seconds(1), 0, under));
  const std::vector<ProcessUtilizationSample> nan = {Sample(4, std::nan(""))};
  auto not_a_number = AttributeInterval(10, seconds(1), 0, nan);
  ASSERT_FALSE(not_a_number);
  EXPECT_THAT(not_a_number.error().message(), HasSubstr("process 4's"));
  const std::vector<ProcessUtilizationSample> inf = {Sample(4, std::numeric_limits<double>::infinity())};
  EXPECT_FALSE(AttributeInterval(10, seconds(1), 0, inf));
}

// A counter read a little early, then a little late: the second interval's
// excess repays the first's shortfall and is idle, not activity.
TEST(AttributeIntervalTest, AnIdleShortfallCarriedForwardAbsorbsTheNextExcess) {
  const std::vector<ProcessUtilizationSample> none;
  IntervalAttribution early = Unwrap(AttributeInterval(35'000, seconds(1), 40'000, none));
  EXPECT_EQ(early.idle_energy_mj, 35'000);
  EXPECT_EQ(early.idle_shortfall_mj, 5'000);
  IntervalAttribution late = Unwrap(AttributeInterval(45'000, seconds(1), 40'000, none, early.idle_shortfall_mj));
  EXPECT_EQ(late.idle_energy_mj, 45'000);
  EXPECT_EQ(late.unattributed_energy_mj, 0);
  EXPECT_EQ(late.idle_shortfall_mj, 0);
  EXPECT_EQ(SumParts(late), 45'000);
  // Without the carry the same reading is 5 J of activity.
  EXPECT_EQ(Unwrap(AttributeInterval(45'000, seconds(1), 40'000, none)).unattributed_energy_mj, 5'000);
  // A carry larger than the excess leaves the rest owed; processes get only
  // what is above the allowance.
  const std::vector<ProcessUtilizationSample> one = {Sample(7, 100)};
  IntervalAttribution busy = Unwrap(AttributeInterval(50'000, seconds(1), 40'000, one, 4'000));
  EXPECT_EQ(busy.idle_energy_mj, 44'000);
  EXPECT_EQ(busy.processes.at(0).energy_mj, 6'000);
  EXPECT_EQ(busy.idle_shortfall_mj, 0);
  // A huge carry saturates instead of overflowing.
  IntervalAttribution huge = Unwrap(AttributeInterval(10, seconds(1), 40'000, none, std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(huge.idle_energy_mj, 10);
  EXPECT_EQ(SumParts(huge), 10);
  auto negative = AttributeInterval(10, seconds(1), 0, none, -1);
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(negative.error().message(), HasSubstr("idle carry must be >= 0 mJ (got -1)"));
}

TEST(IdlePowerEstimatorTest, StartsAtZeroWithNoSample) {
  IdlePowerEstimator e = Unwrap(IdlePowerEstimator::Create("NVIDIA A100", {}));
  EXPECT_EQ(e.IdlePowerMw(), 0u);
  EXPECT_EQ(e.source(), IdlePowerSource::kNone);
  EXPECT_EQ(IdlePowerSourceName(e.source()), "none");
}

TEST(IdlePowerEstimatorTest, IsTheLowestSampleOfTheTrailingWindow) {
  IdlePowerOptions options;
  options.window = seconds(10);
  IdlePowerEstimator e = Unwrap(IdlePowerEstimator::Create("NVIDIA A100", options));
  ASSERT_TRUE(e.AddSample(seconds(0), 200'000));
  ASSERT_TRUE(e.AddSample(seconds(1), 60'000));
  ASSERT_TRUE(e.AddSample(seconds(2), 250'000));
  EXPECT_EQ(e.IdlePowerMw(), 60'000u);
  EXPECT_EQ(e.source(), IdlePowerSource::kTrailingMinimum);
  // At 10.9 s the 60 W sample (1 s) is still in (0.9 s, 10.9 s].
  ASSERT_TRUE(e.AddSample(milliseconds(10'900), 300'000));
  EXPECT_EQ(e.IdlePowerMw(), 60'000u);
  // At 11 s it leaves the window: (1 s, 11 s] holds 250 W, 300 W, 280 W.
  ASSERT_TRUE(e.AddSample(seconds(11), 280'000));
  EXPECT_EQ(e.IdlePowerMw(), 250'000u);
}

TEST(IdlePowerEstimatorTest, OperatorValueForTheModelWins) {
  IdlePowerOptions options;
  options.idle_power_mw_by_model = {{"NVIDIA H100 80GB HBM3", 70'000}, {"NVIDIA A100", 50'000}};
  IdlePowerEstimator h100 = Unwrap(IdlePowerEstimator::Create("NVIDIA H100 80GB HBM3", options));
  EXPECT_EQ(h100.IdlePowerMw(), 70'000u);
  ASSERT_TRUE(h100.AddSample(seconds(1), 20'000));
  EXPECT_EQ(h100.IdlePowerMw(), 70'000u);
  EXPECT_EQ(h100.source(), IdlePowerSource::kOperator);
  // Another model is estimated from its samples.
  IdlePowerEstimator other = Unwrap(IdlePowerEstimator::Create("NVIDIA V100", options));
  ASSERT_TRUE(other.AddSample(seconds(1), 20'000));
  EXPECT_EQ(other.IdlePowerMw(), 20'000u);
  EXPECT_EQ(other.source(), IdlePowerSource::kTrailingMinimum);
}

TEST(IdlePowerEstimatorTest, BadInputsAreErrors) {
  IdlePowerOptions options;
  options.window = seconds(0);
  auto zero_window = IdlePowerEstimator::Create("x", options);
  ASSERT_FALSE(zero_window);
  EXPECT_THAT(zero_window.error().message(), HasSubstr("window must be positive"));
  IdlePowerEstimator e = Unwrap(IdlePowerEstimator::Create("x", {}));
  ASSERT_TRUE(e.AddSample(seconds(5), 100'000));
  Status back = e.AddSample(seconds(4), 10'000);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(back.error().message(), HasSubstr("older than the previous one"));
  EXPECT_EQ(e.IdlePowerMw(), 100'000u);  // the bad sample was not added
}

class AttributionLedgerTest : public ::testing::Test {
 protected:
  std::unique_ptr<AttributionLedger> Make(AttributionLedgerOptions options = {}) {
    options.clock = &clock_;
    return Unwrap(AttributionLedger::Create(options));
  }
  FakeClock clock_;
};

TEST_F(AttributionLedgerTest, AccumulatesPerGpuAndProcess) {
  auto ledger = Make();
  ASSERT_TRUE(ledger->Add(0, Split(500, seconds(1), 100, {Sample(1, 75), Sample(2, 25)})));
  ASSERT_TRUE(ledger->Add(1, Split(50, seconds(1), 0, {Sample(1, 10)})));
  ASSERT_TRUE(ledger->Add(0, Split(500, seconds(1), 100, {Sample(1, 75), Sample(2, 25)})));
  AttributionSnapshot s = ledger->Snapshot();
  ASSERT_EQ(s.processes.size(), 3u);
  EXPECT_EQ(s.processes[0].gpu_index, 0u);
  EXPECT_EQ(s.processes[0].energy_mj, 600);
  EXPECT_EQ(s.processes[1].energy_mj, 200);
  EXPECT_EQ(s.processes[2].gpu_index, 1u);
  EXPECT_EQ(s.processes[2].energy_mj, 50);
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_EQ(s.gpus[0].measured_energy_mj, 1'000);
  EXPECT_EQ(s.gpus[0].idle_energy_mj, 200);
  ExpectLedgerConserves(s);
}

TEST_F(AttributionLedgerTest, ReusedPidIsANewEntry) {
  auto ledger = Make();
  ASSERT_TRUE(ledger->Add(0, Split(100, seconds(1), 0, {Sample(77, 50, 1'000)})));
  ASSERT_TRUE(ledger->Add(0, Split(40, seconds(1), 0, {Sample(77, 50, 9'000)})));
  AttributionSnapshot s = ledger->Snapshot();
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.processes[0].process, (ProcessKey{77, 1'000}));
  EXPECT_EQ(s.processes[0].energy_mj, 100);
  EXPECT_EQ(s.processes[1].process, (ProcessKey{77, 9'000}));
  EXPECT_EQ(s.processes[1].energy_mj, 40);
}

TEST_F(AttributionLedgerTest, EndedEntryIsDroppedExactlyAfterRetention) {
  AttributionLedgerOptions options;
  options.retention = minutes(5);
  auto ledger = Make(options);
  ASSERT_TRUE(ledger->Add(0, Split(100, seconds(1), 0, {Sample(1, 50), Sample(2, 50)})));
  clock_.Advance(minutes(2));
  ASSERT_TRUE(ledger->Add(0, Split(100, seconds(1), 0, {Sample(2, 50)})));  // pid 2 seen again
  clock_.Advance(minutes(3) - nanoseconds(1));
  AttributionSnapshot before = ledger->Snapshot();
  ASSERT_EQ(before.processes.size(), 2u);  // pid 1 unseen for 5 min - 1 ns
  clock_.Advance(nanoseconds(1));
  AttributionSnapshot after = ledger->Snapshot();
  ASSERT_EQ(after.processes.size(), 1u);
  EXPECT_EQ(after.processes[0].process.pid, 2u);
  EXPECT_EQ(after.gpus[0].ended_energy_mj, 50);
  ExpectLedgerConserves(after);
  clock_.Advance(minutes(2));
  EXPECT_TRUE(ledger->Snapshot().processes.empty());
  EXPECT_EQ(ledger->Snapshot().gpus[0].ended_energy_mj, 200);
}

TEST_F(AttributionLedgerTest, CapSendsNewProcessesToOtherAndConserves) {
  AttributionLedgerOptions options;
  options.max_entries = 1000;
  auto ledger = Make(options);
  // 5,000 short processes on 2 GPUs, one interval each, all within the
  // retention: the first 1,000 get entries, the rest go to `other`.
  for (std::uint32_t pid = 1; pid <= 5'000; ++pid) {
    ASSERT_TRUE(ledger->Add(pid % 2, Split(1'000 + pid, milliseconds(100), 1'000, {Sample(pid, 40)})));
    clock_.Advance(milliseconds(10));
  }
  AttributionSnapshot s = ledger->Snapshot();
  EXPECT_EQ(s.processes.size(), 1000u);
  std::int64_t other = 0;
  for (const GpuEnergyTotals& g : s.gpus) other += g.other_energy_mj;
  EXPECT_GT(other, 0);
  ExpectLedgerConserves(s);
}

TEST_F(AttributionLedgerTest, CapHoldsAsShortProcessesComeAndGo) {
  AttributionLedgerOptions options;
  options.max_entries = 1000;
  options.retention = seconds(30);
  auto ledger = Make(options);
  // 10,000 short processes, two new ones per 50 ms interval, each seen once:
  // a 30 s retention would keep 1,200 alive, over the cap. The cap must hold
  // at every step, ended entries must make room, and nothing may be lost.
  for (std::uint32_t pid = 1; pid <= 5'000; ++pid) {
    ASSERT_TRUE(ledger->Add(0, Split(2'000, milliseconds(50), 10'000, {Sample(pid, 10), Sample(pid + 100'000, 30)})));
    clock_.Advance(milliseconds(50));
    if (pid % 250 == 0) {
      AttributionSnapshot s = ledger->Snapshot();
      ASSERT_LE(s.processes.size(), 1000u) << "after " << pid;
      ExpectLedgerConserves(s);
    }
  }
  AttributionSnapshot s = ledger->Snapshot();
  EXPECT_EQ(s.gpus[0].measured_energy_mj, 5'000 * 2'000);
  EXPECT_GT(s.gpus[0].other_energy_mj, 0);
  EXPECT_GT(s.gpus[0].ended_energy_mj, 0);
  ExpectLedgerConserves(s);
}

TEST_F(AttributionLedgerTest, EndedEntriesMakeRoomForNewProcesses) {
  AttributionLedgerOptions options;
  options.max_entries = 1;
  options.retention = seconds(10);
  auto ledger = Make(options);
  ASSERT_TRUE(ledger->Add(0, Split(10, seconds(1), 0, {Sample(1, 50)})));
  ASSERT_TRUE(ledger->Add(0, Split(20, seconds(1), 0, {Sample(2, 50)})));  // full: to other
  EXPECT_EQ(ledger->Snapshot().gpus[0].other_energy_mj, 20);
  clock_.Advance(seconds(10));
  ASSERT_TRUE(ledger->Add(0, Split(30, seconds(1), 0, {Sample(2, 50)})));  // pid 1 ended: room
  AttributionSnapshot s = ledger->Snapshot();
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].process.pid, 2u);
  EXPECT_EQ(s.processes[0].energy_mj, 30);
  EXPECT_EQ(s.gpus[0].other_energy_mj, 20);
  EXPECT_EQ(s.gpus[0].ended_energy_mj, 10);
  ExpectLedgerConserves(s);
}

TEST_F(AttributionLedgerTest, BadInputsAreErrors) {
  AttributionLedgerOptions options;
  options.retention = nanoseconds(0);
  options.clock = &clock_;
  auto zero = AttributionLedger::Create(options);
  ASSERT_FALSE(zero);
  EXPECT_THAT(zero.error().message(), HasSubstr("retention must be positive"));

  auto ledger = Make();
  IntervalAttribution broken = Split(100, seconds(1), 0, {Sample(1, 50)});
  broken.processes[0].energy_mj = 99;  // 1 mJ lost
  Status lost = ledger->Add(3, broken);
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(lost.error().message(), HasSubstr("GPU 3's interval does not add up"));
  IntervalAttribution negative = Split(100, seconds(1), 0, {Sample(1, 50), Sample(2, 50)});
  negative.processes[0].energy_mj = -10;
  negative.processes[1].energy_mj = 110;
  EXPECT_FALSE(ledger->Add(3, negative));
  EXPECT_TRUE(ledger->Snapshot().gpus.empty());  // nothing was added
}

}  // namespace
}  // namespace zeus::monitor
