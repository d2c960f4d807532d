// Copyright 2026 The Zeus C++ Authors.
//
// Observer mode end to end: zeus-emulated-train --observe on the NVML
// emulator's manual clock profiles every limit, then runs on at the original
// limit (read by this process while the trainer is paused after profiling),
// and reports what each selector would save; `zeus what-if` prints the same
// report from the saved profile, as text, --json and --svg, and rejects bad
// input with clear messages and exit code 2.
//
// The scenario's curve (emulator interpolation, draw = min(demand, limit)),
// per step:
//   limit W   draw W   time s   energy J
//   300       260      0.98     254.8
//   250       240      1.00     240      <- the original limit (baseline)
//   200       200      1.10     220
//   150       150      1.40     210
//   100       100      2.00     200
// Selectors (1 GPU, max power 300 W): energy 100 W; time 300 W;
// ZeusCost(0.5) = 0.5 E + 150 T per step: 274.4, 270, 275, 315, 400 -> 250 W;
// MaxSlowdown(1.15): time <= 1.127 s -> 200 W.
// 40 steps per epoch, 2 epochs: energy saves (240-200) x 40 = 1600 J per
// epoch, 3200 J per run, and costs (2.0-1.0) x 40 = 40 s per epoch, 80 s per
// run.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "zeus/device/discovery.h"

namespace zeus {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using testing::ProcessResult;

json Gpu(double original_w) {
  return {{"name", "Tesla V100-SXM2-32GB"},
          {"architecture", "volta"},
          {"min_power_limit_w", 100},
          {"max_power_limit_w", 300},
          {"default_power_limit_w", 300},
          {"power_limit_w", original_w},
          {"energy_counter", true},
          {"workload",
           {{"power_limits_w", {100, 150, 200, 250, 300}},
            {"power_w", {100, 150, 200, 240, 260}},
            {"iteration_time_s", {2.0, 1.4, 1.1, 1.0, 0.98}}}}};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ObserverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    json s = {{"clock", "manual"}, {"state_file", tmp_.File("state")}, {"gpus", {Gpu(250)}}};
    scenario_ = tmp_.Write("scenario.json", s.dump());
  }

