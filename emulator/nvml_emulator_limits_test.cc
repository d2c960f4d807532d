// Copyright 2026 The Zeus C++ Authors.
//
// Tests of libzeus-nvml-emulator.so through its C API: power-limit getters
// and setter, persistence mode, supported and locked clocks.

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"
#include "nvml_emulator_test_fixture.h"

namespace zeus::emulator::test {
namespace {

// ---- Power limits, persistence, clocks ---------------------------------------------

TEST_F(NvmlEmulatorTest, PowerLimitGettersAndSetter) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "power_limit_w": 200)")));
  Init();
  nvmlDevice_t device = Handle(0);
  unsigned int min = 0;
  unsigned int max = 0;
  ASSERT_EQ(nvmlDeviceGetPowerManagementLimitConstraints(device, &min, &max), NVML_SUCCESS);
  EXPECT_EQ(min, 100'000u);
  EXPECT_EQ(max, 300'000u);
  EXPECT_EQ(nvmlDeviceGetPowerManagementLimitConstraints(device, &min, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  unsigned int value = 0;
  ASSERT_EQ(nvmlDeviceGetPowerManagementDefaultLimit(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 250'000u);
  EXPECT_EQ(LimitMw(device), 200'000u);  // power_limit_w, not the default
  ASSERT_EQ(nvmlDeviceGetEnforcedPowerLimit(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 200'000u);

  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device, 150'000), NVML_SUCCESS);
  EXPECT_EQ(LimitMw(device), 150'000u);
  ASSERT_EQ(nvmlDeviceGetEnforcedPowerLimit(device, &value), NVML_SUCCESS);
  EXPECT_EQ(value, 150'000u);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device, 99'999), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device, 300'001), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(LimitMw(device), 150'000u);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device, 100'000), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device, 300'000), NVML_SUCCESS);
  EXPECT_EQ(LimitMw(device), 300'000u);
  EXPECT_EQ(nvmlDeviceGetPowerManagementLimit(device, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetPowerManagementDefaultLimit(device, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetEnforcedPowerLimit(device, nullptr), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(NvmlEmulatorTest, PersistenceMode) {
  UseScenario(Manual(Gpu() + "," + Gpu(R"("power_w": 1)", R"(, "persistence_mode": true)")));
  Init();
  nvmlEnableState_t mode = 7;
  ASSERT_EQ(nvmlDeviceGetPersistenceMode(Handle(0), &mode), NVML_SUCCESS);
  EXPECT_EQ(mode, static_cast<unsigned int>(NVML_FEATURE_DISABLED));
  ASSERT_EQ(nvmlDeviceGetPersistenceMode(Handle(1), &mode), NVML_SUCCESS);
  EXPECT_EQ(mode, static_cast<unsigned int>(NVML_FEATURE_ENABLED));
  EXPECT_EQ(nvmlDeviceSetPersistenceMode(Handle(0), NVML_FEATURE_ENABLED), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetPersistenceMode(Handle(0), &mode), NVML_SUCCESS);
  EXPECT_EQ(mode, static_cast<unsigned int>(NVML_FEATURE_ENABLED));
  EXPECT_EQ(nvmlDeviceSetPersistenceMode(Handle(0), 2), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetPersistenceMode(Handle(0), nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceSetPersistenceMode(Handle(1), NVML_FEATURE_DISABLED), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetPersistenceMode(Handle(1), &mode), NVML_SUCCESS);
  EXPECT_EQ(mode, static_cast<unsigned int>(NVML_FEATURE_DISABLED));
}

TEST_F(NvmlEmulatorTest, SupportedClocksFollowTheCountProtocol) {
  UseScenario(Manual(Gpu(R"("power_w": 1)", R"(, "supported_memory_clocks_mhz": [877, 810],
                                             "supported_graphics_clocks_mhz": [1200, 1530, 135, 1380])")));
  Init();
  nvmlDevice_t device = Handle(0);
  std::array<unsigned int, 8> clocks{};
  unsigned int count = 1;
  EXPECT_EQ(nvmlDeviceGetSupportedMemoryClocks(device, &count, clocks.data()), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 2u);
  count = 0;
  EXPECT_EQ(nvmlDeviceGetSupportedMemoryClocks(device, &count, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 2u);
  count = clocks.size();
  ASSERT_EQ(nvmlDeviceGetSupportedMemoryClocks(device, &count, clocks.data()), NVML_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(clocks[0], 877u);
  EXPECT_EQ(clocks[1], 810u);
  EXPECT_EQ(nvmlDeviceGetSupportedMemoryClocks(device, nullptr, clocks.data()), NVML_ERROR_INVALID_ARGUMENT);

  count = 3;
  EXPECT_EQ(nvmlDeviceGetSupportedGraphicsClocks(device, 877, &count, clocks.data()), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 4u);
  ASSERT_EQ(nvmlDeviceGetSupportedGraphicsClocks(device, 810, &count, clocks.data()), NVML_SUCCESS);
  EXPECT_EQ(std::vector<unsigned int>(clocks.begin(), clocks.begin() + count),
            (std::vector<unsigned int>{1530, 1380, 1200, 135}));
  count = clocks.size();
  EXPECT_EQ(nvmlDeviceGetSupportedGraphicsClocks(device, 999, &count, clocks.data()), NVML_ERROR_NOT_FOUND);
}

TEST_F(NvmlEmulatorTest, LockedClocks) {
  UseScenario(Manual(Gpu(R"("power_w": 1)", R"(, "supported_memory_clocks_mhz": [877, 810],
                                             "supported_graphics_clocks_mhz": [1530, 1380, 1200, 135])")));
  Init();
  nvmlDevice_t device = Handle(0);
  unsigned int mhz = 0;
  ASSERT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_SM, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 1530u);
  ASSERT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_MEM, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 877u);
  ASSERT_EQ(nvmlDeviceGetMaxClockInfo(device, NVML_CLOCK_GRAPHICS, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 1530u);
  ASSERT_EQ(nvmlDeviceGetMaxClockInfo(device, NVML_CLOCK_MEM, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 877u);
  EXPECT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_VIDEO, &mhz), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceGetClockInfo(device, 17, &mhz), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_SM, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetMaxClockInfo(device, NVML_CLOCK_SM, nullptr), NVML_ERROR_INVALID_ARGUMENT);

  EXPECT_EQ(nvmlDeviceSetGpuLockedClocks(device, 1200, 1380), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_SM, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 1380u);
  ASSERT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_GRAPHICS, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 1380u);
  ASSERT_EQ(nvmlDeviceGetMaxClockInfo(device, NVML_CLOCK_SM, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 1530u);  // the maximum is unaffected by locking
  EXPECT_EQ(nvmlDeviceSetGpuLockedClocks(device, 1380, 1200), NVML_ERROR_INVALID_ARGUMENT);  // min > max
  EXPECT_EQ(nvmlDeviceSetGpuLockedClocks(device, 100, 1200), NVML_ERROR_INVALID_ARGUMENT);   // below range
  EXPECT_EQ(nvmlDeviceSetGpuLockedClocks(device, 135, 1600), NVML_ERROR_INVALID_ARGUMENT);   // above range
  ASSERT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_SM, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 1380u);  // failed calls changed nothing
  EXPECT_EQ(nvmlDeviceResetGpuLockedClocks(device), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_SM, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 1530u);

  EXPECT_EQ(nvmlDeviceSetMemoryLockedClocks(device, 810, 810), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_MEM, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 810u);
  EXPECT_EQ(nvmlDeviceSetMemoryLockedClocks(device, 810, 900), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceResetMemoryLockedClocks(device), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetClockInfo(device, NVML_CLOCK_MEM, &mhz), NVML_SUCCESS);
  EXPECT_EQ(mhz, 877u);
}

}  // namespace
}  // namespace zeus::emulator::test
