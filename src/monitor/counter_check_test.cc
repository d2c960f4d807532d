// Copyright 2026 The Zeus C++ Authors.
//
// CheckEnergyCounters on FakeGpus (a FakeClock, whose SleepFor advances it)
// and on the NVML emulator, whose counter advances in steps.

#include "zeus/monitor/counter_check.h"

#include <dlfcn.h>

#include <atomic>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/fake_clock.h"
#include "testing/fake_gpu.h"
#include "testing/result.h"
#include "testing/temp_dir.h"
#include "zeus/device/discovery.h"

namespace zeus::monitor {

using device::GpuOptions;
using device::GpuSet;
using device::Gpu;
using device::OpenGpus;
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using zeus::testing::FakeClock;
using zeus::testing::FakeGpu;
using zeus::testing::FakeGpuConfig;

class CounterCheckTest : public ::testing::Test {
 protected:
  FakeGpu* Add(FakeGpuConfig config) {
    auto* gpu = new FakeGpu(config, clock_, static_cast<unsigned int>(gpus_.size()));
    gpus_.emplace_back(gpu);
    return gpu;
  }
  std::vector<EnergyCounterCheck> Check() {
    GpuSet set("fake", std::move(gpus_));
    EnergyCounterCheckOptions options;
    options.clock = &clock_;
    return CheckEnergyCounters(set, options);
  }
  FakeGpuConfig Config(double power_w, double rate = 1.0, bool counter = true) {
    FakeGpuConfig config;
    config.power_w = power_w;
    config.energy_counter_rate = rate;
    config.energy_counter = counter;
    return config;
  }

  FakeClock clock_;
  std::vector<std::unique_ptr<device::Gpu>> gpus_;
};

// Issue 37: on the production clock, with calls so slow that every poll is
// later than a 25th of the window, no counter step can be timed. The old
// check switched its wall-clock bound off for SteadyClock() and polled for
// ever; now it ends after max_polls polls, inconclusive, with kTimeout.
class CounterCheckBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_.BeforeCall("TotalEnergyMj", [this] {
      ++counter_reads_;
      energy_clock_.Advance(20ms);         // the counter steps at every read
      std::this_thread::sleep_for(15ms);  // a slow driver call: every poll is late
    });
  }
  FakeClock energy_clock_;  // the fake GPU's energy timeline
  FakeGpu gpu_{FakeGpuConfig{}, energy_clock_};
  std::atomic<int> counter_reads_{0};
};

TEST_F(CounterCheckBoundsTest, OnTheSteadyClockLatePollsEndAfterMaxPolls) {
  EnergyCounterCheckOptions options;
  options.wall_deadline = std::chrono::hours(1);  // only the poll bound can end it
  options.max_polls = 20;
  const EnergyCounterCheck check = CheckEnergyCounter(gpu_, SteadyClock(), options);
  EXPECT_EQ(check.verdict, CounterVerdict::kInconclusive) << check.detail;
  ASSERT_TRUE(check.error.has_value());
  EXPECT_EQ(check.error->code(), ErrorCode::kTimeout);
  EXPECT_THAT(check.detail, HasSubstr("the polls were late"));
  EXPECT_EQ(check.polls, 20u);
  EXPECT_EQ(counter_reads_.load(), 21);  // the first read, then one per poll
  EXPECT_THAT(CounterCheckWarning(0, check).value_or(""), HasSubstr("could not be checked"));
}

// The wall-clock deadline holds for SteadyClock() too. Each poll takes at
// least 20 ms (a 5 ms sleep and a 15 ms call), so a 100 ms deadline allows
// at most 6 polls; the count, not a time, is asserted.
TEST_F(CounterCheckBoundsTest, OnTheSteadyClockTheWallDeadlineEndsIt) {
  EnergyCounterCheckOptions options;
  options.wall_deadline = 100ms;
  options.max_polls = std::numeric_limits<std::uint32_t>::max();
  const EnergyCounterCheck check = CheckEnergyCounter(gpu_, SteadyClock(), options);
  EXPECT_EQ(check.verdict, CounterVerdict::kInconclusive) << check.detail;
  ASSERT_TRUE(check.error.has_value());
  EXPECT_EQ(check.error->code(), ErrorCode::kTimeout);
  EXPECT_LE(check.polls, 6u);
  EXPECT_LE(counter_reads_.load(), 7);
}

