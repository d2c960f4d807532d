// Copyright 2026 The Zeus C++ Authors.

#include "scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "device/amdsmi/amdsmi_abi.h"

namespace zeus::emulator {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

constexpr std::int64_t kMs = kNsPerMs;

// A valid GPU object with `extra` spliced in (e.g. `, "mig": true`).
std::string Gpu(const std::string& extra = "", const std::string& power = R"("power_w": 180)") {
  return R"({"name": "Tesla V100-SXM2-32GB", "architecture": "volta", "min_power_limit_w": 100,
             "max_power_limit_w": 250, "default_power_limit_w": 250, "energy_counter": true, )" +
         power + extra + "}";
}

std::string WithGpus(const std::string& gpus, const std::string& top = "") {
  return "{" + top + R"("gpus": [)" + gpus + "]}";
}

Scenario ParseOk(const std::string& text) {
  Scenario scenario;
  std::string error;
  EXPECT_TRUE(ParseScenario(text, &scenario, &error)) << error;
  return scenario;
}

std::string ParseError(const std::string& text) {
  Scenario scenario;
  std::string error;
  EXPECT_FALSE(ParseScenario(text, &scenario, &error)) << "parsed unexpectedly: " << text;
  return error;
}

TEST(EmulatorParseScenarioTest, MinimalScenarioGetsDefaults) {
  const Scenario s = ParseOk(WithGpus(Gpu()));
  EXPECT_EQ(s.driver_version, "550.54.15-zeus-emulator");
  EXPECT_EQ(s.nvml_version, "12.550.54.15-zeus-emulator");
  EXPECT_EQ(s.state_file, "");
  EXPECT_EQ(s.clock, ClockMode::kWall);
  EXPECT_EQ(s.time_scale, 1.0);
  EXPECT_TRUE(s.faults.empty());
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuSpec& g = s.gpus[0];
  EXPECT_EQ(g.name, "Tesla V100-SXM2-32GB");
  EXPECT_EQ(g.architecture, static_cast<unsigned int>(NVML_DEVICE_ARCH_VOLTA));
  EXPECT_EQ(g.min_limit_mw, 100'000u);
  EXPECT_EQ(g.max_limit_mw, 250'000u);
  EXPECT_EQ(g.default_limit_mw, 250'000u);
  EXPECT_EQ(g.initial_limit_mw, 250'000u);
  EXPECT_TRUE(g.energy_counter);
  EXPECT_EQ(g.power.kind(), PowerModel::Kind::kConstant);
  EXPECT_EQ(g.power.DemandMw(0, 250'000), 180'000u);
  EXPECT_THAT(g.uuid, MatchesRegex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"));
  EXPECT_EQ(g.pci_bus_id, "00000000:01:00.0");
  EXPECT_EQ(g.pci_bus_id_legacy, "0000:01:00.0");
  EXPECT_EQ(g.pci_bus, 1u);
  EXPECT_EQ(g.memory_power_mw, std::nullopt);
  EXPECT_EQ(g.counter_reset_ns, std::nullopt);
  EXPECT_EQ(g.temperature_c, 40u);
  EXPECT_FALSE(g.persistence_mode);
  EXPECT_FALSE(g.mig);
  EXPECT_FALSE(g.memory_clocks_mhz.empty());
  EXPECT_FALSE(g.graphics_clocks_mhz.empty());
  EXPECT_TRUE(std::is_sorted(g.graphics_clocks_mhz.rbegin(), g.graphics_clocks_mhz.rend()));
  EXPECT_EQ(g.power_update_period_ns, 100 * kMs);
  EXPECT_EQ(g.power_average_window_ns, 0);            // pre-Ampere: instantaneous (field-notes.md)
  EXPECT_EQ(g.counter_update_period_ns, 100 * kMs);   // field-notes.md: about every 100 ms
  EXPECT_EQ(g.power_settle_ns, 100 * kMs);
  EXPECT_TRUE(g.instant_power_supported && g.average_power_supported && g.memory_power_supported &&
              g.temperature_supported);
}

TEST(EmulatorParseScenarioTest, DefaultsDifferPerGpu) {
  const std::string ampere = R"({"name": "NVIDIA A40", "architecture": "Ampere", "min_power_limit_w": 100,
      "max_power_limit_w": 400, "default_power_limit_w": 400, "energy_counter": true, "power_w": 300})";
  const std::string ga100 = R"({"name": "NVIDIA A100-SXM4-40GB", "architecture": "ampere", "min_power_limit_w": 100,
      "max_power_limit_w": 400, "default_power_limit_w": 400, "energy_counter": true, "power_w": 300})";
  const Scenario s = ParseOk(WithGpus(Gpu() + "," + ampere + "," + ga100));
  ASSERT_EQ(s.gpus.size(), 3u);
  EXPECT_EQ(s.gpus[1].architecture, static_cast<unsigned int>(NVML_DEVICE_ARCH_AMPERE));
  EXPECT_EQ(s.gpus[1].power_average_window_ns, 1000 * kMs);  // Ampere except GA100: 1 s average
  EXPECT_EQ(s.gpus[2].power_average_window_ns, 0);           // GA100: instantaneous
  EXPECT_EQ(s.gpus[1].pci_bus_id, "00000000:02:00.0");
  EXPECT_NE(s.gpus[0].uuid, s.gpus[1].uuid);
  // Deterministic: the same scenario gives the same UUIDs.
  EXPECT_EQ(ParseOk(WithGpus(Gpu() + "," + ampere)).gpus[1].uuid, s.gpus[1].uuid);
}

TEST(EmulatorParseScenarioTest, FullExampleWithCommentsParses) {
  const std::string text = R"({
    // Comments are allowed.
    "driver_version": "550.54.15", "nvml_version": "12.550.54.15",
    "state_file": "/tmp/my.state", "clock": "manual", "time_scale": 2.5,
    "power_update_period_ms": 50, "power_average_window_ms": 500,
    "gpus": [
      { "name": "Tesla V100-SXM2-32GB", "architecture": "volta",
        "min_power_limit_w": 100, "max_power_limit_w": 250, "default_power_limit_w": 250,
        "energy_counter": true,
        "power_limit_w": 200, "uuid": "GPU-abc", "pci_bus_id": "0000:1a:00.1",
        "workload": { "power_limits_w": [100,150,200,250], "power_w": [95,140,180,190],
                      "iteration_time_s": [0.5,0.4,0.35,0.33] },
        "memory_power_w": 30, "temperature_c": 45, "persistence_mode": true, "mig": true,
        "supported_memory_clocks_mhz": [877], "supported_graphics_clocks_mhz": [135, 1530, 1380, 1200],
        "power_update_period_ms": 20, "power_average_window_ms": 0, "counter_reset_at_s": 1.0 },
      { "name": "H100", "architecture": "HOPPER", "min_power_limit_w": 200, "max_power_limit_w": 700,
        "default_power_limit_w": 700, "energy_counter": false,
        "power_schedule": [ {"at_s": 0, "power_w": 100}, {"at_s": 1.5, "power_w": 200} ] }
    ],
    "faults": [
      { "function": "nvmlDeviceSetPowerManagementLimit", "gpu": 0, "return": "NO_PERMISSION",
        "after_calls": 3, "probability": 0.3, "seed": 7, "max_failures": 2 },
      { "function": "*", "return": 15 }
    ]
  })";
  const Scenario s = ParseOk(text);
  EXPECT_EQ(s.driver_version, "550.54.15");
  EXPECT_EQ(s.nvml_version, "12.550.54.15");
  EXPECT_EQ(s.state_file, "/tmp/my.state");
  EXPECT_EQ(s.clock, ClockMode::kManual);
  EXPECT_EQ(s.time_scale, 2.5);
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuSpec& a = s.gpus[0];
  EXPECT_EQ(a.initial_limit_mw, 200'000u);
  EXPECT_EQ(a.uuid, "GPU-abc");
  EXPECT_EQ(a.pci_bus_id, "00000000:1A:00.1");
  EXPECT_EQ(a.pci_bus_id_legacy, "0000:1A:00.1");
  EXPECT_EQ(a.pci_bus, 0x1Au);
  EXPECT_EQ(a.power.kind(), PowerModel::Kind::kWorkload);
  EXPECT_EQ(a.power.DemandMw(0, 175'000), 160'000u);
  EXPECT_EQ(a.memory_power_mw, 30'000u);
  EXPECT_EQ(a.temperature_c, 45u);
  EXPECT_TRUE(a.persistence_mode);
  EXPECT_TRUE(a.mig);
  EXPECT_EQ(a.memory_clocks_mhz, (std::vector<unsigned int>{877}));
  EXPECT_EQ(a.graphics_clocks_mhz, (std::vector<unsigned int>{1530, 1380, 1200, 135}));
  EXPECT_EQ(a.power_update_period_ns, 20 * kMs);
  EXPECT_EQ(a.power_average_window_ns, 0);
  EXPECT_EQ(a.counter_reset_ns, 1000 * kMs);
  const GpuSpec& b = s.gpus[1];
  EXPECT_EQ(b.architecture, static_cast<unsigned int>(NVML_DEVICE_ARCH_HOPPER));
  EXPECT_FALSE(b.energy_counter);
  EXPECT_EQ(b.power.kind(), PowerModel::Kind::kSchedule);
  EXPECT_EQ(b.power.DemandMw(1'500 * kMs, 700'000), 200'000u);
  EXPECT_EQ(b.power_update_period_ns, 50 * kMs);    // top-level default
  EXPECT_EQ(b.power_average_window_ns, 500 * kMs);  // top-level default beats the per-arch one
  ASSERT_EQ(s.faults.size(), 2u);
  EXPECT_EQ(s.faults[0].function, ApiFunction::nvmlDeviceSetPowerManagementLimit);
  EXPECT_EQ(s.faults[0].gpu, 0);
  EXPECT_EQ(s.faults[0].return_code, NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(s.faults[0].after_calls, 3u);
  EXPECT_EQ(s.faults[0].probability, 0.3);
  EXPECT_EQ(s.faults[0].seed, 7u);
  EXPECT_EQ(s.faults[0].max_failures, 2u);
  EXPECT_EQ(s.faults[1].max_failures, std::nullopt);
  EXPECT_EQ(s.faults[1].function, std::nullopt);
  EXPECT_EQ(s.faults[1].gpu, std::nullopt);
  EXPECT_EQ(s.faults[1].return_code, NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(s.faults[1].probability, 1.0);
  EXPECT_NE(s.content_hash, ParseOk(text + " ").content_hash);
}

TEST(EmulatorParseScenarioTest, ZeroGpusIsValid) { EXPECT_TRUE(ParseOk(R"({"gpus": []})").gpus.empty()); }

TEST(EmulatorParseScenarioErrorTest, SyntaxErrorNamesLineAndColumn) {
  EXPECT_THAT(ParseError("{\n  \"gpus\": [\n    }\n"), StartsWith("line 3, column 5: JSON syntax error: "));
  EXPECT_THAT(ParseError(""), StartsWith("line 1, column 1: JSON syntax error: "));
}

TEST(EmulatorParseScenarioErrorTest, WrongTypeNamesPathAndValue) {
  const std::string bad = R"({"name": "x", "architecture": "volta", "min_power_limit_w": 100,
      "max_power_limit_w": "abc", "default_power_limit_w": 250, "energy_counter": true, "power_w": 1})";
  EXPECT_EQ(ParseError(WithGpus(Gpu() + "," + bad)), R"(gpus[1].max_power_limit_w: expected a number, got "abc")");
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "mig": 1)"))), "gpus[0].mig: expected true or false, got 1");
  EXPECT_EQ(ParseError(R"({"gpus": {}})"), "gpus: expected an array, got {}");
  EXPECT_EQ(ParseError("[1, 2]"), "the top level must be a JSON object, got [1,2]");
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "temperature_c": 40.5)"))),
            "gpus[0].temperature_c: expected an integer, got 40.5");
}

TEST(EmulatorParseScenarioErrorTest, MissingRequiredKey) {
  EXPECT_EQ(ParseError(R"({"gpus": [{"architecture": "volta"}]})"), R"(gpus[0]: missing required key "name")");
  EXPECT_EQ(ParseError("{}"), R"(missing required key "gpus")");
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("mig": false)"))),
            R"(gpus[0]: needs one of "power_w", "workload" or "power_schedule")");
}

