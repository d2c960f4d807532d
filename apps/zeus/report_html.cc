// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/report_html.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "apps/zeus/reproduce_experiments.h"
#include "chart/svg_chart.h"

namespace zeus::cli::report {

using chart::XmlEscape;

namespace {

const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

// Line styles for per-seed lines: seed k gets kPalette[k % 10] and kSeedDashes[k % 6], so the first 30 seeds
// differ in colour or dash pattern (lcm(10, 6) = 30) and overlapping lines stay apart.
const char* const kSeedDashes[] = {"", "7,3", "2,2", "9,3,2,3", "4,4", "1,3"};

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Sample standard deviation (n - 1), 0 for fewer than two values.
double Sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = Mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

std::string Config(int bs, double pl) { return fmt::format("{}@{}", bs, pl); }

chart::Series ScatterSeries(const std::string& label, const std::string& color) {
  chart::Series s;
  s.label = label;
  s.color = color;
  s.line = false;
  s.markers = true;
  s.opacity = 0.7;
  return s;
}

}  // namespace

chart::Series SeedSeries(std::size_t k, std::uint64_t seed) {
  chart::Series s;
  s.label = fmt::format("seed {}", seed);
  s.color = kPalette[k % std::size(kPalette)];
  s.dash = kSeedDashes[k % std::size(kSeedDashes)];
  s.stroke_width = 1.2;
  s.opacity = 0.75;
  return s;
}

chart::Chart CostChart(const JobRuns& r) {
  chart::Chart c;
  c.title = "Cost per recurrence (mean over seeds)";
  c.x_label = "recurrence";
  c.x_scale = chart::AxisScale::kLinear;  // an index: equal steps read best
  c.y_label = "cost (J-equivalent)";
  chart::Series s;
  s.label = "Zeus";
  s.color = kPalette[0];
  const std::size_t n = r.results.front().recurrences.size();
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (const simulator::SimulationResult& res : r.results) sum += res.recurrences[i].cost;
    s.points.emplace_back(static_cast<double>(i + 1), sum / static_cast<double>(r.results.size()));
  }
  c.series.push_back(std::move(s));
  c.references.push_back({"Default", "#7f7f7f", r.baselines.default_config.cost});
  c.references.push_back({"Oracle", "#2ca02c", r.baselines.oracle.cost});
  return c;
}

chart::Chart BatchSizeChart(const JobRuns& r) {
  chart::Chart c;
  c.title = "Batch size chosen (final try of each recurrence)";
  c.x_label = "recurrence";
  c.x_scale = chart::AxisScale::kLinear;  // an index: equal steps read best
  c.y_label = "batch size";
  c.y_scale = chart::AxisScale::kLog2;
  for (std::size_t k = 0; k < r.results.size(); ++k) {
    chart::Series s = SeedSeries(k, r.seeds[k]);
    for (const simulator::RecurrenceRecord& rec : r.results[k].recurrences) {
      s.points.emplace_back(rec.recurrence, rec.batch_size);
    }
    c.series.push_back(std::move(s));
  }
  c.references.push_back({"Oracle", "#2ca02c", static_cast<double>(r.baselines.oracle.batch_size)});
  return c;
}

