// Copyright 2026 The Zeus C++ Authors.
//
// zeus-emulated-train against the NVML emulator on its manual clock: the
// chosen limit equals the optimum computed here by hand from the scenario's
// workload curve for every selector (boundaries included), the original
// limits are back after a normal end, SIGTERM, SIGINT and exceptions (read
// by this process, i.e. from another process than the one that set them),
// faults give clear messages while training goes on, and profile files are
// reused or rejected.

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "zeus/device/discovery.h"

namespace zeus {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using testing::ProcessResult;

// A workload curve: demand (W) and iteration time (s) at given limits (W).
struct Curve {
  std::vector<double> limits_w, power_w, iteration_s;
  static double Interp(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
    if (x <= xs.front()) return ys.front();
    if (x >= xs.back()) return ys.back();
    for (std::size_t i = 1; i < xs.size(); ++i) {
      if (x <= xs[i]) return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
    }
    return ys.back();
  }
  double DrawW(double limit_w) const { return std::min(Interp(limits_w, power_w, limit_w), limit_w); }
  double IterationS(double limit_w) const { return Interp(limits_w, iteration_s, limit_w); }
};

// Energy falls and time rises as the limit falls; the energy optimum is the
// minimum limit and the time optimum the maximum.
const Curve kCurve = {{100, 150, 200, 250, 300}, {100, 150, 200, 240, 260}, {2.0, 1.4, 1.1, 1.0, 0.98}};

json Gpu(const Curve& curve, double original_w = 300) {
  return {{"name", "Tesla V100-SXM2-32GB"},
          {"architecture", "volta"},
          {"min_power_limit_w", 100},
          {"max_power_limit_w", 300},
          {"default_power_limit_w", 300},
          {"power_limit_w", original_w},
          {"energy_counter", true},
          {"workload", {{"power_limits_w", curve.limits_w}, {"power_w", curve.power_w},
                        {"iteration_time_s", curve.iteration_s}}}};
}

// What the hand computation expects for one profiled limit.
struct Expected {
  double limit_w, energy_j, time_s;
};

class PowerLimitTrainTest : public ::testing::Test {
 protected:
  std::string Scenario(std::vector<json> gpus, json faults = json::array()) {
    json s = {{"clock", "manual"}, {"state_file", tmp_.File("state")}, {"gpus", gpus}, {"faults", faults}};
    scenario_ = tmp_.Write("scenario.json", s.dump());
    return scenario_;
  }

  std::vector<std::string> Args(std::vector<std::string> extra) const {
    std::vector<std::string> args = {ZEUS_TEST_TRAIN_PATH, "--epochs", "2", "--steps-per-epoch", "40",
                                     "--wait-steps", "1", "--warmup-steps", "2", "--profile-steps", "5",
                                     "--json"};
    if (std::find(extra.begin(), extra.end(), "--stride-w") == extra.end()) extra.insert(extra.end(), {"--stride-w", "50"});
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::map<std::string, std::optional<std::string>> Env() const {
    return {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
            {"ZEUS_EMULATOR_CONFIG", scenario_},
            {"CUDA_VISIBLE_DEVICES", std::nullopt}};
  }

  ProcessResult Train(std::vector<std::string> extra) { return testing::RunProcess(Args(std::move(extra)), Env()); }

  // The limits now in force, read by this process through the emulator's
  // shared state.
  std::vector<double> LimitsW() const {
    testing::ScopedEnv config("ZEUS_EMULATOR_CONFIG", scenario_);
    testing::ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::nullopt);
    device::GpuOptions options;
    options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
    auto gpus = device::OpenGpus(options);
    EXPECT_TRUE(gpus) << gpus.error().message();
    std::vector<double> limits;
    if (!gpus) return limits;
    for (std::size_t i = 0; i < (*gpus)->size(); ++i) limits.push_back((*gpus)->gpu(i).PowerLimitMw().value() / 1000.0);
    return limits;
  }

  static std::vector<Expected> Profile(const Curve& curve, std::vector<double> limits_w, int steps = 5) {
    std::vector<Expected> out;
    for (double p : limits_w) out.push_back({p, curve.DrawW(p) * curve.IterationS(p) * steps, curve.IterationS(p) * steps});
    return out;
  }

  static void ExpectMeasured(const json& out, const std::vector<Expected>& expected) {
    ASSERT_EQ(out["measurements"].size(), expected.size()) << out.dump(2);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const json& m = out["measurements"][i];
      EXPECT_EQ(m["power_limit_w"].get<double>(), expected[i].limit_w);
      EXPECT_NEAR(m["energy_j"].get<double>(), expected[i].energy_j, 0.005) << expected[i].limit_w;
      EXPECT_NEAR(m["time_s"].get<double>(), expected[i].time_s, 1e-9) << expected[i].limit_w;
    }
  }

