// Copyright 2026 The Zeus C++ Authors.
//
// The optimizer over FakeGpus and a FakeClock: each training step advances
// the clock by the step time of a known curve at the limit in force, so
// every measurement and every choice is known exactly.

#include "zeus/runtime/power_limit_optimizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <ostream>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "testing/fake_clock.h"
#include "testing/fake_gpu.h"
#include "testing/test_monitor.h"
#include "testing/temp_dir.h"
#include "zeus/base/log.h"
#include "zeus/runtime/power_limit_profile.h"

namespace zeus::runtime {
namespace {

using std::chrono::duration;
using std::chrono::duration_cast;
using std::chrono::nanoseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using State = PowerLimitOptimizerState;

// Step time (s) at a limit (W): a curve that makes energy fall and time rise
// as the limit falls. Demand is a constant 300 W, so the draw is the limit.
std::map<std::uint32_t, double> kStepTimeS = {
    {250'000, 1.0}, {200'000, 1.1}, {150'000, 1.4}, {100'000, 2.0}, {130'000, 1.6}, {190'000, 1.2}};


class Job {
 public:
  explicit Job(int gpus = 1, std::uint32_t original_mw = 250'000) {
    std::vector<std::unique_ptr<device::Gpu>> list;
    for (int i = 0; i < gpus; ++i) {
      testing::FakeGpuConfig config;
      config.power_w = 300;
      config.default_power_limit_mw = original_mw;
      auto gpu = std::make_unique<testing::FakeGpu>(config, clock_, static_cast<unsigned int>(i));
      fakes_.push_back(gpu.get());
      list.push_back(std::move(gpu));
    }
    gpus_ = std::make_unique<device::GpuSet>("test", std::move(list));
    monitor_ = testing::MakeTestMonitor(gpus_.get(), &clock_);
  }

  PowerLimitOptimizerOptions Options() {
    PowerLimitOptimizerOptions o;
    o.wait_steps = 1;
    o.warmup_steps = 2;
    o.profile_steps = 3;
    o.power_limit_stride_w = 50;
    o.restore_on_exit = false;
    o.log = [this](std::string_view line) { log_.emplace_back(line); };
    return o;
  }

  // One training step: hooks around a step whose length depends on GPU 0's limit.
  void Step(PowerLimitOptimizer& optimizer) {
    optimizer.OnStepBegin();
    const std::uint32_t limit = fakes_[0]->PowerLimitMw().value();
    clock_.Advance(duration_cast<nanoseconds>(duration<double>(kStepTimeS.at(limit))));
    optimizer.OnStepEnd();
  }

  std::string Log() const {
    std::string all;
    for (const auto& l : log_) all += l + "\n";
    return all;
  }

