// Copyright 2026 The Zeus C++ Authors.
//
// Zeus's early stopping: a training run is stopped once its cost exceeds
// beta x the least cost of any run that reached the target so far
// (paper Sec. 4.4; the simulator applies it as an epoch budget).
//
// Pure functions; thread-safe.

#ifndef ZEUS_OPTIMIZER_EARLY_STOPPING_H_
#define ZEUS_OPTIMIZER_EARLY_STOPPING_H_

#include <cstdint>
#include <limits>

namespace zeus::optimizer {

// beta * min_cost; +infinity while no run has reached the target
// (min_cost == +infinity). REQUIRES: beta > 0.
inline double CostUpperBound(double beta, double min_cost) {
  if (min_cost == std::numeric_limits<double>::infinity()) return min_cost;
  return beta * min_cost;
}

// How many epochs a run may take before its cost exceeds cost_ub, when each
// epoch costs cost_per_epoch: min(cost_ub // cost_per_epoch, max_epochs) with
// Python's floor division; max_epochs when cost_ub is +infinity or
// cost_per_epoch is not positive. 0 means "cannot run even one epoch".
// REQUIRES: max_epochs >= 0, cost_ub >= 0 (not NaN).
std::int64_t EpochBudget(double cost_ub, double cost_per_epoch, std::int64_t max_epochs);

// True when a run that has cost `cost` so far is within the budget
// (cost <= cost_ub), i.e. it may continue.
inline bool WithinCostBudget(double cost, double cost_ub) { return cost_ub >= cost; }

}  // namespace zeus::optimizer

#endif  // ZEUS_OPTIMIZER_EARLY_STOPPING_H_
