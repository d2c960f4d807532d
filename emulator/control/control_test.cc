// Copyright 2026 The Zeus C++ Authors.
//
// EmulatorControl and EmulatorClock on the real emulator library, loaded as
// NVML by OpenGpus the way the programs and tests that use them load it.

#include "emulator/control/control.h"

#include <chrono>
#include <future>
#include <memory>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "zeus/device/discovery.h"

namespace zeus::emulator {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using zeus::testing::ScopedEnv;

// GPU 0 runs a workload whose iteration takes 0.5 s at 100 W and 0.25 s at
// 250 W (its default limit); GPU 1 draws a constant 90 W and has no workload.
json Gpus() {
  return json::array(
      {{{"name", "Tesla V100-SXM2-32GB"},
        {"architecture", "volta"},
        {"min_power_limit_w", 100},
        {"max_power_limit_w", 250},
        {"default_power_limit_w", 250},
        {"energy_counter", true},
        {"workload", {{"power_limits_w", {100, 250}}, {"power_w", {95, 190}}, {"iteration_time_s", {0.5, 0.25}}}}},
       {{"name", "Tesla P100-PCIE-16GB"},
        {"architecture", "pascal"},
        {"min_power_limit_w", 125},
        {"max_power_limit_w", 250},
        {"default_power_limit_w", 250},
        {"energy_counter", false},
        {"power_w", 90}}});
}

class EmulatorControlTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (control_) (void)control_->ReleaseHungCalls();
  }

  // Opens the GPUs of `scenario` on the emulator, then the control.
  void Open(json scenario) {
    scenario["gpus"] = Gpus();
    scenario["state_file"] = tmp_.File("state");
    config_ = std::make_unique<ScopedEnv>("ZEUS_EMULATOR_CONFIG", tmp_.Write("scenario.json", scenario.dump()));
    device::GpuOptions options;
    options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
    auto gpus = device::OpenGpus(options);
    ASSERT_TRUE(gpus) << gpus.error().message();
    gpus_ = std::move(*gpus);
    auto control = EmulatorControl::Open(ZEUS_TEST_EMULATOR_PATH);
    ASSERT_TRUE(control) << control.error().message();
    control_ = std::move(*control);
  }

  testing::TempDir tmp_;
  ScopedEnv no_visible_{"CUDA_VISIBLE_DEVICES", std::nullopt};
  std::unique_ptr<ScopedEnv> config_;
  std::unique_ptr<device::GpuSet> gpus_;
  std::unique_ptr<EmulatorControl> control_;
};

TEST(EmulatorControlOpenTest, ALibraryThatIsNotTheEmulatorIsUnavailable) {
  auto control = EmulatorControl::Open("libm.so.6");
  ASSERT_FALSE(control);
  EXPECT_EQ(control.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(control.error().message(), "libm.so.6 is not the Zeus NVML emulator");
}

TEST(EmulatorControlOpenTest, TheEmulatorWithoutOpenGpusIsUnavailable) {
  auto control = EmulatorControl::Open(ZEUS_TEST_EMULATOR_PATH);
  ASSERT_FALSE(control);
  EXPECT_EQ(control.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(control.error().message().find("is not initialised in this process; open its GPUs first"),
            std::string::npos)
      << control.error().message();
}

TEST_F(EmulatorControlTest, AdvanceMovesTheManualClockThatTheDriverClockReads) {
  Open({{"clock", "manual"}});
  ASSERT_TRUE(control_->manual());
  const std::chrono::nanoseconds before = control_->Now();
  ASSERT_TRUE(control_->Advance(milliseconds(1500)));
  EXPECT_EQ(control_->Now() - before, milliseconds(1500));
  EXPECT_EQ(gpus_->driver_clock()->Now(), control_->Now());
  EXPECT_TRUE(control_->Advance(milliseconds(0)));
  EXPECT_TRUE(control_->Advance(milliseconds(-5)));
  EXPECT_EQ(control_->Now() - before, milliseconds(1500));
}

TEST_F(EmulatorControlTest, TheClockSleepsByAdvancingAManualClock) {
  Open({{"clock", "manual"}});
  const EmulatorClock clock(*control_);
  const std::chrono::nanoseconds before = clock.Now();
  clock.SleepFor(seconds(3600));  // an emulated hour, at once
  EXPECT_EQ(clock.Now() - before, seconds(3600));
  EXPECT_EQ(control_->Now(), clock.Now());
}

TEST_F(EmulatorControlTest, AWallClockCannotBeAdvancedAndTheClockWaitsForIt) {
  Open({{"clock", "wall"}, {"time_scale", 1000}});
  EXPECT_FALSE(control_->manual());
  const Status advanced = control_->Advance(seconds(1));
  ASSERT_FALSE(advanced);
  EXPECT_EQ(advanced.error().code(), ErrorCode::kFailedPrecondition);
  // Two emulated seconds are two real milliseconds at 1000x; SleepFor
  // returns only once the emulated time has moved that far.
  const EmulatorClock clock(*control_, 1000.0);
  const std::chrono::nanoseconds before = clock.Now();
  clock.SleepFor(seconds(2));
  EXPECT_GE(clock.Now() - before, seconds(2));
}

TEST_F(EmulatorControlTest, IterationTimeIsTheWorkloadsAtTheLimitInForce) {
  Open({{"clock", "manual"}});
  auto seconds0 = control_->IterationTimeS(0);
  ASSERT_TRUE(seconds0) << seconds0.error().message();
  EXPECT_DOUBLE_EQ(*seconds0, 0.25);
  auto seconds1 = control_->IterationTimeS(1);
  ASSERT_FALSE(seconds1);
  EXPECT_EQ(seconds1.error().code(), ErrorCode::kNotSupported);
  EXPECT_NE(seconds1.error().message().find("GPU 1 of the emulator's scenario has no \"workload\""),
            std::string::npos)
      << seconds1.error().message();
}

TEST_F(EmulatorControlTest, HungCallsAreCountedAndReleased) {
  Open({{"clock", "manual"},
        {"faults", {{{"function", "nvmlDeviceGetFieldValues"}, {"gpu", 0}, {"hang", true}, {"max_failures", 1}}}}});
  EXPECT_EQ(control_->HungCalls(), 0u);
  auto read = std::async(std::launch::async, [&] { return gpus_->gpu(0).PowerUsageMw(); });
  ASSERT_TRUE(testing::WaitUntil([&] { return control_->HungCalls() >= 1; }, seconds(60)))
      << "the power read never reached the hang";
  EXPECT_EQ(control_->HungCalls(), 1u);
  ASSERT_TRUE(control_->ReleaseHungCalls());
  ASSERT_EQ(read.wait_for(seconds(60)), std::future_status::ready) << "the released call did not return";
  EXPECT_TRUE(read.get());
  EXPECT_EQ(control_->HungCalls(), 0u);
}

}  // namespace
}  // namespace zeus::emulator
