// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus_emulated_train/emulator_control.h"

#include <dlfcn.h>

#include <thread>

#include <fmt/format.h>

namespace zeus::apps {

Result<std::unique_ptr<EmulatorControl>> EmulatorControl::Open(const device::GpuSet& gpus,
                                                                const std::string& library_path) {
  std::unique_ptr<EmulatorControl> control(new EmulatorControl());
  control->driver_clock_ = gpus.driver_clock();
  control->handle_ = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (control->handle_ != nullptr) {
    control->iteration_time_s_ =
        reinterpret_cast<int (*)(unsigned int, double*)>(dlsym(control->handle_, "zeusEmulatorIterationTimeS"));
    control->advance_ns_ =
        reinterpret_cast<int (*)(unsigned long long)>(dlsym(control->handle_, "zeusEmulatorAdvanceTimeNs"));
  }
  if (control->iteration_time_s_ == nullptr || control->driver_clock_ == nullptr || control->advance_ns_ == nullptr) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} is not the Zeus NVML emulator; zeus-emulated-train needs it: set ZEUS_NVML_LIBRARY to "
                            "build/lib/libzeus-nvml-emulator.so and ZEUS_EMULATOR_CONFIG to a scenario with a "
                            "\"workload\" per GPU",
                            library_path.empty() ? "the NVML library" : library_path));
  }
  control->manual_ = control->advance_ns_(0) == 0;  // 2 (wrong mode) with the wall clock
  return control;
}

EmulatorControl::~EmulatorControl() {
  if (handle_ != nullptr) dlclose(handle_);
}

Result<double> EmulatorControl::IterationTimeS(unsigned int nvml_index) const {
  double seconds = 0;
  const int rc = iteration_time_s_(nvml_index, &seconds);
  if (rc == 0) return seconds;
  if (rc == 2) {
    return Fail(ErrorCode::kNotSupported,
                fmt::format("GPU {} of the emulator's scenario has no \"workload\" with \"iteration_time_s\"; "
                            "add one so the training steps take time",
                            nvml_index));
  }
  return Fail(ErrorCode::kUnavailable, fmt::format("zeusEmulatorIterationTimeS({}) failed with {}", nvml_index, rc));
}

std::chrono::nanoseconds EmulatorControl::Now() const { return driver_clock_->Now(); }

Status EmulatorControl::Advance(std::chrono::nanoseconds duration) const {
  if (duration.count() <= 0) return OkStatus();
  if (int rc = advance_ns_(static_cast<unsigned long long>(duration.count())); rc != 0) {
    return Fail(ErrorCode::kUnavailable, fmt::format("zeusEmulatorAdvanceTimeNs failed with {}", rc));
  }
  return OkStatus();
}

void EmulatorTimeClock::SleepFor(std::chrono::nanoseconds duration) const {
  if (control_.manual()) {
    (void)control_.Advance(duration);
    return;
  }
  const auto target = control_.Now() + duration;
  for (auto now = control_.Now(); now < target; now = control_.Now()) {
    std::this_thread::sleep_for(std::chrono::duration<double>(std::chrono::duration<double>(target - now).count() /
                                                              time_scale_));
  }
}

}  // namespace zeus::apps
