// Copyright 2026 The Zeus C++ Authors.

#include "zeus/runtime/power_limit_what_if.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeus/runtime/power_limit_optimizer.h"

namespace zeus::runtime {
namespace {

using json = nlohmann::json;

std::int64_t Mw(double w) { return std::llround(w * 1000.0); }

Status CheckOptions(const PowerLimitWhatIfOptions& o) {
  auto bad = [](const std::string& what) { return Fail(ErrorCode::kInvalidArgument, "what-if: " + what); };
  if (o.profile_steps < 1) return bad(fmt::format("profile steps must be >= 1, got {}", o.profile_steps));
  if (o.steps_per_epoch < 1) return bad(fmt::format("steps per epoch must be >= 1, got {}", o.steps_per_epoch));
  if (o.epochs < 1) return bad(fmt::format("epochs must be >= 1, got {}", o.epochs));
  if (o.total_gpus < 1) return bad(fmt::format("the job's GPU count must be >= 1, got {}", o.total_gpus));
  if (o.baseline_power_limit_w && !(std::isfinite(*o.baseline_power_limit_w) && *o.baseline_power_limit_w > 0)) {
    return bad(fmt::format("the baseline power limit must be > 0 W, got {}", *o.baseline_power_limit_w));
  }
  return OkStatus();
}

}  // namespace

Result<PowerLimitWhatIfReport> ComputePowerLimitWhatIf(std::span<const optimizer::PowerLimitMeasurement> measurements,
                                                       const PowerLimitWhatIfOptions& options) {
  if (Status s = CheckOptions(options); !s) return Fail(s.error());
  const OptimumSelector selectors[] = {OptimumSelector::Energy(), OptimumSelector::Time(),
                                       OptimumSelector::ZeusCost(options.eta),
                                       OptimumSelector::MaxSlowdown(options.max_slowdown)};
  std::vector<double> chosen_w;
  for (const OptimumSelector& selector : selectors) {
    auto w = SelectPowerLimitW(selector, measurements, options.total_gpus);
    if (!w) return Fail(w.error().WithContext("what-if"));
    chosen_w.push_back(*w);
  }

  PowerLimitWhatIfReport r;
  r.options = options;
  r.measurements.assign(measurements.begin(), measurements.end());
  const double steps = options.profile_steps;
  auto find = [&](double limit_w) -> const optimizer::PowerLimitMeasurement* {
    for (const auto& m : r.measurements) {
      if (Mw(m.power_limit_w) == Mw(limit_w)) return &m;
    }
    return nullptr;
  };

  const optimizer::PowerLimitMeasurement* base =
      options.baseline_power_limit_w ? find(*options.baseline_power_limit_w) : nullptr;
  r.baseline_is_requested = base != nullptr;
  if (base == nullptr) {
    base = &*std::max_element(r.measurements.begin(), r.measurements.end(),
                              [](const auto& a, const auto& b) { return a.power_limit_w < b.power_limit_w; });
  }
  r.baseline_power_limit_w = base->power_limit_w;
  r.baseline_energy_per_step_j = base->energy_j / steps;
  r.baseline_time_per_step_s = base->time_s / steps;
  if (!(r.baseline_energy_per_step_j > 0 && r.baseline_time_per_step_s > 0)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("what-if: the baseline {:g} W measured {} J in {} s; savings need a baseline with "
                            "energy and time above 0",
                            base->power_limit_w, base->energy_j, base->time_s));
  }

  for (const auto& m : r.measurements) {
    bool dominated = false;
    for (const auto& other : r.measurements) {
      if (other.energy_j <= m.energy_j && other.time_s <= m.time_s &&
          (other.energy_j < m.energy_j || other.time_s < m.time_s)) {
        dominated = true;
        break;
      }
    }
    r.pareto.push_back(!dominated);
  }

  const double epoch_steps = static_cast<double>(options.steps_per_epoch);
  const double epochs = static_cast<double>(options.epochs);
  for (std::size_t i = 0; i < chosen_w.size(); ++i) {
    const optimizer::PowerLimitMeasurement* m = find(chosen_w[i]);
    if (m == nullptr) {
      return Fail(ErrorCode::kInternal, fmt::format("what-if: selector {} chose {:g} W, which was not measured",
                                                    selectors[i].Describe(), chosen_w[i]));
    }
    PowerLimitWhatIfChoice c;
    c.selector = selectors[i].Describe();
    c.power_limit_w = m->power_limit_w;
    c.energy_per_step_j = m->energy_j / steps;
    c.time_per_step_s = m->time_s / steps;
    const double energy_saved_step_j = r.baseline_energy_per_step_j - c.energy_per_step_j;
    const double time_saved_step_s = r.baseline_time_per_step_s - c.time_per_step_s;
    c.energy_saved_per_epoch_j = epoch_steps * energy_saved_step_j;
    c.time_saved_per_epoch_s = epoch_steps * time_saved_step_s;
    c.energy_saved_run_j = epochs * c.energy_saved_per_epoch_j;
    c.time_saved_run_s = epochs * c.time_saved_per_epoch_s;
    c.energy_saved_percent = 100.0 * energy_saved_step_j / r.baseline_energy_per_step_j;
    c.time_saved_percent = 100.0 * time_saved_step_s / r.baseline_time_per_step_s;
    r.choices.push_back(std::move(c));
  }
  return r;
}

