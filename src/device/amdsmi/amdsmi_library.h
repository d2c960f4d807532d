// Copyright 2026 The Zeus C++ Authors.
//
// AmdSmiLibrary: AMD SMI (libamd_smi.so) opened with dlopen, checked for
// ROCm 6.3 or newer and initialised for AMD GPUs, with every entry point of
// amdsmi_api.def resolved once. Private to the device layer.
//
// Thread-safety: AMD SMI was not thread-safe before ROCm 7.2 (field notes
// 3.2), so Call() serialises every call through one mutex. One slow call
// therefore delays calls on the other GPUs of the same library; it never
// fails them.

#ifndef ZEUS_DEVICE_AMDSMI_AMDSMI_LIBRARY_H_
#define ZEUS_DEVICE_AMDSMI_AMDSMI_LIBRARY_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "device/amdsmi/amdsmi_abi.h"
#include "zeus/base/clock.h"
#include "zeus/base/error.h"

namespace zeus::device::amdsmi {

// One function pointer per entry of amdsmi_api.def, named as in AMD SMI. An
// optional entry the library lacks is null; call it through Call().
struct AmdSmiApi {
#define ZEUS_AMDSMI_FN(kind, name, params) amdsmi_status_t(*name) params = nullptr;
#include "device/amdsmi/amdsmi_api.def"
#undef ZEUS_AMDSMI_FN
};

// The oldest AMD SMI library whose ABI we declare (amdsmi_abi.h): 24.7, as
// shipped with ROCm 6.3.
inline constexpr unsigned kMinAmdSmiYear = 24;
inline constexpr unsigned kMinAmdSmiMajor = 7;

class AmdSmiLibrary {
 public:
  // Opens the library ChooseAmdSmiLibrary(path) names (zeus/device/environment.h),
  // falling back from the system's libamd_smi.so to ROCm's default folder,
  // resolves the entry points, checks the version and calls amdsmi_init.
  // Errors: kUnavailable when no system library loads ("no AMD GPU driver
  // found") or init fails for want of a driver; kNotFound when an explicitly
  // named library cannot be loaded; kFailedPrecondition when the library is
  // older than ROCm 6.3 (a missing entry point or a version below 24.7; the
  // message names the library, its version and the ROCm version needed).
  // A library newer than the declared ABI loads, with one logged warning.
  static Result<std::shared_ptr<AmdSmiLibrary>> Load(const std::optional<std::string>& path);

  // Calls amdsmi_shut_down and dlcloses.
  ~AmdSmiLibrary();
  AmdSmiLibrary(const AmdSmiLibrary&) = delete;
  AmdSmiLibrary& operator=(const AmdSmiLibrary&) = delete;

  const AmdSmiApi& api() const { return api_; }
  const std::string& path() const { return path_; }
  // "24.7.0" and the like.
  const std::string& version() const { return version_; }
  // See NvmlLibrary::emulator_clock(): the AMD SMI emulator's clock, else null.
  const Clock* emulator_clock() const { return emulator_clock_.get(); }

  // Calls an entry point under the library's lock; a missing optional one
  // returns AMDSMI_STATUS_NOT_SUPPORTED.
  template <class Fn, class... Args>
  amdsmi_status_t Call(Fn* fn, Args... args) const {
    if (fn == nullptr) return AMDSMI_STATUS_NOT_SUPPORTED;
    std::lock_guard<std::mutex> lock(mutex_);
    return fn(args...);
  }

 private:
  AmdSmiLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}

  void* handle_;
  std::string path_;
  std::string version_;
  AmdSmiApi api_;
  std::unique_ptr<const Clock> emulator_clock_;
  mutable std::mutex mutex_;
  bool initialised_ = false;
};

}  // namespace zeus::device::amdsmi

#endif  // ZEUS_DEVICE_AMDSMI_AMDSMI_LIBRARY_H_
