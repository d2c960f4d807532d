// Copyright 2026 The Zeus C++ Authors.
//
// How fast the trace-driven simulator is, against the figures:
//   * the original Python simulator: 61.9 s for 120 runs (4.35 ms/recurrence);
//     a plain-Python rewrite: 1.09 s;
//   * goal: the 60 runs over the shared V100 and A40 traces in < 50 ms of
//     simulation on 2 cores, < 150 ms with trace loading;
//   * and how run time grows with the number of simulated jobs (to 10,000).
//
//   build/bin/zeus_simulator_bench                       # everything
//   build/bin/zeus_simulator_bench --benchmark_filter=Reproduce60
//
// Counters: per_recurrence is wall time per simulated recurrence; jobs/s is
// simulated runs (one recurring job, R recurrences) per second.

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "zeus/optimizer/numpy_random.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/metrics.h"
#include "zeus/simulator/simulator.h"
#include "zeus/simulator/trace.h"

namespace zeus::simulator {
namespace {

const std::string kTraceDir = std::string(ZEUS_SHARED_DIR) + "/traces/zeus-nsdi23";
const char* const kGpus[] = {"v100", "a40"};

struct Traces {
  TrainTrace train;
  std::vector<PowerTrace> power;
};

Traces LoadOrDie() {
  Traces t;
  Result<TrainTrace> train = LoadTrainTrace(TrainTracePath(kTraceDir));
  if (!train) {
    std::fprintf(stderr, "error: %s\n", train.error().message().c_str());
    std::exit(1);
  }
  t.train = std::move(*train);
  for (const char* gpu : kGpus) {
    Result<PowerTrace> power = LoadPowerTrace(PowerTracePath(kTraceDir, gpu), gpu);
    if (!power) {
      std::fprintf(stderr, "error: %s\n", power.error().message().c_str());
      std::exit(1);
    }
    t.power.push_back(std::move(*power));
  }
  return t;
}

// The 12 (GPU, workload) slices.
std::vector<JobTrace> BuildJobs(const Traces& t) {
  std::vector<JobTrace> jobs;
  for (const PowerTrace& power : t.power) {
    for (const WorkloadSpec& w : BuiltinWorkloads()) {
      Result<JobTrace> job = BuildJobTrace(t.train, power, w);
      if (!job) {
        std::fprintf(stderr, "error: %s\n", job.error().message().c_str());
        std::exit(1);
      }
      jobs.push_back(std::move(*job));
    }
  }
  return jobs;
}

const std::vector<JobTrace>& Jobs() {
  static const std::vector<JobTrace>* jobs = new std::vector<JobTrace>(BuildJobs(LoadOrDie()));
  return *jobs;
}

// Simulates `num_runs` runs (job i % 12, seed 1 + i / 12) on `threads`
// threads, as `zeus reproduce` does; returns the recurrences simulated.
std::size_t SimulateRuns(const std::vector<JobTrace>& jobs, std::size_t num_runs, unsigned threads) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> recurrences{0};
  auto work = [&] {
    std::size_t mine = 0;
    for (std::size_t i = next++; i < num_runs; i = next++) {
      SimulationOptions options;
      options.seed = 1 + i / jobs.size();
      Result<SimulationResult> r = Simulate(jobs[i % jobs.size()], options);
      if (!r) std::abort();
      mine += r->recurrences.size();
      benchmark::DoNotOptimize(r->tries.data());
    }
    recurrences += mine;
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
  }
  return recurrences;
}

void BM_LoadTraces(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(LoadOrDie());
}
BENCHMARK(BM_LoadTraces)->Unit(benchmark::kMillisecond);

void BM_BuildJobSlices(benchmark::State& state) {
  const Traces t = LoadOrDie();
  for (auto _ : state) benchmark::DoNotOptimize(BuildJobs(t));
}
BENCHMARK(BM_BuildJobSlices)->Unit(benchmark::kMillisecond);

// One run: librispeech on V100 (R = 210), seed 1.
void BM_SimulateOneRun(benchmark::State& state) {
  const JobTrace& job = Jobs()[0];
  std::size_t recurrences = 0;
  for (auto _ : state) {
    Result<SimulationResult> r = Simulate(job, {});
    recurrences += r->recurrences.size();
    benchmark::DoNotOptimize(r->tries.data());
  }
  state.counters["per_recurrence"] =
      benchmark::Counter(static_cast<double>(recurrences), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SimulateOneRun)->Unit(benchmark::kMicrosecond);

// The goal: the 60 runs (6 workloads x 2 GPUs x 5 seeds), simulation only.
void BM_Reproduce60(benchmark::State& state) {
  const std::vector<JobTrace>& jobs = Jobs();
  const auto threads = static_cast<unsigned>(state.range(0));
  std::size_t recurrences = 0;
  for (auto _ : state) recurrences += SimulateRuns(jobs, 60, threads);
  state.counters["per_recurrence"] =
      benchmark::Counter(static_cast<double>(recurrences), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Reproduce60)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same including reading and preparing the traces (what the command does
// before printing).
void BM_Reproduce60WithLoading(benchmark::State& state) {
  const auto threads = static_cast<unsigned>(state.range(0));
  for (auto _ : state) {
    const std::vector<JobTrace> jobs = BuildJobs(LoadOrDie());
    benchmark::DoNotOptimize(SimulateRuns(jobs, 60, threads));
  }
}
BENCHMARK(BM_Reproduce60WithLoading)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Scaling with the number of simulated jobs, on 2 threads.
void BM_ScaleJobs(benchmark::State& state) {
  const std::vector<JobTrace>& jobs = Jobs();
  const auto num_runs = static_cast<std::size_t>(state.range(0));
  std::size_t recurrences = 0;
  for (auto _ : state) recurrences += SimulateRuns(jobs, num_runs, 2);
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(num_runs) * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
  state.counters["per_recurrence"] =
      benchmark::Counter(static_cast<double>(recurrences), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ScaleJobs)->Arg(12)->Arg(60)->Arg(300)->Arg(1000)->Arg(3000)->Arg(10000)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The random stream's primitives.
void BM_RngNextUint64(benchmark::State& state) {
  optimizer::NumpyRandom rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(rng.NextUint64());
}
BENCHMARK(BM_RngNextUint64);

void BM_RngIntegers(benchmark::State& state) {
  optimizer::NumpyRandom rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(rng.Integers(0, 5));
}
BENCHMARK(BM_RngIntegers);

void BM_RngStandardNormal(benchmark::State& state) {
  optimizer::NumpyRandom rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(rng.StandardNormal());
}
BENCHMARK(BM_RngStandardNormal);

}  // namespace
}  // namespace zeus::simulator

BENCHMARK_MAIN();
