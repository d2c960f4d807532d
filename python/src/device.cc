// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.device: the GPUs and CPUs under Zeus's method names (zeus.device
// returns these objects from get_gpus() and wraps Cpus for get_cpus()). Units
// are Zeus's: mW, mJ, MHz, degrees Celsius. Every read runs with the GIL
// released; failures are raised through ThrowError (kGpu / kCpu), so a missing
// driver is ZeusGPUInitError, an unsupported query ZeusGPUNotSupportedError.

#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "python/src/bindings.h"
#include "python/src/native_monitor.h"
#include "zeus/device/discovery.h"
#include "zeus/device/environment.h"
#include "zeus/zeusd_client/cpu.h"

namespace zeus::python {
namespace {

struct NativeGpus {
  std::unique_ptr<device::GpuSet> set;

  device::Gpu& At(std::size_t index) const {
    if (index >= set->size()) {
      ThrowError(Error(ErrorCode::kNotFound, fmt::format("GPU {} does not exist: {} GPU{} visible", index,
                                                         set->size(), set->size() == 1 ? " is" : "s are")),
                 ErrorDomain::kGpu);
    }
    return set->gpu(index);
  }
};

struct NativeCpus {
  std::unique_ptr<device::CpuSet> set;

  device::Cpu& At(std::size_t index) const {
    if (index >= set->size()) {
      ThrowError(Error(ErrorCode::kNotFound, fmt::format("CPU {} does not exist: {} CPU package{} found", index,
                                                         set->size(), set->size() == 1 ? "" : "s")),
                 ErrorDomain::kCpu);
    }
    return set->cpu(index);
  }
};

// Runs `read` on GPU `index` with the GIL released and returns its value, or raises.
template <class Fn>
auto GpuRead(const NativeGpus& self, std::size_t index, Fn read) {
  device::Gpu& gpu = self.At(index);
  auto result = [&] {
    ReleaseGil release;
    return read(gpu);
  }();
  return Unwrap(std::move(result), ErrorDomain::kGpu);
}

using GpusClass = py::class_<NativeGpus, std::shared_ptr<NativeGpus>>;

// The set's size and driver, and each GPU's identity. Every setter here and
// below takes Zeus's `block` argument and ignores it: every call blocks
// (supports_nonblocking_setters is false).
void RegisterGpuIdentity(GpusClass& gpus) {
  gpus
      .def("__len__", [](const NativeGpus& self) { return self.set->size(); })
      .def_property_readonly("driver_version", [](const NativeGpus& self) { return self.set->driver_version(); })
      .def_property_readonly("emulated", [](const NativeGpus& self) { return self.set->driver_clock() != nullptr; },
                             "Whether these GPUs are the emulator's (NVML or AMD SMI).")
      .def_property_readonly(
          "vendor", [](const NativeGpus& self) { return std::string(device::GpuVendorName(self.set->vendor())); },
          "\"nvidia\" or \"amd\".")
      .def_property_readonly("supports_nonblocking_setters", [](const NativeGpus&) { return false; })
      .def("get_name", [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.Name(); }); })
      .def("get_uuid", [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.Uuid(); }); })
      .def("get_pci_bus_id",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.PciBusId(); }); })
      .def("get_nvml_index", [](const NativeGpus& s, std::size_t i) { return s.At(i).nvml_index(); })
      .def("get_architecture",
           [](const NativeGpus& s, std::size_t i) {
             return std::string(device::GpuArchitectureName(GpuRead(s, i, [](auto& g) { return g.Architecture(); })));
           });
}