std::string FormatPowerLimitWhatIfText(const PowerLimitWhatIfReport& r) {
  const auto& o = r.options;
  std::string out = fmt::format(
      "what-if: {} power limits profiled, {} steps each; extrapolated to {} steps per epoch x {} epoch(s), {} GPU(s)\n",
      r.measurements.size(), o.profile_steps, o.steps_per_epoch, o.epochs, o.total_gpus);
  out += fmt::format("baseline: {:g} W{}, {:.6g} J and {:.6g} s per step\n", r.baseline_power_limit_w,
                     r.baseline_is_requested ? ""
                     : o.baseline_power_limit_w
                         ? fmt::format(" (the highest measured; {:g} W was not profiled)", *o.baseline_power_limit_w)
                         : " (the highest measured)",
                     r.baseline_energy_per_step_j, r.baseline_time_per_step_s);
  out += fmt::format("{:>14} {:>14} {:>12} {:>16} {:>14}  {}\n", "power limit W", "energy J", "time s", "energy J/step",
                     "time s/step", "pareto");
  for (std::size_t i = 0; i < r.measurements.size(); ++i) {
    const auto& m = r.measurements[i];
    out += fmt::format("{:>14g} {:>14.3f} {:>12.6f} {:>16.6g} {:>14.6g}  {}\n", m.power_limit_w, m.energy_j, m.time_s,
                       m.energy_j / o.profile_steps, m.time_s / o.profile_steps, r.pareto[i] ? "*" : "");
  }
  out +=
      "selector           limit W   energy saved/epoch J  time saved/epoch s   energy saved/run J    time saved/run "
      "s\n";
  for (const auto& c : r.choices) {
    out += fmt::format("{:<18} {:>7g} {:>14.6g} ({:+.1f}%) {:>12.6g} ({:+.1f}%) {:>20.6g} {:>19.6g}\n", c.selector,
                       c.power_limit_w, c.energy_saved_per_epoch_j, c.energy_saved_percent, c.time_saved_per_epoch_s,
                       c.time_saved_percent, c.energy_saved_run_j, c.time_saved_run_s);
  }
  out += "saved = baseline - chosen (negative: costs more); pareto * = no other limit uses less energy and less time\n";
  return out;
}

std::string PowerLimitWhatIfJson(const PowerLimitWhatIfReport& r) {
  const auto& o = r.options;
  json out;
  out["profile_steps"] = o.profile_steps;
  out["steps_per_epoch"] = o.steps_per_epoch;
  out["epochs"] = o.epochs;
  out["total_gpus"] = o.total_gpus;
  out["eta"] = o.eta;
  out["max_slowdown"] = o.max_slowdown;
  out["baseline"] = {{"power_limit_w", r.baseline_power_limit_w},
                     {"requested", r.baseline_is_requested},
                     {"energy_per_step_j", r.baseline_energy_per_step_j},
                     {"time_per_step_s", r.baseline_time_per_step_s}};
  out["measurements"] = json::array();
  for (std::size_t i = 0; i < r.measurements.size(); ++i) {
    const auto& m = r.measurements[i];
    out["measurements"].push_back({{"power_limit_w", m.power_limit_w},
                                   {"energy_j", m.energy_j},
                                   {"time_s", m.time_s},
                                   {"energy_per_step_j", m.energy_j / o.profile_steps},
                                   {"time_per_step_s", m.time_s / o.profile_steps},
                                   {"pareto", static_cast<bool>(r.pareto[i])}});
  }
  out["selectors"] = json::array();
  for (const auto& c : r.choices) {
    out["selectors"].push_back({{"selector", c.selector},
                                {"power_limit_w", c.power_limit_w},
                                {"energy_per_step_j", c.energy_per_step_j},
                                {"time_per_step_s", c.time_per_step_s},
                                {"energy_saved_per_epoch_j", c.energy_saved_per_epoch_j},
                                {"time_saved_per_epoch_s", c.time_saved_per_epoch_s},
                                {"energy_saved_run_j", c.energy_saved_run_j},
                                {"time_saved_run_s", c.time_saved_run_s},
                                {"energy_saved_percent", c.energy_saved_percent},
                                {"time_saved_percent", c.time_saved_percent}});
  }
  return out.dump(2) + "\n";
}

}  // namespace zeus::runtime
