// Copyright 2026 The Zeus C++ Authors.
//
// PowerMonitor and Monitor over the NVML emulator, through the real NVML
// loading path: optional queries a GPU does not support, and slow or hung
// driver calls. Waits use readiness signals (the emulator's count of hung
// calls, the number of samples taken) with generous deadlines, never a sleep
// that must be long enough.

#include <chrono>
#include <future>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "emulator/control/control.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "testing/result.h"
#include "zeus/device/discovery.h"
#include "zeus/monitor/monitor.h"
#include "zeus/monitor/power_monitor.h"

namespace zeus::monitor {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using zeus::testing::ScopedEnv;

constexpr std::chrono::seconds kDeadline(60);

json GpuScenario(std::string name, std::string architecture, bool counter, json extra) {
  json g = {{"name", std::move(name)},    {"architecture", std::move(architecture)},
            {"min_power_limit_w", 100},   {"max_power_limit_w", 300},
            {"default_power_limit_w", 300}, {"energy_counter", counter}};
  g.update(extra);
  return g;
}

class MonitorEmulatorTest : public ::testing::Test {
 protected:
  void TearDown() override {
    // Sampling threads blocked in a hang must be let go before they are joined.
    if (control_) (void)control_->ReleaseHungCalls();
  }

  void Open(json scenario) {
    scenario["state_file"] = tmp_.File("state");
    config_ = std::make_unique<ScopedEnv>("ZEUS_EMULATOR_CONFIG", tmp_.Write("scenario.json", scenario.dump()));
    device::GpuOptions options;
    options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
    auto gpus = device::OpenGpus(options);
    ASSERT_TRUE(gpus) << gpus.error().message();
    gpus_ = std::move(*gpus);
    auto control = emulator::EmulatorControl::Open(ZEUS_TEST_EMULATOR_PATH);
    ASSERT_TRUE(control) << control.error().message();
    control_ = std::move(*control);
    if (scenario.value("clock", "") == "manual") clock_ = std::make_unique<emulator::EmulatorClock>(*control_);
  }

  // Waits until one of this process's calls is blocked in a hang fault.
  bool WaitForHungCall() const {
    return testing::WaitUntil([&] { return control_->HungCalls() >= 1; }, kDeadline);
  }

  std::unique_ptr<PowerMonitor> ManualPowerMonitor() {
    PowerMonitorOptions options;
    options.clock = clock_.get();
    options.start_thread = false;
    auto pm = PowerMonitor::Create(*gpus_, {}, options);
    return zeus::testing::Unwrap(std::move(pm));
  }

