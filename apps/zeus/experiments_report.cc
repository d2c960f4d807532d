// Copyright 2026 The Zeus C++ Authors.
//
// The paper's experiments as `zeus reproduce` prints and writes them: text
// tables, JSON and the report's sections (reproduce_experiments.h).

#include "apps/zeus/reproduce_experiments.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chart/svg_chart.h"

namespace zeus::cli::report {

using chart::XmlEscape;

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

}  // namespace

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

namespace {

std::string PotentialHtml(const std::vector<PotentialRow>& rows) {
  std::string html =
      "<section id=\"potential\">\n<h2>Potential savings (paper Figure 1)</h2>\n<p>Energy to reach the target "
      "saved against Default (b0 at its maximum limit), from the traces' expected energies.</p>\n<table>\n"
      "<tr><th>GPU</th><th>workload</th><th>Default</th><th>best (b, p)</th><th>best p at b0</th>"
      "<th>best b at max p</th></tr>\n";
  for (const PotentialRow& r : rows) {
    const simulator::PotentialSavings& p = r.savings;
    html += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.1f}% ({})</td><td>{:.1f}% ({})</td>"
        "<td>{:.1f}% ({})</td></tr>\n",
        XmlEscape(r.job->gpu), XmlEscape(r.job->workload.name()), Cfg(p.default_config), p.best_pct, Cfg(p.best),
        p.power_limit_pct, Cfg(p.best_power_limit), p.batch_size_pct, Cfg(p.best_batch_size));
  }
  return html + "</table>\n</section>\n";
}

// Savings (a sweep of eta) or regret (of beta) against the knob, a line per
// workload on `gpu`; infinite values (beta = inf) are in the table only.
chart::Chart SensitivityChart(const Sensitivity& s, const std::string& gpu) {
  const bool eta = s.knob == "eta";
  chart::Chart c;
  c.title = fmt::format("{} against {} on {}", eta ? "Energy savings, last 10" : "Regret", s.knob, gpu);
  c.x_label = s.knob;
  c.x_scale = chart::AxisScale::kLinear;
  c.y_label = eta ? "energy savings (%)" : "regret (oracle jobs)";
  std::size_t color = 0;
  for (std::size_t j = 0; j < s.jobs.size(); ++j) {
    if (s.jobs[j]->gpu != gpu) continue;
    chart::Series series;
    series.label = s.jobs[j]->workload.dataset;
    series.color = kColors[color++ % std::size(kColors)];
    series.markers = true;
    for (std::size_t v = 0; v < s.values.size(); ++v) {
      if (std::isinf(s.values[v])) continue;
      const JobAggregate& a = s.aggregates[j][v];
      series.points.emplace_back(s.values[v], eta ? a.savings_last_n_pct : a.regret_oracle_jobs);
    }
    c.series.push_back(std::move(series));
  }
  return c;
}

std::string SensitivityHtml(const Sensitivity& s) {
  const bool eta = s.knob == "eta";
  std::string html = fmt::format("<section id=\"sensitivity\">\n<h2>Sensitivity to {}</h2>\n<p>{}</p>\n<table>\n<tr>"
                                 "<th>GPU</th><th>workload</th>",
                                 s.knob,
                                 eta ? "Energy savings % / time change % against Default over the last 10 recurrences."
                                     : "Cumulative regret in oracle jobs; inf: no early stopping.");
  for (double v : s.values) html += fmt::format("<th>{}={}</th>", s.knob, ValueName(v));
  html += "</tr>\n";
  std::vector<std::string> gpus;
  for (std::size_t j = 0; j < s.jobs.size(); ++j) {
    html += fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{}</td>", XmlEscape(s.jobs[j]->gpu),
                        XmlEscape(s.jobs[j]->workload.name()));
    for (const JobAggregate& a : s.aggregates[j]) {
      html += eta ? fmt::format("<td>{:.1f} / {:+.1f}</td>", a.savings_last_n_pct, a.time_change_last_n_pct)
                  : fmt::format("<td>{:.1f}</td>", a.regret_oracle_jobs);
    }
    html += "</tr>\n";
    if (std::find(gpus.begin(), gpus.end(), s.jobs[j]->gpu) == gpus.end()) gpus.push_back(s.jobs[j]->gpu);
  }
  html += "</table>\n<div class=\"plots\">\n";
  for (const std::string& gpu : gpus) html += chart::RenderChart(SensitivityChart(s, gpu));
  return html + "</div>\n</section>\n";
}

