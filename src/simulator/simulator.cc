// Copyright 2026 The Zeus C++ Authors.

#include "zeus/simulator/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "simulator/policies.h"
#include "zeus/optimizer/cost.h"
#include "zeus/optimizer/early_stopping.h"
#include "zeus/optimizer/numpy_random.h"

namespace zeus::simulator {
namespace {

Status Validate(const SimulationOptions& o) {
  if (Status s = optimizer::ValidateEta(o.eta); !s) return s;
  if (!(o.beta > 0)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("beta must be a positive number (inf: no early stopping), got {}", o.beta));
  }
  if (o.num_recurrences < 0) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("recurrences must be >= 0, got {}", o.num_recurrences));
  }
  if (o.max_tries < 1) return Fail(ErrorCode::kInvalidArgument, fmt::format("max tries must be >= 1, got {}", o.max_tries));
  return OkStatus();
}

Status ValidateDrift(const JobTrace& job, const SimulationOptions& o) {
  if (o.drifted_job == nullptr) return OkStatus();
  const JobTrace& d = *o.drifted_job;
  bool same = d.batch_sizes == job.batch_sizes && d.per_batch_size.size() == job.per_batch_size.size();
  for (std::size_t i = 0; same && i < job.per_batch_size.size(); ++i) {
    same = d.per_batch_size[i].batch_size == job.per_batch_size[i].batch_size &&
           d.per_batch_size[i].power_limits_w == job.per_batch_size[i].power_limits_w;
  }
  if (!same) {
    return Fail(ErrorCode::kInvalidArgument,
                "the drifted job must have the same batch sizes and power limits as the job; build it with "
                "DriftedJobTrace");
  }
  if (o.drift_after_recurrence < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("drift_after_recurrence must be >= 0, got {}", o.drift_after_recurrence));
  }
  return OkStatus();
}

}  // namespace

std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kZeus:
      return "zeus";
    case Policy::kGridSearch:
      return "grid-search";
    case Policy::kPowerLimitOnly:
      return "power-limit-only";
    case Policy::kBatchSizeOnly:
      return "batch-size-only";
  }
  return "unknown";
}

