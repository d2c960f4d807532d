// Copyright 2026 The Zeus C++ Authors.
//
// CheckEnergyCounters on FakeGpus (a FakeClock, whose SleepFor advances it)
// and on the NVML emulator, whose counter advances in steps.

#include "zeus/device/counter_check.h"

#include <functional>
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

namespace zeus::device {
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
  std::vector<std::unique_ptr<Gpu>> gpus_;
};

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
  EXPECT_THAT(checks[2].detail, HasSubstr("GPU 2 did not finish the energy counter check within 1000 ms"));
  ASSERT_EQ(held.size(), 1u);
  held.front()();  // the driver call returns at last: its late result goes nowhere
  // A task the thread drops (it is stopping) is inconclusive too.
  const auto dropped = CheckEnergyCountersOnGpuThreads(
      set, [](std::size_t, std::function<void()> task) { task = nullptr; }, std::chrono::milliseconds(10), options);
  EXPECT_THAT(dropped[0].detail, HasSubstr("stopped before the energy counter check ran"));
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
  options.check_energy_counters = false;  // checked here (OpenGpus would distrust GPU 1)
  auto gpus = zeus::testing::Unwrap(OpenGpus(options));
  const auto checks = CheckEnergyCounters(*gpus);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].verdict, CounterVerdict::kAgrees) << checks[0].detail;
  EXPECT_NEAR(checks[0].ratio, 1.0, 0.1) << checks[0].detail;
  EXPECT_EQ(checks[1].verdict, CounterVerdict::kDisagrees) << checks[1].detail;
  EXPECT_NEAR(checks[1].ratio, 2.0, 0.2) << checks[1].detail;
}

}  // namespace
}  // namespace zeus::device
