// Copyright 2026 The Zeus C++ Authors.

#include "zeus/simulator/experiments.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "zeus/optimizer/numpy_random.h"

namespace zeus::simulator {
namespace {

double SavingPct(double energy_j, double default_energy_j) { return 100.0 * (1.0 - energy_j / default_energy_j); }

// `candidate` replaces `best` when it always reaches the target and uses less energy (the first wins a tie).
void KeepLeastEnergy(const ConfigExpectation& candidate, ConfigExpectation& best, bool& have) {
  if (candidate.reach_fraction != 1.0) return;
  if (!have || candidate.energy_j < best.energy_j) {
    best = candidate;
    have = true;
  }
}

}  // namespace

Result<PotentialSavings> ComputePotentialSavings(const JobTrace& job) {
  // Energy does not depend on eta; the cost column is unused here.
  const std::vector<ConfigExpectation> configs = ExpectedConfigs(job, 0.5);
  const BatchSizeTrace* b0 = job.Find(job.default_batch_size);
  PotentialSavings p;
  bool have_default = false, have_best = false, have_pl = false, have_bs = false;
  for (const ConfigExpectation& c : configs) {
    const BatchSizeTrace* bs = job.Find(c.batch_size);
    const bool at_max_limit = bs != nullptr && c.power_limit_w == bs->max_power_limit_w;
    if (b0 != nullptr && c.batch_size == b0->batch_size && at_max_limit) {
      p.default_config = c;
      have_default = c.reach_fraction == 1.0;
    }
    KeepLeastEnergy(c, p.best, have_best);
    if (b0 != nullptr && c.batch_size == b0->batch_size) KeepLeastEnergy(c, p.best_power_limit, have_pl);
    if (at_max_limit) KeepLeastEnergy(c, p.best_batch_size, have_bs);
  }
  if (!have_default || !have_best || !have_pl || !have_bs) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} on {}: the default batch size {} at its maximum limit does not reach the target on "
                            "every path, so there is no Default to compare with",
                            job.workload.name(), job.gpu, job.default_batch_size));
  }
  const double e0 = p.default_config.energy_j;
  p.best_pct = SavingPct(p.best.energy_j, e0);
  p.power_limit_pct = SavingPct(p.best_power_limit.energy_j, e0);
  p.batch_size_pct = SavingPct(p.best_batch_size.energy_j, e0);
  return p;
}

Result<DriftedJob> DriftedJobTrace(const JobTrace& job, const DriftSpec& spec, double eta) {
  if (!(spec.magnitude > 1.0) || std::isinf(spec.magnitude)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the drift magnitude must be a finite number above 1, got {}", spec.magnitude));
  }
  Result<Baselines> before = ComputeBaselines(job, eta);
  if (!before) return Fail(before.error());
  optimizer::NumpyRandom rng(spec.seed);
  const double log_magnitude = std::log(spec.magnitude);
  DriftedJob out;
  out.job = job;
  for (BatchSizeTrace& bs : out.job.per_batch_size) {
    const double u = 2.0 * rng.NextDouble() - 1.0;
    const double factor = bs.batch_size == before->oracle.batch_size ? spec.magnitude : std::exp(u * log_magnitude);
    for (std::vector<TracePath>& paths : bs.paths) {
      for (TracePath& path : paths) {
        path.time_per_epoch_s *= factor;
        path.energy_per_epoch_j *= factor;
      }
    }
    for (optimizer::PowerLimitProfile& profile : bs.profiles) profile.time_s *= factor;
    bs.profiling_epoch_energy_j *= factor;
    bs.profiling_epoch_time_s *= factor;
    out.batch_sizes.push_back(bs.batch_size);
    out.factors.push_back(factor);
  }
  return out;
}

DriftSummary SummarizeDrift(const SimulationResult& result, const Baselines& before, const Baselines& after,
                            int shift_after, int last_n) {
  DriftSummary s;
  s.shift_after = shift_after;
  const std::vector<RecurrenceRecord>& recs = result.recurrences;
  for (const RecurrenceRecord& r : recs) {
    s.most_tries = std::max(s.most_tries, r.num_tries);
    if (r.recurrence <= shift_after) {
      s.regret_before += r.cost - before.oracle.cost;
    } else {
      s.regret_after += r.cost - after.oracle.cost;
    }
  }
  s.regret_before /= before.oracle.cost;
  s.regret_after /= after.oracle.cost;
  s.last_n = std::min<int>(last_n, static_cast<int>(recs.size()) - shift_after);
  int at_oracle = 0;
  for (auto it = recs.end() - s.last_n; it != recs.end(); ++it) {
    s.last_n_regret += (it->cost - after.oracle.cost) / after.oracle.cost;
    at_oracle += it->batch_size == after.oracle.batch_size && it->power_limit_w == after.oracle.power_limit_w;
  }
  if (s.last_n > 0) {
    s.last_n_regret /= s.last_n;
    s.last_n_oracle_fraction = static_cast<double>(at_oracle) / s.last_n;
  }
  return s;
}

}  // namespace zeus::simulator