  testing::TempDir tmp_;
  ScopedEnv no_visible_{"CUDA_VISIBLE_DEVICES", std::nullopt};
  std::unique_ptr<ScopedEnv> config_;
  std::unique_ptr<device::GpuSet> gpus_;
  std::unique_ptr<emulator::EmulatorControl> control_;
  std::unique_ptr<emulator::EmulatorClock> clock_;
};

// ---- Optional queries a GPU does not support --------------------------------------

// Demand steps from 100 W to 300 W at 1 s. At 1.5 s the instant reading is
// 300 W, while the A40's driver reading (1 s average, updates every 100 ms)
// covers [0.5 s, 1.5 s]: (0.5 x 100 + 0.5 x 300) / 1 = 200 W.
json StepGpu(json unsupported) {
  return GpuScenario("NVIDIA A40", "ampere", true,
             {{"power_schedule", {{{"at_s", 0}, {"power_w", 100}}, {{"at_s", 1.0}, {"power_w", 300}}}},
              {"unsupported", std::move(unsupported)}});
}

TEST_F(MonitorEmulatorTest, UnsupportedInstantPowerFallsBackToTheDriversReading) {
  Open({{"clock", "manual"}, {"gpus", {StepGpu(json::array()), StepGpu({"instant_power"})}}});
  auto pm = ManualPowerMonitor();
  ASSERT_TRUE(pm);
  clock_->SleepFor(milliseconds(1500));
  pm->SampleOnce();
  const PowerSample with_field = pm->Timeline(0).back();
  const PowerSample without_field = pm->Timeline(1).back();
  ASSERT_TRUE(with_field.instant_mw && without_field.instant_mw);
  EXPECT_EQ(*with_field.instant_mw, 300'000u);
  EXPECT_EQ(*without_field.instant_mw, 200'000u);  // the fallback, not an error
  EXPECT_EQ(pm->ReadFailures(1), 0u);
  EXPECT_TRUE(pm->CumulativeEnergyJ(1, clock_->Now()));
}

TEST_F(MonitorEmulatorTest, UnsupportedSlowDomainsAreLeftOutNotErrors) {
  json full = GpuScenario("NVIDIA H100 80GB HBM3", "hopper", true, {{"power_w", 400}, {"memory_power_w", 60}});
  json bare = full;
  bare["unsupported"] = {"average_power", "memory_power", "temperature"};
  Open({{"clock", "manual"}, {"gpus", {full, bare}}});
  auto pm = ManualPowerMonitor();
  ASSERT_TRUE(pm);
  clock_->SleepFor(milliseconds(200));
  pm->SampleOnce();
  const PowerSample a = pm->Timeline(0).back();
  const PowerSample b = pm->Timeline(1).back();
  EXPECT_TRUE(a.average_mw && a.memory_mw && a.temperature_c);
  EXPECT_EQ(a.memory_mw.value_or(0), 60'000u);
  EXPECT_FALSE(b.average_mw || b.memory_mw || b.temperature_c);
  ASSERT_TRUE(b.instant_mw);
  EXPECT_EQ(*b.instant_mw, 300'000u);  // 400 W demand under the 300 W limit
  EXPECT_EQ(pm->ReadFailures(1), 0u);
}

// ---- Slow and hung driver calls ---------------------------------------------------

// GPU 1's fourth field-value call hangs: PowerMonitor::Create's first sample
// makes three (instant, average and memory power), so the sampling thread's
// first instant-power read is the one that blocks.
json HangOnGpu1(json gpus) {
  return {{"gpus", std::move(gpus)},
          {"faults",
           {{{"function", "nvmlDeviceGetFieldValues"}, {"gpu", 1}, {"hang", true}, {"after_calls", 3},
             {"max_failures", 1}}}}};
}

TEST_F(MonitorEmulatorTest, AHungCallOnOneGpuDoesNotStopTheOthersTimelines) {
  Open(HangOnGpu1({GpuScenario("Tesla P100-PCIE-16GB", "pascal", false, {{"power_w", 90}}),
                   GpuScenario("Tesla P100-PCIE-16GB", "pascal", false, {{"power_w", 150}})}));
  PowerMonitorOptions options;
  options.interval = milliseconds(1);
  auto pm = PowerMonitor::Create(*gpus_, {}, options);  // real clock, sampling threads
  ASSERT_TRUE(pm) << pm.error().message();
  ASSERT_TRUE(WaitForHungCall()) << "GPU 1's sampler never reached the hang";

  const std::size_t gpu0_before = (*pm)->Timeline(0).size();
  const std::size_t gpu1_before = (*pm)->Timeline(1).size();
  EXPECT_TRUE(testing::WaitUntil([&] { return (*pm)->Timeline(0).size() >= gpu0_before + 20; }, kDeadline))
      << "GPU 0 stopped being sampled while GPU 1's call hung";
  EXPECT_EQ(control_->HungCalls(), 1u);               // still hung ...
  EXPECT_EQ((*pm)->Timeline(1).size(), gpu1_before);  // ... and GPU 1 got nothing meanwhile

  ASSERT_TRUE(control_->ReleaseHungCalls());
  EXPECT_TRUE(testing::WaitUntil([&] { return (*pm)->Timeline(1).size() >= gpu1_before + 20; }, kDeadline))
      << "GPU 1 was not sampled again after its call returned";
}

TEST_F(MonitorEmulatorTest, WindowsDoNotWaitForTheSamplersHungCall) {
  // GPU 0 has an energy counter; GPU 1 has none, so the Monitor samples it.
  Open(HangOnGpu1({GpuScenario("Tesla V100-SXM2-32GB", "volta", true, {{"power_w", 200}}),
                   GpuScenario("Tesla P100-PCIE-16GB", "pascal", false, {{"power_w", 150}})}));
  MonitorOptions options;
  options.power_monitor.interval = milliseconds(1);
  auto monitor = Monitor::Create(gpus_.get(), nullptr, options);
  ASSERT_TRUE(monitor) << monitor.error().message();
  ASSERT_TRUE(WaitForHungCall()) << "GPU 1's sampler never reached the hang";

  // The training thread's window, run where a stall can be detected.
  auto window = std::async(std::launch::async, [&]() -> Result<Measurement> {
    if (Status begun = (*monitor)->BeginWindow("step"); !begun) return Fail(begun.error());
    return (*monitor)->EndWindow("step");
  });
  const bool finished = window.wait_for(kDeadline) == std::future_status::ready;
  EXPECT_TRUE(finished) << "the window waited for the sampler's hung call";
  EXPECT_EQ(control_->HungCalls(), 1u);  // the sampler's call was hung throughout
  EXPECT_TRUE(control_->ReleaseHungCalls());
  Result<Measurement> m = window.get();
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_EQ(m->gpus.size(), 2u);
  EXPECT_FALSE(m->gpus[0].error.has_value());
  EXPECT_FALSE(m->gpus[1].error.has_value());
}

// While GPU 1's sampler is stuck in a driver call, its last value is held in
// place of the power it draws: a window over that is uncertain, whether the
// call is still hung at the window's end or returned within it. The manual
// clock makes every duration exact; the default late-read threshold is
// max(4 x 10 ms, 100 ms) = 100 ms.
TEST_F(MonitorEmulatorTest, AWindowOverAHungReadIsUncertain) {
  json scenario = HangOnGpu1({GpuScenario("Tesla V100-SXM2-32GB", "volta", true, {{"power_w", 200}}),
                              GpuScenario("Tesla P100-PCIE-16GB", "pascal", false, {{"power_w", 150}})});
  scenario["clock"] = "manual";
  Open(scenario);
  MonitorOptions options;
  options.clock = clock_.get();
  options.power_monitor.interval = milliseconds(10);
  auto monitor = Monitor::Create(gpus_.get(), nullptr, options);
  ASSERT_TRUE(monitor) << monitor.error().message();
  const PowerMonitor* pm = (*monitor)->power_monitor();
  ASSERT_NE(pm, nullptr);
  ASSERT_EQ(pm->late_read_after(), milliseconds(100));
  // Time moves in steps of one interval until the sampler's next read, the
  // one that hangs, has begun.
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        if (control_->HungCalls() >= 1) return true;
        clock_->SleepFor(milliseconds(10));
        return false;
      },
      kDeadline))
      << "GPU 1's sampler never reached the hang";

  // Hung from before the window to its end (1 s).
  ASSERT_TRUE((*monitor)->BeginWindow("hung"));
  clock_->SleepFor(seconds(1));
  Result<Measurement> hung = (*monitor)->EndWindow("hung");
  ASSERT_TRUE(hung) << hung.error().message();
  ASSERT_EQ(hung->gpus.size(), 2u);
  EXPECT_FALSE(hung->gpus[1].error.has_value());
  EXPECT_TRUE(hung->gpus[1].uncertain) << "a 1 s window over a read hung for 1 s";
  EXPECT_FALSE(hung->gpus[0].uncertain);  // GPU 0's counter is not affected

  // The hung call returns within the next window (1 s long).
  const std::size_t samples = pm->Timeline(1).size();
  ASSERT_TRUE((*monitor)->BeginWindow("returned"));
  ASSERT_TRUE(control_->ReleaseHungCalls());
  ASSERT_TRUE(testing::WaitUntil([&] { return pm->Timeline(1).size() > samples; }, kDeadline))
      << "GPU 1's read never returned";
  EXPECT_EQ(pm->LateReads(1), 1u);
  clock_->SleepFor(seconds(1));
  Result<Measurement> returned = (*monitor)->EndWindow("returned");
  ASSERT_TRUE(returned) << returned.error().message();
  EXPECT_TRUE(returned->gpus[1].uncertain) << "the window held a value read 1 s before the call returned";

  // Afterwards, a window during which no read can take 100 ms (the clock
  // moves 50 ms in all) is certain again.
  ASSERT_TRUE((*monitor)->BeginWindow("after"));
  clock_->SleepFor(milliseconds(50));
  Result<Measurement> after = (*monitor)->EndWindow("after");
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_FALSE(after->gpus[1].uncertain);
  EXPECT_FALSE(after->gpus[1].error.has_value());
  EXPECT_EQ(pm->LateReads(1), 1u);
}

}  // namespace
}  // namespace zeus::monitor
