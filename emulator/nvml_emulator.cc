// Copyright 2026 The Zeus C++ Authors.
//
// The C entry points of libzeus-nvml-emulator.so: every function in
// nvml_api.def with NVML's ABI, plus the zeusEmulator* control functions
// (emulator_control.h). Behaviour is documented in the top-level README.
//
// Structure: a process-wide Globals holds the init count and, while
// initialised, one Emulator (the parsed scenario, the GPU handle objects, the
// shared state and the fault injector). Every NVML call takes the Globals lock
// shared (init and shutdown take it exclusively), counts the call and applies
// faults, validates its handle, and then does its work: reading per-GPU state
// from a lock-free snapshot of the shared state, writing it under the
// shared-state locks (shared_state.h). No exception escapes a C entry point:
// each body runs inside a catch-all that returns NVML_ERROR_UNKNOWN.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "api_functions.h"
#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"
#include "faults.h"
#include "physics.h"
#include "return_codes.h"
#include "scenario.h"
#include "shared_state.h"

// NVML's handle type is a pointer to this opaque struct; the emulator defines
// it as its per-GPU object.
struct nvmlDevice_st {
  int index;
};

namespace zeus::emulator {
namespace {

constexpr const char* kConfigEnv = "ZEUS_EMULATOR_CONFIG";

// The per-GPU handle objects. They live for the whole process, like a real
// driver's, so a handle stays the same across nvmlShutdown and a later
// nvmlInit_v2; whether it is valid depends on the scenario then loaded.
std::array<nvmlDevice_st, kMaxScenarioGpus>& DeviceObjects() {
  static std::array<nvmlDevice_st, kMaxScenarioGpus> devices = [] {
    std::array<nvmlDevice_st, kMaxScenarioGpus> all{};
    for (std::size_t i = 0; i < all.size(); ++i) all[i].index = static_cast<int>(i);
    return all;
  }();
  return devices;
}

// Everything loaded by the first nvmlInit_v2, dropped by the last nvmlShutdown.
class Emulator {
 public:
  // Loads the scenario named by $ZEUS_EMULATOR_CONFIG and opens its state.
  // Returns null and sets *error on failure.
  static std::unique_ptr<Emulator> Load(std::string* error) {
    const char* path = std::getenv(kConfigEnv);
    if (path == nullptr || *path == '\0') {
      *error = fmt::format("{} is not set; point it at a scenario JSON file", kConfigEnv);
      return nullptr;
    }
    std::unique_ptr<Emulator> emulator(new Emulator());
    if (!LoadScenarioFile(path, &emulator->scenario_, error)) return nullptr;
    std::string problem;
    emulator->state_ = SharedState::Open(emulator->scenario_, &problem);
    if (emulator->state_ == nullptr) {
      *error = fmt::format("scenario {}: {}", path, problem);
      return nullptr;
    }
    emulator->gpu_count_ = static_cast<int>(emulator->scenario_.gpus.size());
    emulator->faults_ = std::make_unique<FaultInjector>(emulator->scenario_.faults, emulator->gpu_count_);
    return emulator;
  }

  const Scenario& scenario() const { return scenario_; }
  SharedState& state() { return *state_; }
  FaultInjector& faults() { return *faults_; }
  int gpu_count() const { return gpu_count_; }

  // The GPU index of `device`, or kUnknownDevice if it is not one of this
  // scenario's GPUs. Compares addresses only; never dereferences `device`.
  int IndexOf(nvmlDevice_t device) const {
    const auto& devices = DeviceObjects();
    for (int i = 0; i < gpu_count_; ++i) {
      if (device == &devices[static_cast<std::size_t>(i)]) return i;
    }
    return kUnknownDevice;
  }

  // Requires index < gpu_count().
  static nvmlDevice_t Handle(std::size_t index) { return &DeviceObjects()[index]; }

 private:
  Emulator() = default;

  Scenario scenario_;
  std::unique_ptr<SharedState> state_;
  std::unique_ptr<FaultInjector> faults_;
  int gpu_count_ = 0;
};

struct Globals {
  std::shared_mutex mutex;  // guards init_count and emulator
  int init_count = 0;
  std::unique_ptr<Emulator> emulator;

