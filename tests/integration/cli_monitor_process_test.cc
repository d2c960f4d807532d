// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor --per-process -- CMD` on emulated GPUs with real processes:
// the command (a shell) and this test process are attached to GPU 0 at 3:1
// utilization through the emulator's controls; the report must give the
// command 3/4 of the active energy, the test process (not in the command's
// tree) the rest, and add up exactly.

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "emulator/control/control.h"
#include "tests/integration/cli_monitor_fixture.h"
#include "testing/temp_dir.h"
#include "zeus/device/discovery.h"

namespace zeus::monitor_test {
namespace {

class CliMonitorProcessTest : public CliMonitorTest {
 protected:
  // Opens the emulator in this process too (same scenario and state file),
  // for its controls and to watch its per-process samples.
  void OpenEmulatorHere() {
    for (const auto& [name, value] : env_) scoped_.push_back(std::make_unique<testing::ScopedEnv>(name, value));
    device::GpuOptions options;
    options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
    auto gpus = device::OpenGpus(options);
    ASSERT_TRUE(gpus) << gpus.error().message();
    gpus_ = std::move(*gpus);
    auto control = emulator::EmulatorControl::Open(ZEUS_TEST_EMULATOR_PATH);
    ASSERT_TRUE(control) << control.error().message();
    control_ = std::move(*control);
  }

  // Whether GPU 0's driver has given at least `count` samples of each pid.
  bool SampledTimes(std::uint32_t a, std::uint32_t b, int count) {
    auto samples = gpus_->gpu(0).ProcessUtilization(0);
    if (!samples) return false;
    int seen_a = 0, seen_b = 0;
    for (const auto& s : *samples) {
      seen_a += s.pid == a;
      seen_b += s.pid == b;
    }
    return seen_a >= count && seen_b >= count;
  }

  std::vector<std::unique_ptr<testing::ScopedEnv>> scoped_;
  std::unique_ptr<device::GpuSet> gpus_;
  std::unique_ptr<emulator::EmulatorControl> control_;
};

TEST_F(CliMonitorProcessTest, TheCommandGetsItsShareOfTheActiveEnergy) {
  OpenEmulatorHere();
  const std::string pid_file = tmp_.File("command.pid");
  const std::string go = tmp_.File("go");
  Zeus zeus;
  // The command writes its PID, then waits until the test lets it end.
  // The GPU draws 150 W while busy; its idle power is 50 W.
  Start(&zeus, {"--json", "--per-process", "--idle-power", "Tesla V100-SXM2-32GB=50", "--", "sh", "-c",
                "echo $$ > " + pid_file + ".tmp && mv " + pid_file + ".tmp " + pid_file + "; while [ ! -e " + go +
                    " ]; do sleep 0.05; done"});
  WaitForFile(pid_file);
  const auto command_pid = static_cast<std::uint32_t>(std::stoul(Slurp(pid_file)));
  const auto test_pid = static_cast<std::uint32_t>(::getpid());
  ASSERT_TRUE(control_->AttachProcess(0, command_pid, 75)) << "attach the command";
  ASSERT_TRUE(control_->AttachProcess(0, test_pid, 25)) << "attach the test process";
  // Several driver samples of both, so that most of the run is split 3:1.
  ASSERT_TRUE(WaitUntil([&] { return SampledTimes(command_pid, test_pid, 6); }));
  ASSERT_TRUE(control_->DetachProcess(0, test_pid));
  { std::ofstream(go) << "\n"; }
  ASSERT_EQ(zeus.Wait(), 0) << Slurp(tmp_.File("zeus.err"));

  const json report = json::parse(Slurp(tmp_.File("zeus.out")));
  ASSERT_TRUE(report.contains("per_process")) << report.dump(2);
  ASSERT_EQ(report["per_process"].size(), 2u);
  const json& g0 = report["per_process"][0];
  EXPECT_EQ(g0["index"], 0);
  EXPECT_TRUE(g0["error"].is_null()) << g0.dump(2);
  const double command = g0["command_energy_j"].get<double>();
  const double others = g0["other_processes_energy_j"].get<double>();
  // Exact conservation (whole mJ): the parts add up to what was measured.
  const double parts = command + others + g0["idle_energy_j"].get<double>() + g0["unattributed_energy_j"].get<double>();
  EXPECT_NEAR(parts, g0["measured_energy_j"].get<double>(), 1e-6);
  // 3:1 over the time both ran; the command alone at the edges adds to its share.
  ASSERT_GT(others, 0.0) << g0.dump(2);
  EXPECT_GT(command / others, 2.7) << g0.dump(2);
  bool found_command = false;
  for (const json& p : g0["processes"]) {
    if (p["pid"] == command_pid) {
      found_command = true;
      EXPECT_TRUE(p["command"].get<bool>());
      EXPECT_EQ(p["comm"], "sh");
    }
    if (p["pid"] == test_pid) {
      EXPECT_FALSE(p["command"].get<bool>());
    }
  }
  EXPECT_TRUE(found_command) << g0.dump(2);
  // GPU 1 had no process: its active energy is unattributed, none is the command's.
  const json& g1 = report["per_process"][1];
  EXPECT_EQ(g1["command_energy_j"], 0.0);
  EXPECT_NEAR(g1["idle_energy_j"].get<double>() + g1["unattributed_energy_j"].get<double>(),
              g1["measured_energy_j"].get<double>(), 1e-6);
}

TEST_F(CliMonitorProcessTest, TextReportHasAPerProcessSection) {
  ProcessResult r = Monitor({"--per-process", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("per process"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU 0: command 0.00 J of"), std::string::npos) << r.out;
}

TEST_F(CliMonitorProcessTest, IdlePowerIsCheckedBeforeTheCommandRuns) {
  ProcessResult bad = Monitor({"--per-process", "--idle-power", "V100", "--", "touch", tmp_.File("ran")});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("MODEL=WATTS"), std::string::npos) << bad.err;
  ProcessResult alone = Monitor({"--idle-power", "V100=50", "--", "touch", tmp_.File("ran")});
  EXPECT_EQ(alone.exit_code, 2) << alone.err;
  EXPECT_NE(alone.err.find("--per-process"), std::string::npos) << alone.err;
  EXPECT_FALSE(Exists(tmp_.File("ran")));
}

TEST_F(CliMonitorProcessTest, WithoutLocalGpusItIsAUsageError) {
  env_["CUDA_VISIBLE_DEVICES"] = "";
  ProcessResult r = Monitor({"--per-process", "--", "true"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--per-process"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace zeus::monitor_test
