// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor` and the example training program as users run them: real
// binaries, the emulator on its wall clock, real child processes.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/integration/cli_monitor_fixture.h"
#include "testing/rapl_tree.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace zeus::monitor_test {
namespace {

using ::testing::HasSubstr;

TEST_F(CliMonitorTest, SleepTwoSecondsReportsEnergyPerGpu) {
  ProcessResult r = Monitor({"--json", "--", "sleep", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(r.out);
  const double t = report["time_s"].get<double>();
  EXPECT_GE(t, 2.0);  // no upper bound: a loaded machine may take longer
  ASSERT_EQ(report["gpus"].size(), 2u);
  EXPECT_EQ(report["gpus"][0]["index"], 0);
  // GPU 0's counter advances every 100 ms (the emulator's default), so a
  // difference of two readings is within one period's energy (15 J) of 150 W x t.
  constexpr double kCounterPeriodS = 0.1;
  EXPECT_NEAR(report["gpus"][0]["energy_j"].get<double>(), 150.0 * t, 150.0 * kCounterPeriodS + 1e-6);
  EXPECT_EQ(report["gpus"][0]["source"], "counter");
  EXPECT_NEAR(report["gpus"][1]["energy_j"].get<double>(), 90.0 * t, 90.0 * t * 0.01);
  EXPECT_EQ(report["gpus"][1]["source"], "integrated_power");
  EXPECT_NEAR(report["gpus"][0]["avg_power_w"].get<double>(), 150.0, 150.0 * kCounterPeriodS / t + 1e-6);
  EXPECT_NEAR(report["gpus"][1]["peak_power_w"].get<double>(), 90.0, 1e-9);
  EXPECT_NEAR(report["total_energy_j"].get<double>(), 240.0 * t, 150.0 * kCounterPeriodS + 90.0 * t * 0.01);
  EXPECT_EQ(report["exit_code"], 0);
}

TEST_F(CliMonitorTest, CarbonReportsEmissionsNextToEnergy) {
  ProcessResult r = Monitor({"--json", "--carbon", "fr", "--", "sleep", "0.5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(r.out);
  ASSERT_TRUE(report.contains("carbon")) << r.out;
  EXPECT_EQ(report["carbon"]["zone"], "FRA");
  const double intensity = report["carbon"]["intensity_g_per_kwh"].get<double>();
  EXPECT_GT(intensity, 0);
  // The hand calculation: J / 3.6e6 J/kWh * gCO2eq/kWh.
  EXPECT_NEAR(report["carbon"]["emissions_g"].get<double>(),
              report["total_energy_j"].get<double>() / 3.6e6 * intensity, 1e-12);
  for (const json& g : report["gpus"]) {
    EXPECT_NEAR(g["emissions_g"].get<double>(), g["energy_j"].get<double>() / 3.6e6 * intensity, 1e-12);
  }
  ProcessResult text = Monitor({"--carbon", "World", "--", "true"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out + text.err, HasSubstr("gCO2eq/kWh (World, "));
}

TEST_F(CliMonitorTest, AnUnknownCarbonZoneIsAUsageErrorWithCloseMatches) {
  ProcessResult r = Monitor({"--carbon", "FRX", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--carbon: carbon zone 'FRX' is not in"));
  EXPECT_THAT(r.err, HasSubstr("FR/FRA (France)"));
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
  // At least one row per GPU: how many more depends on the sampler getting the
  // CPU in 0.5 s, which a loaded machine does not promise.
  EXPECT_THAT(csv, HasSubstr("\n0,"));
  EXPECT_THAT(csv, HasSubstr("\n1,"));
  const std::string svg = Slurp(tmp_.File("p.svg"));
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr("power (W)"));
  EXPECT_THAT(svg, HasSubstr(">GPU 0</text>"));
  EXPECT_THAT(svg, HasSubstr(">GPU 1</text>"));
  EXPECT_THAT(svg, HasSubstr(">GPU power during the command</text>"));
  EXPECT_THAT(svg, HasSubstr("<polyline class=\"series\""));  // a GPU's power line
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
  const std::string ready = tmp_.File("ready");
  Zeus zeus;
  // The command says when it runs: then zeus's relay is in place for certain.
  Start(&zeus, {"--json", "-o", out, "--", "sh", "-c", "touch '" + ready + "'; exec sleep 60"});
  WaitForFile(ready);
  ::kill(zeus.pid, SIGTERM);
  EXPECT_EQ(zeus.Wait(), 128 + SIGTERM);
  json report = json::parse(Slurp(out));
  EXPECT_EQ(report["exit_code"], 128 + SIGTERM);
  EXPECT_EQ(report["signal"], "SIGTERM");
  EXPECT_EQ(report["signal_forwarded"], true);
  EXPECT_EQ(report["killed_after_grace"], false);
  EXPECT_GT(report["gpus"][0]["energy_j"].get<double>(), 0.0);
}

TEST_F(CliMonitorTest, SignalBeforeTheCommandStartsCancelsItAndIsReported) {
  const std::string out = tmp_.File("report.json");
  const std::string hold = tmp_.File("hold");
  const std::string ran = tmp_.File("ran");
  HoldDriverAt(hold, /*early=*/false);
  Zeus zeus;
  Start(&zeus, {"--json", "-o", out, "--", "sh", "-c", "touch '" + ran + "'"});
  // zeus holds here after opening the devices, before starting the command.
  WaitForFile(hold);
  ::kill(zeus.pid, SIGTERM);
  ::unlink(hold.c_str());
  EXPECT_EQ(zeus.Wait(), 128 + SIGTERM) << Slurp(tmp_.File("zeus.err"));
  EXPECT_FALSE(Exists(ran)) << "the command ran after the signal";
  json report = json::parse(Slurp(out));
  EXPECT_EQ(report["started"], false);
  EXPECT_EQ(report["exit_code"], 128 + SIGTERM);
  EXPECT_EQ(report["signal"], "SIGTERM");
  EXPECT_THAT(report["error"].get<std::string>(), HasSubstr("before the command started"));
  EXPECT_THAT(Slurp(tmp_.File("zeus.err")), HasSubstr("SIGTERM arrived before the command started"));
}

// Ctrl-C on a real terminal: zeus gives the command's process group the
// terminal's foreground, so the terminal signals it directly, and zeus (in the
// background then) does not send it a second one.
TEST_F(CliMonitorTest, CtrlCReachesTheCommandExactlyOnce) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const std::string slave = ::ptsname(master);
  const std::string ready = tmp_.File("ready");
  const std::string seen = tmp_.File("seen");
  const std::string count = tmp_.File("count");
  const std::string out = tmp_.File("report.json");
  // Counts SIGINTs; on SIGTERM writes the count and exits.
  const std::string script = "n=0\n"
                             "trap 'n=$((n+1)); echo $n > \"" + seen + ".tmp\"; mv \"" + seen + ".tmp\" \"" + seen +
                             "\"' INT\n"
                             "trap 'echo $n > \"" + count + "\"; exit 0' TERM\n"
                             "touch \"" + ready + "\"\n"
                             "while :; do sleep 1 & wait $!; done\n";
  Zeus zeus;
  Start(&zeus, {"--json", "-o", out, "--", "sh", "-c", script}, slave);
  WaitForFile(ready);
  const char ctrl_c = 0x03;
  ASSERT_EQ(::write(master, &ctrl_c, 1), 1);
  WaitForFile(seen);
  // Signals are taken lowest number first: a forwarded SIGINT, if any, reaches
  // the command before this SIGTERM does, and is counted.
  ::kill(zeus.pid, SIGTERM);
  EXPECT_EQ(zeus.Wait(), 0) << Slurp(tmp_.File("zeus.err"));
  ::close(master);
  EXPECT_EQ(Slurp(count), "1\n");
  json report = json::parse(Slurp(out));
  // zeus saw only the SIGTERM it forwarded: the terminal's SIGINT went to the command alone.
  EXPECT_EQ(report["signal"], "SIGTERM");
  EXPECT_EQ(report["signal_forwarded"], true);
}

TEST_F(CliMonitorTest, CommandIgnoringSignalsIsKilledAfterTheGracePeriod) {
  const std::string out = tmp_.File("report.json");
  const std::string ready = tmp_.File("ready");
  Zeus zeus;
  Start(&zeus, {"--json", "--kill-after", "0.5", "-o", out, "--", "sh", "-c",
                "trap '' TERM INT; touch '" + ready + "'; exec sleep 60"});
  WaitForFile(ready);
  ::kill(zeus.pid, SIGTERM);
  EXPECT_EQ(zeus.Wait(), 128 + SIGKILL);
  json report = json::parse(Slurp(out));
  EXPECT_EQ(report["exit_code"], 128 + SIGKILL);
  EXPECT_EQ(report["signal"], "SIGTERM");
  EXPECT_EQ(report["killed_after_grace"], true);
  EXPECT_THAT(Slurp(tmp_.File("zeus.err")), HasSubstr("killed with SIGKILL"));
}

TEST_F(CliMonitorTest, CommandDoesNotOutliveAKilledZeus) {
  const std::string pid_file = tmp_.File("pid");
  Zeus zeus;
  Start(&zeus, {"--", "sh", "-c",
                "trap '' TERM INT HUP; echo $$ > '" + pid_file + ".tmp'; mv '" + pid_file + ".tmp' '" + pid_file +
                    "'; exec sleep 120"});
  WaitForFile(pid_file);
  const pid_t child = std::stoi(Slurp(pid_file));
  ASSERT_FALSE(Gone(child));
  ::kill(zeus.pid, SIGKILL);
  EXPECT_EQ(zeus.Wait(), 128 + SIGKILL);
  const bool gone = WaitUntil([&] { return Gone(child); });
  if (!gone) ::kill(child, SIGKILL);
  EXPECT_TRUE(gone) << "the command outlived zeus";
}

TEST_F(CliMonitorTest, CommandThatCannotRunIsReported) {
  ProcessResult missing = Monitor({"--json", "--", tmp_.File("no-such-program"), "x"});
  EXPECT_EQ(missing.exit_code, 127);
  json report = json::parse(missing.out);
  EXPECT_EQ(report["started"], false);
  EXPECT_EQ(report["exit_code"], 127);
  EXPECT_EQ(report["error"], "cannot run " + tmp_.File("no-such-program") + ": No such file or directory");
  EXPECT_THAT(missing.err, HasSubstr("cannot run"));

  const std::string not_executable = tmp_.Write("data.txt", "not a program\n");
  ::chmod(not_executable.c_str(), 0644);
  ProcessResult denied = Monitor({"--json", "--", not_executable});
  EXPECT_EQ(denied.exit_code, 126);
  EXPECT_EQ(json::parse(denied.out)["error"], "cannot run " + not_executable + ": Permission denied");

  ProcessResult not_in_path = Monitor({"--", "zeus-no-such-command-anywhere"});
  EXPECT_EQ(not_in_path.exit_code, 127);
  EXPECT_THAT(not_in_path.out, HasSubstr("cannot run zeus-no-such-command-anywhere: No such file or directory"));
}

// Everything after `--` belongs to the command, whatever list flag precedes it.
TEST_F(CliMonitorTest, DoubleDashEndsTheOptionsAfterEveryListFlag) {
  const std::string stolen = tmp_.File("stolen.txt");
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--gpus", "0"}, {"--gpus", "0,1"}, {"--gpus", "1", "--gpus", "0"}}) {
    std::vector<std::string> args = flags;
    for (const char* a : {"--", "echo", "-o"}) args.push_back(a);
    args.push_back(stolen);
    args.push_back("hi");
    ProcessResult r = Monitor(args);
    ASSERT_EQ(r.exit_code, 0) << flags[1] << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("-o " + stolen + " hi")) << flags[1];
    EXPECT_FALSE(Exists(stolen)) << flags[1] << ": the command's -o was taken as zeus's";

    args = flags;
    for (const char* a : {"--json", "--", "sh", "-c", "exit 0", "sh", "--epochs", "3"}) args.push_back(a);
    ProcessResult epochs = Monitor(args);
    ASSERT_EQ(epochs.exit_code, 0) << flags[1] << ": " << epochs.err;
    const json report = json::parse(epochs.out);
    EXPECT_EQ(report["command"], json({"sh", "-c", "exit 0", "sh", "--epochs", "3"}));
  }
  ProcessResult chosen = Monitor({"--gpus", "1", "--json", "--", "true"});
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_EQ(json::parse(chosen.out)["gpus"].size(), 1u);

  // `monitor power` has no command, but its list flag must still parse alone and repeated.
  ProcessResult power = RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "power", "--gpus", "1", "--gpus", "0", "--count",
                                    "1"},
                                   env_);
  ASSERT_EQ(power.exit_code, 0) << power.err;
  EXPECT_THAT(power.out, HasSubstr("gpu1_w"));
  EXPECT_THAT(power.out, HasSubstr("gpu0_w"));
}

TEST_F(CliMonitorTest, OutputPathsAreCheckedBeforeTheCommandRuns) {
  const std::string ran = tmp_.File("ran");
  const std::string missing_dir = tmp_.File("missing/out.csv");
  for (const char* flag : {"--timeline", "--plot", "-o"}) {
    for (const std::string& path : {tmp_.path(), missing_dir}) {
      ProcessResult r = Monitor({flag, path, "--", "sh", "-c", "touch '" + ran + "'"});
      EXPECT_EQ(r.exit_code, 2) << flag << " " << path << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(path)) << flag;
      EXPECT_FALSE(Exists(ran)) << flag << " " << path << ": the command ran";
    }
  }
  ProcessResult dir = Monitor({"--plot", tmp_.path(), "--", "true"});
  EXPECT_THAT(dir.err, HasSubstr("is a directory"));
  // A check leaves no file behind.
  ProcessResult ok = Monitor({"--timeline", tmp_.File("t.csv"), "--", "sh", "-c", "test ! -e '" +
                                                                                    tmp_.File("t.csv") + "'"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(Exists(tmp_.File("t.csv")));
}

TEST_F(CliMonitorTest, FailureToWriteAfterTheRunIsANonZeroExit) {
  // /dev/full opens for writing (so the early check passes) and fails every write.
  for (const char* flag : {"--timeline", "-o", "--plot"}) {
    ProcessResult r = Monitor({flag, "/dev/full", "--", "true"});
    EXPECT_EQ(r.exit_code, 1) << flag << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("error:")) << flag;
  }
  // The plot's failure names the path and the errno text.
  EXPECT_THAT(Monitor({"--plot", "/dev/full", "--", "true"}).err,
              HasSubstr("--plot /dev/full: cannot write: No space left on device"));
  // The command's own failure is kept.
  EXPECT_EQ(Monitor({"-o", "/dev/full", "--", "sh", "-c", "exit 7"}).exit_code, 7);
}

TEST_F(CliMonitorTest, BadNumbersAreRejectedWithReadableRanges) {
  ProcessResult negative = Monitor({"--gpus", "-1", "--", "true"});
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_THAT(negative.err, HasSubstr("--gpus must be at least 0 (got -1)"));
  EXPECT_THAT(negative.err, ::testing::Not(HasSubstr("18446744073709551615")));
  ProcessResult in_list = Monitor({"--gpus", "0,x", "--", "true"});
  EXPECT_EQ(in_list.exit_code, 2);
  EXPECT_THAT(in_list.err, HasSubstr("--gpus must be a whole number (got 'x')"));
  for (const char* bad : {"0", "60001"}) {
    ProcessResult r = Monitor({"--interval-ms", bad, "--", "true"});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("--interval-ms must be between 1 and 60000 (got " + std::string(bad) + ")")) << bad;
  }
  for (const char* bad : {"-1", "1e308", "nan"}) {
    ProcessResult r = Monitor({"--kill-after", bad, "--", "true"});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("--kill-after must be")) << bad;
    EXPECT_THAT(r.err, HasSubstr("between 0 and 86400 (got " + std::string(bad) + ")")) << bad;
    EXPECT_LT(r.err.size(), 200u) << r.err;
  }
  ProcessResult count = RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "power", "--count", "-1"}, env_);
  EXPECT_EQ(count.exit_code, 2);
  EXPECT_THAT(count.err, HasSubstr("--count must be between 0 and 1000000000 (got -1)"));
  ProcessResult interval = RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "power", "--interval-ms", "0"}, env_);
  EXPECT_EQ(interval.exit_code, 2);
  EXPECT_THAT(interval.err, HasSubstr("--interval-ms must be between 1 and 60000 (got 0)"));
  ProcessResult help = RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "power", "--help"}, env_);
  EXPECT_THAT(help.out, HasSubstr("0 (the default) prints until Ctrl-C"));
}

