// Copyright 2026 The Zeus C++ Authors.
//
// What the power-limit optimizer would save (observer mode, paper §5): from a
// profile's measurements, for each built-in selector, the limit it would
// choose and the energy and time that limit would save against a baseline
// limit, per epoch and over the whole run.
//
// Extrapolation. Each measurement covers `profile_steps` steps, so its
// per-step energy and time are energy / profile_steps and time /
// profile_steps. For a selector that chooses limit L against the baseline B:
//
//   saved per step    = per_step(B) - per_step(L)            (J and s)
//   saved per epoch   = steps_per_epoch x saved per step
//   saved per run     = epochs x saved per epoch
//   saved percent     = 100 x saved per step / per_step(B)
//
// i.e. the steady-state saving of running every step of the run at L instead
// of B. The profiling phase is not deducted: it costs the same whether the
// optimizer observes or applies (its steps run at the profiled limits either
// way). A negative saving is a cost (ZeusCost and Energy usually save energy
// and cost time). Energy is the whole job's (every GPU of every rank), time
// the slowest rank's, as in the profile.
//
// The baseline B is the measurement at `baseline_power_limit_w` when given
// (the limit the job ran at before the optimizer: observer mode passes the
// GPUs' original limit); without it, or when that limit was not profiled,
// the highest measured limit (normally the GPU's default) and the report
// says so.
//
// The Pareto front: the measurements that no other measurement beats on both
// energy and time (no other has energy <= and time <= with one of them <).
//
// Pure functions; thread-safe.

#ifndef ZEUS_RUNTIME_POWER_LIMIT_WHAT_IF_H_
#define ZEUS_RUNTIME_POWER_LIMIT_WHAT_IF_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/optimizer/power_limit.h"

namespace zeus::runtime {

struct PowerLimitWhatIfOptions {
  int profile_steps = 40;    // steps per measurement; >= 1
  std::int64_t steps_per_epoch = 0;  // >= 1
  std::int64_t epochs = 1;           // >= 1
  int total_gpus = 1;        // the job's GPUs (ZeusCost's max power); >= 1
  double eta = 0.5;          // ZeusCost: in [0, 1]
  double max_slowdown = 1.1;  // MaxSlowdown: >= 1
  std::optional<double> baseline_power_limit_w;
};

// One selector's answer.
struct PowerLimitWhatIfChoice {
  std::string selector;  // OptimumSelector::Describe(): "energy", "zeus-cost(eta=0.5)", ...
  double power_limit_w = 0;
  double energy_per_step_j = 0;  // at the chosen limit
  double time_per_step_s = 0;
  double energy_saved_per_epoch_j = 0;
  double time_saved_per_epoch_s = 0;
  double energy_saved_run_j = 0;
  double time_saved_run_s = 0;
  double energy_saved_percent = 0;  // of the baseline's per-step energy
  double time_saved_percent = 0;
};

struct PowerLimitWhatIfReport {
  PowerLimitWhatIfOptions options;
  std::vector<optimizer::PowerLimitMeasurement> measurements;  // as given (profiling order)
  std::vector<bool> pareto;  // per measurement: on the Pareto front
  double baseline_power_limit_w = 0;
  bool baseline_is_requested = false;  // false: fell back to the highest measured limit
  double baseline_energy_per_step_j = 0;
  double baseline_time_per_step_s = 0;
  // Energy, Time, ZeusCost(eta), MaxSlowdown(factor), in that order.
  std::vector<PowerLimitWhatIfChoice> choices;
};

// kInvalidArgument for options out of range, or measurements the selectors
// reject (none, a negative or non-finite value; zeus::runtime::SelectPowerLimitW),
// or a baseline with zero energy or time (no percentage can be taken).
Result<PowerLimitWhatIfReport> ComputePowerLimitWhatIf(std::span<const optimizer::PowerLimitMeasurement> measurements,
                                                       const PowerLimitWhatIfOptions& options);

// The report as text for people: the measurements table (per-step figures,
// the Pareto front and the baseline marked) and one line per selector.
std::string FormatPowerLimitWhatIfText(const PowerLimitWhatIfReport& report);

// The report as one JSON object (pretty-printed, ending in a newline):
//   {"profile_steps", "steps_per_epoch", "epochs", "total_gpus", "eta", "max_slowdown",
//    "baseline": {"power_limit_w", "requested", "energy_per_step_j", "time_per_step_s"},
//    "measurements": [{"power_limit_w", "energy_j", "time_s", "energy_per_step_j", "time_per_step_s",
//                      "pareto"}],
//    "selectors": [{"selector", "power_limit_w", "energy_per_step_j", "time_per_step_s",
//                   "energy_saved_per_epoch_j", "time_saved_per_epoch_s", "energy_saved_run_j",
//                   "time_saved_run_s", "energy_saved_percent", "time_saved_percent"}]}
std::string PowerLimitWhatIfJson(const PowerLimitWhatIfReport& report);

}  // namespace zeus::runtime

#endif  // ZEUS_RUNTIME_POWER_LIMIT_WHAT_IF_H_
