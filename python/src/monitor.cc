// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.monitor: the native side of zeus.monitor.
//
//   Monitor      - a NativeMonitor (native_monitor.h): the opened GPUs and
//                  CPUs and the zeus::monitor::Monitor over them; the state
//                  behind a ZeusMonitor.
//   PowerMonitor - a zeus::monitor::PowerMonitor over its own GpuSet: the
//                  sampler threads behind zeus.monitor.PowerMonitor and
//                  TemperatureMonitor.
//
// Zeus's semantics that need the devices (which GPUs exist, what to do when
// RAPL is not readable) are decided here; window bookkeeping is the C++
// Monitor's. Framework synchronisation is done by the Python layer before it
// calls in, so no native call ever calls back into Python.

#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "python/src/bindings.h"
#include "python/src/native_monitor.h"
#include "zeus/device/discovery.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/zeusd_client/cpu.h"

namespace zeus::python {
namespace {

// Opens what a ZeusMonitor measures, as Zeus does: no NVIDIA driver is no
// GPUs; no RAPL is no CPUs; RAPL that is not readable (root only since Linux
// 5.10) is an error only when CPUs were asked for by index.
// Needs the GIL released (device calls); returns errors for the caller to
// raise, with the domain they belong to in `domain`.
Result<std::shared_ptr<NativeMonitor>> OpenNativeMonitor(const std::optional<std::vector<std::size_t>>& gpu_indices,
                                                         const std::optional<std::vector<std::size_t>>& cpu_indices,
                                                         ErrorDomain& domain) {
  domain = ErrorDomain::kGpu;
  auto native = std::make_shared<NativeMonitor>();
  auto gpus = device::OpenGpus();
  if (gpus) {
    native->gpus = std::move(*gpus);
  } else if (gpus.error().code() == ErrorCode::kUnavailable) {
    native->gpus = std::make_unique<device::GpuSet>("", std::vector<std::unique_ptr<device::Gpu>>{});
  } else {
    return Fail(Error(gpus.error().code(), gpus.error().message()).WithContext("opening the GPUs"));
  }

  domain = ErrorDomain::kCpu;
  std::optional<std::vector<std::size_t>> chosen_cpus = cpu_indices;
  const bool cpus_explicit = cpu_indices && !cpu_indices->empty();
  if (!cpu_indices || !cpu_indices->empty()) {
    // Local RAPL, or zeusd's when it is unreadable and ZEUSD_* is set; a
    // configured daemon that cannot serve is an error, not a silent loss (W13b).
    auto opened = zeusd::OpenCpusLocalOrZeusd(
        {}, cpus_explicit ? zeusd::CpuDemand::kRequired : zeusd::CpuDemand::kIfServed);
    if (!opened && zeusd::ZeusdConfig::FromEnv()) return Fail(opened.error());
    Result<std::unique_ptr<device::CpuSet>> cpus =
        opened ? Result<std::unique_ptr<device::CpuSet>>(std::move(opened->cpus)) : Fail(opened.error());
    if (cpus && !(*cpus)->empty()) {
      // Zeus probes RAPL once at start-up; so do we, on the CPUs asked for.
      std::vector<std::size_t> probe;
      if (cpu_indices) {
        probe = *cpu_indices;
      } else {
        for (std::size_t i = 0; i < (*cpus)->size(); ++i) probe.push_back(i);
      }
      for (std::size_t i : probe) {
        if (i >= (*cpus)->size()) continue;  // Monitor::Create names the bad index
        auto energy = (*cpus)->cpu(i).TotalEnergy();
        if (!energy && energy.error().code() == ErrorCode::kPermissionDenied) {
          if (cpus_explicit) {
            return Fail(ErrorCode::kFailedPrecondition,
                        fmt::format("cpu_indices={} was given, but RAPL is not readable: {}. Reading RAPL needs root "
                                    "since Linux 5.10; run as root, or pass cpu_indices=[] to measure GPUs only",
                                    fmt::join(*cpu_indices, ","), energy.error().message()));
          }
          probe.clear();
          cpus = std::unique_ptr<device::CpuSet>();
          break;
        }
      }
      if (*cpus) native->cpus = std::move(*cpus);
    }
    if (native->cpus == nullptr) {
      if (cpus_explicit) {
        return Fail(ErrorCode::kUnavailable,
                    fmt::format("cpu_indices={} was given, but no RAPL CPU package is available{}; pass "
                                "cpu_indices=[] to measure GPUs only",
                                fmt::join(*cpu_indices, ","), cpus ? "" : fmt::format(" ({})", cpus.error().message())));
      }
      chosen_cpus = std::vector<std::size_t>{};
    }
  }

  domain = ErrorDomain::kGpu;
  native->clock = native->gpus->driver_clock() != nullptr ? native->gpus->driver_clock() : &SteadyClock();
  monitor::MonitorOptions options;
  options.gpu_indices = gpu_indices;
  options.cpu_indices = chosen_cpus;
  options.clock = native->clock;
  // An SoC, as Zeus's get_soc() inside ZeusMonitor: none found is no SoC.
  // Its own instance (not zeus.device.get_soc()'s), integrated on the
  // windows' clock so that a window's SoC energy and time agree.
  device::SocOptions soc_options;
  soc_options.clock = native->clock;
  if (auto soc = device::OpenSoc(soc_options)) native->soc = std::move(*soc);
  options.soc = native->soc.get();
  auto created = monitor::Monitor::Create(native->gpus.get(), native->cpus.get(), std::move(options));
  if (!created) return Fail(created.error());
  native->monitor = std::move(*created);
  return native;
}

// One ended window as the tuple zeus.monitor.energy builds its Measurement
// from: (time_s, {gpu: J}, {cpu: J} or None, {cpu: J} or None, [GPUs whose
// figure is an instant-power estimate], SoC or None). The SoC is
// (cpu_mj, gpu_mj, total_mj, [problems]), each energy None when the SoC has
// no such rail or its read failed in the window (then a problem names the
// file). A device error is raised.
py::tuple MeasurementToTuple(const monitor::Measurement& m, bool any_cpus) {
  py::dict gpu_energy;
  py::list estimated;
  for (const monitor::GpuMeasurement& g : m.gpus) {
    if (g.error) ThrowError(*g.error, ErrorDomain::kGpu);
    gpu_energy[py::int_(g.index)] = py::float_(g.energy_j);
    if (g.source == monitor::EnergySource::kInstantEstimate) estimated.append(py::int_(g.index));
  }
  py::object cpu_energy = py::none();
  py::object dram_energy = py::none();
  if (any_cpus) {
    py::dict cpu;
    py::dict dram;
    for (const monitor::CpuMeasurement& c : m.cpus) {
      if (c.error) ThrowError(*c.error, ErrorDomain::kCpu);
      cpu[py::int_(c.index)] = py::float_(c.package_energy_j);
      if (c.dram_energy_j) dram[py::int_(c.index)] = py::float_(*c.dram_energy_j);
    }
    cpu_energy = cpu;
    if (!dram.empty()) dram_energy = dram;
  }
  py::object soc = py::none();
  if (m.soc) {
    auto mj = [](const std::optional<double>& v) { return v ? py::object(py::float_(*v)) : py::object(py::none()); };
    py::list problems;
    for (const Error& e : m.soc->errors) problems.append(py::str(e.message()));
    soc = py::make_tuple(mj(m.soc->cpu_energy_mj), mj(m.soc->gpu_energy_mj), mj(m.soc->total_energy_mj), problems);
  }
  return py::make_tuple(m.time_s, gpu_energy, cpu_energy, dram_energy, estimated, soc);
}

monitor::Monitor& Live(NativeMonitor& self) {
  CheckNotForked(self, "ZeusMonitor");
  return *self.monitor;
}

// The state behind a zeus.monitor.PowerMonitor or TemperatureMonitor.
struct NativePowerMonitor : ForkAware {
  std::unique_ptr<device::GpuSet> gpus;
  const Clock* clock = nullptr;
  // Null once stopped. Guarded by the GIL (stop() swaps it out).
  std::shared_ptr<monitor::PowerMonitor> power;
  // Which optional domains the first monitored GPU answers.
  bool average_supported = false;
  bool memory_supported = false;
  bool temperature_supported = false;

