// Copyright 2026 The Zeus C++ Authors.
//
// The zeusEmulator* control functions (emulator_control.h) that both faces
// export, libzeus-nvml-emulator.so and libzeus-amdsmi-emulator.so (each
// over its own Globals): the last init error, the state path, call counts,
// hung calls, the manual clock, idleness and the workload's iteration time.
// The process controls: emulator_process_controls.cc. Shared machinery:
// emulator_face.h.

#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "api_functions.h"
#include "emulator_control.h"
#include "emulator_face.h"
#include "physics.h"
#include "scenario.h"
#include "shared_state.h"

using zeus::emulator::ApiFunction;
using zeus::emulator::ControlCodes;
using zeus::emulator::Emulator;
using zeus::emulator::GpuSpec;
using zeus::emulator::GpuState;

extern "C" {

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

int zeusEmulatorSetIdle(int gpu, int idle) {
  try {
    auto& globals = zeus::emulator::TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    zeus::emulator::Emulator* emulator = globals.emulator.get();
    if (emulator == nullptr) return ZEUS_EMULATOR_ERROR_UNINITIALIZED;
    if (gpu < -1 || gpu >= emulator->gpu_count()) return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
    const int first = gpu < 0 ? 0 : gpu;
    const int last = gpu < 0 ? emulator->gpu_count() : gpu + 1;
    for (int i = first; i < last; ++i) {
      const auto index = static_cast<std::size_t>(i);
      const zeus::emulator::GpuSpec& spec = emulator->scenario().gpus[index];
      const int rc = zeus::emulator::core::UpdateGpuState<ControlCodes>(
          *emulator, index, [&](zeus::emulator::GpuState& state, std::int64_t now_ns) -> int {
            // As the limit setter: only what readings from now on can need is kept.
            ForgetLimitChangesBefore(&state.limits, spec.power, spec.counter_reset_ns,
                                     now_ns - zeus::emulator::KeptLookbackNs(spec));
            RecordActivityChange(&state.limits, spec.power, spec.counter_reset_ns, now_ns, idle != 0);
            return ZEUS_EMULATOR_OK;
          });
      if (rc != ZEUS_EMULATOR_OK) return rc;
    }
    return ZEUS_EMULATOR_OK;
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
    const int read = zeus::emulator::core::ReadGpuState<ControlCodes>(
        *emulator, gpu, 0, [&](const GpuState& state, std::int64_t) -> int {
          result = spec.power.IterationTimeS(CurrentLimitMw(state.limits));
          return ZEUS_EMULATOR_OK;
        });
    if (read != ZEUS_EMULATOR_OK) return read;
    if (!result) return ZEUS_EMULATOR_ERROR_WRONG_MODE;
    *seconds = *result;
    return ZEUS_EMULATOR_OK;
  } catch (...) {
    return ZEUS_EMULATOR_ERROR_STATE;
  }
}

}  // extern "C"
