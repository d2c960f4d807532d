// Copyright 2026 The Zeus C++ Authors.
//
// Private to libzeus-nvml-emulator.so (exports.map hides all of it): what
// the files of its NVML entry points share, over the faces' shared machinery
// (emulator_face.h, which describes the structure). nvml_emulator.cc defines
// the non-template functions below; the entry points are split by API group:
//   nvml_emulator.cc           initialisation, system, enumeration, identity
//   nvml_emulator_power.cc     power, energy, field values, power limits
//   nvml_emulator_clocks.cc    persistence mode, temperature, clocks
//   nvml_emulator_processes.cc per-process calls
// The zeusEmulator* control functions are shared with the AMD SMI face
// (emulator_control.cc, emulator_process_controls.cc).

#ifndef ZEUS_EMULATOR_NVML_EMULATOR_INTERNAL_H_
#define ZEUS_EMULATOR_NVML_EMULATOR_INTERNAL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "api_functions.h"
#include "device/nvml/nvml_abi.h"
#include "emulator_face.h"
#include "faults.h"
#include "scenario.h"
#include "shared_state.h"

// NVML's handle type is a pointer to this opaque struct; the emulator defines
// it as its per-GPU object.
struct nvmlDevice_st {
  int index;
};

namespace zeus::emulator {

inline constexpr const char* kConfigEnv = "ZEUS_EMULATOR_CONFIG";

// The NVML codes the shared machinery returns.
struct NvmlCodes {
  using Code = nvmlReturn_t;
  static constexpr Code kSuccess = NVML_SUCCESS;
  static constexpr Code kNotInitialised = NVML_ERROR_UNINITIALIZED;
  static constexpr Code kUnknown = NVML_ERROR_UNKNOWN;
  static constexpr Code kException = NVML_ERROR_UNKNOWN;
};

// The per-GPU handle objects. They live for the whole process, like a real
// driver's, so a handle stays the same across nvmlShutdown and a later
// nvmlInit_v2; whether it is valid depends on the scenario then loaded.
std::array<nvmlDevice_st, kMaxScenarioGpus>& DeviceObjects();

// The GPU index of `device`, or kUnknownDevice if it is not one of the
// loaded scenario's GPUs. Never dereferences `device`.
inline int IndexOf(const Emulator& emulator, nvmlDevice_t device) {
  return IndexOfHandle(DeviceObjects(), device, emulator.gpu_count());
}

// The handle of GPU `index`. Requires index < gpu_count().
inline nvmlDevice_t Handle(std::size_t index) { return &DeviceObjects()[index]; }

// core::Dispatch with NVML's codes.
template <class Resolve, class Body>
nvmlReturn_t Dispatch(ApiFunction function, Resolve&& resolve, Body&& body) noexcept {
  return core::Dispatch<NvmlCodes>(function, std::forward<Resolve>(resolve), std::forward<Body>(body));
}

// A call on a device handle: `body(emulator, spec, index)` runs only for a
// valid handle; an unknown handle gives NVML_ERROR_INVALID_ARGUMENT.
template <class Body>
nvmlReturn_t DeviceCall(ApiFunction function, nvmlDevice_t device, Body&& body) noexcept {
  return Dispatch(
      function, [device](const Emulator& emulator) -> int { return IndexOf(emulator, device); },
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

// core::ReadGpuState with NVML's codes (fn must return nvmlReturn_t).
template <class Fn>
nvmlReturn_t ReadGpuState(Emulator& emulator, std::size_t index, std::int64_t lookback_ns, Fn&& fn) {
  return core::ReadGpuState<NvmlCodes>(emulator, index, lookback_ns, std::forward<Fn>(fn));
}

// The same for readings of the present only (limits, clocks, persistence).
template <class Fn>
nvmlReturn_t ReadGpuState(Emulator& emulator, std::size_t index, Fn&& fn) {
  return core::ReadGpuState<NvmlCodes>(emulator, index, 0, std::forward<Fn>(fn));
}

// core::UpdateGpuState with NVML's codes (fn must return nvmlReturn_t).
template <class Fn>
nvmlReturn_t UpdateGpuState(Emulator& emulator, std::size_t index, Fn&& fn) {
  return core::UpdateGpuState<NvmlCodes>(emulator, index, std::forward<Fn>(fn));
}

// NVML's string protocol: INSUFFICIENT_SIZE unless `length` holds the text and
// its NUL.
nvmlReturn_t CopyString(const std::string& text, char* buffer, unsigned int length);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_NVML_EMULATOR_INTERNAL_H_