  std::mutex text_mutex;  // guards the strings below
  std::string last_error;
  std::string state_path;
};

// Created on first use and never destroyed, so that a thread still calling
// NVML while the process exits cannot reach a destroyed mutex.
Globals& TheGlobals() {
  static Globals* const globals = new Globals();
  return *globals;
}

// Runs an API call: checks initialisation, counts the call and applies faults
// for the GPU `resolve(emulator)` designates, then runs
// `body(emulator, gpu)`. Never throws.
template <class Resolve, class Body>
nvmlReturn_t Dispatch(ApiFunction function, Resolve&& resolve, Body&& body) noexcept {
  try {
    Globals& globals = TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    Emulator* emulator = globals.emulator.get();
    if (emulator == nullptr) return NVML_ERROR_UNINITIALIZED;
    const int gpu = resolve(*emulator);
    // Latency and hangs block here, with the lock held shared: other calls
    // proceed, and the last nvmlShutdown releases hangs before it waits.
    const FaultAction action = emulator->faults().Decide(function, gpu);
    if (const nvmlReturn_t fault = emulator->faults().Perform(action); fault != NVML_SUCCESS) return fault;
    return body(*emulator, gpu);
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

// A call on a device handle: `body(emulator, spec, index)` runs only for a
// valid handle; an unknown handle gives NVML_ERROR_INVALID_ARGUMENT.
template <class Body>
nvmlReturn_t DeviceCall(ApiFunction function, nvmlDevice_t device, Body&& body) noexcept {
  return Dispatch(
      function, [device](const Emulator& emulator) -> int { return emulator.IndexOf(device); },
      [&body](Emulator& emulator, int gpu) -> nvmlReturn_t {
        if (gpu < 0) return NVML_ERROR_INVALID_ARGUMENT;
        const auto index = static_cast<std::size_t>(gpu);
        return body(emulator, emulator.scenario().gpus[index], index);
      });
}

// A call that addresses no device: `body(emulator)`.
template <class Body>
nvmlReturn_t SystemCall(ApiFunction function, Body&& body) noexcept {
  return Dispatch(
      function, [](const Emulator&) -> int { return kNoDevice; },
      [&body](Emulator& emulator, int) -> nvmlReturn_t { return body(emulator); });
}

// Runs `fn(const GpuState&, now_ns)` on a consistent snapshot of GPU
// `index`'s shared state (taken without locks; see shared_state.h). Returns
// NVML_ERROR_UNKNOWN if the state cannot be read, else what fn returns (fn
// must return nvmlReturn_t).
template <class Fn>
nvmlReturn_t ReadGpuState(Emulator& emulator, std::size_t index, Fn&& fn) {
  GpuState gpu;  // ReadGpu fills all of it that is in use
  std::int64_t now_ns = 0;
  if (!emulator.state().ReadGpu(index, &gpu, &now_ns)) return NVML_ERROR_UNKNOWN;
  return fn(static_cast<const GpuState&>(gpu), now_ns);
}

// Runs `fn(GpuState&, now_ns)` for GPU `index` under the shared-state locks
// and publishes its changes. Returns NVML_ERROR_UNKNOWN if the state cannot be
// locked, else what fn returns (fn must return nvmlReturn_t).
template <class Fn>
nvmlReturn_t UpdateGpuState(Emulator& emulator, std::size_t index, Fn&& fn) {
  nvmlReturn_t result = NVML_ERROR_UNKNOWN;
  const bool locked =
      emulator.state().UpdateGpu(index, [&](GpuState& gpu, std::int64_t now_ns) { result = fn(gpu, now_ns); });
  return locked ? result : NVML_ERROR_UNKNOWN;
}

// NVML's string protocol: INSUFFICIENT_SIZE unless `length` holds the text and
// its NUL.
nvmlReturn_t CopyString(const std::string& text, char* buffer, unsigned int length) {
  if (buffer == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < text.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

// NVML's list protocol: *count in = capacity, out = entries; INSUFFICIENT_SIZE
// (with *count set) if the capacity is too small.
nvmlReturn_t CopyList(const std::vector<unsigned int>& list, unsigned int* count, unsigned int* out) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto needed = static_cast<unsigned int>(list.size());
  if (*count < needed) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::copy(list.begin(), list.end(), out);
  *count = needed;
  return NVML_SUCCESS;
}

PowerSensor SensorOf(const GpuSpec& spec) {
  return PowerSensor{spec.power_update_period_ns, spec.power_average_window_ns};
}

bool IsGraphicsClock(nvmlClockType_t type) { return type == NVML_CLOCK_GRAPHICS || type == NVML_CLOCK_SM; }

// Validates a locked-clock range against a supported list (descending).
bool ClockRangeValid(const std::vector<unsigned int>& supported, unsigned int min_mhz, unsigned int max_mhz) {
  return min_mhz <= max_mhz && min_mhz >= supported.back() && max_mhz <= supported.front();
}

nvmlReturn_t SetClockLock(ApiFunction function, nvmlDevice_t device, bool graphics, bool lock, unsigned int min_mhz,
                          unsigned int max_mhz) {
  return DeviceCall(function, device, [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
    const auto& supported = graphics ? spec.graphics_clocks_mhz : spec.memory_clocks_mhz;
    if (lock && !ClockRangeValid(supported, min_mhz, max_mhz)) return NVML_ERROR_INVALID_ARGUMENT;
    return UpdateGpuState(emulator, index, [&](GpuState& gpu, std::int64_t) -> nvmlReturn_t {
      ClockLock& target = graphics ? gpu.graphics_lock : gpu.memory_lock;
      target = lock ? ClockLock{1, min_mhz, max_mhz, 0} : ClockLock{0, 0, 0, 0};
      return NVML_SUCCESS;
    });
  });
}

}  // namespace
}  // namespace zeus::emulator

using zeus::emulator::ApiFunction;
using zeus::emulator::ClockLock;
using zeus::emulator::Emulator;
using zeus::emulator::FaultAction;
using zeus::emulator::GpuSpec;
using zeus::emulator::GpuState;
using zeus::emulator::ReadGpuState;
using zeus::emulator::UpdateGpuState;

extern "C" {

// ---- Initialisation ------------------------------------------------------------

nvmlReturn_t nvmlInit_v2(void) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    std::unique_lock<std::shared_mutex> lock(globals.mutex);
    if (globals.init_count > 0) {
      ++globals.init_count;
      return NVML_SUCCESS;
    }
    std::string error;
    std::unique_ptr<Emulator> emulator = Emulator::Load(&error);
    std::lock_guard<std::mutex> text_lock(globals.text_mutex);
    if (emulator == nullptr) {
      globals.last_error = std::move(error);
      return NVML_ERROR_UNKNOWN;
    }
    globals.last_error.clear();
    globals.state_path = emulator->state().path();
    globals.emulator = std::move(emulator);
    globals.init_count = 1;
    return NVML_SUCCESS;
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

nvmlReturn_t nvmlShutdown(void) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    {
      // The last shutdown must not wait for ever on calls blocked in a hang
      // fault (they hold the lock shared): release them first.
      std::shared_lock<std::shared_mutex> shared(globals.mutex);
      if (globals.init_count == 1) globals.emulator->faults().ReleaseHungCalls();
    }
    std::unique_lock<std::shared_mutex> lock(globals.mutex);
    if (globals.init_count == 0) return NVML_ERROR_UNINITIALIZED;
    if (--globals.init_count == 0) globals.emulator.reset();
    return NVML_SUCCESS;
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

const char* nvmlErrorString(nvmlReturn_t result) { return zeus::emulator::ReturnCodeText(result); }

// ---- System -----------------------------------------------------------------------

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return zeus::emulator::SystemCall(ApiFunction::nvmlSystemGetDriverVersion, [&](Emulator& emulator) -> nvmlReturn_t {
    return zeus::emulator::CopyString(emulator.scenario().driver_version, version, length);
  });
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  return zeus::emulator::SystemCall(ApiFunction::nvmlSystemGetNVMLVersion, [&](Emulator& emulator) -> nvmlReturn_t {
    return zeus::emulator::CopyString(emulator.scenario().nvml_version, version, length);
  });
}

// ---- Enumeration --------------------------------------------------------------------

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* device_count) {
  return zeus::emulator::SystemCall(ApiFunction::nvmlDeviceGetCount_v2, [&](Emulator& emulator) -> nvmlReturn_t {
    if (device_count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *device_count = static_cast<unsigned int>(emulator.gpu_count());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return zeus::emulator::Dispatch(
      ApiFunction::nvmlDeviceGetHandleByIndex_v2,
      [index](const Emulator& emulator) -> int {
        return index < static_cast<unsigned int>(emulator.gpu_count()) ? static_cast<int>(index)
                                                                       : zeus::emulator::kUnknownDevice;
      },
      [&](Emulator& emulator, int gpu) -> nvmlReturn_t {
        if (device == nullptr || gpu < 0) return NVML_ERROR_INVALID_ARGUMENT;
        *device = emulator.Handle(static_cast<std::size_t>(gpu));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  return zeus::emulator::Dispatch(
      ApiFunction::nvmlDeviceGetHandleByUUID,
      [uuid](const Emulator& emulator) -> int {
        if (uuid == nullptr) return zeus::emulator::kUnknownDevice;
        const auto& gpus = emulator.scenario().gpus;
        for (std::size_t i = 0; i < gpus.size(); ++i) {
          if (gpus[i].uuid == uuid) return static_cast<int>(i);
        }
        return zeus::emulator::kUnknownDevice;
      },
      [&](Emulator& emulator, int gpu) -> nvmlReturn_t {
        if (uuid == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (gpu < 0) return NVML_ERROR_NOT_FOUND;
        *device = emulator.Handle(static_cast<std::size_t>(gpu));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetIndex, device,
                                    [&](Emulator&, const GpuSpec&, std::size_t gpu) -> nvmlReturn_t {
                                      if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                      *index = static_cast<unsigned int>(gpu);
                                      return NVML_SUCCESS;
                                    });
}

// ---- Identity -----------------------------------------------------------------------

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetName, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      return zeus::emulator::CopyString(spec.name, name, length);
                                    });
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetUUID, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      return zeus::emulator::CopyString(spec.uuid, uuid, length);
                                    });
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceGetPciInfo_v3, device,
      [&](Emulator&, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
        if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        *pci = nvmlPciInfo_t{};
        std::memcpy(pci->busIdLegacy, spec.pci_bus_id_legacy.c_str(),
                    std::min(spec.pci_bus_id_legacy.size(), sizeof(pci->busIdLegacy) - 1));
        std::memcpy(pci->busId, spec.pci_bus_id.c_str(), std::min(spec.pci_bus_id.size(), sizeof(pci->busId) - 1));
        pci->domain = spec.pci_domain;
        pci->bus = spec.pci_bus;
        pci->device = spec.pci_device;
        // (device id << 16) | NVIDIA's vendor id; the device id is made up.
        pci->pciDeviceId = ((0x2000u + static_cast<unsigned int>(index)) << 16) | 0x10DEu;
        pci->pciSubSystemId = (0x1000u << 16) | 0x10DEu;
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetArchitecture, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      if (arch == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                      *arch = spec.architecture;
                                      return NVML_SUCCESS;
                                    });
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current_mode, unsigned int* pending_mode) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetMigMode, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      if (current_mode == nullptr || pending_mode == nullptr) {
                                        return NVML_ERROR_INVALID_ARGUMENT;
                                      }
                                      *current_mode = spec.mig ? 1u : 0u;
                                      *pending_mode = spec.mig ? 1u : 0u;
                                      return NVML_SUCCESS;
                                    });
}

// ---- Power and energy ---------------------------------------------------------------

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power_mw) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceGetPowerUsage, device,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
        if (power_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        return ReadGpuState(emulator, index, [&](const GpuState& gpu, std::int64_t now_ns) -> nvmlReturn_t {
          *power_mw = zeus::emulator::SensorOf(spec).AverageMw(spec.power, TimelineOf(gpu.limits), now_ns);
          return NVML_SUCCESS;
        });
      });
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy_mj) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceGetTotalEnergyConsumption, device,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
        if (energy_mj == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (!spec.energy_counter) return NVML_ERROR_NOT_SUPPORTED;
        return ReadGpuState(emulator, index, [&](const GpuState& gpu, std::int64_t now_ns) -> nvmlReturn_t {
          // The counter advances only at its update instants.
          const std::int64_t period_ns = spec.counter_update_period_ns;
          const std::int64_t update_ns = period_ns > 0 ? now_ns - now_ns % period_ns : now_ns;
          *energy_mj = CounterEnergyAt(gpu.limits, spec.power, spec.counter_reset_ns, update_ns).mj;
          return NVML_SUCCESS;
        });
      });
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int values_count, nvmlFieldValue_t* values) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetFieldValues, device,
                                    [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
                                      if (values_count < 0 || (values_count > 0 && values == nullptr))
                                        return NVML_ERROR_INVALID_ARGUMENT;
                                      const zeus::emulator::PowerSensor sensor = zeus::emulator::SensorOf(spec);
                                      std::uint32_t instant_mw = 0;
                                      std::uint32_t average_mw = 0;
                                      std::int64_t update_ns = 0;
                                      const nvmlReturn_t read = ReadGpuState(
                                          emulator, index,
                                          [&](const GpuState& gpu, std::int64_t now_ns) -> nvmlReturn_t {
                                            const zeus::emulator::LimitTimeline timeline = TimelineOf(gpu.limits);
                                            update_ns = sensor.LatestUpdateNs(now_ns);
                                            instant_mw = sensor.InstantMw(spec.power, timeline, now_ns);
                                            average_mw = sensor.AverageMw(spec.power, timeline, now_ns);
                                            return NVML_SUCCESS;
                                          });
                                      if (read != NVML_SUCCESS) return read;
                                      for (int i = 0; i < values_count; ++i) {
                                        nvmlFieldValue_t& entry = values[i];
                                        entry.timestamp = update_ns / 1000;
                                        entry.latencyUsec = 0;
                                        entry.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
                                        entry.value.ullVal = 0;
                                        entry.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
                                        const bool instant = entry.fieldId == NVML_FI_DEV_POWER_INSTANT;
                                        if (!instant && entry.fieldId != NVML_FI_DEV_POWER_AVERAGE) continue;
                                        if (entry.scopeId == NVML_POWER_SCOPE_GPU) {
                                          if (instant ? !spec.instant_power_supported
                                                      : !spec.average_power_supported) {
                                            continue;
                                          }
                                          entry.value.uiVal = instant ? instant_mw : average_mw;
                                          entry.nvmlReturn = NVML_SUCCESS;
                                        } else if (entry.scopeId == NVML_POWER_SCOPE_MEMORY &&
                                                   spec.memory_power_supported && spec.memory_power_mw) {
                                          entry.value.uiVal = *spec.memory_power_mw;
                                          entry.nvmlReturn = NVML_SUCCESS;
                                        }
                                      }
                                      return NVML_SUCCESS;
                                    });
}

