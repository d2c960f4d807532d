// Copyright 2026 The Zeus C++ Authors.
//
// Zeus's batch-size pruning (paper Sec. 4.3; zeus-reference A10/A11): before
// the bandit starts, each batch size is tried in rounds to drop the ones that
// do not reach the target.
//
// In each round, with d the round's default batch size and L the round's
// sorted list: visit d and the smaller sizes in descending order ("down"),
// then the larger sizes in ascending order ("up"). A size that reaches the
// target is kept ("good"), and if its cost is the round's least, it becomes
// the default; a size that does not reach the target ends that direction.
// After the round L = sorted(good). The next round starts from the round's
// best size. After the last round the survivors are the bandit's arms.
//
// With a PruningStopRule of cost_ratio r > 0 and patience p (the
// zeus-robust policy; r = 0, the default, is the original), exploration also
// uses that a job's cost is roughly unimodal in the batch size. A size that
// reaches the target at a cost above r x the round's least cost so far is a
// "strike" (it is still kept); p strikes in a row end the direction (the
// sizes beyond are further from the optimum), and a size within r x the least
// cost resets the count. The "up" direction starts with one strike when the
// round's starting size cost more than r x the round's least cost when
// "down" ended (the optimum lies below it), so with p = 1 it is skipped.
//
// A pure state machine: Next() says which batch size to run, Observe() takes
// its result. Thread-safety: a value type; not for concurrent use.

#ifndef ZEUS_OPTIMIZER_PRUNING_H_
#define ZEUS_OPTIMIZER_PRUNING_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::optimizer {

struct PruningStopRule {
  double cost_ratio = 0.0;  // 0: off (the original), else >= 1
  int patience = 1;         // strikes in a row that end a direction, >= 1
};

class PruningExplorer {
 public:
  // Fails with kInvalidArgument when batch_sizes is empty or has a
  // non-positive or duplicate value, default_batch_size is not in it, or
  // num_rounds < 1, stop.cost_ratio is neither 0 nor a finite number >= 1,
  // or stop.patience < 1. The list need not be sorted.
  static Result<PruningExplorer> Create(std::vector<int> batch_sizes, int default_batch_size, int num_rounds = 2,
                                        PruningStopRule stop = {});

  // The batch size to run next; nullopt once pruning has ended. Repeated
  // calls without Observe return the same size.
  std::optional<int> Next() const { return expected_; }

  // The result of running `batch_size`: its cost and whether it reached the
  // target. Fails with kInvalidArgument when batch_size is not Next(), with
  // kFailedPrecondition when pruning has ended.
  Status Observe(int batch_size, double cost, bool reached);

  // True once every round has ended (with survivors, or failed()).
  bool done() const { return !expected_.has_value(); }
  // True when a round ended with no batch size reaching the target; pruning
  // is then over with no survivors.
  bool failed() const { return failed_; }
  // The sorted survivors of the last round; empty until done().
  const std::vector<int>& survivors() const { return survivors_; }
  // 0-based index of the current round (== num_rounds once done).
  int round() const { return round_; }

 private:
  PruningExplorer(std::vector<int> sorted, int default_batch_size, int num_rounds, PruningStopRule stop);
  void StartRound();
  void Advance();

  std::vector<int> list_;  // this round's sorted candidates
  int default_ = 0;
  int num_rounds_ = 0;
  int round_ = 0;
  std::vector<int> directions_[2];  // down, then up
  int direction_ = 0;
  std::size_t position_ = 0;
  std::vector<int> good_;
  double best_cost_ = 0;
  PruningStopRule stop_;
  int strikes_ = 0;                   // in the current direction
  int round_start_ = 0;               // the round's starting size
  std::optional<double> start_cost_;  // its cost this round, when it reached
  std::optional<int> expected_;
  std::vector<int> survivors_;
  bool failed_ = false;
};

}  // namespace zeus::optimizer

#endif  // ZEUS_OPTIMIZER_PRUNING_H_