std::string BaselinesHtml(const std::vector<BaselineRow>& rows, double beta) {
  std::string html = fmt::format(
      "<section id=\"baselines\">\n<h2>Baselines: grid search</h2>\n<p>Cumulative regret in oracle jobs, mean "
      "over seeds. Grid search tries every (batch size, limit) once, then keeps the cheapest seen; without early "
      "stopping and with beta = {}.</p>\n<table>\n<tr><th>GPU</th><th>workload</th><th>R</th><th>Zeus</th>"
      "<th>Grid (no early stopping)</th><th>Grid (beta = {})</th></tr>\n",
      beta, beta);
  for (const BaselineRow& r : rows) {
    html += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}</td>"
        "<td>{:.1f}</td></tr>\n",
        XmlEscape(r.job->gpu), XmlEscape(r.job->workload.name()), r.recurrences, r.zeus.regret_oracle_jobs,
        r.grid.regret_oracle_jobs, r.grid_early_stop.regret_oracle_jobs);
  }
  return html + "</table>\n</section>\n";
}

// A drifting job's mean regret per recurrence, without and with the window.
chart::Chart DriftChart(const DriftRow& r) {
  chart::Chart c;
  c.title = fmt::format("Regret per recurrence, {}", JobLabel(*r.job));
  c.x_label = "recurrence";
  c.x_scale = chart::AxisScale::kLinear;
  c.y_label = "regret (oracle jobs)";
  for (int w = 0; w < 2; ++w) {
    chart::Series series;
    series.label = w == 0 ? std::string("no window") : fmt::format("window {}", r.window);
    series.color = kColors[w];
    for (std::size_t i = 0; i < r.mean_regret[w].size(); ++i) {
      series.points.emplace_back(static_cast<double>(i + 1), r.mean_regret[w][i]);
    }
    c.series.push_back(std::move(series));
  }
  c.references.push_back({"Oracle", "#2ca02c", 0.0});
  return c;
}

std::string DriftHtml(const std::vector<DriftRow>& rows) {
  std::string html =
      "<section id=\"drift\">\n<h2>Data drift</h2>\n<p>After the shift every batch size's epochs cost a seeded "
      "factor more or less (the Oracle's batch size before the shift the full magnitude). Thompson sampling "
      "without a window against one with a window of recent observations per arm. Regret in oracle jobs of each "
      "phase's Oracle, mean over seeds.</p>\n<table>\n<tr><th>GPU</th><th>workload</th><th>shift after</th>"
      "<th>R</th><th>window</th><th>regret before</th><th>regret after</th><th>last-10 regret per recurrence</th>"
      "<th>Oracle before / after</th><th>stuck runs</th></tr>\n";
  for (const DriftRow& r : rows) {
    for (int w = 0; w < 2; ++w) {
      const std::vector<simulator::DriftSummary>& s = r.summaries[w];
      html += fmt::format(
          "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td>"
          "<td>{:.1f}</td><td>{:.3f}</td><td>{} / {}</td><td>{}</td></tr>\n",
          XmlEscape(r.job->gpu), XmlEscape(r.job->workload.name()), r.shift_after, r.recurrences,
          w == 0 ? std::string("none") : std::to_string(r.window), MeanOf(s, &simulator::DriftSummary::regret_before),
          MeanOf(s, &simulator::DriftSummary::regret_after), MeanOf(s, &simulator::DriftSummary::last_n_regret),
          Cfg(r.before.oracle), Cfg(r.after.oracle), r.failures[w].size());
    }
  }
  html += "</table>\n<div class=\"plots\">\n";
  for (const DriftRow& r : rows) html += chart::RenderChart(DriftChart(r));
  return html + "</div>\n</section>\n";
}

}  // namespace

std::string ExperimentsHtml(const Experiments& e) {
  std::string html;
  if (!e.potential.empty()) html += PotentialHtml(e.potential);
  if (e.sensitivity) html += SensitivityHtml(*e.sensitivity);
  if (!e.baselines.empty()) html += BaselinesHtml(e.baselines, e.beta);
  if (!e.drift.empty()) html += DriftHtml(e.drift);
  return html;
}

}  // namespace zeus::cli::report
