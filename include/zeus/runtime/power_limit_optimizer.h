// Copyright 2026 The Zeus C++ Authors.
//
// zeus::runtime::PowerLimitOptimizer: just-in-time profiling of GPU power
// limits inside the training loop (Zeus, NSDI '23; zeus-reference F13, A7-A9).
// It runs a few training steps at each power limit, measures their energy and
// time through a zeus::monitor::Monitor, picks the best limit with a
// selector, and keeps it for the rest of the run.
//
//   auto optimizer = PowerLimitOptimizer::Create(*gpus, *monitor, options).value();
//   for (int epoch = 0; epoch < epochs; ++epoch) {
//     optimizer->OnEpochBegin();
//     for (auto& batch : loader) {
//       optimizer->OnStepBegin();
//       train_step(batch);
//       optimizer->OnStepEnd();
//     }
//     optimizer->OnEpochEnd();
//   }
//   optimizer->OnTrainEnd();       // restores the original limits
//
// States (A7): Ready (wait steps) -> Warmup (run at the limit under test)
// -> Profiling (a Monitor window over profile_steps steps) -> next limit's
// Warmup ... -> Done (the chosen limit is set). An epoch that ends during
// Warmup or Profiling cancels the window, puts the original limits back for
// the rest of the epoch, and retries the same limit from its warmup at the
// next step. Disabled: limits could not be changed or measured; training
// goes on at the original limits and the hooks do nothing.
//
// The limits profiled are max, max - stride, max - 2 stride, ... down to the
// minimum, and the minimum itself is always included.
//
// Observer mode (options.observer_mode): the same profiling, then the
// original limits instead of the optimum; the choice is only reported.
//
// Restoring: the limit each GPU had when Create ran (its *original* limit,
// not the maximum) is put back by OnTrainEnd(), RestoreOriginalLimits(), the
// destructor (so also when an exception unwinds through the owner), and,
// while the optimizer lives, on SIGINT and SIGTERM (then the signal takes its
// previous action: by default the process ends by that signal), on
// std::terminate (an uncaught exception) and on std::exit. See
// docs/power-limit-optimizer.md for how.
//
// Many ranks: every rank of a data-parallel job creates its own optimizer
// over its own GPUs with a Communicator over all ranks and calls the hooks in
// lockstep (as DDP does). Energy is summed over ranks and time is the max, so
// all ranks choose the same limit. A failure on one rank (no permission, GPU
// lost) disables the optimizer on every rank at the next profiling
// boundary.
//
// Thread-safety: Create and the hooks must be called from one thread (the
// training loop). RestoreOriginalLimits may also be called from others.
// Per-step cost outside profiling windows is a few nanoseconds
// (bench/power_limit_bench.cc).

#ifndef ZEUS_RUNTIME_POWER_LIMIT_OPTIMIZER_H_
#define ZEUS_RUNTIME_POWER_LIMIT_OPTIMIZER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/base/log.h"
#include "zeus/device/gpu.h"
#include "zeus/monitor/monitor.h"
#include "zeus/optimizer/power_limit.h"
#include "zeus/runtime/communicator.h"
#include "zeus/runtime/power_limit_setter.h"

namespace zeus::runtime {

// A selector written by the user (e.g. a Python OptimumSelector subclass):
// given the job's measurements in profiling order and the job's GPU count, it
// returns the power limit to use, in W, or an error. It is called on the
// training thread (inside a hook, or in Create when a profile is loaded), once
// per rank, with the same values on every rank; it must return the same limit
// on every rank. Its error disables the optimizer (original limits restored)
// like any other failure.
using CustomOptimumSelector = std::function<Result<double>(
    std::span<const optimizer::PowerLimitMeasurement> measurements, int total_gpus)>;

// Which profiled limit is best (zeus-reference A8). Measurements are the
// job's: energy summed over every GPU of every rank, time the slowest rank's.
struct OptimumSelector {
  enum class Kind : std::uint8_t {
    kEnergy,       // least energy
    kTime,         // least time
    kZeusCost,     // least eta*E + (1-eta)*max_limit*gpus*T (zeus::optimizer::ZeusCost)
    kMaxSlowdown,  // the lowest limit whose time <= factor * time at the highest limit
    kCustom,       // whatever `custom` returns
  };
  Kind kind = Kind::kZeusCost;
  double eta = 0.5;           // kZeusCost: in [0, 1]
  double max_slowdown = 1.1;  // kMaxSlowdown: >= 1
  CustomOptimumSelector custom;  // kCustom: not null
  std::string custom_name;       // kCustom: for Describe, e.g. the Python class name

