// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/simulate_command.h"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/zeus/cli_flags.h"
#include "apps/zeus/server_batch_size_source.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/metrics.h"
#include "zeus/simulator/output.h"
#include "zeus/simulator/simulator.h"
#include "zeus/simulator/trace.h"

namespace zeus::cli {
namespace {

using json = nlohmann::json;
using simulator::Baselines;
using simulator::ConfigExpectation;
using simulator::JobTrace;
using simulator::RunSummary;
using simulator::SimulationResult;

struct SimulateFlags {
  std::string trace_dir;
  std::string gpu = "v100";
  std::string workload = "librispeech";
  std::string policy = "zeus";
  double eta = 0.5;
  double beta = 2.0;
  std::uint64_t seed = 1;
  int recurrences = 0;
  std::string output;
  bool as_json = false;
  simulator::WorkloadOverrides overrides;
  std::optional<std::string> optimizer;
  std::optional<double> target_metric;
  std::optional<int> max_epochs;
  std::optional<int> default_batch_size;
  int window_size = 0;
  std::string via_server;
};

Result<simulator::Policy> ParsePolicy(const std::string& name) {
  for (simulator::Policy p : {simulator::Policy::kZeus, simulator::Policy::kGridSearch,
                              simulator::Policy::kPowerLimitOnly, simulator::Policy::kBatchSizeOnly,
                              simulator::Policy::kZeusRobust}) {
    if (simulator::PolicyName(p) == name) return p;
  }
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("unknown policy '{}' (zeus, zeus-robust, grid-search, power-limit-only, batch-size-only)",
                          name));
}

json ConfigJson(const ConfigExpectation& c) {
  return {{"batch_size", c.batch_size}, {"power_limit_w", c.power_limit_w}, {"energy_j", c.energy_j},
          {"time_s", c.time_s},         {"cost", c.cost},                   {"reach_fraction", c.reach_fraction}};
}

json SummaryJson(const RunSummary& s) {
  return {{"recurrences", s.num_recurrences},
          {"tries", s.num_tries},
          {"failed_runs", s.num_failed_runs},
          {"total_energy_j", s.total_energy_j},
          {"total_time_s", s.total_time_s},
          {"total_cost", s.total_cost},
          {"savings_all_pct", s.savings_all_pct},
          {"time_change_all_pct", s.time_change_all_pct},
          {"last_n", s.last_n},
          {"savings_last_n_pct", s.savings_last_n_pct},
          {"time_change_last_n_pct", s.time_change_last_n_pct},
          {"last_n_mode_batch_size", s.last_n_mode_batch_size},
          {"last_n_mode_power_limit_w", s.last_n_mode_power_limit_w},
          {"last_n_oracle_fraction", s.last_n_oracle_fraction},
          {"cum_regret", s.cum_regret},
          {"cum_regret_over_oracle_cost", s.cum_regret_over_oracle_cost},
          {"first_ts_recurrence", s.first_ts_recurrence}};
}

void PrintJson(const SimulateFlags& f, const JobTrace& job, const SimulationResult& r, const Baselines& b,
               const RunSummary& s) {
  json out;
  out["gpu"] = job.gpu;
  out["workload"] = job.workload.name();
  out["optimizer"] = job.workload.optimizer;
  out["target_metric"] = job.workload.target_metric;
  out["max_epochs"] = job.workload.max_epochs;
  out["default_batch_size"] = job.default_batch_size;
  out["policy"] = f.policy;
  out["eta"] = f.eta;
  out["beta"] = f.beta;
  out["seed"] = f.seed;
  out["default"] = ConfigJson(b.default_config);
  out["oracle"] = ConfigJson(b.oracle);
  out["recurrences"] = json::array();
  for (const simulator::RecurrenceRecord& rec : r.recurrences) {
    out["recurrences"].push_back({{"recurrence", rec.recurrence},
                                  {"tries", rec.num_tries},
                                  {"stage", rec.stage},
                                  {"batch_size", rec.batch_size},
                                  {"power_limit_w", rec.power_limit_w},
                                  {"epochs", rec.epochs},
                                  {"energy_j", rec.energy_j},
                                  {"time_s", rec.time_s},
                                  {"cost", rec.cost},
                                  {"regret", rec.cost - b.oracle.cost}});
  }
  out["summary"] = SummaryJson(s);
  fmt::print("{}\n", out.dump(2));
}

void PrintText(const SimulateFlags& f, const JobTrace& job, const SimulationResult& r, const Baselines& b,
               const RunSummary& s) {
  fmt::print("Simulating {} on {} ({} policy): seed {}, eta {}, beta {}, {} recurrences\n", job.workload.name(),
             job.gpu, f.policy, f.seed, f.eta, f.beta, s.num_recurrences);
  fmt::print("Target {} within {} epochs; default batch size {}; batch sizes {}; power limits {} W\n\n",
             job.workload.target_metric, job.workload.max_epochs, job.default_batch_size,
             fmt::join(job.batch_sizes, " "), fmt::join(job.power_limits_w, " "));
  fmt::print("{:>5} {:>5} {:<8} {:>6} {:>6} {:>6} {:>14} {:>12} {:>14} {:>14}\n", "rec", "tries", "stage", "bs",
             "PL(W)", "epochs", "energy(J)", "time(s)", "cost", "regret");
  for (const simulator::RecurrenceRecord& rec : r.recurrences) {
    fmt::print("{:>5} {:>5} {:<8} {:>6} {:>6} {:>6} {:>14.1f} {:>12.1f} {:>14.1f} {:>14.1f}\n", rec.recurrence,
               rec.num_tries, rec.stage, rec.batch_size, rec.power_limit_w, rec.epochs, rec.energy_j, rec.time_s,
               rec.cost, rec.cost - b.oracle.cost);
  }
  const ConfigExpectation& d = b.default_config;
  const ConfigExpectation& o = b.oracle;
  fmt::print("\nDefault {}@{} W: {:.1f} J, {:.1f} s, cost {:.1f} per recurrence (expected over the trace's paths)\n",
             d.batch_size, d.power_limit_w, d.energy_j, d.time_s, d.cost);
  fmt::print("Oracle  {}@{} W: {:.1f} J, {:.1f} s, cost {:.1f} per recurrence\n", o.batch_size, o.power_limit_w,
             o.energy_j, o.time_s, o.cost);
  fmt::print("\nSummary over {} tries ({} runs missed the target):\n", s.num_tries, s.num_failed_runs);
  fmt::print("  energy savings vs Default: {:+.2f}% (all {} recurrences), {:+.2f}% (last {})\n", s.savings_all_pct,
             s.num_recurrences, s.savings_last_n_pct, s.last_n);
  fmt::print("  time change vs Default:    {:+.2f}% (all), {:+.2f}% (last {})\n", s.time_change_all_pct,
             s.time_change_last_n_pct, s.last_n);
  fmt::print("  cumulative regret vs Oracle: {:.1f} ({:.2f} oracle jobs' worth of cost)\n", s.cum_regret,
             s.cum_regret_over_oracle_cost);
  fmt::print("  last {}: mostly {}@{} W; {:.0f}% at the oracle configuration\n", s.last_n, s.last_n_mode_batch_size,
             s.last_n_mode_power_limit_w, 100.0 * s.last_n_oracle_fraction);
  if (s.first_ts_recurrence > 0) fmt::print("  Thompson sampling from recurrence {}\n", s.first_ts_recurrence);
}

// A power trace that does not exist means --gpu names no GPU of the trace
// directory: a bad flag (kInvalidArgument, exit 2) whose message lists the
// valid names. Any other error is returned as it is.
Error UnknownGpuOr(const Error& e, const std::string& gpu, const std::string& dir) {
  if (e.code() != ErrorCode::kNotFound) return e;
  Result<std::vector<std::string>> gpus = simulator::ListTraceGpus(dir);
  if (!gpus) return Error(ErrorCode::kInvalidArgument, fmt::format("--gpu '{}': {}", gpu, e.message()));
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("--gpu '{}': {} has no power trace for it (summary_power_{}.csv); valid names: {}", gpu,
                           dir, gpu,
                           gpus->empty() ? std::string("none (the directory has no summary_power_<gpu>.csv)")
                                         : fmt::format("{}", fmt::join(*gpus, ", "))));
}

