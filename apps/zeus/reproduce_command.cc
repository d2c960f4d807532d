// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/reproduce_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/zeus/cli_flags.h"
#include "apps/zeus/report_html.h"
#include "apps/zeus/reproduce_experiments.h"
#include "apps/zeus/simulate_command.h"
#include "zeus/simulator/experiments.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/metrics.h"
#include "zeus/simulator/output.h"
#include "zeus/simulator/simulator.h"
#include "zeus/simulator/trace.h"

namespace zeus::cli {
namespace {

using json = nlohmann::json;
using report::JobRuns;
using Clock = std::chrono::steady_clock;

// Caps, so that a typo cannot run for hours or exhaust memory. Every run's
// tries are kept for the table and the report: about 30 KB per run at the
// traces' default recurrences, so kMaxRuns runs stay near 600 MB (and
// simulate in seconds); the six workloads on the two traced GPUs with
// kMaxSeeds seeds are 12,000 runs. Threads beyond the cores do not help, and
// each costs a stack.
constexpr std::size_t kMaxSeeds = 1'000;
constexpr std::size_t kMaxRuns = 20'000;
constexpr int kMaxJobs = 1024;

struct ReproduceFlags {
  std::string trace_dir;
  std::optional<std::string> gpus;  // not given: every GPU with a power trace
  std::string workloads = "all";
  std::string seeds = "1-5";
  std::string report_dir = "zeus-report";
  bool no_report = false;
  std::string eta = "0.5";  // a list: sensitivity
  std::string beta = "2";   // a list: sensitivity; inf: no early stopping
  std::string policy = "zeus";  // zeus or zeus-robust
  int jobs = 0;  // 0: one per core
  bool as_json = false;
  bool potential = false;
  bool baselines = false;
  bool drift = false;
  int drift_after = 0;  // 0: the job's default recurrences
  double drift_magnitude = 1.5;
  int drift_window = 10;
  std::uint64_t drift_seed = 1;
};

// A comma-separated list of `flag` ("a, b,c"); an empty list or item is an
// error, and so is an item given twice.
Result<std::vector<std::string>> SplitList(std::string_view flag, const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  for (char c : s + ",") {
    if (c == ',') {
      if (item.empty()) {
        return Fail(ErrorCode::kInvalidArgument,
                    s.find_first_not_of(" ,") == std::string::npos
                        ? fmt::format("{} is empty; name at least one, or leave the flag out for the default", flag)
                        : fmt::format("{} '{}' has an empty item", flag, s));
      }
      if (std::find(out.begin(), out.end(), item) != out.end()) {
        return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: '{}' is given twice", flag, item));
      }
      out.push_back(item);
      item.clear();
    } else if (c != ' ') {
      item += c;
    }
  }
  return out;
}

// One seed: decimal digits, 0 to 2^64-1.
std::optional<std::uint64_t> ParseSeed(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

// "1-5", "1,3,7", "2-4,9"; at most kMaxSeeds seeds, none twice.
Result<std::vector<std::uint64_t>> ParseSeeds(const std::string& spec) {
  Result<std::vector<std::string>> parts = SplitList("--seeds", spec);
  if (!parts) return Fail(parts.error());
  std::vector<std::uint64_t> seeds;
  std::set<std::uint64_t> seen;
  for (const std::string& part : *parts) {
    const std::size_t dash = part.find('-');
    const std::optional<std::uint64_t> lo = ParseSeed(part.substr(0, dash));
    const std::optional<std::uint64_t> hi = dash == std::string::npos ? lo : ParseSeed(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--seeds: '{}' is not a seed (0 to 18446744073709551615) or a range LOW-HIGH such as "
                              "1-5; lists look like 1,3,7",
                              part));
    }
    if (*hi - *lo >= kMaxSeeds - seeds.size()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--seeds '{}': at most {} seeds per run of reproduce", spec, kMaxSeeds));
    }
    for (std::uint64_t s = *lo;; ++s) {
      if (!seen.insert(s).second) {
        return Fail(ErrorCode::kInvalidArgument, fmt::format("--seeds '{}': seed {} is given twice", spec, s));
      }
      seeds.push_back(s);
      if (s == *hi) break;
    }
  }
  return seeds;
}

// Progress on stderr: a rewritten line on a terminal, a few lines otherwise.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO) != 0) {}
  void Done(const std::string& what) {
    const std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    if (tty_) {
      fmt::print(stderr, "\r\033[Kreproduce: {}/{} runs ({})", done_, total_, what);
      if (done_ == total_) fmt::print(stderr, "\n");
    } else if (done_ * 4 / total_ != (done_ - 1) * 4 / total_) {
      fmt::print(stderr, "reproduce: {}/{} runs done\n", done_, total_);
    }
    std::fflush(stderr);
  }