  ~NativePowerMonitor() override {
    power.reset();  // joins the samplers before the GPUs close
  }
};

// The sample fields a timeline can be asked for.
enum class SampleField { kInstant = 0, kAverage = 1, kMemory = 2, kTemperature = 3 };

std::optional<double> FieldValue(const monitor::PowerSample& s, SampleField field) {
  switch (field) {
    case SampleField::kInstant: return s.instant_mw ? std::optional<double>(*s.instant_mw / 1000.0) : std::nullopt;
    case SampleField::kAverage: return s.average_mw ? std::optional<double>(*s.average_mw / 1000.0) : std::nullopt;
    case SampleField::kMemory: return s.memory_mw ? std::optional<double>(*s.memory_mw / 1000.0) : std::nullopt;
    case SampleField::kTemperature:
      return s.temperature_c ? std::optional<double>(static_cast<double>(*s.temperature_c)) : std::nullopt;
  }
  return std::nullopt;
}

std::optional<monitor::PowerDomain> FieldDomain(SampleField field) {
  switch (field) {
    case SampleField::kInstant: return monitor::PowerDomain::kInstant;
    case SampleField::kAverage: return monitor::PowerDomain::kAverage;
    case SampleField::kMemory: return monitor::PowerDomain::kMemory;
    case SampleField::kTemperature: break;
  }
  return std::nullopt;
}

double Seconds(std::chrono::nanoseconds t) { return std::chrono::duration<double>(t).count(); }
std::shared_ptr<monitor::PowerMonitor> LivePower(NativePowerMonitor& self, const char* what) {
  CheckNotForked(self, what);
  if (self.power == nullptr) {
    throw std::runtime_error(fmt::format("this {} was stopped; create a new one to sample again", what));
  }
  return self.power;
}

Result<std::shared_ptr<NativePowerMonitor>> OpenPowerMonitor(const std::optional<std::vector<std::size_t>>& gpu_indices,
                                                             monitor::PowerMonitorOptions options) {
  auto native = std::make_shared<NativePowerMonitor>();
  auto gpus = device::OpenGpus();
  if (!gpus) return Fail(gpus.error());
  native->gpus = std::move(*gpus);
  std::vector<std::size_t> indices;
  if (gpu_indices) {
    indices = *gpu_indices;
  } else {
    for (std::size_t i = 0; i < native->gpus->size(); ++i) indices.push_back(i);
  }
  if (indices.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "no GPU to monitor: no GPU is visible to this process");
  }
  for (std::size_t i : indices) {
    if (i >= native->gpus->size()) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("GPU {} does not exist: {} GPU{} visible", i,
                                                           native->gpus->size(), native->gpus->size() == 1 ? "" : "s"));
    }
  }
  // Zeus probes the domains on the first GPU.
  device::Gpu& first = native->gpus->gpu(indices.front());
  native->average_supported = first.AveragePowerMw().has_value();
  native->memory_supported = first.MemoryPowerMw().has_value();
  native->temperature_supported = first.TemperatureC().has_value();
  native->clock = native->gpus->driver_clock() != nullptr ? native->gpus->driver_clock() : &SteadyClock();
  options.clock = native->clock;
  options.sample_average_power = options.sample_average_power && native->average_supported;
  options.sample_memory_power = options.sample_memory_power && native->memory_supported;
  options.sample_temperature = options.sample_temperature && native->temperature_supported;
  auto power = monitor::PowerMonitor::Create(*native->gpus, indices, options);
  if (!power) return Fail(power.error());
  native->power = std::move(*power);
  return native;
}

