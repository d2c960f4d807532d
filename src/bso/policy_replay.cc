// Copyright 2026 The Zeus C++ Authors.

#include "bso/policy_replay.h"

#include <limits>
#include <vector>

#include <fmt/format.h>

#include "bso/bso_try.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/cost.h"
#include "zeus/optimizer/early_stopping.h"
#include "zeus/optimizer/gaussian_ts.h"
#include "zeus/optimizer/numpy_random.h"
#include "zeus/optimizer/policy.h"
#include "zeus/optimizer/pruning.h"

namespace zeus::bso {
namespace {

// The job's policy options: its spec with its policy applied (ParseJobSpec
// has checked the policy's name).
optimizer::BatchSizeOptimizerOptions PolicyOptions(const JobSpec& s) {
  optimizer::BatchSizeOptimizerOptions o;
  o.num_pruning_rounds = s.num_pruning_rounds;
  o.bandit.prior_mean = s.mab_prior_mean;
  o.bandit.prior_precision = s.mab_prior_precision;
  o.bandit.num_explorations = s.mab_num_explorations;
  o.bandit.window_size = s.window_size;
  const optimizer::BatchSizePolicy policy =
      optimizer::ParseBatchSizePolicy(s.policy).value_or(optimizer::BatchSizePolicy::kZeus);
  return optimizer::ApplyBatchSizePolicy(policy, o);
}

// Builds the bandit over the survivors of pruning.
Status BuildBandit(SqlConnection& c, JobRow& job, const std::vector<int>& survivors) {
  const ArmJob arm_job = ArmJobOf(job);
  for (int bs : survivors) {
    if (Status s = RefitArm(c, arm_job, bs, /*insert=*/true); !s) {
      return Fail(s.error().WithContext(fmt::format("job {} cannot start Thompson sampling", arm_job.job_id)));
    }
  }
  job.state.bandit_stage = true;
  return OkStatus();
}

Result<TrialId> ThompsonTrial(SqlConnection& c, JobRow& job) {
  BSO_TRY(arms, LoadArms(c, *job.spec.job_id));
  if (arms.empty()) return Fail(ErrorCode::kInternal, fmt::format("job {} has no bandit arms", *job.spec.job_id));
  const optimizer::GaussianTsOptions bandit = PolicyOptions(job.spec).bandit;
  std::vector<optimizer::ArmPosterior> posteriors;
  if (bandit.variance_model == optimizer::VarianceModel::kPerArm) {
    for (const ArmRecord& a : arms) posteriors.push_back({a.batch_size, a.num_observations, a.mean, a.precision});
  } else {
    // The stored posteriors are per-arm fits; a pooled model refits every arm
    // from the stored moments (those of the rewards FitArm counts).
    std::vector<int> sizes;
    std::vector<optimizer::RewardMoments> moments;
    for (const ArmRecord& a : arms) {
      sizes.push_back(a.batch_size);
      moments.push_back({a.num_observations, a.reward_mean, a.reward_m2});
    }
    posteriors = optimizer::FitArmsPooled(sizes, moments, bandit);
  }
  BSO_TRY(state, ParseRngState(job.rng_state));
  optimizer::NumpyRandom rng(state);
  const int bs = optimizer::ThompsonChoose(posteriors, bandit.num_explorations, rng, nullptr);
  job.rng_state = RngStateJson(rng.full_state());
  return CreateTrial(c, job, bs, TrialType::kMab);
}

// Marks failed the dispatched explorations among `trials` last heard of
// before stale_before_us.
Status FailStaleExplorations(SqlConnection& c, const JobRow& job, std::vector<TrialRecord>& trials,
                             std::int64_t stale_before_us) {
  for (TrialRecord& t : trials) {
    if (t.type != TrialType::kExploration || t.status != TrialStatus::kDispatched ||
        t.last_report_us.value_or(t.start_us) >= stale_before_us) {
      continue;
    }
    BSO_CHECK(MarkTrialFailed(c, *job.spec.job_id, t.trial_number, job.now_us));
    t.status = TrialStatus::kFailed;
  }
  return OkStatus();
}

// The pruning decision, replayed from the stored explorations (the explorer
// is a pure state machine; failed explorations are invisible to it).
Result<TrialId> PruningTrial(SqlConnection& c, JobRow& job, std::optional<std::int64_t> stale_before_us) {
  BSO_TRY(trials, LoadTrials(c, *job.spec.job_id, /*explorations_only=*/true));
  if (stale_before_us) BSO_CHECK(FailStaleExplorations(c, job, trials, *stale_before_us));
  const optimizer::BatchSizeOptimizerOptions policy = PolicyOptions(job.spec);
  BSO_TRY(explorer, optimizer::PruningExplorer::Create(job.spec.batch_sizes, job.spec.default_batch_size,
                                                       policy.num_pruning_rounds, policy.pruning_stop));
  for (const TrialRecord& t : trials) {
    if (t.type != TrialType::kExploration || t.status == TrialStatus::kFailed) continue;
    if (t.status == TrialStatus::kDispatched) {
      // An exploration is running: serve the best known batch size meanwhile.
      return CreateTrial(c, job, job.state.min_cost_batch_size, TrialType::kConcurrent);
    }
    if (Status s = explorer.Observe(t.batch_size, TrialCost(job, t.energy.value_or(0), t.time.value_or(0)),
                                    t.converged.value_or(false));
        !s) {
      return Fail(ErrorCode::kInternal, fmt::format("job {}: stored explorations do not follow the pruning order: {}",
                                                    *job.spec.job_id, s.error().message()));
    }
  }
  if (std::optional<int> next = explorer.Next()) return CreateTrial(c, job, *next, TrialType::kExploration);
  if (explorer.failed()) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("job {}: no batch size reached the target metric during pruning; register the job again "
                            "with a reachable target_metric or more max_epochs",
                            *job.spec.job_id));
  }
  BSO_CHECK(BuildBandit(c, job, explorer.survivors()));
  return ThompsonTrial(c, job);
}

}  // namespace

