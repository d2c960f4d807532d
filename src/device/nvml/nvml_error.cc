// Copyright 2026 The Zeus C++ Authors.

#include "device/nvml/nvml_error.h"

#include <array>

#include <fmt/format.h>

namespace zeus::device::nvml {
namespace {

using EC = ErrorCode;

constexpr std::array<NvmlErrorEntry, 30> kTable{{
    {NVML_ERROR_UNINITIALIZED, "UNINITIALIZED", EC::kUnavailable,
     "NVML was not initialised (a library bug or a concurrent nvmlShutdown); reopen the devices"},
    {NVML_ERROR_INVALID_ARGUMENT, "INVALID_ARGUMENT", EC::kInvalidArgument,
     "the driver rejected a value as invalid (out of the device's range, or a bad device handle)"},
    {NVML_ERROR_NOT_SUPPORTED, "NOT_SUPPORTED", EC::kNotSupported,
     "this GPU or driver does not support the operation"},
    {NVML_ERROR_NO_PERMISSION, "NO_PERMISSION", EC::kPermissionDenied,
     "the current user lacks the privilege for this operation"},
    {NVML_ERROR_ALREADY_INITIALIZED, "ALREADY_INITIALIZED", EC::kInternal, "NVML was already initialised"},
    {NVML_ERROR_NOT_FOUND, "NOT_FOUND", EC::kNotFound, "the requested GPU or object was not found"},
    {NVML_ERROR_INSUFFICIENT_SIZE, "INSUFFICIENT_SIZE", EC::kInternal,
     "a buffer passed to NVML was too small (a bug in Zeus; please report it)"},
    {NVML_ERROR_INSUFFICIENT_POWER, "INSUFFICIENT_POWER", EC::kDeviceLost,
     "the GPU's external power cables are not properly attached"},
    {NVML_ERROR_DRIVER_NOT_LOADED, "DRIVER_NOT_LOADED", EC::kUnavailable,
     "the NVIDIA kernel driver is not loaded; load it (modprobe nvidia) or reinstall the driver"},
    {NVML_ERROR_TIMEOUT, "TIMEOUT", EC::kTimeout, "the driver timed out"},
    {NVML_ERROR_IRQ_ISSUE, "IRQ_ISSUE", EC::kDeviceLost, "the kernel detected an interrupt problem with the GPU"},
    {NVML_ERROR_LIBRARY_NOT_FOUND, "LIBRARY_NOT_FOUND", EC::kUnavailable,
     "no NVIDIA driver found: NVML's shared library could not be located"},
    {NVML_ERROR_FUNCTION_NOT_FOUND, "FUNCTION_NOT_FOUND", EC::kNotSupported,
     "the installed NVML library lacks this function; the driver is too old"},
    {NVML_ERROR_CORRUPTED_INFOROM, "CORRUPTED_INFOROM", EC::kDeviceLost, "the GPU's infoROM is corrupted"},
    {NVML_ERROR_GPU_IS_LOST, "GPU_IS_LOST", EC::kDeviceLost,
     "the GPU has fallen off the bus or become inaccessible; check dmesg and reset or reseat the GPU"},
    {NVML_ERROR_RESET_REQUIRED, "RESET_REQUIRED", EC::kDeviceLost,
     "the GPU needs a reset (nvidia-smi -r) or a reboot before it can be used"},
    {NVML_ERROR_OPERATING_SYSTEM, "OPERATING_SYSTEM", EC::kInternal, "the operating system blocked the request"},
    {NVML_ERROR_LIB_RM_VERSION_MISMATCH, "LIB_RM_VERSION_MISMATCH", EC::kUnavailable,
     "the NVML library and the kernel driver versions differ; reboot or reload the driver after an upgrade"},
    {NVML_ERROR_IN_USE, "IN_USE", EC::kFailedPrecondition, "the GPU is in use by another operation"},
    {NVML_ERROR_MEMORY, "MEMORY", EC::kInternal, "the driver ran out of memory"},
    {NVML_ERROR_NO_DATA, "NO_DATA", EC::kNotFound, "the driver has no data for this query yet"},
    {NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "VGPU_ECC_NOT_SUPPORTED", EC::kNotSupported,
     "the operation is unavailable because ECC is enabled on a vGPU"},
    {NVML_ERROR_INSUFFICIENT_RESOURCES, "INSUFFICIENT_RESOURCES", EC::kUnavailable,
     "the driver lacks the resources for this request"},
    {NVML_ERROR_FREQ_NOT_SUPPORTED, "FREQ_NOT_SUPPORTED", EC::kInvalidArgument,
     "the requested clock frequency is not supported by this GPU"},
    {NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "ARGUMENT_VERSION_MISMATCH", EC::kInternal,
     "NVML and Zeus disagree on a structure version (a bug in Zeus; please report it)"},
    {NVML_ERROR_DEPRECATED, "DEPRECATED", EC::kNotSupported, "the driver no longer supports this function"},
    {NVML_ERROR_NOT_READY, "NOT_READY", EC::kUnavailable, "the GPU is not ready; retry shortly"},
    {NVML_ERROR_GPU_NOT_FOUND, "GPU_NOT_FOUND", EC::kNotFound, "no GPU was found"},
    {NVML_ERROR_INVALID_STATE, "INVALID_STATE", EC::kFailedPrecondition,
     "the GPU is in a state that does not allow this operation"},
    {NVML_ERROR_UNKNOWN, "UNKNOWN", EC::kInternal, "the driver reported an unknown error"},
}};

}  // namespace

std::span<const NvmlErrorEntry> NvmlErrorTable() { return kTable; }

Error NvmlError(nvmlReturn_t code, std::string_view what, NvmlOperation operation) {
  for (const NvmlErrorEntry& entry : kTable) {
    if (entry.code != code) continue;
    if (entry.code == NVML_ERROR_NO_PERMISSION && operation == NvmlOperation::kSetter) {
      return Error(EC::kPermissionDenied,
                   fmt::format("{} needs root or CAP_SYS_ADMIN (NVML NO_PERMISSION); run as root (sudo), or "
                               "grant CAP_SYS_ADMIN (e.g. docker run --cap-add SYS_ADMIN)",
                               what),
                   NativeSpace::kNvml, code);
    }
    return Error(entry.error_code, fmt::format("{}: NVML {}: {}", what, entry.name, entry.explanation),
                 NativeSpace::kNvml, code);
  }
  return Error(EC::kInternal, fmt::format("{}: NVML returned unknown error code {}", what, code), NativeSpace::kNvml,
               code);
}

}  // namespace zeus::device::nvml