// A FakeClock whose sleeps also drive a square-wave load on a FakeGpu:
// `high_w` for `half_period`, then `low_w`, and so on, from construction.
class SquareWaveClock final : public Clock {
 public:
  SquareWaveClock(const FakeClock& clock, FakeGpu& gpu, double high_w, double low_w,
                  std::chrono::nanoseconds half_period)
      : clock_(clock), gpu_(gpu), high_w_(high_w), low_w_(low_w), half_period_(half_period), start_(clock.Now()) {
    gpu_.SetPowerW(high_w_);
  }
  std::chrono::nanoseconds Now() const override { return clock_.Now(); }
  void SleepFor(std::chrono::nanoseconds duration) const override {
    clock_.SleepFor(duration);
    gpu_.SetPowerW(((clock_.Now() - start_) / half_period_) % 2 == 0 ? high_w_ : low_w_);
  }

 private:
  const FakeClock& clock_;
  FakeGpu& gpu_;
  double high_w_;
  double low_w_;
  std::chrono::nanoseconds half_period_;
  std::chrono::nanoseconds start_;
};

// Issue 37: a good counter under a load swinging 150 <-> 400 W on a GPU
// with only an averaged (1 s) power field. The average lags the load, so
// comparing would blame the counter; the window is inconclusive instead,
// and nothing is distrusted.
TEST_F(CounterCheckTest, ASwingingLoadSeenOnlyThroughAnAverageIsNotDistrusted) {
  FakeGpuConfig config = Config(150.0);
  config.instant_power = false;
  config.average_power_period = 1s;
  FakeGpu* gpu = Add(config);
  clock_.Advance(2s);  // 150 W for the average's whole period
  GpuSet set("fake", std::move(gpus_));
  SquareWaveClock load(clock_, *gpu, 400.0, 150.0, 500ms);
  EnergyCounterCheckOptions options;
  options.clock = &load;
  const auto checks = CheckEnergyCounters(set, options);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].power_source, "power_usage");
  EXPECT_EQ(checks[0].verdict, CounterVerdict::kInconclusive) << checks[0].detail;
  EXPECT_THAT(checks[0].detail, HasSubstr("averaged power moved"));
  EXPECT_FALSE(checks[0].error.has_value());
  EXPECT_FALSE(CounterCheckWarning(0, checks[0]).has_value());
  ApplyCounterChecks(set, checks);
  EXPECT_TRUE(set.gpu(0).SupportsEnergyCounter());

  // What the rule prevents: compared anyway, the lagging average makes the
  // good counter "disagree" (ratio near 2 at this rising edge).
  gpu->SetPowerW(150.0);
  clock_.Advance(2s);
  SquareWaveClock again(clock_, *gpu, 400.0, 150.0, 500ms);
  options.clock = &again;
  options.max_average_power_swing = std::numeric_limits<double>::infinity();
  const auto compared = CheckEnergyCounters(set, options);
  EXPECT_EQ(compared[0].verdict, CounterVerdict::kDisagrees) << compared[0].detail;
  EXPECT_GT(compared[0].ratio, 1.25);
}

// A steady load through the same averaged field is compared, and agrees.
TEST_F(CounterCheckTest, ASteadyLoadSeenThroughAnAverageAgrees) {
  FakeGpuConfig config = Config(250.0);
  config.instant_power = false;
  config.average_power_period = 1s;
  Add(config);
  clock_.Advance(2s);
  const auto checks = Check();
  EXPECT_EQ(checks[0].verdict, CounterVerdict::kAgrees) << checks[0].detail;
  EXPECT_NEAR(checks[0].ratio, 1.0, 0.02);
}

// For daemons: each GPU's check as a task on that GPU's thread, one deadline
// for all; a GPU whose task never runs (a hung driver call) is inconclusive
// and holds up no other.
TEST_F(CounterCheckTest, OnGpuThreadsAHungGpuHoldsUpOnlyItself) {
  Add(Config(100.0));
  Add(Config(100.0, 2.0));
  Add(Config(100.0));
  GpuSet set("fake", std::move(gpus_));
  EnergyCounterCheckOptions options;
  options.clock = &clock_;
  std::vector<std::function<void()>> held;  // GPU 2's task: its thread is stuck
  std::thread worker;
  std::vector<std::function<void()>> queue;
  const auto checks = CheckEnergyCountersOnGpuThreads(
      set,
      [&](std::size_t i, std::function<void()> task) {
        if (i == 2) {
          held.push_back(std::move(task));
        } else {
          queue.push_back(std::move(task));
          if (queue.size() == 2) {
            // One thread runs GPUs 0 and 1 in turn (FakeClock is not shared
            // between threads).
            worker = std::thread([tasks = std::move(queue)] {
              for (const auto& run : tasks) run();
            });
          }
        }
      },
      std::chrono::milliseconds(1000), options);
  worker.join();
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].verdict, CounterVerdict::kAgrees) << checks[0].detail;
  EXPECT_EQ(checks[1].verdict, CounterVerdict::kDisagrees) << checks[1].detail;
  EXPECT_EQ(checks[2].verdict, CounterVerdict::kInconclusive);
  EXPECT_THAT(checks[2].detail, HasSubstr("did not finish within 1000 ms"));
  ASSERT_TRUE(checks[2].error.has_value());
  EXPECT_EQ(checks[2].error->code(), ErrorCode::kTimeout);
  EXPECT_THAT(CounterCheckWarning(2, checks[2]).value_or(""), HasSubstr("GPU 2: the energy counter could not be checked"));
  EXPECT_FALSE(CounterCheckWarning(0, checks[0]).has_value());
  EXPECT_THAT(CounterCheckWarning(1, checks[1]).value_or(""), HasSubstr("GPU 1: the energy counter disagrees"));
  ASSERT_EQ(held.size(), 1u);
  held.front()();  // the driver call returns at last: its late result goes nowhere
  // A task the thread drops (it is stopping) is inconclusive too.
  const auto dropped = CheckEnergyCountersOnGpuThreads(
      set, [](std::size_t, std::function<void()> task) { task = nullptr; }, std::chrono::milliseconds(10), options);
  EXPECT_THAT(dropped[0].detail, HasSubstr("stopped before the energy counter check ran"));
  EXPECT_EQ(dropped[0].error->code(), ErrorCode::kAborted);
}