  static OptimumSelector Energy() { return Of(Kind::kEnergy); }
  static OptimumSelector Time() { return Of(Kind::kTime); }
  static OptimumSelector ZeusCost(double eta) {
    OptimumSelector s = Of(Kind::kZeusCost);
    s.eta = eta;
    return s;
  }
  static OptimumSelector MaxSlowdown(double factor) {
    OptimumSelector s = Of(Kind::kMaxSlowdown);
    s.max_slowdown = factor;
    return s;
  }
  static OptimumSelector Custom(CustomOptimumSelector select, std::string name) {
    OptimumSelector s = Of(Kind::kCustom);
    s.custom = std::move(select);
    s.custom_name = std::move(name);
    return s;
  }
  static OptimumSelector Of(Kind kind) {
    OptimumSelector s;
    s.kind = kind;
    return s;
  }

  // "energy", "time", "zeus-cost(eta=0.5)", "max-slowdown(1.1)", "custom(<name>)".
  std::string Describe() const;
};

// kInvalidArgument when eta is outside [0, 1] (kZeusCost), the factor is
// below 1 or not finite (kMaxSlowdown), or `custom` is null (kCustom).
Status ValidateSelector(const OptimumSelector& selector);

// The chosen power limit in W. Energy, Time and ZeusCost are the argmin of
// zeus::optimizer::ChoosePowerLimitFromMeasurements (eta = 1, 0 and eta;
// max power = highest limit x total_gpus); ties go to the higher limit.
// kCustom: the measurements are checked as for the others, then `custom`'s
// answer is returned; its error is returned as it is, and an answer that is
// not a finite number > 0 is kInvalidArgument naming the selector. (Whether
// the driver accepts the limit is the optimizer's business: a rejected
// limit disables it.)
// Errors: kInvalidArgument for an invalid selector, no measurements,
// total_gpus < 1, or a negative/non-finite value.
Result<double> SelectPowerLimitW(const OptimumSelector& selector,
                                 std::span<const optimizer::PowerLimitMeasurement> measurements, int total_gpus);

enum class PowerLimitOptimizerState : std::uint8_t { kReady, kWarmup, kProfiling, kDone, kDisabled };
std::string_view PowerLimitOptimizerStateName(PowerLimitOptimizerState state);  // "ready", ...

struct PowerLimitOptimizerOptions {
  int wait_steps = 1;      // steps at the original limits before profiling; >= 0
  int warmup_steps = 10;   // steps run at each limit before its window opens; >= 0
  int profile_steps = 40;  // steps measured at each limit; >= 1
  double power_limit_stride_w = 25.0;  // > 0
  OptimumSelector selector = OptimumSelector::ZeusCost(0.5);
  // If set and the file exists, its measurements are used (after checking
  // them against the GPUs) and no profiling runs; if it does not exist, rank
  // 0 writes it when profiling ends.
  std::optional<std::string> profile_path;
  // How limits are changed. Null: NvmlPowerLimitSetter. Must outlive the
  // optimizer.
  PowerLimitSetter* setter = nullptr;
  // The job's ranks. Null: this process alone. Must outlive the optimizer.
  Communicator* communicator = nullptr;
  // Restore the original limits on SIGINT, SIGTERM, std::terminate and
  // std::exit while this optimizer lives.
  bool restore_on_exit = true;
  // Observer mode (paper §5): profile as usual (limits do change while
  // profiling), then put the original limits back instead of applying the
  // optimum. The optimizer ends Done with optimal_power_limit_mw() the limit
  // it would have chosen; with a loaded profile no limit is ever changed.
  // zeus/runtime/power_limit_what_if.h says what the choice would save.
  bool observer_mode = false;
  // Receives one line per event (profiling results, the choice, problems).
  // Null: the process's log seam (zeus/base/log.h), component
  // "power-limit-optimizer": events at info level, problems at warning
  // level, and the reason the optimizer is Disabled (with the ways out) as
  // a user warning, logged once. Called from the training thread, and on
  // SIGINT/SIGTERM from the exit-restore thread, on std::terminate and
  // std::exit from the thread that ends the process.
  std::function<void(std::string_view)> log;
  // Receives the lines of the exit paths instead (the restore on SIGINT and
  // SIGTERM, std::terminate, std::exit), where the process may end before a
  // sink that delivers later (Python's) gets to them. Null: as the others.
  std::function<void(std::string_view)> exit_log;
};

class PowerLimitOptimizer {
 public:
  // Optimizes the GPUs `monitor` measures (monitor.gpu_indices() into
  // `gpus`). REQUIRES: `monitor` was created over `gpus`; both outlive the
  // optimizer. Collective when a communicator is given.
  //
  // Reads each GPU's model, constraints and current (original) limit, and
  // checks that it may change limits by setting the current one again.
  // Errors (on every rank alike): kInvalidArgument for bad options, no GPUs,
  // GPUs whose models or constraints differ (within or across ranks);
  // kFailedPrecondition for a profile file that does not match the GPUs; the
  // device's error if a GPU cannot be read. Not an error: no permission to
  // change limits - the optimizer is then Disabled, says why through `log`,
  // and training goes on unoptimized.
  static Result<std::unique_ptr<PowerLimitOptimizer>> Create(const device::GpuSet& gpus, monitor::Monitor& monitor,
                                                             PowerLimitOptimizerOptions options = {});
  // Restores the original limits if they are not restored yet.
  ~PowerLimitOptimizer();
  PowerLimitOptimizer(const PowerLimitOptimizer&) = delete;
  PowerLimitOptimizer& operator=(const PowerLimitOptimizer&) = delete;