// Power limits and persistence mode. The setters of a value make no driver
// call when it is already in force, as Zeus's do.
void RegisterGpuLimits(GpusClass& gpus) {
  gpus
      .def("get_power_management_limit_constraints",
           [](const NativeGpus& s, std::size_t i) {
             device::PowerLimitConstraints c = GpuRead(s, i, [](auto& g) { return g.PowerLimitConstraintsMw(); });
             return py::make_tuple(c.min_mw, c.max_mw);
           })
      .def("get_power_management_limit",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.PowerLimitMw(); }); })
      .def("get_default_power_management_limit",
           [](const NativeGpus& s, std::size_t i) {
             return GpuRead(s, i, [](auto& g) { return g.DefaultPowerLimitMw(); });
           })
      .def(
          "set_power_management_limit",
          [](const NativeGpus& s, std::size_t i, std::uint32_t limit_mw, bool) {
            GpuRead(s, i, [&](auto& g) -> Status {
              // As Zeus: no driver call when the limit is already in force.
              if (auto now = g.PowerLimitMw(); now && *now == limit_mw) return OkStatus();
              return g.SetPowerLimitMw(limit_mw);
            });
          },
          py::arg("gpu_index"), py::arg("power_limit_mw"), py::arg("block") = true)
      .def(
          "reset_power_management_limit",
          [](const NativeGpus& s, std::size_t i, bool) { GpuRead(s, i, [](auto& g) { return g.ResetPowerLimit(); }); },
          py::arg("gpu_index"), py::arg("block") = true)
      .def("get_persistence_mode",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.PersistenceMode(); }); })
      .def(
          "set_persistence_mode",
          [](const NativeGpus& s, std::size_t i, bool enabled, bool) {
            GpuRead(s, i, [&](auto& g) -> Status {
              if (auto now = g.PersistenceMode(); now && *now == enabled) return OkStatus();
              return g.SetPersistenceMode(enabled);
            });
          },
          py::arg("gpu_index"), py::arg("enabled"), py::arg("block") = true);
}

// Supported clocks and locked clock ranges.
void RegisterGpuClocks(GpusClass& gpus) {
  gpus
      .def("get_supported_memory_clocks",
           [](const NativeGpus& s, std::size_t i) {
             return GpuRead(s, i, [](auto& g) { return g.SupportedMemoryClocksMhz(); });
           })
      .def(
          "get_supported_graphics_clocks",
          [](const NativeGpus& s, std::size_t i, std::optional<unsigned int> memory_clock_mhz) {
            return GpuRead(s, i, [&](auto& g) -> Result<std::vector<unsigned int>> {
              unsigned int memory = 0;
              if (memory_clock_mhz) {
                memory = *memory_clock_mhz;
              } else {
                auto current = g.MemoryClockMhz();
                if (!current) return Fail(current.error());
                memory = *current;
              }
              return g.SupportedGraphicsClocksMhz(memory);
            });
          },
          py::arg("gpu_index"), py::arg("memory_clock_mhz") = py::none())
      .def(
          "set_memory_locked_clocks",
          [](const NativeGpus& s, std::size_t i, unsigned int min_mhz, unsigned int max_mhz, bool) {
            GpuRead(s, i, [&](auto& g) { return g.SetMemoryLockedClocks(min_mhz, max_mhz); });
          },
          py::arg("gpu_index"), py::arg("min_clock_mhz"), py::arg("max_clock_mhz"), py::arg("block") = true)
      .def(
          "reset_memory_locked_clocks",
          [](const NativeGpus& s, std::size_t i, bool) {
            GpuRead(s, i, [](auto& g) { return g.ResetMemoryLockedClocks(); });
          },
          py::arg("gpu_index"), py::arg("block") = true)
      .def(
          "set_gpu_locked_clocks",
          [](const NativeGpus& s, std::size_t i, unsigned int min_mhz, unsigned int max_mhz, bool) {
            GpuRead(s, i, [&](auto& g) { return g.SetGpuLockedClocks(min_mhz, max_mhz); });
          },
          py::arg("gpu_index"), py::arg("min_clock_mhz"), py::arg("max_clock_mhz"), py::arg("block") = true)
      .def(
          "reset_gpu_locked_clocks",
          [](const NativeGpus& s, std::size_t i, bool) { GpuRead(s, i, [](auto& g) { return g.ResetGpuLockedClocks(); }); },
          py::arg("gpu_index"), py::arg("block") = true)
      .def(
          "reset_locked_clocks",
          [](const NativeGpus& s, std::size_t i, bool) {
            GpuRead(s, i, [](auto& g) -> Status {
              if (Status gpu = g.ResetGpuLockedClocks(); !gpu) return gpu;
              return g.ResetMemoryLockedClocks();
            });
          },
          py::arg("gpu_index"), py::arg("block") = true);
}

