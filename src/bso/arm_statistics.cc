// Copyright 2026 The Zeus C++ Authors.

#include "bso/arm_statistics.h"

#include <cmath>

#include <fmt/format.h>

#include "zeus/optimizer/cost.h"

namespace zeus::bso {
namespace {

// The last guard of the file comment in arm_statistics.h.
Status CheckArmFinite(const std::string& job_id, const StoredArm& arm) {
  const optimizer::ArmPosterior& p = arm.posterior;
  const optimizer::RewardMoments& m = arm.moments;
  if (std::isfinite(p.mean) && p.precision >= 0 && std::isfinite(m.mean) && std::isfinite(m.m2) && m.m2 >= 0) {
    return OkStatus();
  }
  return Fail(ErrorCode::kFailedPrecondition,
              fmt::format("arm {} of job {}: its rewards and the job's prior give non-finite statistics (posterior "
                          "mean {}, precision {}; reward mean {}, m2 {} over {} rewards), which are not stored; only "
                          "a job stored before time, energy, max_power and the prior were bounded can do this: "
                          "DELETE /jobs?job_id={} and register it again",
                          p.arm, job_id, p.mean, p.precision, m.mean, m.m2, m.count, job_id));
}

Status WriteArm(SqlConnection& c, const std::string& job_id, const StoredArm& arm, bool insert) {
  if (Status finite = CheckArmFinite(job_id, arm); !finite) return finite;
  const std::vector<SqlValue> params = {job_id,
                                        SqlInt(arm.posterior.arm),
                                        arm.posterior.mean,
                                        arm.posterior.precision,
                                        SqlInt(arm.moments.count),
                                        arm.moments.mean,
                                        arm.moments.m2};
  const std::string_view sql =
      insert ? "INSERT INTO bso_arm (job_id, batch_size, mean, precision_, num_observations, reward_mean, reward_m2) "
               "VALUES ($1, $2, $3, $4, $5, $6, $7)"
             : "UPDATE bso_arm SET mean = $3, precision_ = $4, num_observations = $5, reward_mean = $6, "
               "reward_m2 = $7 WHERE job_id = $1 AND batch_size = $2";
  Result<std::int64_t> changed = c.Execute(sql, params);
  if (!changed) return Fail(changed.error());
  return OkStatus();
}

}  // namespace

Status CheckTrialCost(double cost) {
  if (cost == 0 || (cost >= kMinNonZeroTrialCost && cost <= kMaxTrialCost)) return OkStatus();
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("the run's cost eta_knob*energy + (1-eta_knob)*max_power*time is {} J, outside what the "
                          "service can fit (0, or {:g} to {:g} J); report time in seconds and energy in joules "
                          "since training began",
                          cost, kMinNonZeroTrialCost, kMaxTrialCost));
}

Result<std::vector<double>> ReadArmRewards(SqlConnection& c, const ArmJob& job, int batch_size, std::int64_t limit) {
  const std::vector<SqlValue> params = {job.job_id, SqlInt(batch_size)};
  std::string sql =
      "SELECT time, energy FROM bso_trial WHERE job_id = $1 AND batch_size = $2 AND status = 'Succeeded' "
      "ORDER BY trial_number DESC";
  if (limit > 0) sql += fmt::format(" LIMIT {}", limit);
  Result<std::vector<SqlRow>> rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::vector<double> rewards;
  rewards.reserve(rows->size());
  for (auto it = rows->rbegin(); it != rows->rend(); ++it) {
    Result<double> time = it->Double(0);
    if (!time) return Fail(time.error());
    Result<double> energy = it->Double(1);
    if (!energy) return Fail(energy.error());
    rewards.push_back(-optimizer::ZeusCost(*energy, *time, job.eta_knob, job.max_power));
  }
  return rewards;
}