ArmJob ArmJobOf(const JobRow& job) {
  return ArmJob{*job.spec.job_id, job.spec.eta_knob, job.spec.max_power, PolicyOptions(job.spec).bandit};
}

double TrialCost(const JobRow& job, double energy, double time) {
  return optimizer::ZeusCost(energy, time, job.spec.eta_knob, job.spec.max_power);
}

Result<TrialId> NextTrial(SqlConnection& c, JobRow& job, std::optional<std::int64_t> stale_before_us) {
  if (job.state.bandit_stage) return ThompsonTrial(c, job);
  return PruningTrial(c, job, stale_before_us);
}

ReportDecision DecideReport(const JobRow& job, const TrainingResult& result, double cost) {
  const JobSpec& s = job.spec;
  const std::optional<double>& min_cost = job.state.min_cost;
  const double cost_ub = (s.beta_knob && min_cost) ? optimizer::CostUpperBound(*s.beta_knob, *min_cost)
                                                   : std::numeric_limits<double>::infinity();
  const bool within = optimizer::WithinCostBudget(cost, cost_ub);
  const bool reached = s.higher_is_better_metric ? result.metric >= s.target_metric : result.metric <= s.target_metric;
  if (within && result.current_epoch < s.max_epochs && !reached && !result.finished) return {};
  ReportDecision d{true, reached && within, ""};
  if (d.converged) {
    d.message = "Train succeeded";
  } else if (!within) {
    d.message =
        fmt::format("Batch Size({}) exceeded the cost upper bound: current cost({}) > beta_knob({})*min_cost({})",
                    result.batch_size, cost, *s.beta_knob, *min_cost);
  } else if (result.current_epoch >= s.max_epochs) {
    d.message = fmt::format("Train failed to converge within max_epoch({})", s.max_epochs);
  } else {
    d.message = fmt::format("Training stopped by the client at epoch {} before reaching the target",
                            result.current_epoch);
  }
  return d;
}

}  // namespace zeus::bso