TEST_F(CliMonitorTest, UnreadableRaplPackageDoesNotStopTheOthers) {
  testing::RaplTree tree(tmp_.File("powercap"));
  tree.AddPackage(0, false);
  tree.AddPackage(1, false);
  tree.SetEnergy(0, false, 1000);
  { std::ofstream(tree.EnergyPath(1, false), std::ios::trunc) << "garbage\n"; }
  ProcessResult r = Monitor({"--gpus", "0", "--cpus", "--json", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json report = json::parse(r.out);
  ASSERT_EQ(report["cpus"].size(), 2u) << r.out;
  EXPECT_TRUE(report["cpus"][0]["error"].is_null()) << r.out;
  EXPECT_TRUE(report["cpus"][0]["energy_j"].is_number());
  EXPECT_TRUE(report["cpus"][1]["error"].is_string()) << r.out;
  EXPECT_THAT(r.err, HasSubstr("1 device(s) could not be measured"));
}

// avg = energy / time and peak = the highest power in force, over one window:
// the average can never exceed the peak, even for a window far shorter than
// the sampling interval, or when power moves between two readings.
TEST_F(CliMonitorTest, AveragePowerNeverExceedsThePeak) {
  json alternating = json::array();
  json spikes = json::array();  // 300 W for 2 ms in every 50, between the sensor's 100 ms updates
  for (int i = 0; i < 2000; ++i) alternating.push_back({{"at_s", i * 0.03}, {"power_w", i % 2 == 0 ? 100 : 300}});
  spikes.push_back({{"at_s", 0.0}, {"power_w", 100}});
  for (int i = 0; i < 1000; ++i) {
    spikes.push_back({{"at_s", i * 0.05 + 0.01}, {"power_w", 300}});
    spikes.push_back({{"at_s", i * 0.05 + 0.012}, {"power_w", 100}});
  }
  for (const std::string name : {"constant", "alternating", "spikes"}) {
    json gpu = {{"name", "Tesla V100-SXM2-32GB"}, {"architecture", "volta"}, {"min_power_limit_w", 100},
                {"max_power_limit_w", 300}, {"default_power_limit_w", 300}, {"energy_counter", true}};
    if (name == "constant") gpu["power_w"] = 250;
    if (name == "alternating") gpu["power_schedule"] = alternating;
    if (name == "spikes") gpu["power_schedule"] = spikes;
    env_["ZEUS_EMULATOR_CONFIG"] =
        tmp_.Write(name + ".json", json({{"state_file", tmp_.File(name + ".state")}, {"gpus", {gpu}}}).dump());
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"true"}, {"true"}, {"true"}, {"sleep", "0.05"}, {"sleep", "0.5"}}) {
      for (const char* interval : {"20", "1000"}) {
        std::vector<std::string> args = {"--json", "--interval-ms", interval, "--"};
        args.insert(args.end(), command.begin(), command.end());
        ProcessResult r = Monitor(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const json g = json::parse(r.out)["gpus"][0];
        ASSERT_TRUE(g["avg_power_w"].is_number()) << r.out;
        ASSERT_TRUE(g["peak_power_w"].is_number()) << r.out;
        EXPECT_LE(g["avg_power_w"].get<double>(), g["peak_power_w"].get<double>())
            << name << ", " << command.back() << ", every " << interval << " ms\n" << r.out;
        if (name == "constant" && g["peak_from"] == "readings") {
          EXPECT_NEAR(g["peak_power_w"].get<double>(), 250.0, 1e-6) << r.out;
        }
      }
    }
  }
}