TEST(EmulatorParseScenarioErrorTest, UnknownKeysAreErrors) {
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "power_watts": 3)"))), R"(gpus[0]: unknown key "power_watts")");
  EXPECT_EQ(ParseError(WithGpus(Gpu(), R"("clocks": "wall", )")), R"(unknown key "clocks")");
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("workload": {"power_limits_w": [1], "power_w": [1], "x": 1})"))),
            R"(gpus[0].workload: unknown key "x")");
  EXPECT_EQ(ParseError(WithGpus(Gpu(), R"("faults": [{"function": "*", "return": 1, "gpus": 0}], )")),
            R"(faults[0]: unknown key "gpus")");
}

TEST(EmulatorParseScenarioErrorTest, DuplicateKeysAreErrors) {
  EXPECT_EQ(ParseError(WithGpus(Gpu() + "," + Gpu(R"(, "name": "again")"))), R"(gpus[1]: duplicate key "name")");
  EXPECT_EQ(ParseError(R"({"gpus": [], "gpus": []})"), R"(duplicate key "gpus")");
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("power_schedule": [{"at_s": 0, "at_s": 1}])"))),
            R"(gpus[0].power_schedule[0]: duplicate key "at_s")");
  // The same key in different objects is fine.
  ParseOk(WithGpus(Gpu() + "," + Gpu(R"(, "uuid": "GPU-2")")));
}