  // Training-loop hooks. They never fail: problems are logged and disable
  // the optimizer. After OnTrainEnd or a restore they do nothing.
  void OnEpochBegin() {}
  void OnEpochEnd();
  void OnStepBegin() {
    if (state_ == PowerLimitOptimizerState::kDone || state_ == PowerLimitOptimizerState::kDisabled) return;
    StepSlow();
  }
  void OnStepEnd() {}
  // Restores the original limits (see RestoreOriginalLimits) and ends
  // optimization.
  Status OnTrainEnd();

  // Puts every GPU back to its original limit and stops changing limits.
  // Idempotent. Errors list the GPUs that could not be restored.
  Status RestoreOriginalLimits();

  PowerLimitOptimizerState state() const { return state_; }
  // The limits to profile, high to low, mW.
  const std::vector<std::uint32_t>& power_limits_mw() const { return power_limits_mw_; }
  // The limit each GPU had at Create, in monitor.gpu_indices() order, mW.
  const std::vector<std::uint32_t>& original_power_limits_mw() const { return original_mw_; }
  // The job's measurements so far (or the loaded profile's), profiling order.
  const std::vector<optimizer::PowerLimitMeasurement>& measurements() const { return measurements_; }
  // Steps left in the current state before it moves on (Ready: wait steps
  // + 1 at first; Warmup; Profiling), as Zeus's states count them.
  int steps_left() const { return steps_left_; }
  // The limit being profiled (Warmup, Profiling) or profiled next (Ready), mW.
  std::uint32_t current_power_limit_mw() const {
    return power_limits_mw_.empty() ? 0 : power_limits_mw_[limit_index_];
  }
  // The chosen limit once Done (in observer mode: the limit that would have
  // been set; the original limits are in force).
  std::optional<std::uint32_t> optimal_power_limit_mw() const { return optimal_mw_; }
  bool observer_mode() const { return options_.observer_mode; }
  // Why the optimizer is Disabled.
  const std::optional<Error>& disabled_reason() const { return disabled_reason_; }
  bool profile_loaded() const { return profile_loaded_; }
  // GPUs in the whole job (every rank).
  int total_gpus() const { return total_gpus_; }
  bool restored() const;

