// Copyright 2026 The Zeus C++ Authors.
//
// libzeus-nvml-emulator.so's entry points for persistence mode, temperature
// and clocks (current, maximum and supported clocks; locked graphics and
// memory clocks). Shared machinery: nvml_emulator_internal.h.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "api_functions.h"
#include "caller_privileges.h"
#include "device/nvml/nvml_abi.h"
#include "nvml_emulator_internal.h"
#include "physics.h"
#include "scenario.h"
#include "shared_state.h"

namespace zeus::emulator {
namespace {

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

bool IsGraphicsClock(nvmlClockType_t type) { return type == NVML_CLOCK_GRAPHICS || type == NVML_CLOCK_SM; }

// Validates a locked-clock range against a supported list (descending).
bool ClockRangeValid(const std::vector<unsigned int>& supported, unsigned int min_mhz, unsigned int max_mhz) {
  return min_mhz <= max_mhz && min_mhz >= supported.back() && max_mhz <= supported.front();
}

nvmlReturn_t SetClockLock(ApiFunction function, nvmlDevice_t device, bool graphics, bool lock, unsigned int min_mhz,
                          unsigned int max_mhz) {
  return DeviceCall(function, device, [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
    if (!CallerMayChangeGpuSettings()) return NVML_ERROR_NO_PERMISSION;
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
using zeus::emulator::GpuSpec;
using zeus::emulator::GpuState;
using zeus::emulator::ReadGpuState;
using zeus::emulator::UpdateGpuState;

extern "C" {

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
                                      if (!zeus::emulator::CallerMayChangeGpuSettings()) {
                                        return NVML_ERROR_NO_PERMISSION;
                                      }
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
                                    [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
                                      if (temp_c == nullptr || sensor != NVML_TEMPERATURE_GPU) {
                                        return NVML_ERROR_INVALID_ARGUMENT;
                                      }
                                      if (!spec.temperature_supported) return NVML_ERROR_NOT_SUPPORTED;
                                      if (!spec.power.thermal()) {
                                        *temp_c = spec.temperature_c;
                                        return NVML_SUCCESS;
                                      }
                                      // The thermal model: the temperature now, to the nearest degree as
                                      // NVML reports it.
                                      return ReadGpuState(
                                          emulator, index, [&](const GpuState& gpu, std::int64_t now_ns) -> nvmlReturn_t {
                                            const double celsius =
                                                TemperatureAt(spec.power, TimelineOf(gpu.limits), now_ns);
                                            *temp_c = static_cast<unsigned int>(std::llround(std::max(0.0, celsius)));
                                            return NVML_SUCCESS;
                                          });
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

}  // extern "C"
