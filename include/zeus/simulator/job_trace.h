// Copyright 2026 The Zeus C++ Authors.
//
// One (GPU, workload) slice of the traces, prepared for simulation: the
// original's `train.merge(power, how="inner")` on (dataset, network,
// batch_size, optimizer), filtered to the workload's optimizer and target
// metric, indexed so that a simulated run is a few array lookups.
//
// Definitions (../shared/docs/simulator-spec.md, "Trace preparation"):
//   * A path for (batch size, power limit) is one train row (one training
//     run) joined with that limit's power row; paths keep the merged order
//     (train-row order, then power-CSV order).
//   * energy_per_epoch = time_per_epoch * average_power.
//   * max_power_w: the largest power limit anywhere in the GPU's merged trace
//     (used in the recorded cost).
//   * batch_sizes (the optimizer's list): sorted unique batch sizes of the
//     merged rows for (dataset, network, optimizer), whatever the target.
//   * default_batch_size = min(workload default, largest of batch_sizes).
//   * default_recurrences = 2 * |batch sizes| * |power limits| of the rows at
//     the target metric.
//
// Immutable once built; thread-safe to share between simulations.

#ifndef ZEUS_SIMULATOR_JOB_TRACE_H_
#define ZEUS_SIMULATOR_JOB_TRACE_H_

#include <string>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/optimizer/power_limit.h"
#include "zeus/simulator/trace.h"
#include "zeus/simulator/workload.h"

namespace zeus::simulator {

// One training path at one power limit.
struct TracePath {
  int run = 0;
  double target_epoch = 0;  // NaN: never reaches the target
  double time_per_epoch_s = 0;
  double energy_per_epoch_j = 0;
};

// Everything measured for one batch size of the job.
struct BatchSizeTrace {
  int batch_size = 0;
  double max_power_limit_w = 0;             // the largest limit measured for this batch size
  std::vector<double> power_limits_w;       // distinct, descending
  std::vector<std::vector<TracePath>> paths;  // paths[i]: the paths at power_limits_w[i]
  // Per limit (same order): mean time per epoch and mean average power over
  // its rows, the input of JIT power-limit profiling.
  std::vector<optimizer::PowerLimitProfile> profiles;
  // Means over every row of the batch size (all runs x all limits, numpy
  // pairwise order): the cost of the epoch spent profiling power limits.
  double profiling_epoch_energy_j = 0;
  double profiling_epoch_time_s = 0;

  // Index of `power_limit_w` in power_limits_w, or -1.
  int LimitIndex(double power_limit_w) const;
};

struct JobTrace {
  std::string gpu;
  WorkloadSpec workload;
  int default_batch_size = 0;        // capped b0
  std::vector<int> batch_sizes;      // the batch-size optimizer's list, ascending
  std::vector<double> power_limits_w;  // distinct limits at the target, ascending
  double max_power_w = 0;            // GPU-global
  int default_recurrences = 0;
  std::vector<BatchSizeTrace> per_batch_size;  // ascending; only sizes with rows at the target

  // The trace of a batch size, or nullptr when it has no rows at the target.
  const BatchSizeTrace* Find(int batch_size) const;
};

// Builds the job's slice. Fails with kInvalidArgument, naming the file and
// the value, when the workload (with its optimizer) is in neither trace or
// only one, when no run has the target metric, or when the capped default
// batch size has no rows at the target.
Result<JobTrace> BuildJobTrace(const TrainTrace& train, const PowerTrace& power, const WorkloadSpec& workload);

}  // namespace zeus::simulator

#endif  // ZEUS_SIMULATOR_JOB_TRACE_H_
