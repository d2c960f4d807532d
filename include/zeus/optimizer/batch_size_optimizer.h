// Copyright 2026 The Zeus C++ Authors.
//
// Zeus's batch-size optimizer: pruning (pruning.h) first, then Gaussian
// Thompson sampling (gaussian_ts.h) over the survivors. Bit-compatible with
// the original PruningGTSBatchSizeOptimizer (zeus-reference A11) used by the
// NSDI '23 simulator, and the policy behind the online batch-size service.
//
//   * Every observation (bs, cost, reached) is recorded as reward -cost,
//     failures and early-stopped runs included.
//   * While pruning, observations go to the explorer.
//   * At the first Predict after pruning ends the bandit is built: its arms
//     are the survivors, each seeded with its recorded rewards (newest
//     window_size of them when window_size > 0), and it gets its own
//     numpy.default_rng(seed) created at that moment.
//   * Afterwards each observation refits that arm (GaussianTs::Observe); the
//     observations of the pruning stage are then dropped, so memory stays
//     bounded however long the job recurs.
//
// A pure state machine (observations in, decisions out): no I/O, no clock.
// Thread-safety: a value type; not for concurrent use.

#ifndef ZEUS_OPTIMIZER_BATCH_SIZE_OPTIMIZER_H_
#define ZEUS_OPTIMIZER_BATCH_SIZE_OPTIMIZER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/optimizer/gaussian_ts.h"
#include "zeus/optimizer/pruning.h"

namespace zeus::optimizer {

struct BatchSizeOptimizerOptions {
  int num_pruning_rounds = 2;
  PruningStopRule pruning_stop;  // off by default (the original)
  GaussianTsOptions bandit;        // prior, num_explorations, window_size
  std::uint64_t seed = 123456;     // the original's default
};

enum class BatchSizeStage { kPruning, kThompsonSampling };

class BatchSizeOptimizer {
 public:
  // Fails with kInvalidArgument on the conditions of PruningExplorer::Create
  // and GaussianTs::Create.
  static Result<BatchSizeOptimizer> Create(std::vector<int> batch_sizes, int default_batch_size,
                                           const BatchSizeOptimizerOptions& options);

  // The batch size to run next. While pruning, repeated calls return the same
  // size until it is observed; with the bandit, each call draws anew. Fails
  // with kFailedPrecondition when pruning left no batch size that reached
  // the target.
  Result<int> Predict();

  // The result of a run at `batch_size`. While pruning it must be the size
  // Predict returned (kInvalidArgument otherwise); afterwards an arm
  // (kNotFound otherwise).
  Status Observe(int batch_size, double cost, bool reached);

  // kPruning until the bandit is built (at the first Predict after pruning).
  BatchSizeStage stage() const { return bandit_ ? BatchSizeStage::kThompsonSampling : BatchSizeStage::kPruning; }
  // The bandit, once built.
  const GaussianTs* bandit() const { return bandit_ ? &*bandit_ : nullptr; }
  const PruningExplorer& explorer() const { return explorer_; }

 private:
  BatchSizeOptimizer(PruningExplorer explorer, const BatchSizeOptimizerOptions& options)
      : explorer_(std::move(explorer)), options_(options) {}
  Status BuildBandit();

  PruningExplorer explorer_;
  BatchSizeOptimizerOptions options_;
  std::optional<GaussianTs> bandit_;
  struct Observation {
    int batch_size;
    double reward;
  };
  std::vector<Observation> history_;  // until the bandit is built
};

}  // namespace zeus::optimizer

#endif  // ZEUS_OPTIMIZER_BATCH_SIZE_OPTIMIZER_H_