TEST(EmulatorParseScenarioErrorTest, BadArchitecture) {
  const std::string gpu = R"({"name": "x", "architecture": "voltaa", "min_power_limit_w": 1,
      "max_power_limit_w": 2, "default_power_limit_w": 2, "energy_counter": true, "power_w": 1})";
  EXPECT_EQ(ParseError(WithGpus(gpu)),
            R"(gpus[0].architecture: unknown architecture "voltaa"; expected one of kepler, maxwell, pascal, )"
            "volta, turing, ampere, ada, hopper, blackwell");
}

TEST(EmulatorParseScenarioErrorTest, PowerLimitRanges) {
  const std::string prefix = R"({"name": "x", "architecture": "volta", "energy_counter": true, "power_w": 1, )";
  EXPECT_EQ(ParseError(WithGpus(prefix + R"("min_power_limit_w": 300, "max_power_limit_w": 250,
                                            "default_power_limit_w": 250})")),
            "gpus[0].min_power_limit_w: 300 W is above max_power_limit_w (250 W)");
  EXPECT_EQ(ParseError(WithGpus(prefix + R"("min_power_limit_w": 100, "max_power_limit_w": 250,
                                            "default_power_limit_w": 260})")),
            "gpus[0].default_power_limit_w: 260 W is outside [min_power_limit_w, max_power_limit_w] = "
            "[100 W, 250 W]");
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "power_limit_w": 99.5)"))),
            "gpus[0].power_limit_w: 99.5 W is outside [min_power_limit_w, max_power_limit_w] = [100 W, 250 W]");
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("power_w": -1)"))),
            "gpus[0].power_w: must be between 0 and 100000 W, got -1");
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("power_w": 1, "workload": {})"))),
            R"(gpus[0]: give only one of "power_w", "workload" and "power_schedule" (found "power_w" and "workload"))");
}

