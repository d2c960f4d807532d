// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/gaussian_ts.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "zeus/optimizer/numpy_math.h"

namespace zeus::optimizer {

Result<GaussianTs> GaussianTs::Create(std::vector<int> arms, const GaussianTsOptions& options, std::uint64_t seed) {
  if (arms.empty()) return Fail(ErrorCode::kInvalidArgument, "Thompson sampling needs at least one arm");
  std::sort(arms.begin(), arms.end());
  if (std::adjacent_find(arms.begin(), arms.end()) != arms.end()) {
    return Fail(ErrorCode::kInvalidArgument, "Thompson sampling arms must be distinct");
  }
  if (!(options.prior_precision >= 0.0)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the prior precision must be >= 0, got {}", options.prior_precision));
  }
  if (options.num_explorations < 0 || options.window_size < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("num_explorations and window_size must be >= 0, got {} and {}", options.num_explorations,
                            options.window_size));
  }
  return GaussianTs(std::move(arms), options, seed);
}

GaussianTs::GaussianTs(std::vector<int> arms, const GaussianTsOptions& options, std::uint64_t seed)
    : arms_(std::move(arms)), state_(arms_.size()), options_(options), rng_(seed) {
  for (Arm& a : state_) Fit(a);
}

Result<std::size_t> GaussianTs::IndexOf(int arm) const {
  const auto it = std::lower_bound(arms_.begin(), arms_.end(), arm);
  if (it == arms_.end() || *it != arm) {
    return Fail(ErrorCode::kNotFound, fmt::format("batch size {} is not an arm of the bandit", arm));
  }
  return static_cast<std::size_t>(it - arms_.begin());
}

void GaussianTs::Fit(Arm& arm) const {
  if (arm.rewards.empty()) {
    arm.mean = options_.prior_mean;
    arm.precision = options_.prior_precision;
    return;
  }
  const std::vector<double> rewards(arm.rewards.begin(), arm.rewards.end());
  const double variance = NumpyVar(rewards);
  if (variance == 0.0) {
    arm.precision = std::numeric_limits<double>::infinity();
    arm.mean = NumpyMean(rewards);
    return;
  }
  const double reward_precision = 1.0 / variance;
  arm.precision = options_.prior_precision + static_cast<double>(rewards.size()) * reward_precision;
  arm.mean = (options_.prior_precision * options_.prior_mean + reward_precision * NumpySum(rewards)) / arm.precision;
}

Status GaussianTs::SetRewards(int arm, std::span<const double> rewards) {
  Result<std::size_t> index = IndexOf(arm);
  if (!index) return Fail(index.error());
  Arm& a = state_[*index];
  a.rewards.assign(rewards.begin(), rewards.end());
  if (options_.window_size > 0) {
    while (a.rewards.size() > static_cast<std::size_t>(options_.window_size)) a.rewards.pop_front();
  }
  Fit(a);
  return OkStatus();
}

Status GaussianTs::Observe(int arm, double reward) {
  Result<std::size_t> index = IndexOf(arm);
  if (!index) return Fail(index.error());
  Arm& a = state_[*index];
  a.rewards.push_back(reward);
  if (options_.window_size > 0 && a.rewards.size() > static_cast<std::size_t>(options_.window_size)) {
    a.rewards.pop_front();
  }
  Fit(a);
  return OkStatus();
}

int GaussianTs::Predict() {
  last_samples_.clear();
  const auto k = static_cast<std::int64_t>(arms_.size());
  for (std::int64_t i : rng_.ChoiceWithoutReplacement(k, k)) {
    const auto index = static_cast<std::size_t>(i);
    if (state_[index].rewards.size() < static_cast<std::size_t>(options_.num_explorations)) return arms_[index];
  }
  std::size_t best = 0;
  for (std::size_t i = 0; i < state_.size(); ++i) {
    const double sample = rng_.Normal(state_[i].mean, std::sqrt(1.0 / state_[i].precision));
    last_samples_.push_back(sample);
    if (sample > last_samples_[best]) best = i;
  }
  return arms_[best];
}

std::vector<ArmPosterior> GaussianTs::Posteriors() const {
  std::vector<ArmPosterior> out;
  for (std::size_t i = 0; i < arms_.size(); ++i) {
    out.push_back({arms_[i], static_cast<int>(state_[i].rewards.size()), state_[i].mean, state_[i].precision});
  }
  return out;
}

}  // namespace zeus::optimizer
