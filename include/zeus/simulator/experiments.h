// Copyright 2026 The Zeus C++ Authors.
//
// The paper's other experiments on the traces (../shared/docs/paper-notes.md
// 1.5, 2.6, 3.6, 3.7), as pure functions over a JobTrace:
//
//   * Potential savings (Figure 1): the energy to reach the target of the
//     best (batch size, limit), of the best limit at the default batch size
//     and of the best batch size at its maximum limit, against Default (the
//     default batch size at its maximum limit), from the traces' expected
//     energies (ExpectedConfigs: mean over paths); only configurations whose
//     every path reaches the target count.
//   * Data drift: a copy of a job whose costs change, used from a given
//     recurrence on (SimulationOptions::drifted_job). The rule
//     (DriftedJobTrace) is documented in docs/simulator.md.
//   * Regret before and after the shift of a drifting run.
//
// Pure functions; thread-safe.

#ifndef ZEUS_SIMULATOR_EXPERIMENTS_H_
#define ZEUS_SIMULATOR_EXPERIMENTS_H_

#include <cstdint>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/metrics.h"
#include "zeus/simulator/simulator.h"

namespace zeus::simulator {

struct PotentialSavings {
  ConfigExpectation default_config;     // default batch size, its maximum limit
  ConfigExpectation best;               // least energy over every configuration
  ConfigExpectation best_power_limit;   // least energy over the default batch size's limits
  ConfigExpectation best_batch_size;    // least energy over batch sizes, each at its maximum limit
  double best_pct = 0;                  // 100 (1 - E_best / E_default)
  double power_limit_pct = 0;
  double batch_size_pct = 0;
};

// Fails with kFailedPrecondition when the default configuration does not
// reach the target on every path (there is no baseline to save against).
Result<PotentialSavings> ComputePotentialSavings(const JobTrace& job);

// A drifting workload built from a job: from the shift on, every epoch of
// batch size b costs factor_b times as much time and energy (all its limits
// and paths, and its profiling epoch), so its cost at every limit scales by
// factor_b and JIT profiling still picks the same limit. The batch size of
// the Oracle before the shift (at `eta`) gets factor `magnitude`; every other
// one a log-uniform factor exp(u ln magnitude), u = 2 x NextDouble() - 1 with
// NumpyRandom(seed) (numpy's default_rng(seed).random()), one draw per batch
// size in ascending order, the Oracle's included (its draw is discarded).
struct DriftSpec {
  double magnitude = 1.5;  // > 1
  std::uint64_t seed = 1;
};

struct DriftedJob {
  JobTrace job;                      // the costs after the shift
  std::vector<int> batch_sizes;      // of job.per_batch_size, ascending
  std::vector<double> factors;       // factors[i] for batch_sizes[i]
};

// Fails with kInvalidArgument when magnitude <= 1 or is not finite, and
// with ComputeBaselines' error when the job has no Oracle.
Result<DriftedJob> DriftedJobTrace(const JobTrace& job, const DriftSpec& spec, double eta);

struct DriftSummary {
  int shift_after = 0;            // recurrences before the shift
  double regret_before = 0;       // sum over r <= shift of C_r - C_oracle(before), in oracle jobs (before)
  double regret_after = 0;        // sum over r > shift of C_r - C_oracle(after), in oracle jobs (after)
  double last_n_regret = 0;       // mean over the last N recurrences, in oracle jobs (after)
  int last_n = 0;
  double last_n_oracle_fraction = 0;  // of the last N at the after-shift Oracle configuration
  int most_tries = 0;                 // the most tries one recurrence took
};

// REQUIRES: 0 <= shift_after < result.recurrences.size(), last_n >= 1.
DriftSummary SummarizeDrift(const SimulationResult& result, const Baselines& before, const Baselines& after,
                            int shift_after, int last_n = 10);

}  // namespace zeus::simulator

#endif  // ZEUS_SIMULATOR_EXPERIMENTS_H_
