// Copyright 2026 The Zeus C++ Authors.

#include "device/amdsmi/amdsmi_error.h"

#include <array>

#include <fmt/format.h>

namespace zeus::device::amdsmi {
namespace {

using EC = ErrorCode;

constexpr std::array<AmdSmiErrorEntry, 42> kTable{{
    {AMDSMI_STATUS_INVAL, "INVAL", EC::kInvalidArgument,
     "AMD SMI rejected a value as invalid (out of the device's range, or a bad handle)"},
    {AMDSMI_STATUS_NOT_SUPPORTED, "NOT_SUPPORTED", EC::kNotSupported,
     "this GPU or driver does not support the operation"},
    {AMDSMI_STATUS_NOT_YET_IMPLEMENTED, "NOT_YET_IMPLEMENTED", EC::kNotSupported,
     "this AMD SMI version does not implement the operation"},
    {AMDSMI_STATUS_FAIL_LOAD_MODULE, "FAIL_LOAD_MODULE", EC::kUnavailable,
     "AMD SMI could not load one of its modules; check the ROCm installation"},
    {AMDSMI_STATUS_FAIL_LOAD_SYMBOL, "FAIL_LOAD_SYMBOL", EC::kUnavailable,
     "AMD SMI could not load a symbol it needs; the ROCm installation is incomplete or mixed"},
    {AMDSMI_STATUS_DRM_ERROR, "DRM_ERROR", EC::kUnavailable,
     "a call into libdrm failed; check that the amdgpu driver is loaded and /dev/dri is accessible"},
    {AMDSMI_STATUS_API_FAILED, "API_FAILED", EC::kInternal, "the driver call behind AMD SMI failed"},
    {AMDSMI_STATUS_TIMEOUT, "TIMEOUT", EC::kTimeout, "the driver timed out"},
    {AMDSMI_STATUS_RETRY, "RETRY", EC::kUnavailable, "the device was busy; retry shortly"},
    {AMDSMI_STATUS_NO_PERM, "NO_PERM", EC::kPermissionDenied,
     "the current user lacks the privilege for this operation"},
    {AMDSMI_STATUS_INTERRUPT, "INTERRUPT", EC::kUnavailable, "the call was interrupted; retry it"},
    {AMDSMI_STATUS_IO, "IO", EC::kDeviceLost, "an I/O error occurred talking to the GPU; check dmesg"},
    {AMDSMI_STATUS_ADDRESS_FAULT, "ADDRESS_FAULT", EC::kInternal,
     "AMD SMI reported a bad address (a bug in Zeus or AMD SMI; please report it)"},
    {AMDSMI_STATUS_FILE_ERROR, "FILE_ERROR", EC::kUnavailable,
     "AMD SMI could not access a sysfs file of the GPU; check permissions and that the amdgpu driver is loaded"},
    {AMDSMI_STATUS_OUT_OF_RESOURCES, "OUT_OF_RESOURCES", EC::kInternal, "AMD SMI ran out of memory"},
    {AMDSMI_STATUS_INTERNAL_EXCEPTION, "INTERNAL_EXCEPTION", EC::kInternal, "AMD SMI caught an internal exception"},
    {AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS, "INPUT_OUT_OF_BOUNDS", EC::kInvalidArgument,
     "the value is outside the range the GPU allows"},
    {AMDSMI_STATUS_INIT_ERROR, "INIT_ERROR", EC::kUnavailable,
     "AMD SMI failed to initialise; check that the amdgpu driver is loaded and the ROCm version (6.3 or newer)"},
    {AMDSMI_STATUS_REFCOUNT_OVERFLOW, "REFCOUNT_OVERFLOW", EC::kInternal, "AMD SMI's reference count overflowed"},
    {AMDSMI_STATUS_BUSY, "BUSY", EC::kUnavailable, "the GPU is busy; retry shortly"},
    {AMDSMI_STATUS_NOT_FOUND, "NOT_FOUND", EC::kNotFound, "the GPU or object was not found"},
    {AMDSMI_STATUS_NOT_INIT, "NOT_INIT", EC::kUnavailable,
     "AMD SMI was not initialised (a library bug or a concurrent shutdown); reopen the devices"},
    {AMDSMI_STATUS_NO_SLOT, "NO_SLOT", EC::kUnavailable, "AMD SMI has no free slot for the request"},
    {AMDSMI_STATUS_DRIVER_NOT_LOADED, "DRIVER_NOT_LOADED", EC::kUnavailable,
     "the amdgpu kernel driver is not loaded; load it (modprobe amdgpu) or reinstall ROCm"},
    {AMDSMI_STATUS_NO_DATA, "NO_DATA", EC::kNotFound, "the driver has no data for this query"},
    {AMDSMI_STATUS_INSUFFICIENT_SIZE, "INSUFFICIENT_SIZE", EC::kInternal,
     "a buffer passed to AMD SMI was too small (a bug in Zeus; please report it)"},
    {AMDSMI_STATUS_UNEXPECTED_SIZE, "UNEXPECTED_SIZE", EC::kInternal, "AMD SMI read an unexpected amount of data"},
    {AMDSMI_STATUS_UNEXPECTED_DATA, "UNEXPECTED_DATA", EC::kInternal, "AMD SMI read data it did not expect"},
    {AMDSMI_STATUS_NON_AMD_CPU, "NON_AMD_CPU", EC::kNotSupported, "the CPU is not an AMD CPU"},
    {AMDSMI_STATUS_NO_ENERGY_DRV, "NO_ENERGY_DRV", EC::kUnavailable, "the AMD energy driver is not loaded"},
    {AMDSMI_STATUS_NO_MSR_DRV, "NO_MSR_DRV", EC::kUnavailable, "the MSR driver is not loaded"},
    {AMDSMI_STATUS_NO_HSMP_DRV, "NO_HSMP_DRV", EC::kUnavailable, "the HSMP driver is not loaded"},
    {AMDSMI_STATUS_NO_HSMP_SUP, "NO_HSMP_SUP", EC::kNotSupported, "HSMP is not supported"},
    {AMDSMI_STATUS_NO_HSMP_MSG_SUP, "NO_HSMP_MSG_SUP", EC::kNotSupported, "this HSMP message is not supported"},
    {AMDSMI_STATUS_HSMP_TIMEOUT, "HSMP_TIMEOUT", EC::kTimeout, "an HSMP message timed out"},
    {AMDSMI_STATUS_NO_DRV, "NO_DRV", EC::kUnavailable, "neither the energy nor the HSMP driver is loaded"},
    {AMDSMI_STATUS_FILE_NOT_FOUND, "FILE_NOT_FOUND", EC::kNotFound, "a file AMD SMI needs was not found"},
    {AMDSMI_STATUS_ARG_PTR_NULL, "ARG_PTR_NULL", EC::kInternal,
     "AMD SMI was passed a null pointer (a bug in Zeus; please report it)"},
    {AMDSMI_STATUS_AMDGPU_RESTART_ERR, "AMDGPU_RESTART_ERR", EC::kDeviceLost,
     "restarting the amdgpu driver failed; reload it or reboot"},
    {AMDSMI_STATUS_SETTING_UNAVAILABLE, "SETTING_UNAVAILABLE", EC::kNotSupported,
     "this setting is not available on this GPU"},
    {AMDSMI_STATUS_MAP_ERROR, "MAP_ERROR", EC::kInternal,
     "AMD SMI hit an internal error it could not name; see its log (AMD_LOG_LEVEL)"},
    {AMDSMI_STATUS_UNKNOWN_ERROR, "UNKNOWN_ERROR", EC::kInternal, "AMD SMI reported an unknown error"},
}};

}  // namespace

std::span<const AmdSmiErrorEntry> AmdSmiErrorTable() { return kTable; }

Error AmdSmiError(amdsmi_status_t code, std::string_view what, AmdSmiOperation operation) {
  const int native = static_cast<int>(code);
  for (const AmdSmiErrorEntry& entry : kTable) {
    if (entry.code != code) continue;
    if (entry.code == AMDSMI_STATUS_NO_PERM && operation == AmdSmiOperation::kSetter) {
      return Error(EC::kPermissionDenied,
                   fmt::format("{} needs root (AMD SMI NO_PERM): the amdgpu driver's power cap file is writable "
                               "by root only; run as root (sudo), or ask zeusd to do it (zeusd serve "
                               "--gpu-backend amdsmi)",
                               what),
                   NativeSpace::kAmdSmi, native);
    }
    return Error(entry.error_code, fmt::format("{}: AMD SMI {}: {}", what, entry.name, entry.explanation),
                 NativeSpace::kAmdSmi, native);
  }
  return Error(EC::kInternal, fmt::format("{}: AMD SMI returned unknown status code {}", what, code),
               NativeSpace::kAmdSmi, native);
}

}  // namespace zeus::device::amdsmi
