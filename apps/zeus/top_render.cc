// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/top_render.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "base/strings.h"

namespace zeus::cli {
namespace {

using json = nlohmann::json;
using monitor::GpuEnergyTotals;
using monitor::GpuIntervalView;
using monitor::ProcessKey;
using monitor::ProcessLabels;

constexpr std::size_t kPodChars = 8;
constexpr std::size_t kContainerChars = 12;

double Joules(std::int64_t mj) { return static_cast<double>(mj) / 1000.0; }

// Average watts of `energy_mj` over `duration`; 0 for an empty interval.
double Watts(std::int64_t energy_mj, std::chrono::nanoseconds duration) {
  if (duration.count() <= 0) return 0.0;
  return static_cast<double>(energy_mj) * 1e6 / static_cast<double>(duration.count());
}

// One row of a GPU's process table.
struct ProcessRow {
  ProcessKey process;
  double power_w = 0.0;
  std::int64_t energy_mj = 0;
};

// Everything the text and the JSON say about one GPU.
struct GpuFigures {
  std::size_t index = 0;
  std::string name;
  const GpuIntervalView* view = nullptr;  // null when the tracker gave none
  GpuEnergyTotals totals;
  std::vector<ProcessRow> rows;  // sorted
  double unattributed_w = 0.0;
  double other_w = 0.0;  // this interval's shares of processes without an entry
  std::int64_t other_energy_mj = 0;  // other + ended
};

std::vector<GpuFigures> Collect(const TopFrame& frame) {
  std::size_t count = frame.gpu_names.size();
  for (const auto& v : frame.intervals) count = std::max(count, v.gpu_index + 1);
  for (const auto& t : frame.snapshot.gpus) count = std::max(count, t.gpu_index + 1);
  std::vector<GpuFigures> gpus(count);
  for (std::size_t i = 0; i < count; ++i) {
    gpus[i].index = i;
    gpus[i].totals.gpu_index = i;
    if (i < frame.gpu_names.size()) gpus[i].name = frame.gpu_names[i];
  }
  for (const auto& v : frame.intervals) gpus[v.gpu_index].view = &v;
  for (const auto& t : frame.snapshot.gpus) gpus[t.gpu_index].totals = t;
  for (const auto& entry : frame.snapshot.processes) {
    if (entry.gpu_index >= count) continue;
    gpus[entry.gpu_index].rows.push_back({entry.process, 0.0, entry.energy_mj});
  }
  for (GpuFigures& g : gpus) {
    g.other_energy_mj = g.totals.other_energy_mj + g.totals.ended_energy_mj;
    if (g.view != nullptr) {
      const auto& split = g.view->split;
      g.unattributed_w = Watts(split.unattributed_energy_mj, g.view->duration);
      for (const auto& p : split.processes) {
        auto row = std::find_if(g.rows.begin(), g.rows.end(),
                                [&](const ProcessRow& r) { return r.process == p.process; });
        if (row != g.rows.end()) {
          row->power_w = Watts(p.energy_mj, g.view->duration);
        } else {
          g.other_w += Watts(p.energy_mj, g.view->duration);
        }
      }
    }
    std::sort(g.rows.begin(), g.rows.end(), [](const ProcessRow& a, const ProcessRow& b) {
      return std::make_tuple(-a.power_w, -a.energy_mj, a.process) <
             std::make_tuple(-b.power_w, -b.energy_mj, b.process);
    });
  }
  return gpus;
}

const ProcessLabels& LabelsFor(const TopFrame& frame, const ProcessKey& process) {
  static const ProcessLabels kNone;
  auto it = frame.labels.find(process);
  return it == frame.labels.end() ? kNone : it->second;
}

// A label for the terminal: "-" when empty, control characters escaped (a
// process chooses its own name, ESC sequences included).
std::string OrDash(const std::string& s) { return s.empty() ? "-" : base::EscapeControlCharacters(s); }

std::string GpuLine(const GpuFigures& g) {
  std::string line = fmt::format("GPU {}  {}", g.index, g.name.empty() ? "(unknown model)" : g.name);
  const GpuIntervalView* v = g.view;
  if (v != nullptr && v->power_mw) {
    line += fmt::format("  power {:.1f} W", *v->power_mw / 1000.0);
  } else {
    line += "  power n/a";
  }
  if (v != nullptr) {
    line += fmt::format("  idle {:.1f} W ({})", v->idle_power_mw / 1000.0,
                        monitor::IdlePowerSourceName(v->idle_source));
  }
  line += fmt::format("  energy {:.1f} J", Joules(g.totals.measured_energy_mj));
  return line;
}

constexpr const char* kRowFormat = "  {:>7} {:<10.10} {:<16.16} {:<30.30} {:>9} {:>11}";

void AppendGpu(const TopFrame& frame, const GpuFigures& g, std::vector<std::string>& lines) {
  lines.push_back(GpuLine(g));
  if (g.view != nullptr && g.view->error) lines.push_back("  ! " + g.view->error->message());
  const bool unattributed = g.totals.unattributed_energy_mj != 0 || g.unattributed_w != 0.0;
  const bool other = g.other_energy_mj != 0 || g.other_w != 0.0;
  if (g.rows.empty() && !unattributed && !other) {
    lines.push_back("  (no processes)");
    return;
  }
  lines.push_back(fmt::format(kRowFormat, "PID", "USER", "COMMAND", "JOB", "POWER W", "ENERGY J"));
  for (const ProcessRow& r : g.rows) {
    const ProcessLabels& l = LabelsFor(frame, r.process);
    lines.push_back(fmt::format(kRowFormat, r.process.pid, OrDash(l.user), OrDash(l.comm), JobColumn(l),
                                fmt::format("{:.1f}", r.power_w), fmt::format("{:.1f}", Joules(r.energy_mj))));
  }
  if (unattributed) {
    lines.push_back(fmt::format(kRowFormat, "", "", "unattributed", "", fmt::format("{:.1f}", g.unattributed_w),
                                fmt::format("{:.1f}", Joules(g.totals.unattributed_energy_mj))));
  }
  if (other) {
    lines.push_back(fmt::format(kRowFormat, "", "", "other", "(capped or ended)", fmt::format("{:.1f}", g.other_w),
                                fmt::format("{:.1f}", Joules(g.other_energy_mj))));
  }
}

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

}  // namespace

std::string TruncateLine(std::string_view line, std::size_t width) {
  if (width == 0 || line.size() <= width) return std::string(line);
  std::size_t cut = width;
  // Back off continuation bytes (10xxxxxx) so a character is never split.
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return std::string(line.substr(0, cut));
}

std::string JobColumn(const ProcessLabels& labels) {
  if (!labels.slurm_job_id.empty()) {
    return labels.slurm_step.empty() ? "slurm " + labels.slurm_job_id
                                     : fmt::format("slurm {}.{}", labels.slurm_job_id, labels.slurm_step);
  }
  std::string out;
  if (!labels.pod.empty()) out = "pod " + labels.pod.substr(0, kPodChars);
  if (!labels.container.empty()) {
    if (!out.empty()) out += "/";
    out += "ctr " + labels.container.substr(0, kContainerChars);
  }
  if (!out.empty()) return out;
  return OrDash(labels.systemd_unit);
}

std::vector<std::string> RenderTopFrame(const TopFrame& frame, std::size_t width) {
  const std::vector<GpuFigures> gpus = Collect(frame);
  std::vector<std::string> lines;
  std::string header = fmt::format("zeus top  elapsed {:.1f} s  {} GPU{}", ToSeconds(frame.elapsed), gpus.size(),
                                   gpus.size() == 1 ? "" : "s");
  if (frame.refresh.count() > 0) header += fmt::format("  refresh {:.1f} s", ToSeconds(frame.refresh));
  lines.push_back(header);
  for (const GpuFigures& g : gpus) AppendGpu(frame, g, lines);
  // Labels are escaped as they are put in their columns; the rest (a GPU's
  // name from the driver, an error's message quoting a path) here.
  for (std::string& line : lines) line = TruncateLine(base::EscapeControlCharacters(line), width);
  return lines;
}

json TopFrameJson(const TopFrame& frame) {
  json out;
  out["elapsed_s"] = ToSeconds(frame.elapsed);
  out["gpus"] = json::array();
  for (const GpuFigures& g : Collect(frame)) {
    const GpuIntervalView* v = g.view;
    json j;
    j["index"] = g.index;
    j["name"] = OrNull(g.name);
    j["interval_s"] = v != nullptr ? ToSeconds(v->duration) : 0.0;
    j["power_w"] = v != nullptr && v->power_mw ? json(*v->power_mw / 1000.0) : json(nullptr);
    j["idle_power_w"] = v != nullptr ? json(v->idle_power_mw / 1000.0) : json(nullptr);
    j["idle_source"] = v != nullptr ? json(std::string(monitor::IdlePowerSourceName(v->idle_source))) : json(nullptr);
    j["error"] = v != nullptr && v->error ? json(v->error->message()) : json(nullptr);
    j["energy_j"] = Joules(g.totals.measured_energy_mj);
    j["idle_energy_j"] = Joules(g.totals.idle_energy_mj);
    j["unattributed_energy_j"] = Joules(g.totals.unattributed_energy_mj);
    j["unattributed_power_w"] = g.unattributed_w;
    j["other_energy_j"] = Joules(g.other_energy_mj);
    j["other_power_w"] = g.other_w;
    j["processes"] = json::array();
    for (const ProcessRow& r : g.rows) {
      const ProcessLabels& l = LabelsFor(frame, r.process);
      j["processes"].push_back({{"pid", r.process.pid},
                                {"start_time", r.process.start_time},
                                {"comm", OrNull(l.comm)},
                                {"user", OrNull(l.user)},
                                {"slurm_job_id", OrNull(l.slurm_job_id)},
                                {"slurm_step", OrNull(l.slurm_step)},
                                {"pod", OrNull(l.pod)},
                                {"container", OrNull(l.container)},
                                {"systemd_unit", OrNull(l.systemd_unit)},
                                {"power_w", r.power_w},
                                {"energy_j", Joules(r.energy_mj)}});
    }
    out["gpus"].push_back(std::move(j));
  }
  return out;
}

}  // namespace zeus::cli
