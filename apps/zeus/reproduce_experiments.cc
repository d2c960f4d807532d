// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/reproduce_experiments.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace zeus::cli {

namespace {
constexpr std::size_t kMaxListValues = 32;
// Drift runs keep 8 bytes per recurrence for the plot: at most 400 MB.
constexpr std::size_t kMaxDriftRecurrences = 50'000'000;
}  // namespace

Result<std::vector<double>> ParseNumberList(const std::string& flag, const std::string& text, double min, double max,
                                            bool allow_inf) {
  std::vector<double> out;
  std::string item;
  const std::string range = allow_inf && min == 0 ? std::string("a positive number or inf")
                                                   : fmt::format("between {} and {}", min, max);
  for (char c : text + ",") {
    if (c == ' ') continue;
    if (c != ',') {
      item += c;
      continue;
    }
    if (item.empty()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} '{}' has an empty item; give a comma-separated list such as 0,0.5,1", flag, text));
    }
    double value = 0;
    if (allow_inf && item == "inf") {
      value = std::numeric_limits<double>::infinity();
    } else {
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      if (ec != std::errc() || end != item.data() + item.size() || !std::isfinite(value)) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("{}: '{}' is not a number; give a comma-separated list such as {}", flag, item,
                                allow_inf ? "1.5,2,inf" : "0,0.5,1"));
      }
      if (value < min || value > max || (allow_inf && value == min)) {
        return Fail(ErrorCode::kInvalidArgument, fmt::format("{} must be {} (got {})", flag, range, item));
      }
    }
    if (std::find(out.begin(), out.end(), value) != out.end()) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: '{}' is given twice", flag, item));
    }
    if (out.size() == kMaxListValues) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: at most {} values", flag, kMaxListValues));
    }
    out.push_back(value);
    item.clear();
  }
  return out;
}

void ParallelFor(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& fn) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) fn(i);
  };
  threads = static_cast<unsigned>(std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(count, 1)));
  std::vector<std::jthread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
}

Result<GridRun> RunGrid(const std::vector<const simulator::JobTrace*>& jobs,
                        const std::vector<std::vector<simulator::Baselines>>& baselines,
                        const std::vector<simulator::SimulationOptions>& variants,
                        const std::vector<std::uint64_t>& seeds, unsigned threads) {
  GridRun out;
  out.summaries.assign(jobs.size(), std::vector<std::vector<simulator::RunSummary>>(
                                        variants.size(), std::vector<simulator::RunSummary>(seeds.size())));
  const std::size_t per_job = variants.size() * seeds.size();
  std::vector<std::optional<Error>> errors(jobs.size() * per_job);
  ParallelFor(errors.size(), threads, [&](std::size_t task) {
    const std::size_t j = task / per_job, v = task % per_job / seeds.size(), k = task % seeds.size();
    simulator::SimulationOptions options = variants[v];
    options.seed = seeds[k];
    options.record_tries = false;
    Result<simulator::SimulationResult> sim = simulator::Simulate(*jobs[j], options);
    if (sim) {
      out.summaries[j][v][k] = simulator::Summarize(*sim, baselines[j][v]);
    } else {
      errors[task] = sim.error().WithContext(fmt::format("{} on {}, {} policy, eta {}, beta {}, seed {}",
                                                         jobs[j]->workload.name(), jobs[j]->gpu,
                                                         simulator::PolicyName(options.policy), options.eta,
                                                         options.beta, seeds[k]));
    }
  });
  for (const std::optional<Error>& e : errors) {
    if (e) return Fail(*e);
  }
  return out;
}

}  // namespace zeus::cli