int RunSimulate(SimulateFlags f) {
  Result<simulator::Policy> policy = ParsePolicy(f.policy);
  if (!policy) return Failure(policy.error());
  Result<std::string> dir = simulator::ResolveTraceDir(f.trace_dir);
  if (!dir) return Failure(dir.error());
  if (Status s = CheckInputDirectory(TraceDirSource(f.trace_dir), *dir); !s) return Failure(s.error());
  // The output path is opened before the simulation, so a bad one costs nothing.
  std::optional<OutputFile> output;
  if (!f.output.empty()) {
    Result<OutputFile> opened = OutputFile::Open("--output", f.output);
    if (!opened) return Failure(opened.error());
    output.emplace(std::move(*opened));
  }
  f.overrides.optimizer = f.optimizer;
  f.overrides.target_metric = f.target_metric;
  f.overrides.max_epochs = f.max_epochs;
  f.overrides.default_batch_size = f.default_batch_size;
  Result<simulator::WorkloadSpec> workload = simulator::ResolveWorkload(f.workload, f.overrides);
  if (!workload) return Failure(workload.error());
  Result<simulator::TrainTrace> train = simulator::LoadTrainTrace(simulator::TrainTracePath(*dir));
  if (!train) return Failure(train.error());
  Result<simulator::PowerTrace> power = simulator::LoadPowerTrace(simulator::PowerTracePath(*dir, f.gpu), f.gpu);
  if (!power) return Failure(UnknownGpuOr(power.error(), f.gpu, *dir));
  Result<JobTrace> job = simulator::BuildJobTrace(*train, *power, *workload);
  if (!job) return Failure(job.error());

  simulator::SimulationOptions options;
  options.policy = *policy;
  options.eta = f.eta;
  options.beta = f.beta;
  options.seed = f.seed;
  options.num_recurrences = f.recurrences;
  options.bandit.window_size = f.window_size;
  options.record_tries = output.has_value();  // only --output prints tries
  if (!f.via_server.empty()) {
    if (*policy != simulator::Policy::kZeus && *policy != simulator::Policy::kBatchSizeOnly &&
        *policy != simulator::Policy::kZeusRobust) {
      return Failure(Error(ErrorCode::kInvalidArgument,
                           "--via-server needs --policy zeus, zeus-robust or batch-size-only (the service decides "
                           "batch sizes)"));
    }
    options.batch_size_source = ServerBatchSizeSource(f.via_server);
  }
  Result<SimulationResult> result = simulator::Simulate(*job, options);
  if (!result) return Failure(result.error());
  Result<Baselines> baselines = simulator::ComputeBaselines(*job, f.eta);
  if (!baselines) return Failure(baselines.error());
  const RunSummary summary = simulator::Summarize(*result, *baselines);

  if (output) {
    if (Status s = output->Commit(simulator::TriesCsv(*result)); !s) {
      return Failure(s.error().WithContext("could not write the tries CSV"));
    }
  }
  if (f.as_json) {
    PrintJson(f, *job, *result, *baselines, summary);
  } else {
    PrintText(f, *job, *result, *baselines, summary);
  }
  return 0;
}

}  // namespace