  testing::TempDir tmp_;
  std::string scenario_;
};

// The selectors computed by hand (not with the library): argmin with ties to
// the higher (earlier) limit.
double ByHand(const std::string& selector, double value, const std::vector<Expected>& profile, int gpus = 1) {
  double best_w = profile.front().limit_w;
  double best = std::numeric_limits<double>::infinity();
  double max_w = 0;
  double reference_s = 0;
  for (const auto& e : profile) {
    if (e.limit_w > max_w) {
      max_w = e.limit_w;
      reference_s = e.time_s;
    }
  }
  for (const auto& e : profile) {
    double cost = 0;
    if (selector == "energy") cost = e.energy_j;
    if (selector == "time") cost = e.time_s;
    if (selector == "zeus-cost") cost = value * e.energy_j + (1 - value) * max_w * gpus * e.time_s;
    if (selector == "max-slowdown") cost = e.time_s <= value * reference_s ? e.limit_w : best + 1;
    if (cost < best) {
      best = cost;
      best_w = e.limit_w;
    }
  }
  return best_w;
}

struct SelectorCase {
  std::string selector;
  double value;     // eta or factor
  double stride_w;  // 60 leaves the minimum off the stride grid
  double expected_w;  // the hand computation must land here (boundary or interior)
};

// GoogleTest prints this in failure messages and --gtest_list_tests.
void PrintTo(const SelectorCase& c, std::ostream* os) {
  *os << "--selector " << c.selector << " (value " << c.value << ") --stride-w " << c.stride_w << " -> " << c.expected_w
      << " W";
}

class PowerLimitSelectorTest : public PowerLimitTrainTest, public ::testing::WithParamInterface<SelectorCase> {};

TEST_P(PowerLimitSelectorTest, ChoosesTheAnalyticOptimum) {
  const SelectorCase& c = GetParam();
  Scenario({Gpu(kCurve)});
  std::vector<std::string> extra = {"--selector", c.selector, "--stride-w", fmt::format("{}", c.stride_w)};
  if (c.selector == "zeus-cost") extra.insert(extra.end(), {"--eta", fmt::format("{}", c.value)});
  if (c.selector == "max-slowdown") extra.insert(extra.end(), {"--max-slowdown", fmt::format("{}", c.value)});
  ProcessResult r = Train(extra);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  std::vector<double> grid;
  for (double p = 300; p >= 100; p -= c.stride_w) grid.push_back(p);
  if (grid.back() != 100) grid.push_back(100);
  const auto profile = Profile(kCurve, grid);
  ExpectMeasured(out, profile);
  const double optimum_w = ByHand(c.selector, c.value, profile);
  EXPECT_EQ(optimum_w, c.expected_w);  // the case covers the boundary or interior it claims
  EXPECT_EQ(out["optimal_power_limit_w"].get<double>(), optimum_w) << r.err;
  EXPECT_EQ(out["state"], "done");
  // After the last step the original limit is back; the optimum ran until then.
  EXPECT_EQ(LimitsW(), std::vector<double>{300});
  // Steps after profiling ran at the optimum: total time = wait + profiling + rest.
  double expected_time_s = kCurve.IterationS(300);  // the wait step
  for (double p : grid) expected_time_s += 7 * kCurve.IterationS(p);
  expected_time_s += (80 - 1 - 7 * static_cast<double>(grid.size())) * kCurve.IterationS(optimum_w);
  EXPECT_NEAR(out["total_time_s"].get<double>(), expected_time_s, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    Selectors, PowerLimitSelectorTest,
    ::testing::Values(SelectorCase{"energy", 0, 50, 100},              // minimum limit
                      SelectorCase{"energy", 0, 60, 100},              // minimum off the stride grid
                      SelectorCase{"time", 0, 50, 300},                // maximum limit
                      SelectorCase{"zeus-cost", 0.5, 50, 250},         // interior
                      SelectorCase{"zeus-cost", 1.0, 50, 100},         // all energy: minimum
                      SelectorCase{"zeus-cost", 0.0, 50, 300},         // all time: maximum
                      SelectorCase{"max-slowdown", 1.15, 50, 200},     // interior
                      SelectorCase{"max-slowdown", 1.0, 50, 300},      // no slowdown: maximum
                      SelectorCase{"max-slowdown", 2.5, 60, 100}),     // anything goes: minimum
    [](const auto& test_info) {
      const SelectorCase& c = test_info.param;
      std::string name = fmt::format("{}_{}_stride{}", c.selector, c.value, c.stride_w);
      std::replace_if(name.begin(), name.end(), [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)); }, '_');
      return name;
    });