 private:
  std::mutex mu_;
  std::size_t done_ = 0;
  std::size_t total_;
  bool tty_;
};

void PrintTable(const std::vector<JobRuns>& jobs) {
  fmt::print("{:<5} {:<31} {:>4} {:>17} {:>9} {:>17} {:>9} {:>13} {:>9} {:>9}\n", "GPU", "workload", "R",
             "savings (last 10)", "time", "savings (all)", "time", "regret", "Zeus", "Oracle");
  for (const JobRuns& r : jobs) {
    const report::JobAggregate a = report::Aggregate(r);
    fmt::print("{:<5} {:<31} {:>4} {:>10.2f}% ±{:>4.2f} {:>+8.2f}% {:>10.2f}% ±{:>4.2f} {:>+8.2f}% {:>7.2f} ±{:>4.2f} {:>9} {:>9}\n",
               r.job->gpu, r.job->workload.name(), r.summaries.front().num_recurrences, a.savings_last_n_pct,
               a.savings_last_n_sd, a.time_change_last_n_pct, a.savings_all_pct, a.savings_all_sd,
               a.time_change_all_pct, a.regret_oracle_jobs, a.regret_oracle_jobs_sd,
               fmt::format("{}@{}", a.mode_batch_size, a.mode_power_limit_w),
               fmt::format("{}@{}", r.baselines.oracle.batch_size, r.baselines.oracle.power_limit_w));
  }
  fmt::print(
      "\nSavings and time change: energy and time against Default (the default batch size at the maximum power\n"
      "limit), over the last 10 recurrences and over all R. Regret: cumulative cost above the Oracle (the best\n"
      "configuration in hindsight), in oracle jobs. Mean ± sd over seeds; Zeus = its most common last-10 choice.\n");
}

void PrintJson(const std::vector<JobRuns>& jobs, const report::Experiments& e) {
  json out = json::array();
  for (const JobRuns& r : jobs) {
    const report::JobAggregate a = report::Aggregate(r);
    json runs = json::array();
    for (std::size_t k = 0; k < r.summaries.size(); ++k) {
      const simulator::RunSummary& s = r.summaries[k];
      runs.push_back({{"seed", r.seeds[k]},
                      {"savings_all_pct", s.savings_all_pct},
                      {"time_change_all_pct", s.time_change_all_pct},
                      {"savings_last_n_pct", s.savings_last_n_pct},
                      {"time_change_last_n_pct", s.time_change_last_n_pct},
                      {"cum_regret", s.cum_regret},
                      {"cum_regret_over_oracle_cost", s.cum_regret_over_oracle_cost},
                      {"last_n_mode_batch_size", s.last_n_mode_batch_size},
                      {"last_n_mode_power_limit_w", s.last_n_mode_power_limit_w}});
    }
    out.push_back({{"gpu", r.job->gpu},
                   {"workload", r.job->workload.name()},
                   {"recurrences", r.summaries.front().num_recurrences},
                   {"default", {{"batch_size", r.baselines.default_config.batch_size},
                                {"power_limit_w", r.baselines.default_config.power_limit_w},
                                {"energy_j", r.baselines.default_config.energy_j},
                                {"time_s", r.baselines.default_config.time_s}}},
                   {"oracle", {{"batch_size", r.baselines.oracle.batch_size},
                               {"power_limit_w", r.baselines.oracle.power_limit_w},
                               {"cost", r.baselines.oracle.cost}}},
                   {"savings_last_n_pct", a.savings_last_n_pct},
                   {"time_change_last_n_pct", a.time_change_last_n_pct},
                   {"savings_all_pct", a.savings_all_pct},
                   {"time_change_all_pct", a.time_change_all_pct},
                   {"regret_oracle_jobs", a.regret_oracle_jobs},
                   {"runs", runs}});
  }
  if (e.sensitivity || !e.baselines.empty() || !e.drift.empty()) {
    // With experiments: an object, the main runs under "jobs".
    json all = {{"jobs", std::move(out)}};
    if (e.sensitivity) all["sensitivity"] = report::SensitivityJson(*e.sensitivity);
    if (!e.baselines.empty()) all["baselines"] = report::BaselinesJson(e.baselines, e.beta);
    if (!e.drift.empty()) all["drift"] = report::DriftJson(e.drift);
    out = std::move(all);
  }
  fmt::print("{}\n", out.dump(2));
}

