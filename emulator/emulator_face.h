// Copyright 2026 The Zeus C++ Authors.
//
// What the emulator's API faces share: the machinery between a C entry point
// and the emulator core (the scenario, physics, faults and shared state).
// Two faces are built over it, each its own shared library with its own
// process-wide Globals (exports.map and amdsmi_exports.map hide all of this):
//   libzeus-nvml-emulator.so    NVML (nvml_emulator_internal.h), for vendor
//                               "nvidia" scenarios
//   libzeus-amdsmi-emulator.so  AMD SMI (amdsmi_emulator_internal.h), for
//                               vendor "amd" scenarios
// and both export the zeusEmulator* control functions (emulator_control.h;
// emulator_control.cc and emulator_process_controls.cc, compiled into each).
//
// Structure: a process-wide Globals holds the init count and, while
// initialised, one Emulator (the parsed scenario, the shared state and the
// fault injector). Every API call takes the Globals lock shared (init and
// shutdown take it exclusively), counts the call and applies faults
// (core::Dispatch), validates its handle, and then does its work: reading
// per-GPU state from a lock-free snapshot of the shared state
// (core::ReadGpuState), writing it under the shared-state locks
// (core::UpdateGpuState; shared_state.h). No exception escapes a C entry
// point: each body runs inside a catch-all.
//
// The core's machinery is generic in the face's return codes: a `Codes`
// type names the face's code type and the codes the machinery returns
// (NvmlCodes, AmdSmiCodes, ControlCodes). Fault rules carry codes as ints,
// converted to the face's type at the face boundary (both APIs' success is 0).

#ifndef ZEUS_EMULATOR_EMULATOR_FACE_H_
#define ZEUS_EMULATOR_EMULATOR_FACE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <utility>

#include "api_functions.h"
#include "emulator_control.h"
#include "faults.h"
#include "scenario.h"
#include "shared_state.h"

namespace zeus::emulator {

// What a face says about itself when it loads a scenario.
struct Face {
  Vendor vendor;  // the GPUs it emulates; a scenario of the other vendor's is refused
  // The environment variables that may name the scenario, in order: the
  // first that is set and not empty wins.
  std::span<const char* const> config_envs;
};

// The shared library that serves `vendor`'s GPUs, e.g. "libzeus-nvml-emulator.so".
const char* FaceLibrary(Vendor vendor);

// Why loading failed.
enum class LoadFailure {
  kNone,
  kInvalid,      // no scenario named, or it cannot be read or parsed, or the state file cannot be opened
  kRefused,      // the state file was refused for safety or permissions (state_file.h)
  kWrongVendor,  // the scenario's GPUs are the other vendor's
};

// Everything the first init loads, dropped by the last shutdown.
class Emulator {
 public:
  // Loads the scenario named by the face's variables and opens its state.
  // Returns null on failure, setting *error (for zeusEmulatorLastError) and
  // *failure.
  static std::unique_ptr<Emulator> Load(const Face& face, std::string* error, LoadFailure* failure);

  const Scenario& scenario() const { return scenario_; }
  SharedState& state() { return *state_; }
  FaultInjector& faults() { return *faults_; }
  int gpu_count() const { return gpu_count_; }
  // The flags of the init that loaded the scenario (AMD SMI: amdsmi_init's;
  // NVML: 0).
  std::uint64_t init_flags() const { return init_flags_; }

 private:
  friend bool InitialiseFace(const Face& face, std::uint64_t init_flags, LoadFailure* failure);
  Emulator() = default;

