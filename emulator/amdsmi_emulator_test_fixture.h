// Copyright 2026 The Zeus C++ Authors.
//
// Shared by the tests of libzeus-amdsmi-emulator.so's C API (the
// amdsmi_emulator*_test.cc files, one binary): scenario builders (AmdGpu,
// AmdManual, kIdeal), time units, and the AmdSmiEmulatorTest fixture (a fresh
// temp directory and state file per test, shutdown and cleanup after it).
//
// The tests use the C API only, as an AMD SMI user sees it, on the manual
// clock, so that readings are exact and no test sleeps.

#ifndef ZEUS_EMULATOR_AMDSMI_EMULATOR_TEST_FIXTURE_H_
#define ZEUS_EMULATOR_AMDSMI_EMULATOR_TEST_FIXTURE_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "device/amdsmi/amdsmi_abi.h"
#include "emulator_control.h"

extern "C" {
#define ZEUS_AMDSMI_FN(kind, name, params) amdsmi_status_t name params;
#include "device/amdsmi/amdsmi_api.def"
#undef ZEUS_AMDSMI_FN
}

namespace zeus::emulator::test {

inline constexpr unsigned long long kMs = 1'000'000;
inline constexpr unsigned long long kS = 1'000'000'000;

// An AMD GPU: 200..750 W caps, default 750 W, `power` as given.
inline std::string AmdGpu(const std::string& power = R"("power_w": 300)", const std::string& extra = "") {
  return R"({"name": "AMD Instinct MI300X", "min_power_limit_w": 200, "max_power_limit_w": 750,
             "default_power_limit_w": 750, )" +
         power + extra + "}";
}

// The counter moves continuously and a new cap applies at once.
inline const std::string kIdeal = R"(, "counter_update_period_ms": 0, "power_settle_ms": 0)";

// A manual-clock AMD scenario with a per-test state file ("@STATE@").
inline std::string AmdManual(const std::string& gpus, const std::string& top = "") {
  return R"({"vendor": "amd", "clock": "manual", "state_file": "@STATE@", )" + top + R"("gpus": [)" + gpus + "]}";
}

class AmdSmiEmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "zeus-amdsmi-emulator-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ::unsetenv("ZEUS_EMULATOR_CONFIG");
  }

  void TearDown() override {
    while (amdsmi_shut_down() == AMDSMI_STATUS_SUCCESS) {
    }
    ::unsetenv("ZEUS_AMDSMI_EMULATOR_CONFIG");
    ::unsetenv("ZEUS_EMULATOR_CONFIG");
    if (saved_tmpdir_) {
      if (saved_tmpdir_->empty()) {
        ::unsetenv("TMPDIR");
      } else {
        ::setenv("TMPDIR", saved_tmpdir_->c_str(), 1);
      }
    }
    std::filesystem::remove_all(dir_);
  }

  // For scenarios without a state_file (the presets): their default state
  // file goes to this test's directory (TMPDIR, restored after the test).
  void KeepDefaultStateHere() {
    const char* tmpdir = std::getenv("TMPDIR");
    saved_tmpdir_ = tmpdir != nullptr ? tmpdir : "";
    ::setenv("TMPDIR", dir_.c_str(), 1);
  }

  std::string state_path() const { return (dir_ / "emulator.state").string(); }

  // Writes `text` (with @STATE@ replaced) to `name` and points `variable`
  // at it. Returns the path.
  std::string UseScenario(std::string text, const std::string& name = "scenario.json",
                          const char* variable = "ZEUS_AMDSMI_EMULATOR_CONFIG") {
    for (std::size_t at = text.find("@STATE@"); at != std::string::npos; at = text.find("@STATE@")) {
      text.replace(at, 7, (dir_ / (name + ".state")).string());
    }
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    ::setenv(variable, path.c_str(), 1);
    return path;
  }

  void Init() { ASSERT_EQ(amdsmi_init(AMDSMI_INIT_AMD_GPUS), AMDSMI_STATUS_SUCCESS) << zeusEmulatorLastError(); }

  // Every processor, socket by socket, as a user enumerates them.
  static std::vector<amdsmi_processor_handle> Processors() {
    uint32_t sockets = 0;
    EXPECT_EQ(amdsmi_get_socket_handles(&sockets, nullptr), AMDSMI_STATUS_SUCCESS);
    std::vector<amdsmi_socket_handle> socket_handles(sockets);
    EXPECT_EQ(amdsmi_get_socket_handles(&sockets, socket_handles.data()), AMDSMI_STATUS_SUCCESS);
    std::vector<amdsmi_processor_handle> processors;
    for (amdsmi_socket_handle socket : socket_handles) {
      uint32_t count = 0;
      EXPECT_EQ(amdsmi_get_processor_handles(socket, &count, nullptr), AMDSMI_STATUS_SUCCESS);
      std::vector<amdsmi_processor_handle> handles(count);
      EXPECT_EQ(amdsmi_get_processor_handles(socket, &count, handles.data()), AMDSMI_STATUS_SUCCESS);
      processors.insert(processors.end(), handles.begin(), handles.begin() + count);
    }
    return processors;
  }

  static amdsmi_processor_handle Processor(std::size_t index) {
    const std::vector<amdsmi_processor_handle> all = Processors();
    return index < all.size() ? all[index] : nullptr;
  }

  static void Advance(unsigned long long ns) { ASSERT_EQ(zeusEmulatorAdvanceTimeNs(ns), ZEUS_EMULATOR_OK); }

  static amdsmi_power_info_t PowerInfo(amdsmi_processor_handle processor) {
    amdsmi_power_info_t info{};
    EXPECT_EQ(amdsmi_get_power_info(processor, &info), AMDSMI_STATUS_SUCCESS);
    return info;
  }

  // The energy counter converted as AMD SMI's users do: accumulator x resolution, µJ.
  static double EnergyUj(amdsmi_processor_handle processor) {
    uint64_t accumulator = 0;
    float resolution = 0;
    uint64_t timestamp = 0;
    EXPECT_EQ(amdsmi_get_energy_count(processor, &accumulator, &resolution, &timestamp), AMDSMI_STATUS_SUCCESS);
    return static_cast<double>(accumulator) * static_cast<double>(resolution);
  }

  static uint64_t CapUw(amdsmi_processor_handle processor) {
    amdsmi_power_cap_info_t info{};
    EXPECT_EQ(amdsmi_get_power_cap_info(processor, 0, &info), AMDSMI_STATUS_SUCCESS);
    return info.power_cap;
  }

  std::filesystem::path dir_;
  std::optional<std::string> saved_tmpdir_;
};

}  // namespace zeus::emulator::test

#endif  // ZEUS_EMULATOR_AMDSMI_EMULATOR_TEST_FIXTURE_H_