// `--potential`: no simulation, the table (or JSON) of every job's potential savings.
int PrintPotential(const std::vector<JobRuns>& jobs, bool as_json) {
  std::vector<report::PotentialRow> rows;
  for (const JobRuns& r : jobs) {
    Result<simulator::PotentialSavings> p = simulator::ComputePotentialSavings(*r.job);
    if (!p) return Failure(p.error());
    rows.push_back({r.job, *p});
  }
  fmt::print("{}", as_json ? report::PotentialJson(rows).dump(2) + "\n" : report::PotentialTable(rows));
  return 0;
}

void PrintExperiments(const report::Experiments& e) {
  if (e.sensitivity) {
    fmt::print("\nSensitivity to {}:\n{}", e.sensitivity->knob, report::SensitivityTable(*e.sensitivity));
  }
  if (!e.baselines.empty()) fmt::print("\nBaselines:\n{}", report::BaselinesTable(e.baselines, e.beta));
  if (!e.drift.empty()) fmt::print("\nData drift:\n{}", report::DriftTable(e.drift));
}

// What the flags ask for, checked, with the traces' directory and GPUs.
struct ReproducePlan {
  std::vector<std::uint64_t> seeds;
  std::vector<double> etas;   // the main runs use the first value;
  std::vector<double> betas;  // more than one value: a sensitivity table
  std::vector<std::string> gpus;
  std::vector<simulator::WorkloadSpec> workloads;
  std::string trace_dir;
  simulator::Policy policy = simulator::Policy::kZeus;
};

// "all", or the named workloads, none twice.
Result<std::vector<simulator::WorkloadSpec>> ParseWorkloads(const std::string& text) {
  if (text == "all") {
    return std::vector<simulator::WorkloadSpec>(simulator::BuiltinWorkloads().begin(),
                                                simulator::BuiltinWorkloads().end());
  }
  Result<std::vector<std::string>> names = SplitList("--workloads", text);
  if (!names) return Fail(names.error());
  std::vector<simulator::WorkloadSpec> workloads;
  for (const std::string& name : *names) {
    Result<simulator::WorkloadSpec> w = simulator::ResolveWorkload(name);
    if (!w) return Fail(w.error());
    for (const simulator::WorkloadSpec& earlier : workloads) {
      if (earlier.name() == w->name()) {
        return Fail(ErrorCode::kInvalidArgument, fmt::format("--workloads: '{}' names {} again", name, w->name()));
      }
    }
    workloads.push_back(*w);
  }
  return workloads;
}

// The flags' own checks, before any file is read.
Result<ReproducePlan> ParseFlags(const ReproduceFlags& f) {
  ReproducePlan plan;
  Result<std::vector<std::uint64_t>> seeds = ParseSeeds(f.seeds);
  if (!seeds) return Fail(seeds.error());
  plan.seeds = std::move(*seeds);
  Result<std::vector<double>> etas = ParseNumberList("--eta", f.eta, 0, 1, false);
  if (!etas) return Fail(etas.error());
  plan.etas = std::move(*etas);
  Result<std::vector<double>> betas =
      ParseNumberList("--beta", f.beta, 0, std::numeric_limits<double>::max(), /*allow_inf=*/true);
  if (!betas) return Fail(betas.error());
  plan.betas = std::move(*betas);
  if (plan.etas.size() > 1 && plan.betas.size() > 1) {
    return Fail(ErrorCode::kInvalidArgument,
                "give a list to --eta or to --beta, not both (one sensitivity table at a time)");
  }
  if (f.gpus) {
    Result<std::vector<std::string>> named = SplitList("--gpus", *f.gpus);
    if (!named) return Fail(named.error());
    plan.gpus = std::move(*named);
  }
  Result<std::vector<simulator::WorkloadSpec>> workloads = ParseWorkloads(f.workloads);
  if (!workloads) return Fail(workloads.error());
  plan.workloads = std::move(*workloads);
  plan.policy = f.policy == "zeus-robust" ? simulator::Policy::kZeusRobust : simulator::Policy::kZeus;
  return plan;
}

