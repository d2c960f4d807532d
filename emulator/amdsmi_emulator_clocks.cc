// Copyright 2026 The Zeus C++ Authors.
//
// libzeus-amdsmi-emulator.so's entry points for temperature
// (amdsmi_get_temp_metric, whole degrees Celsius as AMD SMI 24.7 returns
// them, though its header documents millidegrees), clocks (amdsmi_get_clk_freq,
// Hz) and the performance level (amdsmi_set_gpu_perf_level; AUTO unlocks the
// clocks, which needs root or CAP_SYS_ADMIN as the NVML face's clock
// setters). Shared machinery: amdsmi_emulator_internal.h.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "amdsmi_emulator_internal.h"
#include "api_functions.h"
#include "caller_privileges.h"
#include "device/amdsmi/amdsmi_abi.h"
#include "emulator_face.h"
#include "physics.h"
#include "scenario.h"
#include "shared_state.h"

using zeus::emulator::ApiFunction;
using zeus::emulator::ClockLock;
using zeus::emulator::Emulator;
using zeus::emulator::GpuSpec;
using zeus::emulator::GpuState;

extern "C" {

// EDGE and HOTSPOT both read the GPU's temperature (the scenario's
// temperature_c, or the thermal model's now), in whole °C: AMD SMI 24.7
// divides ROCm SMI's millidegrees by 1000 before returning; other sensors
// and metrics are AMDSMI_STATUS_NOT_SUPPORTED.
amdsmi_status_t amdsmi_get_temp_metric(amdsmi_processor_handle processor_handle, amdsmi_temperature_type_t sensor_type,
                                       amdsmi_temperature_metric_t metric, int64_t* temperature) {
  return zeus::emulator::amd::ProcessorCall(
      ApiFunction::amdsmi_get_temp_metric, processor_handle,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> amdsmi_status_t {
        if (temperature == nullptr) return AMDSMI_STATUS_INVAL;
        const bool known_sensor =
            sensor_type == AMDSMI_TEMPERATURE_TYPE_EDGE || sensor_type == AMDSMI_TEMPERATURE_TYPE_HOTSPOT;
        if (!known_sensor || metric != AMDSMI_TEMP_CURRENT || !spec.temperature_supported) {
          return AMDSMI_STATUS_NOT_SUPPORTED;
        }
        if (!spec.power.thermal()) {
          *temperature = int64_t{spec.temperature_c};
          return AMDSMI_STATUS_SUCCESS;
        }
        return zeus::emulator::amd::ReadGpuState(
            emulator, index, 0, [&](const GpuState& gpu, std::int64_t now_ns) -> amdsmi_status_t {
              const double celsius = TemperatureAt(spec.power, TimelineOf(gpu.limits), now_ns);
              *temperature = std::llround(celsius);
              return AMDSMI_STATUS_SUCCESS;
            });
      });
}

// GFX (the scenario's supported_graphics_clocks_mhz) or MEM
// (supported_memory_clocks_mhz), in Hz and ascending, as the driver lists its
// DPM levels; `current` is the index of the clock in force: the highest, or
// under a lock in the shared state the highest at or below the locked maximum
// (this face has no call that locks clocks). Other clocks:
// AMDSMI_STATUS_NOT_SUPPORTED.
amdsmi_status_t amdsmi_get_clk_freq(amdsmi_processor_handle processor_handle, amdsmi_clk_type_t clk_type,
                                    amdsmi_frequencies_t* frequencies) {
  return zeus::emulator::amd::ProcessorCall(
      ApiFunction::amdsmi_get_clk_freq, processor_handle,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> amdsmi_status_t {
        if (clk_type != AMDSMI_CLK_TYPE_GFX && clk_type != AMDSMI_CLK_TYPE_MEM) return AMDSMI_STATUS_NOT_SUPPORTED;
        if (frequencies == nullptr) return AMDSMI_STATUS_INVAL;
        const bool graphics = clk_type == AMDSMI_CLK_TYPE_GFX;
        // The scenario's lists are descending; AMD SMI's ascending.
        std::vector<unsigned int> mhz = graphics ? spec.graphics_clocks_mhz : spec.memory_clocks_mhz;
        std::reverse(mhz.begin(), mhz.end());
        const std::size_t count = std::min<std::size_t>(mhz.size(), AMDSMI_MAX_NUM_FREQUENCIES);
        return zeus::emulator::amd::ReadGpuState(
            emulator, index, 0, [&](const GpuState& gpu, std::int64_t) -> amdsmi_status_t {
              const ClockLock& lock = graphics ? gpu.graphics_lock : gpu.memory_lock;
              std::size_t current = count - 1;
              if (lock.locked != 0) {
                while (current > 0 && mhz[current] > lock.max_mhz) --current;
              }
              *frequencies = amdsmi_frequencies_t{};
              frequencies->has_deep_sleep = false;
              frequencies->num_supported = static_cast<uint32_t>(count);
              frequencies->current = static_cast<uint32_t>(current);
              for (std::size_t i = 0; i < count; ++i) frequencies->frequency[i] = uint64_t{mhz[i]} * 1'000'000;
              return AMDSMI_STATUS_SUCCESS;
            });
      });
}

// AUTO (the driver's default) unlocks the graphics and memory clocks; it
// needs root or CAP_SYS_ADMIN (else AMDSMI_STATUS_NO_PERM). The emulator
// models no other level: AMDSMI_STATUS_NOT_SUPPORTED.
amdsmi_status_t amdsmi_set_gpu_perf_level(amdsmi_processor_handle processor_handle,
                                          amdsmi_dev_perf_level_t perf_level) {
  return zeus::emulator::amd::ProcessorCall(
      ApiFunction::amdsmi_set_gpu_perf_level, processor_handle,
      [&](Emulator& emulator, const GpuSpec&, std::size_t index) -> amdsmi_status_t {
        if (perf_level != AMDSMI_DEV_PERF_LEVEL_AUTO) return AMDSMI_STATUS_NOT_SUPPORTED;
        if (!zeus::emulator::CallerMayChangeGpuSettings()) return AMDSMI_STATUS_NO_PERM;
        return zeus::emulator::amd::UpdateGpuState(emulator, index,
                                                   [&](GpuState& gpu, std::int64_t) -> amdsmi_status_t {
                                                     gpu.graphics_lock = ClockLock{0, 0, 0, 0};
                                                     gpu.memory_lock = ClockLock{0, 0, 0, 0};
                                                     return AMDSMI_STATUS_SUCCESS;
                                                   });
      });
}

}  // extern "C"
