// Copyright 2026 The Zeus C++ Authors.
//
// Private to libzeus-nvml-emulator.so (exports.map hides all of it): what
// the files of its C entry points share. nvml_emulator.cc defines the
// non-template functions below; the entry points are split by API group:
//   nvml_emulator.cc           initialisation, system, enumeration, identity
//   nvml_emulator_power.cc     power, energy, field values, power limits
//   nvml_emulator_clocks.cc    persistence mode, temperature, clocks
//   nvml_emulator_control.cc   the zeusEmulator* control functions
//   nvml_emulator_processes.cc per-process calls and the process controls
//
// Structure: a process-wide Globals holds the init count and, while
// initialised, one Emulator (the parsed scenario, the GPU handle objects, the
// shared state and the fault injector). Every NVML call takes the Globals lock
// shared (init and shutdown take it exclusively), counts the call and applies
// faults, validates its handle, and then does its work: reading per-GPU state
// from a lock-free snapshot of the shared state, writing it under the
// shared-state locks (shared_state.h). No exception escapes a C entry point:
// each body runs inside a catch-all that returns NVML_ERROR_UNKNOWN.

#ifndef ZEUS_EMULATOR_NVML_EMULATOR_INTERNAL_H_
#define ZEUS_EMULATOR_NVML_EMULATOR_INTERNAL_H_

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>

#include "api_functions.h"
#include "device/nvml/nvml_abi.h"
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

// The per-GPU handle objects. They live for the whole process, like a real
// driver's, so a handle stays the same across nvmlShutdown and a later
// nvmlInit_v2; whether it is valid depends on the scenario then loaded.
std::array<nvmlDevice_st, kMaxScenarioGpus>& DeviceObjects();

// Everything loaded by the first nvmlInit_v2, dropped by the last nvmlShutdown.
class Emulator {
 public:
  // Loads the scenario named by $ZEUS_EMULATOR_CONFIG and opens its state.
  // Returns null on failure, setting *error (for zeusEmulatorLastError) and
  // *code: NVML_ERROR_NO_PERMISSION if the state file was refused for safety
  // or permissions (state_file.h), else NVML_ERROR_UNKNOWN.
  static std::unique_ptr<Emulator> Load(std::string* error, nvmlReturn_t* code) {
    *code = NVML_ERROR_UNKNOWN;
    const char* path = std::getenv(kConfigEnv);
    if (path == nullptr || *path == '\0') {
      *error = fmt::format("{} is not set; point it at a scenario JSON file", kConfigEnv);
      return nullptr;
    }
    std::unique_ptr<Emulator> emulator(new Emulator());
    if (!LoadScenarioFile(path, &emulator->scenario_, error)) return nullptr;
    std::string problem;
    bool refused = false;
    emulator->state_ = SharedState::Open(emulator->scenario_, &problem, &refused);
    if (emulator->state_ == nullptr) {
      *error = fmt::format("scenario {}: {}", path, problem);
      if (refused) *code = NVML_ERROR_NO_PERMISSION;
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
Globals& TheGlobals();

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

// Runs `fn(const GpuState&, now_ns)` on a consistent snapshot of GPU
// `index`'s shared state (taken without locks; see shared_state.h), whose
// limit history holds what readings at instants >= now_ns - lookback_ns need
// (SharedState::ReadGpu; 0: the limits in force now and later). Returns
// NVML_ERROR_UNKNOWN if the state cannot be read, else what fn returns (fn
// must return nvmlReturn_t).
template <class Fn>
nvmlReturn_t ReadGpuState(Emulator& emulator, std::size_t index, std::int64_t lookback_ns, Fn&& fn) {
  GpuState gpu;  // ReadGpu fills all of it that is in use
  std::int64_t now_ns = 0;
  if (!emulator.state().ReadGpu(index, lookback_ns, &gpu, &now_ns)) return NVML_ERROR_UNKNOWN;
  return fn(static_cast<const GpuState&>(gpu), now_ns);
}

// The same for readings of the present only (limits, clocks, persistence).
template <class Fn>
nvmlReturn_t ReadGpuState(Emulator& emulator, std::size_t index, Fn&& fn) {
  return ReadGpuState(emulator, index, 0, std::forward<Fn>(fn));
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
nvmlReturn_t CopyString(const std::string& text, char* buffer, unsigned int length);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_NVML_EMULATOR_INTERNAL_H_
