// Copyright 2026 The Zeus C++ Authors.
//
// The thermal model and idle GPUs through the C API: nvmlDeviceGetTemperature
// follows the model, the energy counter integrates the power drawn with
// leakage, zeusEmulatorSetIdle cools the GPU down, and scenarios without
// "thermal" are unchanged.

#include <cmath>
#include <string>

#include "nvml_emulator_test_fixture.h"

namespace zeus::emulator::test {
namespace {

unsigned int TemperatureC(nvmlDevice_t device) {
  unsigned int celsius = 0;
  EXPECT_EQ(nvmlDeviceGetTemperature(device, NVML_TEMPERATURE_GPU, &celsius), NVML_SUCCESS);
  return celsius;
}

// 200 W busy; 30 °C ambient, 0.2 °C/W, tau 10 s; idle draws nothing.
std::string Thermal(const std::string& leakage) {
  return kIdeal + R"(, "idle_power_w": 0, "thermal": {"ambient_c": 30, "resistance_c_per_w": 0.2,
                    "time_constant_s": 10, "leakage_per_c": )" + leakage + "}";
}

TEST_F(NvmlEmulatorTest, TemperatureRisesWithTheTimeConstantToTheSteadyState) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", Thermal("0"))));
  Init();
  nvmlDevice_t device = Handle(0);
  EXPECT_EQ(TemperatureC(device), 30u);
  Advance(10 * kS);  // one time constant: 30 + 40 x 0.632 = 55.3 °C
  EXPECT_EQ(TemperatureC(device), 55u);
  EXPECT_EQ(EnergyMj(device), 2'000'000u);  // no leakage: 200 W x 10 s exactly
  Advance(190 * kS);
  EXPECT_EQ(TemperatureC(device), 70u);  // 30 + 0.2 x 200
}

TEST_F(NvmlEmulatorTest, LeakageRaisesTheEnergyCounterAndThePower) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", Thermal("0.005"))));
  Init();
  nvmlDevice_t device = Handle(0);
  Advance(12'500 * kMs);  // tau' = 10 / (1 - 0.2 x 0.005 x 200) = 12.5 s; steady state 80 °C
  // T = 80 - 50 e^-1; E = 170 W x t + 1 W/°C x (80 t - 50 x 12.5 (1 - e^-1)).
  const double expected_c = 80.0 - 50.0 * std::exp(-1.0);
  EXPECT_EQ(TemperatureC(device), static_cast<unsigned int>(std::lround(expected_c)));
  const double expected_j = 170.0 * 12.5 + (80.0 * 12.5 - 50.0 * 12.5 * (1.0 - std::exp(-1.0)));
  EXPECT_NEAR(static_cast<double>(EnergyMj(device)), expected_j * 1000.0, 1.0);
  EXPECT_GT(static_cast<double>(EnergyMj(device)), 200.0 * 12.5 * 1000.0);
  Advance(500 * kS);
  EXPECT_EQ(TemperatureC(device), 80u);
  EXPECT_EQ(PowerMw(device), 250'000u);  // 200 W x (1 + 0.005 x 50)
  // The counter integrates what is drawn: 10 s at the steady 250 W.
  const unsigned long long before = EnergyMj(device);
  Advance(10 * kS);
  EXPECT_NEAR(static_cast<double>(EnergyMj(device) - before), 2'500'000.0, 1.0);
}

TEST_F(NvmlEmulatorTest, AnIdleGpuCoolsBackToAmbient) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", Thermal("0.005"))));
  Init();
  nvmlDevice_t device = Handle(0);
  Advance(60 * kS);
  EXPECT_GT(TemperatureC(device), 75u);
  ASSERT_EQ(zeusEmulatorSetIdle(-1, 1), ZEUS_EMULATOR_OK);
  const unsigned long long at_idle = EnergyMj(device);
  Advance(10 * kS);
  EXPECT_LT(TemperatureC(device), 50u);  // 30 + ~49 x e^-1
  Advance(200 * kS);
  EXPECT_EQ(TemperatureC(device), 30u);
  EXPECT_EQ(EnergyMj(device), at_idle);  // idle_power_w 0
  ASSERT_EQ(zeusEmulatorSetIdle(0, 0), ZEUS_EMULATOR_OK);
  Advance(1 * kS);
  EXPECT_GT(EnergyMj(device) - at_idle, 200'000u);  // busy again, from cold
  EXPECT_EQ(zeusEmulatorSetIdle(1, 1), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeusEmulatorSetIdle(-2, 1), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT);
}

TEST_F(NvmlEmulatorTest, IdleWorksWithoutAThermalModelAndTheDefaultChangesNothing) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", kIdeal + R"(, "idle_power_w": 40)")));
  Init();
  nvmlDevice_t device = Handle(0);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 200'000u);
  EXPECT_EQ(TemperatureC(device), 40u);  // the fixed default reading
  ASSERT_EQ(zeusEmulatorSetIdle(-1, 1), ZEUS_EMULATOR_OK);
  Advance(2 * kS);
  EXPECT_EQ(EnergyMj(device), 280'000u);  // + 40 W x 2 s
  EXPECT_EQ(TemperatureC(device), 40u);
}

TEST_F(NvmlEmulatorTest, ThermalScenarioMistakesAreNamed) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "temperature_c": 50, "thermal": {})")));
  EXPECT_NE(nvmlInit_v2(), NVML_SUCCESS);
  EXPECT_NE(std::string(zeusEmulatorLastError()).find("gpus[0].temperature_c: give either"), std::string::npos)
      << zeusEmulatorLastError();
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "thermal": {"resistance_c_per_w": 1, "leakage_per_c": 0.01})")));
  EXPECT_NE(nvmlInit_v2(), NVML_SUCCESS);
  EXPECT_NE(std::string(zeusEmulatorLastError()).find("gpus[0].thermal.leakage_per_c"), std::string::npos)
      << zeusEmulatorLastError();
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "thermal": {"time_constant_s": 0})")));
  EXPECT_NE(nvmlInit_v2(), NVML_SUCCESS);
  EXPECT_NE(std::string(zeusEmulatorLastError()).find("gpus[0].thermal.time_constant_s"), std::string::npos);
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "thermal": {"ambient": 20})")));
  EXPECT_NE(nvmlInit_v2(), NVML_SUCCESS);
  EXPECT_NE(std::string(zeusEmulatorLastError()).find("ambient"), std::string::npos);
}

TEST_F(NvmlEmulatorTest, DefaultThermalFiguresSettleFortyFiveDegreesAboveAmbientAtTheMaxLimit) {
  // Defaults: ambient 30 °C, R = 45 °C / 300 W, leakage 0.3 %/°C (reference: ambient). Work 300 W:
  // T_inf = (30 + 0.15 x 300) / (1 - 0.15 x 0.003 x 300) = 75 / 0.865 = 86.7 °C, capped at the 300 W limit:
  // at the cap the steady state is 30 + 0.15 x 300 = 75 °C.
  UseScenario(Manual(Gpu(R"("power_w": 300, "power_limit_w": 300)", kIdeal + R"(, "thermal": {})")));
  Init();
  nvmlDevice_t device = Handle(0);
  EXPECT_EQ(TemperatureC(device), 30u);
  Advance(3'000 * kS);
  EXPECT_EQ(TemperatureC(device), 75u);
  EXPECT_EQ(PowerMw(device), 300'000u);
}

}  // namespace
}  // namespace zeus::emulator::test