  std::vector<std::string> TrainArgs(std::vector<std::string> extra) const {
    std::vector<std::string> args = {ZEUS_TEST_TRAIN_PATH, "--epochs", "2", "--steps-per-epoch", "40",
                                     "--wait-steps", "1", "--warmup-steps", "2", "--profile-steps", "5",
                                     "--stride-w", "50", "--max-slowdown", "1.15", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::map<std::string, std::optional<std::string>> Env() const {
    return {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
            {"ZEUS_EMULATOR_CONFIG", scenario_},
            {"CUDA_VISIBLE_DEVICES", std::nullopt}};
  }

  double LimitW() const {
    testing::ScopedEnv config("ZEUS_EMULATOR_CONFIG", scenario_);
    testing::ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::nullopt);
    device::GpuOptions options;
    options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
    auto gpus = device::OpenGpus(options);
    EXPECT_TRUE(gpus) << gpus.error().message();
    return gpus ? (*gpus)->gpu(0).PowerLimitMw().value() / 1000.0 : -1;
  }

  // The limit in force while the trainer is paused at step 39, after
  // profiling ended (step 37) and before the epoch ends.
  double LimitWhilePausedAfterProfiling(std::vector<std::string> extra) {
    extra.insert(extra.end(), {"--pause-at-step", "39"});
    const std::string err = tmp_.File("paused.err");
    std::remove(err.c_str());
    testing::BackgroundProcess trainer(TrainArgs(extra), tmp_.File("paused.out"), err, Env());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (ReadFile(err).find("paused at step 39") == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline || !trainer.Running()) {
        ADD_FAILURE() << "the trainer did not pause: " << ReadFile(err);
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return LimitW();  // the destructor kills the trainer
  }

  testing::TempDir tmp_;
  std::string scenario_;
};

TEST_F(ObserverTest, AfterProfilingTheOriginalLimitIsInForce) {
  EXPECT_EQ(LimitWhilePausedAfterProfiling({"--selector", "energy", "--observe"}), 250);
  // Without --observe the optimum is in force at the same step (the test can tell).
  EXPECT_EQ(LimitWhilePausedAfterProfiling({"--selector", "energy"}), 100);
}

TEST_F(ObserverTest, ReportsWhatEachSelectorWouldSave) {
  const std::string profile = tmp_.File("profile.json");
  ProcessResult r = testing::RunProcess(TrainArgs({"--selector", "energy", "--observe", "--profile-path", profile}),
                                        Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["state"], "done");
  EXPECT_EQ(out["observer_mode"], true);
  EXPECT_EQ(out["optimal_power_limit_w"], 100.0);
  EXPECT_EQ(out["measurements"].size(), 5u);
  EXPECT_EQ(LimitW(), 250);
  EXPECT_THAT(r.err, HasSubstr("observer mode: the optimal power limit would be 100 W"));

  const json& w = out["what_if"];
  ASSERT_TRUE(w.is_object()) << out.dump(2);
  EXPECT_EQ(w["baseline"]["power_limit_w"], 250.0);
  EXPECT_EQ(w["baseline"]["requested"], true);
  EXPECT_NEAR(w["baseline"]["energy_per_step_j"].get<double>(), 240, 0.01);
  EXPECT_NEAR(w["baseline"]["time_per_step_s"].get<double>(), 1.0, 1e-9);
  struct Want {
    const char* selector;
    double limit_w, energy_epoch_j, time_epoch_s;
  };
  const Want want[] = {{"energy", 100, 1600, -40},
                       {"time", 300, -592, 0.8},
                       {"zeus-cost(eta=0.5)", 250, 0, 0},
                       {"max-slowdown(1.15)", 200, 800, -4}};
  ASSERT_EQ(w["selectors"].size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const json& c = w["selectors"][i];
    SCOPED_TRACE(want[i].selector);
    EXPECT_EQ(c["selector"], want[i].selector);
    EXPECT_EQ(c["power_limit_w"].get<double>(), want[i].limit_w);
    EXPECT_NEAR(c["energy_saved_per_epoch_j"].get<double>(), want[i].energy_epoch_j, 0.5);
    EXPECT_NEAR(c["time_saved_per_epoch_s"].get<double>(), want[i].time_epoch_s, 1e-6);
    EXPECT_NEAR(c["energy_saved_run_j"].get<double>(), 2 * want[i].energy_epoch_j, 1.0);
    EXPECT_NEAR(c["time_saved_run_s"].get<double>(), 2 * want[i].time_epoch_s, 1e-6);
  }
  EXPECT_NEAR(w["selectors"][0]["energy_saved_percent"].get<double>(), 100.0 * 40 / 240, 0.01);
  EXPECT_NEAR(w["selectors"][0]["time_saved_percent"].get<double>(), -100.0, 1e-6);

  // The text report, from the saved profile this time (nothing is profiled, no limit changes).
  std::vector<std::string> text_args = TrainArgs({"--selector", "energy", "--observe", "--profile-path", profile});
  text_args.erase(std::find(text_args.begin(), text_args.end(), "--json"));
  ProcessResult text = testing::RunProcess(text_args, Env());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("observer mode: the optimal power limit would be 100 W (selector energy, from the "
                                  "profile file); the original limits were restored"));
  EXPECT_THAT(text.out, HasSubstr("baseline: 250 W, 240 J and 1 s per step"));
  EXPECT_THAT(text.out, HasSubstr("max-slowdown(1.15)     200"));
  EXPECT_EQ(LimitW(), 250);

  // `zeus what-if` on the profile the run saved: the same report.
  ProcessResult j = testing::RunProcess({ZEUS_TEST_CLI_PATH, "what-if", profile, "--steps-per-epoch", "40",
                                         "--epochs", "2", "--profile-steps", "5", "--max-slowdown", "1.15",
                                         "--baseline-w", "250", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(json::parse(j.out), w);

  const std::string svg = tmp_.File("what-if.svg");
  ProcessResult t = testing::RunProcess({ZEUS_TEST_CLI_PATH, "what-if", profile, "--steps-per-epoch", "40",
                                         "--epochs", "2", "--profile-steps", "5", "--svg", svg});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  // No --baseline-w: the highest limit, 300 W; energy then saves 54.8 J a step.
  EXPECT_THAT(t.out, HasSubstr("baseline: 300 W (the highest measured)"));
  EXPECT_THAT(t.out, HasSubstr("energy                 100"));
  const std::string chart = ReadFile(svg);
  EXPECT_THAT(chart, HasSubstr("<svg"));
  EXPECT_THAT(chart, HasSubstr("Pareto front"));
  EXPECT_THAT(chart, HasSubstr(">150 W</text>"));
  EXPECT_THAT(chart, HasSubstr("energy per step (J)"));
}

TEST(WhatIfCliTest, BadInputIsAClearErrorWithExitCode2) {
  testing::TempDir tmp;
  const std::string missing = tmp.File("missing.json");
  ProcessResult r = testing::RunProcess({ZEUS_TEST_CLI_PATH, "what-if", missing, "--steps-per-epoch", "10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.json: no such file"));

  const std::string malformed = tmp.Write("malformed.json", "{\"measurements\": [{\"power_limit\": 300}]");
  r = testing::RunProcess({ZEUS_TEST_CLI_PATH, "what-if", malformed, "--steps-per-epoch", "10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not valid JSON"));

  const std::string empty = tmp.Write("empty.json", "{\"measurements\": []}");
  r = testing::RunProcess({ZEUS_TEST_CLI_PATH, "what-if", empty, "--steps-per-epoch", "10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("\"measurements\" is empty"));
  EXPECT_EQ(r.out, "");

  const std::string good =
      tmp.Write("good.json", R"({"measurements": [{"power_limit": 300, "energy": 30, "time": 1}]})");
  r = testing::RunProcess({ZEUS_TEST_CLI_PATH, "what-if", good});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--steps-per-epoch is required"));
  r = testing::RunProcess({ZEUS_TEST_CLI_PATH, "what-if", good, "--steps-per-epoch", "0"});
  EXPECT_EQ(r.exit_code, 2);
  r = testing::RunProcess(
      {ZEUS_TEST_CLI_PATH, "what-if", good, "--steps-per-epoch", "10", "--svg", tmp.File("no/dir.svg")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--svg"));
  r = testing::RunProcess({ZEUS_TEST_CLI_PATH, "what-if", good, "--steps-per-epoch", "10"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = testing::RunProcess({ZEUS_TEST_CLI_PATH, "what-if", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--steps-per-epoch"));
}

}  // namespace
}  // namespace zeus