TEST_F(CounterCheckTest, ACorrectCounterAgreesAndEachGpuGetsItsOwnVerdict) {
  Add(Config(100.0));
  Add(Config(100.0, 2.0));      // twice the rate
  Add(Config(100.0, 1000.0));   // µJ read as mJ
  Add(Config(100.0, 1.0, false));  // no counter (pre-Volta)
  Add(Config(0.2));             // idle: too little power to compare
  const auto checks = Check();
  ASSERT_EQ(checks.size(), 5u);
  EXPECT_EQ(checks[0].verdict, CounterVerdict::kAgrees) << checks[0].detail;
  EXPECT_NEAR(checks[0].ratio, 1.0, 1e-3);
  EXPECT_GE(checks[0].duration_s, 0.25);
  EXPECT_NEAR(checks[0].integrated_energy_mj, 100.0 * checks[0].duration_s * 1000.0, 1.0);
  EXPECT_EQ(checks[0].power_source, "instant");
  EXPECT_EQ(checks[1].verdict, CounterVerdict::kDisagrees) << checks[1].detail;
  EXPECT_NEAR(checks[1].ratio, 2.0, 1e-2);
  EXPECT_THAT(checks[1].detail, HasSubstr("ratio 2.0"));
  EXPECT_EQ(checks[2].verdict, CounterVerdict::kDisagrees);
  EXPECT_NEAR(checks[2].ratio, 1000.0, 1.0);
  EXPECT_EQ(checks[3].verdict, CounterVerdict::kNoCounter);
  EXPECT_EQ(checks[4].verdict, CounterVerdict::kInconclusive);
  EXPECT_THAT(checks[4].detail, HasSubstr("0.20 W on average"));
  EXPECT_EQ(CounterVerdictName(checks[1].verdict), "disagrees");
}

TEST_F(CounterCheckTest, TheToleranceIsAQuarterEitherWay) {
  Add(Config(100.0, 1.2));
  Add(Config(100.0, 0.85));
  Add(Config(100.0, 1.3));
  Add(Config(100.0, 0.75));
  const auto checks = Check();
  EXPECT_EQ(checks[0].verdict, CounterVerdict::kAgrees);
  EXPECT_EQ(checks[1].verdict, CounterVerdict::kAgrees);
  EXPECT_EQ(checks[2].verdict, CounterVerdict::kDisagrees);
  EXPECT_EQ(checks[3].verdict, CounterVerdict::kDisagrees);
}

TEST_F(CounterCheckTest, AStuckCounterDisagreesOnlyWhenTheGpuDrawsPower) {
  Add(Config(100.0, 0.0));
  Add(Config(0.1, 0.0));
  const auto checks = Check();
  EXPECT_EQ(checks[0].verdict, CounterVerdict::kDisagrees);
  EXPECT_THAT(checks[0].detail, HasSubstr("did not advance"));
  EXPECT_THAT(checks[0].detail, HasSubstr("100.00 W"));
  EXPECT_EQ(checks[1].verdict, CounterVerdict::kInconclusive);
}

TEST_F(CounterCheckTest, AFailedReadIsInconclusiveForThatGpuOnly) {
  FakeGpu* broken = Add(Config(100.0));
  Add(Config(100.0));
  broken->FailWith("TotalEnergyMj", Error(ErrorCode::kIoError, "GPU has fallen off the bus"));
  const auto checks = Check();
  EXPECT_EQ(checks[0].verdict, CounterVerdict::kInconclusive);
  EXPECT_THAT(checks[0].detail, HasSubstr("GPU has fallen off the bus"));
  EXPECT_EQ(checks[1].verdict, CounterVerdict::kAgrees);
}

