// Copyright 2026 The Zeus C++ Authors.
//
// Per-step cost of the power-limit optimizer's hooks outside profiling
// windows (goal: < 1 us per step): OnStepBegin + OnStepEnd after profiling
// (Done), while waiting to profile (Ready), and when disabled (no
// permission). Devices are FakeGpus over a FakeClock, so only the
// optimizer's own work is timed.

#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "testing/fake_clock.h"
#include "testing/fake_gpu.h"
#include "zeus/runtime/power_limit_optimizer.h"

namespace {

using zeus::runtime::PowerLimitOptimizer;
using zeus::runtime::PowerLimitOptimizerOptions;
using zeus::runtime::PowerLimitOptimizerState;

struct Fixture {
  explicit Fixture(bool permitted, int wait_steps) {
    std::vector<std::unique_ptr<zeus::device::Gpu>> list;
    zeus::testing::FakeGpuConfig config;
    auto gpu = std::make_unique<zeus::testing::FakeGpu>(config, clock, 0);
    if (!permitted) gpu->FailWith("SetPowerLimitMw", zeus::Error(zeus::ErrorCode::kPermissionDenied, "no"));
    fake = gpu.get();
    list.push_back(std::move(gpu));
    gpus = std::make_unique<zeus::device::GpuSet>("bench", std::move(list));
    zeus::monitor::MonitorOptions mo;
    mo.clock = &clock;
    monitor = zeus::monitor::Monitor::Create(gpus.get(), nullptr, std::move(mo)).value();
    PowerLimitOptimizerOptions options;
    options.wait_steps = wait_steps;
    options.warmup_steps = 1;
    options.profile_steps = 1;
    options.restore_on_exit = false;
    options.log = [](std::string_view) {};
    optimizer = PowerLimitOptimizer::Create(*gpus, *monitor, options).value();
  }
  zeus::testing::FakeClock clock;
  zeus::testing::FakeGpu* fake = nullptr;
  std::unique_ptr<zeus::device::GpuSet> gpus;
  std::unique_ptr<zeus::monitor::Monitor> monitor;
  std::unique_ptr<PowerLimitOptimizer> optimizer;
};

void BM_StepAfterProfiling(benchmark::State& state) {
  Fixture f(true, 0);
  while (f.optimizer->state() != PowerLimitOptimizerState::kDone) {
    f.optimizer->OnStepBegin();
    f.clock.Advance(std::chrono::milliseconds(100));
  }
  for (auto _ : state) {
    f.optimizer->OnStepBegin();
    f.optimizer->OnStepEnd();
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_StepAfterProfiling);

void BM_StepWhileWaiting(benchmark::State& state) {
  Fixture f(true, 2'000'000'000);
  for (auto _ : state) {
    f.optimizer->OnStepBegin();
    f.optimizer->OnStepEnd();
    benchmark::ClobberMemory();
  }
  if (f.optimizer->state() != PowerLimitOptimizerState::kReady) state.SkipWithError("left the Ready state");
}
BENCHMARK(BM_StepWhileWaiting);

void BM_StepWhenDisabled(benchmark::State& state) {
  Fixture f(false, 1);
  if (f.optimizer->state() != PowerLimitOptimizerState::kDisabled) state.SkipWithError("not disabled");
  for (auto _ : state) {
    f.optimizer->OnStepBegin();
    f.optimizer->OnStepEnd();
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_StepWhenDisabled);

// For comparison: one profiled limit's window (begin + end) over one GPU.
void BM_ProfilingWindow(benchmark::State& state) {
  Fixture f(true, 0);
  for (auto _ : state) {
    (void)f.monitor->BeginWindow("w");
    f.clock.Advance(std::chrono::seconds(1));
    benchmark::DoNotOptimize(f.monitor->EndWindow("w"));
  }
}
BENCHMARK(BM_ProfilingWindow);

}  // namespace

BENCHMARK_MAIN();
