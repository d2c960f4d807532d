// Copyright 2026 The Zeus C++ Authors.
//
// The cost of energy attribution per interval on a node of 8 GPUs with 50
// processes each (issue 24's budget: at most 0.3% of a core at 10 Hz). One
// iteration splits one interval of every GPU (AttributeInterval) and adds it
// to the ledger, as the exporter would at each tick, so the share of a core
// at 10 Hz is its CPU time x 10 per second: 20 us per iteration is 0.02%.

#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "zeus/monitor/attribution.h"

namespace {

using zeus::monitor::AttributeInterval;
using zeus::monitor::AttributionLedger;
using zeus::monitor::ProcessUtilizationSample;

constexpr int kGpus = 8;
constexpr std::uint32_t kProcessesPerGpu = 50;

void BM_AttributeEightGpusFiftyProcesses(benchmark::State& state) {
  // One or two driver samples per process, as nvmlDeviceGetProcessUtilization
  // may return for a 100 ms interval.
  std::vector<std::vector<ProcessUtilizationSample>> samples(kGpus);
  for (int g = 0; g < kGpus; ++g) {
    for (std::uint32_t p = 0; p < kProcessesPerGpu; ++p) {
      const std::uint32_t pid = 1000 + static_cast<std::uint32_t>(g) * 100 + p;
      samples[g].push_back({{pid, 4242u + pid}, static_cast<double>((p * 7) % 100)});
      if (p % 2 == 0) samples[g].push_back({{pid, 4242u + pid}, static_cast<double>((p * 3) % 100)});
    }
  }
  auto ledger = AttributionLedger::Create({}).value();
  std::int64_t measured_mj = 40'000;  // 400 W for 100 ms
  for (auto _ : state) {
    for (int g = 0; g < kGpus; ++g) {
      auto interval = AttributeInterval(measured_mj + g, std::chrono::milliseconds(100), 60'000, samples[g]);
      if (!interval || !ledger->Add(static_cast<std::size_t>(g), *interval)) {
        state.SkipWithError("attribution failed");
        return;
      }
    }
    ++measured_mj;
  }
}
BENCHMARK(BM_AttributeEightGpusFiftyProcesses);

void BM_LedgerSnapshot(benchmark::State& state) {
  // What a scrape costs: a snapshot of 400 live entries.
  auto ledger = AttributionLedger::Create({}).value();
  std::vector<ProcessUtilizationSample> samples;
  for (std::uint32_t p = 0; p < kProcessesPerGpu; ++p) samples.push_back({{p + 1, 0}, 10.0});
  for (int g = 0; g < kGpus; ++g) {
    (void)ledger->Add(static_cast<std::size_t>(g),
                      AttributeInterval(40'000, std::chrono::milliseconds(100), 60'000, samples).value());
  }
  for (auto _ : state) benchmark::DoNotOptimize(ledger->Snapshot());
}
BENCHMARK(BM_LedgerSnapshot);

}  // namespace

BENCHMARK_MAIN();
