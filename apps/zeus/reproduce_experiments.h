// Copyright 2026 The Zeus C++ Authors.
//
// The paper's experiments beyond the main evaluation, as `zeus reproduce`
// runs them (../shared/docs/paper-notes.md 1.5, 2.6, 3.6, 3.7): potential
// savings, sensitivity to eta and beta, grid-search baselines and a drifting
// workload. Every grid of simulations runs on a thread pool with results in
// fixed slots, so tables, JSON and report are byte-identical whatever the
// thread count. Running them: reproduce_experiments.cc; their tables, JSON
// and report sections: experiments_report.cc.

#ifndef ZEUS_APPS_ZEUS_REPRODUCE_EXPERIMENTS_H_
#define ZEUS_APPS_ZEUS_REPRODUCE_EXPERIMENTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/zeus/report_html.h"
#include "zeus/base/error.h"
#include "zeus/simulator/experiments.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/metrics.h"
#include "zeus/simulator/simulator.h"

namespace zeus::cli {

// "0,0.25,0.5": numbers in [min, max], none twice, at most 32. With
// allow_inf, "inf" is a value too and min itself is not (for a positive
// knob: min = 0). Errors name the flag and the bad item.
Result<std::vector<double>> ParseNumberList(const std::string& flag, const std::string& text, double min, double max,
                                            bool allow_inf);

// Runs fn(i) for i in [0, count) on `threads` threads (at least one).
void ParallelFor(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& fn);

// Runs every (job, options, seed) and summarises it against `baselines`
// (one per job, the options' eta). Returns per job, per options, per seed.
// The first failure (in slot order) is returned.
struct GridRun {
  std::vector<std::vector<std::vector<simulator::RunSummary>>> summaries;  // [job][variant][seed]
};
Result<GridRun> RunGrid(const std::vector<const simulator::JobTrace*>& jobs,
                        const std::vector<std::vector<simulator::Baselines>>& baselines,  // [job][variant]
                        const std::vector<simulator::SimulationOptions>& variants,
                        const std::vector<std::uint64_t>& seeds, unsigned threads);

}  // namespace zeus::cli

namespace zeus::cli::report {

struct PotentialRow {
  const simulator::JobTrace* job = nullptr;
  simulator::PotentialSavings savings;
};

// One knob's sweep: per job, per value, the aggregate over the seeds.
struct Sensitivity {
  std::string knob;  // "eta" or "beta"
  std::vector<double> values;
  std::vector<const simulator::JobTrace*> jobs;
  std::vector<std::vector<JobAggregate>> aggregates;  // [job][value]
};

// Regret of Zeus and of grid search with and without early stopping.
struct BaselineRow {
  const simulator::JobTrace* job = nullptr;
  int recurrences = 0;
  JobAggregate zeus, grid, grid_early_stop;
};

// One job's drifting runs: Thompson sampling with and without a window.
struct DriftRow {
  const simulator::JobTrace* job = nullptr;
  simulator::DriftedJob drifted;
  simulator::Baselines before, after;
  int shift_after = 0;
  int recurrences = 0;
  int window = 0;
  // [0]: no window, [1]: the window; per seed that completed.
  std::vector<simulator::DriftSummary> summaries[2];
  // Runs that stopped because a recurrence used up its tries (every try
  // early-stopped: the threshold beta x min_cost dates from before the
  // shift): "seed N: message".
  std::vector<std::string> failures[2];
  std::vector<double> mean_regret[2];  // per recurrence, mean over seeds, in oracle jobs of the current phase
};

struct Experiments {
  double beta = 2.0;  // the early-stopping grid search's
  std::vector<PotentialRow> potential;
  std::optional<Sensitivity> sensitivity;
  std::vector<BaselineRow> baselines;
  std::vector<DriftRow> drift;
};

// What `zeus reproduce` was asked for beyond its main runs.
struct ExperimentRequest {
  double eta = 0.5;   // of the main runs
  double beta = 2.0;  // of the main runs
  simulator::Policy policy = simulator::Policy::kZeus;  // of the main runs and the sensitivity and drift grids
  std::vector<double> etas, betas;  // a list of more than one value: its sensitivity table
  bool baselines = false;
  bool drift = false;
  int drift_after = 0;  // 0: each job's default recurrences
  simulator::DriftSpec drift_spec;
  int drift_window = 10;
};

// "V100 imagenet/resnet50": a job in messages and chart titles.
std::string JobLabel(const simulator::JobTrace& job);

// The potential savings of every job (jobs whose Default does not always
// reach the target are left out), then the requested grids. `jobs` holds the
// main runs (their summaries are Zeus's column of the baselines table).
Result<Experiments> RunExperiments(const ExperimentRequest& request, const std::vector<JobRuns>& jobs,
                                   const std::vector<std::uint64_t>& seeds, unsigned threads);

// Text tables (the numbers are those of the JSON, rounded for print).
std::string PotentialTable(const std::vector<PotentialRow>& rows);
std::string SensitivityTable(const Sensitivity& s);
std::string BaselinesTable(const std::vector<BaselineRow>& rows, double beta);
std::string DriftTable(const std::vector<DriftRow>& rows);

nlohmann::json PotentialJson(const std::vector<PotentialRow>& rows);
nlohmann::json SensitivityJson(const Sensitivity& s);
nlohmann::json BaselinesJson(const std::vector<BaselineRow>& rows, double beta);
nlohmann::json DriftJson(const std::vector<DriftRow>& rows);

// The report's sections for whatever `e` holds (tables, a savings-against-eta
// or regret-against-beta chart per GPU, and the drift runs' regret per
// recurrence).
std::string ExperimentsHtml(const Experiments& e);

}  // namespace zeus::cli::report

#endif  // ZEUS_APPS_ZEUS_REPRODUCE_EXPERIMENTS_H_
