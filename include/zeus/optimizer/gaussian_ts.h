// Copyright 2026 The Zeus C++ Authors.
//
// Gaussian Thompson sampling over batch sizes (paper Sec. 4.2; zeus-reference
// A10/A11), bit-compatible with Zeus's GaussianTS up to kExactFitMaxRewards
// rewards per arm:
//
//   * An arm's rewards (-cost) are taken in time order; with a window of
//     W > 0 only the newest W count (data drift).
//   * Fit (always from the prior) of n rewards with mean m, sum s and
//     population variance v: r = 1/v; when n*r is +inf (v == 0, or v so
//     small, e.g. subnormal, that 1/v or n/v overflows) precision = +inf and
//     mean = m. Otherwise precision = prior_precision + n*r and
//     mean = (prior_precision*prior_mean + r*s) / precision. The reference
//     (zeus-reference A10, "_fit_arm") takes only v == 0 as certain; when
//     1/v or n/v overflows it divides by an infinite precision and gets a
//     NaN mean (inf/inf, or inf*0 for s == 0) or 0. The rule here is the
//     limit of its own formula as v -> 0 (the prior's finite weight vanishes
//     against r) and its own v == 0 answer; the two differ only where
//     n/v overflows. Rewards that the service accepts never come near
//     (src/bso/arm_statistics.h), nor do the reference traces.
//   * How m, s and v are computed (the long-history rule): for
//     n <= kExactFitMaxRewards exactly as numpy does (numpy.mean, numpy.sum,
//     numpy.var: pairwise sums, two passes), bit for bit the original; for
//     longer histories from Welford's streaming moments (RewardMoments) over
//     the same rewards in the same order (s = n*m), which an arm updates in
//     O(1) per reward without keeping the rewards. numpy's var needs every
//     reward again whenever the mean moves, so no O(1) update can be exact;
//     the longest arm of the reference runs has 206 rewards, a tenth of
//     the limit. The switch changes a posterior by rounding only
//     (long_history_test.cc bounds it, and Welford's error over 10^6
//     rewards against a long-double two-pass reference).
//   * Predict: draw a random visiting order of the arms (choice(k, k,
//     replace=False), always, even when unused) and return the first arm in
//     that order with fewer than num_explorations rewards; otherwise draw one
//     normal(mean, sqrt(1/precision)) per arm in ascending arm order and return
//     the arm with the largest draw (the first one on a tie).
//
// A pure state machine with its own NumpyRandom. Thread-safety: a value type;
// not for concurrent use.

#ifndef ZEUS_OPTIMIZER_GAUSSIAN_TS_H_
#define ZEUS_OPTIMIZER_GAUSSIAN_TS_H_

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/optimizer/numpy_random.h"

