// Copyright 2026 The Zeus C++ Authors.
//
// Tests of libzeus-nvml-emulator.so through its C API: fault rules (per GPU,
// after N calls, with a probability, "*", latency, hangs and their release),
// and call counts.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"
#include "nvml_emulator_test_fixture.h"

namespace zeus::emulator::test {
namespace {

// ---- Faults and call counts -----------------------------------------------------------

TEST_F(NvmlEmulatorTest, FaultAlwaysOnOneGpu) {
  UseScenario(Manual(Gpu() + "," + Gpu(),
                     R"("faults": [{"function": "nvmlDeviceSetPowerManagementLimit", "gpu": 0,
                                    "return": "NO_PERMISSION"}], )"));
  Init();
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(0), 150'000), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(0), 150'000), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);  // the faulted call did nothing
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(1), 150'000), NVML_SUCCESS);
  EXPECT_EQ(LimitMw(Handle(1)), 150'000u);
  EXPECT_EQ(zeusEmulatorCallCount("nvmlDeviceSetPowerManagementLimit", 0), 2u);
  EXPECT_EQ(zeusEmulatorCallCount("nvmlDeviceSetPowerManagementLimit", 1), 1u);
  EXPECT_EQ(zeusEmulatorCallCount("nvmlDeviceSetPowerManagementLimit", -1), 3u);
  EXPECT_EQ(zeusEmulatorCallCount("nvmlDeviceGetPowerManagementLimit", -1), 2u);
  EXPECT_EQ(zeusEmulatorCallCount("nvmlDeviceGetHandleByIndex_v2", -1), 5u);
  EXPECT_EQ(zeusEmulatorCallCount("nvmlNoSuchFunction", -1), 0u);
  EXPECT_EQ(zeusEmulatorCallCount(nullptr, 1), 4u);  // two handle lookups, one set, one get
}

TEST_F(NvmlEmulatorTest, FaultAfterCalls) {
  UseScenario(Manual(Gpu(), R"("faults": [{"function": "nvmlDeviceGetPowerUsage", "return": "GPU_IS_LOST",
                                           "after_calls": 3}], )"));
  Init();
  nvmlDevice_t device = Handle(0);
  unsigned int power = 0;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(nvmlDeviceGetPowerUsage(device, &power), NVML_SUCCESS) << i;
  EXPECT_EQ(nvmlDeviceGetPowerUsage(device, &power), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(device, &power), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device, nullptr), NVML_ERROR_INVALID_ARGUMENT);  // other functions work
}

TEST_F(NvmlEmulatorTest, FaultWithProbabilityIsDeterministic) {
  UseScenario(Manual(Gpu(), R"("faults": [{"function": "nvmlDeviceGetPowerUsage", "return": 10,
                                           "probability": 0.5, "seed": 7}], )"));
  auto run = [this] {
    Init();
    nvmlDevice_t device = Handle(0);
    std::string pattern;
    unsigned int power = 0;
    for (int i = 0; i < 64; ++i) {
      const nvmlReturn_t result = nvmlDeviceGetPowerUsage(device, &power);
      EXPECT_TRUE(result == NVML_SUCCESS || result == NVML_ERROR_TIMEOUT) << result;
      pattern += result == NVML_SUCCESS ? '.' : 'X';
    }
    EXPECT_EQ(nvmlShutdown(), NVML_SUCCESS);
    return pattern;
  };
  const std::string first = run();
  EXPECT_EQ(run(), first);  // counters restart with the scenario, so the pattern repeats
  const auto failures = std::count(first.begin(), first.end(), 'X');
  EXPECT_GT(failures, 16) << first;
  EXPECT_LT(failures, 48) << first;
}

TEST_F(NvmlEmulatorTest, StarFaultLosesOneGpu) {
  UseScenario(Manual(Gpu() + "," + Gpu(), R"("faults": [{"function": "*", "gpu": 1, "return": "GPU_IS_LOST"}], )"));
  Init();
  unsigned int count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 2u);
  nvmlDevice_t device = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(1, &device), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
  std::array<char, 96> version{};
  EXPECT_EQ(nvmlSystemGetDriverVersion(version.data(), version.size()), NVML_SUCCESS);
}

