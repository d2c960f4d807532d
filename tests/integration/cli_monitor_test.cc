// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor` and the example training program as users run them: real
// binaries, the emulator on its wall clock, real child processes.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/rapl_tree.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace zeus {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::RunProcess;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliMonitorTest : public ::testing::Test {
 protected:
  CliMonitorTest() {
    // The acceptance scenario: 150 W with an energy counter, 90 W without.
    json scenario = {
        {"state_file", tmp_.File("state")},
        {"gpus",
         {{{"name", "Tesla V100-SXM2-32GB"}, {"architecture", "volta"}, {"min_power_limit_w", 100},
           {"max_power_limit_w", 300}, {"default_power_limit_w", 300}, {"energy_counter", true}, {"power_w", 150}},
          {{"name", "Tesla P100-PCIE-16GB"}, {"architecture", "pascal"}, {"min_power_limit_w", 125},
           {"max_power_limit_w", 250}, {"default_power_limit_w", 250}, {"energy_counter", false},
           {"power_w", 90}}}}};
    env_ = {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
            {"ZEUS_EMULATOR_CONFIG", tmp_.Write("scenario.json", scenario.dump())},
            {"ZEUS_POWERCAP_ROOT", tmp_.File("powercap")},
            {"CUDA_VISIBLE_DEVICES", std::nullopt}};
  }

  ProcessResult Monitor(std::vector<std::string> args) {
    args.insert(args.begin(), {ZEUS_TEST_CLI_PATH, "monitor"});
    return RunProcess(args, env_);
  }

  testing::TempDir tmp_;
  std::map<std::string, std::optional<std::string>> env_;
};

TEST_F(CliMonitorTest, SleepTwoSecondsReportsEnergyPerGpu) {
  ProcessResult r = Monitor({"--json", "--", "sleep", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(r.out);
  const double t = report["time_s"].get<double>();
  EXPECT_NEAR(t, 2.0, 0.3);
  ASSERT_EQ(report["gpus"].size(), 2u);
  EXPECT_EQ(report["gpus"][0]["index"], 0);
  EXPECT_NEAR(report["gpus"][0]["energy_j"].get<double>(), 150.0 * t, 150.0 * t * 0.005);
  EXPECT_EQ(report["gpus"][0]["source"], "counter");
  EXPECT_NEAR(report["gpus"][1]["energy_j"].get<double>(), 90.0 * t, 90.0 * t * 0.01);
  EXPECT_EQ(report["gpus"][1]["source"], "integrated_power");
  EXPECT_NEAR(report["gpus"][0]["avg_power_w"].get<double>(), 150.0, 1.0);
  EXPECT_NEAR(report["gpus"][1]["peak_power_w"].get<double>(), 90.0, 1e-9);
  EXPECT_NEAR(report["total_energy_j"].get<double>(), 240.0 * t, 240.0 * t * 0.01);
  EXPECT_EQ(report["exit_code"], 0);
}

TEST_F(CliMonitorTest, ExitCodeIsPassedThrough) {
  EXPECT_EQ(Monitor({"--", "false"}).exit_code, 1);
  EXPECT_EQ(Monitor({"--", "sh", "-c", "exit 7"}).exit_code, 7);
  ProcessResult missing = Monitor({"--", tmp_.File("no-such-program")});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_THAT(missing.err, HasSubstr("cannot run"));
}

TEST_F(CliMonitorTest, TextReportTimelineAndPlot) {
  ProcessResult r = Monitor({"--interval-ms", "20", "--timeline", tmp_.File("t.csv"), "--plot", tmp_.File("p.svg"),
                             "--", "sleep", "0.5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("GPU 0"));
  EXPECT_THAT(r.out, HasSubstr("counter"));
  EXPECT_THAT(r.out, HasSubstr("integrated_power"));
  EXPECT_THAT(r.out, HasSubstr("total"));
  const std::string csv = Slurp(tmp_.File("t.csv"));
  EXPECT_THAT(csv, HasSubstr("gpu,time_s,instant_power_w"));
  EXPECT_GT(std::count(csv.begin(), csv.end(), '\n'), 20);
  const std::string svg = Slurp(tmp_.File("p.svg"));
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr("power (W)"));
  EXPECT_THAT(svg, HasSubstr("GPU 1"));
  EXPECT_THAT(svg, HasSubstr("<path"));
}

TEST_F(CliMonitorTest, ChosenGpusAndCpus) {
  testing::RaplTree tree(tmp_.File("powercap"));
  tree.AddPackage(0, true);
  ProcessResult r = Monitor({"--gpus", "1", "--cpus", "--json", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(r.out);
  ASSERT_EQ(report["gpus"].size(), 1u);
  EXPECT_EQ(report["gpus"][0]["index"], 1);
  ASSERT_EQ(report["cpus"].size(), 1u);
  EXPECT_EQ(report["cpus"][0]["name"], "package-0");
  EXPECT_TRUE(report["cpus"][0]["dram_energy_j"].is_number());

  ProcessResult bad = Monitor({"--gpus", "5", "--", "true"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("GPU 5 does not exist"));
  ProcessResult nothing = Monitor({});
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_THAT(nothing.err, HasSubstr("no command"));
}

TEST_F(CliMonitorTest, SigtermIsForwardedAndReported) {
  const std::string out = tmp_.File("report.json");
  pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& [k, v] : env_) {
      if (v) {
        ::setenv(k.c_str(), v->c_str(), 1);
      } else {
        ::unsetenv(k.c_str());
      }
    }
    ::execl(ZEUS_TEST_CLI_PATH, ZEUS_TEST_CLI_PATH, "monitor", "--json", "-o", out.c_str(), "--", "sleep", "30",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  json report = json::parse(Slurp(out));
  EXPECT_EQ(report["exit_code"], 128 + SIGTERM);
  EXPECT_LT(report["time_s"].get<double>(), 10.0);
  EXPECT_GT(report["gpus"][0]["energy_j"].get<double>(), 0.0);
}

TEST_F(CliMonitorTest, LivePower) {
  ProcessResult r = RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "power", "--interval-ms", "10", "--count", "3"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gpu0_w"));
  EXPECT_THAT(r.out, HasSubstr("150.0"));
  EXPECT_THAT(r.out, HasSubstr("90.0"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4);
}

TEST_F(CliMonitorTest, ExampleTrainingProgramMeasuresEpochs) {
  ProcessResult r = RunProcess({ZEUS_TEST_EXAMPLE_PATH, "--epochs", "2", "--steps", "5", "--step-ms", "20"}, env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("epoch_1"));
  EXPECT_THAT(r.out, HasSubstr("epoch_2"));
  EXPECT_THAT(r.out, HasSubstr("training"));
  EXPECT_THAT(r.out, HasSubstr("GPU0: "));
  EXPECT_THAT(r.out, HasSubstr("GPU1: "));
}

}  // namespace
}  // namespace zeus
