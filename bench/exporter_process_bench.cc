// Copyright 2026 The Zeus C++ Authors.
//
// The cost of `zeus exporter --per-process` per 10 Hz tick on a node of 8
// GPUs with 50 processes each (issue 24's budget: at most 0.3% of a core at
// 10 Hz). The GPUs are in-process fakes (no driver time is counted: it is
// the same with or without attribution's arithmetic around it, except for
// the two per-process calls per GPU), the processes have fake /proc entries
// (identified once, their start time re-read every 2 s as the tracker does).
//
//   BM_ProcessTick: one tick, the tracker's Sample() over 8 GPUs.
//   BM_ProcessTickAndScrape: one tick and one scrape's per-process families
//     (400 process series), serialized: a Prometheus scraping at 10 Hz.
// The counter core_pct_at_10Hz is the CPU time per iteration x 10 per second,
// in percent of one core: 0.3 is the budget.

#include <prometheus/text_serializer.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "exporter/process_collector.h"
#include "testing/fake_clock.h"
#include "testing/proc_tree.h"
#include "testing/process_scripted_gpu.h"
#include "testing/temp_dir.h"

namespace {

using zeus::testing::ProcessScriptedGpu;
using zeus::testing::ScriptedProcess;

constexpr unsigned int kGpus = 8;
constexpr std::uint32_t kProcessesPerGpu = 50;

struct Node {
  zeus::testing::FakeClock clock;
  zeus::testing::TempDir proc;
  std::unique_ptr<zeus::device::GpuSet> gpus;
  std::unique_ptr<zeus::exporter::ProcessCollector> collector;

  Node() {
    std::vector<std::unique_ptr<zeus::device::Gpu>> list;
    std::vector<std::string> index, uuid;
    for (unsigned int g = 0; g < kGpus; ++g) {
      zeus::testing::FakeGpuConfig config;
      config.uuid = fmt::format("GPU-{}", g);
      config.power_w = 300;
      auto gpu = std::make_unique<ProcessScriptedGpu>(config, clock, g);
      std::vector<ScriptedProcess> processes;
      for (std::uint32_t p = 0; p < kProcessesPerGpu; ++p) {
        const std::uint32_t pid = 10000 + g * 100 + p;
        processes.push_back({pid, (p * 7) % 100});
        WriteProcess(pid, p);
      }
      gpu->SetProcesses(std::move(processes));
      list.push_back(std::move(gpu));
      index.push_back(std::to_string(g));
      uuid.push_back(config.uuid);
    }
    gpus = std::make_unique<zeus::device::GpuSet>("1.0", std::move(list));
    zeus::monitor::ProcessEnergyOptions options;
    options.idle.idle_power_mw_by_model["Fake V100"] = 60'000;
    options.identity.proc_root = proc.path();
    options.clock = &clock;
    collector = zeus::exporter::ProcessCollector::Create(*gpus, index, uuid, "bench", options).value();
    collector->Sample();
  }

  // A Slurm job per ten processes, as procfs writes the files.
  void WriteProcess(std::uint32_t pid, std::uint32_t n) const {
    zeus::testing::ProcTree(proc.path())
        .Add({.pid = pid,
              .comm = "python3",
              .start_time_ticks = 5000u + pid,
              .cgroup = fmt::format("0::/system.slice/slurmstepd.scope/job_{}/step_0/user/task_0\n", 100 + n % 10)});
  }

  void Tick() {
    clock.Advance(std::chrono::milliseconds(100));
    collector->Sample();
  }
};

void SetShare(benchmark::State& state) {
  // value x iterations / CPU time, inverted: CPU seconds per iteration x
  // 1000 = percent of a core at 10 iterations per second.
  state.counters["core_pct_at_10Hz"] =
      benchmark::Counter(0.001, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_ProcessTick(benchmark::State& state) {
  Node node;
  for (auto _ : state) node.Tick();
  SetShare(state);
}
BENCHMARK(BM_ProcessTick);

void BM_ProcessTickAndScrape(benchmark::State& state) {
  Node node;
  std::size_t bytes = 0;
  for (auto _ : state) {
    node.Tick();
    std::vector<prometheus::MetricFamily> families;
    node.collector->Append(families);
    bytes = prometheus::TextSerializer().Serialize(families).size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["exposition_bytes"] = static_cast<double>(bytes);
  SetShare(state);
}
BENCHMARK(BM_ProcessTickAndScrape);

}  // namespace

BENCHMARK_MAIN();
