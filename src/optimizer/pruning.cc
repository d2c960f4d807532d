// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/pruning.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace zeus::optimizer {

Result<PruningExplorer> PruningExplorer::Create(std::vector<int> batch_sizes, int default_batch_size, int num_rounds,
                                                PruningStopRule stop) {
  if (batch_sizes.empty()) return Fail(ErrorCode::kInvalidArgument, "no batch sizes to explore");
  if (num_rounds < 1) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("the number of pruning rounds must be >= 1, got {}", num_rounds));
  }
  if (!(stop.cost_ratio == 0.0 || (stop.cost_ratio >= 1.0 && std::isfinite(stop.cost_ratio))) || stop.patience < 1) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the pruning stop rule needs a cost ratio of 0 (off) or a finite number >= 1 and a "
                            "patience >= 1, got {} and {}",
                            stop.cost_ratio, stop.patience));
  }
  std::sort(batch_sizes.begin(), batch_sizes.end());
  if (batch_sizes.front() <= 0) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("batch sizes must be positive, got {}", batch_sizes.front()));
  }
  if (std::adjacent_find(batch_sizes.begin(), batch_sizes.end()) != batch_sizes.end()) {
    return Fail(ErrorCode::kInvalidArgument, "batch sizes must be distinct");
  }
  if (!std::binary_search(batch_sizes.begin(), batch_sizes.end(), default_batch_size)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the default batch size {} is not one of the batch sizes", default_batch_size));
  }
  return PruningExplorer(std::move(batch_sizes), default_batch_size, num_rounds, stop);
}

PruningExplorer::PruningExplorer(std::vector<int> sorted, int default_batch_size, int num_rounds,
                                 PruningStopRule stop)
    : list_(std::move(sorted)), default_(default_batch_size), num_rounds_(num_rounds),
      stop_(stop) {
  StartRound();
}

void PruningExplorer::StartRound() {
  const auto pivot = std::find(list_.begin(), list_.end(), default_);  // always found
  directions_[0].assign(std::make_reverse_iterator(pivot + 1), list_.rend());
  directions_[1].assign(pivot + 1, list_.end());
  direction_ = 0;
  position_ = 0;
  good_.clear();
  best_cost_ = std::numeric_limits<double>::infinity();
  round_start_ = default_;
  start_cost_.reset();
  strikes_ = 0;
  Advance();
}

void PruningExplorer::Advance() {
  for (;;) {
    if (position_ < directions_[direction_].size()) {
      expected_ = directions_[direction_][position_];
      return;
    }
    if (direction_ == 0) {
      direction_ = 1;
      position_ = 0;
      strikes_ = stop_.cost_ratio > 0 && start_cost_ && *start_cost_ > stop_.cost_ratio * best_cost_ ? 1 : 0;
      if (strikes_ >= stop_.patience) position_ = directions_[1].size();  // the optimum lies below the start

      continue;
    }
    // The round is over.
    expected_.reset();
    std::sort(good_.begin(), good_.end());
    list_ = good_;
    ++round_;
    if (list_.empty()) {
      failed_ = true;
      round_ = num_rounds_;
      return;
    }
    if (round_ == num_rounds_) {
      survivors_ = list_;
      return;
    }
    StartRound();
    return;
  }
}

Status PruningExplorer::Observe(int batch_size, double cost, bool reached) {
  if (!expected_) return Fail(ErrorCode::kFailedPrecondition, "batch-size pruning has already ended");
  if (batch_size != *expected_) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("pruning expected a result for batch size {}, got one for {}", *expected_, batch_size));
  }
  if (reached) {
    if (cost < best_cost_) {
      best_cost_ = cost;
      default_ = batch_size;
    }
    good_.push_back(batch_size);
    if (batch_size == round_start_) start_cost_ = cost;
    ++position_;
    if (stop_.cost_ratio > 0) {
      strikes_ = cost > stop_.cost_ratio * best_cost_ ? strikes_ + 1 : 0;
      if (strikes_ >= stop_.patience) position_ = directions_[direction_].size();  // past the optimum
    }
  } else {
    position_ = directions_[direction_].size();  // a failure ends this direction
  }
  Advance();
  return OkStatus();
}

}  // namespace zeus::optimizer
