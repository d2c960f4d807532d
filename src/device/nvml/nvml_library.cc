// Copyright 2026 The Zeus C++ Authors.

#include "device/nvml/nvml_library.h"

#include <dlfcn.h>

#include <cstdint>
#include <thread>

#include <fmt/format.h>

#include "device/nvml/nvml_error.h"
#include "zeus/device/environment.h"

namespace zeus::device::nvml {
namespace {

enum Kind { kRequired, kOptional };

// The emulator explains a failed init through this extra symbol; the real
// driver does not have it.
using LastErrorFn = const char* (*)();
// And its clock: emulated nanoseconds since the state epoch; 0 on success.
using NowNsFn = int (*)(unsigned long long*);

class EmulatorNowClock final : public Clock {
 public:
  explicit EmulatorNowClock(NowNsFn now_ns) : now_ns_(now_ns) {}

  std::chrono::nanoseconds Now() const override {
    unsigned long long ns = 0;
    (void)now_ns_(&ns);
    return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
  }
  void SleepFor(std::chrono::nanoseconds duration) const override {
    const std::chrono::nanoseconds target = Now() + duration;
    const auto wall_end = std::chrono::steady_clock::now() + duration;
    while (Now() < target && std::chrono::steady_clock::now() < wall_end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

 private:
  NowNsFn now_ns_;
};

}  // namespace

Result<std::shared_ptr<NvmlLibrary>> NvmlLibrary::Load(const std::optional<std::string>& path) {
  const NvmlLibraryChoice choice = ChooseNvmlLibrary(path);
  const std::string& chosen = choice.path;

  dlerror();
  void* handle = dlopen(chosen.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    if (!choice.named_explicitly) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("no NVIDIA driver found ({} could not be loaded: {}); install the NVIDIA driver, "
                              "or set ZEUS_NVML_LIBRARY to an NVML library such as libzeus-nvml-emulator.so",
                              chosen, why != nullptr ? why : "unknown reason"));
    }
    return Fail(ErrorCode::kNotFound,
                fmt::format("{}={}: cannot load the NVML library: {}; fix the path or unset it to use the "
                            "system driver",
                            choice.origin, chosen, why != nullptr ? why : "unknown reason"));
  }

  std::shared_ptr<NvmlLibrary> lib(new NvmlLibrary(handle, chosen));
  std::string missing;
#define ZEUS_NVML_FN(kind, ret, name, params)                                      \
  lib->api_.name = reinterpret_cast<ret(*) params>(dlsym(handle, #name));           \
  if (lib->api_.name == nullptr && (kind) == kRequired) {                           \
    missing += missing.empty() ? #name : ", " #name;                                \
  }
#include "device/nvml/nvml_api.def"
#undef ZEUS_NVML_FN
  if (!missing.empty()) {
    // Do not call nvmlShutdown on a library we never initialised.
    lib->api_.nvmlShutdown = nullptr;
    return Fail(ErrorCode::kInternal,
                fmt::format("{} is not a usable NVML library: it lacks {}; the driver may be too old (NVML from "
                            "driver 450 or newer is needed)",
                            chosen, missing));
  }

  nvmlReturn_t rc = lib->api_.nvmlInit_v2();
  if (rc != NVML_SUCCESS) {
    lib->api_.nvmlShutdown = nullptr;
    std::string detail;
    if (auto last_error = reinterpret_cast<LastErrorFn>(dlsym(handle, "zeusEmulatorLastError"));
        last_error != nullptr && last_error() != nullptr && *last_error() != '\0') {
      detail = last_error();
    }
    Error error = NvmlError(rc, "initialising NVML", NvmlOperation::kQuery);
    if (!detail.empty()) {
      return Fail(Error(error.code(), fmt::format("NVML emulator: {}", detail), NativeSpace::kNvml, rc));
    }
    return Fail(error.WithContext(chosen));
  }
  if (auto now_ns = reinterpret_cast<NowNsFn>(dlsym(handle, "zeusEmulatorNowNs")); now_ns != nullptr) {
    unsigned long long probe = 0;
    if (now_ns(&probe) == 0) lib->emulator_clock_ = std::make_unique<EmulatorNowClock>(now_ns);
  }
  return lib;
}

NvmlLibrary::~NvmlLibrary() {
  if (api_.nvmlShutdown != nullptr) api_.nvmlShutdown();
  // Keep the library mapped under sanitizers so leak reports can symbolise
  // frames inside it; dlclose otherwise.
#if !defined(__SANITIZE_ADDRESS__)
  dlclose(handle_);
#endif
}

}  // namespace zeus::device::nvml