void RegisterPowerMonitor(py::module_& sub) {
  py::class_<NativePowerMonitor, std::shared_ptr<NativePowerMonitor>>(
      sub, "PowerMonitor", "Native sampler threads behind zeus.monitor.PowerMonitor and TemperatureMonitor.")
      .def(py::init([](std::optional<std::vector<std::size_t>> gpu_indices, double interval_s, double slow_interval_s,
                       std::size_t capacity, bool average, bool memory, bool temperature) {
             if (!(interval_s > 0) || !(slow_interval_s > 0)) {
               ThrowError(Error(ErrorCode::kInvalidArgument, "the update period must be positive"));
             }
             monitor::PowerMonitorOptions options;
             options.interval = Nanoseconds(interval_s);
             options.slow_interval = Nanoseconds(slow_interval_s);
             options.capacity = capacity;
             options.sample_average_power = average;
             options.sample_memory_power = memory;
             options.sample_temperature = temperature;
             Result<std::shared_ptr<NativePowerMonitor>> native = [&] {
               ReleaseGil release;
               return OpenPowerMonitor(gpu_indices, options);
             }();
             std::shared_ptr<NativePowerMonitor> out = Unwrap(std::move(native), ErrorDomain::kGpu);
             RegisterForForkCheck(out);
             return out;
           }),
           py::arg("gpu_indices"), py::arg("interval_s"), py::arg("slow_interval_s"), py::arg("capacity"),
           py::arg("average"), py::arg("memory"), py::arg("temperature"))
      .def_property_readonly("gpu_indices",
                             [](NativePowerMonitor& self) { return LivePower(self, "PowerMonitor")->gpu_indices(); })
      .def_readonly("average_supported", &NativePowerMonitor::average_supported)
      .def_readonly("memory_supported", &NativePowerMonitor::memory_supported)
      .def_readonly("temperature_supported", &NativePowerMonitor::temperature_supported)
      .def_property_readonly("emulated_clock",
                             [](NativePowerMonitor& self) { return self.gpus->driver_clock() != nullptr; })
      .def("now", [](NativePowerMonitor& self) { return Seconds(self.clock->Now()); },
           "The samples' clock now, in seconds.")
      .def(
          "timeline",
          [](NativePowerMonitor& self, std::size_t gpu, int field, std::optional<double> start_s,
             std::optional<double> end_s) {
            std::shared_ptr<monitor::PowerMonitor> power = LivePower(self, "PowerMonitor");
            std::vector<monitor::PowerSample> samples;
            {
              ReleaseGil release;
              samples = power->Timeline(gpu);
            }
            py::list out;
            for (const monitor::PowerSample& s : samples) {
              const double t = Seconds(s.time);
              if ((start_s && t < *start_s) || (end_s && t > *end_s)) continue;
              if (auto v = FieldValue(s, static_cast<SampleField>(field))) out.append(py::make_tuple(t, *v));
            }
            return out;
          },
          py::arg("gpu"), py::arg("field"), py::arg("start_s") = py::none(), py::arg("end_s") = py::none(),
          "[(time_s, value)] of the retained samples of `gpu` that read `field` (0 instant W, 1 average W, "
          "2 memory W, 3 temperature C), within [start_s, end_s] inclusive.")
      .def(
          "energy",
          [](NativePowerMonitor& self, std::size_t gpu, double start_s, double end_s, int field) {
            std::shared_ptr<monitor::PowerMonitor> power = LivePower(self, "PowerMonitor");
            const std::optional<monitor::PowerDomain> domain = FieldDomain(static_cast<SampleField>(field));
            if (!domain) ThrowError(Error(ErrorCode::kInvalidArgument, "only power fields (0, 1, 2) hold energy"));
            Result<monitor::EnergyEstimate> energy = [&] {
              ReleaseGil release;
              return power->Energy(gpu, Nanoseconds(start_s), Nanoseconds(end_s), *domain);
            }();
            return Unwrap(std::move(energy), ErrorDomain::kGpu).energy_j;
          },
          py::arg("gpu"), py::arg("start_s"), py::arg("end_s"), py::arg("field") = 0,
          "Energy of `gpu` between two instants of the samples' clock, in J, from the samples of power `field` "
          "(0 instant W, 1 average W, 2 memory W), each held until the next (PowerMonitor::Energy).")
      .def(
          "sample_once",
          [](NativePowerMonitor& self) {
            std::shared_ptr<monitor::PowerMonitor> power = LivePower(self, "PowerMonitor");
            ReleaseGil release;
            power->SampleOnce();
          },
          "Reads every monitored GPU once now.")
      .def("stopped", [](NativePowerMonitor& self) { return self.power == nullptr; })
      .def(
          "stop",
          [](NativePowerMonitor& self) {
            CheckNotForked(self, "PowerMonitor");
            std::shared_ptr<monitor::PowerMonitor> power = std::move(self.power);
            self.power = nullptr;
            ReleaseGil release;
            power.reset();  // joins the samplers (unless another call still holds it: then when that returns)
          },
          "Stops the sampler threads and joins them. Idempotent.");
}

