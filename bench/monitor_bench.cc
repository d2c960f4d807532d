// Copyright 2026 The Zeus C++ Authors.
//
// The cost of a measurement window on 8 GPUs. The GPUs are in-process fakes,
// so the device reads are cheap; BM_DeviceReads measures those reads alone so
// that the window's own overhead is the difference.

#include <benchmark/benchmark.h>

#include "testing/fake_gpu.h"
#include "zeus/monitor/monitor.h"

namespace {

using zeus::testing::FakeClock;
using zeus::testing::FakeGpu;

struct Fixture {
  Fixture() {
    std::vector<std::unique_ptr<zeus::device::Gpu>> gpus;
    for (unsigned i = 0; i < 8; ++i) gpus.push_back(std::make_unique<FakeGpu>(zeus::testing::FakeGpuConfig{}, clock, i));
    set = std::make_unique<zeus::device::GpuSet>("bench", std::move(gpus));
  }
  FakeClock clock;
  std::unique_ptr<zeus::device::GpuSet> set;
};

void BM_DeviceReads(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) {
    // What one begin + end reads: each GPU's counter twice.
    for (int rep = 0; rep < 2; ++rep) {
      for (std::size_t i = 0; i < f.set->size(); ++i) benchmark::DoNotOptimize(f.set->gpu(i).TotalEnergyMj());
    }
  }
}
BENCHMARK(BM_DeviceReads);

void BM_BeginEndWindow(benchmark::State& state) {
  Fixture f;
  zeus::monitor::MonitorOptions options;
  options.clock = &f.clock;
  auto monitor = zeus::monitor::Monitor::Create(f.set.get(), nullptr, options).value();
  for (auto _ : state) {
    (void)monitor->BeginWindow("step");
    f.clock.Advance(std::chrono::milliseconds(200));
    benchmark::DoNotOptimize(monitor->EndWindow("step"));
  }
}
BENCHMARK(BM_BeginEndWindow);

}  // namespace