std::string TraceDirSource(const std::string& flag) {
  if (!flag.empty()) return "--trace-dir";
  if (const char* env = std::getenv("ZEUS_TRACE_DIR"); env != nullptr && *env != '\0') return "$ZEUS_TRACE_DIR";
  return "the default trace directory";
}

void RegisterSimulateCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("simulate", "Replay a recurring training job on the Zeus traces with the Zeus policy");
  auto f = std::make_shared<SimulateFlags>();
  cmd->add_option("--trace-dir", f->trace_dir,
                  "Directory with summary_train.csv and summary_power_<gpu>.csv "
                  "(default: $ZEUS_TRACE_DIR, else the Zeus NSDI '23 traces that zeus ships, share/zeus/traces/zeus-nsdi23)");
  cmd->add_option("--gpu", f->gpu, "GPU whose power trace to use (summary_power_<gpu>.csv)")->capture_default_str();
  cmd->add_option("--workload", f->workload,
                  "Workload: librispeech, squad, sentiment140, imagenet, cifar100, movielens-1m, or dataset/network")
      ->capture_default_str();
  cmd->add_option("--policy", f->policy,
                  "zeus (the original, default), zeus-robust (cheaper exploration, pooled-variance Thompson "
                  "sampling; docs/simulator.md), grid-search, power-limit-only or batch-size-only")
      ->capture_default_str();
  cmd->add_option("--eta", f->eta, "Energy-time weight of the cost: eta*E + (1-eta)*maxPower*T, in [0, 1]")
      ->check(NumberRange(0, 1))
      ->capture_default_str();
  cmd->add_option("--beta", f->beta, "Early stopping: stop a run once its cost passes beta x the least cost so far")
      ->check(PositiveNumber())
      ->capture_default_str();
  cmd->add_option("--seed", f->seed, "Seed of the numpy-compatible random streams, 0 to 2^64-1")
      ->transform(IntegerFlag<std::uint64_t>())
      ->capture_default_str();
  cmd->add_option("--recurrences", f->recurrences,
                  fmt::format("Recurrences to simulate (default: 2 x |batch sizes| x |power limits|), at most {}; "
                              "time grows linearly, 10^6 take a few seconds",
                              kMaxRecurrences))
      ->transform(IntegerFlag<int>(0, kMaxRecurrences));
  cmd->add_option("--output", f->output,
                  "Write one CSV row per try: recurrence,try,batch_size,power_limit,epochs,energy,time,cost,reached");
  cmd->add_flag("--json", f->as_json, "Print one JSON object instead of the table");
  cmd->add_option("--optimizer", f->optimizer, "Override the workload's optimizer (e.g. adamw)");
  cmd->add_option("--target-metric", f->target_metric, "Override the workload's target metric")
      ->check(FiniteNumber());
  cmd->add_option("--max-epochs", f->max_epochs, "Override the workload's epoch cap")->transform(IntegerFlag<int>(1));
  cmd->add_option("--default-batch-size", f->default_batch_size,
                  "Override the workload's default batch size (capped to the GPU's largest)")
      ->transform(IntegerFlag<int>(1));
  cmd->add_option("--window", f->window_size, "Thompson-sampling window of recent observations per batch size (0: all)")
      ->transform(IntegerFlag<int>(0));
  cmd->add_option("--via-server", f->via_server,
                  "Ask a running `zeus bso-server` at this URL (http://host:port) for every batch size instead of "
                  "the in-process optimizer; the same seed gives the same decisions");
  cmd->footer(
      "Replays the job R times. Each recurrence the policy picks a batch size and power limit, a training path is\n"
      "drawn from the trace, and the run is stopped early once its cost exceeds beta x the best cost so far. The\n"
      "same seed gives the same decisions (and byte-identical output) as the original Zeus simulator.\n"
      "Workloads other than the six built-in ones need --optimizer, --target-metric, --max-epochs and\n"
      "--default-batch-size. Exit codes: 0 ok, 1 simulation failure or a failed write of --output, 2 bad flag,\n"
      "trace or --output path (the path is checked before the simulation).");
  cmd->callback([f, exit_code] { *exit_code = RunSimulate(*f); });
}

}  // namespace zeus::cli
