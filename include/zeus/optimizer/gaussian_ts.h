// Copyright 2026 The Zeus C++ Authors.
//
// Gaussian Thompson sampling over batch sizes (paper Sec. 4.2; zeus-reference
// A10/A11), bit-compatible with Zeus's GaussianTS:
//
//   * Each arm keeps its rewards (-cost) in time order; with a window of W > 0
//     only the newest W are kept (data drift).
//   * Fit (always from the prior): n rewards, v = numpy.var (ddof 0).
//     v == 0: precision = +inf and mean = numpy.mean.
//     Otherwise r = 1/v, precision = prior_precision + n*r and
//     mean = (prior_precision*prior_mean + r*numpy.sum) / precision.
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

struct GaussianTsOptions {
  double prior_mean = 0.0;
  double prior_precision = 0.0;  // 0: an uninformative prior
  int num_explorations = 2;      // arms with fewer rewards are tried first
  int window_size = 0;           // newest rewards kept per arm; 0 = all
};

// The posterior of one arm.
struct ArmPosterior {
  int arm = 0;
  int num_observations = 0;
  double mean = 0;
  double precision = 0;
};

// The posterior of an arm fitted from the prior and its rewards (oldest
// first), as described in the file comment; with no rewards, the prior.
// The online service (src/bso/) stores posteriors and refits with this.
ArmPosterior FitArm(int arm, std::span<const double> rewards, const GaussianTsOptions& options);

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
  // refits it. Fails with kNotFound for an unknown arm.
  Status Observe(int arm, double reward);

  // The next arm to run (consumes random draws, see the file comment).
  int Predict();

  // Posteriors in ascending arm order.
  std::vector<ArmPosterior> Posteriors() const;
  // The normal draws of the last Predict, one per arm in ascending order
  // (empty when it returned an exploration arm).
  const std::vector<double>& last_samples() const { return last_samples_; }
  const std::vector<int>& arms() const { return arms_; }

 private:
  struct Arm {
    std::deque<double> rewards;
    double mean = 0;
    double precision = 0;
  };
  GaussianTs(std::vector<int> arms, const GaussianTsOptions& options, std::uint64_t seed);
  Result<std::size_t> IndexOf(int arm) const;
  void Fit(Arm& arm) const;

  std::vector<int> arms_;
  std::vector<Arm> state_;
  GaussianTsOptions options_;
  NumpyRandom rng_;
  std::vector<double> last_samples_;
};

}  // namespace zeus::optimizer

#endif  // ZEUS_OPTIMIZER_GAUSSIAN_TS_H_
