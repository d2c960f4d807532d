// Copyright 2026 The Zeus C++ Authors.
//
// libzeus-amdsmi-emulator.so's entry points for power, energy and power caps:
// amdsmi_get_power_info (socket power in W), amdsmi_get_energy_count (an
// accumulator in units of the GPU's counter resolution, µJ),
// amdsmi_get_power_cap_info (µW) and amdsmi_set_power_cap (µW; needs root or
// CAP_SYS_ADMIN, as the NVML face's limit setter: caller_privileges.h). The
// physics (power model, sensor, limits and their settling, energy
// integration) is the core's, shared with the NVML face. Shared machinery:
// amdsmi_emulator_internal.h.

#include <cmath>
#include <cstdint>

#include "amdsmi_emulator_internal.h"
#include "api_functions.h"
#include "caller_privileges.h"
#include "device/amdsmi/amdsmi_abi.h"
#include "emulator_face.h"
#include "physics.h"
#include "scenario.h"
#include "shared_state.h"

namespace zeus::emulator::amd {
namespace {

// The counted energy in µJ (picojoule-exact before the division), times the
// counter's rate.
long double CountedMicrojoules(const GpuSpec& spec, const Energy& energy) {
  const long double uj = static_cast<long double>(energy.mj) * 1000.0L + static_cast<long double>(energy.rem_pj) / 1e6L;
  return uj * static_cast<long double>(spec.energy_counter_rate);
}

// The accumulator for `uj`: whole units of the resolution, wrapping at 2^64
// as a 64-bit hardware counter would (no realistic run gets there).
uint64_t Accumulator(long double uj, float resolution_uj) {
  constexpr long double kWrap = 18446744073709551616.0L;  // 2^64
  const long double units = std::floor(uj / static_cast<long double>(resolution_uj));
  return static_cast<uint64_t>(units < kWrap ? units : std::fmod(units, kWrap));
}

}  // namespace
}  // namespace zeus::emulator::amd

using zeus::emulator::ApiFunction;
using zeus::emulator::Emulator;
using zeus::emulator::GpuSpec;
using zeus::emulator::GpuState;
using zeus::emulator::amd::MilliwattsToWatts;

