// Copyright 2026 The Zeus C++ Authors.
//
// The thermal model and the idle activity of physics.h: closed forms checked
// against the model's definition (steady state, time constant, leakage,
// cooling), a fine Euler integration, and the history's bookkeeping.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "physics.h"

namespace zeus::emulator {
namespace {

// No leakage: a plain first-order lag. T_ss = 30 + 0.2 x P.
ThermalModel Lag() { return ThermalModel{30.0, 0.2, 10.0, 0.0, 30.0}; }
// With leakage 0.5 %/°C.
ThermalModel Leaky() { return ThermalModel{30.0, 0.2, 10.0, 0.005, 30.0}; }

PowerModel Busy(std::uint32_t power_mw, std::optional<ThermalModel> thermal, std::uint32_t idle_mw = 0) {
  PowerModel model = PowerModel::Constant(power_mw);
  model.set_thermal(thermal);
  model.set_idle_mw(idle_mw);
  return model;
}

TEST(EmulatorThermalTest, SteadyStateIsAmbientPlusResistanceTimesPower) {
  // 200 W for 20 time constants: 30 + 0.2 x 200 = 70 °C.
  const ThermalInterval end = IntegrateThermal(Lag(), 200.0, 300.0, 30.0, 200.0);
  EXPECT_NEAR(end.end_c, 70.0, 1e-6);
  EXPECT_NEAR(end.energy_j, 200.0 * 200.0, 1e-6);  // no leakage: power is the work power
}

TEST(EmulatorThermalTest, AfterOneTimeConstantSixtyThreePercentOfTheStep) {
  const ThermalInterval after_tau = IntegrateThermal(Lag(), 200.0, 300.0, 30.0, 10.0);
  EXPECT_NEAR((after_tau.end_c - 30.0) / 40.0, 1.0 - std::exp(-1.0), 1e-12);  // 0.632
  EXPECT_NEAR((after_tau.end_c - 30.0) / 40.0, 0.632, 1e-3);
}

TEST(EmulatorThermalTest, LeakageRaisesPowerAndSteadyState) {
  // T = 80: P = 200 x (1 + 0.005 x 50) = 250 W; the steady state solves T = 30 + 0.2 P(T): 80 °C.
  EXPECT_DOUBLE_EQ(ThermalPowerW(Leaky(), 200.0, 300.0, 80.0), 250.0);
  EXPECT_DOUBLE_EQ(ThermalPowerW(Leaky(), 200.0, 300.0, 30.0), 200.0);
  const ThermalInterval hot = IntegrateThermal(Leaky(), 200.0, 300.0, 30.0, 400.0);
  EXPECT_NEAR(hot.end_c, 80.0, 1e-6);
  // Hotter silicon draws more energy for the same work: a 10 s interval from 80 °C versus from 30 °C.
  const double from_cold = IntegrateThermal(Leaky(), 200.0, 300.0, 30.0, 10.0).energy_j;
  const double from_hot = IntegrateThermal(Leaky(), 200.0, 300.0, 80.0, 10.0).energy_j;
  EXPECT_NEAR(from_hot, 2500.0, 1e-6);  // steady: 250 W
  EXPECT_GT(from_hot, from_cold * 1.1);
  // The leaky lag's time constant is tau / (1 - R k W) = 10 / 0.8 = 12.5 s.
  const ThermalInterval after = IntegrateThermal(Leaky(), 200.0, 300.0, 30.0, 12.5);
  EXPECT_NEAR((after.end_c - 30.0) / 50.0, 1.0 - std::exp(-1.0), 1e-12);
}

TEST(EmulatorThermalTest, CoolingReturnsToAmbient) {
  const ThermalInterval cooled = IntegrateThermal(Leaky(), 0.0, 300.0, 80.0, 300.0);
  EXPECT_NEAR(cooled.end_c, 30.0, 1e-9);
  EXPECT_EQ(cooled.energy_j, 0.0);
}

TEST(EmulatorThermalTest, ClosedFormMatchesAFineEulerIntegrationAcrossTheCap) {
  // 280 W of work under a 300 W cap: leakage reaches the cap at T* = 30 + (300/280 - 1) / 0.005 = 44.3 °C.
  const ThermalModel thermal = Leaky();
  double t_c = 30.0;
  double energy_j = 0.0;
  const double dt = 1e-4;
  for (int i = 0; i < 300'000; ++i) {  // 30 s
    const double p = ThermalPowerW(thermal, 280.0, 300.0, t_c);
    energy_j += p * dt;
    t_c += (thermal.ambient_c + thermal.resistance_c_per_w * p - t_c) / thermal.time_constant_s * dt;
  }
  const ThermalInterval exact = IntegrateThermal(thermal, 280.0, 300.0, 30.0, 30.0);
  EXPECT_NEAR(exact.end_c, t_c, 1e-2);
  EXPECT_NEAR(exact.energy_j, energy_j, 0.5);
  EXPECT_NEAR(ThermalPowerW(thermal, 280.0, 300.0, exact.end_c), 300.0, 1e-9);  // capped now
  // And back down: from hot, with the work removed, it leaves the cap at once and cools.
  const ThermalInterval down = IntegrateThermal(thermal, 100.0, 300.0, exact.end_c, 100.0);
  EXPECT_LT(down.end_c, exact.end_c);
}

TEST(EmulatorThermalTest, SplittingAnIntervalChangesNothing) {
  const ThermalInterval whole = IntegrateThermal(Leaky(), 280.0, 300.0, 35.0, 17.0);
  const ThermalInterval first = IntegrateThermal(Leaky(), 280.0, 300.0, 35.0, 6.0);
  const ThermalInterval second = IntegrateThermal(Leaky(), 280.0, 300.0, first.end_c, 11.0);
  EXPECT_NEAR(second.end_c, whole.end_c, 1e-9);
  EXPECT_NEAR(first.energy_j + second.energy_j, whole.energy_j, 1e-6);
}

TEST(EmulatorThermalTest, HistoryEnergyAndTemperatureFollowTheModel) {
  const PowerModel model = Busy(200'000, Leaky(), 50'000);
  LimitHistory history;
  InitLimitHistory(&history, 300'000, 30.0);
  // Busy 10 s, idle 20 s, busy 5 s.
  RecordActivityChange(&history, model, std::nullopt, 10 * kNsPerSecond, true);
  RecordActivityChange(&history, model, std::nullopt, 30 * kNsPerSecond, false);
  ThermalInterval a = IntegrateThermal(Leaky(), 200.0, 300.0, 30.0, 10.0);
  ThermalInterval b = IntegrateThermal(Leaky(), 50.0, 300.0, a.end_c, 20.0);
  ThermalInterval c = IntegrateThermal(Leaky(), 200.0, 300.0, b.end_c, 5.0);
  const std::int64_t end_ns = 35 * kNsPerSecond;
  const double total_j = a.energy_j + b.energy_j + c.energy_j;
  EXPECT_NEAR(static_cast<double>(TotalEnergyAt(history, model, end_ns).TotalPicojoules()) * 1e-12, total_j, 1e-6);
  EXPECT_NEAR(TemperatureAt(model, TimelineOf(history), end_ns), c.end_c, 1e-9);
  EXPECT_NEAR(TemperatureAt(model, TimelineOf(history), 10 * kNsPerSecond), a.end_c, 1e-9);
  // The instant power: idle at 15 s, busy with leakage at 35 s.
  EXPECT_EQ(PowerAtMw(model, TimelineOf(history), end_ns),
            static_cast<std::uint32_t>(std::llround(ThermalPowerW(Leaky(), 200.0, 300.0, c.end_c) * 1000.0)));
  EXPECT_LT(PowerAtMw(model, TimelineOf(history), 15 * kNsPerSecond), 60'000u);
  // Energy never decreases with time.
  std::uint64_t previous = 0;
  for (std::int64_t t = 0; t <= end_ns; t += 250 * kNsPerMs) {
    const std::uint64_t pj = TotalEnergyAt(history, model, t).TotalPicojoules();
    EXPECT_GE(pj, previous) << t;
    previous = pj;
  }
  // Folding the history changes no reading after the horizon.
  LimitHistory folded = history;
  ForgetLimitChangesBefore(&folded, model, std::nullopt, 20 * kNsPerSecond);
  EXPECT_EQ(folded.count, 1u);
  EXPECT_EQ(TotalEnergyAt(folded, model, end_ns), TotalEnergyAt(history, model, end_ns));
}

TEST(EmulatorThermalTest, AnActivityChangeInsideASettlingRampKeepsTheRamp) {
  const PowerModel model = Busy(280'000, std::nullopt, 50'000);
  LimitHistory history;
  InitLimitHistory(&history, 300'000);
  RecordLimitRamp(&history, model, std::nullopt, 1 * kNsPerSecond, 100'000, 1 * kNsPerSecond);
  const std::uint32_t ramp_entries = history.count;
  RecordActivityChange(&history, model, std::nullopt, 1'550 * kNsPerMs, true);
  EXPECT_EQ(history.count, ramp_entries + 1);
  EXPECT_EQ(CurrentLimitMw(history), 100'000u);
  const LimitTimeline timeline = TimelineOf(history);
  EXPECT_FALSE(timeline.ConditionAt(1'540 * kNsPerMs).idle);
  EXPECT_TRUE(timeline.ConditionAt(1'550 * kNsPerMs).idle);
  EXPECT_TRUE(timeline.ConditionAt(3 * kNsPerSecond).idle);
  // Idle: 50 W (below every step of the ramp) from 1.55 s; the energy before each later entry is recomputed.
  const Energy at_3s = TotalEnergyAt(history, model, 3 * kNsPerSecond);
  const Energy at_2s = TotalEnergyAt(history, model, 2 * kNsPerSecond);
  EXPECT_EQ(at_3s.Minus(at_2s).TotalPicojoules(), 50'000ull * 1'000'000'000ull);
  // Going idle twice records nothing.
  RecordActivityChange(&history, model, std::nullopt, 2 * kNsPerSecond, true);
  EXPECT_EQ(history.count, ramp_entries + 1);
}

TEST(EmulatorThermalTest, WithoutAThermalModelTemperatureIsNotModelled) {
  const PowerModel model = Busy(200'000, std::nullopt);
  LimitHistory history;
  InitLimitHistory(&history, 300'000);
  EXPECT_EQ(TemperatureAt(model, TimelineOf(history), 5 * kNsPerSecond), 0.0);
  EXPECT_EQ(PowerAtMw(model, TimelineOf(history), 5 * kNsPerSecond), 200'000u);
  EXPECT_EQ(TotalEnergyAt(history, model, 5 * kNsPerSecond).mj, 1'000'000u);
}

}  // namespace
}  // namespace zeus::emulator
