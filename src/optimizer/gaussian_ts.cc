// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/gaussian_ts.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "zeus/optimizer/numpy_math.h"

namespace zeus::optimizer {

RewardMoments AddReward(RewardMoments moments, double reward) {
  moments.count += 1;
  const double delta = reward - moments.mean;
  moments.mean += delta / static_cast<double>(moments.count);
  moments.m2 += delta * (reward - moments.mean);
  return moments;
}

RewardMoments MomentsOf(std::span<const double> rewards) {
  RewardMoments moments;
  for (double r : rewards) moments = AddReward(moments, r);
  return moments;
}

namespace {

// The one posterior update of the header's fit rule: the prior updated with
// `count` rewards of mean `mean`, sum `sum` and (known) variance `variance`.
ArmPosterior UpdatePosterior(int arm, std::int64_t count, double mean, double sum, double variance,
                             const GaussianTsOptions& options) {
  ArmPosterior out{arm, static_cast<int>(count), options.prior_mean, options.prior_precision};
  if (count == 0) return out;
  const double reward_precision = 1.0 / variance;
  const double rewards_precision = static_cast<double>(count) * reward_precision;
  if (std::isinf(rewards_precision)) {
    // Zero variance, or one whose reciprocal overflows: the rewards are
    // certain and outweigh any finite prior.
    out.precision = std::numeric_limits<double>::infinity();
    out.mean = mean;
    return out;
  }
  out.precision = options.prior_precision + rewards_precision;
  out.mean = (options.prior_precision * options.prior_mean + reward_precision * sum) / out.precision;
  return out;
}

}  // namespace

ArmPosterior FitArmNumpy(int arm, std::span<const double> rewards, const GaussianTsOptions& options) {
  if (rewards.empty()) return UpdatePosterior(arm, 0, 0, 0, 0, options);
  const double sum = NumpySum(rewards);
  // NumpyMean(rewards), without a third pass.
  const double mean = sum / static_cast<double>(rewards.size());
  return UpdatePosterior(arm, static_cast<std::int64_t>(rewards.size()), mean, sum, NumpyVar(rewards), options);
}

ArmPosterior FitArmFromMoments(int arm, const RewardMoments& moments, const GaussianTsOptions& options) {
  if (moments.count == 0) return UpdatePosterior(arm, 0, 0, 0, 0, options);
  const auto n = static_cast<double>(moments.count);
  return UpdatePosterior(arm, moments.count, moments.mean, n * moments.mean, moments.m2 / n, options);
}

ArmPosterior FitArm(int arm, std::span<const double> rewards, const GaussianTsOptions& options) {
  if (static_cast<std::int64_t>(rewards.size()) <= kExactFitMaxRewards) return FitArmNumpy(arm, rewards, options);
  return FitArmFromMoments(arm, MomentsOf(rewards), options);
}

double PooledRelativeVariance(std::span<const RewardMoments> arms, const GaussianTsOptions& options) {
  double sum = options.prior_cv_weight * options.prior_cv * options.prior_cv;
  double dof = options.prior_cv_weight;
  for (const RewardMoments& m : arms) {
    if (m.count < 2 || m.mean == 0.0) continue;
    sum += m.m2 / (m.mean * m.mean);
    dof += static_cast<double>(m.count - 1);
  }
  return dof > 0 ? sum / dof : 0.0;
}

ArmPosterior FitArmPooled(int arm, const RewardMoments& moments, double relative_variance,
                          const GaussianTsOptions& options) {
  const auto n = static_cast<double>(moments.count);
  return UpdatePosterior(arm, moments.count, moments.mean, n * moments.mean,
                         relative_variance * moments.mean * moments.mean, options);
}

std::vector<ArmPosterior> FitArmsPooled(std::span<const int> arms, std::span<const RewardMoments> moments,
                                        const GaussianTsOptions& options) {
  std::vector<ArmPosterior> out;
  out.reserve(arms.size());
  const bool pooled = options.variance_model == VarianceModel::kPooledRelative;
  const double relative_variance = pooled ? PooledRelativeVariance(moments, options) : 0.0;
  for (std::size_t i = 0; i < arms.size(); ++i) {
    out.push_back(pooled ? FitArmPooled(arms[i], moments[i], relative_variance, options)
                         : FitArmFromMoments(arms[i], moments[i], options));
  }
  return out;
}

int ThompsonChoose(std::span<const ArmPosterior> arms, int num_explorations, NumpyRandom& rng,
                   std::vector<double>* samples) {
  const auto k = static_cast<std::int64_t>(arms.size());
  for (std::int64_t i : rng.ChoiceWithoutReplacement(k, k)) {
    const auto index = static_cast<std::size_t>(i);
    if (arms[index].num_observations < num_explorations) return arms[index].arm;
  }
  std::size_t best = 0;
  double best_sample = 0;
  for (std::size_t i = 0; i < arms.size(); ++i) {
    const double sample = rng.Normal(arms[i].mean, std::sqrt(1.0 / arms[i].precision));
    if (samples != nullptr) samples->push_back(sample);
    if (i == 0 || sample > best_sample) {
      best = i;
      best_sample = sample;
    }
  }
  return arms[best].arm;
}

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
  if (!(options.prior_cv >= 0.0) || !(options.prior_cv_weight >= 0.0) || std::isinf(options.prior_cv) ||
      std::isinf(options.prior_cv_weight)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the prior coefficient of variation and its weight must be finite and >= 0, got {} and {}",
                            options.prior_cv, options.prior_cv_weight));
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
  ArmPosterior posterior;
  if (options_.window_size == 0 && arm.moments.count > kExactFitMaxRewards) {
    posterior = FitArmFromMoments(0, arm.moments, options_);
  } else {
    const std::vector<double> rewards(arm.rewards.begin(), arm.rewards.end());
    posterior = FitArm(0, rewards, options_);
  }
  arm.num_observations = static_cast<std::int64_t>(posterior.num_observations);
  arm.mean = posterior.mean;
  arm.precision = posterior.precision;
}