// ---- Power limits -------------------------------------------------------------------

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit_mw) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetPowerManagementLimit, device,
                                    [&](Emulator& emulator, const GpuSpec&, std::size_t index) -> nvmlReturn_t {
                                      if (limit_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                      return ReadGpuState(emulator, index,
                                                          [&](const GpuState& gpu, std::int64_t) -> nvmlReturn_t {
                                                            *limit_mw = CurrentLimitMw(gpu.limits);
                                                            return NVML_SUCCESS;
                                                          });
                                    });
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int* min_limit_mw,
                                                          unsigned int* max_limit_mw) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetPowerManagementLimitConstraints, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      if (min_limit_mw == nullptr || max_limit_mw == nullptr) {
                                        return NVML_ERROR_INVALID_ARGUMENT;
                                      }
                                      *min_limit_mw = spec.min_limit_mw;
                                      *max_limit_mw = spec.max_limit_mw;
                                      return NVML_SUCCESS;
                                    });
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* default_limit_mw) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetPowerManagementDefaultLimit, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      if (default_limit_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                      *default_limit_mw = spec.default_limit_mw;
                                      return NVML_SUCCESS;
                                    });
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit_mw) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetEnforcedPowerLimit, device,
                                    [&](Emulator& emulator, const GpuSpec&, std::size_t index) -> nvmlReturn_t {
                                      if (limit_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                      return ReadGpuState(emulator, index,
                                                          [&](const GpuState& gpu, std::int64_t) -> nvmlReturn_t {
                                                            *limit_mw = CurrentLimitMw(gpu.limits);
                                                            return NVML_SUCCESS;
                                                          });
                                    });
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit_mw) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceSetPowerManagementLimit, device,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
        if (limit_mw < spec.min_limit_mw || limit_mw > spec.max_limit_mw) return NVML_ERROR_INVALID_ARGUMENT;
        return UpdateGpuState(emulator, index, [&](GpuState& gpu, std::int64_t now_ns) -> nvmlReturn_t {
          if (CurrentLimitMw(gpu.limits) != limit_mw) {
            RecordLimitRamp(&gpu.limits, spec.power, spec.counter_reset_ns, now_ns, limit_mw, spec.power_settle_ns);
          }
          return NVML_SUCCESS;
        });
      });
}