TEST_F(NvmlEmulatorTest, LatencyFaultSlowsTheCallThenItWorks) {
  UseScenario(Manual(Gpu() + "," + Gpu(),
                     R"("faults": [{"function": "nvmlDeviceGetPowerUsage", "gpu": 0, "latency_ms": 30},
                                   {"function": "nvmlDeviceGetTemperature", "latency_ms": 1,
                                    "return": "GPU_IS_LOST"}], )"));
  Init();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(PowerMw(Handle(0)), 200'000u);
  // A lower bound only: the call waited at least its latency.
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
  EXPECT_EQ(PowerMw(Handle(1)), 200'000u);
  unsigned int temperature = 0;
  EXPECT_EQ(nvmlDeviceGetTemperature(Handle(1), NVML_TEMPERATURE_GPU, &temperature), NVML_ERROR_GPU_IS_LOST);
}

TEST_F(NvmlEmulatorTest, HangFaultBlocksUntilReleasedWhileOtherCallsProceed) {
  UseScenario(Manual(Gpu() + "," + Gpu(),
                     R"("faults": [{"function": "nvmlDeviceGetPowerUsage", "gpu": 0, "hang": true,
                                    "after_calls": 1}], )"));
  Init();
  nvmlDevice_t device = Handle(0);
  EXPECT_EQ(PowerMw(device), 200'000u);  // the first call passes
  EXPECT_EQ(zeusEmulatorHungCalls(), 0u);
  std::atomic<nvmlReturn_t> hung_result{NVML_ERROR_UNKNOWN};
  std::atomic<bool> returned{false};
  std::thread caller([&] {
    unsigned int power = 0;
    hung_result = nvmlDeviceGetPowerUsage(device, &power);
    returned = true;
  });
  // Readiness: the emulator says the call is blocked.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (zeusEmulatorHungCalls() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(zeusEmulatorHungCalls(), 1u) << "the call never blocked";
  // Meanwhile everything else works: the other GPU, other functions, the clock.
  EXPECT_EQ(PowerMw(Handle(1)), 200'000u);
  EXPECT_EQ(LimitMw(device), 250'000u);
  Advance(1 * kS);
  EXPECT_FALSE(returned);
  EXPECT_EQ(zeusEmulatorReleaseHungCalls(), ZEUS_EMULATOR_OK);
  caller.join();
  EXPECT_EQ(hung_result, NVML_SUCCESS);  // a hang without "return" then does its work
  EXPECT_EQ(zeusEmulatorHungCalls(), 0u);
  EXPECT_EQ(PowerMw(device), 200'000u);  // released for good
}

TEST_F(NvmlEmulatorTest, LastShutdownReleasesHungCalls) {
  UseScenario(Manual(Gpu(), R"("faults": [{"function": "nvmlDeviceGetPowerUsage", "hang": true,
                                           "return": "TIMEOUT"}], )"));
  Init();
  nvmlDevice_t device = Handle(0);
  std::atomic<nvmlReturn_t> hung_result{NVML_SUCCESS};
  std::thread caller([&] {
    unsigned int power = 0;
    hung_result = nvmlDeviceGetPowerUsage(device, &power);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (zeusEmulatorHungCalls() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(zeusEmulatorHungCalls(), 1u) << "the call never blocked";
  EXPECT_EQ(nvmlShutdown(), NVML_SUCCESS);  // returns: it let the hung call go first
  caller.join();
  EXPECT_EQ(hung_result, NVML_ERROR_TIMEOUT);
}

TEST_F(NvmlEmulatorTest, FaultOnDevicelessFunction) {
  UseScenario(Manual(Gpu(), R"("faults": [{"function": "nvmlDeviceGetCount_v2", "gpu": 0,
                                           "return": "DRIVER_NOT_LOADED"}], )"));
  Init();
  unsigned int count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_DRIVER_NOT_LOADED);
  EXPECT_EQ(zeusEmulatorCallCount("nvmlDeviceGetCount_v2", -1), 1u);
  EXPECT_EQ(zeusEmulatorCallCount("nvmlDeviceGetCount_v2", 0), 0u);  // it addressed no GPU
}

}  // namespace
}  // namespace zeus::emulator::test