TEST(EmulatorParseScenarioErrorTest, WorkloadAndScheduleShapes) {
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("workload": {"power_limits_w": [100, 200], "power_w": [1]})"))),
            "gpus[0].workload.power_w: has 1 entries but power_limits_w has 2");
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("workload": {"power_limits_w": [200, 100], "power_w": [1, 2]})"))),
            "gpus[0].workload.power_limits_w[1]: limits must be strictly increasing (100 W follows 200 W)");
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("workload": {"power_limits_w": [100], "power_w": [1],
                                                        "iteration_time_s": [0]})"))),
            "gpus[0].workload.iteration_time_s[0]: must be greater than 0 s, got 0");
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("power_schedule": [{"at_s": 1, "power_w": 1}])"))),
            "gpus[0].power_schedule[0].at_s: the first step must be at 0 s, got 1");
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("power_schedule": [{"at_s": 0, "power_w": 1},
                                                              {"at_s": 0, "power_w": 2}])"))),
            "gpus[0].power_schedule[1].at_s: steps must be in strictly increasing time order");
  EXPECT_EQ(ParseError(WithGpus(Gpu("", R"("power_schedule": [])"))), "gpus[0].power_schedule: must not be empty");
}

TEST(EmulatorParseScenarioErrorTest, OtherGpuFields) {
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "pci_bus_id": "0:1:2")"))),
            R"(gpus[0].pci_bus_id: expected a PCI bus id like "00000000:1A:00.0", got "0:1:2")");
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "supported_memory_clocks_mhz": [877, 877])"))),
            "gpus[0].supported_memory_clocks_mhz: lists 877 MHz twice");
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "uuid": "GPU-1")") + "," + Gpu(R"(, "uuid": "GPU-1")"))),
            R"(gpus[1].uuid: "GPU-1" is already used by gpus[0])");
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "power_update_period_ms": 0)"))),
            "gpus[0].power_update_period_ms: must be greater than 0 ms");
  const std::string unnamed = R"({"name": "", "architecture": "volta", "min_power_limit_w": 1,
      "max_power_limit_w": 2, "default_power_limit_w": 2, "energy_counter": true, "power_w": 1})";
  EXPECT_EQ(ParseError(WithGpus(unnamed)), "gpus[0].name: must not be empty");
  EXPECT_EQ(ParseError(WithGpus(Gpu(), R"("clock": "sundial", )")),
            R"(clock: expected "wall" or "manual", got "sundial")");
  EXPECT_EQ(ParseError(WithGpus(Gpu(), R"("time_scale": 0, )")), "time_scale: must be greater than 0, got 0");
}

TEST(EmulatorParseScenarioErrorTest, FaultRules) {
  auto fault_error = [](const std::string& fault) {
    return ParseError(WithGpus(Gpu(), R"("faults": [)" + fault + "], "));
  };
  EXPECT_EQ(fault_error(R"({"function": "nvmlDeviceSetPowerLimit", "return": "UNKNOWN"})"),
            R"(faults[0].function: unknown function "nvmlDeviceSetPowerLimit"; name an NVML function from )"
            R"(nvml_api.def, or "*")");
  EXPECT_EQ(fault_error(R"({"function": "nvmlInit_v2", "return": "UNKNOWN"})"),
            "faults[0].function: nvmlInit_v2 cannot be faulted");
  EXPECT_EQ(fault_error(R"({"function": "*", "return": "NO_PERMISION"})"),
            R"(faults[0].return: unknown NVML return code "NO_PERMISION")");
  EXPECT_EQ(fault_error(R"({"function": "*", "return": "SUCCESS"})"),
            R"(faults[0].return: SUCCESS is not a fault; name an error code such as "UNKNOWN")");
  EXPECT_EQ(fault_error(R"({"function": "*", "return": 1, "gpu": 1})"), "faults[0].gpu: no GPU 1 (the scenario has 1)");
  EXPECT_EQ(fault_error(R"({"function": "*", "return": 1, "probability": 1.5})"),
            "faults[0].probability: must be between 0 and 1, got 1.5");
  EXPECT_EQ(fault_error(R"({"return": 1})"), R"(faults[0]: missing required key "function")");
}

TEST(EmulatorParseScenarioTest, CounterPeriodSettlingAndUnsupportedQueries) {
  const Scenario s = ParseOk(WithGpus(Gpu(R"(, "counter_update_period_ms": 20, "power_settle_ms": 250,
                                             "unsupported": ["instant_power", "temperature"])") +
                                          "," + Gpu(),
                                      R"("counter_update_period_ms": 0, "power_settle_ms": 0, )"));
  EXPECT_EQ(s.gpus[0].counter_update_period_ns, 20 * kMs);
  EXPECT_EQ(s.gpus[0].power_settle_ns, 250 * kMs);
  EXPECT_FALSE(s.gpus[0].instant_power_supported);
  EXPECT_TRUE(s.gpus[0].average_power_supported);
  EXPECT_TRUE(s.gpus[0].memory_power_supported);
  EXPECT_FALSE(s.gpus[0].temperature_supported);
  EXPECT_EQ(s.gpus[1].counter_update_period_ns, 0);  // top-level defaults
  EXPECT_EQ(s.gpus[1].power_settle_ns, 0);
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "unsupported": ["energy"])"))),
            R"(gpus[0].unsupported[0]: unknown query "energy"; expected one of instant_power, average_power, )"
            R"(memory_power, temperature, gpu_scope_power, processes)");
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "power_settle_ms": -1)"))),
            "gpus[0].power_settle_ms: must be between 0 and 60000 ms, got -1");
}

