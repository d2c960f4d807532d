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
#include "zeus/device/discovery.h"
#include "zeus/zeusd/cpu.h"

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
    py::gil_scoped_release release;
    return read(gpu);
  }();
  return Unwrap(std::move(result), ErrorDomain::kGpu);
}

}  // namespace

void RegisterDevice(py::module_& m) {
  py::module_ sub = m.def_submodule("device", "The GPUs and CPUs, under Zeus's method names.");

  py::class_<NativeGpus, std::shared_ptr<NativeGpus>>(sub, "GPUs", "The visible GPUs (framework indices).")
      .def("__len__", [](const NativeGpus& self) { return self.set->size(); })
      .def_property_readonly("driver_version", [](const NativeGpus& self) { return self.set->driver_version(); })
      .def_property_readonly("emulated", [](const NativeGpus& self) { return self.set->driver_clock() != nullptr; },
                             "Whether these GPUs are the NVML emulator's.")
      .def_property_readonly("supports_nonblocking_setters", [](const NativeGpus&) { return false; })
      .def("get_name", [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.Name(); }); })
      .def("get_uuid", [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.Uuid(); }); })
      .def("get_pci_bus_id",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.PciBusId(); }); })
      .def("get_nvml_index", [](const NativeGpus& s, std::size_t i) { return s.At(i).nvml_index(); })
      .def("get_architecture",
           [](const NativeGpus& s, std::size_t i) {
             return std::string(device::GpuArchitectureName(GpuRead(s, i, [](auto& g) { return g.Architecture(); })));
           })
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
          py::arg("gpu_index"), py::arg("enabled"), py::arg("block") = true)
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
          py::arg("gpu_index"), py::arg("block") = true)
      .def("get_average_power_usage",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.AveragePowerMw(); }); })
      .def("get_instant_power_usage",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.InstantPowerMw(); }); })
      .def("get_power_usage",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.PowerUsageMw(); }); },
           "The driver's power reading (nvmlDeviceGetPowerUsage), in mW.")
      .def("get_average_memory_power_usage",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.MemoryPowerMw(); }); })
      .def("supports_get_total_energy_consumption",
           [](const NativeGpus& s, std::size_t i) {
             device::Gpu& g = s.At(i);
             py::gil_scoped_release release;
             return g.SupportsEnergyCounter();
           })
      .def("get_total_energy_consumption",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.TotalEnergyMj(); }); })
      .def("get_gpu_temperature",
           [](const NativeGpus& s, std::size_t i) { return GpuRead(s, i, [](auto& g) { return g.TemperatureC(); }); });

  sub.def(
      "open_gpus",
      []() {
        auto gpus = [] {
          py::gil_scoped_release release;
          return device::OpenGpus();
        }();
        auto out = std::make_shared<NativeGpus>();
        out->set = Unwrap(std::move(gpus), ErrorDomain::kGpu);
        return out;
      },
      "Opens the visible GPUs (CUDA_VISIBLE_DEVICES applied). No driver: ZeusGPUInitError.");

  py::class_<NativeCpus, std::shared_ptr<NativeCpus>>(sub, "CPUs", "The RAPL CPU packages.")
      .def("__len__", [](const NativeCpus& self) { return self.set->size(); })
      .def("get_name", [](const NativeCpus& s, std::size_t i) { return s.At(i).name(); })
      .def("supports_get_dram_energy_consumption", [](const NativeCpus& s, std::size_t i) { return s.At(i).has_dram(); })
      .def(
          "get_total_energy_consumption",
          [](const NativeCpus& s, std::size_t i) {
            device::Cpu& cpu = s.At(i);
            auto energy = [&] {
              py::gil_scoped_release release;
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
          py::gil_scoped_release release;
          return zeusd::OpenCpusLocalOrZeusd();  // zeusd's when local RAPL is unreadable and ZEUSD_* is set
        }();
        auto out = std::make_shared<NativeCpus>();
        out->set = std::move(Unwrap(std::move(cpus), ErrorDomain::kCpu).cpus);
        if (out->set->empty()) {
          ThrowError(Error(ErrorCode::kUnavailable,
                           "no RAPL CPU package found under the powercap root (/sys/class/powercap, or "
                           "$ZEUS_POWERCAP_ROOT); CPU energy cannot be measured on this machine"),
                     ErrorDomain::kCpu);
        }
        return out;
      },
      "Opens the RAPL packages (through zeusd when they are unreadable and ZEUSD_* is set). None found: "
      "ZeusCPUInitError.");
}

}  // namespace zeus::python
