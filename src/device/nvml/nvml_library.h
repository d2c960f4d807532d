// Copyright 2026 The Zeus C++ Authors.
//
// NvmlLibrary: NVML opened with dlopen and initialised, with every entry point
// of nvml_api.def resolved once. Private to the device layer.
//
// Thread-safety: immutable after Load; the function pointers may be called
// from any thread (NVML is thread-safe).

#ifndef ZEUS_DEVICE_NVML_NVML_LIBRARY_H_
#define ZEUS_DEVICE_NVML_NVML_LIBRARY_H_

#include <memory>
#include <optional>
#include <string>

#include "device/nvml/nvml_abi.h"
#include "zeus/base/clock.h"
#include "zeus/base/error.h"

namespace zeus::device::nvml {

// One function pointer per entry of nvml_api.def, named as in NVML. An
// optional entry the library lacks is null; call it through Call().
struct NvmlApi {
#define ZEUS_NVML_FN(kind, ret, name, params) ret(*name) params = nullptr;
#include "device/nvml/nvml_api.def"
#undef ZEUS_NVML_FN
};

class NvmlLibrary {
 public:
  // Opens the library ChooseNvmlLibrary(path) names (zeus/device/environment.h:
  // `path` unless empty, else $ZEUS_NVML_LIBRARY, else the system's),
  // resolves the entry points and calls nvmlInit_v2.
  // Errors: kUnavailable when the system library is absent ("no NVIDIA driver
  // found") or init fails; kNotFound when an explicitly named library cannot
  // be loaded; kInternal when a required symbol is missing.
  static Result<std::shared_ptr<NvmlLibrary>> Load(const std::optional<std::string>& path);

  // Calls nvmlShutdown and dlcloses.
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlApi& api() const { return api_; }
  // The path that was dlopened.
  const std::string& path() const { return path_; }
  // The emulator's clock (zeusEmulatorNowNs) when the library is the Zeus
  // NVML emulator, else null (a real driver). Lives as long as this library.
  // Now() is the emulated time; SleepFor() waits until that time has moved
  // `duration` or the same wall duration has passed, whichever is first (it
  // never advances a manual clock).
  const Clock* emulator_clock() const { return emulator_clock_.get(); }

  // Calls an optional entry point; a missing one returns
  // NVML_ERROR_FUNCTION_NOT_FOUND.
  template <class Fn, class... Args>
  static nvmlReturn_t Call(Fn* fn, Args... args) {
    if (fn == nullptr) return NVML_ERROR_FUNCTION_NOT_FOUND;
    return fn(args...);
  }

 private:
  NvmlLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}

  void* handle_;
  std::string path_;
  NvmlApi api_;
  std::unique_ptr<const Clock> emulator_clock_;
};

}  // namespace zeus::device::nvml

#endif  // ZEUS_DEVICE_NVML_NVML_LIBRARY_H_