TEST_F(PowerLimitTrainTest, RestoresTheOriginalLimitAfterANormalEnd) {
  Scenario({Gpu(kCurve, 275), Gpu(kCurve, 225)});
  ProcessResult r = Train({"--selector", "energy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["optimal_power_limit_w"], 100);
  EXPECT_EQ(LimitsW(), (std::vector<double>{275, 225}));
}

TEST_F(PowerLimitTrainTest, ProfileFileIsWrittenThenReusedWithoutProfiling) {
  Scenario({Gpu(kCurve)});
  const std::string profile = tmp_.File("profile.json");
  ProcessResult first = Train({"--profile-path", profile});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const json a = json::parse(first.out);
  EXPECT_FALSE(a["profile_loaded"].get<bool>());
  std::ifstream in(profile);
  ASSERT_TRUE(in.good());
  const json file = json::parse(in);
  EXPECT_EQ(file["measurements"].size(), 5u);
  EXPECT_EQ(file["gpu_model"], "Tesla V100-SXM2-32GB");

  ProcessResult second = Train({"--profile-path", profile});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const json b = json::parse(second.out);
  EXPECT_TRUE(b["profile_loaded"].get<bool>());
  EXPECT_EQ(b["optimal_power_limit_w"], a["optimal_power_limit_w"]);
  EXPECT_THAT(second.err, HasSubstr("no profiling"));
  // Every step ran at the optimum from the first one.
  EXPECT_NEAR(b["total_time_s"].get<double>(), 80 * kCurve.IterationS(a["optimal_power_limit_w"].get<double>()), 1e-6);
}

TEST_F(PowerLimitTrainTest, AMismatchedProfileIsRejected) {
  Scenario({Gpu(kCurve)});
  const std::string profile = tmp_.Write("profile.json", R"({"measurements": [
      {"power_limit": 400, "energy": 10.0, "time": 1.0}, {"power_limit": 150, "energy": 9.0, "time": 1.1}],
      "gpu_model": "NVIDIA H100 80GB HBM3", "min_power_limit_w": 150, "max_power_limit_w": 400})");
  ProcessResult r = Train({"--profile-path", profile});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: power-limit profile " + profile + " does not match this job"));
  EXPECT_THAT(r.err, HasSubstr("NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(LimitsW(), std::vector<double>{300});
}

TEST_F(PowerLimitTrainTest, WithoutPermissionTrainingContinuesUnoptimized) {
  Scenario({Gpu(kCurve, 250)},
           json::array({{{"function", "nvmlDeviceSetPowerManagementLimit"}, {"return", "NO_PERMISSION"}}}));
  ProcessResult r = Train({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["state"], "disabled");
  EXPECT_TRUE(out["optimal_power_limit_w"].is_null());
  EXPECT_THAT(r.err, HasSubstr("no permission to change GPU power limits"));
  EXPECT_THAT(r.err, HasSubstr("run as root (sudo), or grant CAP_SYS_ADMIN"));
  EXPECT_THAT(r.err, HasSubstr("set ZEUSD_SOCK_PATH"));  // the daemon is the way out
  EXPECT_THAT(r.err, HasSubstr("training continues at the original power limits, unoptimized"));
  EXPECT_EQ(out["steps"], 80);
  EXPECT_NEAR(out["total_time_s"].get<double>(), 80 * kCurve.IterationS(250), 1e-6);
  EXPECT_EQ(LimitsW(), std::vector<double>{250});
}

TEST_F(PowerLimitTrainTest, AGpuLostMidProfileStopsOptimizingAndRestores) {
  // GPU 1's energy counter answers the first 4 reads (opening the GPUs,
  // the epoch window's begin, the 300 W window's begin and end), then the
  // GPU is lost: the second limit's window fails.
  Scenario({Gpu(kCurve, 275), Gpu(kCurve, 275)},
           json::array({{{"function", "nvmlDeviceGetTotalEnergyConsumption"}, {"gpu", 1}, {"return", "GPU_IS_LOST"},
                         {"after_calls", 4}}}));
  // Opening the GPUs makes no counter-check reads (issue 37), so the count holds.
  ProcessResult r = testing::RunProcess(Args({}), Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["state"], "disabled");
  EXPECT_EQ(out["measurements"].size(), 1u);
  EXPECT_THAT(out["optimizer_error"].get<std::string>(), HasSubstr("measuring GPU 1 at 250 W"));
  EXPECT_THAT(r.err, HasSubstr("GPU_IS_LOST"));
  EXPECT_EQ(out["steps"], 80);
  EXPECT_EQ(LimitsW(), (std::vector<double>{275, 275}));
}

TEST_F(PowerLimitTrainTest, ALimitRejectedByTheDriverIsSkipped) {
  // The first call (the permission probe) succeeds; the driver then rejects
  // exactly one limit change. That limit is skipped with a message, and every
  // other limit of the 50 W grid is still profiled.
  Scenario({Gpu(kCurve)}, json::array({{{"function", "nvmlDeviceSetPowerManagementLimit"},
                                         {"return", "INVALID_ARGUMENT"}, {"after_calls", 1},
                                         {"max_failures", 1}}}));
  ProcessResult r = Train({"--selector", "energy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  std::vector<double> measured;
  for (const json& m : out["measurements"]) measured.push_back(m["power_limit_w"].get<double>());
  std::vector<double> skipped;
  for (double w : {300.0, 250.0, 200.0, 150.0, 100.0}) {
    if (std::find(measured.begin(), measured.end(), w) == measured.end()) skipped.push_back(w);
  }
  ASSERT_EQ(skipped.size(), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr(fmt::format("the driver rejected the power limit {} W", skipped[0])));
  EXPECT_EQ(measured.size(), 4u);
  EXPECT_EQ(LimitsW(), std::vector<double>{300});  // restored
}

TEST_F(PowerLimitTrainTest, AnUncaughtExceptionRestoresBeforeAborting) {
  Scenario({Gpu(kCurve, 275)});
  ProcessResult r = Train({"--throw-at-step", "10"});  // the 250 W limit is in force then
  EXPECT_EQ(r.exit_code, 128 + SIGABRT) << r.err;
  EXPECT_THAT(r.err, HasSubstr("std::terminate"));
  EXPECT_THAT(r.err, HasSubstr("original power limits restored"));
  EXPECT_EQ(LimitsW(), std::vector<double>{275});
}

TEST_F(PowerLimitTrainTest, ACaughtExceptionRestoresThroughTheDestructor) {
  Scenario({Gpu(kCurve, 275)});
  ProcessResult r = Train({"--throw-at-step", "10", "--catch-exception"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: training failed: failure at step 10"));
  EXPECT_EQ(LimitsW(), std::vector<double>{275});
}

// Starts zeus-emulated-train paused at a step, checks the limit was changed,
// signals it and checks the limit came back.
class PowerLimitSignalTest : public PowerLimitTrainTest, public ::testing::WithParamInterface<int> {};

TEST_P(PowerLimitSignalTest, RestoresOnTheSignalAndEndsByIt) {
  const int signo = GetParam();
  Scenario({Gpu(kCurve, 275)});
  std::vector<std::string> args = Args({"--pause-at-step", "10"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int err_pipe[2];
  ASSERT_EQ(pipe(err_pipe), 0);
  // Built before fork: the child may call only async-signal-safe functions.
  std::vector<std::string> env_strings = testing::MergedEnvironment(Env());
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << "fork failed";
  if (pid == 0) {
    dup2(err_pipe[1], 2);
    close(err_pipe[0]);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(err_pipe[1]);
  // The child is killed and reaped on every early return.
  struct Reaper {
    pid_t pid;
    bool armed = true;
    ~Reaper() {
      if (!armed) return;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reaper{pid};
  // Readiness: the line it prints once paused, with the optimizer's limit in
  // force. A generous deadline, so a hang fails here rather than at ctest's.
  std::string err;
  char buffer[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (err.find("paused at step 10") == std::string::npos) {
    const auto left_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd readable{err_pipe[0], POLLIN, 0};
    if (left_ms <= 0 || poll(&readable, 1, static_cast<int>(left_ms)) <= 0) break;
    const ssize_t n = read(err_pipe[0], buffer, sizeof buffer);
    if (n <= 0) break;
    err.append(buffer, static_cast<std::size_t>(n));
  }
  ASSERT_THAT(err, HasSubstr("paused at step 10")) << "no pause within 60 s";
  EXPECT_EQ(LimitsW(), std::vector<double>{250});  // the optimizer changed it
  kill(pid, signo);
  for (ssize_t n; (n = read(err_pipe[0], buffer, sizeof buffer)) > 0;) err.append(buffer, static_cast<std::size_t>(n));
  close(err_pipe[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  reaper.armed = false;
  ASSERT_TRUE(WIFSIGNALED(status)) << err;
  EXPECT_EQ(WTERMSIG(status), signo);
  EXPECT_THAT(err, HasSubstr("original power limits restored"));
  EXPECT_EQ(LimitsW(), std::vector<double>{275});
}

INSTANTIATE_TEST_SUITE_P(Signals, PowerLimitSignalTest, ::testing::Values(SIGTERM, SIGINT),
                         [](const auto& test_info) { return test_info.param == SIGTERM ? "SIGTERM" : "SIGINT"; });

}  // namespace
}  // namespace zeus