// ---- Persistence, temperature, clocks -----------------------------------------------

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceGetPersistenceMode, device,
      [&](Emulator& emulator, const GpuSpec&, std::size_t index) -> nvmlReturn_t {
        if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        return ReadGpuState(emulator, index, [&](const GpuState& gpu, std::int64_t) -> nvmlReturn_t {
          *mode = gpu.persistence_mode != 0 ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
          return NVML_SUCCESS;
        });
      });
}

nvmlReturn_t nvmlDeviceSetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t mode) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceSetPersistenceMode, device,
                                    [&](Emulator& emulator, const GpuSpec&, std::size_t index) -> nvmlReturn_t {
                                      if (mode != NVML_FEATURE_DISABLED && mode != NVML_FEATURE_ENABLED)
                                        return NVML_ERROR_INVALID_ARGUMENT;
                                      return UpdateGpuState(emulator, index,
                                                            [&](GpuState& gpu, std::int64_t) -> nvmlReturn_t {
                                                              gpu.persistence_mode = mode;
                                                              return NVML_SUCCESS;
                                                            });
                                    });
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp_c) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetTemperature, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      if (temp_c == nullptr || sensor != NVML_TEMPERATURE_GPU) {
                                        return NVML_ERROR_INVALID_ARGUMENT;
                                      }
                                      if (!spec.temperature_supported) return NVML_ERROR_NOT_SUPPORTED;
                                      *temp_c = spec.temperature_c;
                                      return NVML_SUCCESS;
                                    });
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock_mhz) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceGetClockInfo, device,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
        if (clock_mhz == nullptr || type > NVML_CLOCK_VIDEO) return NVML_ERROR_INVALID_ARGUMENT;
        if (type == NVML_CLOCK_VIDEO) return NVML_ERROR_NOT_SUPPORTED;
        const bool graphics = zeus::emulator::IsGraphicsClock(type);
        return ReadGpuState(emulator, index, [&](const GpuState& gpu, std::int64_t) -> nvmlReturn_t {
          const ClockLock& lock = graphics ? gpu.graphics_lock : gpu.memory_lock;
          const auto& supported = graphics ? spec.graphics_clocks_mhz : spec.memory_clocks_mhz;
          *clock_mhz = lock.locked != 0 ? lock.max_mhz : supported.front();
          return NVML_SUCCESS;
        });
      });
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock_mhz) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceGetMaxClockInfo, device, [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
        if (clock_mhz == nullptr || type > NVML_CLOCK_VIDEO) {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (type == NVML_CLOCK_VIDEO) return NVML_ERROR_NOT_SUPPORTED;
        *clock_mhz =
            zeus::emulator::IsGraphicsClock(type) ? spec.graphics_clocks_mhz.front() : spec.memory_clocks_mhz.front();
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int* count, unsigned int* clocks_mhz) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetSupportedMemoryClocks, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      return zeus::emulator::CopyList(spec.memory_clocks_mhz, count, clocks_mhz);
                                    });
}

nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memory_clock_mhz,
                                                  unsigned int* count, unsigned int* clocks_mhz) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetSupportedGraphicsClocks, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                      const auto& memory = spec.memory_clocks_mhz;
                                      if (std::find(memory.begin(), memory.end(), memory_clock_mhz) == memory.end())
                                        return NVML_ERROR_NOT_FOUND;
                                      return zeus::emulator::CopyList(spec.graphics_clocks_mhz, count, clocks_mhz);
                                    });
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int min_mhz, unsigned int max_mhz) {
  return zeus::emulator::SetClockLock(ApiFunction::nvmlDeviceSetGpuLockedClocks, device, /*graphics=*/true,
                                      /*lock=*/true, min_mhz, max_mhz);
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  return zeus::emulator::SetClockLock(ApiFunction::nvmlDeviceResetGpuLockedClocks, device, /*graphics=*/true,
                                      /*lock=*/false, 0, 0);
}

nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device, unsigned int min_mhz, unsigned int max_mhz) {
  return zeus::emulator::SetClockLock(ApiFunction::nvmlDeviceSetMemoryLockedClocks, device, /*graphics=*/false,
                                      /*lock=*/true, min_mhz, max_mhz);
}

nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device) {
  return zeus::emulator::SetClockLock(ApiFunction::nvmlDeviceResetMemoryLockedClocks, device, /*graphics=*/false,
                                      /*lock=*/false, 0, 0);
}