chart::Chart ParetoChart(const JobRuns& r, const JobAggregate& a) {
  chart::Chart c;
  c.title = "Energy vs time of every configuration (expected)";
  c.x_label = "time to target (s)";
  c.y_label = "energy to target (J)";
  chart::Series sure = ScatterSeries("reaches always", "#1f77b4");
  chart::Series unsure = ScatterSeries("sometimes misses", "#b0b0b0");
  std::vector<std::pair<double, double>> candidates;
  for (const simulator::ConfigExpectation& cfg : r.configs) {
    if (cfg.reach_fraction == 1.0) {
      sure.points.emplace_back(cfg.time_s, cfg.energy_j);
      candidates.emplace_back(cfg.time_s, cfg.energy_j);
    } else {
      unsure.points.emplace_back(cfg.time_s, cfg.energy_j);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  chart::Series front;
  front.label = "Pareto front";
  front.color = "#ff7f0e";
  double best_energy = std::numeric_limits<double>::infinity();
  for (const auto& [t, e] : candidates) {
    if (e < best_energy) {
      front.points.emplace_back(t, e);
      best_energy = e;
    }
  }
  c.series.push_back(std::move(unsure));
  c.series.push_back(std::move(sure));
  c.series.push_back(std::move(front));
  const simulator::ConfigExpectation& d = r.baselines.default_config;
  const simulator::ConfigExpectation& o = r.baselines.oracle;
  c.marks.push_back({"Default " + Config(d.batch_size, d.power_limit_w), "#555555", d.time_s, d.energy_j,
                     chart::MarkerShape::kSquare});
  c.marks.push_back({"Oracle " + Config(o.batch_size, o.power_limit_w), "#2ca02c", o.time_s, o.energy_j,
                     chart::MarkerShape::kStar});
  for (const simulator::ConfigExpectation& cfg : r.configs) {
    if (cfg.batch_size == a.mode_batch_size && cfg.power_limit_w == a.mode_power_limit_w) {
      c.marks.push_back({"Zeus chose " + Config(cfg.batch_size, cfg.power_limit_w), "#d62728", cfg.time_s,
                         cfg.energy_j, chart::MarkerShape::kRing});
    }
  }
  return c;
}

JobAggregate Aggregate(const JobRuns& runs) {
  JobAggregate a;
  std::vector<double> save_last, time_last, save_all, time_all, regret, oracle;
  std::map<std::pair<int, double>, int> modes;
  std::vector<std::pair<int, double>> order;
  for (const simulator::RunSummary& s : runs.summaries) {
    save_last.push_back(s.savings_last_n_pct);
    time_last.push_back(s.time_change_last_n_pct);
    save_all.push_back(s.savings_all_pct);
    time_all.push_back(s.time_change_all_pct);
    regret.push_back(s.cum_regret_over_oracle_cost);
    oracle.push_back(s.last_n_oracle_fraction);
    const std::pair<int, double> cfg{s.last_n_mode_batch_size, s.last_n_mode_power_limit_w};
    if (modes[cfg]++ == 0) order.push_back(cfg);
  }
  a.savings_last_n_pct = Mean(save_last);
  a.savings_last_n_sd = Sd(save_last);
  a.time_change_last_n_pct = Mean(time_last);
  a.savings_all_pct = Mean(save_all);
  a.savings_all_sd = Sd(save_all);
  a.time_change_all_pct = Mean(time_all);
  a.regret_oracle_jobs = Mean(regret);
  a.regret_oracle_jobs_sd = Sd(regret);
  a.oracle_fraction = Mean(oracle);
  int best = 0;
  for (const auto& cfg : order) {
    if (modes[cfg] > best) {
      best = modes[cfg];
      a.mode_batch_size = cfg.first;
      a.mode_power_limit_w = cfg.second;
    }
  }
  return a;
}

std::string RunsCsv(const std::vector<JobRuns>& jobs) {
  std::string out =
      "gpu,workload,seed,recurrences,tries,failed_runs,first_ts_recurrence,total_energy_j,total_time_s,total_cost,"
      "default_batch_size,default_power_limit_w,default_energy_j,default_time_s,default_cost,oracle_batch_size,"
      "oracle_power_limit_w,oracle_energy_j,oracle_time_s,oracle_cost,savings_all_pct,time_change_all_pct,last_n,"
      "savings_last_n_pct,time_change_last_n_pct,last_n_mode_batch_size,last_n_mode_power_limit_w,"
      "last_n_oracle_fraction,cum_regret,cum_regret_over_oracle_cost\n";
  for (const JobRuns& r : jobs) {
    const simulator::ConfigExpectation& d = r.baselines.default_config;
    const simulator::ConfigExpectation& o = r.baselines.oracle;
    for (std::size_t k = 0; k < r.summaries.size(); ++k) {
      const simulator::RunSummary& s = r.summaries[k];
      fmt::format_to(std::back_inserter(out),
                     "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                     r.job->gpu, r.job->workload.name(), r.seeds[k], s.num_recurrences, s.num_tries, s.num_failed_runs,
                     s.first_ts_recurrence, s.total_energy_j, s.total_time_s, s.total_cost, d.batch_size,
                     d.power_limit_w, d.energy_j, d.time_s, d.cost, o.batch_size, o.power_limit_w, o.energy_j, o.time_s,
                     o.cost, s.savings_all_pct, s.time_change_all_pct, s.last_n, s.savings_last_n_pct,
                     s.time_change_last_n_pct, s.last_n_mode_batch_size, s.last_n_mode_power_limit_w,
                     s.last_n_oracle_fraction, s.cum_regret, s.cum_regret_over_oracle_cost);
    }
  }
  return out;
}

std::string ReportHtml(const std::vector<JobRuns>& jobs, const ReportSettings& settings) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>Zeus trace-driven reproduction</title>\n<style>\n"
      "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}"
      "td.l{text-align:left}section{margin-top:2em}.plots{display:flex;flex-wrap:wrap;gap:8px}\n"
      "</style>\n</head>\n<body>\n<h1>Zeus: trace-driven reproduction</h1>\n";
  std::size_t runs = 0;
  for (const JobRuns& r : jobs) runs += r.summaries.size();
  html += fmt::format(
      "<p>{} simulated runs of recurring training jobs on the traces in <code>{}</code>, with eta = {} (energy-time "
      "weight) and beta = {} (early stopping). Savings and time change are against the Default configuration "
      "(the default batch size at the maximum power limit); regret is against the Oracle (the best configuration "
      "in hindsight), in oracle jobs' worth of cost. Means &plusmn; standard deviations over the seeds.</p>\n",
      runs, XmlEscape(settings.trace_dir), settings.eta, settings.beta);
  html +=
      "<table>\n<tr><th>GPU</th><th>workload</th><th>seeds</th><th>R</th><th>energy savings, last 10</th>"
      "<th>time change, last 10</th><th>energy savings, all</th><th>time change, all</th><th>regret (oracle jobs)</th>"
      "<th>Zeus's config (last 10)</th><th>Oracle</th><th>Default</th></tr>\n";
  for (const JobRuns& r : jobs) {
    const JobAggregate a = Aggregate(r);
    html += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\"><a href=\"#{}-{}\">{}</a></td><td>{}</td><td>{}</td>"
        "<td>{:.2f}% &plusmn; {:.2f}</td><td>{:+.2f}%</td><td>{:.2f}% &plusmn; {:.2f}</td><td>{:+.2f}%</td>"
        "<td>{:.2f} &plusmn; {:.2f}</td><td>{} ({:.0f}% at oracle)</td><td>{}</td><td>{}</td></tr>\n",
        XmlEscape(r.job->gpu), XmlEscape(r.job->gpu), XmlEscape(r.job->workload.dataset),
        XmlEscape(r.job->workload.name()),
        r.seeds.size(), r.summaries.front().num_recurrences, a.savings_last_n_pct, a.savings_last_n_sd,
        a.time_change_last_n_pct, a.savings_all_pct, a.savings_all_sd, a.time_change_all_pct, a.regret_oracle_jobs,
        a.regret_oracle_jobs_sd, Config(a.mode_batch_size, a.mode_power_limit_w), 100 * a.oracle_fraction,
        Config(r.baselines.oracle.batch_size, r.baselines.oracle.power_limit_w),
        Config(r.baselines.default_config.batch_size, r.baselines.default_config.power_limit_w));
  }
  html += "</table>\n<p>Per-run numbers: <a href=\"runs.csv\">runs.csv</a>.</p>\n";
  if (settings.experiments != nullptr) html += ExperimentsHtml(*settings.experiments);
  for (const JobRuns& r : jobs) {
    const JobAggregate a = Aggregate(r);
    html += fmt::format("<section id=\"{}-{}\">\n<h2>{} on {}</h2>\n", XmlEscape(r.job->gpu),
                        XmlEscape(r.job->workload.dataset), XmlEscape(r.job->workload.name()),
                        XmlEscape(r.job->gpu));
    html += fmt::format(
        "<p>Target {} within {} epochs ({}); batch sizes {}; power limits {} W; {} recurrences per run.</p>\n",
        r.job->workload.target_metric, r.job->workload.max_epochs, XmlEscape(r.job->workload.optimizer),
        fmt::join(r.job->batch_sizes, " "), fmt::join(r.job->power_limits_w, " "),
        r.summaries.front().num_recurrences);
    html += "<div class=\"plots\">\n" + chart::RenderChart(CostChart(r)) + chart::RenderChart(BatchSizeChart(r)) +
            chart::RenderChart(ParetoChart(r, a)) + "</div>\n</section>\n";
  }
  html += "</body>\n</html>\n";
  return html;
}

namespace {

// Replaces `path`'s contents with `text`. A failure, at open, write or close,
// is kIoError (exit 1, the run is over) naming the path and the errno text.
Status WriteWholeFile(const std::string& path, std::string_view text) {
  auto failure = [&path](std::string_view what, int errno_value) {
    return Fail(Error(ErrorCode::kIoError,
                      fmt::format("cannot {} the report file {}: {}", what, path, std::strerror(errno_value)),
                      NativeSpace::kErrno, errno_value));
  };
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return failure("create", errno);
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      return failure("write", saved);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) return failure("write", errno);
  return OkStatus();
}

}  // namespace

Status WriteReport(const std::string& dir, const std::vector<JobRuns>& jobs, const ReportSettings& settings) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Fail(ErrorFromErrno(ec.value(), dir));
  const std::pair<std::string, std::string> files[] = {{dir + "/index.html", ReportHtml(jobs, settings)},
                                                       {dir + "/runs.csv", RunsCsv(jobs)}};
  for (const auto& [path, text] : files) {
    if (Status s = WriteWholeFile(path, text); !s) return s;
  }
  return OkStatus();
}

}  // namespace zeus::cli::report
