// Copyright 2026 The Zeus C++ Authors.
//
// Tests of libzeus-nvml-emulator.so through its C API only, as an NVML user
// sees it. Each test writes its scenario into a fresh temp directory, with its
// own state file, and uses the manual clock so that energy and power values
// are exact and no test depends on a sleep (the wall-clock tests wait for
// emulated time to pass, or check that readings never go back).

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"

namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

constexpr unsigned long long kMs = 1'000'000;
constexpr unsigned long long kS = 1'000'000'000;

// A GPU: 100..300 W limits, default 250 W, energy counter, `power` as given.
std::string Gpu(const std::string& power = R"("power_w": 200)", const std::string& extra = "") {
  return R"({"name": "Tesla V100-SXM2-32GB", "architecture": "volta", "min_power_limit_w": 100,
             "max_power_limit_w": 300, "default_power_limit_w": 250, "energy_counter": true, )" +
         power + extra + "}";
}

// GPU extras for tests of exact energy and power around limit changes: the
// counter moves continuously and a new limit applies at once (the defaults are
// a 100 ms counter period and a 100 ms settling ramp).
const std::string kIdeal = R"(, "counter_update_period_ms": 0, "power_settle_ms": 0)";

// A manual-clock scenario with a per-test state file ("@STATE@").
std::string Manual(const std::string& gpus, const std::string& top = "") {
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

// ---- Initialisation and configuration errors -------------------------------------

TEST_F(NvmlEmulatorTest, InitWithoutConfigFails) {
  ::unsetenv("ZEUS_EMULATOR_CONFIG");
  EXPECT_EQ(nvmlInit_v2(), NVML_ERROR_UNKNOWN);
  EXPECT_STREQ(zeusEmulatorLastError(), "ZEUS_EMULATOR_CONFIG is not set; point it at a scenario JSON file");
  unsigned int count = 0;
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  EXPECT_STREQ(zeusEmulatorStatePath(), "");
}

TEST_F(NvmlEmulatorTest, InitWithMissingFileNamesIt) {
  const std::string path = (dir_ / "nope.json").string();
  ::setenv("ZEUS_EMULATOR_CONFIG", path.c_str(), 1);
  EXPECT_EQ(nvmlInit_v2(), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(std::string(zeusEmulatorLastError()), "scenario " + path + ": cannot open: No such file or directory");
}

TEST_F(NvmlEmulatorTest, MalformedScenariosGiveMessagesNamingTheProblem) {
  struct Case {
    std::string text;
    std::string message;  // after "scenario <path>: "
  };
  const std::vector<Case> cases = {
      {"{\n  \"gpus\": [\n    }", "line 3, column 5: JSON syntax error: "},
      {Manual(Gpu(R"("power_w": "abc")")), R"(gpus[0].power_w: expected a number, got "abc")"},
      {Manual(R"({"architecture": "volta"})"), R"(gpus[0]: missing required key "name")"},
      {Manual(Gpu(R"("power_w": 1)", R"(, "powr_limit_w": 3)")), R"(gpus[0]: unknown key "powr_limit_w")"},
      {Manual(R"({"name": "x", "architecture": "fermi", "min_power_limit_w": 1, "max_power_limit_w": 2,
                  "default_power_limit_w": 2, "energy_counter": true, "power_w": 1})"),
       R"(gpus[0].architecture: unknown architecture "fermi"; expected one of )"},
  };
  for (const Case& c : cases) {
    const std::string path = UseScenario(c.text);
    EXPECT_EQ(nvmlInit_v2(), NVML_ERROR_UNKNOWN) << c.text;
    EXPECT_THAT(zeusEmulatorLastError(), StartsWith("scenario " + path + ": " + c.message));
    EXPECT_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
  }
  // A later success clears the message.
  UseScenario(Manual(Gpu()));
  Init();
  EXPECT_STREQ(zeusEmulatorLastError(), "");
}

TEST_F(NvmlEmulatorTest, UnwritableStateFileFailsInit) {
  const std::string path = UseScenario(R"({"state_file": "/nonexistent-dir/x.state", "gpus": []})");
  EXPECT_EQ(nvmlInit_v2(), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(std::string(zeusEmulatorLastError()),
            "scenario " + path + ": state file /nonexistent-dir/x.state: cannot open: No such file or directory");
}

TEST_F(NvmlEmulatorTest, InitIsReferenceCountedAndRereadsTheScenario) {
  EXPECT_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
  UseScenario(Manual(Gpu()));
  Init();
  Init();
  unsigned int count = 0;
  EXPECT_EQ(nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);  // one init still in force
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
  // The next init reads the environment variable and the file again.
  UseScenario(Manual(Gpu() + "," + Gpu()), "two.json");
  Init();
  EXPECT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 2u);
}

TEST_F(NvmlEmulatorTest, EveryDeviceFunctionNeedsInit) {
  nvmlDevice_t device = nullptr;
  unsigned int value = 0;
  unsigned long long energy = 0;
  char text[96];
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(0, &device), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlSystemGetDriverVersion(text, sizeof(text)), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(device, &value), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlDeviceGetTotalEnergyConsumption(device, &energy), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nvmlDeviceSetPowerManagementLimit(device, 1), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(zeusEmulatorAdvanceTimeNs(1), ZEUS_EMULATOR_ERROR_UNINITIALIZED);
  EXPECT_EQ(zeusEmulatorNowNs(&energy), ZEUS_EMULATOR_ERROR_UNINITIALIZED);
  EXPECT_EQ(zeusEmulatorCallCount(nullptr, -1), 0u);
}

TEST_F(NvmlEmulatorTest, ErrorStringCoversEveryCodeBeforeInit) {
  const std::vector<std::pair<nvmlReturn_t, std::string>> expected = {
      {NVML_SUCCESS, "Success"},
      {NVML_ERROR_UNINITIALIZED, "Uninitialized"},
      {NVML_ERROR_INVALID_ARGUMENT, "Invalid Argument"},
      {NVML_ERROR_NOT_SUPPORTED, "Not Supported"},
      {NVML_ERROR_NO_PERMISSION, "Insufficient Permissions"},
      {NVML_ERROR_GPU_IS_LOST, "GPU is lost"},
      {NVML_ERROR_INSUFFICIENT_SIZE, "Insufficient Size"},
      {NVML_ERROR_UNKNOWN, "Unknown Error"},
  };
  for (const auto& [code, text] : expected) EXPECT_EQ(nvmlErrorString(code), text);
  std::vector<std::string> seen;
  for (nvmlReturn_t code = 1; code <= NVML_ERROR_INVALID_STATE; ++code) {
    ASSERT_NE(nvmlErrorString(code), nullptr);
    EXPECT_STRNE(nvmlErrorString(code), "Unknown Error") << code;
    seen.emplace_back(nvmlErrorString(code));
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end()) << "texts are distinct";
  EXPECT_STREQ(nvmlErrorString(4242), "Unknown Error");
}

// ---- Enumeration and identity -----------------------------------------------------

TEST_F(NvmlEmulatorTest, EnumerationAndHandles) {
  UseScenario(Manual(Gpu() + "," + Gpu(R"("power_w": 100)", R"(, "uuid": "GPU-second")")));
  Init();
  unsigned int count = 0;
  ASSERT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(nvmlDeviceGetCount_v2(nullptr), NVML_ERROR_INVALID_ARGUMENT);

  nvmlDevice_t first = Handle(0);
  nvmlDevice_t second = Handle(1);
  EXPECT_NE(first, nullptr);
  EXPECT_NE(first, second);
  EXPECT_EQ(Handle(1), second);  // stable
  nvmlDevice_t device = nullptr;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(2, &device), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(0, nullptr), NVML_ERROR_INVALID_ARGUMENT);

  unsigned int index = 99;
  EXPECT_EQ(nvmlDeviceGetIndex(second, &index), NVML_SUCCESS);
  EXPECT_EQ(index, 1u);
  EXPECT_EQ(nvmlDeviceGetIndex(second, nullptr), NVML_ERROR_INVALID_ARGUMENT);

  EXPECT_EQ(nvmlDeviceGetHandleByUUID("GPU-second", &device), NVML_SUCCESS);
  EXPECT_EQ(device, second);
  EXPECT_EQ(nvmlDeviceGetHandleByUUID("GPU-none", &device), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(nvmlDeviceGetHandleByUUID(nullptr, &device), NVML_ERROR_INVALID_ARGUMENT);

  // Handles the emulator did not give out are rejected without being read.
  int not_a_device = 0;
  auto* bogus = reinterpret_cast<nvmlDevice_t>(&not_a_device);
  unsigned int power = 0;
  EXPECT_EQ(nvmlDeviceGetPowerUsage(bogus, &power), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetPowerUsage(nullptr, &power), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetIndex(bogus, &index), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(NvmlEmulatorTest, IdentityStringsFollowTheBufferProtocol) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "uuid": "GPU-12345678", "pci_bus_id": "00000002:1A:03.0")"),
                     R"("driver_version": "550.54.15", "nvml_version": "12.550.54.15", )"));
  Init();
  nvmlDevice_t device = Handle(0);
  std::array<char, 96> buffer{};
  ASSERT_EQ(nvmlDeviceGetName(device, buffer.data(), buffer.size()), NVML_SUCCESS);
  EXPECT_STREQ(buffer.data(), "Tesla V100-SXM2-32GB");
  const unsigned int name_length = std::strlen("Tesla V100-SXM2-32GB");
  EXPECT_EQ(nvmlDeviceGetName(device, buffer.data(), name_length), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(nvmlDeviceGetName(device, buffer.data(), name_length + 1), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetName(device, nullptr, 96), NVML_ERROR_INVALID_ARGUMENT);

  ASSERT_EQ(nvmlDeviceGetUUID(device, buffer.data(), buffer.size()), NVML_SUCCESS);
  EXPECT_STREQ(buffer.data(), "GPU-12345678");
  EXPECT_EQ(nvmlDeviceGetUUID(device, buffer.data(), 12), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(nvmlDeviceGetUUID(device, buffer.data(), 13), NVML_SUCCESS);

  ASSERT_EQ(nvmlSystemGetDriverVersion(buffer.data(), buffer.size()), NVML_SUCCESS);
  EXPECT_STREQ(buffer.data(), "550.54.15");
  EXPECT_EQ(nvmlSystemGetDriverVersion(buffer.data(), 9), NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(nvmlSystemGetNVMLVersion(buffer.data(), buffer.size()), NVML_SUCCESS);
  EXPECT_STREQ(buffer.data(), "12.550.54.15");
  EXPECT_EQ(nvmlSystemGetNVMLVersion(buffer.data(), 12), NVML_ERROR_INSUFFICIENT_SIZE);

  nvmlPciInfo_t pci{};
  ASSERT_EQ(nvmlDeviceGetPciInfo_v3(device, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000002:1A:03.0");
  EXPECT_STREQ(pci.busIdLegacy, "0002:1A:03.0");
  EXPECT_EQ(pci.domain, 2u);
  EXPECT_EQ(pci.bus, 0x1Au);
  EXPECT_EQ(pci.device, 3u);
  EXPECT_EQ(pci.pciDeviceId & 0xFFFFu, 0x10DEu);
  EXPECT_EQ(nvmlDeviceGetPciInfo_v3(device, nullptr), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(NvmlEmulatorTest, DefaultIdentityAndVersions) {
  UseScenario(Manual(Gpu() + "," + Gpu()));
  Init();
  std::array<char, 96> a{};
  std::array<char, 96> b{};
  ASSERT_EQ(nvmlDeviceGetUUID(Handle(0), a.data(), a.size()), NVML_SUCCESS);
  ASSERT_EQ(nvmlDeviceGetUUID(Handle(1), b.data(), b.size()), NVML_SUCCESS);
  EXPECT_THAT(a.data(), MatchesRegex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"));
  EXPECT_STRNE(a.data(), b.data());
  nvmlPciInfo_t pci{};
  ASSERT_EQ(nvmlDeviceGetPciInfo_v3(Handle(1), &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000000:02:00.0");
  ASSERT_EQ(nvmlSystemGetDriverVersion(a.data(), a.size()), NVML_SUCCESS);
  EXPECT_STREQ(a.data(), "550.54.15-zeus-emulator");
}

TEST_F(NvmlEmulatorTest, ArchitectureMigAndTemperature) {
  const std::string hopper = R"({"name": "H100", "architecture": "hopper", "min_power_limit_w": 200,
      "max_power_limit_w": 700, "default_power_limit_w": 700, "energy_counter": true, "power_w": 300,
      "mig": true, "temperature_c": 45})";
  UseScenario(Manual(Gpu() + "," + hopper));
  Init();
  nvmlDeviceArchitecture_t arch = 0;
  ASSERT_EQ(nvmlDeviceGetArchitecture(Handle(0), &arch), NVML_SUCCESS);
  EXPECT_EQ(arch, static_cast<unsigned int>(NVML_DEVICE_ARCH_VOLTA));
  ASSERT_EQ(nvmlDeviceGetArchitecture(Handle(1), &arch), NVML_SUCCESS);
  EXPECT_EQ(arch, static_cast<unsigned int>(NVML_DEVICE_ARCH_HOPPER));
  EXPECT_EQ(nvmlDeviceGetArchitecture(Handle(1), nullptr), NVML_ERROR_INVALID_ARGUMENT);

  unsigned int current = 9;
  unsigned int pending = 9;
  ASSERT_EQ(nvmlDeviceGetMigMode(Handle(0), &current, &pending), NVML_SUCCESS);
  EXPECT_EQ(current, 0u);
  EXPECT_EQ(pending, 0u);
  ASSERT_EQ(nvmlDeviceGetMigMode(Handle(1), &current, &pending), NVML_SUCCESS);
  EXPECT_EQ(current, 1u);
  EXPECT_EQ(pending, 1u);
  EXPECT_EQ(nvmlDeviceGetMigMode(Handle(1), &current, nullptr), NVML_ERROR_INVALID_ARGUMENT);

  unsigned int temp = 0;
  ASSERT_EQ(nvmlDeviceGetTemperature(Handle(0), NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
  EXPECT_EQ(temp, 40u);
  ASSERT_EQ(nvmlDeviceGetTemperature(Handle(1), NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
  EXPECT_EQ(temp, 45u);
  EXPECT_EQ(nvmlDeviceGetTemperature(Handle(1), 1, &temp), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetTemperature(Handle(1), NVML_TEMPERATURE_GPU, nullptr), NVML_ERROR_INVALID_ARGUMENT);
}

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

// ---- Shared state across processes and threads ---------------------------------------------

TEST_F(NvmlEmulatorTest, StatePathAndReuse) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", kIdeal)));
  Init();
  EXPECT_EQ(std::string(zeusEmulatorStatePath()), state_path());
  EXPECT_TRUE(std::filesystem::exists(state_path()));
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(0), 150'000), NVML_SUCCESS);
  Advance(1 * kS);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  // Same scenario: the state is reused.
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 150'000u);
  EXPECT_EQ(EnergyMj(Handle(0)), 150'000u);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  // Edited scenario: the state starts over.
  UseScenario(Manual(Gpu(R"("power_w": 200)", kIdeal)) + "\n// edited\n");
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
  EXPECT_EQ(EnergyMj(Handle(0)), 0u);
}

TEST_F(NvmlEmulatorTest, CorruptStateFileIsReinitialised) {
  UseScenario(Manual(Gpu()));
  std::ofstream(state_path()) << "garbage that is not a state file";
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(Handle(0)), 200'000u);
}

TEST_F(NvmlEmulatorTest, DefaultStatePathIsDerivedFromTheScenarioPath) {
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir != nullptr ? old_tmpdir : "";
  ::setenv("TMPDIR", dir_.c_str(), 1);
  UseScenario(R"({"clock": "manual", "gpus": [)" + Gpu() + "]}");
  Init();
  const std::string path = zeusEmulatorStatePath();
  if (old_tmpdir != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_THAT(path, MatchesRegex(dir_.string() + "/zeus-nvml-emulator-[0-9a-f]{16}\\.state"));
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST_F(NvmlEmulatorTest, HandlesStayTheSameAcrossReinitialisation) {
  UseScenario(Manual(Gpu() + "," + Gpu()));
  Init();
  nvmlDevice_t second = Handle(1);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  unsigned int index = 9;
  EXPECT_EQ(nvmlDeviceGetIndex(second, &index), NVML_ERROR_UNINITIALIZED);
  Init();
  EXPECT_EQ(Handle(1), second);
  ASSERT_EQ(nvmlDeviceGetIndex(second, &index), NVML_SUCCESS);
  EXPECT_EQ(index, 1u);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  UseScenario(Manual(Gpu()), "one.json");
  Init();
  EXPECT_EQ(nvmlDeviceGetIndex(second, &index), NVML_ERROR_INVALID_ARGUMENT);  // no GPU 1 any more
}

TEST_F(NvmlEmulatorTest, StateFromBeforeARebootIsReinitialised) {
  UseScenario(R"({"state_file": "@STATE@", "gpus": [)" + Gpu() + "]}");
  Init();
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(0), 150'000), NVML_SUCCESS);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 150'000u);  // reused
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  {
    // Move the epoch (after magic, version, GPU count, hash and size) into the
    // future, as if the file had been written before a reboot.
    std::fstream file(state_path(), std::ios::in | std::ios::out | std::ios::binary);
    const std::int64_t future_ns = std::numeric_limits<std::int64_t>::max() / 4;
    file.seekp(32);
    file.write(reinterpret_cast<const char*>(&future_ns), sizeof(future_ns));
  }
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
}

// Runs `child` in a forked process; returns its exit status (0 = success).
template <class Child>
int RunInChild(Child child) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(child());
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

TEST_F(NvmlEmulatorTest, LimitSetInAnotherProcessIsSharedAndEnergyFollowsIt) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", kIdeal)));
  Init();
  Advance(1 * kS);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);  // the child loads the scenario itself

  const int status = RunInChild([] {
    if (nvmlInit_v2() != NVML_SUCCESS) return 10;
    nvmlDevice_t device = nullptr;
    if (nvmlDeviceGetHandleByIndex_v2(0, &device) != NVML_SUCCESS) return 11;
    if (zeusEmulatorAdvanceTimeNs(kS) != 0) return 12;
    if (nvmlDeviceSetPowerManagementLimit(device, 120'000) != NVML_SUCCESS) return 13;
    if (zeusEmulatorAdvanceTimeNs(kS) != 0) return 14;
    if (nvmlShutdown() != NVML_SUCCESS) return 15;
    return 0;
  });
  ASSERT_EQ(status, 0);

  Init();
  nvmlDevice_t device = Handle(0);
  EXPECT_EQ(LimitMw(device), 120'000u);
  unsigned long long now = 0;
  ASSERT_EQ(zeusEmulatorNowNs(&now), ZEUS_EMULATOR_OK);
  EXPECT_EQ(now, 3 * kS);
  EXPECT_EQ(EnergyMj(device), 200'000u + 200'000u + 120'000u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 640'000u);
}

TEST_F(NvmlEmulatorTest, ForkedChildOfAnInitialisedProcessSharesState) {
  UseScenario(Manual(Gpu(R"("power_w": 100)")));
  Init();
  nvmlDevice_t device = Handle(0);
  // Two children (inheriting our initialisation) and this process advance the
  // clock concurrently; no update may be lost.
  auto advance_many = [] {
    for (int i = 0; i < 500; ++i) {
      if (zeusEmulatorAdvanceTimeNs(kMs) != 0) return 1;
    }
    return 0;
  };
  const pid_t a = ::fork();
  if (a == 0) ::_exit(advance_many());
  const pid_t b = ::fork();
  if (b == 0) {
    const int result = advance_many();
    ::_exit(result != 0 ? result : (nvmlDeviceSetPowerManagementLimit(device, 100'000) == NVML_SUCCESS ? 0 : 3));
  }
  EXPECT_EQ(advance_many(), 0);
  for (pid_t pid : {a, b}) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  unsigned long long now = 0;
  ASSERT_EQ(zeusEmulatorNowNs(&now), ZEUS_EMULATOR_OK);
  EXPECT_EQ(now, 1'500 * kMs);
  EXPECT_EQ(EnergyMj(device), 150'000u);  // 100 W throughout, whatever the limit
  EXPECT_EQ(LimitMw(device), 100'000u);   // set by child b
}

TEST_F(NvmlEmulatorTest, ConcurrentThreads) {
  UseScenario(Manual(Gpu(R"("power_w": 100)", R"(, "power_average_window_ms": 0)")));
  Init();
  nvmlDevice_t device = Handle(0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (zeusEmulatorAdvanceTimeNs(kMs) != 0) ++failures;
        if (nvmlDeviceSetPowerManagementLimit(device, (i + t) % 2 == 0 ? 150'000 : 250'000) != NVML_SUCCESS) {
          ++failures;
        }
        unsigned long long energy = 0;
        unsigned int power = 0;
        if (nvmlDeviceGetTotalEnergyConsumption(device, &energy) != NVML_SUCCESS) ++failures;
        if (nvmlDeviceGetPowerUsage(device, &power) != NVML_SUCCESS || power != 100'000) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(EnergyMj(device), 160'000u);  // 100 W x 1.6 s
  EXPECT_EQ(zeusEmulatorCallCount("nvmlDeviceSetPowerManagementLimit", 0), 1'600u);
}

// ---- Lock-free reads (the seqlock) ------------------------------------------------------------

// The snapshot tests' GPU: it demands 300 W, above every limit they set (so it
// draws exactly its limit), and its sensor reports the power at every 1 ms
// update, without averaging.
std::string SnapshotGpu() {
  return Gpu(R"("power_w": 300)", R"(, "power_update_period_ms": 1, "power_average_window_ms": 0)" + kIdeal);
}

// The limit set at step `k` of AlternateLimits, in mW.
constexpr unsigned int AlternatingLimitMw(int k) { return k % 2 == 0 ? 150'000 : 250'000; }

// The snapshot tests' writer: `steps` times, moves the manual clock on by 1 ms
// and then sets the limit to AlternatingLimitMw(step). Returns 0, or which call
// failed.
int AlternateLimits(nvmlDevice_t device, int steps) {
  for (int k = 0; k < steps; ++k) {
    if (zeusEmulatorAdvanceTimeNs(kMs) != ZEUS_EMULATOR_OK) return 1;
    if (nvmlDeviceSetPowerManagementLimit(device, AlternatingLimitMw(k)) != NVML_SUCCESS) return 2;
  }
  return 0;
}

// The energy counter (mJ) at n ms under AlternateLimits, for n in [0, steps]:
// 250 W (the default limit) during the first ms, then during ms j the limit
// set at step j - 1.
std::vector<unsigned long long> AlternatingEnergiesMj(int steps) {
  std::vector<unsigned long long> energies{0};
  for (int n = 1; n <= steps; ++n) {
    energies.push_back(energies.back() + (n == 1 ? 250 : AlternatingLimitMw(n - 2) / 1000));
  }
  return energies;
}

// Reads everything the writer changes, once, and checks that each call saw
// one consistent state: the limit and power are ones the writer sets, and the
// energy is the exact counter at an instant (a whole ms) between the times
// read before and after it, never less than `last_energy_mj`'s. Returns an
// empty string or what was wrong.
std::string CheckSnapshot(nvmlDevice_t device, const std::vector<unsigned long long>& energies,
                          unsigned long long* last_energy_mj) {
  auto valid_power = [](unsigned int mw) { return mw == 150'000 || mw == 250'000; };
  unsigned long long before_ns = 0;
  unsigned long long after_ns = 0;
  unsigned long long energy = 0;
  unsigned int limit = 0;
  std::array<nvmlFieldValue_t, 2> values{};
  values[0].fieldId = NVML_FI_DEV_POWER_INSTANT;
  values[1].fieldId = NVML_FI_DEV_POWER_AVERAGE;
  if (zeusEmulatorNowNs(&before_ns) != ZEUS_EMULATOR_OK) return "NowNs failed";
  if (nvmlDeviceGetTotalEnergyConsumption(device, &energy) != NVML_SUCCESS) return "energy failed";
  if (nvmlDeviceGetFieldValues(device, 2, values.data()) != NVML_SUCCESS) return "field values failed";
  if (nvmlDeviceGetPowerManagementLimit(device, &limit) != NVML_SUCCESS) return "limit failed";
  if (zeusEmulatorNowNs(&after_ns) != ZEUS_EMULATOR_OK) return "NowNs failed";
  if (before_ns % kMs != 0 || after_ns < before_ns || after_ns / kMs >= energies.size()) {
    return "time " + std::to_string(before_ns) + " .. " + std::to_string(after_ns);
  }
  bool energy_ok = false;
  for (unsigned long long n = before_ns / kMs; n <= after_ns / kMs; ++n) energy_ok = energy_ok || energies[n] == energy;
  if (!energy_ok || energy < *last_energy_mj) {
    return "energy " + std::to_string(energy) + " mJ between " + std::to_string(before_ns) + " and " +
           std::to_string(after_ns) + " ns (previous " + std::to_string(*last_energy_mj) + ")";
  }
  *last_energy_mj = energy;
  for (const nvmlFieldValue_t& value : values) {
    if (value.nvmlReturn != NVML_SUCCESS || !valid_power(value.value.uiVal) ||
        value.value.uiVal != values[0].value.uiVal || value.timestamp != values[0].timestamp ||
        static_cast<unsigned long long>(value.timestamp) % 1000 != 0) {
      return "field value " + std::to_string(value.value.uiVal) + " mW at " + std::to_string(value.timestamp);
    }
  }
  if (!valid_power(limit)) return "limit " + std::to_string(limit);
  return "";
}

// Reads with CheckSnapshot until `done`, and then once more. Returns the first
// problem, or "" (and counts the reads).
std::string CheckSnapshotsUntil(nvmlDevice_t device, const std::vector<unsigned long long>& energies,
                                const std::atomic<bool>& done, long* reads) {
  unsigned long long last_energy = 0;
  for (bool last = false; !last;) {
    last = done.load();
    if (std::string problem = CheckSnapshot(device, energies, &last_energy); !problem.empty()) return problem;
    ++*reads;
  }
  return "";
}

constexpr int kAlternatingSteps = 1'500;  // more than the 256 changes kept, so the history folds too

TEST_F(NvmlEmulatorTest, ReadersSeeConsistentSnapshotsWhileAnotherThreadWrites) {
  UseScenario(Manual(SnapshotGpu()));
  Init();
  nvmlDevice_t device = Handle(0);
  const std::vector<unsigned long long> energies = AlternatingEnergiesMj(kAlternatingSteps);
  std::atomic<bool> done{false};
  std::array<std::string, 2> problems;
  std::array<long, 2> reads{};
  std::vector<std::thread> readers;
  for (std::size_t r = 0; r < problems.size(); ++r) {
    readers.emplace_back([&, r] { problems[r] = CheckSnapshotsUntil(device, energies, done, &reads[r]); });
  }
  const int written = AlternateLimits(device, kAlternatingSteps);
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(written, 0);
  for (std::size_t r = 0; r < problems.size(); ++r) {
    EXPECT_EQ(problems[r], "") << "reader " << r;
    EXPECT_GT(reads[r], 0) << "reader " << r;
  }
  EXPECT_EQ(EnergyMj(device), energies.back());
  EXPECT_EQ(LimitMw(device), AlternatingLimitMw(kAlternatingSteps - 1));
}

TEST_F(NvmlEmulatorTest, ReadersSeeConsistentSnapshotsWhileAnotherProcessWrites) {
  UseScenario(Manual(SnapshotGpu()));
  Init();
  nvmlDevice_t device = Handle(0);
  const std::vector<unsigned long long> energies = AlternatingEnergiesMj(kAlternatingSteps);
  // The child inherits our initialisation, so its first write reopens the
  // state file while its own reader thread is reading it lock-free.
  const pid_t child = ::fork();
  if (child == 0) {
    std::atomic<bool> done{false};
    std::string problem;
    long reads = 0;
    std::thread reader([&] { problem = CheckSnapshotsUntil(device, energies, done, &reads); });
    const int written = AlternateLimits(device, kAlternatingSteps);
    done = true;
    reader.join();
    ::_exit(written != 0 ? 10 + written : (!problem.empty() ? 20 : 0));
  }
  ASSERT_GT(child, 0);
  unsigned long long last_energy = 0;
  std::string problem;
  long reads = 0;
  int status = 0;
  for (bool exited = false; !exited; ++reads) {
    exited = ::waitpid(child, &status, WNOHANG) == child;
    if (problem.empty()) problem = CheckSnapshot(device, energies, &last_energy);
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(problem, "");
  EXPECT_GT(reads, 0);
  unsigned long long now = 0;
  ASSERT_EQ(zeusEmulatorNowNs(&now), ZEUS_EMULATOR_OK);
  EXPECT_EQ(now, kAlternatingSteps * kMs);
  EXPECT_EQ(EnergyMj(device), energies.back());
  EXPECT_EQ(LimitMw(device), AlternatingLimitMw(kAlternatingSteps - 1));
}

TEST_F(NvmlEmulatorTest, WallClockReadingsNeverGoBackWhileLimitsChange) {
  UseScenario(R"({"state_file": "@STATE@", "time_scale": 3, "gpus": [)" + SnapshotGpu() + "]}");
  Init();
  nvmlDevice_t device = Handle(0);
  std::atomic<bool> done{false};
  std::array<std::string, 2> problems;
  std::vector<std::thread> readers;
  for (std::size_t r = 0; r < problems.size(); ++r) {
    readers.emplace_back([&, r] {
      unsigned long long last_energy = 0;
      unsigned long long last_now = 0;
      unsigned long long last_timestamp = 0;
      for (bool last = false; !last && problems[r].empty();) {
        last = done.load();
        unsigned long long now = 0;
        unsigned long long energy = 0;
        nvmlFieldValue_t value{};
        value.fieldId = NVML_FI_DEV_POWER_INSTANT;
        if (zeusEmulatorNowNs(&now) != ZEUS_EMULATOR_OK || now < last_now) problems[r] = "time went back";
        if (nvmlDeviceGetTotalEnergyConsumption(device, &energy) != NVML_SUCCESS || energy < last_energy) {
          problems[r] = "energy went back: " + std::to_string(last_energy) + " -> " + std::to_string(energy);
        }
        if (nvmlDeviceGetFieldValues(device, 1, &value) != NVML_SUCCESS || value.nvmlReturn != NVML_SUCCESS ||
            (value.value.uiVal != 150'000 && value.value.uiVal != 250'000) ||
            static_cast<unsigned long long>(value.timestamp) < last_timestamp) {
          problems[r] = "power " + std::to_string(value.value.uiVal) + " at " + std::to_string(value.timestamp);
        }
        last_now = now;
        last_energy = energy;
        last_timestamp = static_cast<unsigned long long>(value.timestamp);
      }
    });
  }
  int failures = 0;
  for (int k = 0; k < 3'000; ++k) {
    if (nvmlDeviceSetPowerManagementLimit(device, AlternatingLimitMw(k)) != NVML_SUCCESS) ++failures;
  }
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(failures, 0);
  for (const std::string& problem : problems) EXPECT_EQ(problem, "");
}

TEST_F(NvmlEmulatorTest, StateLeftHalfUpdatedIsReinitialised) {
  UseScenario(Manual(Gpu()));
  Init();
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(0), 150'000), NVML_SUCCESS);
  Advance(1 * kS);
  EXPECT_EQ(LimitMw(Handle(0)), 150'000u);
  {
    // An odd sequence number (at offset 48): a writer died mid-update.
    std::fstream file(state_path(), std::ios::in | std::ios::out | std::ios::binary);
    const std::uint64_t odd = 7;
    file.seekp(48);
    file.write(reinterpret_cast<const char*>(&odd), sizeof(odd));
  }
  // Readers wait for the writer in vain, then take the lock, which finds the
  // file half-written and starts it afresh.
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
  EXPECT_EQ(EnergyMj(Handle(0)), 0u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(Handle(0)), 200'000u);
}

TEST_F(NvmlEmulatorTest, StateFileNeverShrinks) {
  UseScenario(Manual(Gpu() + "," + Gpu()));
  Init();
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  const auto two_gpus = std::filesystem::file_size(state_path());
  // A scenario with fewer GPUs re-initialises the file but leaves its size (a
  // process of the other scenario may still be reading the end of it).
  UseScenario(Manual(Gpu()), "one.json");
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(Handle(0)), 200'000u);
  EXPECT_EQ(std::filesystem::file_size(state_path()), two_gpus);
}

// ---- The library's exports ---------------------------------------------------------------

TEST(NvmlEmulatorExportsTest, ExportsEveryApiFunctionAndHidesInternals) {
  void* library = ::dlopen(ZEUS_NVML_EMULATOR_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << ::dlerror();
  const std::vector<const char*> names = {
#define ZEUS_NVML_FN(kind, ret, name, params) #name,
#include "device/nvml/nvml_api.def"
#undef ZEUS_NVML_FN
      "zeusEmulatorLastError", "zeusEmulatorCallCount", "zeusEmulatorAdvanceTimeNs",
      "zeusEmulatorStatePath", "zeusEmulatorNowNs",     "zeusEmulatorIterationTimeS"};
  for (const char* name : names) EXPECT_NE(::dlsym(library, name), nullptr) << name;
  EXPECT_EQ(::dlsym(library, "_ZN4zeus8emulator7Fnv1a64ESt17basic_string_viewIcSt11char_traitsIcEE"), nullptr);
  ::dlclose(library);
}

}  // namespace
