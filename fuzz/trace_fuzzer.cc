// Copyright 2026 The Zeus C++ Authors.
//
// libFuzzer target for the trace parser and everything downstream of it: bad
// input must give an Error, never a crash, a hang or undefined behaviour.
//
// The input's first byte picks what to do with the rest:
//   0: parse it as a train trace;
//   1: parse it as a power trace;
//   2+: split it at the first "\n--\n" into a train and a power trace, parse
//       both, and if they parse, build the job slice of the first train row's
//       workload and simulate a few recurrences with each policy.
//
// Built and run by scripts/fuzz-traces (clang, -fsanitize=fuzzer,address,undefined).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/metrics.h"
#include "zeus/simulator/simulator.h"
#include "zeus/simulator/trace.h"

namespace {

using namespace zeus::simulator;  // NOLINT

void SimulateAll(const TrainTrace& train, const PowerTrace& power) {
  if (train.rows.empty()) return;
  const TrainRow& first = train.rows.front();
  const WorkloadSpec spec{first.dataset, first.network, first.optimizer, first.target_metric,
                          1 + static_cast<int>(first.run % 20), first.batch_size};
  zeus::Result<JobTrace> job = BuildJobTrace(train, power, spec);
  if (!job) return;
  (void)ComputeBaselines(*job, 0.5);
  for (Policy policy : {Policy::kZeus, Policy::kGridSearch, Policy::kPowerLimitOnly, Policy::kBatchSizeOnly}) {
    SimulationOptions options;
    options.policy = policy;
    options.num_recurrences = 6;
    zeus::Result<SimulationResult> r = Simulate(*job, options);
    if (r && !r->recurrences.empty()) {
      zeus::Result<Baselines> b = ComputeBaselines(*job, 0.5);
      if (b) (void)Summarize(*r, *b);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0]) {
    case 0:
      (void)ParseTrainTrace(text, "fuzz_train.csv");
      break;
    case 1:
      (void)ParsePowerTrace(text, "fuzz_power.csv", "fuzz");
      break;
    default: {
      const std::size_t split = text.find("\n--\n");
      if (split == std::string_view::npos) return 0;
      zeus::Result<TrainTrace> train = ParseTrainTrace(text.substr(0, split + 1), "fuzz_train.csv");
      zeus::Result<PowerTrace> power = ParsePowerTrace(text.substr(split + 4), "fuzz_power.csv", "fuzz");
      if (train && power) SimulateAll(*train, *power);
      break;
    }
  }
  return 0;
}