TEST(EmulatorParseScenarioTest, SuperchipModule) {
  const Scenario s = ParseOk(WithGpus(Gpu(R"(, "module": {"cpu_power_w": 90.5, "cpu_memory_power_w": 15},
                                             "unsupported": ["gpu_scope_power"])") +
                                      "," + Gpu(R"(, "module": {"cpu_power_w": 60})") + "," + Gpu()));
  ASSERT_TRUE(s.gpus[0].module);
  EXPECT_EQ(s.gpus[0].module->cpu_power_mw, 90'500u);
  EXPECT_EQ(s.gpus[0].module->cpu_memory_power_mw, 15'000u);
  EXPECT_FALSE(s.gpus[0].gpu_scope_power_supported);
  EXPECT_TRUE(ModuleCountsEnergy(s.gpus[0]));
  ASSERT_TRUE(s.gpus[1].module);
  EXPECT_EQ(s.gpus[1].module->extra_mw(), 60'000u);
  EXPECT_TRUE(s.gpus[1].gpu_scope_power_supported);
  EXPECT_FALSE(ModuleCountsEnergy(s.gpus[1]));
  EXPECT_FALSE(s.gpus[2].module);
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "module": {"cpu_memory_power_w": 15})"))),
            R"(gpus[0].module: missing required key "cpu_power_w")");
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "module": {"cpu_power_w": 1, "gpu_power_w": 2})"))),
            R"(gpus[0].module: unknown key "gpu_power_w")");
  EXPECT_EQ(ParseError(WithGpus(Gpu(R"(, "unsupported": ["gpu_scope_power"])"))),
            R"(gpus[0].unsupported: "gpu_scope_power" needs a "module" (a driver without the GPU scope reports )"
            R"(the module's power))");
}

TEST(EmulatorParseScenarioTest, LatencyAndHangFaults) {
  const Scenario s = ParseOk(WithGpus(Gpu(), R"("faults": [
      {"function": "nvmlDeviceGetPowerUsage", "latency_ms": 25},
      {"function": "*", "gpu": 0, "hang": true, "after_calls": 2},
      {"function": "*", "hang": true, "return": "TIMEOUT"}], )"));
  ASSERT_EQ(s.faults.size(), 3u);
  EXPECT_EQ(s.faults[0].latency_ns, 25 * kMs);
  EXPECT_EQ(s.faults[0].return_code, NVML_SUCCESS);  // slow, then works
  EXPECT_FALSE(s.faults[0].hang);
  EXPECT_TRUE(s.faults[1].hang);
  EXPECT_EQ(s.faults[1].after_calls, 2u);
  EXPECT_EQ(s.faults[1].return_code, NVML_SUCCESS);
  EXPECT_EQ(s.faults[2].return_code, NVML_ERROR_TIMEOUT);
  auto fault_error = [](const std::string& fault) {
    return ParseError(WithGpus(Gpu(), R"("faults": [)" + fault + "], "));
  };
  EXPECT_EQ(fault_error(R"({"function": "*", "hang": false})"), R"(faults[0]: missing required key "return")");
  EXPECT_EQ(fault_error(R"({"function": "*", "latency_ms": 0})"), R"(faults[0]: missing required key "return")");
  EXPECT_EQ(fault_error(R"({"function": "*", "latency_ms": -5, "return": 1})"),
            "faults[0].latency_ms: must be between 0 and 600000 ms, got -5");
  EXPECT_EQ(fault_error(R"({"function": "*", "hang": 1})"), "faults[0].hang: expected true or false, got 1");
}

TEST(EmulatorParseScenarioTest, ReturnCodesAcceptPrefixAndCase) {
  const Scenario s = ParseOk(WithGpus(Gpu(), R"("faults": [{"function": "*", "return": "nvml_error_gpu_is_lost"}], )"));
  EXPECT_EQ(s.faults[0].return_code, NVML_ERROR_GPU_IS_LOST);
}

// ---- AMD GPUs (vendor "amd") -----------------------------------------------------------------

// A valid AMD GPU object with `extra` spliced in.
std::string AmdGpu(const std::string& extra = "") {
  return R"({"name": "AMD Instinct MI300X", "min_power_limit_w": 200, "max_power_limit_w": 750,
             "default_power_limit_w": 750, "power_w": 600)" +
         extra + "}";
}

std::string WithAmdGpus(const std::string& gpus, const std::string& top = "") {
  return WithGpus(gpus, R"("vendor": "amd", )" + top);
}

