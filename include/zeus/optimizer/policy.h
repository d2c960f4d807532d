// Copyright 2026 The Zeus C++ Authors.
//
// The named batch-size policies, one set of options each, shared by the
// simulator (`zeus simulate/reproduce --policy`), the batch-size service
// (JobSpec "policy") and the runtime client (BatchSizeOptimizerOptions):
//
//   * "zeus" (the default): the original, bit for bit: two pruning rounds,
//     then Gaussian Thompson sampling with each arm's own variance, every arm
//     tried twice before sampling.
//   * "zeus-robust": cheaper exploration and a bandit that cannot lock in
//     (docs/simulator.md, "The zeus-robust policy"):
//       - one pruning round (the second only bought each arm a second
//         sample, which the pooled variance below makes unnecessary);
//       - a direction of that round also ends at a size that reached the
//         target at more than kRobustStopCostRatio x the round's least cost,
//         and "up" is skipped when the starting size was that much worse
//         (pruning.h: a job's cost is roughly unimodal in the batch size);
//       - Thompson sampling with one pooled coefficient of variation
//         (VarianceModel::kPooledRelative, prior cv kRobustPriorCv worth
//         kRobustPriorCvWeight degrees of freedom), arms entering with one
//         reward (num_explorations 1).
//     Everything else (seed, window, prior mean and precision) is the
//     caller's.

#ifndef ZEUS_OPTIMIZER_POLICY_H_
#define ZEUS_OPTIMIZER_POLICY_H_

#include <string>
#include <string_view>

#include "zeus/base/error.h"
#include "zeus/optimizer/batch_size_optimizer.h"

namespace zeus::optimizer {

enum class BatchSizePolicy { kZeus, kZeusRobust };

inline constexpr double kRobustStopCostRatio = 1.5;
inline constexpr int kRobustStopPatience = 1;
inline constexpr double kRobustPriorCv = 0.1;
inline constexpr double kRobustPriorCvWeight = 2.0;

// "zeus", "zeus-robust".
std::string_view BatchSizePolicyName(BatchSizePolicy policy);
// The inverse of BatchSizePolicyName; kInvalidArgument naming the choices.
Result<BatchSizePolicy> ParseBatchSizePolicy(std::string_view name);
// "zeus, zeus-robust", for help texts and messages.
std::string BatchSizePolicyNames();

// `options` with the policy's settings applied (kZeus: unchanged).
BatchSizeOptimizerOptions ApplyBatchSizePolicy(BatchSizePolicy policy, BatchSizeOptimizerOptions options);

}  // namespace zeus::optimizer

#endif  // ZEUS_OPTIMIZER_POLICY_H_
