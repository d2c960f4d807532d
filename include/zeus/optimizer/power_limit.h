// Copyright 2026 The Zeus C++ Authors.
//
// Choosing a GPU power limit from profiles measured at several limits.
//
// Two forms of the same rule, argmin of the Zeus cost (cost.h):
//   * ChoosePowerLimit: from per-epoch time and average power, as Zeus's JIT
//     profiling does (paper Eq. 7): the cost of one epoch at limit p is
//       (eta * average_power_w(p) + (1 - eta) * max_limit_w) * time_s(p)
//     where max_limit_w is the largest profiled limit.
//   * ChoosePowerLimitFromMeasurements: from measured energy and time per
//     limit, as the online power-limit optimizer does (zeus-reference A8,
//     ZeusCost selector), with max power = largest limit x world_size.
// Both visit the limits from high to low and keep a strictly smaller cost, so
// on a tie the higher limit wins.
//
// Pure functions of their inputs; thread-safe.

#ifndef ZEUS_OPTIMIZER_POWER_LIMIT_H_
#define ZEUS_OPTIMIZER_POWER_LIMIT_H_

#include <span>

#include "zeus/base/error.h"

namespace zeus::optimizer {

// What profiling measured at one power limit, per epoch (or per profiling
// window: the unit cancels out of the argmin).
struct PowerLimitProfile {
  double power_limit_w = 0;
  double time_s = 0;
  double average_power_w = 0;
};

// The chosen limit and the cost it was chosen for.
struct PowerLimitChoice {
  double power_limit_w = 0;
  double cost = 0;
};

// The limit with the least per-epoch Zeus cost. Duplicated limits are
// allowed (each is a candidate). Fails with kInvalidArgument when `profiles`
// is empty, eta is outside [0, 1], or a value is negative or not finite.
Result<PowerLimitChoice> ChoosePowerLimit(std::span<const PowerLimitProfile> profiles, double eta);

// One profiling window of the online optimizer.
struct PowerLimitMeasurement {
  double power_limit_w = 0;
  double energy_j = 0;
  double time_s = 0;
};

// argmin over measurements of ZeusCost(energy_j, time_s, eta,
// max(power_limit_w) * world_size). Fails with kInvalidArgument on an empty
// span, eta outside [0, 1], world_size < 1 or a negative/non-finite value.
Result<PowerLimitChoice> ChoosePowerLimitFromMeasurements(std::span<const PowerLimitMeasurement> measurements,
                                                          double eta, int world_size);

}  // namespace zeus::optimizer

#endif  // ZEUS_OPTIMIZER_POWER_LIMIT_H_
