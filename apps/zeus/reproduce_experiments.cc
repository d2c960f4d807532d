// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/reproduce_experiments.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "apps/zeus/report_svg.h"

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

using json = nlohmann::json;

const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};

std::string Cfg(const simulator::ConfigExpectation& c) { return fmt::format("{}@{}", c.batch_size, c.power_limit_w); }

std::string ValueName(double v) { return std::isinf(v) ? std::string("inf") : fmt::format("{}", v); }

// A JSON number, or the string "inf" (JSON has no infinity).
json ValueJson(double v) { return std::isinf(v) ? json("inf") : json(v); }

json ConfigJson(const simulator::ConfigExpectation& c) {
  return {{"batch_size", c.batch_size}, {"power_limit_w", c.power_limit_w}, {"energy_j", c.energy_j},
          {"time_s", c.time_s}};
}

json AggregateJson(const JobAggregate& a) {
  return {{"savings_last_n_pct", a.savings_last_n_pct},     {"time_change_last_n_pct", a.time_change_last_n_pct},
          {"savings_all_pct", a.savings_all_pct},           {"time_change_all_pct", a.time_change_all_pct},
          {"regret_oracle_jobs", a.regret_oracle_jobs},     {"regret_oracle_jobs_sd", a.regret_oracle_jobs_sd},
          {"mode_batch_size", a.mode_batch_size},           {"mode_power_limit_w", a.mode_power_limit_w}};
}

json DriftSummaryJson(const simulator::DriftSummary& s) {
  return {{"regret_before", s.regret_before},
          {"regret_after", s.regret_after},
          {"last_n", s.last_n},
          {"last_n_regret", s.last_n_regret},
          {"last_n_oracle_fraction", s.last_n_oracle_fraction},
          {"most_tries", s.most_tries}};
}