// ---- Control functions (emulator_control.h) ------------------------------------------

const char* zeusEmulatorLastError(void) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    std::lock_guard<std::mutex> lock(globals.text_mutex);
    return globals.last_error.c_str();
  } catch (...) {
    return "";
  }
}

const char* zeusEmulatorStatePath(void) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    if (globals.emulator == nullptr) return "";
    std::lock_guard<std::mutex> text_lock(globals.text_mutex);
    return globals.state_path.c_str();
  } catch (...) {
    return "";
  }
}

unsigned long long zeusEmulatorCallCount(const char* function, int gpu) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    if (globals.emulator == nullptr) return 0;
    std::optional<ApiFunction> which;
    if (function != nullptr && std::strcmp(function, "*") != 0) {
      which = zeus::emulator::ApiFunctionFromName(function);
      if (!which) return 0;
    }
    return globals.emulator->faults().CallCount(which, gpu);
  } catch (...) {
    return 0;
  }
}

int zeusEmulatorReleaseHungCalls(void) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    if (globals.emulator == nullptr) return ZEUS_EMULATOR_ERROR_UNINITIALIZED;
    globals.emulator->faults().ReleaseHungCalls();
    return ZEUS_EMULATOR_OK;
  } catch (...) {
    return ZEUS_EMULATOR_ERROR_STATE;
  }
}

