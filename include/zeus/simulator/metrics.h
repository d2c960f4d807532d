// Copyright 2026 The Zeus C++ Authors.
//
// Baselines and metrics of a simulation (../shared/docs/simulator-spec.md,
// "Baselines and metrics"):
//
//   * Expected configuration: for (batch size, limit), the mean over the
//     trace's paths of energy and time to reach the target (max_epochs epochs
//     for a path that does not), and the cost of those means.
//   * Default: the default batch size at its largest measured limit.
//   * Oracle: the least expected cost among configurations whose every path
//     reaches the target within max_epochs.
//   * savings_all_pct = 100 (1 - sum_r E_r / (R E_default)),
//     time_change_all_pct = 100 (sum_r T_r / (R T_default) - 1), where E_r
//     and T_r count every try of recurrence r; the last-N variants use the
//     mean over the last N recurrences.
//   * cum_regret = sum_r (C_r - C_oracle); divided by C_oracle it reads as
//     "extra oracle jobs' worth of cost".
//
// Pure functions; thread-safe.

#ifndef ZEUS_SIMULATOR_METRICS_H_
#define ZEUS_SIMULATOR_METRICS_H_

#include <vector>

#include "zeus/base/error.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/simulator.h"

namespace zeus::simulator {

struct ConfigExpectation {
  int batch_size = 0;
  double power_limit_w = 0;
  double energy_j = 0;  // expected over paths
  double time_s = 0;
  double cost = 0;      // of the expected energy and time
  double reach_fraction = 0;  // paths that reach the target within max_epochs
};

// Every (batch size, limit) of the job, batch sizes ascending and limits
// descending. REQUIRES: eta in [0, 1].
std::vector<ConfigExpectation> ExpectedConfigs(const JobTrace& job, double eta);

struct Baselines {
  ConfigExpectation default_config;
  ConfigExpectation oracle;
};

// Fails with kFailedPrecondition when no configuration reaches the target on
// every path. REQUIRES: eta in [0, 1].
Result<Baselines> ComputeBaselines(const JobTrace& job, double eta);

struct RunSummary {
  int num_recurrences = 0;
  int num_tries = 0;
  int num_failed_runs = 0;  // tries that ran but did not reach the target
  double total_energy_j = 0;
  double total_time_s = 0;
  double total_cost = 0;
  double savings_all_pct = 0;
  double time_change_all_pct = 0;
  int last_n = 0;  // min(N, recurrences)
  double last_n_energy_j = 0;  // mean per recurrence
  double last_n_time_s = 0;
  double last_n_cost = 0;
  double savings_last_n_pct = 0;
  double time_change_last_n_pct = 0;
  int last_n_mode_batch_size = 0;  // most frequent final configuration (earliest on a tie)
  double last_n_mode_power_limit_w = 0;
  double last_n_oracle_fraction = 0;  // of the last N recurrences at the oracle configuration
  double cum_regret = 0;
  double cum_regret_over_oracle_cost = 0;
  int first_ts_recurrence = 0;  // 0: Thompson sampling never started
};

// From result.recurrences alone (the tries need not be recorded).
// REQUIRES: !result.recurrences.empty(), last_n >= 1.
RunSummary Summarize(const SimulationResult& result, const Baselines& baselines, int last_n = 10);

}  // namespace zeus::simulator

#endif  // ZEUS_SIMULATOR_METRICS_H_
