// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/monitor_processes.h"

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "base/strings.h"
#include "zeus/device/environment.h"
#include "zeus/monitor/process_energy.h"

namespace zeus::cli {
namespace {

using nlohmann::json;

// Parent chains longer than this are not followed (a loop in a fake tree).
constexpr int kMaxTreeDepth = 256;

double Joules(std::int64_t mj) { return static_cast<double>(mj) / 1000.0; }

// Whether `identity`'s chain of parents reaches `root`.
bool DescendsFrom(const device::ProcessIdentity& identity, std::uint32_t root,
                  const device::ProcessIdentityOptions& where) {
  std::uint32_t pid = identity.parent_pid.value_or(0);
  for (int depth = 0; depth < kMaxTreeDepth && pid > 1; ++depth) {
    if (pid == root) return true;
    auto stat = device::ReadProcessStat(pid, where);
    if (!stat) return false;
    pid = stat->parent_pid;
  }
  return false;
}

}  // namespace

struct ProcessTreeMeasurement::Impl {
  std::unique_ptr<monitor::ProcessEnergyTracker> tracker;
  std::vector<std::size_t> gpu_indices;
  std::unique_ptr<monitor::PeriodicProcessSampler> sampler;
  mutable std::mutex mu;
  std::set<monitor::ProcessKey> tree;  // guarded by mu
};

ProcessTreeMeasurement::ProcessTreeMeasurement(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ProcessTreeMeasurement::~ProcessTreeMeasurement() { Stop(); }

Result<std::unique_ptr<ProcessTreeMeasurement>> ProcessTreeMeasurement::Start(const device::GpuSet& gpus,
                                                                              std::vector<std::size_t> gpu_indices,
                                                                              std::chrono::nanoseconds interval,
                                                                              const Clock* clock,
                                                                              std::map<std::string, std::uint32_t, std::less<>> idle_power_mw_by_model) {
  auto impl = std::make_unique<Impl>();
  Impl* raw = impl.get();
  impl->gpu_indices = std::move(gpu_indices);
  monitor::ProcessEnergyOptions options;
  options.clock = clock;
  options.idle.idle_power_mw_by_model = std::move(idle_power_mw_by_model);
  // A command's report keeps every process for the whole run.
  options.ledger.retention = std::chrono::hours(24 * 365);
  options.ledger.max_entries = 100'000;
  // Where /proc is: $ZEUS_PROC_ROOT as `zeus top` and the exporter read it.
  options.identity.proc_root = device::ChooseProcRoot();
  const auto self = static_cast<std::uint32_t>(::getpid());
  options.on_new_process = [raw, self, where = options.identity](const monitor::ProcessKey& key,
                                                                  const device::ProcessIdentity& identity) {
    if (!DescendsFrom(identity, self, where)) return;
    std::lock_guard lock(raw->mu);
    raw->tree.insert(key);
  };
  auto tracker = monitor::ProcessEnergyTracker::Create(gpus, std::move(options));
  if (!tracker) return Fail(tracker.error());
  impl->tracker = std::move(*tracker);
  // Its first sample, the baseline, is taken before the command starts.
  impl->sampler = std::make_unique<monitor::PeriodicProcessSampler>(*impl->tracker, interval);
  return std::unique_ptr<ProcessTreeMeasurement>(new ProcessTreeMeasurement(std::move(impl)));
}

void ProcessTreeMeasurement::Stop() { impl_->sampler->Stop(); }

json ProcessTreeMeasurement::Report() const {
  const monitor::AttributionSnapshot snapshot = impl_->tracker->Snapshot();
  const std::vector<monitor::GpuIntervalView> views = impl_->tracker->LastIntervals();
  std::set<monitor::ProcessKey> tree;
  {
    std::lock_guard lock(impl_->mu);
    tree = impl_->tree;
  }
  json out = json::array();
  for (std::size_t index : impl_->gpu_indices) {
    json gpu = {{"index", index}};
    std::int64_t measured = 0, idle = 0, unattributed = 0, command = 0, others = 0;
    for (const monitor::GpuEnergyTotals& totals : snapshot.gpus) {
      if (totals.gpu_index != index) continue;
      measured = totals.measured_energy_mj;
      idle = totals.idle_energy_mj;
      unattributed = totals.unattributed_energy_mj;
      others = totals.other_energy_mj + totals.ended_energy_mj;  // not reached with the limits above
    }
    std::vector<const monitor::ProcessEnergyEntry*> entries;
    for (const monitor::ProcessEnergyEntry& e : snapshot.processes) {
      if (e.gpu_index == index) entries.push_back(&e);
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto* a, const auto* b) { return a->energy_mj > b->energy_mj; });
    json processes = json::array();
    for (const monitor::ProcessEnergyEntry* e : entries) {
      const bool in_tree = tree.contains(e->process);
      (in_tree ? command : others) += e->energy_mj;
      const monitor::ProcessLabels labels = impl_->tracker->Labels(e->process);
      processes.push_back({{"pid", e->process.pid},
                           {"comm", labels.comm},
                           {"user", labels.user},
                           {"energy_j", Joules(e->energy_mj)},
                           {"command", in_tree}});
    }
    gpu["measured_energy_j"] = Joules(measured);
    gpu["command_energy_j"] = Joules(command);
    gpu["other_processes_energy_j"] = Joules(others);
    gpu["idle_energy_j"] = Joules(idle);
    gpu["unattributed_energy_j"] = Joules(unattributed);
    gpu["idle_power_source"] = index < views.size() ? monitor::IdlePowerSourceName(views[index].idle_source) : "none";
    gpu["error"] = index < views.size() && views[index].error ? json(views[index].error->message()) : json(nullptr);
    gpu["processes"] = std::move(processes);
    out.push_back(std::move(gpu));
  }
  return out;
}

std::string ProcessTreeMeasurement::Text(const json& report) {
  std::string text = "  per process (a model: idle power, then the active rest by utilization share):\n";
  for (const json& g : report) {
    text += fmt::format("  GPU {}: command {:.2f} J of {:.2f} J (other processes {:.2f} J, idle {:.2f} J [{}], "
                        "unattributed {:.2f} J)\n",
                        g["index"].get<std::size_t>(), g["command_energy_j"].get<double>(),
                        g["measured_energy_j"].get<double>(), g["other_processes_energy_j"].get<double>(),
                        g["idle_energy_j"].get<double>(), g["idle_power_source"].get<std::string>(),
                        g["unattributed_energy_j"].get<double>());
    if (!g["error"].is_null()) text += fmt::format("    no per-process figures: {}\n", g["error"].get<std::string>());
    if (g["idle_power_source"] == "trailing_minimum") {
      text += "    (idle power is the lowest power seen during the run, a loaded power under a steady load: "
              "--idle-power MODEL=WATTS sets it)\n";
    }
    for (const json& p : g["processes"]) {
      text += fmt::format("    pid {:<8} {:<16} {:<10} {:>12.2f} J{}\n", p["pid"].get<std::uint32_t>(),
                          base::EscapeControlCharacters(p["comm"].get<std::string>()),
                          base::EscapeControlCharacters(p["user"].get<std::string>()), p["energy_j"].get<double>(),
                          p["command"].get<bool>() ? "  (command)" : "");
    }
  }
  return text;
}

}  // namespace zeus::cli
