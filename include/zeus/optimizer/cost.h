// Copyright 2026 The Zeus C++ Authors.
//
// The Zeus cost metric (paper Eq. 2; ../shared/docs/zeus-reference.md A1):
//
//   cost = eta * energy_j + (1 - eta) * max_power_w * time_s
//
// eta in [0, 1] weighs energy against time; max_power_w (the largest power
// limit of the device, times the number of GPUs) turns time into joules so
// the two terms share a unit. Bandits use reward = -cost.
//
// Pure functions; thread-safe.

#ifndef ZEUS_OPTIMIZER_COST_H_
#define ZEUS_OPTIMIZER_COST_H_

#include "zeus/base/error.h"

namespace zeus::optimizer {

// The cost of a run that used energy_j joules over time_s seconds. The
// floating-point order is eta*E + ((1-eta)*max_power_w)*T, as the original.
// REQUIRES: eta in [0, 1] (see ValidateEta).
inline double ZeusCost(double energy_j, double time_s, double eta, double max_power_w) {
  return eta * energy_j + ((1.0 - eta) * max_power_w) * time_s;
}

// OK when 0 <= eta <= 1; kInvalidArgument otherwise (NaN included).
Status ValidateEta(double eta);

}  // namespace zeus::optimizer

#endif  // ZEUS_OPTIMIZER_COST_H_