double MeanOf(const std::vector<simulator::DriftSummary>& v, double simulator::DriftSummary::*field) {
  double sum = 0;
  for (const simulator::DriftSummary& s : v) sum += s.*field;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

std::string JobLabel(const simulator::JobTrace& job) { return fmt::format("{} {}", job.gpu, job.workload.name()); }

}  // namespace

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

  const bool eta_sweep = request.etas.size() > 1;
  if (eta_sweep || request.betas.size() > 1) {
    Sensitivity s;
    s.knob = eta_sweep ? "eta" : "beta";
    s.values = eta_sweep ? request.etas : request.betas;
    s.jobs = traces;
    std::vector<simulator::SimulationOptions> variants;
    std::vector<std::vector<simulator::Baselines>> baselines(jobs.size());
    for (double v : s.values) {
      simulator::SimulationOptions o = main;
      (eta_sweep ? o.eta : o.beta) = v;
      variants.push_back(o);
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        Result<simulator::Baselines> b = simulator::ComputeBaselines(*jobs[j].job, o.eta);
        if (!b) return Fail(b.error());
        baselines[j].push_back(*b);
      }
    }
    Result<GridRun> grid = RunGrid(traces, baselines, variants, seeds, threads);
    if (!grid) return Fail(grid.error());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      s.aggregates.emplace_back();
      for (std::size_t v = 0; v < variants.size(); ++v) {
        JobRuns runs;
        runs.summaries = grid->summaries[j][v];
        s.aggregates.back().push_back(Aggregate(runs));
      }
    }
    e.sensitivity = std::move(s);
  }

  if (request.baselines) {
    simulator::SimulationOptions grid_options = main;
    grid_options.policy = simulator::Policy::kGridSearch;
    std::vector<simulator::SimulationOptions> variants = {grid_options, grid_options};
    variants[0].beta = std::numeric_limits<double>::infinity();
    std::vector<std::vector<simulator::Baselines>> baselines;
    for (const JobRuns& r : jobs) baselines.push_back({r.baselines, r.baselines});
    Result<GridRun> grid = RunGrid(traces, baselines, variants, seeds, threads);
    if (!grid) return Fail(grid.error());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      BaselineRow row;
      row.job = jobs[j].job;
      row.recurrences = jobs[j].summaries.front().num_recurrences;
      row.zeus = Aggregate(jobs[j]);
      JobRuns runs;
      runs.summaries = grid->summaries[j][0];
      row.grid = Aggregate(runs);
      runs.summaries = grid->summaries[j][1];
      row.grid_early_stop = Aggregate(runs);
      e.baselines.push_back(std::move(row));
    }
  }

  if (request.drift) {
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
      e.drift.push_back(std::move(row));
    }
    std::size_t total = 0;
    for (const DriftRow& row : e.drift) total += 2 * seeds.size() * static_cast<std::size_t>(row.recurrences);
    if (total > kMaxDriftRecurrences) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--drift: {} recurrences in all (jobs x 2 windows x seeds x recurrences); at most {} "
                              "(each keeps its regret for the plot); give fewer seeds or a smaller --drift-after",
                              total, kMaxDriftRecurrences));
    }
    // Per (job, window, seed): the summary and the regret of every recurrence.
    std::vector<std::vector<double>> regrets(e.drift.size() * 2 * seeds.size());
    std::vector<simulator::DriftSummary> summaries(regrets.size());
    std::vector<std::optional<Error>> errors(regrets.size());
    ParallelFor(regrets.size(), threads, [&](std::size_t task) {
      const DriftRow& row = e.drift[task / (2 * seeds.size())];
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
        errors[task] = sim.error().WithContext(fmt::format("seed {}", seeds[k]));
        return;
      }
      summaries[task] = simulator::SummarizeDrift(*sim, row.before, row.after, row.shift_after);
      for (const simulator::RecurrenceRecord& rec : sim->recurrences) {
        const simulator::Baselines& b = rec.recurrence <= row.shift_after ? row.before : row.after;
        regrets[task].push_back((rec.cost - b.oracle.cost) / b.oracle.cost);
      }
    });
    for (std::size_t task = 0; task < regrets.size(); ++task) {
      DriftRow& row = e.drift[task / (2 * seeds.size())];
      const std::size_t w = task / seeds.size() % 2;
      if (errors[task]) {
        if (errors[task]->code() != ErrorCode::kFailedPrecondition) return Fail(*errors[task]);
        row.failures[w].push_back(errors[task]->message());
        continue;
      }
      row.summaries[w].push_back(summaries[task]);
      std::vector<double>& mean = row.mean_regret[w];
      mean.resize(regrets[task].size(), 0.0);
      for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += regrets[task][i];
    }
    for (DriftRow& row : e.drift) {
      for (int w = 0; w < 2; ++w) {
        if (row.summaries[w].empty()) row.mean_regret[w].clear();  // every run stuck: nothing to plot
        for (double& v : row.mean_regret[w]) v /= static_cast<double>(row.summaries[w].size());
      }
    }
  }
  return e;
}

std::string PotentialTable(const std::vector<PotentialRow>& rows) {
  std::string out = fmt::format("{:<8} {:<31} {:>10} {:>16} {:>16} {:>16}\n", "GPU", "workload", "Default",
                                "best (b, p)", "best p at b0", "best b at max p");
  for (const PotentialRow& r : rows) {
    const simulator::PotentialSavings& p = r.savings;
    out += fmt::format("{:<8} {:<31} {:>10} {:>6.1f}% {:>8} {:>6.1f}% {:>8} {:>6.1f}% {:>8}\n", r.job->gpu,
                       r.job->workload.name(), Cfg(p.default_config), p.best_pct, Cfg(p.best), p.power_limit_pct,
                       Cfg(p.best_power_limit), p.batch_size_pct, Cfg(p.best_batch_size));
  }
  out +=
      "\nEnergy to reach the target saved against Default (the default batch size b0 at its maximum power limit),\n"
      "from the traces' expected energies (mean over training paths), by the least-energy configuration, the\n"
      "least-energy limit at b0, and the least-energy batch size at its maximum limit (paper Figure 1).\n";
  return out;
}