Result<SimulationResult> Simulate(const JobTrace& job, const SimulationOptions& options) {
  if (Status s = Validate(options); !s) return Fail(s.error());
  if (Status s = ValidateDrift(job, options); !s) return Fail(s.error());
  Result<std::unique_ptr<internal::JobPolicy>> made = internal::MakePolicy(job, options);
  if (!made) return Fail(made.error());
  internal::JobPolicy& policy = **made;

  const double inf = std::numeric_limits<double>::infinity();
  const double eta = options.eta;
  const int num_recurrences = options.num_recurrences > 0 ? options.num_recurrences : job.default_recurrences;
  const int max_tries = options.max_tries + policy.ExtraTries();
  optimizer::NumpyRandom path_sampler(options.seed);
  double min_cost = inf;

  SimulationResult result;
  result.recurrences.reserve(static_cast<std::size_t>(num_recurrences));
  if (options.record_tries) result.tries.reserve(static_cast<std::size_t>(num_recurrences) + 16);
  for (int recurrence = 1; recurrence <= num_recurrences; ++recurrence) {
    const JobTrace& trace =
        options.drifted_job != nullptr && recurrence > options.drift_after_recurrence ? *options.drifted_job : job;
    RecurrenceRecord rec;
    rec.recurrence = recurrence;
    double cost_acc = 0;
    bool reached = false;
    for (int attempt = 1; attempt <= max_tries && !reached; ++attempt) {
      Result<int> batch_size = policy.NextBatchSize();
      if (!batch_size) return Fail(batch_size.error().WithContext(fmt::format("recurrence {}", recurrence)));
      TryRecord t;
      t.recurrence = recurrence;
      t.attempt = attempt;
      t.stage = policy.stage();
      t.batch_size = *batch_size;
      if (options.record_bandit && policy.bandit() != nullptr && t.stage == "ts") {
        const optimizer::GaussianTs& ts = *policy.bandit();
        const std::vector<optimizer::ArmPosterior> arms = ts.Posteriors();
        for (std::size_t a = 0; a < arms.size(); ++a) {
          const double sample = a < ts.last_samples().size() ? ts.last_samples()[a] : std::nan("");
          result.bandit_steps.push_back({recurrence, attempt, arms[a], sample});
        }
      }
      const BatchSizeTrace* bs = trace.Find(t.batch_size);
      if (bs == nullptr) {
        return Fail(ErrorCode::kFailedPrecondition,
                    fmt::format("recurrence {}: the trace has no runs of batch size {} with target_metric {}",
                                recurrence, t.batch_size, job.workload.target_metric));
      }
      Result<internal::JobPolicy::Limit> limit = policy.PowerLimit(*bs);
      if (!limit) return Fail(limit.error());
      t.power_limit_w = limit->power_limit_w;
      t.profiled = limit->profiled;
      const int limit_index = bs->LimitIndex(t.power_limit_w);
      if (limit_index < 0) {
        return Fail(ErrorCode::kInternal, fmt::format("power limit {} W is not measured for batch size {}",
                                                      t.power_limit_w, t.batch_size));
      }
      const std::vector<TracePath>& paths = bs->paths[static_cast<std::size_t>(limit_index)];
      t.num_paths = static_cast<int>(paths.size());
      const TracePath& path = paths[static_cast<std::size_t>(path_sampler.Integers(0, t.num_paths))];
      t.sampled_run = path.run;
      t.path_target_epoch = path.target_epoch;

      // Early stopping: the epochs this run may take before its cost passes beta * min_cost.
      t.cost_ub = optimizer::CostUpperBound(options.beta, min_cost);
      const double cost_per_epoch =
          eta * path.energy_per_epoch_j + ((1.0 - eta) * bs->max_power_limit_w) * path.time_per_epoch_s;
      t.epoch_budget = optimizer::EpochBudget(t.cost_ub, cost_per_epoch, job.workload.max_epochs);
      if (t.epoch_budget == 0) {
        // Cannot run even one epoch: a penalty observation, nothing spent.
        t.ran = false;
        if (options.record_tries) result.tries.push_back(t);
        ++rec.num_tries;
        if (Status s = policy.Observe(t, 100.0 * options.beta * min_cost); !s) {
          return Fail(s.error());
        }
        continue;
      }
      const auto budget = static_cast<double>(t.epoch_budget);
      t.reached = !std::isnan(path.target_epoch) && path.target_epoch <= budget;
      t.epochs = t.reached ? path.target_epoch : budget;
      if (t.profiled) {
        t.energy_j = bs->profiling_epoch_energy_j + path.energy_per_epoch_j * (t.epochs - 1);
        t.time_s = bs->profiling_epoch_time_s + path.time_per_epoch_s * (t.epochs - 1);
      } else {
        t.energy_j = path.energy_per_epoch_j * t.epochs;
        t.time_s = path.time_per_epoch_s * t.epochs;
      }
      t.cost = optimizer::ZeusCost(t.energy_j, t.time_s, eta, job.max_power_w);
      cost_acc += t.cost;
      if (options.record_tries) result.tries.push_back(t);
      ++rec.num_tries;
      ++rec.num_runs;
      rec.num_missed += t.reached ? 0 : 1;
      rec.energy_j += t.energy_j;
      rec.time_s += t.time_s;
      rec.cost += t.cost;
      if (Status s = policy.Observe(t, t.cost); !s) return Fail(s.error());
      if (t.reached) {
        min_cost = std::min(min_cost, cost_acc);
        reached = true;
        rec.stage = t.stage;
        rec.batch_size = t.batch_size;
        rec.power_limit_w = t.power_limit_w;
        rec.epochs = t.epochs;
      } else if (recurrence == 1 && policy.RequiresFirstSuccess()) {
        return Fail(ErrorCode::kFailedPrecondition,
                    fmt::format("the default batch size {} did not reach target_metric {} within {} epochs in the "
                                "first recurrence",
                                t.batch_size, job.workload.target_metric, job.workload.max_epochs));
      }
    }
    if (!reached) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("recurrence {}: the job did not reach the target in {} tries", recurrence, max_tries));
    }
    result.recurrences.push_back(rec);
  }
  return result;
}

}  // namespace zeus::simulator
