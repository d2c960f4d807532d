// Copyright 2026 The Zeus C++ Authors.
//
// Tests of libzeus-nvml-emulator.so through its C API: initialisation and
// configuration errors, enumeration and identity, and the library's exports.
// The fixture and scenario builders: nvml_emulator_test_fixture.h; the other
// features' tests: nvml_emulator_{limits,energy,faults,state}_test.cc.

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"
#include "nvml_emulator_test_fixture.h"

namespace zeus::emulator::test {
namespace {

using ::testing::MatchesRegex;
using ::testing::StartsWith;

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

TEST_F(NvmlEmulatorTest, InitRefusesAnAmdScenario) {
  const std::string path = UseScenario(R"({"vendor": "amd", "clock": "manual", "state_file": "@STATE@", "gpus": [
      {"name": "AMD Instinct MI300X", "min_power_limit_w": 200, "max_power_limit_w": 750,
       "default_power_limit_w": 750, "power_w": 600}]})");
  EXPECT_EQ(nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
  EXPECT_EQ(std::string(zeusEmulatorLastError()),
            "scenario " + path + ": this scenario's GPUs are AMD (vendor amd); load libzeus-amdsmi-emulator.so");
  EXPECT_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
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
}  // namespace zeus::emulator::test