namespace zeus::optimizer {

// How an arm's reward variance is estimated.
enum class VarianceModel {
  // The original: each arm's own population variance (n / var of its
  // rewards), so two close rewards make an arm look certain.
  kPerArm,
  // zeus-robust: one coefficient of variation shared by every arm (see
  // PooledRelativeVariance), so an arm's spread is cv * |mean| whatever its
  // own few rewards say, and an arm with one reward has a proper posterior.
  kPooledRelative,
};

struct GaussianTsOptions {
  double prior_mean = 0.0;
  double prior_precision = 0.0;  // 0: an uninformative prior
  int num_explorations = 2;      // arms with fewer rewards are tried first
  int window_size = 0;           // newest rewards kept per arm; 0 = all
  VarianceModel variance_model = VarianceModel::kPerArm;
  // kPooledRelative only: the prior coefficient of variation of one run's
  // cost, worth prior_cv_weight degrees of freedom against the arms' own.
  double prior_cv = 0.1;
  double prior_cv_weight = 2.0;
};

// The posterior of one arm.
struct ArmPosterior {
  int arm = 0;
  int num_observations = 0;
  double mean = 0;
  double precision = 0;
};

// Rewards beyond which an arm is fitted from streaming moments rather than
// numpy's two-pass reductions (see the file comment).
inline constexpr std::int64_t kExactFitMaxRewards = 2048;

// Welford's running moments of an arm's rewards: count, mean and m2 (the sum
// of squared deviations from the mean; the population variance is m2/count).
struct RewardMoments {
  std::int64_t count = 0;
  double mean = 0;
  double m2 = 0;
  friend bool operator==(const RewardMoments&, const RewardMoments&) = default;
};

// The moments after one more reward, in O(1): count += 1, d = x - mean,
// mean += d / count, m2 += d * (x - mean).
RewardMoments AddReward(RewardMoments moments, double reward);
// AddReward over `rewards` in order, from empty moments.
RewardMoments MomentsOf(std::span<const double> rewards);

// The posterior of an arm fitted from the prior and its rewards (oldest
// first) under the rule of the file comment; with no rewards, the prior.
// The simulator's incremental updates and the online service (src/bso/)
// reproduce it bit for bit.
ArmPosterior FitArm(int arm, std::span<const double> rewards, const GaussianTsOptions& options);
// The numpy branch of FitArm, for any length (O(n), two passes).
ArmPosterior FitArmNumpy(int arm, std::span<const double> rewards, const GaussianTsOptions& options);
// The streaming branch of FitArm: the fit of the rewards that `moments`
// summarise (m = moments.mean, s = count*mean, v = m2/count); the prior when
// count == 0.
ArmPosterior FitArmFromMoments(int arm, const RewardMoments& moments, const GaussianTsOptions& options);

// kPooledRelative: the pooled squared coefficient of variation of the arms'
// rewards, a scaled-inverse-chi-square posterior mean with the prior as
// pseudo-data:
//   (w * cv0^2 + sum_a m2_a / mean_a^2) / (w + sum_a (count_a - 1))
// over the arms with count >= 2 and a non-zero mean (w = prior_cv_weight,
// cv0 = prior_cv); cv0^2 when no arm has two rewards.
double PooledRelativeVariance(std::span<const RewardMoments> arms, const GaussianTsOptions& options);
// kPooledRelative: the posterior of an arm whose rewards have `moments`,
// with the known variance relative_variance * mean^2: r = 1 / that variance,
// precision = prior_precision + n * r, mean = (prior_precision * prior_mean +
// r * n * mean) / precision; precision = +inf and the mean when n * r is
// +inf (the fit rule of the file comment); the prior when count == 0.
ArmPosterior FitArmPooled(int arm, const RewardMoments& moments, double relative_variance,
                          const GaussianTsOptions& options);
// The posteriors of every arm under options.variance_model: FitArmPooled with
// PooledRelativeVariance of all `moments` for kPooledRelative, else
// FitArmFromMoments per arm. REQUIRES: arms.size() == moments.size().
std::vector<ArmPosterior> FitArmsPooled(std::span<const int> arms, std::span<const RewardMoments> moments,
                                        const GaussianTsOptions& options);

// One Thompson-sampling decision over `arms` (ascending arm order), drawing
// from `rng` exactly as the file comment says. Appends the normal draws to
// *samples when it is not null (nothing when an exploration arm is chosen).
// REQUIRES: !arms.empty().
int ThompsonChoose(std::span<const ArmPosterior> arms, int num_explorations, NumpyRandom& rng,
                   std::vector<double>* samples);

class GaussianTs {
 public:
  // Fails with kInvalidArgument when arms is empty or has duplicates,
  // prior_precision < 0, num_explorations < 0 or window_size < 0.
  // Arms are kept in ascending order. The RNG is numpy.default_rng(seed).
  static Result<GaussianTs> Create(std::vector<int> arms, const GaussianTsOptions& options, std::uint64_t seed);

  // Replaces an arm's rewards (trimmed to the window) and refits it.
  // Fails with kNotFound for an unknown arm.
  Status SetRewards(int arm, std::span<const double> rewards);
  // Appends one reward to an arm (dropping the oldest beyond the window) and
  // refits it, as FitArm over the arm's rewards would. Cost: with
  // window_size 0, O(n) while the arm has n <= kExactFitMaxRewards rewards and
  // O(1) afterwards; with a window W, O(min(W, n)). Fails with kNotFound for
  // an unknown arm.
  Status Observe(int arm, double reward);

  // The next arm to run (consumes random draws, see the file comment).
  int Predict();

  // Posteriors in ascending arm order (kPooledRelative: FitArmsPooled over
  // every arm, recomputed at each call).
  std::vector<ArmPosterior> Posteriors() const;
  // The normal draws of the last Predict, one per arm in ascending order
  // (empty when it returned an exploration arm).
  const std::vector<double>& last_samples() const { return last_samples_; }
  const std::vector<int>& arms() const { return arms_; }

 private:
  // Memory per arm: with a window W, its newest W rewards; without one, its
  // rewards while there are at most kExactFitMaxRewards, then none (the
  // moments stand for them).
  struct Arm {
    std::deque<double> rewards;
    RewardMoments moments;  // window_size 0: every reward of the arm
    std::int64_t num_observations = 0;
    double mean = 0;
    double precision = 0;
  };
  GaussianTs(std::vector<int> arms, const GaussianTsOptions& options, std::uint64_t seed);
  Result<std::size_t> IndexOf(int arm) const;
  // The moments of the rewards the arm's fit counts (its window's).
  RewardMoments MomentsOfArm(const Arm& arm) const;
  void Fit(Arm& arm) const;

  std::vector<int> arms_;
  std::vector<Arm> state_;
  GaussianTsOptions options_;
  NumpyRandom rng_;
  std::vector<double> last_samples_;
};

}  // namespace zeus::optimizer

#endif  // ZEUS_OPTIMIZER_GAUSSIAN_TS_H_
