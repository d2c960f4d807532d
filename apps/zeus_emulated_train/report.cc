// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus_emulated_train/report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zeus::emulated_train {
namespace {

using json = nlohmann::json;
using runtime::PowerLimitOptimizer;

std::string Watts(std::uint32_t mw) { return fmt::format("{:g}", mw / 1000.0); }

}  // namespace

std::string JsonReport(const RunReport& r) {
  const PowerLimitOptimizer& o = *r.optimizer;
  json out;
  out["rank"] = r.rank;
  out["world_size"] = r.world_size;
  out["state"] = std::string(runtime::PowerLimitOptimizerStateName(o.state()));
  out["selector"] = r.selector;
  out["optimal_power_limit_w"] = o.optimal_power_limit_mw() ? json(*o.optimal_power_limit_mw() / 1000.0) : json();
  out["profile_loaded"] = o.profile_loaded();
  out["optimizer_error"] = o.disabled_reason() ? json(o.disabled_reason()->message()) : json();
  out["measurements"] = json::array();
  for (const auto& m : o.measurements()) {
    out["measurements"].push_back({{"power_limit_w", m.power_limit_w}, {"energy_j", m.energy_j}, {"time_s", m.time_s}});
  }
  out["power_limits_w"] = json::array();
  for (auto mw : o.power_limits_mw()) out["power_limits_w"].push_back(mw / 1000.0);
  out["original_power_limits_w"] = json::array();
  for (auto mw : o.original_power_limits_mw()) out["original_power_limits_w"].push_back(mw / 1000.0);
  out["total_gpus"] = o.total_gpus();
  out["steps"] = r.steps;
  out["total_time_s"] = r.job_time_s;
  out["total_energy_j"] = r.job_energy_j;
  out["rank_time_s"] = r.rank_time_s;
  out["rank_energy_j"] = r.rank_energy_j;
  out["epochs"] = r.epochs;
  out["observer_mode"] = r.observe;
  if (r.observe) {
    out["what_if"] = r.what_if ? json::parse(runtime::PowerLimitWhatIfJson(*r.what_if)) : json();
    out["what_if_error"] = r.what_if_error ? json(r.what_if_error->message()) : json();
  }
  if (r.bso != nullptr) {
    out["batch_size"] = *r.bso->batch_size();
    out["trial_number"] = r.bso->trial_number();
    out["converged"] = r.decision.converged;
    out["bso_message"] = r.decision.message;
    out["bso_time_s"] = r.bso->time_s();
    out["bso_energy_j"] = r.bso->energy_j();
  }
  return out.dump(2) + "\n";
}

std::string TextReport(const RunReport& r) {
  const PowerLimitOptimizer& o = *r.optimizer;
  std::string text;
  if (o.optimal_power_limit_mw() && r.observe) {
    text += fmt::format("observer mode: the optimal power limit would be {} W (selector {}{}); the original limits "
                        "were restored\n",
                        Watts(*o.optimal_power_limit_mw()), r.selector,
                        o.profile_loaded() ? ", from the profile file" : "");
  } else if (o.optimal_power_limit_mw()) {
    text += fmt::format("optimal power limit: {} W (selector {}{})\n", Watts(*o.optimal_power_limit_mw()), r.selector,
                        o.profile_loaded() ? ", from the profile file" : "");
  } else {
    text += fmt::format("no power limit chosen ({}): {}\n", runtime::PowerLimitOptimizerStateName(o.state()),
                        o.disabled_reason() ? o.disabled_reason()->message() : "training ended before profiling did");
  }
  text += fmt::format("{:>14} {:>14} {:>12}\n", "power limit W", "energy J", "time s");
  for (const auto& m : o.measurements()) {
    text += fmt::format("{:>14g} {:>14.3f} {:>12.6f}\n", m.power_limit_w, m.energy_j, m.time_s);
  }
  text += fmt::format("total: {:.6f} s, {:.3f} J over {} steps\n", r.job_time_s, r.job_energy_j, r.steps);
  if (r.what_if) text += runtime::FormatPowerLimitWhatIfText(*r.what_if);
  if (r.what_if_error) text += fmt::format("no what-if report: {}\n", r.what_if_error->message());
  if (r.bso != nullptr) {
    text += fmt::format("batch size {} (trial {} of job {}): {} after {} epoch(s), {:.1f} s, {:.0f} J: {}\n",
                        *r.bso->batch_size(), r.bso->trial_number(), r.bso_job_id,
                        r.decision.converged ? "converged" : "did not converge", r.epochs, r.bso->time_s(),
                        r.bso->energy_j(), r.decision.message);
  }
  return text;
}

}  // namespace zeus::emulated_train