Result<std::optional<StoredArm>> LoadArm(SqlConnection& c, const std::string& job_id, int batch_size) {
  const std::vector<SqlValue> params = {job_id, SqlInt(batch_size)};
  Result<std::vector<SqlRow>> rows =
      c.Query("SELECT mean, precision_, num_observations, reward_mean, reward_m2 FROM bso_arm "
              "WHERE job_id = $1 AND batch_size = $2",
              params);
  if (!rows) return Fail(rows.error());
  if (rows->empty()) return std::optional<StoredArm>();
  const SqlRow& r = rows->front();
  StoredArm arm;
  arm.posterior.arm = batch_size;
  Result<double> mean = r.Double(0);
  Result<double> precision = r.Double(1);
  Result<std::int64_t> count = r.Int(2);
  Result<double> reward_mean = r.Double(3);
  Result<double> reward_m2 = r.Double(4);
  if (!mean || !precision || !count || !reward_mean || !reward_m2) {
    return Fail(ErrorCode::kInternal,
                fmt::format("bso_arm: arm {} of job {} has a corrupt column", batch_size, job_id));
  }
  arm.posterior.mean = *mean;
  arm.posterior.precision = *precision;
  arm.posterior.num_observations = static_cast<int>(*count);
  arm.moments = {*count, *reward_mean, *reward_m2};
  return std::optional<StoredArm>(arm);
}

Status RefitArm(SqlConnection& c, const ArmJob& job, int batch_size, bool insert) {
  Result<std::vector<double>> rewards = ReadArmRewards(c, job, batch_size, job.bandit.window_size);
  if (!rewards) return Fail(rewards.error());
  const StoredArm arm{optimizer::FitArm(batch_size, *rewards, job.bandit), optimizer::MomentsOf(*rewards)};
  return WriteArm(c, job.job_id, arm, insert);
}

Status ObserveArmReward(SqlConnection& c, const ArmJob& job, int batch_size, double reward) {
  Result<std::optional<StoredArm>> stored = LoadArm(c, job.job_id, batch_size);
  if (!stored) return Fail(stored.error());
  if (!*stored) return OkStatus();  // pruned: not an arm
  StoredArm& arm = **stored;
  if (job.bandit.window_size > 0 || arm.moments.count < optimizer::kExactFitMaxRewards) {
    // Bounded: at most window_size or kExactFitMaxRewards rows.
    return RefitArm(c, job, batch_size, /*insert=*/false);
  }
  arm.moments = optimizer::AddReward(arm.moments, reward);
  arm.posterior = optimizer::FitArmFromMoments(batch_size, arm.moments, job.bandit);
  return WriteArm(c, job.job_id, arm, /*insert=*/false);
}

Status BackfillArmStatistics(SqlConnection& c) {
  Result<std::vector<SqlRow>> rows =
      c.Query("SELECT a.job_id, a.batch_size, j.eta_knob, j.max_power, j.window_size, j.mab_prior_mean, "
              "j.mab_prior_precision, j.mab_num_explorations FROM bso_arm a JOIN bso_job j ON a.job_id = j.job_id "
              "ORDER BY a.job_id, a.batch_size");
  if (!rows) return Fail(rows.error());
  for (const SqlRow& r : *rows) {
    ArmJob job;
    Result<std::string> job_id = r.Text(0);
    Result<std::int64_t> batch_size = r.Int(1);
    Result<double> eta = r.Double(2);
    Result<double> max_power = r.Double(3);
    Result<std::int64_t> window = r.Int(4);
    Result<double> prior_mean = r.Double(5);
    Result<double> prior_precision = r.Double(6);
    Result<std::int64_t> explorations = r.Int(7);
    if (!job_id || !batch_size || !eta || !max_power || !window || !prior_mean || !prior_precision || !explorations) {
      return Fail(ErrorCode::kInternal, "bso_arm: an arm or its job has a corrupt column");
    }
    job.job_id = *job_id;
    job.eta_knob = *eta;
    job.max_power = *max_power;
    job.bandit.window_size = static_cast<int>(*window);
    job.bandit.prior_mean = *prior_mean;
    job.bandit.prior_precision = *prior_precision;
    job.bandit.num_explorations = static_cast<int>(*explorations);
    if (Status s = RefitArm(c, job, static_cast<int>(*batch_size), /*insert=*/false); !s) {
      // A non-finite fit (a job stored before reports were bounded) leaves
      // that arm's row as it was, and its job's next report says so; the
      // server still starts.
      if (s.error().code() == ErrorCode::kFailedPrecondition) continue;
      return Fail(s.error().WithContext(fmt::format("refitting arm {} of job {}", *batch_size, *job_id)));
    }
  }
  return OkStatus();
}

}  // namespace zeus::bso
