// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.monitor.ProcessEnergyMonitor: a ProcessEnergyTracker over its
// own GpuSet, sampled by a PeriodicProcessSampler, behind
// zeus.monitor.process.ProcessEnergyMonitor. The same model and code as
// `zeus exporter --per-process` and `zeus monitor --per-process`.

#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "python/src/bindings.h"
#include "python/src/native_monitor.h"
#include "zeus/device/discovery.h"
#include "zeus/device/environment.h"
#include "zeus/monitor/process_energy.h"

namespace zeus::python {
namespace {

struct NativeProcessEnergy : ForkAware {
  std::unique_ptr<device::GpuSet> gpus;
  std::unique_ptr<monitor::ProcessEnergyTracker> tracker;
  std::unique_ptr<monitor::PeriodicProcessSampler> sampler;  // null once stopped

  ~NativeProcessEnergy() override {
    sampler.reset();  // joins the thread before the tracker and the GPUs go
    tracker.reset();
  }
};

double Joules(std::int64_t mj) { return static_cast<double>(mj) / 1000.0; }

Result<std::shared_ptr<NativeProcessEnergy>> Open(double interval_s, const std::map<std::string, double>& idle_power_w,
                                                  double retention_s, std::size_t max_processes,
                                                  const std::optional<std::string>& proc_root) {
  if (!(interval_s > 0) || !(retention_s > 0) || max_processes == 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "ProcessEnergyMonitor: interval and retention must be positive and max_processes at least 1");
  }
  monitor::ProcessEnergyOptions options;
  for (const auto& [model, watts] : idle_power_w) {
    if (!(watts >= 0) || watts > 1e6) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("ProcessEnergyMonitor: idle power of '{}' must be between 0 and 1e6 W", model));
    }
    options.idle.idle_power_mw_by_model[model] = static_cast<std::uint32_t>(std::llround(watts * 1000.0));
  }
  options.ledger.retention = Nanoseconds(retention_s);
  options.ledger.max_entries = max_processes;
  options.identity.proc_root = device::ChooseProcRoot(proc_root);
  auto native = std::make_shared<NativeProcessEnergy>();
  auto gpus = device::OpenGpus();
  if (!gpus) return Fail(gpus.error());
  native->gpus = std::move(*gpus);
  if (native->gpus->empty()) return Fail(ErrorCode::kUnavailable, "ProcessEnergyMonitor: no GPU is visible");
  auto tracker = monitor::ProcessEnergyTracker::Create(*native->gpus, std::move(options));
  if (!tracker) return Fail(tracker.error());
  native->tracker = std::move(*tracker);
  native->sampler = std::make_unique<monitor::PeriodicProcessSampler>(*native->tracker, Nanoseconds(interval_s));
  return native;
}

py::dict Snapshot(NativeProcessEnergy& self) {
  CheckNotForked(self, "ProcessEnergyMonitor");
  monitor::AttributionSnapshot snapshot;
  std::vector<monitor::ProcessLabels> labels;
  {
    ReleaseGil release;
    snapshot = self.tracker->Snapshot();
    for (const auto& entry : snapshot.processes) labels.push_back(self.tracker->Labels(entry.process));
  }
  py::list gpus;
  for (const auto& g : snapshot.gpus) {
    py::dict d;
    d["gpu"] = g.gpu_index;
    d["measured_energy_j"] = Joules(g.measured_energy_mj);
    d["idle_energy_j"] = Joules(g.idle_energy_mj);
    d["unattributed_energy_j"] = Joules(g.unattributed_energy_mj);
    d["other_energy_j"] = Joules(g.other_energy_mj);
    d["ended_energy_j"] = Joules(g.ended_energy_mj);
    gpus.append(d);
  }
  py::list processes;
  for (std::size_t i = 0; i < snapshot.processes.size(); ++i) {
    const auto& e = snapshot.processes[i];
    const auto& l = labels[i];
    py::dict d;
    d["gpu"] = e.gpu_index;
    d["pid"] = e.process.pid;
    d["start_time"] = e.process.start_time;
    d["energy_j"] = Joules(e.energy_mj);
    d["comm"] = l.comm;
    d["user"] = l.user;
    d["slurm_job_id"] = l.slurm_job_id;
    d["slurm_step"] = l.slurm_step;
    d["pod"] = l.pod;
    d["container"] = l.container;
    d["systemd_unit"] = l.systemd_unit;
    processes.append(d);
  }
  py::dict out;
  out["gpus"] = gpus;
  out["processes"] = processes;
  return out;
}

}  // namespace

void RegisterProcessEnergy(py::module_& sub) {
  py::class_<NativeProcessEnergy, std::shared_ptr<NativeProcessEnergy>>(
      sub, "ProcessEnergyMonitor", "Native per-process GPU energy behind zeus.monitor.process.ProcessEnergyMonitor.")
      .def(py::init([](double interval_s, std::map<std::string, double> idle_power_w, double retention_s,
                       std::size_t max_processes, std::optional<std::string> proc_root) {
             Result<std::shared_ptr<NativeProcessEnergy>> native = [&] {
               ReleaseGil release;
               return Open(interval_s, idle_power_w, retention_s, max_processes, proc_root);
             }();
             std::shared_ptr<NativeProcessEnergy> out = Unwrap(std::move(native), ErrorDomain::kGpu);
             RegisterForForkCheck(out);
             return out;
           }),
           py::arg("interval_s"), py::arg("idle_power_w"), py::arg("retention_s"), py::arg("max_processes"),
           py::arg("proc_root") = py::none())
      .def("snapshot", &Snapshot, "Every GPU's energy parts and every live (GPU, process) entry, in joules.")
      .def(
          "stop",
          [](NativeProcessEnergy& self) {
            CheckNotForked(self, "ProcessEnergyMonitor");
            ReleaseGil release;
            if (self.sampler) self.sampler->Stop();
          },
          "Takes a last sample and stops sampling; snapshot() still answers.");
}

}  // namespace zeus::python
