// Copyright 2026 The Zeus C++ Authors.

#include "device/nvml/nvml_library.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "device/emulator_hooks.h"
#include "device/nvml/nvml_error.h"
#include "zeus/device/environment.h"

namespace zeus::device::nvml {
namespace {

enum Kind { kRequired, kOptional };

}  // namespace

Result<std::shared_ptr<NvmlLibrary>> NvmlLibrary::Load(const std::optional<std::string>& path) {
  const GpuLibraryChoice choice = ChooseNvmlLibrary(path);
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
    const std::string detail = EmulatorLastError(handle);
    Error error = NvmlError(rc, "initialising NVML", NvmlOperation::kQuery);
    if (!detail.empty()) {
      return Fail(Error(error.code(), fmt::format("NVML emulator: {}", detail), NativeSpace::kNvml, rc));
    }
    return Fail(error.WithContext(chosen));
  }
  lib->emulator_clock_ = OpenEmulatorClock(handle);
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