// Power, energy and temperature readings.
void RegisterGpuReadings(GpusClass& gpus) {
  gpus
      .def("get_average_power_usage",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.AveragePowerMw(); }); })
      .def("get_instant_power_usage",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.InstantPowerMw(); }); })
      .def("get_power_usage",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.PowerUsageMw(); }); },
           "The driver's power reading of the GPU, in mW: the average power field at GPU scope (module scope, with "
           "one warning, where the driver offers only that), else nvmlDeviceGetPowerUsage.")
      .def("get_average_memory_power_usage",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.MemoryPowerMw(); }); })
      .def("supports_get_total_energy_consumption",
           [](const NativeGpus& s, std::size_t i) {
             device::Gpu& g = s.At(i);
             ReleaseGil release;
             return g.SupportsEnergyCounter();
           })
      .def("get_total_energy_consumption",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.TotalEnergyMj(); }); })
      .def("get_gpu_temperature",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.TemperatureC(); }); });
}

// The RAPL packages and open_cpus.
void RegisterCpus(py::module_& sub) {
  py::class_<NativeCpus, std::shared_ptr<NativeCpus>>(sub, "CPUs", "The RAPL CPU packages.")
      .def("__len__", [](const NativeCpus& self) { return self.set->size(); })
      .def("get_name", [](const NativeCpus& s, std::size_t i) { return s.At(i).name(); })
      .def("supports_get_dram_energy_consumption", [](const NativeCpus& s, std::size_t i) { return s.At(i).has_dram(); })
      .def(
          "get_total_energy_consumption",
          [](const NativeCpus& s, std::size_t i) {
            device::Cpu& cpu = s.At(i);
            auto energy = [&] {
              ReleaseGil release;
              return cpu.TotalEnergy();
            }();
            device::CpuEnergy e = Unwrap(std::move(energy), ErrorDomain::kCpu);
            return py::make_tuple(e.package_mj, e.dram_mj ? py::object(py::float_(*e.dram_mj)) : py::object(py::none()));
          },
          "(package mJ, DRAM mJ or None), corrected for counter wraparound.");

  sub.def(
      "open_cpus",
      []() {
        auto cpus = [] {
          ReleaseGil release;
          return zeusd::OpenCpusLocalOrZeusd();  // zeusd's when local RAPL is unreadable and ZEUSD_* is set
        }();
        auto out = std::make_shared<NativeCpus>();
        out->set = std::move(Unwrap(std::move(cpus), ErrorDomain::kCpu).cpus);
        if (out->set->empty()) {
          ThrowError(Error(ErrorCode::kUnavailable,
                           fmt::format("no RAPL CPU package found under the powercap root ({}, or ${}); CPU "
                                       "energy cannot be measured on this machine",
                                       device::kDefaultPowercapRoot, device::kPowercapRootVariable)),
                     ErrorDomain::kCpu);
        }
        return out;
      },
      "Opens the RAPL packages (through zeusd when they are unreadable and ZEUSD_* is set). None found: "
      "ZeusCPUInitError.");
}

// An SoC (NVIDIA Jetson) for zeus.device.soc.
struct NativeSoc : ForkAware {
  std::unique_ptr<device::Soc> soc;
};

py::object RailEnergyTuple(const std::optional<device::SocRailEnergy>& e) {
  if (!e) return py::none();
  py::object error = e->last_error ? py::object(py::str(e->last_error->message())) : py::object(py::none());
  return py::make_tuple(e->energy_mj, e->failed_reads, error);
}