std::string SensitivityTable(const Sensitivity& s) {
  const bool eta = s.knob == "eta";
  std::string out = fmt::format("{:<8} {:<31}", "GPU", "workload");
  for (double v : s.values) out += fmt::format(" {:>15}", fmt::format("{}={}", s.knob, ValueName(v)));
  out += "\n";
  for (std::size_t j = 0; j < s.jobs.size(); ++j) {
    out += fmt::format("{:<8} {:<31}", s.jobs[j]->gpu, s.jobs[j]->workload.name());
    for (const JobAggregate& a : s.aggregates[j]) {
      out += eta ? fmt::format(" {:>15}", fmt::format("{:.1f} / {:+.1f}", a.savings_last_n_pct,
                                                      a.time_change_last_n_pct))
                 : fmt::format(" {:>15.1f}", a.regret_oracle_jobs);
    }
    out += "\n";
  }
  out += eta ? "\nEnergy savings % / time change % against Default over the last 10 recurrences, mean over seeds.\n"
             : "\nCumulative regret in oracle jobs (cost above the Oracle's, divided by the Oracle's cost), mean over\n"
               "seeds; beta=inf: no early stopping.\n";
  return out;
}

std::string BaselinesTable(const std::vector<BaselineRow>& rows, double beta) {
  std::string out = fmt::format("{:<8} {:<31} {:>4} {:>9} {:>14} {:>16}\n", "GPU", "workload", "R", "Zeus",
                                "Grid (no ES)", fmt::format("Grid (beta={})", beta));
  for (const BaselineRow& r : rows) {
    out += fmt::format("{:<8} {:<31} {:>4} {:>9.1f} {:>14.1f} {:>16.1f}\n", r.job->gpu, r.job->workload.name(),
                       r.recurrences, r.zeus.regret_oracle_jobs, r.grid.regret_oracle_jobs,
                       r.grid_early_stop.regret_oracle_jobs);
  }
  out +=
      "\nCumulative regret in oracle jobs, mean over seeds. Grid search tries every (batch size ascending, limit\n"
      "descending) once, then keeps the least mean observed cost; without (no ES) and with early stopping.\n";
  return out;
}

std::string DriftTable(const std::vector<DriftRow>& rows) {
  std::string out = fmt::format("{:<8} {:<31} {:>5} {:>4} {:>8} {:>22} {:>20} {:>15} {:>6}\n", "GPU", "workload",
                                "shift", "R", "window", "regret before / after", "last-10 regret/rec.",
                                "last-10 oracle", "stuck");
  for (const DriftRow& r : rows) {
    for (int w = 0; w < 2; ++w) {
      const std::vector<simulator::DriftSummary>& s = r.summaries[w];
      out += fmt::format(
          "{:<8} {:<31} {:>5} {:>4} {:>8} {:>22} {:>20.3f} {:>14.0f}% {:>6}\n", r.job->gpu, r.job->workload.name(),
          r.shift_after, r.recurrences, w == 0 ? std::string("none") : std::to_string(r.window),
          fmt::format("{:.1f} / {:.1f}", MeanOf(s, &simulator::DriftSummary::regret_before),
                      MeanOf(s, &simulator::DriftSummary::regret_after)),
          MeanOf(s, &simulator::DriftSummary::last_n_regret),
          100 * MeanOf(s, &simulator::DriftSummary::last_n_oracle_fraction), r.failures[w].size());
    }
  }
  out +=
      "\nAfter the shift every batch size's epochs cost a seeded factor more or less; the Oracle's batch size before\n"
      "the shift gets the full magnitude. Regret in oracle jobs of each phase's Oracle; mean over seeds. A window\n"
      "keeps only each arm's newest observations, so the bandit forgets the old costs. Stuck: runs where a\n"
      "recurrence used up its 20 tries (all early-stopped), left out of the means.\n";
  for (const DriftRow& r : rows) {
    out += fmt::format("  {}: factors", JobLabel(*r.job));
    for (std::size_t i = 0; i < r.drifted.batch_sizes.size(); ++i) {
      out += fmt::format(" {}:{:.3f}", r.drifted.batch_sizes[i], r.drifted.factors[i]);
    }
    out += fmt::format("; Oracle {} before, {} after\n", Cfg(r.before.oracle), Cfg(r.after.oracle));
    for (int w = 0; w < 2; ++w) {
      for (const std::string& f : r.failures[w]) {
        out += fmt::format("  stuck, window {}: {}\n", w == 0 ? 0 : r.window, f);
      }
    }
  }
  return out;
}

