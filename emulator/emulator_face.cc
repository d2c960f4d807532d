// Copyright 2026 The Zeus C++ Authors.
//
// The faces' shared machinery (emulator_face.h): loading a scenario for a
// face, the reference-counted init and shutdown, and the energy counter.

#include "emulator_face.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <utility>

namespace zeus::emulator {
namespace {

// "A and B", "A, B and C".
std::string VariableList(std::span<const char* const> names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) list += i + 1 == names.size() ? " and " : ", ";
    list += names[i];
  }
  return list;
}

}  // namespace

const char* FaceLibrary(Vendor vendor) {
  return vendor == Vendor::kNvidia ? "libzeus-nvml-emulator.so" : "libzeus-amdsmi-emulator.so";
}

std::unique_ptr<Emulator> Emulator::Load(const Face& face, std::string* error, LoadFailure* failure) {
  *failure = LoadFailure::kInvalid;
  const char* path = nullptr;
  for (const char* name : face.config_envs) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
      path = value;
      break;
    }
  }
  if (path == nullptr) {
    *error = face.config_envs.size() == 1
                 ? fmt::format("{} is not set; point it at a scenario JSON file", face.config_envs[0])
                 : fmt::format("{} are not set; point one of them at a scenario JSON file",
                               VariableList(face.config_envs));
    return nullptr;
  }
  std::unique_ptr<Emulator> emulator(new Emulator());
  if (!LoadScenarioFile(path, &emulator->scenario_, error)) return nullptr;
  const Vendor vendor = emulator->scenario_.vendor;
  if (vendor != face.vendor) {
    *error = fmt::format("scenario {}: this scenario's GPUs are {} (vendor {}); load {}", path,
                         vendor == Vendor::kNvidia ? "NVIDIA" : "AMD", VendorName(vendor), FaceLibrary(vendor));
    *failure = LoadFailure::kWrongVendor;
    return nullptr;
  }
  std::string problem;
  bool refused = false;
  emulator->state_ = SharedState::Open(emulator->scenario_, &problem, &refused);
  if (emulator->state_ == nullptr) {
    *error = fmt::format("scenario {}: {}", path, problem);
    if (refused) *failure = LoadFailure::kRefused;
    return nullptr;
  }
  emulator->gpu_count_ = static_cast<int>(emulator->scenario_.gpus.size());
  emulator->faults_ = std::make_unique<FaultInjector>(emulator->scenario_.faults, emulator->gpu_count_);
  *failure = LoadFailure::kNone;
  return emulator;
}

Globals& TheGlobals() {
  static Globals* const globals = new Globals();
  return *globals;
}

bool InitialiseFace(const Face& face, std::uint64_t init_flags, LoadFailure* failure) {
  Globals& globals = TheGlobals();
  std::unique_lock<std::shared_mutex> lock(globals.mutex);
  *failure = LoadFailure::kNone;
  if (globals.init_count > 0) {
    ++globals.init_count;
    return true;
  }
  std::string error;
  std::unique_ptr<Emulator> emulator = Emulator::Load(face, &error, failure);
  std::lock_guard<std::mutex> text_lock(globals.text_mutex);
  if (emulator == nullptr) {
    globals.last_error = std::move(error);
    return false;
  }
  emulator->init_flags_ = init_flags;
  globals.last_error.clear();
  globals.state_path = emulator->state().path();
  globals.emulator = std::move(emulator);
  globals.init_count = 1;
  return true;
}

bool ShutdownFace() {
  Globals& globals = TheGlobals();
  {
    // The last shutdown must not wait for ever on calls blocked in a hang
    // fault (they hold the lock shared): release them first.
    std::shared_lock<std::shared_mutex> shared(globals.mutex);
    if (globals.init_count == 1) globals.emulator->faults().ReleaseHungCalls();
  }
  std::unique_lock<std::shared_mutex> lock(globals.mutex);
  if (globals.init_count == 0) return false;
  if (--globals.init_count == 0) globals.emulator.reset();
  return true;
}

Energy CountedEnergy(const GpuSpec& spec, const GpuState& gpu, std::int64_t now_ns) {
  // The counter advances only at its update instants.
  const std::int64_t period_ns = spec.counter_update_period_ns;
  const std::int64_t update_ns = period_ns > 0 ? now_ns - now_ns % period_ns : now_ns;
  Energy energy = CounterEnergyAt(gpu.limits, spec.power, spec.counter_reset_ns, update_ns);
  if (ModuleCountsEnergy(spec)) {
    // The module's constant draw since the counter (re)started.
    const std::int64_t start_ns =
        spec.counter_reset_ns && update_ns >= *spec.counter_reset_ns ? *spec.counter_reset_ns : 0;
    energy.AddPower(spec.module->extra_mw(), update_ns - start_ns);
  }
  return energy;
}

}  // namespace zeus::emulator