// The trace directory (and its GPUs when --gpus is not given), the cap on
// runs, and the report's directory, checked before the runs.
Status ResolveTraces(const ReproduceFlags& f, ReproducePlan& plan) {
  Result<std::string> dir = simulator::ResolveTraceDir(f.trace_dir);
  if (!dir) return Fail(dir.error());
  if (Status s = CheckInputDirectory(TraceDirSource(f.trace_dir), *dir); !s) return s;
  plan.trace_dir = *dir;
  if (!f.gpus) {
    Result<std::vector<std::string>> found = simulator::ListTraceGpus(*dir);
    if (!found) return Fail(found.error());
    if (found->empty()) return Fail(ErrorCode::kNotFound, fmt::format("{}: no summary_power_<gpu>.csv", *dir));
    plan.gpus = *found;
  }
  const std::size_t runs = plan.gpus.size() * plan.workloads.size() * plan.seeds.size();
  if (runs > kMaxRuns) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} GPUs x {} workloads x {} seeds = {} runs; at most {} in one reproduce (each run's "
                            "tries are kept for the report)",
                            plan.gpus.size(), plan.workloads.size(), plan.seeds.size(), runs, kMaxRuns));
  }
  if (!f.no_report && !f.potential) return PrepareOutputDirectory("--report", f.report_dir);
  return OkStatus();
}

// The job slices of every (GPU, workload), owned here and shared read-only
// by the workers, and a JobRuns per slice with its baselines and a slot per seed.
struct LoadedJobs {
  std::vector<std::unique_ptr<simulator::JobTrace>> slices;
  std::vector<JobRuns> runs;
};

// Loads each trace once.
Result<LoadedJobs> LoadJobs(const ReproducePlan& plan) {
  const double eta = plan.etas.front();
  Result<simulator::TrainTrace> train = simulator::LoadTrainTrace(simulator::TrainTracePath(plan.trace_dir));
  if (!train) return Fail(train.error());
  LoadedJobs jobs;
  for (const std::string& gpu : plan.gpus) {
    Result<simulator::PowerTrace> power =
        simulator::LoadPowerTrace(simulator::PowerTracePath(plan.trace_dir, gpu), gpu);
    if (!power) return Fail(power.error());
    for (const simulator::WorkloadSpec& w : plan.workloads) {
      Result<simulator::JobTrace> job = simulator::BuildJobTrace(*train, *power, w);
      if (!job) return Fail(job.error());
      Result<simulator::Baselines> baselines = simulator::ComputeBaselines(*job, eta);
      if (!baselines) return Fail(baselines.error().WithContext(fmt::format("{} on {}", w.name(), gpu)));
      jobs.slices.push_back(std::make_unique<simulator::JobTrace>(std::move(*job)));
      JobRuns runs;
      runs.job = jobs.slices.back().get();
      runs.baselines = *baselines;
      runs.configs = simulator::ExpectedConfigs(*runs.job, eta);
      runs.seeds = plan.seeds;
      runs.results.resize(plan.seeds.size());
      runs.summaries.resize(plan.seeds.size());
      jobs.runs.push_back(std::move(runs));
    }
  }
  return jobs;
}

// Simulates every (job, seed) with `options` (its seed set per run) on
// `threads` threads; results land in fixed slots, so the output does not
// depend on scheduling. The first failure in slot order is returned.
Status SimulateRuns(std::vector<JobRuns>& jobs, const simulator::SimulationOptions& options, unsigned threads) {
  const std::size_t seeds = jobs.front().seeds.size();
  const std::size_t total = jobs.size() * seeds;
  std::vector<std::optional<Error>> errors(total);
  Progress progress(total);
  ParallelFor(total, threads, [&](std::size_t task) {
    JobRuns& r = jobs[task / seeds];
    const std::size_t k = task % seeds;
    simulator::SimulationOptions o = options;
    o.seed = r.seeds[k];
    Result<simulator::SimulationResult> sim = simulator::Simulate(*r.job, o);
    if (sim) {
      r.summaries[k] = simulator::Summarize(*sim, r.baselines);
      r.results[k] = std::move(*sim);
    } else {
      errors[task] =
          sim.error().WithContext(fmt::format("{} on {}, seed {}", r.job->workload.name(), r.job->gpu, r.seeds[k]));
    }
    progress.Done(fmt::format("{} {} seed {}", r.job->gpu, r.job->workload.dataset, r.seeds[k]));
  });
  for (const std::optional<Error>& e : errors) {
    if (e) return Fail(*e);
  }
  return OkStatus();
}

