// Copyright 2026 The Zeus C++ Authors.
//
// The results of `zeus reproduce` and the report it writes: an HTML page with
// inline SVG plots (per GPU and workload: cost over recurrences against
// Default and Oracle, the batch size chosen over time, and the energy-time
// Pareto front of every configuration with the chosen one marked) and a CSV
// with one row per run. Deterministic: the same results give the same bytes.

#ifndef ZEUS_APPS_ZEUS_REPORT_HTML_H_
#define ZEUS_APPS_ZEUS_REPORT_HTML_H_

#include <cstdint>
#include <string>
#include <vector>

#include "chart/svg_chart.h"
#include "zeus/base/error.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/metrics.h"
#include "zeus/simulator/simulator.h"

namespace zeus::cli::report {

// Every seed's run of one (GPU, workload).
struct JobRuns {
  const simulator::JobTrace* job = nullptr;
  simulator::Baselines baselines;
  std::vector<simulator::ConfigExpectation> configs;
  std::vector<std::uint64_t> seeds;
  std::vector<simulator::SimulationResult> results;  // per seed
  std::vector<simulator::RunSummary> summaries;      // per seed
};

// Means (and sample standard deviations) over the seeds.
struct JobAggregate {
  double savings_last_n_pct = 0, savings_last_n_sd = 0;
  double time_change_last_n_pct = 0;
  double savings_all_pct = 0, savings_all_sd = 0;
  double time_change_all_pct = 0;
  double regret_oracle_jobs = 0, regret_oracle_jobs_sd = 0;  // cum_regret / oracle cost
  double oracle_fraction = 0;                                // of the last-N recurrences
  int mode_batch_size = 0;                                   // most common last-N configuration
  double mode_power_limit_w = 0;
};

// REQUIRES: !runs.summaries.empty().
JobAggregate Aggregate(const JobRuns& runs);

struct Experiments;  // reproduce_experiments.h

struct ReportSettings {
  std::string trace_dir;
  double eta = 0.5;
  double beta = 2.0;
  const Experiments* experiments = nullptr;  // sections appended after the main table when set
};

// The charts of a job's section, before rendering (chart::RenderChart). Cost: the
// mean cost per recurrence against the Default and Oracle costs. Batch size:
// one line per seed (SeedSeries), log2 axis. Pareto: energy against time of
// every configuration, the front, and Default, Oracle and Zeus's most common
// choice marked. Axes are log10 where the data span decades (chart::AxisScale::kAuto).
// REQUIRES: !runs.results.empty(), every result with the same recurrences.
chart::Chart CostChart(const JobRuns& runs);
chart::Chart BatchSizeChart(const JobRuns& runs);
chart::Chart ParetoChart(const JobRuns& runs, const JobAggregate& aggregate);

// The line of the k-th seed (0-based) in per-seed charts: thin, translucent,
// and for k < 30 unlike every other seed's in colour or dash pattern.
chart::Series SeedSeries(std::size_t k, std::uint64_t seed);

// One row per (GPU, workload, seed): the RunSummary fields and the baselines.
std::string RunsCsv(const std::vector<JobRuns>& jobs);

// The HTML page.
std::string ReportHtml(const std::vector<JobRuns>& jobs, const ReportSettings& settings);

// Creates `dir` (and parents) and writes index.html and runs.csv into it.
// A file that cannot be written is kIoError (exit 1): "cannot write the
// report file DIR/index.html: No space left on device".
Status WriteReport(const std::string& dir, const std::vector<JobRuns>& jobs, const ReportSettings& settings);

}  // namespace zeus::cli::report

#endif  // ZEUS_APPS_ZEUS_REPORT_HTML_H_
