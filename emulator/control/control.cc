// Copyright 2026 The Zeus C++ Authors.

#include "emulator/control/control.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

namespace zeus::emulator {
namespace {

// The control function `name` of the library `handle`, typed as `fn`
// (a pointer to the declaration in emulator_control.h).
template <class Fn>
void Resolve(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
}

}  // namespace

Result<std::unique_ptr<EmulatorControl>> EmulatorControl::Open(const std::string& library_path) {
  std::unique_ptr<EmulatorControl> control(new EmulatorControl());
  control->library_path_ = library_path;
  control->handle_ = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (control->handle_ != nullptr) {
    Resolve(control->handle_, "zeusEmulatorNowNs", control->now_ns_);
    Resolve(control->handle_, "zeusEmulatorAdvanceTimeNs", control->advance_ns_);
    Resolve(control->handle_, "zeusEmulatorIterationTimeS", control->iteration_time_s_);
    Resolve(control->handle_, "zeusEmulatorHungCalls", control->hung_calls_);
    Resolve(control->handle_, "zeusEmulatorReleaseHungCalls", control->release_hung_calls_);
    Resolve(control->handle_, "zeusEmulatorAttachProcess", control->attach_process_);
    Resolve(control->handle_, "zeusEmulatorSetProcessUtilization", control->set_process_utilization_);
    Resolve(control->handle_, "zeusEmulatorDetachProcess", control->detach_process_);
  }
  if (control->now_ns_ == nullptr || control->advance_ns_ == nullptr || control->iteration_time_s_ == nullptr ||
      control->hung_calls_ == nullptr || control->release_hung_calls_ == nullptr ||
      control->attach_process_ == nullptr || control->set_process_utilization_ == nullptr ||
      control->detach_process_ == nullptr) {
    return Fail(ErrorCode::kUnavailable, fmt::format("{} is not the Zeus NVML emulator", library_path));
  }
  unsigned long long now_ns = 0;
  if (control->now_ns_(&now_ns) != ZEUS_EMULATOR_OK) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("the Zeus NVML emulator {} is not initialised in this process; open its GPUs first "
                            "(OpenGpus with ZEUS_NVML_LIBRARY naming it)",
                            library_path));
  }
  control->manual_ = control->advance_ns_(0) == ZEUS_EMULATOR_OK;  // ZEUS_EMULATOR_ERROR_WRONG_MODE: a wall clock
  return control;
}

EmulatorControl::~EmulatorControl() {
  // As NvmlLibrary: under AddressSanitizer the library stays mapped, so the
  // emulator's process-lifetime globals stay reachable (not reported as leaks
  // when this was the last reference) and frames inside it can be symbolised.
#if !defined(__SANITIZE_ADDRESS__)
  if (handle_ != nullptr) dlclose(handle_);
#endif
}

std::chrono::nanoseconds EmulatorControl::Now() const {
  unsigned long long ns = 0;
  (void)now_ns_(&ns);
  return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}

Status EmulatorControl::Advance(std::chrono::nanoseconds duration) const {
  if (duration.count() <= 0) return OkStatus();
  const int rc = advance_ns_(static_cast<unsigned long long>(duration.count()));
  if (rc == ZEUS_EMULATOR_OK) return OkStatus();
  if (rc == ZEUS_EMULATOR_ERROR_WRONG_MODE) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{}: the scenario's clock is not manual, so emulated time cannot be advanced; set "
                            "\"clock\": \"manual\" in the scenario",
                            library_path_));
  }
  return Fail(ErrorCode::kUnavailable, fmt::format("zeusEmulatorAdvanceTimeNs failed with {}", rc));
}

Result<double> EmulatorControl::IterationTimeS(unsigned int nvml_index) const {
  double seconds = 0;
  const int rc = iteration_time_s_(nvml_index, &seconds);
  if (rc == ZEUS_EMULATOR_OK) return seconds;
  if (rc == ZEUS_EMULATOR_ERROR_WRONG_MODE) {
    return Fail(ErrorCode::kNotSupported,
                fmt::format("GPU {} of the emulator's scenario has no \"workload\" with \"iteration_time_s\"; "
                            "add one so the training steps take time",
                            nvml_index));
  }
  return Fail(ErrorCode::kUnavailable, fmt::format("zeusEmulatorIterationTimeS({}) failed with {}", nvml_index, rc));
}

namespace {

// A process control's answer as a Status; `what` names the call.
Status ProcessControlStatus(int rc, const std::string& what) {
  switch (rc) {
    case ZEUS_EMULATOR_OK:
      return OkStatus();
    case ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT:
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} was refused: no such GPU or live process, a utilization over 100 %, the process "
                              "already (or not) attached there, or the GPU's process table full",
                              what));
    case ZEUS_EMULATOR_ERROR_WRONG_MODE:
      return Fail(ErrorCode::kNotSupported,
                  fmt::format("{}: the GPU does not support per-process calls (\"processes\" is in its scenario's "
                              "\"unsupported\" list)",
                              what));
    default:
      return Fail(ErrorCode::kUnavailable, fmt::format("{} failed with {}", what, rc));
  }
}

}  // namespace

Status EmulatorControl::AttachProcess(unsigned int nvml_index, unsigned int pid, unsigned int sm_util_percent) const {
  return ProcessControlStatus(attach_process_(nvml_index, pid, sm_util_percent),
                              fmt::format("attaching process {} to GPU {} at {} %", pid, nvml_index, sm_util_percent));
}

Status EmulatorControl::SetProcessUtilization(unsigned int nvml_index, unsigned int pid,
                                              unsigned int sm_util_percent) const {
  return ProcessControlStatus(
      set_process_utilization_(nvml_index, pid, sm_util_percent),
      fmt::format("setting process {}'s utilization on GPU {} to {} %", pid, nvml_index, sm_util_percent));
}

Status EmulatorControl::DetachProcess(unsigned int nvml_index, unsigned int pid) const {
  return ProcessControlStatus(detach_process_(nvml_index, pid),
                              fmt::format("detaching process {} from GPU {}", pid, nvml_index));
}

unsigned long long EmulatorControl::HungCalls() const { return hung_calls_(); }

Status EmulatorControl::ReleaseHungCalls() const {
  if (const int rc = release_hung_calls_(); rc != ZEUS_EMULATOR_OK) {
    return Fail(ErrorCode::kUnavailable, fmt::format("zeusEmulatorReleaseHungCalls failed with {}", rc));
  }
  return OkStatus();
}

void EmulatorClock::SleepFor(std::chrono::nanoseconds duration) const {
  if (control_.manual()) {
    if (Status advanced = control_.Advance(duration); !advanced) {
      std::fprintf(stderr, "EmulatorClock: %s\n", advanced.error().message().c_str());
      std::abort();
    }
    return;
  }
  const auto target = control_.Now() + duration;
  for (auto now = control_.Now(); now < target; now = control_.Now()) {
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::chrono::duration<double>(target - now).count() / time_scale_));
  }
}

}  // namespace zeus::emulator
