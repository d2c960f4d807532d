// Copyright 2026 The Zeus C++ Authors.

#include "physics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace zeus::emulator {
namespace {

constexpr std::int64_t kMs = kNsPerMs;
constexpr std::int64_t kS = kNsPerSecond;

Energy Mj(std::uint64_t mj, std::uint64_t rem_pj = 0) { return Energy{mj, rem_pj}; }

TEST(EmulatorEnergyTest, AddPowerIsExact) {
  Energy e{0, 0};
  e.AddPower(100'000, 1'500 * kMs);  // 100 W for 1.5 s
  EXPECT_EQ(e, Mj(150'000));
  e.AddPower(1, 1);  // 1 mW for 1 ns = 1 pJ
  EXPECT_EQ(e, Mj(150'000, 1));
  e.AddPower(1, 999'999'999);
  EXPECT_EQ(e, Mj(150'001, 0));
}

TEST(EmulatorEnergyTest, AddPowerDoesNotOverflowForLargeValues) {
  Energy e{0, 0};
  e.AddPower(100'000'000, 1'000'000 * kS);  // 100 kW for a million seconds
  EXPECT_EQ(e, Mj(100'000'000ull * 1'000'000ull));
}

TEST(EmulatorEnergyTest, AddAndMinusCarryAndBorrow) {
  Energy a = Mj(5, 900'000'000);
  a.Add(Mj(1, 200'000'000));
  EXPECT_EQ(a, Mj(7, 100'000'000));
  EXPECT_EQ(a.Minus(Mj(2, 600'000'000)), Mj(4, 500'000'000));
  EXPECT_EQ(a.Minus(a), Mj(0, 0));
  EXPECT_EQ(Mj(3, 7).TotalPicojoules(), 3'000'000'007ull);
}

TEST(EmulatorLimitTimelineTest, LimitAtIsRightContinuous) {
  const std::vector<LimitChange> changes = {{100, 150'000, 0, {}}, {200, 200'000, 0, {}}, {200, 210'000, 0, {}}};
  const LimitTimeline timeline{250'000, changes};
  EXPECT_EQ(timeline.LimitAt(0), 250'000u);
  EXPECT_EQ(timeline.LimitAt(99), 250'000u);
  EXPECT_EQ(timeline.LimitAt(100), 150'000u);
  EXPECT_EQ(timeline.LimitAt(199), 150'000u);
  EXPECT_EQ(timeline.LimitAt(200), 210'000u);  // the later of two ties wins
  EXPECT_EQ(timeline.LimitAt(1'000), 210'000u);
}

TEST(EmulatorPowerModelTest, ConstantIsClampedByTheLimit) {
  const PowerModel model = PowerModel::Constant(180'000);
  EXPECT_EQ(model.DemandMw(0, 100'000), 180'000u);
  EXPECT_EQ(model.DrawnMw(0, 100'000), 100'000u);
  EXPECT_EQ(model.DrawnMw(5 * kS, 250'000), 180'000u);
  EXPECT_EQ(model.NextStepAfterNs(0), kNeverNs);
  EXPECT_EQ(model.IterationTimeS(200'000), std::nullopt);
}

TEST(EmulatorPowerModelTest, ScheduleSteps) {
  const PowerModel model = PowerModel::Schedule({{0, 100'000}, {1'500 * kMs, 200'000}, {2 * kS, 50'000}});
  EXPECT_EQ(model.DemandMw(0, 300'000), 100'000u);
  EXPECT_EQ(model.DemandMw(1'500 * kMs - 1, 300'000), 100'000u);
  EXPECT_EQ(model.DemandMw(1'500 * kMs, 300'000), 200'000u);
  EXPECT_EQ(model.DrawnMw(1'600 * kMs, 150'000), 150'000u);
  EXPECT_EQ(model.DemandMw(100 * kS, 300'000), 50'000u);
  EXPECT_EQ(model.NextStepAfterNs(0), 1'500 * kMs);
  EXPECT_EQ(model.NextStepAfterNs(1'500 * kMs), 2 * kS);
  EXPECT_EQ(model.NextStepAfterNs(2 * kS), kNeverNs);
}

TEST(EmulatorPowerModelTest, WorkloadInterpolatesAndClamps) {
  const PowerModel model = PowerModel::Workload(
      {{100'000, 95'000.0, 0.5}, {150'000, 140'000.0, 0.4}, {200'000, 180'000.0, 0.35}, {250'000, 190'000.0, 0.33}});
  EXPECT_EQ(model.DemandMw(0, 150'000), 140'000u);  // on a point
  EXPECT_EQ(model.DemandMw(0, 175'000), 160'000u);  // half-way
  EXPECT_EQ(model.DemandMw(0, 120'000), 113'000u);  // 95 + 0.4 * 45
  EXPECT_EQ(model.DemandMw(0, 50'000), 95'000u);    // clamped below
  EXPECT_EQ(model.DrawnMw(0, 50'000), 50'000u);     // and capped by the limit
  EXPECT_EQ(model.DemandMw(0, 400'000), 190'000u);  // clamped above
  EXPECT_DOUBLE_EQ(*model.IterationTimeS(175'000), 0.375);
  EXPECT_DOUBLE_EQ(*model.IterationTimeS(10'000), 0.5);
  EXPECT_DOUBLE_EQ(*model.IterationTimeS(900'000), 0.33);
}

TEST(EmulatorPowerModelTest, WorkloadWithoutIterationTimes) {
  const PowerModel model = PowerModel::Workload({{100'000, 90'000.0, std::nullopt}});
  EXPECT_EQ(model.DemandMw(0, 300'000), 90'000u);
  EXPECT_EQ(model.IterationTimeS(100'000), std::nullopt);
}

TEST(EmulatorIntegrateEnergyTest, FollowsLimitChangesAndScheduleSteps) {
  // Demand 100 W, 200 W from 1 s, 50 W from 3 s; limit 250 W, 150 W from
  // 0.5 s, 250 W from 2 s.
  const PowerModel model = PowerModel::Schedule({{0, 100'000}, {1 * kS, 200'000}, {3 * kS, 50'000}});
  const std::vector<LimitChange> changes = {{500 * kMs, 150'000, 0, {}}, {2 * kS, 250'000, 0, {}}};
  const LimitTimeline timeline{250'000, changes};
  // 50 J + 50 J + 150 J + 200 J + 50 J.
  EXPECT_EQ(IntegrateEnergy(model, timeline, 0, 4 * kS), Mj(500'000));
  // 0.25..0.5: 25 J, 0.5..1: 50 J, 1..1.25: 37.5 J.
  EXPECT_EQ(IntegrateEnergy(model, timeline, 250 * kMs, 1'250 * kMs), Mj(112'500));
  EXPECT_EQ(IntegrateEnergy(model, timeline, 3 * kS, 3 * kS), Mj(0));
  EXPECT_EQ(IntegrateEnergy(model, timeline, 3 * kS, 1 * kS), Mj(0));
}

// Reference integration: demand and limit change only on whole milliseconds,
// so summing per millisecond is exact.
Energy NaiveEnergy(const PowerModel& model, const LimitTimeline& timeline, std::int64_t to_ms) {
  Energy e{0, 0};
  for (std::int64_t ms = 0; ms < to_ms; ++ms) {
    const std::int64_t t = ms * kMs;
    e.AddPower(model.DrawnMw(t, timeline.LimitAt(t)), kMs);
  }
  return e;
}

TEST(EmulatorIntegrateEnergyTest, MatchesNaiveIntegrationOnRandomTimelines) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> power_w(0, 400);
  std::uniform_int_distribution<int> gap_ms(1, 50);
  for (int round = 0; round < 20; ++round) {
    std::vector<ScheduleStep> steps = {{0, static_cast<std::uint32_t>(power_w(rng)) * 1000u}};
    std::vector<LimitChange> changes;
    std::int64_t t_ms = 0;
    while (t_ms < 2'000) {
      t_ms += gap_ms(rng);
      steps.push_back({t_ms * kMs, static_cast<std::uint32_t>(power_w(rng)) * 1000u + 7u});
      changes.push_back({(t_ms + gap_ms(rng)) * kMs, static_cast<std::uint32_t>(power_w(rng)) * 1000u + 3u, 0, {}});
    }
    std::sort(changes.begin(), changes.end(),
              [](const LimitChange& a, const LimitChange& b) { return a.time_ns < b.time_ns; });
    const PowerModel model = PowerModel::Schedule(steps);
    const LimitTimeline timeline{300'000, changes};
    EXPECT_EQ(IntegrateEnergy(model, timeline, 0, 2'100 * kMs), NaiveEnergy(model, timeline, 2'100))
        << "round " << round;
  }
}

TEST(EmulatorAveragePowerTest, AveragesAndRounds) {
  const PowerModel model = PowerModel::Schedule({{0, 100'000}, {250 * kMs, 200'000}});
  const LimitTimeline timeline{300'000, {}};
  // (0.25 * 100 + 0.05 * 200) / 0.3 = 116.666... W
  EXPECT_EQ(AveragePowerMw(model, timeline, 0, 300 * kMs), 116'667u);
  EXPECT_EQ(AveragePowerMw(model, timeline, 250 * kMs, 300 * kMs), 200'000u);
  // An empty interval reads the power at its end.
  EXPECT_EQ(AveragePowerMw(model, timeline, 250 * kMs, 250 * kMs), 200'000u);
}

TEST(EmulatorPowerSensorTest, ChangesOnlyAtUpdateInstantsAndAveragesTheWindow) {
  const PowerModel model = PowerModel::Schedule({{0, 100'000}, {250 * kMs, 200'000}});
  const LimitTimeline timeline{300'000, {}};
  const PowerSensor sensor{100 * kMs, 1'000 * kMs};
  EXPECT_EQ(sensor.LatestUpdateNs(0), 0);
  EXPECT_EQ(sensor.LatestUpdateNs(299 * kMs), 200 * kMs);
  EXPECT_EQ(sensor.LatestUpdateNs(300 * kMs), 300 * kMs);
  EXPECT_EQ(sensor.AverageMw(model, timeline, 0), 100'000u);            // nothing yet: power at 0
  EXPECT_EQ(sensor.AverageMw(model, timeline, 260 * kMs), 100'000u);    // u = 0.2 s, [0, 0.2]
  EXPECT_EQ(sensor.AverageMw(model, timeline, 300 * kMs), 116'667u);    // u = 0.3 s, [0, 0.3]
  EXPECT_EQ(sensor.AverageMw(model, timeline, 399 * kMs), 116'667u);    // still u = 0.3 s
  EXPECT_EQ(sensor.AverageMw(model, timeline, 1'200 * kMs), 195'000u);  // [0.2, 1.2]: 5 J + 190 J
  EXPECT_EQ(sensor.AverageMw(model, timeline, 1'500 * kMs), 200'000u);  // [0.5, 1.5]
  EXPECT_EQ(sensor.InstantMw(model, timeline, 260 * kMs), 100'000u);
  EXPECT_EQ(sensor.InstantMw(model, timeline, 300 * kMs), 200'000u);
}

TEST(EmulatorPowerSensorTest, ZeroWindowReadsThePowerAtTheUpdateInstant) {
  const PowerModel model = PowerModel::Schedule({{0, 100'000}, {250 * kMs, 200'000}});
  const LimitTimeline timeline{300'000, {}};
  const PowerSensor sensor{100 * kMs, 0};
  EXPECT_EQ(sensor.AverageMw(model, timeline, 299 * kMs), 100'000u);
  EXPECT_EQ(sensor.AverageMw(model, timeline, 300 * kMs), 200'000u);
}

TEST(EmulatorLimitHistoryTest, RecordsAndIntegrates) {
  const PowerModel model = PowerModel::Constant(200'000);
  LimitHistory history;
  InitLimitHistory(&history, 250'000);
  EXPECT_EQ(CurrentLimitMw(history), 250'000u);
  RecordLimitChange(&history, model, std::nullopt, 1 * kS, 150'000);
  RecordLimitChange(&history, model, std::nullopt, 3 * kS, 300'000);
  EXPECT_EQ(CurrentLimitMw(history), 300'000u);
  EXPECT_EQ(history.count, 2u);
  // 200 J + 300 J + 100 J
  EXPECT_EQ(TotalEnergyAt(history, model, 3'500 * kMs), Mj(600'000));
}

TEST(EmulatorLimitHistoryTest, SameInstantReplacesAndEarlierTimesAreClamped) {
  const PowerModel model = PowerModel::Constant(200'000);
  LimitHistory history;
  InitLimitHistory(&history, 250'000);
  RecordLimitChange(&history, model, std::nullopt, 2 * kS, 150'000);
  RecordLimitChange(&history, model, std::nullopt, 2 * kS, 120'000);
  EXPECT_EQ(history.count, 1u);
  EXPECT_EQ(CurrentLimitMw(history), 120'000u);
  RecordLimitChange(&history, model, std::nullopt, 1 * kS, 180'000);  // moved up to 2 s
  EXPECT_EQ(history.count, 1u);
  EXPECT_EQ(CurrentLimitMw(history), 180'000u);
  EXPECT_EQ(TotalEnergyAt(history, model, 3 * kS), Mj(400'000 + 180'000));
}

TEST(EmulatorLimitHistoryTest, FoldingKeepsEnergyExactBeyondCapacity) {
  const PowerModel model = PowerModel::Schedule({{0, 90'000}, {333 * kMs, 260'000}, {777 * kMs, 140'000}});
  const std::optional<std::int64_t> reset_ns = 100 * kMs + 500'000;  // 100.5 ms, long folded by the end
  LimitHistory history;
  InitLimitHistory(&history, 250'000);
  std::vector<LimitChange> all;
  constexpr int kChanges = 3 * static_cast<int>(kLimitHistoryCapacity) + 17;
  for (int i = 1; i <= kChanges; ++i) {
    const std::uint32_t limit = 100'000u + static_cast<std::uint32_t>((i * 37) % 200) * 1000u;
    RecordLimitChange(&history, model, reset_ns, i * kMs, limit);
    all.push_back({i * kMs, limit, 0, {}});
  }
  EXPECT_EQ(history.count, kLimitHistoryCapacity);
  EXPECT_NE(history.base.time_ns, 0);
  EXPECT_EQ(history.reset_captured, 1u);
  const LimitTimeline full{250'000, all};
  const std::int64_t end = (kChanges + 5) * kMs;
  EXPECT_EQ(TotalEnergyAt(history, model, end), IntegrateEnergy(model, full, 0, end));
  EXPECT_EQ(CounterEnergyAt(history, model, reset_ns, end), IntegrateEnergy(model, full, *reset_ns, end));
  // Windows inside the kept history are exact too.
  const std::int64_t from = end - 200 * kMs;
  EXPECT_EQ(AveragePowerMw(model, TimelineOf(history), from, end), AveragePowerMw(model, full, from, end));
}

// The setter forgets every change that no reading from now on can need
// (ForgetLimitChangesBefore at now - look-back): every reading at an instant
// after that horizon must be what the whole history gives, bit for bit.
TEST(EmulatorLimitHistoryTest, ForgettingKeepsEveryReadingAfterTheHorizonExact) {
  const PowerModel model =
      PowerModel::Schedule({{0, 90'000}, {333 * kMs, 260'000}, {777 * kMs, 140'000}, {1'500 * kMs, 300'000}});
  const std::optional<std::int64_t> reset_ns = 400 * kMs + 123;
  constexpr std::int64_t kLookbackNs = 50 * kMs;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> gap_us(1, 80'000);
  std::uniform_int_distribution<int> limit_w(100, 300);
  std::uniform_int_distribution<int> settle_ms(0, 30);
  LimitHistory full;  // at most 20 ramps of 11 changes: never folds
  LimitHistory kept;
  InitLimitHistory(&full, 250'000);
  InitLimitHistory(&kept, 250'000);
  std::int64_t now = 0;
  for (int i = 0; i < 20; ++i) {
    now += gap_us(rng) * std::int64_t{1'000};
    const auto limit = static_cast<std::uint32_t>(limit_w(rng)) * 1000u + 7u;
    const std::int64_t settle = settle_ms(rng) * kMs;
    RecordLimitRamp(&full, model, reset_ns, now, limit, settle);
    ForgetLimitChangesBefore(&kept, model, reset_ns, now - kLookbackNs);
    RecordLimitRamp(&kept, model, reset_ns, now, limit, settle);
    ASSERT_LT(full.count, kLimitHistoryCapacity);
    const std::int64_t horizon = std::max<std::int64_t>(0, now - kLookbackNs);
    for (std::int64_t t = horizon; t <= now + 40 * kMs; t += 997'001) {
      EXPECT_EQ(TotalEnergyAt(kept, model, t), TotalEnergyAt(full, model, t)) << i << " at " << t;
      EXPECT_EQ(CounterEnergyAt(kept, model, reset_ns, t), CounterEnergyAt(full, model, reset_ns, t)) << t;
      EXPECT_EQ(TimelineOf(kept).LimitAt(t), TimelineOf(full).LimitAt(t)) << t;
      EXPECT_EQ(AveragePowerMw(model, TimelineOf(kept), horizon, t),
                AveragePowerMw(model, TimelineOf(full), horizon, t))
          << t;
    }
    EXPECT_EQ(CurrentLimitMw(kept), CurrentLimitMw(full));
  }
  // The horizon passed the reset, whose energy was captured on the way.
  EXPECT_GT(now - kLookbackNs, *reset_ns);
  EXPECT_EQ(kept.reset_captured, 1u);
  EXPECT_LT(kept.count, full.count / 4);
}

// A long run: 100,000 limit changes, each settling over 100 ms, one a second,
// with readings that look back 1.1 s. The history holds the last two ramps at
// most (constant space, and an energy reading passes over only the changes
// after its instant), and the energy is exact.
TEST(EmulatorLimitHistoryTest, HistoryStaysShortOverALongRun) {
  const PowerModel model = PowerModel::Constant(300'000);  // above every limit: draws the cap
  constexpr std::int64_t kLookbackNs = 1'100 * kMs;
  constexpr int kChanges = 100'000;
  LimitHistory history;
  InitLimitHistory(&history, 250'000);
  std::uint32_t most_kept = 0;
  Energy expected = Mj(250'000);  // 250 W until the first change at 1 s
  for (int k = 1; k <= kChanges; ++k) {
    const std::int64_t now = k * kS;
    const std::uint32_t limit = k % 2 == 1 ? 150'000 : 250'000;
    ForgetLimitChangesBefore(&history, model, std::nullopt, now - kLookbackNs);
    RecordLimitRamp(&history, model, std::nullopt, now, limit, 100 * kMs);
    most_kept = std::max(most_kept, history.count);
    // The ramp's ten steps average 200 W over 0.1 s, then 0.9 s at the limit.
    expected.Add(Mj(20'000 + limit / 1000 * 900));
  }
  EXPECT_LE(most_kept, 2u * (kSettleSteps + 1));
  EXPECT_EQ(TotalEnergyAt(history, model, (kChanges + 1) * kS), expected);
}

TEST(EmulatorLimitHistoryTest, CounterResetRestartsFromZero) {
  const PowerModel model = PowerModel::Constant(100'000);
  LimitHistory history;
  InitLimitHistory(&history, 250'000);
  const std::optional<std::int64_t> reset_ns = 1 * kS;
  EXPECT_EQ(CounterEnergyAt(history, model, reset_ns, 500 * kMs), Mj(50'000));
  EXPECT_EQ(CounterEnergyAt(history, model, reset_ns, 1 * kS), Mj(0));
  RecordLimitChange(&history, model, reset_ns, 2 * kS, 50'000);
  // 1..2 s at 100 W, 2..3 s at 50 W.
  EXPECT_EQ(CounterEnergyAt(history, model, reset_ns, 3 * kS), Mj(150'000));
  EXPECT_EQ(CounterEnergyAt(history, model, std::nullopt, 3 * kS), Mj(250'000));
}

}  // namespace
}  // namespace zeus::emulator
