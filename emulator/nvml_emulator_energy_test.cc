// Copyright 2026 The Zeus C++ Authors.
//
// Tests of libzeus-nvml-emulator.so through its C API: energy and power
// (exact energy across limit changes and schedule steps, counter resets,
// sensor update periods and averaging windows, field values), the counter
// update period, optional queries, power settling, the workload curve and
// the scaled wall clock.

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"
#include "nvml_emulator_test_fixture.h"

namespace zeus::emulator::test {
namespace {

// ---- Energy and power ---------------------------------------------------------------

TEST_F(NvmlEmulatorTest, EnergyIsExactAcrossLimitChanges) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", kIdeal)));
  Init();
  nvmlDevice_t device = Handle(0);
  EXPECT_EQ(EnergyMj(device), 0u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 200'000u);  // 200 W under the 250 W default limit
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 150'000), NVML_SUCCESS);
  Advance(2 * kS);
  EXPECT_EQ(EnergyMj(device), 500'000u);  // + 150 W x 2 s
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 300'000), NVML_SUCCESS);
  Advance(500 * kMs);
  EXPECT_EQ(EnergyMj(device), 600'000u);  // + 200 W x 0.5 s
  Advance(1);
  EXPECT_EQ(EnergyMj(device), 600'000u);  // 200 W x 1 ns = 0.0002 mJ, floored
  unsigned long long now = 0;
  ASSERT_EQ(zeusEmulatorNowNs(&now), ZEUS_EMULATOR_OK);
  EXPECT_EQ(now, 3'500 * kMs + 1);
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeusEmulatorAdvanceTimeNs(~0ull), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT);  // would overflow
  ASSERT_EQ(zeusEmulatorNowNs(&now), ZEUS_EMULATOR_OK);
  EXPECT_EQ(now, 3'500 * kMs + 1);
}

TEST_F(NvmlEmulatorTest, EnergyIsExactAcrossScheduleSteps) {
  UseScenario(Manual(Gpu(R"("power_schedule": [{"at_s": 0, "power_w": 100}, {"at_s": 1.5, "power_w": 200},
                                               {"at_s": 2, "power_w": 50}])",
                         R"(, "power_limit_w": 150)")));
  Init();
  nvmlDevice_t device = Handle(0);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 100'000u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 225'000u);  // + 0.5 s x 100 W + 0.5 s x min(200, 150) W
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 275'000u);  // + 50 W x 1 s
}

TEST_F(NvmlEmulatorTest, CounterResetRestartsTheEnergyCounter) {
  UseScenario(Manual(Gpu(R"("power_w": 100)", R"(, "counter_reset_at_s": 1.0)")));
  Init();
  nvmlDevice_t device = Handle(0);
  Advance(500 * kMs);
  EXPECT_EQ(EnergyMj(device), 50'000u);
  Advance(500 * kMs);
  EXPECT_EQ(EnergyMj(device), 0u);
  Advance(1'500 * kMs);
  EXPECT_EQ(EnergyMj(device), 150'000u);
}

TEST_F(NvmlEmulatorTest, EnergyCounterCanBeUnsupported) {
  UseScenario(Manual(R"({"name": "K80", "architecture": "kepler", "min_power_limit_w": 100,
      "max_power_limit_w": 150, "default_power_limit_w": 150, "energy_counter": false, "power_w": 120})"));
  Init();
  unsigned long long energy = 0;
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(Handle(0), &energy), NVML_ERROR_NOT_SUPPORTED);
  Advance(1 * kS);
  EXPECT_EQ(PowerMw(Handle(0)), 120'000u);  // power still works
}

TEST_F(NvmlEmulatorTest, PowerReadingsUpdatePeriodicallyAndAverageTheWindow) {
  UseScenario(Manual(Gpu(R"("power_schedule": [{"at_s": 0, "power_w": 100}, {"at_s": 0.25, "power_w": 200}])",
                         R"(, "power_update_period_ms": 100, "power_average_window_ms": 1000)" + kIdeal)));
  Init();
  nvmlDevice_t device = Handle(0);
  EXPECT_EQ(PowerMw(device), 100'000u);  // at the epoch: the power drawn there
  Advance(260 * kMs);
  EXPECT_EQ(PowerMw(device), 100'000u);  // latest update 0.2 s: [0, 0.2]
  Advance(40 * kMs);
  EXPECT_EQ(PowerMw(device), 116'667u);  // update 0.3 s: [0, 0.3] = (25 J + 10 J) / 0.3 s
  Advance(99 * kMs);
  EXPECT_EQ(PowerMw(device), 116'667u);  // still the 0.3 s value
  Advance(801 * kMs);
  EXPECT_EQ(PowerMw(device), 195'000u);  // update 1.2 s: [0.2, 1.2] = 5 J + 190 J
  Advance(300 * kMs);
  EXPECT_EQ(PowerMw(device), 200'000u);  // update 1.5 s: [0.5, 1.5]
  // A limit change shows at the next update, averaged in.
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 100'000), NVML_SUCCESS);
  EXPECT_EQ(PowerMw(device), 200'000u);
  Advance(100 * kMs);
  EXPECT_EQ(PowerMw(device), 190'000u);  // [0.6, 1.6]: 0.9 s x 200 W + 0.1 s x 100 W
  EXPECT_EQ(nvmlDeviceGetPowerUsage(device, nullptr), NVML_ERROR_INVALID_ARGUMENT);
}

// Defaults from field-notes.md ("nvmlDeviceGetPowerUsage semantics change by
// generation"): Ampere except GA100, and newer, average over 1 s; GA100
// (A100, A30, A800) and older report the power at the update instant.
TEST_F(NvmlEmulatorTest, DefaultAveragingWindowDependsOnArchitecture) {
  const std::string schedule = R"("power_schedule": [{"at_s": 0, "power_w": 100}, {"at_s": 0.15, "power_w": 200}])";
  auto gpu = [&](const std::string& name, const std::string& architecture) {
    return R"({"name": ")" + name + R"(", "architecture": ")" + architecture +
           R"(", "min_power_limit_w": 100, "max_power_limit_w": 400, "default_power_limit_w": 400,
               "energy_counter": true, )" +
           schedule + "}";
  };
  UseScenario(Manual(gpu("Tesla V100-SXM2-32GB", "volta") + "," + gpu("NVIDIA A100-SXM4-40GB", "ampere") + "," +
                     gpu("NVIDIA A30", "ampere") + "," + gpu("NVIDIA A40", "ampere") + "," +
                     gpu("NVIDIA RTX A3000 Laptop GPU", "ampere") + "," + gpu("NVIDIA H100 80GB HBM3", "hopper")));
  Init();
  Advance(200 * kMs);
  // Instant: the power drawn at the 0.2 s update. Averaged: [0, 0.2] so far,
  // (0.15 s x 100 W + 0.05 s x 200 W) / 0.2 s = 125 W.
  EXPECT_EQ(PowerMw(Handle(0)), 200'000u);  // Volta: instant
  EXPECT_EQ(PowerMw(Handle(1)), 200'000u);  // GA100: instant
  EXPECT_EQ(PowerMw(Handle(2)), 200'000u);  // A30 is GA100 too
  EXPECT_EQ(PowerMw(Handle(3)), 125'000u);  // GA102: 1 s average
  EXPECT_EQ(PowerMw(Handle(4)), 125'000u);  // "A3000" is not "A30"
  EXPECT_EQ(PowerMw(Handle(5)), 125'000u);  // Hopper: 1 s average
}

TEST_F(NvmlEmulatorTest, ZeroWindowReportsThePowerAtTheUpdate) {
  UseScenario(Manual(Gpu(R"("power_schedule": [{"at_s": 0, "power_w": 100}, {"at_s": 0.25, "power_w": 200}])",
                         R"(, "power_average_window_ms": 0)")));
  Init();
  Advance(299 * kMs);
  EXPECT_EQ(PowerMw(Handle(0)), 100'000u);
  Advance(1 * kMs);
  EXPECT_EQ(PowerMw(Handle(0)), 200'000u);
}

TEST_F(NvmlEmulatorTest, FieldValues) {
  const std::string with_memory =
      Gpu(R"("power_schedule": [{"at_s": 0, "power_w": 100}, {"at_s": 0.25, "power_w": 200}])",
          R"(, "memory_power_w": 30, "power_average_window_ms": 1000)");
  UseScenario(Manual(with_memory + "," + Gpu()));
  Init();
  Advance(320 * kMs);
  std::array<nvmlFieldValue_t, 7> values{};
  values[0].fieldId = NVML_FI_DEV_POWER_INSTANT;
  values[0].scopeId = NVML_POWER_SCOPE_GPU;
  values[1].fieldId = NVML_FI_DEV_POWER_AVERAGE;
  values[1].scopeId = NVML_POWER_SCOPE_GPU;
  values[2].fieldId = NVML_FI_DEV_POWER_INSTANT;
  values[2].scopeId = NVML_POWER_SCOPE_MEMORY;
  values[3].fieldId = NVML_FI_DEV_POWER_AVERAGE;
  values[3].scopeId = NVML_POWER_SCOPE_MEMORY;
  values[4].fieldId = NVML_FI_DEV_POWER_INSTANT;
  values[4].scopeId = NVML_POWER_SCOPE_MODULE;
  values[5].fieldId = 1;  // not a field the emulator knows
  values[6].fieldId = NVML_FI_DEV_POWER_INSTANT;
  values[6].scopeId = 9;
  ASSERT_EQ(nvmlDeviceGetFieldValues(Handle(0), static_cast<int>(values.size()), values.data()), NVML_SUCCESS);
  EXPECT_EQ(values[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[0].valueType, static_cast<unsigned int>(NVML_VALUE_TYPE_UNSIGNED_INT));
  EXPECT_EQ(values[0].value.uiVal, 200'000u);  // drawn at the 0.3 s update
  EXPECT_EQ(values[0].timestamp, 300'000);     // µs since the epoch
  EXPECT_EQ(values[1].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[1].value.uiVal, 116'667u);
  EXPECT_EQ(values[2].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[2].value.uiVal, 30'000u);
  EXPECT_EQ(values[3].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[3].value.uiVal, 30'000u);
  EXPECT_EQ(values[4].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(values[5].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(values[6].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);

  // No memory domain on GPU 1.
  std::array<nvmlFieldValue_t, 1> memory{};
  memory[0].fieldId = NVML_FI_DEV_POWER_AVERAGE;
  memory[0].scopeId = NVML_POWER_SCOPE_MEMORY;
  ASSERT_EQ(nvmlDeviceGetFieldValues(Handle(1), 1, memory.data()), NVML_SUCCESS);
  EXPECT_EQ(memory[0].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceGetFieldValues(Handle(1), 1, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetFieldValues(Handle(1), -1, memory.data()), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetFieldValues(Handle(1), 0, nullptr), NVML_SUCCESS);
}

// ---- Counter update period, optional queries, settling ------------------------------

TEST_F(NvmlEmulatorTest, EnergyCounterAdvancesOnlyAtItsUpdatePeriod) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "counter_update_period_ms": 100)") + "," +
                     Gpu(R"("power_w": 200)", R"(, "counter_update_period_ms": 0)")));
  Init();
  nvmlDevice_t ticking = Handle(0);
  nvmlDevice_t continuous = Handle(1);
  Advance(99 * kMs);
  EXPECT_EQ(EnergyMj(ticking), 0u);  // no update yet: a short window reads 0, as on hardware
  EXPECT_EQ(EnergyMj(continuous), 19'800u);
  Advance(1 * kMs);
  EXPECT_EQ(EnergyMj(ticking), 20'000u);  // the 0.1 s update: 200 W x 0.1 s
  Advance(150 * kMs);
  EXPECT_EQ(EnergyMj(ticking), 40'000u);  // at 0.25 s it still shows the 0.2 s update
  EXPECT_EQ(EnergyMj(continuous), 50'000u);
}

TEST_F(NvmlEmulatorTest, EnergyCounterPeriodDefaultsTo100Ms) {
  // field-notes.md, "Counter update granularity": about every 100 ms.
  UseScenario(Manual(Gpu(R"("power_w": 200)") + "," +
                     R"({"name": "NVIDIA H100 80GB HBM3", "architecture": "hopper", "min_power_limit_w": 200,
                         "max_power_limit_w": 700, "default_power_limit_w": 700, "energy_counter": true,
                         "power_w": 500})",
                     R"("counter_update_period_ms": 0, )")  // a top-level default overrides it ...
  );
  Init();
  Advance(50 * kMs);
  EXPECT_EQ(EnergyMj(Handle(0)), 10'000u);  // ... for every GPU
  EXPECT_EQ(EnergyMj(Handle(1)), 25'000u);
  while (nvmlShutdown() == NVML_SUCCESS) {
  }
  std::filesystem::remove(state_path());
  UseScenario(Manual(Gpu(R"("power_w": 200)") + "," +
                     R"({"name": "NVIDIA H100 80GB HBM3", "architecture": "hopper", "min_power_limit_w": 200,
                         "max_power_limit_w": 700, "default_power_limit_w": 700, "energy_counter": true,
                         "power_w": 500})"));
  Init();
  Advance(99 * kMs);
  EXPECT_EQ(EnergyMj(Handle(0)), 0u);
  EXPECT_EQ(EnergyMj(Handle(1)), 0u);
  Advance(1 * kMs);
  EXPECT_EQ(EnergyMj(Handle(0)), 20'000u);
  EXPECT_EQ(EnergyMj(Handle(1)), 50'000u);
}

TEST_F(NvmlEmulatorTest, OptionalQueriesCanBeUnsupportedPerGpu) {
  const std::string memory = R"(, "memory_power_w": 30)";
  UseScenario(Manual(Gpu(R"("power_w": 200)", memory) + "," +
                     Gpu(R"("power_w": 200)",
                         memory + R"(, "unsupported": ["instant_power", "average_power", "memory_power",
                                                        "temperature"])") +
                     "," + Gpu(R"("power_w": 200)", memory + R"(, "unsupported": ["instant_power"])")));
  Init();
  auto read = [&](unsigned int gpu) {
    std::array<nvmlFieldValue_t, 3> values{};
    values[0].fieldId = NVML_FI_DEV_POWER_INSTANT;
    values[0].scopeId = NVML_POWER_SCOPE_GPU;
    values[1].fieldId = NVML_FI_DEV_POWER_AVERAGE;
    values[1].scopeId = NVML_POWER_SCOPE_GPU;
    values[2].fieldId = NVML_FI_DEV_POWER_AVERAGE;
    values[2].scopeId = NVML_POWER_SCOPE_MEMORY;
    EXPECT_EQ(nvmlDeviceGetFieldValues(Handle(gpu), 3, values.data()), NVML_SUCCESS);  // the call itself works
    return values;
  };
  unsigned int temperature = 0;
  for (const nvmlFieldValue_t& value : read(0)) EXPECT_EQ(value.nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetTemperature(Handle(0), NVML_TEMPERATURE_GPU, &temperature), NVML_SUCCESS);
  for (const nvmlFieldValue_t& value : read(1)) EXPECT_EQ(value.nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceGetTemperature(Handle(1), NVML_TEMPERATURE_GPU, &temperature), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(PowerMw(Handle(1)), 200'000u);  // nvmlDeviceGetPowerUsage always works
  const auto partial = read(2);
  EXPECT_EQ(partial[0].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(partial[1].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(partial[2].nvmlReturn, NVML_SUCCESS);
}

// A straight ramp from 250 W to 150 W over 100 ms, in ten 10 ms steps at the
// ramp's mid-step values: 245, 235, ..., 155 W. Demand (300 W) exceeds every
// limit, so the drawn power is the cap.
TEST_F(NvmlEmulatorTest, PowerSettlesAfterALimitChange) {
  UseScenario(Manual(Gpu(R"("power_w": 300)", R"(, "power_settle_ms": 100, "counter_update_period_ms": 0,
                                              "power_update_period_ms": 10, "power_average_window_ms": 0)")));
  Init();
  nvmlDevice_t device = Handle(0);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 250'000u);
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 150'000), NVML_SUCCESS);
  EXPECT_EQ(LimitMw(device), 150'000u);  // the setting reads back at once
  EXPECT_EQ(PowerMw(device), 245'000u);  // the first step
  Advance(50 * kMs);
  EXPECT_EQ(PowerMw(device), 195'000u);  // step 5: 250 - 100 x 11/20
  Advance(50 * kMs);
  EXPECT_EQ(PowerMw(device), 150'000u);  // settled
  EXPECT_EQ(EnergyMj(device), 270'000u);  // + 200 W (the ramp's mean) x 0.1 s
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 420'000u);  // + 150 W x 1 s

  // A change mid-ramp starts from where the ramp had got to.
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 250'000), NVML_SUCCESS);
  Advance(50 * kMs);
  EXPECT_EQ(PowerMw(device), 205'000u);  // 150 + 100 x 11/20
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 150'000), NVML_SUCCESS);
  EXPECT_EQ(LimitMw(device), 150'000u);
  EXPECT_EQ(PowerMw(device), 202'250u);  // from 205 W (the step in force) towards 150 W: 205 - 55 x 1/20
  Advance(100 * kMs);
  EXPECT_EQ(PowerMw(device), 150'000u);
}

TEST_F(NvmlEmulatorTest, ZeroSettleTimeAppliesALimitAtOnce) {
  UseScenario(Manual(Gpu(R"("power_w": 300)", R"(, "power_settle_ms": 0, "counter_update_period_ms": 0,
                                              "power_average_window_ms": 0)")));
  Init();
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(0), 150'000), NVML_SUCCESS);
  EXPECT_EQ(PowerMw(Handle(0)), 150'000u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(Handle(0)), 150'000u);
}

TEST_F(NvmlEmulatorTest, WorkloadCurveFollowsTheLimit) {
  UseScenario(Manual(Gpu(R"("workload": {"power_limits_w": [100, 150, 200, 250], "power_w": [95, 140, 180, 190],
                                         "iteration_time_s": [0.5, 0.4, 0.35, 0.33]})",
                         R"(, "power_average_window_ms": 0)" + kIdeal) +
                     "," + Gpu()));
  Init();
  nvmlDevice_t device = Handle(0);
  EXPECT_EQ(PowerMw(device), 190'000u);  // at the 250 W default limit
  double seconds = 0;
  ASSERT_EQ(zeusEmulatorIterationTimeS(0, &seconds), ZEUS_EMULATOR_OK);
  EXPECT_DOUBLE_EQ(seconds, 0.33);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 190'000u);
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 175'000), NVML_SUCCESS);
  EXPECT_EQ(PowerMw(device), 160'000u);  // the update at exactly now sees the new limit
  ASSERT_EQ(zeusEmulatorIterationTimeS(0, &seconds), ZEUS_EMULATOR_OK);
  EXPECT_DOUBLE_EQ(seconds, 0.375);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 350'000u);
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 120'000), NVML_SUCCESS);
  EXPECT_EQ(PowerMw(device), 113'000u);  // 95 + 0.4 x 45
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 300'000), NVML_SUCCESS);
  EXPECT_EQ(PowerMw(device), 190'000u);                                                // clamped at the curve's end
  EXPECT_EQ(zeusEmulatorIterationTimeS(1, &seconds), ZEUS_EMULATOR_ERROR_WRONG_MODE);  // no workload
  EXPECT_EQ(zeusEmulatorIterationTimeS(2, &seconds), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT);
}

TEST_F(NvmlEmulatorTest, WallClockRunsScaled) {
  UseScenario(R"({"state_file": "@STATE@", "time_scale": 1000, "gpus": [)" + Gpu(R"("power_w": 100)") + "]}");
  Init();
  using std::chrono::steady_clock;  // CLOCK_MONOTONIC, as the emulator's wall clock
  const auto wall_start = steady_clock::now();
  unsigned long long before = 0;
  ASSERT_EQ(zeusEmulatorNowNs(&before), ZEUS_EMULATOR_OK);
  const auto wall_after_before = steady_clock::now();
  // Wait until 5 emulated seconds have passed (5 ms of wall time), however
  // slowly this thread runs; the deadline only stops a clock that stands still.
  unsigned long long after = before;
  auto wall_before_after = steady_clock::now();
  const auto deadline = wall_start + std::chrono::seconds(60);
  while (after - before < 5 * kS && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    wall_before_after = steady_clock::now();
    ASSERT_EQ(zeusEmulatorNowNs(&after), ZEUS_EMULATOR_OK);
  }
  const auto wall_end = steady_clock::now();
  ASSERT_GE(after - before, 5 * kS) << "the wall clock did not advance emulated time";
  // Scaled by 1000: the emulated span lies between 1000 x the wall time
  // between the two readings and 1000 x the wall time around them (1 ms of
  // emulated slack for rounding).
  auto emulated = [](steady_clock::duration wall) {
    return 1000ull * static_cast<unsigned long long>(std::chrono::nanoseconds(wall).count());
  };
  EXPECT_GE(after - before + kMs, emulated(wall_before_after - wall_after_before));
  EXPECT_LE(after - before, emulated(wall_end - wall_start) + kMs);
  EXPECT_GE(EnergyMj(Handle(0)), 500'000u);  // 100 W x at least 5 s
  EXPECT_EQ(zeusEmulatorAdvanceTimeNs(1), ZEUS_EMULATOR_ERROR_WRONG_MODE);
}

}  // namespace
}  // namespace zeus::emulator::test
