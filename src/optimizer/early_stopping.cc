// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/early_stopping.h"

#include <cmath>

#include "zeus/optimizer/numpy_math.h"

namespace zeus::optimizer {

std::int64_t EpochBudget(double cost_ub, double cost_per_epoch, std::int64_t max_epochs) {
  if (std::isinf(cost_ub) || !(cost_per_epoch > 0.0)) return max_epochs;
  const double epochs = PythonFloorDiv(cost_ub, cost_per_epoch);
  if (epochs >= static_cast<double>(max_epochs)) return max_epochs;
  if (epochs <= 0.0) return 0;
  return static_cast<std::int64_t>(epochs);
}

}  // namespace zeus::optimizer