unsigned long long zeusEmulatorHungCalls(void) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    if (globals.emulator == nullptr) return 0;
    return globals.emulator->faults().HungCalls();
  } catch (...) {
    return 0;
  }
}

int zeusEmulatorAdvanceTimeNs(unsigned long long ns) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    if (globals.emulator == nullptr) return ZEUS_EMULATOR_ERROR_UNINITIALIZED;
    if (globals.emulator->scenario().clock != zeus::emulator::ClockMode::kManual) {
      return ZEUS_EMULATOR_ERROR_WRONG_MODE;
    }
    if (ns > static_cast<unsigned long long>(zeus::emulator::kMaxEmulatedNs)) {
      return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
    }
    using AdvanceResult = zeus::emulator::SharedState::AdvanceResult;
    switch (globals.emulator->state().AdvanceManualClock(static_cast<std::int64_t>(ns))) {
      case AdvanceResult::kOk:
        return ZEUS_EMULATOR_OK;
      case AdvanceResult::kOverflow:
        return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
      case AdvanceResult::kLockFailed:
        return ZEUS_EMULATOR_ERROR_STATE;
    }
    return ZEUS_EMULATOR_ERROR_STATE;
  } catch (...) {
    return ZEUS_EMULATOR_ERROR_STATE;
  }
}

int zeusEmulatorNowNs(unsigned long long* now_ns) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    if (globals.emulator == nullptr) return ZEUS_EMULATOR_ERROR_UNINITIALIZED;
    if (now_ns == nullptr) return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
    std::int64_t now = 0;
    if (!globals.emulator->state().ReadNow(&now)) return ZEUS_EMULATOR_ERROR_STATE;
    *now_ns = static_cast<unsigned long long>(now);
    return ZEUS_EMULATOR_OK;
  } catch (...) {
    return ZEUS_EMULATOR_ERROR_STATE;
  }
}

int zeusEmulatorIterationTimeS(unsigned int gpu, double* seconds) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    Emulator* emulator = globals.emulator.get();
    if (emulator == nullptr) return ZEUS_EMULATOR_ERROR_UNINITIALIZED;
    if (seconds == nullptr || gpu >= static_cast<unsigned int>(emulator->gpu_count())) {
      return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
    }
    const GpuSpec& spec = emulator->scenario().gpus[gpu];
    std::optional<double> result;
    const nvmlReturn_t read =
        ReadGpuState(*emulator, gpu, [&](const GpuState& state, std::int64_t) -> nvmlReturn_t {
          result = spec.power.IterationTimeS(CurrentLimitMw(state.limits));
          return NVML_SUCCESS;
        });
    if (read != NVML_SUCCESS) return ZEUS_EMULATOR_ERROR_STATE;
    if (!result) return ZEUS_EMULATOR_ERROR_WRONG_MODE;
    *seconds = *result;
    return ZEUS_EMULATOR_OK;
  } catch (...) {
    return ZEUS_EMULATOR_ERROR_STATE;
  }
}

}  // extern "C"