void RegisterSoc(py::module_& sub) {
  py::class_<NativeSoc, std::shared_ptr<NativeSoc>>(sub, "Soc", "An SoC whose rails are integrated natively.")
      .def_property_readonly("name", [](const NativeSoc& self) { return self.soc->name(); })
      .def(
          "rails",
          [](const NativeSoc& self) {
            py::list out;
            for (const device::SocRail& r : self.soc->rails()) {
              out.append(py::make_tuple(std::string(device::SocRailKindName(r.kind)), r.name, r.sources));
            }
            return out;
          },
          "[(kind 'cpu'|'gpu'|'total', rail name, files read)] of the measured rails.")
      .def(
          "problems",
          [](const NativeSoc& self) {
            py::list out;
            for (const Error& e : self.soc->problems()) out.append(py::str(e.message()));
            return out;
          },
          "Why each rail found was not measured, naming the file.")
      .def(
          "total_energy",
          [](NativeSoc& self) {
            CheckNotForked(self, "SoC");
            device::SocEnergy e;
            {
              ReleaseGil release;
              e = self.soc->TotalEnergy();
            }
            return py::make_tuple(RailEnergyTuple(e.cpu), RailEnergyTuple(e.gpu), RailEnergyTuple(e.total));
          },
          "(cpu, gpu, total): each None without such a rail, else (cumulative mJ, failed reads since open, "
          "latest failure or None).");

  sub.def(
      "open_soc",
      [](std::optional<std::string> root) {
        device::SocOptions options;
        options.root = std::move(root);
        auto opened = [&] {
          ReleaseGil release;
          return device::OpenSoc(options);
        }();
        auto out = std::make_shared<NativeSoc>();
        out->soc = Unwrap(std::move(opened), ErrorDomain::kSoc);
        RegisterForForkCheck(out);
        return out;
      },
      py::arg("root") = py::none(),
      "Opens the SoC (NVIDIA Jetson) under `root` (default: $ZEUS_SOC_ROOT, else /). None: ZeusSoCInitError "
      "saying why.");
  sub.def("soc_root", [] { return device::ChooseSocRoot(); }, "Where SoC files are looked for: $ZEUS_SOC_ROOT or /.");
  sub.def("powercap_root", [] { return device::ChoosePowercapRoot(); },
          "Where RAPL is read: $ZEUS_POWERCAP_ROOT or /sys/class/powercap.");
}

}  // namespace

void RegisterDevice(py::module_& m) {
  py::module_ sub = m.def_submodule("device", "The GPUs and CPUs, under Zeus's method names.");

  GpusClass gpus(sub, "GPUs", "The visible GPUs (framework indices).");
  RegisterGpuIdentity(gpus);
  RegisterGpuLimits(gpus);
  RegisterGpuClocks(gpus);
  RegisterGpuReadings(gpus);

  sub.def(
      "open_gpus",
      [](std::optional<std::string> vendor) {
        device::GpuOptions options;
        if (vendor && *vendor == "nvidia") {
          options.vendor = device::GpuVendor::kNvidia;
        } else if (vendor && *vendor == "amd") {
          options.vendor = device::GpuVendor::kAmd;
        } else if (vendor) {
          throw py::value_error("vendor must be \"nvidia\", \"amd\" or None (ZEUS_GPU_VENDOR, else auto)");
        }
        auto opened = [&options] {
          ReleaseGil release;
          return device::OpenGpus(options);
        }();
        auto out = std::make_shared<NativeGpus>();
        out->set = Unwrap(std::move(opened), ErrorDomain::kGpu);
        return out;
      },
      py::arg("vendor") = py::none(),
      "Opens the visible GPUs (CUDA_VISIBLE_DEVICES, on AMD also HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES "
      "applied) of `vendor` (None: ZEUS_GPU_VENDOR, else NVIDIA where NVML has GPUs, else AMD). No driver: "
      "ZeusGPUInitError.");

  sub.def(
      "nvml_gpu_count",
      [] {
        auto count = [] {
          ReleaseGil release;
          return device::CountNvmlGpus();
        }();
        return Unwrap(std::move(count), ErrorDomain::kGpu);
      },
      "How many GPUs NVML ($ZEUS_NVML_LIBRARY, else the driver's) reports, opening none (no counter check; "
      "CUDA_VISIBLE_DEVICES and ZEUS_GPU_VENDOR not applied). No NVML: ZeusGPUInitError; a named library "
      "that cannot load: the error for kNotFound.");

  RegisterCpus(sub);
  RegisterSoc(sub);
}

}  // namespace zeus::python
