// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/what_if_command.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/zeus/cli_flags.h"
#include "chart/svg_chart.h"
#include "zeus/runtime/power_limit_profile.h"

namespace zeus::cli {
namespace {

struct WhatIfFlags {
  std::string profile;
  std::int64_t steps_per_epoch = 0;
  std::int64_t epochs = 1;
  int profile_steps = 40;
  std::optional<int> gpus;
  double eta = 0.5;
  double max_slowdown = 1.1;
  std::optional<double> baseline_w;
  bool as_json = false;
  std::string svg;
};

int WhatIfFailure(const Error& e) {
  fmt::print(stderr, "error: {}\n", e.message());
  // A profile that does not exist is a bad argument, like a malformed one.
  return e.code() == ErrorCode::kNotFound ? 2 : ExitCodeFor(e.code());
}

int RunWhatIf(const WhatIfFlags& f) {
  // The SVG path is opened first, so a bad one costs nothing.
  std::optional<OutputFile> svg;
  if (!f.svg.empty()) {
    Result<OutputFile> opened = OutputFile::Open("--svg", f.svg);
    if (!opened) return WhatIfFailure(opened.error());
    svg.emplace(std::move(*opened));
  }
  Result<runtime::PowerLimitProfileFile> profile = runtime::LoadPowerLimitProfile(f.profile);
  if (!profile) return WhatIfFailure(profile.error());

  runtime::PowerLimitWhatIfOptions options;
  options.profile_steps = f.profile_steps;
  options.steps_per_epoch = f.steps_per_epoch;
  options.epochs = f.epochs;
  options.total_gpus = f.gpus.value_or(profile->gpu_count.value_or(1));
  options.eta = f.eta;
  options.max_slowdown = f.max_slowdown;
  options.baseline_power_limit_w = f.baseline_w;
  Result<runtime::PowerLimitWhatIfReport> report = runtime::ComputePowerLimitWhatIf(profile->measurements, options);
  if (!report) return WhatIfFailure(report.error().WithContext(f.profile));

  const std::string text =
      f.as_json ? runtime::PowerLimitWhatIfJson(*report) : runtime::FormatPowerLimitWhatIfText(*report);
  std::fputs(text.c_str(), stdout);
  if (std::fflush(stdout) != 0) return 1;
  if (svg) {
    std::string title = "What-if: " + f.profile;
    if (profile->gpu_model) title += " (" + *profile->gpu_model + ")";
    if (Status s = svg->Commit(WhatIfSvg(*report, title)); !s) return WhatIfFailure(s.error());
  }
  return 0;
}

// A labelled point of its own: the baseline, or a selector's choice.
chart::Series PointSeries(std::string label, double time_s, double energy_j) {
  chart::Series s;
  s.label = std::move(label);
  s.line = false;
  s.markers = true;
  s.marker_radius = 4;
  s.points.push_back({time_s, energy_j});
  return s;
}

}  // namespace

std::string WhatIfSvg(const runtime::PowerLimitWhatIfReport& report, const std::string& title) {
  const int steps = report.options.profile_steps;
  chart::Chart c;
  c.title = title;
  c.subtitle = fmt::format("per training step ({} profiled per limit); baseline {:g} W; eta {:g}, max slowdown {:g}",
                           steps, report.baseline_power_limit_w, report.options.eta, report.options.max_slowdown);
  c.x_label = "time per step (s)";
  c.y_label = "energy per step (J)";
  c.x_scale = chart::AxisScale::kLinear;
  c.y_scale = chart::AxisScale::kLinear;
  c.width_px = 1040;
  c.height_px = 520;
  c.background = "white";

  // Points sorted by time, so the front is drawn left to right.
  std::vector<std::size_t> order(report.measurements.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return report.measurements[a].time_s < report.measurements[b].time_s;
  });
  chart::Series all;
  all.label = "power limits";
  all.line = false;
  all.markers = true;
  all.marker_radius = 4;
  chart::Series front;
  front.label = "Pareto front";
  front.markers = true;
  front.stroke_width = 1.6;
  for (std::size_t i : order) {
    const auto& m = report.measurements[i];
    const std::pair<double, double> point{m.time_s / steps, m.energy_j / steps};
    all.points.push_back(point);
    all.point_labels.push_back(fmt::format("{:g} W", m.power_limit_w));
    if (report.pareto[i]) front.points.push_back(point);
  }
  c.series.push_back(std::move(all));
  c.series.push_back(std::move(front));
  c.series.push_back(PointSeries(fmt::format("baseline {:g} W", report.baseline_power_limit_w),
                                 report.baseline_time_per_step_s, report.baseline_energy_per_step_j));
  for (const auto& choice : report.choices) {
    // The legend is narrow: the selector's name without its parameter (the subtitle has them).
    c.series.push_back(PointSeries(
        fmt::format("{}: {:g} W", choice.selector.substr(0, choice.selector.find('(')), choice.power_limit_w),
        choice.time_per_step_s, choice.energy_per_step_j));
  }
  return chart::RenderChart(c);
}

void RegisterWhatIfCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "what-if", "What the power-limit optimizer would save, from a saved profile (observer mode's report)");
  auto f = std::make_shared<WhatIfFlags>();
  cmd->add_option("PROFILE", f->profile, "Profile file written by the power-limit optimizer (its profile_path)")
      ->required();
  cmd->add_option("--steps-per-epoch", f->steps_per_epoch, "Training steps per epoch of the job to extrapolate to")
      ->required()
      ->transform(IntegerFlag<std::int64_t>(1));
  cmd->add_option("--epochs", f->epochs, "Epochs of the whole run")
      ->transform(IntegerFlag<std::int64_t>(1))
      ->capture_default_str();
  cmd->add_option("--profile-steps", f->profile_steps,
                  "Steps each measurement covers (the optimizer's profile_steps when the profile was made)")
      ->transform(IntegerFlag<int>(1))
      ->capture_default_str();
  cmd->add_option("--gpus", f->gpus, "GPUs in the job, for ZeusCost (default: the file's gpu_count, else 1)")
      ->transform(IntegerFlag<int>(1));
  cmd->add_option("--eta", f->eta, "ZeusCost: energy-time weight, in [0, 1]")
      ->check(NumberRange(0, 1))
      ->capture_default_str();
  cmd->add_option("--max-slowdown", f->max_slowdown, "MaxSlowdown: allowed time factor over the highest limit, >= 1")
      ->check(NumberAtLeast(1))
      ->capture_default_str();
  cmd->add_option("--baseline-w", f->baseline_w,
                  "The limit the job runs at without Zeus, W (default: the highest profiled limit)")
      ->check(PositiveNumber());
  cmd->add_flag("--json", f->as_json, "Print one JSON object instead of text");
  cmd->add_option("--svg", f->svg, "Also write an SVG chart of energy against time per limit, Pareto front marked");
  cmd->footer(
      "Per step = a measurement / --profile-steps. Saved per epoch = --steps-per-epoch x (baseline - chosen) per\n"
      "step; saved per run = --epochs x saved per epoch; negative = costs more. The profiling phase is not\n"
      "deducted (observing and optimizing profile alike). Exit codes: 0 ok, 1 a failed write of --svg, 2 bad\n"
      "flag, a missing or malformed profile, or a bad --svg path (checked before anything is read).");
  cmd->callback([f, exit_code] { *exit_code = RunWhatIf(*f); });
}

}  // namespace zeus::cli