// Every registered object; touched only with the GIL held.
std::vector<std::weak_ptr<ForkAware>>& ForkRegistry() {
  static auto* registry = new std::vector<std::weak_ptr<ForkAware>>();
  return *registry;
}

// os.register_at_fork(after_in_child=...): runs in the child with the GIL.
void MarkForkedInChild() {
  for (const std::weak_ptr<ForkAware>& weak : ForkRegistry()) {
    if (std::shared_ptr<ForkAware> object = weak.lock()) {
      object->forked = true;
      // Kept alive for good: its destructor would join the parent's threads.
      new std::shared_ptr<ForkAware>(std::move(object));
    }
  }
}

}  // namespace

void RegisterForForkCheck(const std::shared_ptr<ForkAware>& object) {
  auto& registry = ForkRegistry();
  std::erase_if(registry, [](const std::weak_ptr<ForkAware>& weak) { return weak.expired(); });
  registry.push_back(object);
}

void CheckNotForked(const ForkAware& object, const char* what) {
  if (object.forked.load(std::memory_order_relaxed)) {
    throw std::runtime_error(fmt::format(
        "this {0} was created before os.fork() and cannot be used in the forked child: its native state (sampler "
        "threads, open windows) belongs to the parent process. Create a new {0} in the child.",
        what));
  }
}

