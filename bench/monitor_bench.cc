// Copyright 2026 The Zeus C++ Authors.
//
// The cost of a measurement window on 8 GPUs. The GPUs are in-process fakes,
// so the device reads are cheap; BM_DeviceReads measures those reads alone so
// that the window's own overhead is the difference. BM_OpenEightEmulatedGpus
// is the start-up cost of opening 8 GPUs (issue 37: no energy counter check
// at open) on the NVML emulator at time_scale 1, 20 and 50.

#include <benchmark/benchmark.h>

#include <string>

#include <nlohmann/json.hpp>

#include "testing/fake_gpu.h"
#include "testing/temp_dir.h"
#include "zeus/device/discovery.h"
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

#ifdef ZEUS_BENCH_EMULATOR_PATH
// OpenGpus on 8 emulated A100s whose scenario runs at state.range(0) x real
// time, then the set's destruction (nvmlShutdown).
void BM_OpenEightEmulatedGpus(benchmark::State& state) {
  zeus::testing::TempDir tmp;
  const nlohmann::json gpu = {{"name", "NVIDIA A100-SXM4-40GB"}, {"architecture", "ampere"},
                              {"min_power_limit_w", 100},          {"max_power_limit_w", 400},
                              {"default_power_limit_w", 400},      {"energy_counter", true},
                              {"power_w", 250}};
  nlohmann::json gpus = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) gpus.push_back(gpu);
  const nlohmann::json scenario = {
      {"gpus", gpus}, {"time_scale", state.range(0)}, {"state_file", tmp.File("emulator.state")}};
  zeus::testing::ScopedEnv config("ZEUS_EMULATOR_CONFIG", tmp.Write("scenario.json", scenario.dump()));
  zeus::testing::ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::nullopt);
  zeus::device::GpuOptions options;
  options.nvml_library = ZEUS_BENCH_EMULATOR_PATH;
  for (auto _ : state) {
    auto opened = zeus::device::OpenGpus(options);
    if (!opened || (*opened)->size() != 8) {
      state.SkipWithError(opened ? "not 8 GPUs" : opened.error().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(opened);
  }
}
BENCHMARK(BM_OpenEightEmulatedGpus)->Arg(1)->Arg(20)->Arg(50)->Unit(benchmark::kMillisecond);
#endif

}  // namespace