report::ExperimentRequest ExperimentsAsked(const ReproduceFlags& f, const ReproducePlan& plan) {
  report::ExperimentRequest request;
  request.eta = plan.etas.front();
  request.beta = plan.betas.front();
  request.policy = plan.policy;
  request.etas = plan.etas;
  request.betas = plan.betas;
  request.baselines = f.baselines;
  request.drift = f.drift;
  request.drift_after = f.drift_after;
  request.drift_spec = {f.drift_magnitude, f.drift_seed};
  request.drift_window = f.drift_window;
  return request;
}

// The table (or JSON) on stdout, then the report.
int PrintResults(const ReproduceFlags& f, const ReproducePlan& plan, const std::vector<JobRuns>& jobs,
                 const report::Experiments& experiments) {
  if (f.as_json) {
    PrintJson(jobs, experiments);
  } else {
    PrintTable(jobs);
    PrintExperiments(experiments);
  }
  if (!f.no_report) {
    report::ReportSettings settings{plan.trace_dir, plan.etas.front(), plan.betas.front()};
    settings.experiments = &experiments;
    if (Status s = report::WriteReport(f.report_dir, jobs, settings); !s) return Failure(s.error());
    if (!f.as_json) fmt::print("\nReport: {}/index.html (plots) and {}/runs.csv\n", f.report_dir, f.report_dir);
  }
  return 0;
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

int RunReproduce(const ReproduceFlags& f) {
  const Clock::time_point start = Clock::now();
  Result<ReproducePlan> plan = ParseFlags(f);
  if (!plan) return Failure(plan.error());
  if (Status s = ResolveTraces(f, *plan); !s) return Failure(s.error());
  Result<LoadedJobs> loaded_jobs = LoadJobs(*plan);
  if (!loaded_jobs) return Failure(loaded_jobs.error());
  std::vector<JobRuns>& jobs = loaded_jobs->runs;
  const Clock::time_point loaded = Clock::now();
  if (f.potential) return PrintPotential(jobs, f.as_json);

  const std::size_t total = jobs.size() * plan->seeds.size();
  unsigned threads = f.jobs > 0 ? static_cast<unsigned>(f.jobs) : std::max(1U, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, total));
  simulator::SimulationOptions options;
  options.eta = plan->etas.front();
  options.beta = plan->betas.front();
  options.policy = plan->policy;
  if (Status s = SimulateRuns(jobs, options, threads); !s) return Failure(s.error());
  const Clock::time_point simulated = Clock::now();
  std::size_t recurrences = 0;
  for (const JobRuns& r : jobs) {
    for (const simulator::RunSummary& s : r.summaries) recurrences += static_cast<std::size_t>(s.num_recurrences);
  }
  fmt::print(stderr,
             "reproduce: {} runs ({} recurrences) simulated in {:.1f} ms on {} thread{}; traces loaded in {:.1f} ms\n",
             total, recurrences, Ms(simulated - loaded), threads, threads == 1 ? "" : "s", Ms(loaded - start));

  Result<report::Experiments> experiments =
      report::RunExperiments(ExperimentsAsked(f, *plan), jobs, plan->seeds, threads);
  if (!experiments) return Failure(experiments.error());
  const Clock::time_point experimented = Clock::now();
  if (experimented - simulated > std::chrono::milliseconds(1)) {
    fmt::print(stderr, "reproduce: experiments simulated in {:.1f} ms\n", Ms(experimented - simulated));
  }
  return PrintResults(f, *plan, jobs, *experiments);
}

}  // namespace

void RegisterReproduceCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("reproduce",
                                 "Run the Zeus paper's trace-driven evaluation: every workload x GPU x seed, in parallel");
  auto f = std::make_shared<ReproduceFlags>();
  cmd->add_option("--trace-dir", f->trace_dir,
                  "Directory with summary_train.csv and summary_power_<gpu>.csv "
                  "(default: $ZEUS_TRACE_DIR, else the Zeus NSDI '23 traces that zeus ships, share/zeus/traces/zeus-nsdi23)");
  cmd->add_option("--gpus", f->gpus,
                  "Comma-separated GPUs, none twice (default: every summary_power_<gpu>.csv in the directory)");
  cmd->add_option("--workloads", f->workloads, "'all' (the six built-in workloads) or a comma-separated list, none twice")
      ->capture_default_str();
  cmd->add_option("--seeds", f->seeds,
                  fmt::format("Seeds: ranges and lists such as 1-5 or 1,3,7; none twice, at most {}", kMaxSeeds))
      ->capture_default_str();
  cmd->add_option("--report", f->report_dir, "Directory for the report (index.html with SVG plots, runs.csv)")
      ->capture_default_str();
  cmd->add_flag("--no-report", f->no_report, "Do not write the report");
  cmd->add_option("--eta", f->eta,
                  "Energy-time weight of the cost, in [0, 1]; a list (0,0.25,0.5,0.75,1) adds the sensitivity table "
                  "(the main runs use the first value)")
      ->capture_default_str();
  cmd->add_option("--beta", f->beta,
                  "Early-stopping threshold (x the least cost so far), inf for none; a list (1.5,2,3,5,inf) adds "
                  "the sensitivity table of regret (the main runs use the first value)")
      ->capture_default_str();
  cmd->add_flag("--potential", f->potential,
                "Print only the potential savings of the best (batch size, limit), of the best limit at the default "
                "batch size and of the best batch size, from the traces' expected energies (paper Figure 1)");
  cmd->add_flag("--baselines", f->baselines,
                "Also run grid search without early stopping and with --beta, and compare regrets");
  cmd->add_flag("--drift", f->drift,
                "Also run a drifting workload: costs shift after --drift-after recurrences; Thompson sampling "
                "with and without --drift-window");
  cmd->add_option("--drift-after", f->drift_after,
                  "Recurrences before the shift (default: the job's default recurrences R; R more follow)")
      ->transform(IntegerFlag<int>(1, 1'000'000));
  cmd->add_option("--drift-magnitude", f->drift_magnitude,
                  "The pre-shift Oracle batch size's cost factor; the others draw from [1/M, M]")
      ->check(NumberRange(1.01, 100))
      ->capture_default_str();
  cmd->add_option("--drift-window", f->drift_window, "Window of the windowed Thompson sampling")
      ->transform(IntegerFlag<int>(1, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--drift-seed", f->drift_seed, "Seed of the drift factors")
      ->transform(IntegerFlag<std::uint64_t>())
      ->capture_default_str();
  cmd->add_option("--policy", f->policy,
                  "Batch-size policy: zeus (the original) or zeus-robust (cheaper exploration, pooled-variance "
                  "Thompson sampling; docs/simulator.md)")
      ->check(OneOf({"zeus", "zeus-robust"}))
      ->capture_default_str();
  cmd->add_option("--jobs", f->jobs, fmt::format("Threads to simulate on (default: one per core), at most {}", kMaxJobs))
      ->transform(IntegerFlag<int>(1, kMaxJobs));
  cmd->add_flag("--json", f->as_json, "Print JSON instead of the table");
  cmd->footer(
      "Prints, per GPU and workload, Zeus's energy savings and time change against Default (the default batch\n"
      "size at the maximum power limit) over the last 10 recurrences and over all of them, and its regret against\n"
      "the Oracle. Progress goes to stderr. The same flags give byte-identical output and report.\n"
      "The paper's other experiments: --potential (Figure 1), --eta or --beta lists (sensitivity tables),\n"
      "--baselines (grid search), --drift (a seeded drifting workload; docs/simulator.md); their tables follow\n"
      "the main one, go into the report, and into --json (then an object: \"jobs\" holds the main runs).\n"
      "At most " + std::to_string(kMaxRuns) + " runs (GPUs x workloads x seeds). Exit codes: 0 ok, 1 simulation or\n"
      "write failure, 2 bad flag, list, trace or --report directory (checked before the runs).");
  cmd->callback([f, exit_code] { *exit_code = RunReproduce(*f); });
}

}  // namespace zeus::cli