extern "C" {

// ---- Power and energy -------------------------------------------------------------------

// current_socket_power: the power drawn at the sensor's latest update, W;
// average_socket_power: the sensor's windowed average, W (both rounded; N/A
// where the scenario's "unsupported" lists them; 0 on a die that reports no
// power); power_limit: the limit in force, W. Voltages are N/A.
amdsmi_status_t amdsmi_get_power_info(amdsmi_processor_handle processor_handle, amdsmi_power_info_t* info) {
  return zeus::emulator::amd::ProcessorCall(
      ApiFunction::amdsmi_get_power_info, processor_handle,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> amdsmi_status_t {
        if (info == nullptr) return AMDSMI_STATUS_INVAL;
        return zeus::emulator::amd::ReadGpuState(
            emulator, index, zeus::emulator::PowerLookbackNs(spec),
            [&](const GpuState& gpu, std::int64_t now_ns) -> amdsmi_status_t {
              const zeus::emulator::LimitTimeline timeline = TimelineOf(gpu.limits);
              const zeus::emulator::PowerSensor sensor = zeus::emulator::SensorOf(spec);
              auto reading = [&](bool supported, auto&& read_mw) -> uint32_t {
                if (!supported) return AMDSMI_NOT_AVAILABLE_U32;
                return spec.reports_power ? MilliwattsToWatts(read_mw()) : 0;
              };
              *info = amdsmi_power_info_t{};
              info->current_socket_power = reading(spec.instant_power_supported,
                                                   [&] { return sensor.InstantMw(spec.power, timeline, now_ns); });
              info->average_socket_power = reading(spec.average_power_supported,
                                                   [&] { return sensor.AverageMw(spec.power, timeline, now_ns); });
              info->gfx_voltage = AMDSMI_NOT_AVAILABLE_U32;
              info->soc_voltage = AMDSMI_NOT_AVAILABLE_U32;
              info->mem_voltage = AMDSMI_NOT_AVAILABLE_U32;
              info->power_limit = MilliwattsToWatts(CurrentLimitMw(gpu.limits));
              return AMDSMI_STATUS_SUCCESS;
            });
      });
}

// *energy_accumulator = floor(counted µJ / resolution), the counted energy
// following the NVML face's counter (update period, reset, rate); 0 for ever
// on a die that reports no power. *timestamp: the emulated time now, ns.
amdsmi_status_t amdsmi_get_energy_count(amdsmi_processor_handle processor_handle, uint64_t* energy_accumulator,
                                        float* counter_resolution, uint64_t* timestamp) {
  return zeus::emulator::amd::ProcessorCall(
      ApiFunction::amdsmi_get_energy_count, processor_handle,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> amdsmi_status_t {
        if (!spec.energy_counter) return AMDSMI_STATUS_NOT_SUPPORTED;
        if (energy_accumulator == nullptr || counter_resolution == nullptr || timestamp == nullptr) {
          return AMDSMI_STATUS_INVAL;
        }
        return zeus::emulator::amd::ReadGpuState(
            emulator, index, zeus::emulator::EnergyLookbackNs(spec),
            [&](const GpuState& gpu, std::int64_t now_ns) -> amdsmi_status_t {
              uint64_t accumulator = 0;
              if (spec.reports_power) {
                const long double uj =
                    zeus::emulator::amd::CountedMicrojoules(spec, zeus::emulator::CountedEnergy(spec, gpu, now_ns));
                accumulator = zeus::emulator::amd::Accumulator(uj, spec.energy_counter_resolution_uj);
              }
              *energy_accumulator = accumulator;
              *counter_resolution = spec.energy_counter_resolution_uj;
              *timestamp = static_cast<uint64_t>(now_ns);
              return AMDSMI_STATUS_SUCCESS;
            });
      });
}

// ---- Power caps ----------------------------------------------------------------------------

// Sensor 0 only (else AMDSMI_STATUS_INVAL). Caps in µW; dpm_cap 0.
amdsmi_status_t amdsmi_get_power_cap_info(amdsmi_processor_handle processor_handle, uint32_t sensor_ind,
                                          amdsmi_power_cap_info_t* info) {
  return zeus::emulator::amd::ProcessorCall(
      ApiFunction::amdsmi_get_power_cap_info, processor_handle,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> amdsmi_status_t {
        if (info == nullptr || sensor_ind != 0) return AMDSMI_STATUS_INVAL;
        return zeus::emulator::amd::ReadGpuState(emulator, index, 0,
                                                 [&](const GpuState& gpu, std::int64_t) -> amdsmi_status_t {
                                                   *info = amdsmi_power_cap_info_t{};
                                                   info->power_cap = uint64_t{CurrentLimitMw(gpu.limits)} * 1000;
                                                   info->default_power_cap = uint64_t{spec.default_limit_mw} * 1000;
                                                   info->dpm_cap = 0;
                                                   info->min_power_cap = uint64_t{spec.min_limit_mw} * 1000;
                                                   info->max_power_cap = uint64_t{spec.max_limit_mw} * 1000;
                                                   return AMDSMI_STATUS_SUCCESS;
                                                 });
      });
}

// Sensor 0 only; `cap` in µW within [min, max] (else AMDSMI_STATUS_INVAL),
// rounded down to a whole mW (the emulator's unit); needs root or
// CAP_SYS_ADMIN (else AMDSMI_STATUS_NO_PERM). Takes effect as the NVML
// face's limit does: it reads back at once, for every process sharing the
// state, and the drawn power settles to it over power_settle_ms.
amdsmi_status_t amdsmi_set_power_cap(amdsmi_processor_handle processor_handle, uint32_t sensor_ind, uint64_t cap) {
  return zeus::emulator::amd::ProcessorCall(
      ApiFunction::amdsmi_set_power_cap, processor_handle,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> amdsmi_status_t {
        if (sensor_ind != 0) return AMDSMI_STATUS_INVAL;
        if (!zeus::emulator::CallerMayChangeGpuSettings()) return AMDSMI_STATUS_NO_PERM;
        if (cap < uint64_t{spec.min_limit_mw} * 1000 || cap > uint64_t{spec.max_limit_mw} * 1000) {
          return AMDSMI_STATUS_INVAL;
        }
        const auto limit_mw = static_cast<std::uint32_t>(cap / 1000);
        return zeus::emulator::amd::UpdateGpuState(emulator, index,
                                                   [&](GpuState& gpu, std::int64_t now_ns) -> amdsmi_status_t {
                                                     zeus::emulator::SetLimit(spec, gpu, now_ns, limit_mw);
                                                     return AMDSMI_STATUS_SUCCESS;
                                                   });
      });
}

}  // extern "C"