  testing::FakeClock clock_;
  std::vector<testing::FakeGpu*> fakes_;
  std::unique_ptr<device::GpuSet> gpus_;
  std::unique_ptr<monitor::Monitor> monitor_;
  std::vector<std::string> log_;
};

TEST(PowerLimitOptimizerTest, ProfilesEveryLimitIncludingTheMinimum) {
  Job job;
  auto o = job.Options();
  o.power_limit_stride_w = 60;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  EXPECT_THAT(optimizer->power_limits_mw(), ElementsAre(250'000, 190'000, 130'000, 100'000));
  o.power_limit_stride_w = 50;
  auto even = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  EXPECT_THAT(even->power_limits_mw(), ElementsAre(250'000, 200'000, 150'000, 100'000));
}

TEST(PowerLimitOptimizerTest, FollowsTheStateMachineStepByStep) {
  Job job;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, job.Options()).value();
  EXPECT_EQ(optimizer->state(), State::kReady);
  EXPECT_THAT(job.fakes_[0]->power_limit_calls(), ElementsAre(250'000));  // the permission probe
  std::vector<State> states;
  for (int i = 0; i < 1 + 4 * 5 + 1; ++i) {
    job.Step(*optimizer);
    states.push_back(optimizer->state());
  }
  // 1 wait step; then per limit 2 warmup steps (the first sets the limit)
  // and 3 profiled steps; the step that closes the last window chooses.
  const std::vector<State> expected = {
      State::kReady,                                                                          //
      State::kWarmup, State::kWarmup, State::kProfiling, State::kProfiling, State::kProfiling,  // 250 W
      State::kWarmup, State::kWarmup, State::kProfiling, State::kProfiling, State::kProfiling,  // 200 W
      State::kWarmup, State::kWarmup, State::kProfiling, State::kProfiling, State::kProfiling,  // 150 W
      State::kWarmup, State::kWarmup, State::kProfiling, State::kProfiling, State::kProfiling,  // 100 W
      State::kDone};
  EXPECT_EQ(states, expected);
  // 250 W is already in force: only the changes are calls.
  EXPECT_THAT(job.fakes_[0]->power_limit_calls(), ElementsAre(250'000, 200'000, 150'000, 100'000, 200'000));
  ASSERT_EQ(optimizer->measurements().size(), 4u);
  for (const auto& m : optimizer->measurements()) {
    const double step_s = kStepTimeS.at(static_cast<std::uint32_t>(m.power_limit_w * 1000));
    EXPECT_NEAR(m.time_s, 3 * step_s, 1e-9) << m.power_limit_w;
    EXPECT_NEAR(m.energy_j, m.power_limit_w * 3 * step_s, 2e-3) << m.power_limit_w;
  }
  // Zeus cost, eta 0.5, max 250 W: 250 -> 250, 200 -> 247.5, 150 -> 280, 100 -> 350 (per step).
  EXPECT_EQ(optimizer->optimal_power_limit_mw(), 200'000u);
  EXPECT_EQ(job.fakes_[0]->PowerLimitMw().value(), 200'000u);
  EXPECT_THAT(job.Log(), HasSubstr("optimal power limit 200 W"));
}

struct SelectorCase {
  OptimumSelector selector;
  std::uint32_t expected_mw;
};

// GoogleTest prints this in failure messages and --gtest_list_tests.
void PrintTo(const SelectorCase& c, std::ostream* os) {
  *os << c.selector.Describe() << " -> " << c.expected_mw / 1000 << " W";
}

// "zeus-cost(eta=0.5)" -> "zeus_cost_eta_0_5": a test name of [A-Za-z0-9_].
std::string SelectorCaseName(const ::testing::TestParamInfo<SelectorCase>& info) {
  std::string name;
  for (char c : info.param.selector.Describe()) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  while (!name.empty() && name.back() == '_') name.pop_back();
  return name;
}

class PowerLimitOptimizerSelectorTest : public ::testing::TestWithParam<SelectorCase> {};

TEST_P(PowerLimitOptimizerSelectorTest, ChoosesTheAnalyticOptimum) {
  Job job;
  auto o = job.Options();
  o.selector = GetParam().selector;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  for (int i = 0; i < 30; ++i) job.Step(*optimizer);
  ASSERT_EQ(optimizer->state(), State::kDone);
  // Energy per step = limit x time: 250, 220, 210, 200 J. Time: 1, 1.1, 1.4, 2 s.
  EXPECT_EQ(optimizer->optimal_power_limit_mw(), GetParam().expected_mw);
  EXPECT_EQ(job.fakes_[0]->PowerLimitMw().value(), GetParam().expected_mw);
}

INSTANTIATE_TEST_SUITE_P(Selectors, PowerLimitOptimizerSelectorTest,
                         ::testing::Values(SelectorCase{OptimumSelector::Energy(), 100'000},
                                           SelectorCase{OptimumSelector::Time(), 250'000},
                                           SelectorCase{OptimumSelector::ZeusCost(0.5), 200'000},
                                           SelectorCase{OptimumSelector::ZeusCost(0.9), 150'000},
                                           SelectorCase{OptimumSelector::MaxSlowdown(1.1), 200'000},
                                           SelectorCase{OptimumSelector::MaxSlowdown(1.05), 250'000}),
                         SelectorCaseName);

TEST(PowerLimitOptimizerTest, ACustomSelectorChoosesTheLimit) {
  Job job;
  auto o = job.Options();
  std::vector<double> seen_limits_w;
  // Energy picks 100 W, Time 250 W, ZeusCost(0.5) 200 W: 150 W is this selector's alone.
  o.selector = OptimumSelector::Custom(
      [&](std::span<const optimizer::PowerLimitMeasurement> measurements, int) -> Result<double> {
        for (const auto& m : measurements) seen_limits_w.push_back(m.power_limit_w);
        return 150.0;
      },
      "Fixed150");
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  for (int i = 0; i < 30; ++i) job.Step(*optimizer);
  ASSERT_EQ(optimizer->state(), State::kDone);
  EXPECT_THAT(seen_limits_w, ElementsAre(250, 200, 150, 100));
  EXPECT_EQ(optimizer->optimal_power_limit_mw(), 150'000u);
  EXPECT_EQ(job.fakes_[0]->PowerLimitMw().value(), 150'000u);
  EXPECT_THAT(job.Log(), HasSubstr("selector custom(Fixed150)"));
}

TEST(PowerLimitOptimizerTest, ACustomSelectorsErrorDisablesAndRestores) {
  Job job(1, 200'000);
  auto o = job.Options();
  o.selector = OptimumSelector::Custom(
      [](std::span<const optimizer::PowerLimitMeasurement>, int) -> Result<double> {
        return Fail(ErrorCode::kInternal, "the user's selector raised");
      },
      "Raising");
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  for (int i = 0; i < 30; ++i) job.Step(*optimizer);
  EXPECT_EQ(optimizer->state(), State::kDisabled);
  EXPECT_THAT(optimizer->disabled_reason()->message(), HasSubstr("the user's selector raised"));
  EXPECT_EQ(job.fakes_[0]->PowerLimitMw().value(), 200'000u);
  EXPECT_TRUE(optimizer->restored());
}

TEST(PowerLimitOptimizerTest, ZeroWarmupStepsProfilesAtOnce) {
  Job job;
  auto o = job.Options();
  o.warmup_steps = 0;
  o.wait_steps = 0;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  job.Step(*optimizer);
  EXPECT_EQ(optimizer->state(), State::kProfiling);
  for (int i = 0; i < 12; ++i) job.Step(*optimizer);
  EXPECT_EQ(optimizer->state(), State::kDone);
  EXPECT_EQ(optimizer->measurements().size(), 4u);
  EXPECT_NEAR(optimizer->measurements()[1].time_s, 3 * 1.1, 1e-9);
}

TEST(PowerLimitOptimizerTest, AnEpochEndingMidProfileRetriesThatLimit) {
  Job job;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, job.Options()).value();
  for (int i = 0; i < 10; ++i) job.Step(*optimizer);  // 250 W done, 200 W in its second profiled step
  ASSERT_EQ(optimizer->state(), State::kProfiling);
  ASSERT_EQ(job.fakes_[0]->PowerLimitMw().value(), 200'000u);
  optimizer->OnEpochEnd();
  EXPECT_EQ(optimizer->state(), State::kReady);
  EXPECT_TRUE(job.monitor_->OpenWindows().empty());
  EXPECT_EQ(job.fakes_[0]->PowerLimitMw().value(), 250'000u);  // the original, between epochs
  EXPECT_THAT(job.Log(), HasSubstr("profiled again"));
  for (int i = 0; i < 30; ++i) job.Step(*optimizer);
  ASSERT_EQ(optimizer->state(), State::kDone);
  ASSERT_EQ(optimizer->measurements().size(), 4u);
  EXPECT_EQ(optimizer->measurements()[1].power_limit_w, 200);
  EXPECT_NEAR(optimizer->measurements()[1].time_s, 3 * 1.1, 1e-9);  // the cancelled steps are not counted
}

TEST(PowerLimitOptimizerTest, RestoresTheOriginalLimitNotTheMaximum) {
  Job job(2, 200'000);
  {
    auto o = job.Options();
    o.selector = OptimumSelector::Time();
    auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
    for (int i = 0; i < 30; ++i) job.Step(*optimizer);
    ASSERT_EQ(optimizer->state(), State::kDone);
    ASSERT_NE(job.fakes_[1]->PowerLimitMw().value(), 200'000u);
    EXPECT_TRUE(optimizer->OnTrainEnd());
    EXPECT_TRUE(optimizer->restored());
    EXPECT_EQ(job.fakes_[0]->PowerLimitMw().value(), 200'000u);
    EXPECT_EQ(job.fakes_[1]->PowerLimitMw().value(), 200'000u);
    const auto calls = job.fakes_[0]->power_limit_calls().size();
    job.Step(*optimizer);  // after the end, hooks change nothing
    optimizer->OnEpochEnd();
    EXPECT_EQ(job.fakes_[0]->power_limit_calls().size(), calls);
  }
}

TEST(PowerLimitOptimizerTest, DestructionMidProfileRestoresAndClosesTheWindow) {
  Job job(2, 200'000);
  {
    auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, job.Options()).value();
    for (int i = 0; i < 4; ++i) job.Step(*optimizer);
    ASSERT_EQ(optimizer->state(), State::kProfiling);
    ASSERT_EQ(job.fakes_[0]->PowerLimitMw().value(), 250'000u);
  }
  EXPECT_EQ(job.fakes_[0]->PowerLimitMw().value(), 200'000u);
  EXPECT_EQ(job.fakes_[1]->PowerLimitMw().value(), 200'000u);
  EXPECT_TRUE(job.monitor_->OpenWindows().empty());
}

TEST(PowerLimitOptimizerTest, WithoutPermissionTrainingGoesOnUnoptimized) {
  Job job;
  job.fakes_[0]->FailWith("SetPowerLimitMw", Error(ErrorCode::kPermissionDenied, "power limit needs root"));
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, job.Options());
  ASSERT_TRUE(optimizer) << optimizer.error().message();
  EXPECT_EQ((*optimizer)->state(), State::kDisabled);
  ASSERT_TRUE((*optimizer)->disabled_reason());
  EXPECT_EQ((*optimizer)->disabled_reason()->code(), ErrorCode::kPermissionDenied);
  const std::string& message = (*optimizer)->disabled_reason()->message();
  EXPECT_THAT(message, HasSubstr("no permission to change GPU power limits"));
  EXPECT_THAT(message, HasSubstr("CAP_SYS_ADMIN"));
  EXPECT_THAT(message, HasSubstr("run as root (sudo)"));
  EXPECT_THAT(message, HasSubstr("run zeusd (as root) and set ZEUSD_SOCK_PATH"));  // the daemon is the way out
  EXPECT_THAT(job.Log(), HasSubstr("training continues at the original power limits, unoptimized"));
  for (int i = 0; i < 30; ++i) job.Step(**optimizer);
  EXPECT_EQ(job.fakes_[0]->power_limit_calls().size(), 1u);  // only the probe
  EXPECT_TRUE(job.monitor_->OpenWindows().empty());
}

// Without options.log, records go to the process's log seam: events at info
// level, the Disabled reason once, as a user warning (Python: a UserWarning).
TEST(PowerLimitOptimizerTest, WithoutALogFunctionRecordsGoToTheLogSeam) {
  struct Seen {
    LogLevel level;
    std::string component;
    std::string message;
    bool user_warning;
  };
  std::mutex mu;
  std::vector<Seen> seen;
  LogSink previous = SetLogSink([&](const LogRecord& r) {
    std::lock_guard lock(mu);
    seen.push_back({r.level, std::string(r.component), std::string(r.message), r.user_warning});
  });
  {
    Job job;
    PowerLimitOptimizerOptions options = job.Options();
    options.log = nullptr;
    job.fakes_[0]->FailWith("SetPowerLimitMw", Error(ErrorCode::kPermissionDenied, "power limit needs root"));
    auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, options);
    ASSERT_TRUE(optimizer) << optimizer.error().message();
    for (int i = 0; i < 30; ++i) job.Step(**optimizer);
    EXPECT_TRUE((*optimizer)->OnTrainEnd());
  }
  {
    Job job;
    PowerLimitOptimizerOptions options = job.Options();
    options.log = nullptr;
    auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, options);
    ASSERT_TRUE(optimizer) << optimizer.error().message();
    for (int i = 0; i < 30; ++i) job.Step(**optimizer);
  }
  SetLogSink(previous);
  std::size_t advice = 0;
  bool will_profile = false;
  for (const Seen& r : seen) {
    EXPECT_EQ(r.component, "power-limit-optimizer");
    if (r.message.find("CAP_SYS_ADMIN") != std::string::npos) {
      ++advice;
      EXPECT_TRUE(r.user_warning);
      EXPECT_EQ(r.level, LogLevel::kWarning);
      EXPECT_THAT(r.message, HasSubstr("the power-limit optimizer is disabled: no permission"));
    } else {
      EXPECT_FALSE(r.user_warning) << r.message;
    }
    if (r.message.starts_with("will profile")) {
      will_profile = true;
      EXPECT_EQ(r.level, LogLevel::kInfo);
    }
  }
  EXPECT_EQ(advice, 1u);
  EXPECT_TRUE(will_profile);
}

// NVML's own error already says how to get the permission: the reason adds
// only the daemon, so the advice is not given twice.
TEST(PowerLimitOptimizerTest, APermissionAdviceIsGivenOnce) {
  Job job;
  job.fakes_[0]->FailWith("SetPowerLimitMw",
                          Error(ErrorCode::kPermissionDenied,
                                "changing the power limit needs root or CAP_SYS_ADMIN; run as root (sudo), or grant "
                                "CAP_SYS_ADMIN (e.g. docker run --cap-add SYS_ADMIN)"));
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, job.Options());
  ASSERT_TRUE(optimizer) << optimizer.error().message();
  ASSERT_TRUE((*optimizer)->disabled_reason());
  const std::string& message = (*optimizer)->disabled_reason()->message();
  EXPECT_THAT(message, ::testing::StartsWith("no permission to change GPU power limits through "));
  const auto count = [&](std::string_view needle) {
    std::size_t n = 0;
    for (auto at = message.find(needle); at != std::string::npos; at = message.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("run as root (sudo)"), 1u) << message;
  EXPECT_EQ(count("ZEUSD_SOCK_PATH"), 1u) << message;
  // The log says it once too.
  EXPECT_EQ(job.Log().find("run as root (sudo)"), job.Log().rfind("run as root (sudo)")) << job.Log();
}

TEST(PowerLimitOptimizerTest, ALostGpuMidProfileDisablesAndRestores) {
  Job job(2, 250'000);
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, job.Options()).value();
  for (int i = 0; i < 10; ++i) job.Step(*optimizer);  // profiling 200 W
  ASSERT_EQ(optimizer->state(), State::kProfiling);
  job.fakes_[1]->FailWith("TotalEnergyMj", Error(ErrorCode::kDeviceLost, "GPU 1 fell off the bus"));
  for (int i = 0; i < 2; ++i) job.Step(*optimizer);
  EXPECT_EQ(optimizer->state(), State::kDisabled);
  EXPECT_THAT(optimizer->disabled_reason()->message(), HasSubstr("fell off the bus"));
  EXPECT_EQ(job.fakes_[0]->PowerLimitMw().value(), 250'000u);
  EXPECT_EQ(job.fakes_[1]->PowerLimitMw().value(), 250'000u);
  EXPECT_TRUE(optimizer->restored());
}

TEST(PowerLimitOptimizerTest, ARejectedLimitIsSkippedAndProfilingGoesOn) {
  Job job;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, job.Options()).value();
  for (int i = 0; i < 6; ++i) job.Step(*optimizer);  // 250 W profiled up to its last step
  job.fakes_[0]->FailWith("SetPowerLimitMw", Error(ErrorCode::kInvalidArgument, "the driver rejected the value"));
  job.Step(*optimizer);  // the 250 W window ends; setting 200 W fails
  job.fakes_[0]->ClearFailures();
  for (int i = 0; i < 30; ++i) job.Step(*optimizer);
  ASSERT_EQ(optimizer->state(), State::kDone);
  std::vector<double> limits;
  for (const auto& m : optimizer->measurements()) limits.push_back(m.power_limit_w);
  EXPECT_THAT(limits, ElementsAre(250, 150, 100));
  EXPECT_THAT(job.Log(), HasSubstr("the driver rejected the power limit 200 W"));
  // Zeus cost over 250, 150, 100 W: 250 W wins.
  EXPECT_EQ(optimizer->optimal_power_limit_mw(), 250'000u);
}

TEST(PowerLimitOptimizerTest, SavesTheProfileAndReusesIt) {
  testing::TempDir tmp;
  const std::string path = tmp.File("profile.json");
  std::vector<optimizer::PowerLimitMeasurement> first;
  {
    Job job;
    auto o = job.Options();
    o.profile_path = path;
    auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
    for (int i = 0; i < 30; ++i) job.Step(*optimizer);
    ASSERT_EQ(optimizer->state(), State::kDone);
    first = optimizer->measurements();
  }
  auto saved = LoadPowerLimitProfile(path);
  ASSERT_TRUE(saved) << saved.error().message();
  EXPECT_EQ(*saved->gpu_model, "Fake V100");
  EXPECT_EQ(*saved->gpu_count, 1);

  Job job;
  auto o = job.Options();
  o.profile_path = path;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  EXPECT_TRUE(optimizer->profile_loaded());
  EXPECT_EQ(optimizer->state(), State::kDone);
  EXPECT_EQ(optimizer->optimal_power_limit_mw(), 200'000u);
  EXPECT_THAT(job.fakes_[0]->power_limit_calls(), ElementsAre(250'000, 200'000));  // probe, optimum
  ASSERT_EQ(optimizer->measurements().size(), first.size());
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_DOUBLE_EQ(optimizer->measurements()[i].energy_j, first[i].energy_j);
}

// Observer mode: 2 GPUs at 200 W; per GPU the draw is the limit, so a
// 3-step window at L takes 3 t(L) s and 2 x L x 3 t(L) J:
// 250 W 1500 J, 200 W 1320 J, 150 W 1260 J, 100 W 1200 J. Energy picks 100 W.
TEST(PowerLimitOptimizerTest, ObserverModeProfilesThenKeepsTheOriginalLimit) {
  Job job(2, 200'000);
  auto o = job.Options();
  o.selector = OptimumSelector::Energy();
  o.observer_mode = true;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  EXPECT_TRUE(optimizer->observer_mode());
  for (int i = 0; i < 30; ++i) job.Step(*optimizer);
  ASSERT_EQ(optimizer->state(), State::kDone);
  EXPECT_EQ(optimizer->optimal_power_limit_mw(), 100'000u);
  ASSERT_EQ(optimizer->measurements().size(), 4u);
  EXPECT_NEAR(optimizer->measurements()[3].energy_j, 1200, 1e-6);
  // Profiled every limit, then straight back to the original; 100 W is never kept.
  EXPECT_THAT(job.fakes_[0]->power_limit_calls(), ElementsAre(200'000, 250'000, 200'000, 150'000, 100'000, 200'000));
  EXPECT_EQ(job.fakes_[1]->PowerLimitMw().value(), 200'000u);
  EXPECT_THAT(job.Log(), HasSubstr("observer mode: the optimal power limit would be 100 W"));
  const auto calls = job.fakes_[0]->power_limit_calls().size();
  for (int i = 0; i < 10; ++i) job.Step(*optimizer);
  EXPECT_EQ(job.fakes_[0]->power_limit_calls().size(), calls);
}

TEST(PowerLimitOptimizerTest, ObserverModeWithAProfileChangesNoLimit) {
  testing::TempDir tmp;
  const std::string path = tmp.File("profile.json");
  PowerLimitProfileFile file;
  file.measurements = {{250, 1500, 3}, {200, 1320, 3.3}, {150, 1260, 4.2}, {100, 1200, 6}};
  ASSERT_TRUE(SavePowerLimitProfile(path, file));
  Job job(1, 200'000);
  auto o = job.Options();
  o.selector = OptimumSelector::Energy();
  o.observer_mode = true;
  o.profile_path = path;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  EXPECT_TRUE(optimizer->profile_loaded());
  EXPECT_EQ(optimizer->state(), State::kDone);
  EXPECT_EQ(optimizer->optimal_power_limit_mw(), 100'000u);
  EXPECT_THAT(job.fakes_[0]->power_limit_calls(), ElementsAre(200'000));  // the permission probe only
}

TEST(PowerLimitOptimizerTest, AMismatchedProfileIsAnError) {
  testing::TempDir tmp;
  PowerLimitProfileFile file;
  file.measurements = {{250, 1, 1}, {100, 1, 2}};
  file.gpu_model = "NVIDIA A100-SXM4-40GB";
  file.constraints_mw = device::PowerLimitConstraints{100'000, 250'000};
  ASSERT_TRUE(SavePowerLimitProfile(tmp.File("p.json"), file));
  Job job;
  auto o = job.Options();
  o.profile_path = tmp.File("p.json");
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o);
  ASSERT_FALSE(optimizer);
  EXPECT_EQ(optimizer.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(optimizer.error().message(), HasSubstr("NVIDIA A100-SXM4-40GB"));
  EXPECT_THAT(job.fakes_[0]->power_limit_calls(), ElementsAre(250'000));  // nothing changed
}

TEST(PowerLimitOptimizerTest, RejectsBadOptionsAndMixedGpus) {
  Job job;
  auto o = job.Options();
  o.profile_steps = 0;
  EXPECT_EQ(PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).error().code(), ErrorCode::kInvalidArgument);
  o = job.Options();
  o.warmup_steps = -1;
  EXPECT_FALSE(PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o));
  o = job.Options();
  o.power_limit_stride_w = 0;
  EXPECT_THAT(PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).error().message(), HasSubstr("stride"));
  o = job.Options();
  o.selector = OptimumSelector::ZeusCost(2);
  EXPECT_THAT(PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).error().message(), HasSubstr("eta"));

  testing::FakeClock clock;
  std::vector<std::unique_ptr<device::Gpu>> list;
  testing::FakeGpuConfig a;
  testing::FakeGpuConfig b;
  b.max_power_limit_mw = 300'000;
  list.push_back(std::make_unique<testing::FakeGpu>(a, clock, 0));
  list.push_back(std::make_unique<testing::FakeGpu>(b, clock, 1));
  device::GpuSet mixed("test", std::move(list));
  auto monitor = monitor::Monitor::Create(&mixed, nullptr, {}).value();
  auto error = PowerLimitOptimizer::Create(mixed, *monitor, job.Options()).error();
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(error.message(), HasSubstr("same power-limit constraints"));
}

// Stands for a second rank that measured `peer_energy_j` and `peer_time_s`
// in every window and, optionally, failed.
class PeerCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 2; }
  Status AllReduce(std::span<double> values, ReduceOp op) override {
    calls.push_back(values.size());
    if (values.size() == 1 && op == ReduceOp::kSum && calls.size() == 2) {
      values[0] += peer_gpus;  // the GPU count at Create
      return OkStatus();
    }
    if (values.size() == 3 && op == ReduceOp::kSum) {  // energy, failures, rejections
      values[0] += peer_energy_j;
      values[1] += peer_failed ? 1 : 0;
      return OkStatus();
    }
    if (values.size() == 1 && op == ReduceOp::kMax) values[0] = std::max(values[0], peer_time_s);
    return OkStatus();
  }
  int peer_gpus = 1;
  double peer_energy_j = 0;
  double peer_time_s = 0;
  bool peer_failed = false;
  std::vector<std::size_t> calls;
};

TEST(PowerLimitOptimizerTest, ReducesAcrossRanksSumOfEnergyMaxOfTime) {
  Job job;
  PeerCommunicator peer;
  peer.peer_gpus = 3;
  peer.peer_energy_j = 1000;
  peer.peer_time_s = 3.5;
  auto o = job.Options();
  o.communicator = &peer;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  EXPECT_EQ(optimizer->total_gpus(), 4);
  for (int i = 0; i < 30; ++i) job.Step(*optimizer);
  ASSERT_EQ(optimizer->state(), State::kDone);
  EXPECT_NEAR(optimizer->measurements()[0].energy_j, 1000 + 250 * 3.0, 2e-3);
  EXPECT_NEAR(optimizer->measurements()[0].time_s, 3.5, 1e-9);    // the peer was slower
  EXPECT_NEAR(optimizer->measurements()[3].time_s, 6.0, 1e-9);    // this rank was slower
  EXPECT_THAT(job.Log(), HasSubstr("rank 0: "));
}

TEST(PowerLimitOptimizerTest, AFailureOnAnotherRankDisablesThisOne) {
  Job job;
  PeerCommunicator peer;
  peer.peer_failed = true;
  auto o = job.Options();
  o.communicator = &peer;
  auto optimizer = PowerLimitOptimizer::Create(*job.gpus_, *job.monitor_, o).value();
  for (int i = 0; i < 6; ++i) job.Step(*optimizer);
  EXPECT_EQ(optimizer->state(), State::kProfiling);
  job.Step(*optimizer);
  EXPECT_EQ(optimizer->state(), State::kDisabled);
  EXPECT_THAT(optimizer->disabled_reason()->message(), HasSubstr("another rank"));
  EXPECT_EQ(job.fakes_[0]->PowerLimitMw().value(), 250'000u);
}

}  // namespace
}  // namespace zeus::runtime
