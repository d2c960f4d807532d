// Copyright 2026 The Zeus C++ Authors.
//
// libzeus-nvml-emulator.so's entry points for power, energy and field values
// (nvmlDeviceGetPowerUsage, nvmlDeviceGetTotalEnergyConsumption,
// nvmlDeviceGetFieldValues) and for power limits (getters, constraints and
// nvmlDeviceSetPowerManagementLimit, which needs root or CAP_SYS_ADMIN as on
// a real driver: caller_privileges.h). Shared machinery:
// nvml_emulator_internal.h.

#include <cstdint>

#include "api_functions.h"
#include "caller_privileges.h"
#include "device/nvml/nvml_abi.h"
#include "nvml_emulator_internal.h"
#include "physics.h"
#include "scenario.h"
#include "shared_state.h"

namespace zeus::emulator {
namespace {

// The module's constant draw on top of the GPU's (0 without a module).
std::uint32_t ModuleExtraMw(const GpuSpec& spec) { return spec.module ? spec.module->extra_mw() : 0; }

}  // namespace
}  // namespace zeus::emulator

using zeus::emulator::ApiFunction;
using zeus::emulator::Emulator;
using zeus::emulator::GpuSpec;
using zeus::emulator::GpuState;
using zeus::emulator::ReadGpuState;
using zeus::emulator::UpdateGpuState;

extern "C" {

// ---- Power and energy ---------------------------------------------------------------

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power_mw) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceGetPowerUsage, device,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
        if (power_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        const std::int64_t lookback_ns = zeus::emulator::PowerLookbackNs(spec);
        return ReadGpuState(emulator, index, lookback_ns, [&](const GpuState& gpu, std::int64_t now_ns) {
          // The board's reading: the whole module's on a superchip.
          *power_mw = zeus::emulator::SensorOf(spec).AverageMw(spec.power, TimelineOf(gpu.limits), now_ns) +
                      zeus::emulator::ModuleExtraMw(spec);
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
        const std::int64_t lookback_ns = zeus::emulator::EnergyLookbackNs(spec);
        return ReadGpuState(emulator, index, lookback_ns, [&](const GpuState& gpu, std::int64_t now_ns) {
          const zeus::emulator::Energy energy = zeus::emulator::CountedEnergy(spec, gpu, now_ns);
          *energy_mj = spec.energy_counter_rate == 1.0
                           ? energy.mj
                           : static_cast<unsigned long long>(static_cast<long double>(energy.mj) *
                                                             static_cast<long double>(spec.energy_counter_rate));
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
                                          emulator, index, zeus::emulator::PowerLookbackNs(spec),
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
                                        const bool field_supported =
                                            instant ? spec.instant_power_supported : spec.average_power_supported;
                                        if (entry.scopeId == NVML_POWER_SCOPE_GPU) {
                                          if (!field_supported || !spec.gpu_scope_power_supported) continue;
                                          entry.value.uiVal = instant ? instant_mw : average_mw;
                                          entry.nvmlReturn = NVML_SUCCESS;
                                        } else if (entry.scopeId == NVML_POWER_SCOPE_MODULE) {
                                          // Only a GPU on a module answers the module scope.
                                          if (!field_supported || !spec.module) continue;
                                          entry.value.uiVal =
                                              (instant ? instant_mw : average_mw) + spec.module->extra_mw();
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
        if (!zeus::emulator::CallerMayChangeGpuSettings()) return NVML_ERROR_NO_PERMISSION;
        if (limit_mw < spec.min_limit_mw || limit_mw > spec.max_limit_mw) return NVML_ERROR_INVALID_ARGUMENT;
        return UpdateGpuState(emulator, index, [&](GpuState& gpu, std::int64_t now_ns) -> nvmlReturn_t {
          zeus::emulator::SetLimit(spec, gpu, now_ns, limit_mw);
          return NVML_SUCCESS;
        });
      });
}

}  // extern "C"
