// Copyright 2026 The Zeus C++ Authors.
//
// The trace-driven simulator of a recurring training job, reproducing the
// original Zeus simulator (`Simulator.simulate_one_job`) decision for decision
// (../shared/docs/simulator-spec.md):
//
//   for each recurrence (default R = 2 |B| |P|): up to 20 tries, each
//     1. the policy picks a batch size and a power limit (Zeus: pruning then
//        Thompson sampling; JIT power-limit profiling the first time a batch
//        size is seen, which spends the first epoch across all limits);
//     2. a training path is drawn uniformly among the trace's runs for that
//        (batch size, limit) with numpy's integers(0, n) (no draw if n == 1);
//     3. the run is capped at min(beta * min_cost // cost_per_epoch,
//        max_epochs) epochs (early stopping); it reaches the target iff the
//        path's target epoch is within that budget;
//     4. its cost eta * E + (1 - eta) * max_power * T is recorded and
//        observed by the policy; a run that reaches the target ends the
//        recurrence and min_cost = min(min_cost, the recurrence's summed
//        cost so far).
//
// The path sampler and the Thompson-sampling bandit are both
// numpy.default_rng(seed) (the same stream, as in the original).
//
// Policies other than Zeus reuse the same loop (see Policy). Deterministic:
// the same JobTrace and options give the same result. Thread-safety: Simulate
// is reentrant; distinct calls may run on distinct threads sharing one
// JobTrace.

#ifndef ZEUS_SIMULATOR_SIMULATOR_H_
#define ZEUS_SIMULATOR_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/optimizer/gaussian_ts.h"
#include "zeus/simulator/job_trace.h"

namespace zeus::simulator {

enum class Policy {
  kZeus,            // batch size (pruning + Thompson sampling) and JIT power limit
  kGridSearch,      // each (batch size, limit) once, then the cheapest seen
  kPowerLimitOnly,  // the default batch size, JIT power limit
  kBatchSizeOnly,   // Zeus's batch-size optimizer at each size's maximum limit
};

// "zeus", "grid-search", "power-limit-only", "batch-size-only".
std::string_view PolicyName(Policy policy);

// A batch-size decision maker outside the simulator, such as the batch-size
// service (`zeus simulate --via-server`). It replaces the in-process
// optimizer of the kZeus and kBatchSizeOnly policies.
class BatchSizeSource {
 public:
  virtual ~BatchSizeSource() = default;
  // The batch size of the next run.
  virtual Result<int> Next() = 0;
  // The stage of the last Next: "pruning" or "ts".
  virtual std::string_view stage() const = 0;
  // The run's outcome. energy_j and time_s are 0 for a run that could not
  // start (its budget was 0 epochs); cost is then the penalty
  // 100 x beta x min_cost.
  virtual Status Observe(int batch_size, double energy_j, double time_s, double cost, bool reached,
                         double epochs) = 0;
};

struct SimulationOptions;
// Makes one source per simulated job.
using BatchSizeSourceFactory =
    std::function<Result<std::unique_ptr<BatchSizeSource>>(const JobTrace& job, const SimulationOptions& options)>;

struct SimulationOptions {
  Policy policy = Policy::kZeus;
  double eta = 0.5;   // energy-time weight of the cost, in [0, 1]
  double beta = 2.0;  // early-stopping threshold, > 0; +inf: no early stopping
  std::uint64_t seed = 1;
  int num_recurrences = 0;  // 0: the trace's default_recurrences
  int max_tries = 20;       // per recurrence (grid search adds its number of configurations)
  optimizer::GaussianTsOptions bandit;  // prior, explorations, data-drift window
  bool record_bandit = false;           // fill SimulationResult::bandit_steps
  // Keep every try in SimulationResult::tries. Without them a simulation
  // keeps one RecurrenceRecord (80 bytes) per recurrence and, per arm, at
  // most optimizer::kExactFitMaxRewards rewards (or the window), so its
  // memory grows by 80 bytes per recurrence; with them by 128 bytes more
  // per try.
  bool record_tries = true;
  // If set, batch sizes come from here instead of the in-process optimizer
  // (kZeus and kBatchSizeOnly only; bandit_steps stay empty).
  BatchSizeSourceFactory batch_size_source;
  // Data drift: recurrences after drift_after_recurrence run on *drifted_job
  // (same batch sizes and limits, other costs; see experiments.h). The
  // policy keeps what it learned; JIT profiling is not repeated.
  const JobTrace* drifted_job = nullptr;
  int drift_after_recurrence = 0;
};

// One _run_job call.
struct TryRecord {
  int recurrence = 0;  // 1-based
  int attempt = 0;     // 1-based within the recurrence
  std::string_view stage;  // the policy's stage when it chose: "pruning", "ts", "grid", "fixed"
  int batch_size = 0;
  double power_limit_w = 0;
  bool profiled = false;  // the first epoch profiled power limits
  double cost_ub = 0;     // beta * min_cost, +inf before any success
  int num_paths = 0;
  int sampled_run = 0;
  double path_target_epoch = 0;  // NaN: the path never reaches the target
  std::int64_t epoch_budget = 0;
  bool ran = true;  // false: the budget was 0 epochs
  double epochs = 0;  // the path's target epoch if reached, else the budget
  double energy_j = 0;
  double time_s = 0;
  bool reached = false;
  double cost = 0;
};

// One recurrence: sums over its tries; the final configuration is the one
// that reached the target.
struct RecurrenceRecord {
  int recurrence = 0;
  int num_tries = 0;
  int num_runs = 0;     // tries that ran at least one epoch
  int num_missed = 0;   // runs that ran but did not reach the target
  std::string_view stage;
  int batch_size = 0;
  double power_limit_w = 0;
  double epochs = 0;
  double energy_j = 0;  // every try of the recurrence, failed ones included
  double time_s = 0;
  double cost = 0;
};

// The bandit's state at one Thompson-sampling prediction, per arm.
struct BanditStep {
  int recurrence = 0;
  int attempt = 0;
  optimizer::ArmPosterior posterior;
  double sample = 0;
};

struct SimulationResult {
  std::vector<TryRecord> tries;  // only with record_tries
  std::vector<RecurrenceRecord> recurrences;
  std::vector<BanditStep> bandit_steps;  // only with record_bandit
};

// Simulates options.num_recurrences recurrences of the job. Fails with
// kInvalidArgument on bad options (eta outside [0, 1], beta <= 0 or NaN,
// a drifted_job whose batch sizes or limits differ from job's,
// num_recurrences < 0, max_tries < 1) and with kFailedPrecondition, as the
// original does, when the first recurrence's first run does not reach the
// target (Zeus and batch-size-only policies), when a recurrence exhausts its
// tries, or when the trace has no runs for a batch size the policy chose.
Result<SimulationResult> Simulate(const JobTrace& job, const SimulationOptions& options);

}  // namespace zeus::simulator

#endif  // ZEUS_SIMULATOR_SIMULATOR_H_