json PotentialJson(const std::vector<PotentialRow>& rows) {
  json out = json::array();
  for (const PotentialRow& r : rows) {
    const simulator::PotentialSavings& p = r.savings;
    out.push_back({{"gpu", r.job->gpu},
                   {"workload", r.job->workload.name()},
                   {"default", ConfigJson(p.default_config)},
                   {"best", ConfigJson(p.best)},
                   {"best_power_limit", ConfigJson(p.best_power_limit)},
                   {"best_batch_size", ConfigJson(p.best_batch_size)},
                   {"best_savings_pct", p.best_pct},
                   {"power_limit_savings_pct", p.power_limit_pct},
                   {"batch_size_savings_pct", p.batch_size_pct}});
  }
  return out;
}

json SensitivityJson(const Sensitivity& s) {
  json rows = json::array();
  for (std::size_t j = 0; j < s.jobs.size(); ++j) {
    json cells = json::array();
    for (std::size_t v = 0; v < s.values.size(); ++v) {
      json cell = AggregateJson(s.aggregates[j][v]);
      cell[s.knob] = ValueJson(s.values[v]);
      cells.push_back(cell);
    }
    rows.push_back({{"gpu", s.jobs[j]->gpu}, {"workload", s.jobs[j]->workload.name()}, {"values", cells}});
  }
  json values = json::array();
  for (double v : s.values) values.push_back(ValueJson(v));
  return {{"knob", s.knob}, {"values", values}, {"rows", rows}};
}

json BaselinesJson(const std::vector<BaselineRow>& rows, double beta) {
  json out = json::array();
  for (const BaselineRow& r : rows) {
    out.push_back({{"gpu", r.job->gpu},
                   {"workload", r.job->workload.name()},
                   {"recurrences", r.recurrences},
                   {"beta", beta},
                   {"zeus", AggregateJson(r.zeus)},
                   {"grid_search", AggregateJson(r.grid)},
                   {"grid_search_early_stopping", AggregateJson(r.grid_early_stop)}});
  }
  return out;
}

json DriftJson(const std::vector<DriftRow>& rows) {
  json out = json::array();
  for (const DriftRow& r : rows) {
    json factors = json::array();
    for (std::size_t i = 0; i < r.drifted.batch_sizes.size(); ++i) {
      factors.push_back({{"batch_size", r.drifted.batch_sizes[i]}, {"factor", r.drifted.factors[i]}});
    }
    json variants = json::array();
    for (int w = 0; w < 2; ++w) {
      json runs = json::array();
      for (const simulator::DriftSummary& s : r.summaries[w]) runs.push_back(DriftSummaryJson(s));
      json stuck = json::array();
      for (const std::string& f : r.failures[w]) stuck.push_back(f);
      variants.push_back({{"window", w == 0 ? 0 : r.window},
                          {"regret_before", MeanOf(r.summaries[w], &simulator::DriftSummary::regret_before)},
                          {"regret_after", MeanOf(r.summaries[w], &simulator::DriftSummary::regret_after)},
                          {"last_n_regret", MeanOf(r.summaries[w], &simulator::DriftSummary::last_n_regret)},
                          {"runs", runs},
                          {"stuck", stuck}});
    }
    out.push_back({{"gpu", r.job->gpu},
                   {"workload", r.job->workload.name()},
                   {"shift_after", r.shift_after},
                   {"recurrences", r.recurrences},
                   {"factors", factors},
                   {"oracle_before", ConfigJson(r.before.oracle)},
                   {"oracle_after", ConfigJson(r.after.oracle)},
                   {"variants", variants}});
  }
  return out;
}