TEST(EmulatorParseScenarioAmdTest, VendorAndAmdDefaults) {
  EXPECT_EQ(ParseOk(WithGpus(Gpu())).vendor, Vendor::kNvidia);
  EXPECT_EQ(ParseOk(WithGpus(Gpu(), R"("vendor": "NVIDIA", )")).vendor, Vendor::kNvidia);
  const Scenario s = ParseOk(WithAmdGpus(AmdGpu() + "," + AmdGpu()));
  EXPECT_EQ(s.vendor, Vendor::kAmd);
  EXPECT_EQ(s.amdsmi_version.year, 24u);
  EXPECT_EQ(s.amdsmi_version.major, 7u);
  const GpuSpec& g = s.gpus[1];
  EXPECT_EQ(g.kfd_node_id, 2u);  // index + 1
  EXPECT_EQ(g.energy_counter_resolution_uj, 15.259f);
  EXPECT_TRUE(g.reports_power);
  EXPECT_TRUE(g.energy_counter);  // optional for AMD GPUs
  EXPECT_EQ(g.power_average_window_ns, 1000 * kMs);
  EXPECT_EQ(g.counter_update_period_ns, 100 * kMs);
  EXPECT_THAT(g.uuid, MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"));
  EXPECT_EQ(ParseError(WithGpus(Gpu(), R"("vendor": "intel", )")),
            R"(vendor: expected "nvidia" or "amd", got "intel")");
}

TEST(EmulatorParseScenarioAmdTest, AmdKeys) {
  const Scenario s = ParseOk(WithAmdGpus(
      AmdGpu(R"(, "kfd_node_id": 7, "energy_counter_resolution_uj": 1.5, "reports_power": false,
             "energy_counter": false, "pci_bus_id": "0000:C1:1F.3", "unsupported": ["instant_power"])"),
      R"("amdsmi_version": "24.6.1.2", )"));
  const GpuSpec& g = s.gpus[0];
  EXPECT_EQ(g.kfd_node_id, 7u);
  EXPECT_EQ(g.energy_counter_resolution_uj, 1.5f);
  EXPECT_FALSE(g.reports_power);
  EXPECT_FALSE(g.energy_counter);
  EXPECT_FALSE(g.instant_power_supported);
  EXPECT_EQ(g.pci_function, 3u);
  EXPECT_EQ(s.amdsmi_version.major, 6u);
  EXPECT_EQ(s.amdsmi_version.minor, 1u);
  EXPECT_EQ(s.amdsmi_version.release, 2u);
  EXPECT_EQ(ParseOk(WithAmdGpus(AmdGpu(), R"("amdsmi_version": "24.6.0", )")).amdsmi_version.release, 0u);
}

TEST(EmulatorParseScenarioAmdTest, AmdKeyErrors) {
  auto gpu_error = [](const std::string& extra) { return ParseError(WithAmdGpus(AmdGpu(extra))); };
  EXPECT_EQ(gpu_error(R"(, "kfd_node": 1)"), R"(gpus[0]: unknown key "kfd_node")");
  EXPECT_EQ(gpu_error(R"(, "kfd_node_id": -1)"), "gpus[0].kfd_node_id: must be between 0 and 4294967294, got -1");
  EXPECT_EQ(gpu_error(R"(, "kfd_node_id": 4294967295)"),
            "gpus[0].kfd_node_id: must be between 0 and 4294967294, got 4294967295");
  EXPECT_EQ(gpu_error(R"(, "energy_counter_resolution_uj": 0)"),
            "gpus[0].energy_counter_resolution_uj: must be greater than 0 µJ, got 0");
  EXPECT_THAT(gpu_error(R"(, "energy_counter_resolution_uj": "15")"),
              StartsWith("gpus[0].energy_counter_resolution_uj: expected a number"));
  EXPECT_EQ(gpu_error(R"(, "reports_power": 0)"), "gpus[0].reports_power: expected true or false, got 0");
  EXPECT_EQ(gpu_error(R"(, "unsupported": ["memory_power"])"),
            R"(gpus[0].unsupported[0]: "memory_power" is an NVML query; AMD GPUs know only instant_power, )"
            R"(average_power and temperature)");
  EXPECT_EQ(gpu_error(R"(, "pci_bus_id": "0000:C1:20.0")"),
            "gpus[0].pci_bus_id: device 20 is above 1F, the largest PCI device number");
  std::string clocks = "[";
  for (int mhz = 100; mhz <= 3400; mhz += 100) clocks += std::to_string(mhz) + (mhz < 3400 ? "," : "]");
  EXPECT_EQ(gpu_error(R"(, "supported_graphics_clocks_mhz": )" + clocks),
            "gpus[0].supported_graphics_clocks_mhz: has 34 clocks; AMD SMI reports at most 33");
  EXPECT_EQ(ParseError(WithAmdGpus(AmdGpu() + "," + AmdGpu(R"(, "kfd_node_id": 1)"))),
            "gpus[1].kfd_node_id: 1 is already used by gpus[0] (by default GPU i is node i + 1)");
  for (const std::string version : {"24.6", "24.6.0.1.2", "a.b.c", "24..0", "24.6.0."}) {
    EXPECT_THAT(ParseError(WithAmdGpus(AmdGpu(), R"("amdsmi_version": ")" + version + R"(", )")),
                StartsWith(R"(amdsmi_version: expected a version like "24.7.0")"))
        << version;
  }
}

TEST(EmulatorParseScenarioAmdTest, EachVendorsKeysAreErrorsForTheOther) {
  for (const std::string key : {R"("kfd_node_id": 1)", R"("energy_counter_resolution_uj": 1)",
                                R"("reports_power": true)"}) {
    EXPECT_THAT(ParseError(WithGpus(Gpu(", " + key))),
                MatchesRegex(R"(gpus\[0\]\.[a-z_]+: is only for AMD GPUs, and this scenario's vendor is "nvidia" )"
                             R"(\(the default; set "vendor": "amd" for AMD GPUs\))"))
        << key;
  }
  EXPECT_EQ(ParseError(WithGpus(Gpu(), R"("amdsmi_version": "24.7.0", )")),
            R"(amdsmi_version: is only for AMD GPUs, and this scenario's vendor is "nvidia" (the default; set )"
            R"("vendor": "amd" for AMD GPUs))");
  for (const std::string key : {R"("architecture": "hopper")", R"("mig": false)", R"("persistence_mode": true)",
                                R"("memory_power_w": 10)", R"("module": {"cpu_power_w": 1})"}) {
    EXPECT_THAT(ParseError(WithAmdGpus(AmdGpu(", " + key))),
                MatchesRegex(R"(gpus\[0\]\.[a-z_]+: is only for NVIDIA GPUs, and this scenario's vendor is "amd")"))
        << key;
  }
  EXPECT_EQ(ParseError(WithAmdGpus(AmdGpu(), R"("nvml_version": "12", )")),
            R"(nvml_version: is only for NVIDIA GPUs, and this scenario's vendor is "amd")");
  EXPECT_EQ(ParseError(WithAmdGpus(AmdGpu(), R"("driver_version": "6.8", )")),
            R"(driver_version: is only for NVIDIA GPUs, and this scenario's vendor is "amd")");
}

TEST(EmulatorParseScenarioAmdTest, FaultRulesNameAmdSmiFunctionsAndCodes) {
  const Scenario s = ParseOk(WithAmdGpus(AmdGpu(), R"("faults": [
      {"function": "amdsmi_get_power_info", "gpu": 0, "return": "AMDSMI_STATUS_NOT_FOUND"},
      {"function": "*", "return": "no_perm"},
      {"function": "amdsmi_get_energy_count", "return": 4294967295},
      {"function": "amdsmi_get_lib_version", "latency_ms": 5}], )"));
  ASSERT_EQ(s.faults.size(), 4u);
  EXPECT_EQ(s.faults[0].function, ApiFunction::amdsmi_get_power_info);
  EXPECT_EQ(s.faults[0].return_code, static_cast<int>(AMDSMI_STATUS_NOT_FOUND));
  EXPECT_EQ(s.faults[1].return_code, static_cast<int>(AMDSMI_STATUS_NO_PERM));
  EXPECT_EQ(static_cast<amdsmi_status_t>(s.faults[2].return_code), AMDSMI_STATUS_UNKNOWN_ERROR);
  EXPECT_EQ(s.faults[3].return_code, 0);

  auto nvidia_fault = [](const std::string& fault) {
    return ParseError(WithGpus(Gpu(), R"("faults": [)" + fault + "], "));
  };
  auto amd_fault = [](const std::string& fault) {
    return ParseError(WithAmdGpus(AmdGpu(), R"("faults": [)" + fault + "], "));
  };
  EXPECT_EQ(amd_fault(R"({"function": "amdsmi_get_power_info", "return": "NVML_ERROR_GPU_IS_LOST"})"),
            R"(faults[0].return: "NVML_ERROR_GPU_IS_LOST" is an NVML return code, but amdsmi_get_power_info is an )"
            R"(AMD SMI function; name an AMD SMI status)");
  EXPECT_EQ(amd_fault(R"({"function": "amdsmi_get_power_info", "return": "GPU_IS_LOST"})"),
            R"(faults[0].return: "GPU_IS_LOST" is an NVML return code, but amdsmi_get_power_info is an AMD SMI )"
            R"(function; name an AMD SMI status)");
  EXPECT_EQ(amd_fault(R"({"function": "*", "return": "NVML_ERROR_UNKNOWN"})"),
            R"(faults[0].return: "NVML_ERROR_UNKNOWN" is an NVML return code, but this "*" rule matches the AMD )"
            R"(SMI functions of this scenario's GPUs; name an AMD SMI status)");
  EXPECT_EQ(amd_fault(R"({"function": "amdsmi_get_power_info", "return": "NOPE"})"),
            R"(faults[0].return: unknown AMD SMI status "NOPE")");
  EXPECT_EQ(amd_fault(R"({"function": "amdsmi_get_power_info", "return": "SUCCESS"})"),
            R"(faults[0].return: SUCCESS is not a fault; name an error code such as "UNKNOWN")");
  EXPECT_EQ(amd_fault(R"({"function": "amdsmi_init", "return": "BUSY"})"),
            "faults[0].function: amdsmi_init cannot be faulted");
  EXPECT_EQ(amd_fault(R"({"function": "nvmlDeviceGetPowerUsage", "return": "UNKNOWN"})"),
            R"(faults[0].function: nvmlDeviceGetPowerUsage is an NVML function, but this scenario's GPUs )"
            R"((vendor "amd") are served by AMD SMI)");
  EXPECT_EQ(nvidia_fault(R"({"function": "nvmlDeviceGetPowerUsage", "return": "AMDSMI_STATUS_NOT_FOUND"})"),
            R"(faults[0].return: "AMDSMI_STATUS_NOT_FOUND" is an AMD SMI status, but nvmlDeviceGetPowerUsage is an )"
            R"(NVML function; name an NVML return code)");
  EXPECT_EQ(nvidia_fault(R"({"function": "amdsmi_get_power_info", "return": "NOT_FOUND"})"),
            R"(faults[0].function: amdsmi_get_power_info is an AMD SMI function, but this scenario's GPUs )"
            R"((vendor "nvidia") are served by NVML)");
}

class EmulatorLoadScenarioFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "zeus-scenario-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(EmulatorLoadScenarioFileTest, MissingFileNamesThePath) {
  Scenario s;
  std::string error;
  const std::string path = (dir_ / "absent.json").string();
  EXPECT_FALSE(LoadScenarioFile(path, &s, &error));
  EXPECT_EQ(error, "scenario " + path + ": cannot open: No such file or directory");
}

