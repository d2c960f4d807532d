// Copyright 2026 The Zeus C++ Authors.
//
// Shared by the tests of libzeus-nvml-emulator.so's C API (the
// nvml_emulator*_test.cc files, one binary): scenario builders (Gpu, Manual,
// kIdeal), time units, and the NvmlEmulatorTest fixture (a fresh temp
// directory and state file per test, shutdown and cleanup after it).
//
// The tests use the C API only, as an NVML user sees it. Each writes its
// scenario into its own temp directory, with its own state file, and uses the
// manual clock so that energy and power values are exact and no test depends
// on a sleep (the wall-clock tests wait for emulated time to pass, or check
// that readings never go back).

#ifndef ZEUS_EMULATOR_NVML_EMULATOR_TEST_FIXTURE_H_
#define ZEUS_EMULATOR_NVML_EMULATOR_TEST_FIXTURE_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>

#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"

namespace zeus::emulator::test {

inline constexpr unsigned long long kMs = 1'000'000;
inline constexpr unsigned long long kS = 1'000'000'000;

// A GPU: 100..300 W limits, default 250 W, energy counter, `power` as given.
inline std::string Gpu(const std::string& power = R"("power_w": 200)", const std::string& extra = "") {
  return R"({"name": "Tesla V100-SXM2-32GB", "architecture": "volta", "min_power_limit_w": 100,
             "max_power_limit_w": 300, "default_power_limit_w": 250, "energy_counter": true, )" +
         power + extra + "}";
}

// GPU extras for tests of exact energy and power around limit changes: the
// counter moves continuously and a new limit applies at once (the defaults are
// a 100 ms counter period and a 100 ms settling ramp).
inline const std::string kIdeal = R"(, "counter_update_period_ms": 0, "power_settle_ms": 0)";

// A manual-clock scenario with a per-test state file ("@STATE@").
inline std::string Manual(const std::string& gpus, const std::string& top = "") {
  return R"({"clock": "manual", "state_file": "@STATE@", )" + top + R"("gpus": [)" + gpus + "]}";
}

class NvmlEmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "zeus-nvml-emulator-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }

  void TearDown() override {
    while (nvmlShutdown() == NVML_SUCCESS) {
    }
    ::unsetenv("ZEUS_EMULATOR_CONFIG");
    std::filesystem::remove_all(dir_);
  }

  std::string state_path() const { return (dir_ / "emulator.state").string(); }

  // Writes `text` (with @STATE@ replaced) to `name` and points
  // ZEUS_EMULATOR_CONFIG at it. Returns the path.
  std::string UseScenario(std::string text, const std::string& name = "scenario.json") {
    for (std::size_t at = text.find("@STATE@"); at != std::string::npos; at = text.find("@STATE@")) {
      text.replace(at, 7, state_path());
    }
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    ::setenv("ZEUS_EMULATOR_CONFIG", path.c_str(), 1);
    return path;
  }

  void Init() { ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS) << zeusEmulatorLastError(); }

  nvmlDevice_t Handle(unsigned int index) {
    nvmlDevice_t device = nullptr;
    EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(index, &device), NVML_SUCCESS);
    return device;
  }

  static void Advance(unsigned long long ns) { ASSERT_EQ(zeusEmulatorAdvanceTimeNs(ns), ZEUS_EMULATOR_OK); }

  static unsigned long long EnergyMj(nvmlDevice_t device) {
    unsigned long long energy = 0;
    EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device, &energy), NVML_SUCCESS);
    return energy;
  }

  static unsigned int PowerMw(nvmlDevice_t device) {
    unsigned int power = 0;
    EXPECT_EQ(nvmlDeviceGetPowerUsage(device, &power), NVML_SUCCESS);
    return power;
  }

  static unsigned int LimitMw(nvmlDevice_t device) {
    unsigned int limit = 0;
    EXPECT_EQ(nvmlDeviceGetPowerManagementLimit(device, &limit), NVML_SUCCESS);
    return limit;
  }

  std::filesystem::path dir_;
};

}  // namespace zeus::emulator::test

#endif  // ZEUS_EMULATOR_NVML_EMULATOR_TEST_FIXTURE_H_
