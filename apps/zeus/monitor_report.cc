// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/monitor_report.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chart/svg_chart.h"

namespace zeus::cli {
namespace {

using json = nlohmann::json;
using std::chrono::nanoseconds;

// Writes the report to -o FILE or stdout. False (after a message) on failure.
bool EmitReport(const MonitorFlags& flags, const std::string& text) {
  if (flags.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0;
  }
  std::ofstream out(flags.output, std::ios::trunc);
  out << text;
  if (!out.flush()) {
    fmt::print(stderr, "error: --output {}: cannot write the report: {}\n", flags.output, std::strerror(errno));
    return false;
  }
  return true;
}

// Power over the run, a step line per GPU (each reading holds until the next).
chart::Chart PowerChart(const monitor::PowerMonitor& pm, const std::string& command, double time_s) {
  chart::Chart c;
  c.title = "GPU power during the command";
  c.subtitle = fmt::format("{} ({:.2f} s, sampled every {} ms)", command, time_s,
                           std::chrono::duration_cast<std::chrono::milliseconds>(pm.interval()).count());
  c.x_label = "time since start (s)";
  c.y_label = "power (W)";
  c.x_scale = chart::AxisScale::kLinear;
  c.y_scale = chart::AxisScale::kLinear;
  c.x_from_zero = true;
  c.y_from_zero = true;
  c.width_px = 960;
  c.height_px = 480;
  c.background = "white";
  for (std::size_t gpu : pm.gpu_indices()) {
    chart::Series s;
    s.label = fmt::format("GPU {}", gpu);
    s.step = true;
    s.stroke_width = 1.6;
    for (const monitor::PowerSample& sample : pm.Timeline(gpu)) {
      if (!sample.instant_mw) continue;
      s.points.emplace_back(ToSeconds(sample.time - pm.start_time()), *sample.instant_mw / 1000.0);
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

Status WritePlot(const std::string& path, const monitor::PowerMonitor& pm, const std::string& command,
                 double time_s) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Fail(ErrorFromErrno(errno, path).WithContext("--plot"));
  errno = 0;
  out << chart::RenderChart(PowerChart(pm, command, time_s));
  if (!out.flush()) {
    const int err = errno != 0 ? errno : EIO;
    return Fail(Error(ErrorCode::kIoError, fmt::format("--plot {}: cannot write: {}", path, std::strerror(err)),
                      NativeSpace::kErrno, err));
  }
  return OkStatus();
}

// One GPU's entry. The peak is the highest power known in the window: the
// largest reading in force during it (the one at its start included), or the
// average when that is higher (the energy counted more than the readings
// explain: the power changed between two readings, or the window is shorter
// than the sampling interval). So the average never exceeds the peak.
json GpuJson(const monitor::GpuMeasurement& g, double time_s, const monitor::PowerMonitor* power,
             const MeasuredRun& run) {
  json j;
  j["index"] = g.index;
  std::optional<double> avg;
  if (g.error) {
    j["energy_j"] = nullptr;
    j["error"] = g.error->message();
  } else {
    j["energy_j"] = g.energy_j;
    if (time_s > 0) avg = g.energy_j / time_s;
    j["error"] = nullptr;
  }
  auto stats = power ? power->Stats(g.index, run.start, run.end) : Result<monitor::PowerStats>(monitor::PowerStats{});
  std::optional<double> peak;
  std::string peak_from = "readings";
  if (stats && stats->samples > 0) peak = stats->peak_power_w;
  // Energy is known to 1 mJ (the counter's unit): an average above the peak
  // by less than that over the window is the peak, within resolution.
  if (avg && peak && *avg > *peak && *avg - *peak <= 0.001 / time_s + 1e-9 * *peak) avg = peak;
  if (avg && (!peak || *avg > *peak)) {
    peak = avg;
    peak_from = "average";
  }
  j["avg_power_w"] = avg ? json(*avg) : json(nullptr);
  j["peak_power_w"] = peak ? json(*peak) : json(nullptr);
  j["peak_from"] = peak ? json(peak_from) : json(nullptr);
  auto period = power ? power->UpdatePeriod(g.index) : std::nullopt;
  j["update_period_s"] = period ? json(ToSeconds(*period)) : json(nullptr);
  j["source"] = std::string(monitor::EnergySourceName(g.source));
  j["uncertain"] = g.uncertain;
  return j;
}

json CpuJson(const monitor::CpuMeasurement& c, const device::CpuSet& cpus, double wall_time_s) {
  json j;
  j["index"] = c.index;
  j["name"] = cpus.cpu(c.index).name();
  j["energy_j"] = c.error ? json(nullptr) : json(c.package_energy_j);
  j["dram_energy_j"] = c.error || !c.dram_energy_j ? json(nullptr) : json(*c.dram_energy_j);
  // RAPL counts real energy: its average is over wall time, whatever the GPUs' clock.
  j["avg_power_w"] = c.error || wall_time_s <= 0 ? json(nullptr) : json(c.package_energy_j / wall_time_s);
  j["uncertain"] = c.uncertain;
  j["error"] = c.error ? json(c.error->message()) : json(nullptr);
  return j;
}

json RunJson(const MonitorFlags& flags, const Devices& devices, const CommandMeasurement& sampling,
             const MeasuredRun& run) {
  const ChildOutcome& child = run.child;
  const double time_s = run.measurement.time_s;
  json report;
  report["command"] = flags.command;
  report["started"] = !child.exec_error.has_value();
  report["exit_code"] = child.exit_code;
  report["error"] = child.exec_error ? json(*child.exec_error) : json(nullptr);
  report["signal"] = child.signal_received ? json(SignalName(*child.signal_received)) : json(nullptr);
  report["signal_forwarded"] = child.signal_forwarded;
  report["killed_after_grace"] = child.killed_after_grace;
  report["time_s"] = time_s;
  report["wall_time_s"] = run.wall_time_s;
  report["clock"] = sampling.emulator_clock() ? "emulator" : "wall";
  report["gpus"] = json::array();
  for (const monitor::GpuMeasurement& g : run.measurement.gpus) {
    report["gpus"].push_back(GpuJson(g, time_s, sampling.power(), run));
  }
  report["cpus"] = json::array();
  for (const monitor::CpuMeasurement& c : run.measurement.cpus) {
    report["cpus"].push_back(CpuJson(c, *devices.cpus, run.wall_time_s));
  }
  const RemoteMeasurement* remote = sampling.remote();
  const double remote_energy_j = remote ? remote->total_energy_j() : 0.0;
  if (remote) {
    report["zeusd_time_s"] = remote->time_s();
    report["zeusd"] = remote->Report();
    report["zeusd_energy_j"] = remote_energy_j;
  }
  report["total_energy_j"] = run.measurement.total_energy_j + remote_energy_j;
  if (sampling.processes()) report["per_process"] = sampling.processes()->Report();
  if (flags.carbon_zone) {
    const double intensity = flags.carbon_zone->intensity_g_per_kwh;
    for (json& g : report["gpus"]) {
      g["emissions_g"] = g["energy_j"].is_number()
                             ? json(carbon::EmissionsGrams(g["energy_j"].get<double>(), intensity))
                             : json(nullptr);
    }
    for (json& c : report["cpus"]) {
      if (c["energy_j"].is_number()) c["emissions_g"] = carbon::EmissionsGrams(c["energy_j"].get<double>(), intensity);
    }
    report["carbon"] = {{"zone", flags.carbon_zone->code},
                        {"name", flags.carbon_zone->name},
                        {"year", flags.carbon_zone->year},
                        {"intensity_g_per_kwh", intensity},
                        {"source", flags.carbon_source},
                        {"emissions_g", carbon::EmissionsGrams(report["total_energy_j"].get<double>(), intensity)}};
  }
  return report;
}

// The text report's first lines: how the command ended, and the relayed signal.
std::string TextHeader(const MonitorFlags& flags, const CommandMeasurement& sampling, const MeasuredRun& run) {
  const ChildOutcome& child = run.child;
  const double time_s = run.measurement.time_s;
  std::string text;
  if (child.exec_error) {
    text += fmt::format("\nzeus monitor: {}\n", *child.exec_error);
  } else {
    text += fmt::format("\nzeus monitor: {} exited with {} after {:.3f} s", JoinCommand(flags.command),
                        child.exit_code, run.wall_time_s);
    // The emulator's clock shown where it parts from the wall clock (a time_scale, a manual clock).
    if (sampling.emulator_clock() && std::abs(time_s - run.wall_time_s) > 0.05 * run.wall_time_s + 0.01) {
      text += fmt::format(" ({:.3f} s of emulated GPU time)", time_s);
    }
    text += "\n";
  }
  if (child.signal_received) {
    text += fmt::format("  {} {}", SignalName(*child.signal_received),
                        child.signal_forwarded ? "was forwarded to the command"
                                               : "could not be forwarded: the command had exited");
    text += child.killed_after_grace
                ? fmt::format("; its process group was still running {} s later and was killed (SIGKILL)\n",
                              flags.kill_after_s)
                : "\n";
  }
  return text;
}

// The table's rows of the local devices; *short_window when a GPU's peak is its average.
std::string DeviceRows(const json& report, double wall_time_s, bool* short_window) {
  std::string text =
      fmt::format("  {:<10} {:>12} {:>12} {:>12}  {}\n", "device", "energy (J)", "avg (W)", "peak (W)", "how");
  for (const json& g : report["gpus"]) {
    const std::string label = fmt::format("GPU {}", g["index"].get<std::size_t>());
    if (!g["error"].is_null()) {
      text += fmt::format("  {:<10} {:>12} {:>12} {:>12}  error: {}\n", label, "-", "-", "-",
                          g["error"].get<std::string>());
      continue;
    }
    auto number = [](const json& v) { return v.is_null() ? std::string("-") : fmt::format("{:.2f}", v.get<double>()); };
    const bool peak_is_avg = g["peak_from"] == "average";
    *short_window = *short_window || peak_is_avg;
    text += fmt::format("  {:<10} {:>12.2f} {:>12} {:>12}  {}{}\n", label, g["energy_j"].get<double>(),
                        number(g["avg_power_w"]), number(g["peak_power_w"]) + (peak_is_avg ? "*" : ""),
                        g["source"].get<std::string>(), g["uncertain"].get<bool>() ? " (uncertain)" : "");
  }
  for (const json& c : report["cpus"]) {
    const std::string label = c["name"].get<std::string>();
    if (!c["error"].is_null()) {
      text += fmt::format("  {:<10} error: {}\n", label, c["error"].get<std::string>());
      continue;
    }
    text += fmt::format("  {:<10} {:>12.2f} {:>12.2f} {:>12}  rapl{}\n", label, c["energy_j"].get<double>(),
                        c["avg_power_w"].get<double>(), "-", c["uncertain"].get<bool>() ? " (uncertain)" : "");
    if (!c["dram_energy_j"].is_null()) {
      text += fmt::format("  {:<10} {:>12.2f} {:>12.2f} {:>12}  rapl\n", "  dram", c["dram_energy_j"].get<double>(),
                          wall_time_s > 0 ? c["dram_energy_j"].get<double>() / wall_time_s : 0.0, "-");
    }
  }
  return text;
}

std::string RunText(const MonitorFlags& flags, const json& report, const CommandMeasurement& sampling,
                    const MeasuredRun& run) {
  bool short_window = false;
  std::string text = TextHeader(flags, sampling, run) + DeviceRows(report, run.wall_time_s, &short_window);
  if (sampling.remote()) text += sampling.remote()->Text();
  text += fmt::format("  {:<10} {:>12.2f}\n", "total", report["total_energy_j"].get<double>());
  if (report.contains("per_process")) text += ProcessTreeMeasurement::Text(report["per_process"]);
  if (report.contains("carbon")) {
    const json& c = report["carbon"];
    text += fmt::format("  {:<10} {:>12.4f} gCO2eq at {:.2f} gCO2eq/kWh ({}, {} average)\n", "emissions",
                        c["emissions_g"].get<double>(), c["intensity_g_per_kwh"].get<double>(),
                        c["name"].get<std::string>(), c["year"].get<int>());
  }
  if (short_window) {
    text += fmt::format(
        "  * the average is above every power reading (one every {} ms) in the window: the window is short against "
        "the sampling interval or the counter's resolution, or power changed between readings; the peak shown is "
        "the average\n",
        flags.interval_ms);
  }
  return text;
}

// Writes --timeline and --plot; false (after a message) if one failed.
bool WriteFiles(const MonitorFlags& flags, const monitor::PowerMonitor* power, double time_s) {
  bool ok = true;
  if (!flags.timeline.empty() && power) {
    const bool as_json = flags.timeline.ends_with(".json");
    Status s = as_json ? power->WriteTimelineJson(flags.timeline) : power->WriteTimelineCsv(flags.timeline);
    if (!s) {
      fmt::print(stderr, "error: --timeline: {}\n", s.error().message());
      ok = false;
    }
  }
  if (!flags.plot.empty() && power) {
    if (Status s = WritePlot(flags.plot, *power, JoinCommand(flags.command), time_s); !s) {
      fmt::print(stderr, "error: {}\n", s.error().message());
      ok = false;
    }
  }
  return ok;
}

void PrintNotes(const MonitorFlags& flags, const CommandMeasurement& sampling, const MeasuredRun& run) {
  const ChildOutcome& child = run.child;
  if (child.exec_error) fmt::print(stderr, "error: {}\n", *child.exec_error);
  if (child.killed_after_grace) {
    fmt::print(stderr,
               "zeus monitor: the command's process group did not exit within {} s of {}; it was killed with SIGKILL\n",
               flags.kill_after_s, SignalName(*child.signal_received));
  }
  int failures = 0;
  for (const monitor::GpuMeasurement& g : run.measurement.gpus) failures += g.error ? 1 : 0;
  for (const monitor::CpuMeasurement& c : run.measurement.cpus) failures += c.error ? 1 : 0;
  if (failures > 0) fmt::print(stderr, "zeus monitor: {} device(s) could not be measured (see the report)\n", failures);
  if (sampling.remote()) {
    for (const std::string& note : sampling.remote()->notes()) fmt::print(stderr, "zeus monitor: {}\n", note);
  }
}

}  // namespace

std::string JoinCommand(const std::vector<std::string>& command) {
  std::string out;
  for (const std::string& a : command) {
    if (!out.empty()) out += ' ';
    out += a.find_first_of(" \t\"'") == std::string::npos ? a : "'" + a + "'";
  }
  return out;
}

int ReportNotStarted(const MonitorFlags& flags, int signal) {
  const int exit_code = 128 + signal;
  const std::string reason = fmt::format("{} arrived before the command started; it was not run", SignalName(signal));
  std::string text;
  if (flags.json) {
    json report;
    report["command"] = flags.command;
    report["started"] = false;
    report["exit_code"] = exit_code;
    report["signal"] = SignalName(signal);
    report["error"] = reason;
    report["time_s"] = 0.0;
    report["gpus"] = json::array();
    report["cpus"] = json::array();
    report["total_energy_j"] = 0.0;
    text = report.dump(2) + "\n";
  } else {
    text = fmt::format("\nzeus monitor: {}: {}\n", JoinCommand(flags.command), reason);
  }
  (void)EmitReport(flags, text);
  fmt::print(stderr, "zeus monitor: {}\n", reason);
  return exit_code;
}

int ReportRun(const MonitorFlags& flags, const Devices& devices, const CommandMeasurement& sampling,
              const MeasuredRun& run) {
  const json report = RunJson(flags, devices, sampling, run);
  const std::string text = flags.json ? report.dump(2) + "\n" : RunText(flags, report, sampling, run);
  bool written = EmitReport(flags, text);
  written = WriteFiles(flags, sampling.power(), run.measurement.time_s) && written;
  PrintNotes(flags, sampling, run);
  return run.child.exit_code == 0 && !written ? 1 : run.child.exit_code;
}

}  // namespace zeus::cli