// The emulator's time_scale makes its energy counters run 50x faster than the
// wall clock; the window must be timed on the emulator's clock.
TEST_F(CliMonitorTest, TimeScaledEmulatorReportsPowerOnItsOwnClock) {
  const std::string scenario = tmp_.Write("emulated-training.json",
                                          Slurp(std::string(ZEUS_TEST_SOURCE_DIR) + "/examples/emulated-training.json"));
  env_["ZEUS_EMULATOR_CONFIG"] = scenario;
  env_["TMPDIR"] = tmp_.path();  // the scenario's state file goes there
  ProcessResult r = Monitor({"--json", "--", "sleep", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(r.out);
  EXPECT_EQ(report["clock"], "emulator");
  const double wall = report["wall_time_s"].get<double>();
  const double emulated = report["time_s"].get<double>();
  EXPECT_GE(wall, 1.0);
  EXPECT_GE(emulated, 50.0);
  EXPECT_LE(emulated, 50.0 * wall);
  // The A40's workload draws 236 W at its default 300 W limit (the scenario's curve).
  const json g = report["gpus"][0];
  EXPECT_NEAR(g["avg_power_w"].get<double>(), 236.0, 236.0 * 0.01) << r.out;
  EXPECT_NEAR(g["energy_j"].get<double>(), 236.0 * emulated, 236.0 * emulated * 0.01);
  EXPECT_LE(g["avg_power_w"].get<double>(), g["peak_power_w"].get<double>());

  ProcessResult text = Monitor({"--", "sleep", "0.2"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("of emulated GPU time"));
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
}  // namespace zeus::monitor_test
