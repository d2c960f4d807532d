// Copyright 2026 The Zeus C++ Authors.
//
// A GPU on a superchip module (the scenario's "module"): what
// nvmlDeviceGetPowerUsage, the GPU- and MODULE-scope power fields and the
// energy counter report, with and without the driver's GPU scope.

#include <array>

#include "nvml_emulator_test_fixture.h"

namespace zeus::emulator::test {
namespace {

// GPU 0: 200 W drawn, on a module with a 90 W CPU and 15 W CPU memory (305 W
// in all). GPU 1: the same with a driver that offers only the module scope.
// GPU 2: a plain GPU. Counters move continuously; the sensor averages are
// exact at a constant draw.
std::string Scenario() {
  const std::string module = R"(, "module": {"cpu_power_w": 90, "cpu_memory_power_w": 15})";
  return Manual(Gpu(R"("power_w": 200)", module + kIdeal) + "," +
                Gpu(R"("power_w": 200)", module + kIdeal + R"(, "unsupported": ["gpu_scope_power"])") + "," +
                Gpu(R"("power_w": 200)", kIdeal));
}

struct ScopedReading {
  nvmlReturn_t instant_rc;
  unsigned int instant_mw;
  nvmlReturn_t average_rc;
  unsigned int average_mw;
};

ScopedReading ReadScope(nvmlDevice_t device, unsigned int scope) {
  std::array<nvmlFieldValue_t, 2> values{};
  values[0].fieldId = NVML_FI_DEV_POWER_INSTANT;
  values[0].scopeId = scope;
  values[1].fieldId = NVML_FI_DEV_POWER_AVERAGE;
  values[1].scopeId = scope;
  EXPECT_EQ(nvmlDeviceGetFieldValues(device, 2, values.data()), NVML_SUCCESS);  // the call itself works
  return {values[0].nvmlReturn, values[0].value.uiVal, values[1].nvmlReturn, values[1].value.uiVal};
}

TEST_F(NvmlEmulatorTest, ModuleScopeAndPlainCallReportTheWholeModule) {
  UseScenario(Scenario());
  Init();
  Advance(2 * kS);

  const ScopedReading gpu = ReadScope(Handle(0), NVML_POWER_SCOPE_GPU);
  EXPECT_EQ(gpu.instant_rc, NVML_SUCCESS);
  EXPECT_EQ(gpu.instant_mw, 200'000u);
  EXPECT_EQ(gpu.average_rc, NVML_SUCCESS);
  EXPECT_EQ(gpu.average_mw, 200'000u);
  const ScopedReading module = ReadScope(Handle(0), NVML_POWER_SCOPE_MODULE);
  EXPECT_EQ(module.instant_rc, NVML_SUCCESS);
  EXPECT_EQ(module.instant_mw, 305'000u);
  EXPECT_EQ(module.average_rc, NVML_SUCCESS);
  EXPECT_EQ(module.average_mw, 305'000u);
  EXPECT_EQ(PowerMw(Handle(0)), 305'000u);  // the plain call: the module, CPU included
  EXPECT_EQ(EnergyMj(Handle(0)), 400'000u);  // the counter counts the GPU: 200 W x 2 s
}

TEST_F(NvmlEmulatorTest, WithoutTheGpuScopeOnlyTheModuleAnswers) {
  UseScenario(Scenario());
  Init();
  Advance(2 * kS);

  const ScopedReading gpu = ReadScope(Handle(1), NVML_POWER_SCOPE_GPU);
  EXPECT_EQ(gpu.instant_rc, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(gpu.average_rc, NVML_ERROR_NOT_SUPPORTED);
  const ScopedReading module = ReadScope(Handle(1), NVML_POWER_SCOPE_MODULE);
  EXPECT_EQ(module.instant_rc, NVML_SUCCESS);
  EXPECT_EQ(module.instant_mw, 305'000u);
  EXPECT_EQ(module.average_mw, 305'000u);
  EXPECT_EQ(PowerMw(Handle(1)), 305'000u);
  EXPECT_EQ(EnergyMj(Handle(1)), 610'000u);  // the module's energy: 305 W x 2 s
}

TEST_F(NvmlEmulatorTest, APlainGpuHasNoModuleScope) {
  UseScenario(Scenario());
  Init();
  Advance(2 * kS);
  const ScopedReading module = ReadScope(Handle(2), NVML_POWER_SCOPE_MODULE);
  EXPECT_EQ(module.instant_rc, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(module.average_rc, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(ReadScope(Handle(2), NVML_POWER_SCOPE_GPU).instant_mw, 200'000u);
  EXPECT_EQ(PowerMw(Handle(2)), 200'000u);
  EXPECT_EQ(EnergyMj(Handle(2)), 400'000u);
}

TEST_F(NvmlEmulatorTest, ModuleFollowsTheGpusLimit) {
  UseScenario(Scenario());
  Init();
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(1), 150'000), NVML_SUCCESS);
  Advance(1 * kS);
  EXPECT_EQ(ReadScope(Handle(1), NVML_POWER_SCOPE_MODULE).instant_mw, 255'000u);  // 150 + 90 + 15 W
  EXPECT_EQ(EnergyMj(Handle(1)), 255'000u);
}

}  // namespace
}  // namespace zeus::emulator::test