TEST_F(EmulatorLoadScenarioFileTest, ParseErrorsArePrefixedWithThePath) {
  Scenario s;
  std::string error;
  const std::string path = Write("bad.json", WithGpus(Gpu(R"(, "power_watts": 3)")));
  EXPECT_FALSE(LoadScenarioFile(path, &s, &error));
  EXPECT_EQ(error, "scenario " + path + R"(: gpus[0]: unknown key "power_watts")");
}

TEST_F(EmulatorLoadScenarioFileTest, DefaultStateFileIsUnderTmpdirAndStable) {
  const std::string path = Write("ok.json", WithGpus(Gpu()));
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir != nullptr ? old_tmpdir : "";
  ::setenv("TMPDIR", dir_.c_str(), 1);
  Scenario s;
  std::string error;
  const bool ok = LoadScenarioFile(path, &s, &error);
  if (old_tmpdir != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  ASSERT_TRUE(ok) << error;
  const std::string real = std::filesystem::canonical(path).string();
  EXPECT_EQ(s.state_file, DefaultStatePath(real, dir_.string()));
  EXPECT_THAT(s.state_file, MatchesRegex(".*/zeus-nvml-emulator-[0-9a-f]{16}\\.state"));
  EXPECT_THAT(s.state_file, StartsWith(dir_.string() + "/"));
  EXPECT_EQ(DefaultStatePath("/a/b.json", "/tmp/"), DefaultStatePath("/a/b.json", "/tmp"));
  EXPECT_NE(DefaultStatePath("/a/b.json", "/tmp"), DefaultStatePath("/a/c.json", "/tmp"));
  EXPECT_EQ(s.content_hash, Fnv1a64(WithGpus(Gpu())));
}

TEST_F(EmulatorLoadScenarioFileTest, RelativeStateFileIsNextToTheScenario) {
  const std::string path = Write("rel.json", WithGpus(Gpu(), R"("state_file": "emu.state", )"));
  Scenario s;
  std::string error;
  ASSERT_TRUE(LoadScenarioFile(path, &s, &error)) << error;
  EXPECT_EQ(s.state_file, std::filesystem::canonical(dir_).string() + "/emu.state");
}

TEST_F(EmulatorLoadScenarioFileTest, ExplicitStateFileIsNotTheDefaultAndMayBeShared) {
  Scenario s;
  std::string error;
  ASSERT_TRUE(LoadScenarioFile(Write("private.json", WithGpus(Gpu(), R"("state_file": "/x/a.state", )")), &s, &error))
      << error;
  EXPECT_FALSE(s.state_file_is_default);
  EXPECT_FALSE(s.state_file_shared);
  ASSERT_TRUE(LoadScenarioFile(Write("default.json", WithGpus(Gpu())), &s, &error)) << error;
  EXPECT_TRUE(s.state_file_is_default);
  ASSERT_TRUE(LoadScenarioFile(
      Write("shared.json", WithGpus(Gpu(), R"("state_file": "/x/a.state", "state_file_shared": true, )")), &s, &error))
      << error;
  EXPECT_TRUE(s.state_file_shared);
  EXPECT_EQ(ParseError(WithGpus(Gpu(), R"("state_file_shared": true, )")),
            "state_file_shared: needs \"state_file\": the default state file is private to each user");
  EXPECT_THAT(ParseError(WithGpus(Gpu(), R"("state_file": "a", "state_file_shared": 1, )")),
              StartsWith("state_file_shared: expected"));
}

// Sets (or, for nullptr, unsets) TMPDIR and XDG_RUNTIME_DIR, and returns
// DefaultStateDirectory() then.
std::string DefaultStateDirectoryWith(const char* tmpdir, const char* runtime) {
  const auto save = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
  };
  const auto restore = [](const char* name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  };
  const std::optional<std::string> old_tmpdir = save("TMPDIR");
  const std::optional<std::string> old_runtime = save("XDG_RUNTIME_DIR");
  restore("TMPDIR", tmpdir != nullptr ? std::optional<std::string>(tmpdir) : std::nullopt);
  restore("XDG_RUNTIME_DIR", runtime != nullptr ? std::optional<std::string>(runtime) : std::nullopt);
  std::string dir = DefaultStateDirectory();
  restore("TMPDIR", old_tmpdir);
  restore("XDG_RUNTIME_DIR", old_runtime);
  return dir;
}