namespace zeus::cli::report {
namespace {

// The aggregate over the seeds of one job's summaries.
JobAggregate AggregateOf(const std::vector<simulator::RunSummary>& summaries) {
  JobRuns runs;
  runs.summaries = summaries;
  return Aggregate(runs);
}

// Every job at every value of the knob that has a list (eta or beta).
Result<Sensitivity> RunSensitivity(const ExperimentRequest& request, const simulator::SimulationOptions& main,
                                   const std::vector<const simulator::JobTrace*>& traces,
                                   const std::vector<std::uint64_t>& seeds, unsigned threads) {
  const bool eta_sweep = request.etas.size() > 1;
  Sensitivity s;
  s.knob = eta_sweep ? "eta" : "beta";
  s.values = eta_sweep ? request.etas : request.betas;
  s.jobs = traces;
  std::vector<simulator::SimulationOptions> variants;
  std::vector<std::vector<simulator::Baselines>> baselines(traces.size());
  for (double v : s.values) {
    simulator::SimulationOptions o = main;
    (eta_sweep ? o.eta : o.beta) = v;
    variants.push_back(o);
    for (std::size_t j = 0; j < traces.size(); ++j) {
      Result<simulator::Baselines> b = simulator::ComputeBaselines(*traces[j], o.eta);
      if (!b) return Fail(b.error());
      baselines[j].push_back(*b);
    }
  }
  Result<GridRun> grid = RunGrid(traces, baselines, variants, seeds, threads);
  if (!grid) return Fail(grid.error());
  for (std::size_t j = 0; j < traces.size(); ++j) {
    s.aggregates.emplace_back();
    for (std::size_t v = 0; v < variants.size(); ++v) s.aggregates.back().push_back(AggregateOf(grid->summaries[j][v]));
  }
  return s;
}

// Grid search without early stopping and with the main runs' beta, beside
// Zeus's main runs.
Result<std::vector<BaselineRow>> RunBaselines(const simulator::SimulationOptions& main,
                                              const std::vector<JobRuns>& jobs,
                                              const std::vector<const simulator::JobTrace*>& traces,
                                              const std::vector<std::uint64_t>& seeds, unsigned threads) {
  simulator::SimulationOptions grid_options = main;
  grid_options.policy = simulator::Policy::kGridSearch;
  std::vector<simulator::SimulationOptions> variants = {grid_options, grid_options};
  variants[0].beta = std::numeric_limits<double>::infinity();
  std::vector<std::vector<simulator::Baselines>> baselines;
  for (const JobRuns& r : jobs) baselines.push_back({r.baselines, r.baselines});
  Result<GridRun> grid = RunGrid(traces, baselines, variants, seeds, threads);
  if (!grid) return Fail(grid.error());
  std::vector<BaselineRow> rows;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    BaselineRow row;
    row.job = jobs[j].job;
    row.recurrences = jobs[j].summaries.front().num_recurrences;
    row.zeus = Aggregate(jobs[j]);
    row.grid = AggregateOf(grid->summaries[j][0]);
    row.grid_early_stop = AggregateOf(grid->summaries[j][1]);
    rows.push_back(std::move(row));
  }
  return rows;
}

// Each job's drifted trace and the baselines before and after the shift, its
// runs not yet simulated; kInvalidArgument when the runs would keep more
// than kMaxDriftRecurrences regrets.
Result<std::vector<DriftRow>> PrepareDrift(const ExperimentRequest& request, const std::vector<JobRuns>& jobs,
                                           std::size_t seed_count) {
  std::vector<DriftRow> rows;
  std::size_t total = 0;
  for (const JobRuns& r : jobs) {
    DriftRow row;
    row.job = r.job;
    Result<simulator::DriftedJob> drifted = simulator::DriftedJobTrace(*r.job, request.drift_spec, request.eta);
    if (!drifted) return Fail(drifted.error().WithContext(JobLabel(*r.job)));
    row.drifted = std::move(*drifted);
    row.before = r.baselines;
    Result<simulator::Baselines> after = simulator::ComputeBaselines(row.drifted.job, request.eta);
    if (!after) return Fail(after.error().WithContext(JobLabel(*r.job)));
    row.after = *after;
    row.shift_after = request.drift_after > 0 ? request.drift_after : r.job->default_recurrences;
    row.recurrences = row.shift_after + r.job->default_recurrences;
    row.window = request.drift_window;
    total += 2 * seed_count * static_cast<std::size_t>(row.recurrences);
    rows.push_back(std::move(row));
  }
  if (total > kMaxDriftRecurrences) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--drift: {} recurrences in all (jobs x 2 windows x seeds x recurrences); at most {} "
                            "(each keeps its regret for the plot); give fewer seeds or a smaller --drift-after",
                            total, kMaxDriftRecurrences));
  }
  return rows;
}

// Per (job, window, seed): the summary and the regret of every recurrence, or
// the error of the run.
struct DriftRuns {
  std::vector<std::vector<double>> regrets;
  std::vector<simulator::DriftSummary> summaries;
  std::vector<std::optional<Error>> errors;
};