  Scenario scenario_;
  std::unique_ptr<SharedState> state_;
  std::unique_ptr<FaultInjector> faults_;
  int gpu_count_ = 0;
  std::uint64_t init_flags_ = 0;
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
// the API while the process exits cannot reach a destroyed mutex. One per
// shared library.
Globals& TheGlobals();

// A face's init: the first loads the scenario (setting zeusEmulatorLastError
// either way), later ones count. False on failure, with *failure set. May
// throw (std::bad_alloc).
bool InitialiseFace(const Face& face, std::uint64_t init_flags, LoadFailure* failure);

// A face's shutdown: the last drops the scenario, releasing hung calls
// first. False when not initialised. May throw.
bool ShutdownFace();

// How far before now the readings of a GPU look: each computes at instants
// later than now minus this. The energy counter reads at its latest update
// instant; a power reading averages over the window before its sensor's
// latest update. The setter forgets the limit changes that no reading needs
// (those at or before now - KeptLookbackNs), so a GPU's history stays as
// short as exactness allows.
inline std::int64_t EnergyLookbackNs(const GpuSpec& spec) { return spec.counter_update_period_ns; }
inline std::int64_t PowerLookbackNs(const GpuSpec& spec) {
  return spec.power_update_period_ns + spec.power_average_window_ns;
}
inline std::int64_t KeptLookbackNs(const GpuSpec& spec) {
  return std::max(EnergyLookbackNs(spec), PowerLookbackNs(spec));
}

// The sensor a GPU's power readings come from.
inline PowerSensor SensorOf(const GpuSpec& spec) {
  return PowerSensor{spec.power_update_period_ns, spec.power_average_window_ns};
}

// Records a new power limit for GPU `spec` made now: what both faces' limit
// setters do once the limit is checked. Keeps only what readings from now on
// can need (constant space and reading cost however many limits are set).
inline void SetLimit(const GpuSpec& spec, GpuState& gpu, std::int64_t now_ns, std::uint32_t limit_mw) {
  if (CurrentLimitMw(gpu.limits) == limit_mw) return;
  ForgetLimitChangesBefore(&gpu.limits, spec.power, spec.counter_reset_ns, now_ns - KeptLookbackNs(spec));
  RecordLimitRamp(&gpu.limits, spec.power, spec.counter_reset_ns, now_ns, limit_mw, spec.power_settle_ns);
}

// The energy GPU `spec`'s counter has counted at `now_ns` (before its
// energy_counter_rate): the drawn energy up to the counter's latest update
// instant, since its reset if it has been reset, plus a module's constant
// draw where the counter counts the module's (ModuleCountsEnergy).
Energy CountedEnergy(const GpuSpec& spec, const GpuState& gpu, std::int64_t now_ns);

// The index of `handle` among the first `count` of `objects` (a face's
// handle objects), or kUnknownDevice. Compares addresses only; never
// dereferences `handle`.
template <class Object, std::size_t N>
int IndexOfHandle(const std::array<Object, N>& objects, const void* handle, int count) {
  for (int i = 0; i < count && static_cast<std::size_t>(i) < N; ++i) {
    if (handle == &objects[static_cast<std::size_t>(i)]) return i;
  }
  return kUnknownDevice;
}

// The control functions' codes (emulator_control.h).
struct ControlCodes {
  using Code = int;
  static constexpr Code kSuccess = ZEUS_EMULATOR_OK;
  static constexpr Code kNotInitialised = ZEUS_EMULATOR_ERROR_UNINITIALIZED;
  static constexpr Code kUnknown = ZEUS_EMULATOR_ERROR_STATE;    // the state could not be read or locked
  static constexpr Code kException = ZEUS_EMULATOR_ERROR_STATE;  // an exception was caught
};

namespace core {

// Runs an API call: checks initialisation, counts the call and applies faults
// for the GPU `resolve(emulator)` designates, then runs `body(emulator, gpu)`
// (which returns a Codes::Code). Never throws.
template <class Codes, class Resolve, class Body>
typename Codes::Code Dispatch(ApiFunction function, Resolve&& resolve, Body&& body) noexcept {
  try {
    Globals& globals = TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    Emulator* emulator = globals.emulator.get();
    if (emulator == nullptr) return Codes::kNotInitialised;
    const int gpu = resolve(*emulator);
    // Latency and hangs block here, with the lock held shared: other calls
    // proceed, and the last shutdown releases hangs before it waits.
    const FaultAction action = emulator->faults().Decide(function, gpu);
    if (const int fault = emulator->faults().Perform(action); fault != 0) {
      return static_cast<typename Codes::Code>(fault);
    }
    return body(*emulator, gpu);
  } catch (...) {
    return Codes::kException;
  }
}

// Runs `fn(const GpuState&, now_ns)` on a consistent snapshot of GPU
// `index`'s shared state (taken without locks; see shared_state.h), whose
// limit history holds what readings at instants >= now_ns - lookback_ns need
// (SharedState::ReadGpu; 0: the limits in force now and later). Returns
// Codes::kUnknown if the state cannot be read, else what fn returns.
template <class Codes, class Fn>
typename Codes::Code ReadGpuState(Emulator& emulator, std::size_t index, std::int64_t lookback_ns, Fn&& fn) {
  GpuState gpu;  // ReadGpu fills all of it that is in use
  std::int64_t now_ns = 0;
  if (!emulator.state().ReadGpu(index, lookback_ns, &gpu, &now_ns)) return Codes::kUnknown;
  return fn(static_cast<const GpuState&>(gpu), now_ns);
}

// Runs `fn(GpuState&, now_ns)` for GPU `index` under the shared-state locks
// and publishes its changes. Returns Codes::kUnknown if the state cannot be
// locked, else what fn returns.
template <class Codes, class Fn>
typename Codes::Code UpdateGpuState(Emulator& emulator, std::size_t index, Fn&& fn) {
  typename Codes::Code result = Codes::kUnknown;
  const bool locked =
      emulator.state().UpdateGpu(index, [&](GpuState& gpu, std::int64_t now_ns) { result = fn(gpu, now_ns); });
  return locked ? result : Codes::kUnknown;
}

}  // namespace core
}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_EMULATOR_FACE_H_
