// Copyright 2026 The Zeus C++ Authors.

#include "zeus/simulator/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "zeus/optimizer/cost.h"
#include "zeus/optimizer/numpy_math.h"

namespace zeus::simulator {

std::vector<ConfigExpectation> ExpectedConfigs(const JobTrace& job, double eta) {
  std::vector<ConfigExpectation> out;
  const auto max_epochs = static_cast<double>(job.workload.max_epochs);
  for (const BatchSizeTrace& bs : job.per_batch_size) {
    for (std::size_t i = 0; i < bs.power_limits_w.size(); ++i) {
      std::vector<double> energies, times;
      int reached = 0;
      for (const TracePath& p : bs.paths[i]) {
        const bool reaches = !std::isnan(p.target_epoch) && p.target_epoch <= max_epochs;
        const double epochs = reaches ? p.target_epoch : max_epochs;
        reached += reaches ? 1 : 0;
        energies.push_back(p.energy_per_epoch_j * epochs);
        times.push_back(p.time_per_epoch_s * epochs);
      }
      ConfigExpectation c;
      c.batch_size = bs.batch_size;
      c.power_limit_w = bs.power_limits_w[i];
      c.energy_j = optimizer::NumpyMean(energies);
      c.time_s = optimizer::NumpyMean(times);
      c.cost = optimizer::ZeusCost(c.energy_j, c.time_s, eta, job.max_power_w);
      c.reach_fraction = static_cast<double>(reached) / static_cast<double>(bs.paths[i].size());
      out.push_back(c);
    }
  }
  return out;
}

Result<Baselines> ComputeBaselines(const JobTrace& job, double eta) {
  const std::vector<ConfigExpectation> configs = ExpectedConfigs(job, eta);
  Baselines b;
  bool have_default = false, have_oracle = false;
  const BatchSizeTrace* default_bs = job.Find(job.default_batch_size);
  for (const ConfigExpectation& c : configs) {
    if (default_bs != nullptr && c.batch_size == default_bs->batch_size &&
        c.power_limit_w == default_bs->max_power_limit_w) {
      b.default_config = c;
      have_default = true;
    }
    if (c.reach_fraction == 1.0 && (!have_oracle || c.cost < b.oracle.cost)) {
      b.oracle = c;
      have_oracle = true;
    }
  }
  if (!have_default) {
    return Fail(ErrorCode::kFailedPrecondition, "the default batch size has no measurements at its maximum limit");
  }
  if (!have_oracle) {
    return Fail(ErrorCode::kFailedPrecondition,
                "no (batch size, power limit) reaches the target on every path within max_epochs; there is no oracle");
  }
  return b;
}

RunSummary Summarize(const SimulationResult& result, const Baselines& baselines, int last_n) {
  RunSummary s;
  const std::vector<RecurrenceRecord>& recs = result.recurrences;
  s.num_recurrences = static_cast<int>(recs.size());
  if (recs.empty() || last_n < 1) return s;
  const double oracle_cost = baselines.oracle.cost;
  for (const RecurrenceRecord& r : recs) {
    s.num_tries += r.num_tries;
    s.num_failed_runs += r.num_missed;
    // The stage never returns to pruning, so the first recurrence with a
    // Thompson-sampling try also ends with one.
    if (s.first_ts_recurrence == 0 && r.stage == "ts") s.first_ts_recurrence = r.recurrence;
    s.total_energy_j += r.energy_j;
    s.total_time_s += r.time_s;
    s.total_cost += r.cost;
    s.cum_regret += r.cost - oracle_cost;
  }
  const double n = static_cast<double>(recs.size());
  const ConfigExpectation& def = baselines.default_config;
  s.savings_all_pct = 100.0 * (1.0 - s.total_energy_j / (n * def.energy_j));
  s.time_change_all_pct = 100.0 * (s.total_time_s / (n * def.time_s) - 1.0);
  s.cum_regret_over_oracle_cost = s.cum_regret / oracle_cost;

  s.last_n = std::min(last_n, s.num_recurrences);
  std::map<std::pair<int, double>, int> counts;
  std::vector<std::pair<int, double>> order;
  int at_oracle = 0;
  for (auto it = recs.end() - s.last_n; it != recs.end(); ++it) {
    s.last_n_energy_j += it->energy_j;
    s.last_n_time_s += it->time_s;
    s.last_n_cost += it->cost;
    const std::pair<int, double> config{it->batch_size, it->power_limit_w};
    if (counts[config]++ == 0) order.push_back(config);
    at_oracle += (it->batch_size == baselines.oracle.batch_size && it->power_limit_w == baselines.oracle.power_limit_w);
  }
  const double m = static_cast<double>(s.last_n);
  s.last_n_energy_j /= m;
  s.last_n_time_s /= m;
  s.last_n_cost /= m;
  s.savings_last_n_pct = 100.0 * (1.0 - s.last_n_energy_j / def.energy_j);
  s.time_change_last_n_pct = 100.0 * (s.last_n_time_s / def.time_s - 1.0);
  s.last_n_oracle_fraction = at_oracle / m;
  std::pair<int, double> mode{0, 0.0};
  int mode_count = 0;
  for (const auto& config : order) {
    if (counts[config] > mode_count) {
      mode = config;
      mode_count = counts[config];
    }
  }
  s.last_n_mode_batch_size = mode.first;
  s.last_n_mode_power_limit_w = mode.second;
  return s;
}

}  // namespace zeus::simulator
