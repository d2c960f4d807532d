// Copyright 2026 The Zeus C++ Authors.
//
// The exit paths: SIGTERM, SIGINT, an uncaught exception (std::terminate)
// and std::exit each restore the original limit while an optimizer lives.
// Each case runs in a death-test child; the child reports through its exit
// code whether GPU 0 was back at its original limit when the signal's
// previous handler, the previous terminate handler or a late atexit handler
// ran.

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <thread>

#include "runtime/exit_restore.h"
#include "testing/fake_clock.h"
#include "testing/fake_gpu.h"
#include "testing/test_monitor.h"
#include "zeus/runtime/power_limit_optimizer.h"

namespace zeus::runtime {
namespace {

constexpr std::uint32_t kOriginalMw = 200'000;
constexpr int kRestored = 42;
constexpr int kNotRestored = 43;

testing::FakeGpu* g_gpu = nullptr;

int Verdict() {
  auto limit = g_gpu->PowerLimitMw();
  return limit && *limit == kOriginalMw ? kRestored : kNotRestored;
}


// Builds a job, creates an optimizer that restores on exit, and runs steps
// until it has changed the limit; then calls `trigger` with the optimizer
// alive. Never returns normally.
template <class Trigger>
[[noreturn]] void RunUntilChangedThen(Trigger trigger) {
  // Never destroyed: exit paths run after static destruction, and this
  // process ends in the test anyway.
  auto* clock = new testing::FakeClock();
  testing::FakeGpuConfig config;
  config.default_power_limit_mw = kOriginalMw;
  config.power_w = 300;
  std::vector<std::unique_ptr<device::Gpu>> list;
  list.push_back(std::make_unique<testing::FakeGpu>(config, *clock, 0));
  g_gpu = static_cast<testing::FakeGpu*>(list.back().get());
  auto* gpus_ptr = new device::GpuSet("test", std::move(list));
  device::GpuSet& gpus = *gpus_ptr;
  auto* monitor = testing::MakeTestMonitor(&gpus, clock).release();
  PowerLimitOptimizerOptions options;
  options.wait_steps = 0;
  options.warmup_steps = 5;
  options.log = [](std::string_view) {};
  auto optimizer = PowerLimitOptimizer::Create(gpus, *monitor, options).value();
  optimizer->OnStepBegin();  // sets the maximum, 250 W
  if (g_gpu->PowerLimitMw().value() == kOriginalMw) _exit(1);  // the test could not change it
  trigger();
  for (;;) pause();
}

extern "C" void ReportAndExit(int) { _exit(Verdict()); }

class ExitRestoreDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(ExitRestoreDeathTest, SigtermRestoresThenTakesThePreviousAction) {
  EXPECT_EXIT(
      {
        signal(SIGTERM, ReportAndExit);  // the program's own handler, installed first
        RunUntilChangedThen([] { kill(getpid(), SIGTERM); });
      },
      ::testing::ExitedWithCode(kRestored), "");
}

TEST_F(ExitRestoreDeathTest, SigintRestoresThenTakesThePreviousAction) {
  EXPECT_EXIT(
      {
        signal(SIGINT, ReportAndExit);
        RunUntilChangedThen([] { kill(getpid(), SIGINT); });
      },
      ::testing::ExitedWithCode(kRestored), "");
}

TEST_F(ExitRestoreDeathTest, SigtermWithTheDefaultActionStillEndsTheProcessBySigterm) {
  EXPECT_EXIT(RunUntilChangedThen([] { kill(getpid(), SIGTERM); }), ::testing::KilledBySignal(SIGTERM), "");
}

TEST_F(ExitRestoreDeathTest, AnUncaughtExceptionRestoresBeforeTerminating) {
  EXPECT_EXIT(
      {
        std::set_terminate([] { _exit(Verdict()); });
        // GoogleTest catches exceptions of the statement itself; one that
        // leaves a thread's function is uncaught by definition.
        RunUntilChangedThen([] { std::thread([] { throw std::runtime_error("boom"); }).join(); });
      },
      ::testing::ExitedWithCode(kRestored), "");
}

TEST_F(ExitRestoreDeathTest, StdExitRestores) {
  EXPECT_EXIT(
      {
        std::atexit([] { _exit(Verdict()); });  // registered first, so it runs last
        RunUntilChangedThen([] { std::exit(0); });
      },
      ::testing::ExitedWithCode(kRestored), "");
}

TEST_F(ExitRestoreDeathTest, WithoutRestoreOnExitTheLimitStaysChanged) {
  // The control: the same path with the exit hooks off must not restore, so
  // the tests above can fail.
  EXPECT_EXIT(
      {
        signal(SIGTERM, ReportAndExit);
        static testing::FakeClock clock;
        testing::FakeGpuConfig config;
        config.default_power_limit_mw = kOriginalMw;
        std::vector<std::unique_ptr<device::Gpu>> list;
        list.push_back(std::make_unique<testing::FakeGpu>(config, clock, 0));
        g_gpu = static_cast<testing::FakeGpu*>(list.back().get());
        device::GpuSet gpus("test", std::move(list));
        auto monitor = monitor::Monitor::Create(&gpus, nullptr, {}).value();
        PowerLimitOptimizerOptions options;
        options.wait_steps = 0;
        options.restore_on_exit = false;
        options.log = [](std::string_view) {};
        auto optimizer = PowerLimitOptimizer::Create(gpus, *monitor, options).value();
        optimizer->OnStepBegin();
        kill(getpid(), SIGTERM);
        for (;;) pause();
      },
      ::testing::ExitedWithCode(kNotRestored), "");
}

// Registering and unregistering puts the previous SIGTERM action back.
TEST(ExitRestoreTest, UnregisteringTheLastObjectReinstatesThePreviousHandlers) {
  struct Nothing final : internal::ExitRestorable {
    void RestoreForExit(std::string_view) noexcept override {}
  } object;
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);
  internal::RegisterForExit(&object);
  struct sigaction during {};
  sigaction(SIGTERM, nullptr, &during);
  EXPECT_NE(during.sa_handler, before.sa_handler);
  internal::UnregisterForExit(&object);
  struct sigaction after {};
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace zeus::runtime
