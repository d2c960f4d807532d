// Copyright 2026 The Zeus C++ Authors.
//
// Private to libzeus-amdsmi-emulator.so (amdsmi_exports.map hides all of it):
// what the files of its AMD SMI entry points share, over the faces' shared
// machinery (emulator_face.h, which describes the structure). The entry
// points (every function of src/device/amdsmi/amdsmi_api.def, with the ABI of
// amdsmi_abi.h) are split by API group:
//   amdsmi_emulator.cc         initialisation, version, status strings,
//                              sockets and processors, identity
//   amdsmi_emulator_power.cc   power, energy, power caps
//   amdsmi_emulator_clocks.cc  temperature, clocks, performance level
// The zeusEmulator* control functions are shared with the NVML face
// (emulator_control.cc, emulator_process_controls.cc).
//
// Handles: one processor handle per scenario GPU, and one socket per GPU (as
// on Instinct boards, where each GPU, and each die of a dual-die MI250, is
// its own socket), each a process-lifetime object whose address is the
// handle. GPU i is the i-th in the scenario, in both lists. The GPUs are
// visible only when the amdsmi_init that loaded the scenario asked for them
// (AMDSMI_INIT_AMD_GPUS); otherwise there are no sockets and every processor
// handle is unknown.

#ifndef ZEUS_EMULATOR_AMDSMI_EMULATOR_INTERNAL_H_
#define ZEUS_EMULATOR_AMDSMI_EMULATOR_INTERNAL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "api_functions.h"
#include "device/amdsmi/amdsmi_abi.h"
#include "emulator_face.h"
#include "faults.h"
#include "scenario.h"
#include "shared_state.h"

// The entry points, declared from the list, so that a definition whose
// signature differs from the ABI's does not compile.
extern "C" {
#define ZEUS_AMDSMI_FN(kind, name, params) amdsmi_status_t name params;
#include "device/amdsmi/amdsmi_api.def"
#undef ZEUS_AMDSMI_FN
}

namespace zeus::emulator::amd {

// Where the AMD SMI face finds its scenario: the first of these that is set.
inline constexpr std::array<const char*, 2> kConfigEnvs = {"ZEUS_AMDSMI_EMULATOR_CONFIG", "ZEUS_EMULATOR_CONFIG"};

// The AMD SMI codes the shared machinery returns.
struct AmdSmiCodes {
  using Code = amdsmi_status_t;
  static constexpr Code kSuccess = AMDSMI_STATUS_SUCCESS;
  static constexpr Code kNotInitialised = AMDSMI_STATUS_NOT_INIT;
  static constexpr Code kUnknown = AMDSMI_STATUS_UNKNOWN_ERROR;        // the state could not be read or locked
  static constexpr Code kException = AMDSMI_STATUS_INTERNAL_EXCEPTION;  // an exception was caught
};

// The handle objects: processors (GPUs) and sockets.
struct ProcessorObject {
  int index;
};
struct SocketObject {
  int index;
};
std::array<ProcessorObject, kMaxScenarioGpus>& ProcessorObjects();
std::array<SocketObject, kMaxScenarioGpus>& SocketObjects();

// How many GPUs this init lets the caller see: all, or none without
// AMDSMI_INIT_AMD_GPUS.
inline int VisibleGpus(const Emulator& emulator) {
  return (emulator.init_flags() & AMDSMI_INIT_AMD_GPUS) != 0 ? emulator.gpu_count() : 0;
}

inline int IndexOfProcessor(const Emulator& emulator, amdsmi_processor_handle handle) {
  return IndexOfHandle(ProcessorObjects(), handle, VisibleGpus(emulator));
}
inline int IndexOfSocket(const Emulator& emulator, amdsmi_socket_handle handle) {
  return IndexOfHandle(SocketObjects(), handle, VisibleGpus(emulator));
}

// core::Dispatch with AMD SMI's codes.
template <class Resolve, class Body>
amdsmi_status_t Dispatch(ApiFunction function, Resolve&& resolve, Body&& body) noexcept {
  return core::Dispatch<AmdSmiCodes>(function, std::forward<Resolve>(resolve), std::forward<Body>(body));
}

// A call on a processor handle: `body(emulator, spec, index)` runs only for a
// valid handle; an unknown handle gives AMDSMI_STATUS_INVAL.
template <class Body>
amdsmi_status_t ProcessorCall(ApiFunction function, amdsmi_processor_handle handle, Body&& body) noexcept {
  return Dispatch(
      function, [handle](const Emulator& emulator) -> int { return IndexOfProcessor(emulator, handle); },
      [&body](Emulator& emulator, int gpu) -> amdsmi_status_t {
        if (gpu < 0) return AMDSMI_STATUS_INVAL;
        const auto index = static_cast<std::size_t>(gpu);
        return body(emulator, emulator.scenario().gpus[index], index);
      });
}

// A call that addresses no GPU: `body(emulator)`.
template <class Body>
amdsmi_status_t SystemCall(ApiFunction function, Body&& body) noexcept {
  return Dispatch(
      function, [](const Emulator&) -> int { return kNoDevice; },
      [&body](Emulator& emulator, int) -> amdsmi_status_t { return body(emulator); });
}

// core::ReadGpuState with AMD SMI's codes (fn must return amdsmi_status_t).
template <class Fn>
amdsmi_status_t ReadGpuState(Emulator& emulator, std::size_t index, std::int64_t lookback_ns, Fn&& fn) {
  return core::ReadGpuState<AmdSmiCodes>(emulator, index, lookback_ns, std::forward<Fn>(fn));
}

// core::UpdateGpuState with AMD SMI's codes (fn must return amdsmi_status_t).
template <class Fn>
amdsmi_status_t UpdateGpuState(Emulator& emulator, std::size_t index, Fn&& fn) {
  return core::UpdateGpuState<AmdSmiCodes>(emulator, index, std::forward<Fn>(fn));
}

// Milliwatts to whole watts, rounded to the nearest (AMD SMI's power unit).
inline std::uint32_t MilliwattsToWatts(std::uint32_t mw) { return (mw + 500) / 1000; }

}  // namespace zeus::emulator::amd

#endif  // ZEUS_EMULATOR_AMDSMI_EMULATOR_INTERNAL_H_
