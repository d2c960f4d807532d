// Copyright 2026 The Zeus C++ Authors.
//
// The CLI on emulated AMD Instinct machines, as a user runs it: the real
// `zeus` binary, AMD SMI's emulator (libzeus-amdsmi-emulator.so) loaded
// through ZEUS_AMDSMI_LIBRARY, and the presets data/emulator/mi300x.json and
// mi250.json.

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace zeus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::ProcessResult;
using testing::RunProcess;

class AmdCliTest : public ::testing::Test {
 protected:
  // A preset with a private state file (and whatever `changes` set).
  std::string Preset(const std::string& name, const json& changes = json::object()) {
    std::ifstream in(std::string(ZEUS_TEST_SOURCE_DIR) + "/data/emulator/" + name);
    json scenario = json::parse(in);
    scenario["state_file"] = tmp_.File(name + ".state");
    scenario.merge_patch(changes);
    return tmp_.Write(name, scenario.dump(2));
  }

  ProcessResult Zeus(const std::vector<std::string>& args, const std::string& scenario,
                     std::map<std::string, std::optional<std::string>> env = {}) {
    std::vector<std::string> argv = {ZEUS_TEST_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    env.emplace("ZEUS_GPU_VENDOR", "amd");  // even on a machine with an NVIDIA driver
    env.emplace("ZEUS_AMDSMI_LIBRARY", ZEUS_TEST_AMDSMI_EMULATOR_PATH);
    env.emplace("ZEUS_AMDSMI_EMULATOR_CONFIG", scenario);
    env.emplace("ZEUS_EMULATOR_CONFIG", std::nullopt);
    env.emplace("ZEUS_NVML_LIBRARY", std::nullopt);
    env.emplace("ZEUS_POWERCAP_ROOT", tmp_.File("no-powercap"));
    for (const char* name : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
      env.emplace(name, std::nullopt);
    }
    return RunProcess(argv, env);
  }

  testing::TempDir tmp_;
};

TEST_F(AmdCliTest, InfoListsAnMi300xMachine) {
  const std::string scenario = Preset("mi300x.json");
  ProcessResult r = Zeus({"info", "--json"}, scenario);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  EXPECT_EQ(info["driver"]["vendor"], "amd");
  EXPECT_EQ(info["driver"]["version"], "24.7.0");
  EXPECT_EQ(info["driver"]["amdsmi_library"], ZEUS_TEST_AMDSMI_EMULATOR_PATH);
  EXPECT_TRUE(info["driver"]["nvml_library"].is_null());
  ASSERT_EQ(info["gpus"].size(), 8u);
  for (const json& g : info["gpus"]) {
    EXPECT_EQ(g["name"], "AMD Instinct MI300X");
    EXPECT_EQ(g["architecture"], "cdna3");
    EXPECT_DOUBLE_EQ(g["max_power_limit_w"].get<double>(), 750.0);
    EXPECT_TRUE(g["energy_counter"].get<bool>());
    EXPECT_EQ(g["energy_counter_check"]["verdict"], "agrees") << g["energy_counter_check"].dump();
  }

  ProcessResult text = Zeus({"info"}, scenario);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("AMD GPUs: AMD SMI 24.7.0"));
  EXPECT_THAT(text.out, HasSubstr("GPU 7: AMD Instinct MI300X (cdna3)"));
  EXPECT_THAT(text.out, HasSubstr("HIP  index       7"));
  EXPECT_THAT(text.out, HasSubstr("Counter check    agrees"));
}

TEST_F(AmdCliTest, InfoShowsTheDiesOfAnMi250) {
  ProcessResult r = Zeus({"info", "--json", "--no-counter-check"}, Preset("mi250.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  ASSERT_EQ(info["gpus"].size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    const json& g = info["gpus"][i];
    EXPECT_EQ(g["architecture"], "cdna2");
    // Even dies report their board's power; odd dies none.
    EXPECT_EQ(g["energy_counter"].get<bool>(), i % 2 == 0) << i;
    EXPECT_EQ(g["power_w"].is_number(), i % 2 == 0) << i;
  }
  EXPECT_THAT(r.err, HasSubstr("cover both dies of its board"));
}

// The acceptance: `zeus monitor` energy within 0.1% of the emulator's ground
// truth (a constant power over the window the monitor reports, on the
// emulator's clock).
TEST_F(AmdCliTest, MonitorEnergyIsWithinAThousandthOfTheTruth) {
  const std::string scenario = Preset("mi300x.json", {{"gpus", json::array()}});
  json gpu = {{"name", "AMD Instinct MI300X"}, {"min_power_limit_w", 200}, {"max_power_limit_w", 750},
              {"default_power_limit_w", 750},  {"energy_counter", true},   {"power_w", 420},
              {"counter_update_period_ms", 0}, {"unsupported", {"average_power"}}};
  json mi250 = {{"name", "AMD Instinct MI250"}, {"min_power_limit_w", 100}, {"max_power_limit_w", 500},
                {"default_power_limit_w", 500}, {"energy_counter", true},   {"power_w", 310},
                {"counter_update_period_ms", 0}, {"unsupported", {"instant_power"}}, {"kfd_node_id", 9}};
  std::ifstream in(scenario);
  json s = json::parse(in);
  s["gpus"] = json::array({gpu, mi250});
  const std::string path = tmp_.Write("two.json", s.dump());
  ProcessResult r = Zeus({"monitor", "--json", "--", "sleep", "1"}, path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(r.out);
  const double t = report["time_s"].get<double>();
  ASSERT_EQ(report["gpus"].size(), 2u);
  EXPECT_EQ(report["gpus"][0]["source"], "counter");
  EXPECT_NEAR(report["gpus"][0]["energy_j"].get<double>(), 420.0 * t, 420.0 * t * 1e-3);
  EXPECT_NEAR(report["gpus"][1]["energy_j"].get<double>(), 310.0 * t, 310.0 * t * 1e-3);
}

// Issue 37: opening GPUs runs no counter check, so zeus monitor reads a
// wrong-rate counter as it is; zeus info is where the check runs.
TEST_F(AmdCliTest, AWrongRateCounterIsReadAsItIsByMonitorAndCaughtByInfo) {
  json gpu = {{"name", "AMD Instinct MI300X"}, {"min_power_limit_w", 200}, {"max_power_limit_w", 750},
              {"default_power_limit_w", 750},  {"energy_counter", true},   {"power_w", 500},
              {"energy_counter_rate", 2.0},    {"unsupported", {"average_power"}}};
  const std::string path = tmp_.Write(
      "wrong.json", json({{"vendor", "amd"}, {"state_file", tmp_.File("wrong.state")}, {"gpus", {gpu}}}).dump());
  ProcessResult r = Zeus({"monitor", "--json", "--", "sleep", "1"}, path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("the energy counter disagrees")));
  json report = json::parse(r.out);
  EXPECT_EQ(report["gpus"][0]["source"], "counter");
  ProcessResult info = Zeus({"info", "--json"}, path);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(json::parse(info.out)["gpus"][0]["energy_counter_check"]["verdict"], "disagrees") << info.out;
}

TEST_F(AmdCliTest, AnOldRocmIsAClearError) {
  ProcessResult r = Zeus({"info"}, Preset("mi300x.json", {{"amdsmi_version", "24.6.0"}}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("ROCm 6.3 or newer"));
}

}  // namespace
}  // namespace zeus
