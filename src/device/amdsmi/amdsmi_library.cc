// Copyright 2026 The Zeus C++ Authors.

#include "device/amdsmi/amdsmi_library.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "device/amdsmi/amdsmi_error.h"
#include "device/emulator_hooks.h"
#include "zeus/base/log.h"
#include "zeus/device/environment.h"

namespace zeus::device::amdsmi {
namespace {

enum Kind { kRequired, kOptional };

constexpr char kRocmNeeded[] = "ROCm 6.3 or newer (AMD SMI library 24.7 or newer) is needed";

}  // namespace

Result<std::shared_ptr<AmdSmiLibrary>> AmdSmiLibrary::Load(const std::optional<std::string>& path) {
  const GpuLibraryChoice choice = ChooseAmdSmiLibrary(path);
  std::string chosen = choice.path;

  dlerror();
  void* handle = dlopen(chosen.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string why;
  if (handle == nullptr) {
    const char* text = dlerror();
    why = text != nullptr ? text : "unknown reason";
    if (!choice.named_explicitly) {
      handle = dlopen(kRocmAmdSmiLibrary, RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) chosen = kRocmAmdSmiLibrary;
    }
  }
  if (handle == nullptr) {
    if (!choice.named_explicitly) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("no AMD GPU driver found ({} could not be loaded: {}; nor {}); install ROCm 6.3 or "
                              "newer (its amd-smi-lib package), or set {} to an AMD SMI library such as "
                              "libzeus-amdsmi-emulator.so",
                              choice.path, why, kRocmAmdSmiLibrary, kAmdSmiLibraryVariable));
    }
    return Fail(ErrorCode::kNotFound,
                fmt::format("{}={}: cannot load the AMD SMI library: {}; fix the path or unset it to use ROCm's",
                            choice.origin, chosen, why));
  }

  std::shared_ptr<AmdSmiLibrary> lib(new AmdSmiLibrary(handle, chosen));
  std::string missing;
#define ZEUS_AMDSMI_FN(kind, name, params)                                             \
  lib->api_.name = reinterpret_cast<amdsmi_status_t(*) params>(dlsym(handle, #name)); \
  if (lib->api_.name == nullptr && (kind) == kRequired) {                              \
    missing += missing.empty() ? #name : ", " #name;                                   \
  }
#include "device/amdsmi/amdsmi_api.def"
#undef ZEUS_AMDSMI_FN
  if (!missing.empty()) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} is too old or not AMD SMI: it lacks {}; {}", chosen, missing, kRocmNeeded));
  }

  if (amdsmi_status_t rc = lib->api_.amdsmi_init(AMDSMI_INIT_AMD_GPUS); rc != AMDSMI_STATUS_SUCCESS) {
    const std::string detail = EmulatorLastError(handle);
    Error error = AmdSmiError(rc, "initialising AMD SMI", AmdSmiOperation::kQuery);
    if (!detail.empty()) {
      return Fail(Error(error.code(), fmt::format("AMD SMI emulator: {}", detail), NativeSpace::kAmdSmi,
                        static_cast<int>(rc)));
    }
    return Fail(error.WithContext(chosen));
  }
  lib->initialised_ = true;
  amdsmi_version_t version{};
  if (amdsmi_status_t rc = lib->api_.amdsmi_get_lib_version(&version); rc != AMDSMI_STATUS_SUCCESS) {
    return Fail(AmdSmiError(rc, fmt::format("reading the version of {}", chosen), AmdSmiOperation::kQuery));
  }
  lib->version_ = fmt::format("{}.{}.{}", version.year, version.major, version.minor);
  if (version.year < kMinAmdSmiYear || (version.year == kMinAmdSmiYear && version.major < kMinAmdSmiMajor)) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} is AMD SMI {}, which is too old: {}", chosen, lib->version_, kRocmNeeded));
  }
  if (version.year > kMinAmdSmiYear) {
    LogOnce(fmt::format("amdsmi-newer-abi:{}", lib->version_),
            {.level = LogLevel::kWarning,
             .component = "device",
             .message = fmt::format("{} is AMD SMI {}; Zeus declares the structures of AMD SMI {}.{} (ROCm 6.3). "
                                    "Readings are checked against power at start; report any that look wrong",
                                    chosen, lib->version_, kMinAmdSmiYear, kMinAmdSmiMajor)});
  }

  lib->emulator_clock_ = OpenEmulatorClock(handle);
  return lib;
}

AmdSmiLibrary::~AmdSmiLibrary() {
  if (initialised_) api_.amdsmi_shut_down();
#if !defined(__SANITIZE_ADDRESS__)
  dlclose(handle_);
#endif
}

}  // namespace zeus::device::amdsmi
