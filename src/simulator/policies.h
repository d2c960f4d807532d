// Copyright 2026 The Zeus C++ Authors.
//
// The decision makers the simulator loop drives: Zeus and its baselines, each
// a thin adapter over zeus::optimizer. Private to zeus::simulator.

#ifndef ZEUS_SRC_SIMULATOR_POLICIES_H_
#define ZEUS_SRC_SIMULATOR_POLICIES_H_

#include <memory>
#include <string_view>

#include "zeus/base/error.h"
#include "zeus/optimizer/gaussian_ts.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/simulator.h"

namespace zeus::simulator::internal {

class JobPolicy {
 public:
  virtual ~JobPolicy() = default;

  // The batch size of the next run.
  virtual Result<int> NextBatchSize() = 0;
  // The stage the last NextBatchSize decided in ("pruning", "ts", ...).
  virtual std::string_view stage() const = 0;

  struct Limit {
    double power_limit_w = 0;
    bool profiled = false;  // this run's first epoch profiles the power limits
  };
  // The power limit for the batch size NextBatchSize returned.
  virtual Result<Limit> PowerLimit(const BatchSizeTrace& batch_size) = 0;

  // The run's outcome: `run` as recorded (batch size, limit, energy, time,
  // reached, epochs; ran = false for a run that could not start) and the
  // cost to learn from (the penalty for a run that could not start).
  virtual Status Observe(const TryRecord& run, double cost) = 0;

  // Whether a first recurrence whose first run misses the target is an error
  // (the original requires the default batch size to converge).
  virtual bool RequiresFirstSuccess() const { return true; }
  // Tries per recurrence beyond SimulationOptions::max_tries.
  virtual int ExtraTries() const { return 0; }
  // The Thompson-sampling bandit, when there is one and it is built.
  virtual const optimizer::GaussianTs* bandit() const { return nullptr; }
};

Result<std::unique_ptr<JobPolicy>> MakePolicy(const JobTrace& job, const SimulationOptions& options);

}  // namespace zeus::simulator::internal

#endif  // ZEUS_SRC_SIMULATOR_POLICIES_H_