 private:
  struct Shared;
  PowerLimitOptimizer(const device::GpuSet& gpus, monitor::Monitor& monitor, PowerLimitOptimizerOptions options);

  // Create's steps, in order. A local problem (`local`: reading the GPUs or
  // making the setter; `probe`: setting the current limits again) waits for
  // AgreeAcrossRanks, so that every rank takes the same decision.
  struct SetupErrors {
    std::optional<Error> local;
    std::optional<Error> probe;
  };
  void SetUpLog();  // emit_: options.log or the seam, and the rank prefix
  // What the exit paths log through: options.exit_log, or emit_.
  std::function<void(LogLevel, std::string_view, bool)> ExitEmit() const;
  // Model, constraints and original limit of each GPU (all alike).
  std::optional<Error> ReadGpus();
  // max, max - stride, ..., and always the minimum.
  void PlanPowerLimits();
  // Through zeusd when it is configured (its errors are ours: never a silent
  // fallback), else NVML in this process; then the probe. After a local
  // error nothing is ever set.
  void OpenSetter(SetupErrors& errors);
  // Collective: errors, constraints and the GPU count. A failure, or the
  // reason to run Disabled (no permission to change limits, here or on
  // another rank), or nullopt.
  Result<std::optional<Error>> AgreeAcrossRanks(const SetupErrors& errors);
  // Collective: a saved profile (options.profile_path) that exists replaces
  // profiling: true when it was loaded and the optimizer is Done.
  Result<bool> UseSavedProfile();

  void StepSlow();
  void EnterWarmup(std::uint32_t limit_mw);
  void BeginProfiling();
  void EndProfiling();
  void Finish();
  void Disable(Error reason);
  void ApplyLimit(std::uint32_t limit_mw);  // sets every GPU; records failures
  void ApplyOriginal();                     // back to the originals mid-run
  // Through options.log, or the log seam at `level`; with the rank prefix
  // in a job of several ranks.
  void Log(LogLevel level, std::string_view message, bool user_warning = false) const;
  std::string WindowName() const;

  const device::GpuSet& gpus_;
  monitor::Monitor& monitor_;
  PowerLimitOptimizerOptions options_;
  // Where Log sends a record (see options.log); shared with the exit paths.
  std::function<void(LogLevel, std::string_view, bool)> emit_;
  SingleProcessCommunicator single_;
  Communicator* comm_ = nullptr;
  std::vector<std::size_t> gpu_indices_;
  std::vector<std::uint32_t> original_mw_;
  std::vector<std::uint32_t> power_limits_mw_;
  std::string gpu_model_;
  device::PowerLimitConstraints constraints_mw_;
  int total_gpus_ = 1;

  PowerLimitOptimizerState state_ = PowerLimitOptimizerState::kReady;
  int steps_left_ = 0;
  std::size_t limit_index_ = 0;  // into power_limits_mw_
  bool window_open_ = false;
  // Local problems waiting for the next collective decision.
  std::optional<Error> local_failure_;
  std::optional<Error> local_rejection_;
  std::vector<optimizer::PowerLimitMeasurement> measurements_;
  std::optional<std::uint32_t> optimal_mw_;
  std::optional<Error> disabled_reason_;
  bool profile_loaded_ = false;
  bool finished_ = false;  // OnTrainEnd ran

  std::unique_ptr<Shared> shared_;  // limits state shared with exit paths
};

}  // namespace zeus::runtime

#endif  // ZEUS_RUNTIME_POWER_LIMIT_OPTIMIZER_H_
