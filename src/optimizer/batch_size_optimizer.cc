// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/batch_size_optimizer.h"

#include <fmt/format.h>

namespace zeus::optimizer {

Result<BatchSizeOptimizer> BatchSizeOptimizer::Create(std::vector<int> batch_sizes, int default_batch_size,
                                                      const BatchSizeOptimizerOptions& options) {
  Result<PruningExplorer> explorer =
      PruningExplorer::Create(std::move(batch_sizes), default_batch_size, options.num_pruning_rounds,
                              options.pruning_stop);
  if (!explorer) return Fail(explorer.error());
  // Validate the bandit options now rather than when pruning ends.
  if (Result<GaussianTs> probe = GaussianTs::Create({1}, options.bandit, options.seed); !probe) {
    return Fail(probe.error());
  }
  return BatchSizeOptimizer(std::move(*explorer), options);
}

Status BatchSizeOptimizer::BuildBandit() {
  if (explorer_.failed()) {
    return Fail(ErrorCode::kFailedPrecondition,
                "no batch size reached the target during pruning; raise max_epochs or check the target metric");
  }
  Result<GaussianTs> bandit = GaussianTs::Create(explorer_.survivors(), options_.bandit, options_.seed);
  if (!bandit) return Fail(bandit.error());
  for (int arm : bandit->arms()) {
    std::vector<double> rewards;
    for (const Observation& o : history_) {
      if (o.batch_size == arm) rewards.push_back(o.reward);
    }
    if (Status s = bandit->SetRewards(arm, rewards); !s) return s;
  }
  bandit_.emplace(std::move(*bandit));
  std::vector<Observation>().swap(history_);
  return OkStatus();
}

Result<int> BatchSizeOptimizer::Predict() {
  if (!bandit_) {
    if (std::optional<int> next = explorer_.Next()) return *next;
    if (Status s = BuildBandit(); !s) return Fail(s.error());
  }
  return bandit_->Predict();
}

Status BatchSizeOptimizer::Observe(int batch_size, double cost, bool reached) {
  if (bandit_) return bandit_->Observe(batch_size, -cost);
  // Recorded only until the bandit is built, which seeds its arms from it.
  if (Status s = explorer_.Observe(batch_size, cost, reached); !s) return s;
  history_.push_back({batch_size, -cost});
  return OkStatus();
}

}  // namespace zeus::optimizer
