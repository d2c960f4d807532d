// Copyright 2026 The Zeus C++ Authors.
//
// The batch-size service's Thompson-sampling arms in the database: per arm
// (bso_arm) the posterior and the sufficient statistics of its rewards
// (count = num_observations, Welford's reward_mean and reward_m2), kept in
// step with the trials because every write happens in the transaction that
// stores the trial.
//
// An arm's rewards are -cost of its batch size's succeeded trials, in trial
// order; with window_size W > 0 the newest W of them. Its posterior is
// optimizer::FitArm of those rewards, and the cost of one new reward is
// bounded whatever the history (the rule of zeus/optimizer/gaussian_ts.h):
//
//   * window_size 0 and more than kExactFitMaxRewards rewards: O(1), one row
//     read and one written; AddReward on the stored moments, then
//     FitArmFromMoments. The rewards then count in the order they were
//     reported, which is trial order unless a trial reports after a later
//     one (a Concurrent trial, or several clients); a refit in trial order
//     differs from the stored statistics only by rounding then.
//   * otherwise: a bounded read of the arm's newest min(n, kExactFitMaxRewards)
//     or W rewards (the index bso_trial_by_batch_size covers it), FitArm and
//     MomentsOf over them, in trial order: what a refit from every trial
//     gives, bit for bit.
//
// A sliding window is recomputed from its W rows rather than updated by
// removing the reward that leaves it: removal in floating point leaves the
// rounding error of rewards long gone in the statistics (and drift, the
// reason for a window, is when magnitudes change), and recomputation keeps
// the service bit-identical to the simulator's GaussianTs. Its cost is O(W),
// independent of the history's length.
//
// No accepted report can make an arm's statistics non-finite (a NaN mean
// broke a job for ever: SQLite stores NaN as NULL). A stored cost is 0 or in
// [kMinNonZeroTrialCost, kMaxTrialCost] (CheckTrialCost, before anything is
// written), and a job's prior is bounded (models.cc); with at most 2^31
// rewards of one sign, every sum, square and 1/variance of FitArm, AddReward
// and FitArmsPooled then stays within about 1e160 (a non-zero variance is at
// least about 1e-120). As a last guard, WriteArm refuses to store a
// non-finite posterior mean, a NaN or negative precision (+inf is the
// zero-variance fit) or non-finite moments: kFailedPrecondition, and the
// caller's transaction rolls back, leaving the job as it was.
//
// Internal to the service; not thread-safe by itself (the caller's
// transaction serialises the job).

#ifndef ZEUS_SRC_BSO_ARM_STATISTICS_H_
#define ZEUS_SRC_BSO_ARM_STATISTICS_H_

#include <optional>
#include <string>
#include <vector>

#include "bso/sql/sql_connection.h"
#include "zeus/base/error.h"
#include "zeus/optimizer/gaussian_ts.h"

namespace zeus::bso {

// What an arm's fit needs from its job.
struct ArmJob {
  std::string job_id;
  double eta_knob = 0.5;
  double max_power = 0;
  optimizer::GaussianTsOptions bandit;  // prior, explorations, window_size
};

// One bso_arm row.
struct StoredArm {
  optimizer::ArmPosterior posterior;
  optimizer::RewardMoments moments;
};

// The costs (J) a trial may store besides 0; see the file comment.
inline constexpr double kMinNonZeroTrialCost = 1e-30;
inline constexpr double kMaxTrialCost = 1e30;

// OK when `cost` is 0 or within [kMinNonZeroTrialCost, kMaxTrialCost];
// otherwise kInvalidArgument naming the cost, the range and what to check.
Status CheckTrialCost(double cost);

// Rewards of the arm's newest succeeded trials, oldest first: at most
// `limit` of them (0: all).
Result<std::vector<double>> ReadArmRewards(SqlConnection& c, const ArmJob& job, int batch_size, std::int64_t limit);

// The arm's row; nullopt when the batch size is not an arm (pruned).
Result<std::optional<StoredArm>> LoadArm(SqlConnection& c, const std::string& job_id, int batch_size);

// Fits the arm from its trials (every succeeded one, or the newest
// window_size) and inserts (insert) or updates its row. O(n) for an arm of n
// rewards without a window: for building the bandit and migrations.
// kFailedPrecondition, nothing written, when the fit is not finite (only a
// job stored before reports and priors were bounded can do that).
Status RefitArm(SqlConnection& c, const ArmJob& job, int batch_size, bool insert);

// After a trial of `batch_size` with reward `reward` was stored as succeeded
// in this transaction: updates its arm under the rule of the file comment.
// Nothing when the batch size is not an arm. kFailedPrecondition, nothing
// written, when the new statistics are not finite.
Status ObserveArmReward(SqlConnection& c, const ArmJob& job, int batch_size, double reward);

// Refits every arm of every job from its trials (schema migration 3, which
// added the moments).
Status BackfillArmStatistics(SqlConnection& c);

}  // namespace zeus::bso

#endif  // ZEUS_SRC_BSO_ARM_STATISTICS_H_
