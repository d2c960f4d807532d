// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/policy.h"

#include <fmt/format.h>

namespace zeus::optimizer {

std::string_view BatchSizePolicyName(BatchSizePolicy policy) {
  switch (policy) {
    case BatchSizePolicy::kZeus:
      return "zeus";
    case BatchSizePolicy::kZeusRobust:
      return "zeus-robust";
  }
  return "zeus";
}

std::string BatchSizePolicyNames() { return "zeus, zeus-robust"; }

Result<BatchSizePolicy> ParseBatchSizePolicy(std::string_view name) {
  for (BatchSizePolicy p : {BatchSizePolicy::kZeus, BatchSizePolicy::kZeusRobust}) {
    if (name == BatchSizePolicyName(p)) return p;
  }
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("unknown batch-size policy '{}'; use one of {}", name, BatchSizePolicyNames()));
}

BatchSizeOptimizerOptions ApplyBatchSizePolicy(BatchSizePolicy policy, BatchSizeOptimizerOptions options) {
  if (policy == BatchSizePolicy::kZeusRobust) {
    options.num_pruning_rounds = 1;
    options.pruning_stop = {kRobustStopCostRatio, kRobustStopPatience};
    options.bandit.variance_model = VarianceModel::kPooledRelative;
    options.bandit.prior_cv = kRobustPriorCv;
    options.bandit.prior_cv_weight = kRobustPriorCvWeight;
    options.bandit.num_explorations = 1;
  }
  return options;
}

}  // namespace zeus::optimizer