Status GaussianTs::SetRewards(int arm, std::span<const double> rewards) {
  Result<std::size_t> index = IndexOf(arm);
  if (!index) return Fail(index.error());
  Arm& a = state_[*index];
  a.rewards.clear();
  a.moments = {};
  if (options_.window_size > 0) {
    const std::size_t keep = std::min(rewards.size(), static_cast<std::size_t>(options_.window_size));
    a.rewards.assign(rewards.end() - static_cast<std::ptrdiff_t>(keep), rewards.end());
  } else {
    a.moments = MomentsOf(rewards);
    if (a.moments.count <= kExactFitMaxRewards) a.rewards.assign(rewards.begin(), rewards.end());
  }
  Fit(a);
  return OkStatus();
}

Status GaussianTs::Observe(int arm, double reward) {
  Result<std::size_t> index = IndexOf(arm);
  if (!index) return Fail(index.error());
  Arm& a = state_[*index];
  if (options_.window_size > 0) {
    a.rewards.push_back(reward);
    if (a.rewards.size() > static_cast<std::size_t>(options_.window_size)) a.rewards.pop_front();
  } else {
    a.moments = AddReward(a.moments, reward);
    if (a.moments.count <= kExactFitMaxRewards) {
      a.rewards.push_back(reward);
    } else if (!a.rewards.empty()) {
      std::deque<double>().swap(a.rewards);  // the moments stand for them from now on
    }
  }
  Fit(a);
  return OkStatus();
}

int GaussianTs::Predict() {
  last_samples_.clear();
  return ThompsonChoose(Posteriors(), options_.num_explorations, rng_, &last_samples_);
}

RewardMoments GaussianTs::MomentsOfArm(const Arm& arm) const {
  if (options_.window_size == 0) return arm.moments;
  const std::vector<double> rewards(arm.rewards.begin(), arm.rewards.end());
  return MomentsOf(rewards);
}

std::vector<ArmPosterior> GaussianTs::Posteriors() const {
  if (options_.variance_model == VarianceModel::kPooledRelative) {
    std::vector<RewardMoments> moments;
    moments.reserve(state_.size());
    for (const Arm& a : state_) moments.push_back(MomentsOfArm(a));
    return FitArmsPooled(arms_, moments, options_);
  }
  std::vector<ArmPosterior> out;
  for (std::size_t i = 0; i < arms_.size(); ++i) {
    out.push_back({arms_[i], static_cast<int>(state_[i].num_observations), state_[i].mean, state_[i].precision});
  }
  return out;
}

}  // namespace zeus::optimizer