void RegisterMonitor(py::module_& m) {
  py::module_ sub = m.def_submodule("monitor", "Native measurement windows and power sampling.");
  py::module_::import("os").attr("register_at_fork")(py::arg("after_in_child") = py::cpp_function(&MarkForkedInChild));
  RegisterPowerMonitor(sub);
  RegisterProcessEnergy(sub);

  py::class_<NativeMonitor, std::shared_ptr<NativeMonitor>>(sub, "Monitor",
                                                            "The native state behind a zeus.monitor.ZeusMonitor.")
      .def(py::init([](std::optional<std::vector<std::size_t>> gpu_indices,
                       std::optional<std::vector<std::size_t>> cpu_indices) {
             ErrorDomain domain = ErrorDomain::kGpu;
             Result<std::shared_ptr<NativeMonitor>> native = [&] {
               ReleaseGil release;
               return OpenNativeMonitor(gpu_indices, cpu_indices, domain);
             }();
             // Explicit cpu_indices without readable RAPL: ZeusFailedPreconditionError or
             // ZeusCPUInitError, both RuntimeErrors as Zeus raises.
             std::shared_ptr<NativeMonitor> out = Unwrap(std::move(native), domain);
             RegisterForForkCheck(out);
             return out;
           }),
           py::arg("gpu_indices") = py::none(), py::arg("cpu_indices") = py::none())
      .def_property_readonly("gpu_indices", [](NativeMonitor& self) { return self.monitor->gpu_indices(); })
      .def_property_readonly("cpu_indices", [](NativeMonitor& self) { return self.monitor->cpu_indices(); })
      .def_property_readonly("gpu_count", [](NativeMonitor& self) { return self.gpus->size(); })
      .def_property_readonly("emulated_clock",
                             [](NativeMonitor& self) { return self.gpus->driver_clock() != nullptr; },
                             "Whether readings are on the NVML emulator's clock (not the monotonic clock).")
      .def(
          "now",
          [](NativeMonitor& self) {
            return std::chrono::duration<double>(self.clock->Now()).count();
          },
          "The time of the readings' clock, in seconds from an arbitrary origin.")
      .def(
          "begin_window",
          [](NativeMonitor& self, const std::string& name, bool restart) {
            monitor::Monitor& monitor = Live(self);
            Status status;
            {
              ReleaseGil release;
              status = monitor.BeginWindow(name, restart);
            }
            if (!status && status.error().code() == ErrorCode::kAlreadyExists) {
              ThrowError(Error(ErrorCode::kAlreadyExists, fmt::format("Measurement window '{}' already exists", name)));
            }
            Unwrap(std::move(status), ErrorDomain::kGpu);
          },
          py::arg("name"), py::arg("restart") = false)
      .def(
          "end_window",
          [](NativeMonitor& self, const std::string& name, bool cancel) {
            monitor::Monitor& monitor = Live(self);
            Result<monitor::Measurement> measured = [&] {
              ReleaseGil release;
              return monitor.EndWindow(name, cancel);
            }();
            if (!measured && measured.error().code() == ErrorCode::kNotFound) {
              ThrowError(Error(ErrorCode::kNotFound, fmt::format("Measurement window '{}' does not exist", name)));
            }
            return MeasurementToTuple(Unwrap(std::move(measured), ErrorDomain::kGpu), !monitor.cpu_indices().empty());
          },
          py::arg("name"), py::arg("cancel") = false,
          "Ends the window: (time_s, gpu_energy, cpu_energy or None, dram_energy or None, estimated GPUs, "
          "(soc cpu_mj, gpu_mj, total_mj, problems) or None).")
      .def_property_readonly("has_soc", [](NativeMonitor& self) { return self.soc != nullptr; },
                             "Whether an SoC (NVIDIA Jetson) is measured in every window.")
      .def("open_windows", [](NativeMonitor& self) { return Live(self).OpenWindows(); })
      .def(
          "reset_windows",
          [](NativeMonitor& self) {
            monitor::Monitor& monitor = Live(self);
            ReleaseGil release;
            for (const std::string& name : monitor.OpenWindows()) (void)monitor.EndWindow(name, /*cancel=*/true);
          },
          "Drops every open window.")
      .def(
          "instant_power_w",
          [](NativeMonitor& self) {
            Live(self);
            std::vector<std::pair<std::size_t, Result<std::uint32_t>>> reads;
            {
              ReleaseGil release;
              for (std::size_t i : self.monitor->gpu_indices()) reads.emplace_back(i, self.gpus->gpu(i).PowerUsageMw());
            }
            py::dict out;
            for (auto& [i, mw] : reads) out[py::int_(i)] = py::float_(Unwrap(std::move(mw), ErrorDomain::kGpu) / 1000.0);
            return out;
          },
          "The driver's power reading of every monitored GPU, in W.");
}

}  // namespace zeus::python
