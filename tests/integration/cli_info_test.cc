// Copyright 2026 The Zeus C++ Authors.
//
// `zeus info` as a user runs it: the real binary, the NVML emulator loaded
// through ZEUS_NVML_LIBRARY, and fake powercap trees.

#include <algorithm>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/rapl_tree.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace zeus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::ProcessResult;
using testing::RunProcess;

json Gpu(const std::string& name, const std::string& arch, double min_w, double max_w, bool counter) {
  return {{"name", name},           {"architecture", arch}, {"min_power_limit_w", min_w},
          {"max_power_limit_w", max_w}, {"default_power_limit_w", max_w}, {"energy_counter", counter},
          {"power_w", 100.0}};
}

class InfoTest : public ::testing::Test {
 protected:
  std::string WriteScenario(json scenario) {
    scenario["state_file"] = tmp_.File("emulator.state");
    return tmp_.Write("scenario.json", scenario.dump(2));
  }

  ProcessResult Info(const std::vector<std::string>& args, const std::string& scenario,
                     std::map<std::string, std::optional<std::string>> env = {}) {
    std::vector<std::string> argv = {ZEUS_TEST_CLI_PATH, "info"};
    argv.insert(argv.end(), args.begin(), args.end());
    env.emplace("ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH);
    env.emplace("ZEUS_EMULATOR_CONFIG", scenario);
    env.emplace("ZEUS_POWERCAP_ROOT", tmp_.File("powercap"));
    env.emplace("CUDA_VISIBLE_DEVICES", std::nullopt);
    return RunProcess(argv, env);
  }

  testing::TempDir tmp_;
};

// The acceptance scenario: four GPUs, listed as configured.
TEST_F(InfoTest, JsonListsFourGpusAsConfigured) {
  json gpus = json::array({Gpu("Tesla V100-SXM2-32GB", "volta", 100, 300, true),
                           Gpu("Tesla V100-SXM2-32GB", "volta", 100, 300, true),
                           Gpu("NVIDIA A40", "ampere", 100, 300, true),
                           Gpu("Tesla P100-PCIE-16GB", "pascal", 125, 250, false)});
  gpus[1]["power_limit_w"] = 200;
  ProcessResult r = Info({"--json"}, WriteScenario({{"gpus", gpus}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  ASSERT_EQ(info["gpus"].size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const json& g = info["gpus"][i];
    EXPECT_EQ(g["index"], i);
    EXPECT_EQ(g["name"], gpus[i]["name"]);
    EXPECT_EQ(g["architecture"], gpus[i]["architecture"]);
    EXPECT_DOUBLE_EQ(g["min_power_limit_w"].get<double>(), gpus[i]["min_power_limit_w"].get<double>());
    EXPECT_DOUBLE_EQ(g["max_power_limit_w"].get<double>(), gpus[i]["max_power_limit_w"].get<double>());
    EXPECT_EQ(g["energy_counter"], gpus[i]["energy_counter"]);
    EXPECT_THAT(g["uuid"].get<std::string>(), ::testing::StartsWith("GPU-"));
  }
  EXPECT_DOUBLE_EQ(info["gpus"][0]["power_limit_w"].get<double>(), 300.0);
  EXPECT_DOUBLE_EQ(info["gpus"][1]["power_limit_w"].get<double>(), 200.0);
  EXPECT_TRUE(info["driver"]["available"].get<bool>());
}

// Trust, but check: each counter against the GPU's integrated power.
TEST_F(InfoTest, EnergyCounterCheckJudgesEachGpu) {
  json twice = Gpu("NVIDIA A100-SXM4-40GB", "ampere", 100, 400, true);
  twice["energy_counter_rate"] = 2.0;
  json stuck = Gpu("NVIDIA A100-SXM4-40GB", "ampere", 100, 400, true);
  stuck["energy_counter_rate"] = 0.0;
  const std::string scenario =
      WriteScenario({{"time_scale", 1},
                     {"gpus", {Gpu("Tesla V100-SXM2-32GB", "volta", 100, 300, true), twice, stuck,
                               Gpu("Tesla P100-PCIE-16GB", "pascal", 125, 250, false)}}});
  ProcessResult r = Info({"--json"}, scenario);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json info = json::parse(r.out);
  ASSERT_EQ(info["gpus"].size(), 4u);
  const json& ok = info["gpus"][0]["energy_counter_check"];
  EXPECT_EQ(ok["verdict"], "agrees") << ok.dump();
  EXPECT_NEAR(ok["ratio"].get<double>(), 1.0, 0.1) << ok.dump();
  EXPECT_EQ(ok["power_source"], "instant");
  EXPECT_GT(ok["duration_s"].get<double>(), 0.2);
  const json& wrong = info["gpus"][1]["energy_counter_check"];
  EXPECT_EQ(wrong["verdict"], "disagrees") << wrong.dump();
  EXPECT_NEAR(wrong["ratio"].get<double>(), 2.0, 0.2) << wrong.dump();
  EXPECT_NEAR(wrong["counter_energy_j"].get<double>(), 2.0 * wrong["integrated_energy_j"].get<double>(),
              0.2 * wrong["integrated_energy_j"].get<double>());
  EXPECT_EQ(info["gpus"][2]["energy_counter_check"]["verdict"], "disagrees");
  EXPECT_THAT(info["gpus"][2]["energy_counter_check"]["detail"].get<std::string>(), HasSubstr("did not advance"));
  EXPECT_EQ(info["gpus"][3]["energy_counter_check"]["verdict"], "no_counter");
  // The two disagreeing GPUs are problems (also warnings in the text form).
  std::string problems = info["problems"].dump();
  EXPECT_THAT(problems, HasSubstr("GPU 1: the energy counter disagrees with the GPU's power"));
  EXPECT_THAT(problems, HasSubstr("GPU 2: the energy counter disagrees"));
  EXPECT_THAT(problems, Not(HasSubstr("GPU 0's")));

  ProcessResult text = Info({}, scenario);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("    Counter check    agrees: the counter measured "));
  EXPECT_THAT(text.out, HasSubstr("    Counter check    disagrees: "));
  EXPECT_THAT(text.err, HasSubstr("warning: GPU 1: the energy counter disagrees with the GPU's power"));
  EXPECT_THAT(text.err, HasSubstr("Zeus measures this GPU by integrating its power instead"));

  ProcessResult skipped = Info({"--json", "--no-counter-check"}, scenario);
  ASSERT_EQ(skipped.exit_code, 0) << skipped.err;
  EXPECT_TRUE(json::parse(skipped.out)["gpus"][1]["energy_counter_check"].is_null());
}

// A superchip (GH200: GPU 600 W, CPU and its memory 120 W): the GPU-scope
// reading where the driver offers it; the module's, said as such and warned
// about once, where it does not; a plain GPU without power fields is unscoped.
TEST_F(InfoTest, EachGpuSaysWhichPowerScopeItsReadingUses) {
  json gh200 = Gpu("NVIDIA GH200 480GB", "hopper", 100, 900, true);
  gh200["power_w"] = 600.0;
  gh200["module"] = {{"cpu_power_w", 100.0}, {"cpu_memory_power_w", 20.0}};
  json module_only = gh200;
  module_only["unsupported"] = {"gpu_scope_power"};
  json old = Gpu("Tesla P100-PCIE-16GB", "pascal", 125, 250, false);
  old["unsupported"] = {"instant_power", "average_power"};
  const std::string scenario = WriteScenario({{"gpus", {gh200, module_only, old}}});

  ProcessResult r = Info({"--json"}, scenario);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  ASSERT_EQ(info["gpus"].size(), 3u);
  EXPECT_EQ(info["gpus"][0]["power_scope"], "gpu");
  EXPECT_DOUBLE_EQ(info["gpus"][0]["power_w"].get<double>(), 600.0);
  EXPECT_EQ(info["gpus"][1]["power_scope"], "module");
  EXPECT_DOUBLE_EQ(info["gpus"][1]["power_w"].get<double>(), 720.0);
  EXPECT_EQ(info["gpus"][2]["power_scope"], "unscoped");
  EXPECT_DOUBLE_EQ(info["gpus"][2]["power_w"].get<double>(), 100.0);
  // One warning, for the module GPU only, on stderr (the CLI's log sink).
  const std::string warning = "GPU scope not supported";
  ASSERT_NE(r.err.find(warning), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(warning, r.err.find(warning) + 1), std::string::npos) << r.err;
  EXPECT_THAT(r.err, HasSubstr("GPU 1"));

  ProcessResult text = Info({}, scenario);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("Power now        600 W (GPU scope)"));
  EXPECT_THAT(text.out, HasSubstr("Power now        720 W (module scope"));
  EXPECT_THAT(text.out, HasSubstr("Power now        100 W (unscoped"));
}

// The GH200 example scenario loads and reads as its comment says.
TEST_F(InfoTest, Gh200ExampleShowsTheGpusShareOfTheModule) {
  ProcessResult r = Info({"--json"}, std::string(ZEUS_TEST_SOURCE_DIR) + "/examples/gh200.json",
                         {{"TMPDIR", tmp_.path()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  ASSERT_EQ(info["gpus"].size(), 1u);
  EXPECT_EQ(info["gpus"][0]["name"], "NVIDIA GH200 480GB");
  EXPECT_EQ(info["gpus"][0]["power_scope"], "gpu");
  EXPECT_DOUBLE_EQ(info["gpus"][0]["power_w"].get<double>(), 600.0);
  EXPECT_DOUBLE_EQ(info["gpus"][0]["max_power_limit_w"].get<double>(), 900.0);
}

TEST_F(InfoTest, TextShowsEachGpuAndTheCpus) {
  testing::RaplTree tree(tmp_.File("powercap"));
  tree.AddPackage(0, /*dram=*/true);
  tree.AddPackage(1, /*dram=*/false);
  ProcessResult r = Info({}, WriteScenario({{"driver_version", "550.54.15"},
                                            {"gpus", {Gpu("NVIDIA A40", "ampere", 100, 300, true)}}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NVIDIA driver: 550.54.15"));
  EXPECT_THAT(r.out, HasSubstr("GPU 0: NVIDIA A40 (ampere)"));
  EXPECT_THAT(r.out, HasSubstr("Power limit      300 W (default 300 W, min 100 W, max 300 W"));
  EXPECT_THAT(r.out, HasSubstr("package-0: DRAM yes"));
  EXPECT_THAT(r.out, HasSubstr("package-1: DRAM no"));
  EXPECT_THAT(r.out, HasSubstr("What you may change"));
}

TEST_F(InfoTest, CpusInJson) {
  testing::RaplTree tree(tmp_.File("powercap"));
  tree.AddPackage(0, true);
  ProcessResult r = Info({"--json"}, WriteScenario({{"gpus", json::array()}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  ASSERT_EQ(info["cpus"]["packages"].size(), 1u);
  EXPECT_EQ(info["cpus"]["packages"][0]["name"], "package-0");
  EXPECT_EQ(info["cpus"]["packages"][0]["dram"], true);
  EXPECT_EQ(info["cpus"]["packages"][0]["readable"], true);
}

TEST_F(InfoTest, NoDriverStillListsCpusAndExitsZero) {
  testing::RaplTree tree(tmp_.File("powercap"));
  tree.AddPackage(0, false);
  // No ZEUS_NVML_LIBRARY: the system's libnvidia-ml.so.1, absent here.
  std::vector<std::string> argv = {ZEUS_TEST_CLI_PATH, "info", "--json"};
  ProcessResult r = RunProcess(argv, {{"ZEUS_NVML_LIBRARY", std::nullopt},
                                      {"ZEUS_POWERCAP_ROOT", tmp_.File("powercap")},
                                      {"LD_LIBRARY_PATH", std::nullopt}});
  if (r.exit_code == 0 && json::parse(r.out)["driver"]["available"].get<bool>()) {
    GTEST_SKIP() << "this machine has an NVIDIA driver";
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  EXPECT_THAT(info["driver"]["error"].get<std::string>(), HasSubstr("no NVIDIA driver found"));
  EXPECT_EQ(info["cpus"]["packages"].size(), 1u);

  ProcessResult text = RunProcess({ZEUS_TEST_CLI_PATH, "info"}, {{"ZEUS_NVML_LIBRARY", std::nullopt},
                                                                 {"ZEUS_POWERCAP_ROOT", tmp_.File("powercap")}});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_THAT(text.out, HasSubstr("no NVIDIA driver found"));
  EXPECT_THAT(text.out, HasSubstr("package-0"));
}

TEST_F(InfoTest, MissingLibraryIsAOneLineError) {
  ProcessResult r = RunProcess({ZEUS_TEST_CLI_PATH, "info"}, {{"ZEUS_NVML_LIBRARY", tmp_.File("libgone.so")}});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("libgone.so"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, ::testing::StartsWith("error: "));
}

TEST_F(InfoTest, MalformedScenarioIsAOneLineError) {
  const std::string path = tmp_.Write("broken.json", "{ \"gpus\": [ { \"name\": 3 ");
  ProcessResult r = Info({}, path);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("broken.json"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  const std::string typo = WriteScenario({{"gpus", {Gpu("X", "volta", 100, 250, true)}}, {"gpu_count", 2}});
  ProcessResult t = Info({}, typo);
  EXPECT_NE(t.exit_code, 0);
  EXPECT_THAT(t.err, HasSubstr("gpu_count"));
}

TEST_F(InfoTest, BadCudaVisibleDevicesIsAOneLineError) {
  const std::string scenario = WriteScenario({{"gpus", {Gpu("X", "volta", 100, 250, true)}}});
  for (const char* spec : {"3", "GPU-nope", "a,b"}) {
    ProcessResult r = Info({}, scenario, {{"CUDA_VISIBLE_DEVICES", spec}});
    EXPECT_EQ(r.exit_code, 2) << spec;
    EXPECT_THAT(r.err, HasSubstr(std::string("CUDA_VISIBLE_DEVICES=") + spec));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  ProcessResult mig = Info({}, scenario, {{"CUDA_VISIBLE_DEVICES", "MIG-0e0b7f2c-1111-2222-3333-444455556666"}});
  EXPECT_EQ(mig.exit_code, 5);
  EXPECT_THAT(mig.err, HasSubstr("MIG instance"));
}

// The usual way to hide every GPU, as in CUDA: none listed, not an error.
TEST_F(InfoTest, CudaVisibleDevicesMinusOneHidesEveryGpu) {
  const std::string scenario = WriteScenario({{"gpus", {Gpu("A", "volta", 100, 250, true), Gpu("B", "volta", 100,
                                                                                                 250, true)}}});
  ProcessResult r = Info({"--json"}, scenario, {{"CUDA_VISIBLE_DEVICES", "-1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  EXPECT_TRUE(info["driver"]["available"].get<bool>());
  EXPECT_TRUE(info["gpus"].empty());
  ProcessResult text = Info({}, scenario, {{"CUDA_VISIBLE_DEVICES", "-1"}});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("GPUs: 0\n"));
}

// Each unreadable package is listed with its own reason (not a guess about
// permissions), and the readable one is still read.
TEST_F(InfoTest, UnreadableRaplPackagesGiveTheirOwnReasons) {
  testing::RaplTree tree(tmp_.File("powercap"));
  tree.AddPackage(0, false);
  tree.AddPackage(1, false);
  tree.AddPackage(2, false);
  tmp_.Write("powercap/intel-rapl:0/energy_uj", "garbage\n");
  std::filesystem::remove(tree.EnergyPath(2, false));
  const std::string scenario = WriteScenario({{"gpus", json::array()}});
  ProcessResult r = Info({"--json"}, scenario);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  const json& packages = info["cpus"]["packages"];
  ASSERT_EQ(packages.size(), 3u);
  EXPECT_EQ(packages[0]["readable"], false);
  EXPECT_THAT(packages[0]["error"].get<std::string>(),
              HasSubstr("intel-rapl:0/energy_uj: expected an unsigned integer"));
  EXPECT_EQ(packages[1]["readable"], true);
  EXPECT_EQ(packages[2]["readable"], false);
  EXPECT_THAT(packages[2]["error"].get<std::string>(), HasSubstr("intel-rapl:2/energy_uj: no such file"));
  EXPECT_EQ(info["privileges"]["can_read_rapl"], false);

  ProcessResult text = Info({}, scenario);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("Read CPU/DRAM energy: no for 2 of 3 packages"));
  EXPECT_THAT(text.out, Not(HasSubstr("Linux 5.10")));
  EXPECT_THAT(text.out, Not(HasSubstr("zeusd")));
}

TEST_F(InfoTest, CudaVisibleDevicesSelectsAndOrders) {
  json gpus = json::array({Gpu("A", "volta", 100, 250, true), Gpu("B", "ampere", 100, 300, true),
                           Gpu("C", "hopper", 200, 700, true)});
  ProcessResult r = Info({"--json"}, WriteScenario({{"gpus", gpus}}), {{"CUDA_VISIBLE_DEVICES", "2,0"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  ASSERT_EQ(info["gpus"].size(), 2u);
  EXPECT_EQ(info["gpus"][0]["name"], "C");
  EXPECT_EQ(info["gpus"][0]["nvml_index"], 2);
  EXPECT_EQ(info["gpus"][1]["name"], "A");
}

// Faults: a GPU whose readings fail is shown with what could be read, the
// others in full, and the problem is reported.
TEST_F(InfoTest, FaultOnOneGpuKeepsTheOthers) {
  json scenario = {{"gpus", {Gpu("A", "volta", 100, 250, true), Gpu("B", "volta", 100, 250, true)}},
                   {"faults", {{{"function", "nvmlDeviceGetPowerManagementLimit"}, {"gpu", 1},
                                {"return", "GPU_IS_LOST"}}}}};
  ProcessResult r = Info({"--json"}, WriteScenario(scenario));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  EXPECT_DOUBLE_EQ(info["gpus"][0]["power_limit_w"].get<double>(), 250.0);
  EXPECT_TRUE(info["gpus"][1]["power_limit_w"].is_null());
  EXPECT_DOUBLE_EQ(info["gpus"][1]["max_power_limit_w"].get<double>(), 250.0);
  ASSERT_EQ(info["problems"].size(), 1u);
  EXPECT_THAT(info["problems"][0].get<std::string>(), HasSubstr("GPU 1"));
  EXPECT_THAT(info["problems"][0].get<std::string>(), HasSubstr("GPU_IS_LOST"));
}

TEST_F(InfoTest, InitFaultIsAnError) {
  json scenario = {{"gpus", {Gpu("A", "volta", 100, 250, true)}},
                   {"faults", {{{"function", "nvmlDeviceGetCount_v2"}, {"return", "UNKNOWN"}}}}};
  ProcessResult r = Info({}, WriteScenario(scenario));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("counting GPUs"));
}

TEST_F(InfoTest, ShippedExampleWorks) {
  ProcessResult r = Info({"--json"}, std::string(ZEUS_TEST_SOURCE_DIR) + "/examples/four-gpus.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["gpus"].size(), 4u);
}

TEST_F(InfoTest, HelpDescribesTheCommand) {
  ProcessResult r = RunProcess({ZEUS_TEST_CLI_PATH, "info", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--json"));
  ProcessResult top = RunProcess({ZEUS_TEST_CLI_PATH, "--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_THAT(top.out, HasSubstr("info"));
  EXPECT_THAT(top.out, HasSubstr("ZEUS_NVML_LIBRARY"));
  ProcessResult bad = RunProcess({ZEUS_TEST_CLI_PATH, "info", "--nope"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.out + bad.err, Not(HasSubstr("terminate")));
}

}  // namespace
}  // namespace zeus