TEST_F(EmulatorLoadScenarioFileTest, DefaultStateDirectoryPrefersTmpdirThenAPrivateRuntimeDirectory) {
  const std::string runtime = (dir_ / "runtime").string();
  std::filesystem::create_directory(runtime);
  ASSERT_EQ(::chmod(runtime.c_str(), 0700), 0);
  EXPECT_EQ(DefaultStateDirectoryWith("/some/tmp", runtime.c_str()), "/some/tmp");
  EXPECT_EQ(DefaultStateDirectoryWith(nullptr, runtime.c_str()), runtime);
  EXPECT_EQ(DefaultStateDirectoryWith("", runtime.c_str()), runtime);
  EXPECT_EQ(DefaultStateDirectoryWith(nullptr, nullptr), "/tmp");
  EXPECT_EQ(DefaultStateDirectoryWith(nullptr, "/nonexistent-runtime-dir"), "/tmp");
  EXPECT_EQ(DefaultStateDirectoryWith(nullptr, "relative"), "/tmp");
  ASSERT_EQ(::chmod(runtime.c_str(), 0755), 0);  // not private: not used
  EXPECT_EQ(DefaultStateDirectoryWith(nullptr, runtime.c_str()), "/tmp");
}

TEST(EmulatorFnv1aTest, KnownValues) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
}

}  // namespace
}  // namespace zeus::emulator