TEST_F(CounterCheckTest, WithoutInstantPowerTheDriversPowerIsIntegrated) {
  FakeGpu* gpu = Add(Config(100.0));
  gpu->FailWith("InstantPowerMw", Error(ErrorCode::kNotSupported, "no instant power field"));
  const auto checks = Check();
  EXPECT_EQ(checks[0].verdict, CounterVerdict::kAgrees);
  EXPECT_EQ(checks[0].power_source, "power_usage");
}

// The emulator's counter advances every 100 ms: measured from step to step,
// a correct counter agrees closely and one at 2x is caught.
TEST(CounterCheckEmulatorTest, SteppedCountersOnTheEmulator) {
  zeus::testing::TempDir tmp;
  nlohmann::json gpu = {{"name", "NVIDIA A100-SXM4-40GB"}, {"architecture", "ampere"}, {"min_power_limit_w", 100},
                        {"max_power_limit_w", 400},         {"default_power_limit_w", 400}, {"energy_counter", true},
                        {"power_w", 250},                   {"counter_update_period_ms", 100}};
  nlohmann::json wrong = gpu;
  wrong["energy_counter_rate"] = 2.0;
  const nlohmann::json scenario = {{"gpus", {gpu, wrong}}, {"time_scale", 1},
                                   {"state_file", tmp.File("emulator.state")}};
  zeus::testing::ScopedEnv config("ZEUS_EMULATOR_CONFIG", tmp.Write("scenario.json", scenario.dump()));
  zeus::testing::ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::nullopt);
  GpuOptions options;
  options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
  auto gpus = zeus::testing::Unwrap(OpenGpus(options));
  const auto checks = CheckEnergyCounters(*gpus);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].verdict, CounterVerdict::kAgrees) << checks[0].detail;
  EXPECT_NEAR(checks[0].ratio, 1.0, 0.1) << checks[0].detail;
  EXPECT_EQ(checks[1].verdict, CounterVerdict::kDisagrees) << checks[1].detail;
  EXPECT_NEAR(checks[1].ratio, 2.0, 0.2) << checks[1].detail;
}

// Issue 37: opening GPUs runs no check. Eight emulated GPUs open without one
// energy or power read (the emulator counts every NVML call; the old
// OpenGpus polled every counter and power field for about 0.4 s).
TEST(OpenGpusCounterCheckTest, OpeningEightEmulatedGpusReadsNoCounterOrPower) {
  zeus::testing::TempDir tmp;
  const nlohmann::json gpu = {{"name", "NVIDIA A100-SXM4-40GB"}, {"architecture", "ampere"},
                              {"min_power_limit_w", 100},          {"max_power_limit_w", 400},
                              {"default_power_limit_w", 400},      {"energy_counter", true},
                              {"power_w", 250},                    {"counter_update_period_ms", 100}};
  nlohmann::json wrong = gpu;
  wrong["energy_counter_rate"] = 2.0;  // the old check would have distrusted it
  nlohmann::json gpus = nlohmann::json::array();
  for (int i = 0; i < 7; ++i) gpus.push_back(gpu);
  gpus.push_back(wrong);
  const nlohmann::json scenario = {{"gpus", gpus}, {"time_scale", 1}, {"state_file", tmp.File("emulator.state")}};
  zeus::testing::ScopedEnv config("ZEUS_EMULATOR_CONFIG", tmp.Write("scenario.json", scenario.dump()));
  zeus::testing::ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::nullopt);
  zeus::testing::ScopedEnv check("ZEUS_ENERGY_COUNTER_CHECK", std::nullopt);  // the default: on
  GpuOptions options;
  options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
  auto opened = zeus::testing::Unwrap(OpenGpus(options));
  ASSERT_EQ(opened->size(), 8u);
  void* emulator = dlopen(ZEUS_TEST_EMULATOR_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(emulator, nullptr) << dlerror();
  using CallCount = unsigned long long (*)(const char*, int);
  auto call_count = reinterpret_cast<CallCount>(dlsym(emulator, "zeusEmulatorCallCount"));
  ASSERT_NE(call_count, nullptr);
  for (const char* function : {"nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetPowerUsage",
                               "nvmlDeviceGetFieldValues"}) {
    EXPECT_EQ(call_count(function, -1), 0u) << function;
  }
  EXPECT_GT(call_count("nvmlDeviceGetHandleByIndex_v2", -1), 0u);  // the counter works
  EXPECT_TRUE(opened->gpu(7).SupportsEnergyCounter());               // nothing was judged
  dlclose(emulator);
}

}  // namespace
}  // namespace zeus::monitor