DriftRuns SimulateDrift(const simulator::SimulationOptions& main, const std::vector<DriftRow>& rows,
                        const std::vector<std::uint64_t>& seeds, unsigned threads) {
  DriftRuns out;
  out.regrets.resize(rows.size() * 2 * seeds.size());
  out.summaries.resize(out.regrets.size());
  out.errors.resize(out.regrets.size());
  ParallelFor(out.regrets.size(), threads, [&](std::size_t task) {
    const DriftRow& row = rows[task / (2 * seeds.size())];
    const std::size_t w = task / seeds.size() % 2, k = task % seeds.size();
    simulator::SimulationOptions o = main;
    o.seed = seeds[k];
    o.record_tries = false;
    o.num_recurrences = row.recurrences;
    o.bandit.window_size = w == 0 ? 0 : row.window;
    o.drifted_job = &row.drifted.job;
    o.drift_after_recurrence = row.shift_after;
    Result<simulator::SimulationResult> sim = simulator::Simulate(*row.job, o);
    if (!sim) {
      out.errors[task] = sim.error().WithContext(fmt::format("seed {}", seeds[k]));
      return;
    }
    out.summaries[task] = simulator::SummarizeDrift(*sim, row.before, row.after, row.shift_after);
    for (const simulator::RecurrenceRecord& rec : sim->recurrences) {
      const simulator::Baselines& b = rec.recurrence <= row.shift_after ? row.before : row.after;
      out.regrets[task].push_back((rec.cost - b.oracle.cost) / b.oracle.cost);
    }
  });
  return out;
}

// Simulates `rows`' runs and fills their summaries, failures (runs stuck
// with every try early-stopped) and mean regret per recurrence. Another
// error is returned.
Status RunDrift(const simulator::SimulationOptions& main, const std::vector<std::uint64_t>& seeds, unsigned threads,
                std::vector<DriftRow>& rows) {
  DriftRuns runs = SimulateDrift(main, rows, seeds, threads);
  for (std::size_t task = 0; task < runs.regrets.size(); ++task) {
    DriftRow& row = rows[task / (2 * seeds.size())];
    const std::size_t w = task / seeds.size() % 2;
    if (runs.errors[task]) {
      if (runs.errors[task]->code() != ErrorCode::kFailedPrecondition) return Fail(*runs.errors[task]);
      row.failures[w].push_back(runs.errors[task]->message());
      continue;
    }
    row.summaries[w].push_back(runs.summaries[task]);
    std::vector<double>& mean = row.mean_regret[w];
    mean.resize(runs.regrets[task].size(), 0.0);
    for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += runs.regrets[task][i];
  }
  for (DriftRow& row : rows) {
    for (int w = 0; w < 2; ++w) {
      if (row.summaries[w].empty()) row.mean_regret[w].clear();  // every run stuck: nothing to plot
      for (double& v : row.mean_regret[w]) v /= static_cast<double>(row.summaries[w].size());
    }
  }
  return OkStatus();
}

}  // namespace

std::string JobLabel(const simulator::JobTrace& job) { return fmt::format("{} {}", job.gpu, job.workload.name()); }

Result<Experiments> RunExperiments(const ExperimentRequest& request, const std::vector<JobRuns>& jobs,
                                   const std::vector<std::uint64_t>& seeds, unsigned threads) {
  Experiments e;
  e.beta = request.beta;
  std::vector<const simulator::JobTrace*> traces;
  for (const JobRuns& r : jobs) {
    traces.push_back(r.job);
    if (Result<simulator::PotentialSavings> p = simulator::ComputePotentialSavings(*r.job); p) {
      e.potential.push_back({r.job, *p});
    }
  }
  simulator::SimulationOptions main;
  main.eta = request.eta;
  main.beta = request.beta;
  main.policy = request.policy;
  if (request.etas.size() > 1 || request.betas.size() > 1) {
    Result<Sensitivity> s = RunSensitivity(request, main, traces, seeds, threads);
    if (!s) return Fail(s.error());
    e.sensitivity = std::move(*s);
  }
  if (request.baselines) {
    Result<std::vector<BaselineRow>> rows = RunBaselines(main, jobs, traces, seeds, threads);
    if (!rows) return Fail(rows.error());
    e.baselines = std::move(*rows);
  }
  if (request.drift) {
    Result<std::vector<DriftRow>> rows = PrepareDrift(request, jobs, seeds.size());
    if (!rows) return Fail(rows.error());
    if (Status s = RunDrift(main, seeds, threads, *rows); !s) return Fail(s.error());
    e.drift = std::move(*rows);
  }
  return e;
}

}  // namespace zeus::cli::report