std::string ExperimentsHtml(const Experiments& e) {
  std::string html;
  if (!e.potential.empty()) {
    html +=
        "<section id=\"potential\">\n<h2>Potential savings (paper Figure 1)</h2>\n<p>Energy to reach the target "
        "saved against Default (b0 at its maximum limit), from the traces' expected energies.</p>\n<table>\n"
        "<tr><th>GPU</th><th>workload</th><th>Default</th><th>best (b, p)</th><th>best p at b0</th>"
        "<th>best b at max p</th></tr>\n";
    for (const PotentialRow& r : e.potential) {
      const simulator::PotentialSavings& p = r.savings;
      html += fmt::format(
          "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.1f}% ({})</td><td>{:.1f}% ({})</td>"
          "<td>{:.1f}% ({})</td></tr>\n",
          Escape(r.job->gpu), Escape(r.job->workload.name()), Cfg(p.default_config), p.best_pct, Cfg(p.best),
          p.power_limit_pct, Cfg(p.best_power_limit), p.batch_size_pct, Cfg(p.best_batch_size));
    }
    html += "</table>\n</section>\n";
  }
  if (e.sensitivity) {
    const Sensitivity& s = *e.sensitivity;
    const bool eta = s.knob == "eta";
    html += fmt::format("<section id=\"sensitivity\">\n<h2>Sensitivity to {}</h2>\n<p>{}</p>\n<table>\n<tr>"
                        "<th>GPU</th><th>workload</th>",
                        s.knob,
                        eta ? "Energy savings % / time change % against Default over the last 10 recurrences."
                            : "Cumulative regret in oracle jobs; inf: no early stopping.");
    for (double v : s.values) html += fmt::format("<th>{}={}</th>", s.knob, ValueName(v));
    html += "</tr>\n";
    std::vector<std::string> gpus;
    for (std::size_t j = 0; j < s.jobs.size(); ++j) {
      html += fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{}</td>", Escape(s.jobs[j]->gpu),
                          Escape(s.jobs[j]->workload.name()));
      for (const JobAggregate& a : s.aggregates[j]) {
        html += eta ? fmt::format("<td>{:.1f} / {:+.1f}</td>", a.savings_last_n_pct, a.time_change_last_n_pct)
                    : fmt::format("<td>{:.1f}</td>", a.regret_oracle_jobs);
      }
      html += "</tr>\n";
      if (std::find(gpus.begin(), gpus.end(), s.jobs[j]->gpu) == gpus.end()) gpus.push_back(s.jobs[j]->gpu);
    }
    html += "</table>\n<div class=\"plots\">\n";
    for (const std::string& gpu : gpus) {
      Chart c;
      c.title = fmt::format("{} against {} on {}", eta ? "Energy savings, last 10" : "Regret", s.knob, gpu);
      c.x_label = s.knob;
      c.x_scale = AxisScale::kLinear;
      c.y_label = eta ? "energy savings (%)" : "regret (oracle jobs)";
      std::size_t color = 0;
      for (std::size_t j = 0; j < s.jobs.size(); ++j) {
        if (s.jobs[j]->gpu != gpu) continue;
        Series series;
        series.label = s.jobs[j]->workload.dataset;
        series.color = kColors[color++ % std::size(kColors)];
        series.markers = true;
        for (std::size_t v = 0; v < s.values.size(); ++v) {
          if (std::isinf(s.values[v])) continue;  // a chart axis has no infinity; the table has it
          const JobAggregate& a = s.aggregates[j][v];
          series.points.emplace_back(s.values[v], eta ? a.savings_last_n_pct : a.regret_oracle_jobs);
        }
        c.series.push_back(std::move(series));
      }
      html += RenderChart(c);
    }
    html += "</div>\n</section>\n";
  }
  if (!e.baselines.empty()) {
    html += fmt::format(
        "<section id=\"baselines\">\n<h2>Baselines: grid search</h2>\n<p>Cumulative regret in oracle jobs, mean "
        "over seeds. Grid search tries every (batch size, limit) once, then keeps the cheapest seen; without early "
        "stopping and with beta = {}.</p>\n<table>\n<tr><th>GPU</th><th>workload</th><th>R</th><th>Zeus</th>"
        "<th>Grid (no early stopping)</th><th>Grid (beta = {})</th></tr>\n",
        e.beta, e.beta);
    for (const BaselineRow& r : e.baselines) {
      html += fmt::format(
          "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}</td>"
          "<td>{:.1f}</td></tr>\n",
          Escape(r.job->gpu), Escape(r.job->workload.name()), r.recurrences, r.zeus.regret_oracle_jobs,
          r.grid.regret_oracle_jobs, r.grid_early_stop.regret_oracle_jobs);
    }
    html += "</table>\n</section>\n";
  }
  if (!e.drift.empty()) {
    html +=
        "<section id=\"drift\">\n<h2>Data drift</h2>\n<p>After the shift every batch size's epochs cost a seeded "
        "factor more or less (the Oracle's batch size before the shift the full magnitude). Thompson sampling "
        "without a window against one with a window of recent observations per arm. Regret in oracle jobs of each "
        "phase's Oracle, mean over seeds.</p>\n<table>\n<tr><th>GPU</th><th>workload</th><th>shift after</th>"
        "<th>R</th><th>window</th><th>regret before</th><th>regret after</th><th>last-10 regret per recurrence</th>"
        "<th>Oracle before / after</th><th>stuck runs</th></tr>\n";
    for (const DriftRow& r : e.drift) {
      for (int w = 0; w < 2; ++w) {
        const std::vector<simulator::DriftSummary>& s = r.summaries[w];
        html += fmt::format(
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td>"
            "<td>{:.1f}</td><td>{:.3f}</td><td>{} / {}</td><td>{}</td></tr>\n",
            Escape(r.job->gpu), Escape(r.job->workload.name()), r.shift_after, r.recurrences,
            w == 0 ? std::string("none") : std::to_string(r.window),
            MeanOf(s, &simulator::DriftSummary::regret_before), MeanOf(s, &simulator::DriftSummary::regret_after),
            MeanOf(s, &simulator::DriftSummary::last_n_regret), Cfg(r.before.oracle), Cfg(r.after.oracle),
            r.failures[w].size());
      }
    }
    html += "</table>\n<div class=\"plots\">\n";
    for (const DriftRow& r : e.drift) {
      Chart c;
      c.title = fmt::format("Regret per recurrence, {}", JobLabel(*r.job));
      c.x_label = "recurrence";
      c.x_scale = AxisScale::kLinear;
      c.y_label = "regret (oracle jobs)";
      for (int w = 0; w < 2; ++w) {
        Series series;
        series.label = w == 0 ? std::string("no window") : fmt::format("window {}", r.window);
        series.color = kColors[w];
        for (std::size_t i = 0; i < r.mean_regret[w].size(); ++i) {
          series.points.emplace_back(static_cast<double>(i + 1), r.mean_regret[w][i]);
        }
        c.series.push_back(std::move(series));
      }
      c.references.push_back({"Oracle", "#2ca02c", 0.0});
      html += RenderChart(c);
    }
    html += "</div>\n</section>\n";
  }
  return html;
}

}  // namespace zeus::cli::report
