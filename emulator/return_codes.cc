// Copyright 2026 The Zeus C++ Authors.

#include "return_codes.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace zeus::emulator {
namespace {

struct ReturnCodeInfo {
  nvmlReturn_t code;
  std::string_view name;  // without the NVML_ERROR_ prefix
  const char* text;       // as nvmlErrorString reports it
};

constexpr std::array kReturnCodes = {
    ReturnCodeInfo{NVML_SUCCESS, "SUCCESS", "Success"},
    ReturnCodeInfo{NVML_ERROR_UNINITIALIZED, "UNINITIALIZED", "Uninitialized"},
    ReturnCodeInfo{NVML_ERROR_INVALID_ARGUMENT, "INVALID_ARGUMENT", "Invalid Argument"},
    ReturnCodeInfo{NVML_ERROR_NOT_SUPPORTED, "NOT_SUPPORTED", "Not Supported"},
    ReturnCodeInfo{NVML_ERROR_NO_PERMISSION, "NO_PERMISSION", "Insufficient Permissions"},
    ReturnCodeInfo{NVML_ERROR_ALREADY_INITIALIZED, "ALREADY_INITIALIZED", "Already Initialized"},
    ReturnCodeInfo{NVML_ERROR_NOT_FOUND, "NOT_FOUND", "Not Found"},
    ReturnCodeInfo{NVML_ERROR_INSUFFICIENT_SIZE, "INSUFFICIENT_SIZE", "Insufficient Size"},
    ReturnCodeInfo{NVML_ERROR_INSUFFICIENT_POWER, "INSUFFICIENT_POWER", "Insufficient External Power"},
    ReturnCodeInfo{NVML_ERROR_DRIVER_NOT_LOADED, "DRIVER_NOT_LOADED", "Driver Not Loaded"},
    ReturnCodeInfo{NVML_ERROR_TIMEOUT, "TIMEOUT", "Timeout"},
    ReturnCodeInfo{NVML_ERROR_IRQ_ISSUE, "IRQ_ISSUE", "Interrupt Request Issue"},
    ReturnCodeInfo{NVML_ERROR_LIBRARY_NOT_FOUND, "LIBRARY_NOT_FOUND", "NVML Shared Library Not Found"},
    ReturnCodeInfo{NVML_ERROR_FUNCTION_NOT_FOUND, "FUNCTION_NOT_FOUND", "Function Not Found"},
    ReturnCodeInfo{NVML_ERROR_CORRUPTED_INFOROM, "CORRUPTED_INFOROM", "Corrupted infoROM"},
    ReturnCodeInfo{NVML_ERROR_GPU_IS_LOST, "GPU_IS_LOST", "GPU is lost"},
    ReturnCodeInfo{NVML_ERROR_RESET_REQUIRED, "RESET_REQUIRED", "GPU requires restart"},
    ReturnCodeInfo{NVML_ERROR_OPERATING_SYSTEM, "OPERATING_SYSTEM", "The operating system has blocked the request."},
    ReturnCodeInfo{NVML_ERROR_LIB_RM_VERSION_MISMATCH, "LIB_RM_VERSION_MISMATCH",
                   "RM has detected an NVML/RM version mismatch."},
    ReturnCodeInfo{NVML_ERROR_IN_USE, "IN_USE", "In use by another client"},
    ReturnCodeInfo{NVML_ERROR_MEMORY, "MEMORY", "Insufficient Memory"},
    ReturnCodeInfo{NVML_ERROR_NO_DATA, "NO_DATA", "No data"},
    ReturnCodeInfo{NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "VGPU_ECC_NOT_SUPPORTED", "vGPU ECC is not supported"},
    ReturnCodeInfo{NVML_ERROR_INSUFFICIENT_RESOURCES, "INSUFFICIENT_RESOURCES", "Insufficient resources"},
    ReturnCodeInfo{NVML_ERROR_FREQ_NOT_SUPPORTED, "FREQ_NOT_SUPPORTED", "Frequency not supported"},
    ReturnCodeInfo{NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "ARGUMENT_VERSION_MISMATCH", "Argument version mismatch"},
    ReturnCodeInfo{NVML_ERROR_DEPRECATED, "DEPRECATED", "Deprecated"},
    ReturnCodeInfo{NVML_ERROR_NOT_READY, "NOT_READY", "Not ready"},
    ReturnCodeInfo{NVML_ERROR_GPU_NOT_FOUND, "GPU_NOT_FOUND", "GPU not found"},
    ReturnCodeInfo{NVML_ERROR_INVALID_STATE, "INVALID_STATE", "Invalid state"},
    ReturnCodeInfo{NVML_ERROR_UNKNOWN, "UNKNOWN", "Unknown Error"},
};

std::string ToUpper(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return upper;
}

struct AmdSmiStatusInfo {
  amdsmi_status_t code;
  std::string_view name;  // without the AMDSMI_STATUS_ prefix
  const char* text;       // as amdsmi_status_code_to_string reports it (the emulator's wording)
};

constexpr std::array kAmdSmiStatuses = {
    AmdSmiStatusInfo{AMDSMI_STATUS_SUCCESS, "SUCCESS", "SUCCESS: the call succeeded"},
    AmdSmiStatusInfo{AMDSMI_STATUS_INVAL, "INVAL", "INVAL: an argument is not valid"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NOT_SUPPORTED, "NOT_SUPPORTED", "NOT_SUPPORTED: the device does not support this"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NOT_YET_IMPLEMENTED, "NOT_YET_IMPLEMENTED",
                     "NOT_YET_IMPLEMENTED: the library does not implement this yet"},
    AmdSmiStatusInfo{AMDSMI_STATUS_FAIL_LOAD_MODULE, "FAIL_LOAD_MODULE", "FAIL_LOAD_MODULE: a module failed to load"},
    AmdSmiStatusInfo{AMDSMI_STATUS_FAIL_LOAD_SYMBOL, "FAIL_LOAD_SYMBOL", "FAIL_LOAD_SYMBOL: a symbol failed to load"},
    AmdSmiStatusInfo{AMDSMI_STATUS_DRM_ERROR, "DRM_ERROR", "DRM_ERROR: a libdrm call failed"},
    AmdSmiStatusInfo{AMDSMI_STATUS_API_FAILED, "API_FAILED", "API_FAILED: an underlying API call failed"},
    AmdSmiStatusInfo{AMDSMI_STATUS_TIMEOUT, "TIMEOUT", "TIMEOUT: the operation timed out"},
    AmdSmiStatusInfo{AMDSMI_STATUS_RETRY, "RETRY", "RETRY: the resource is temporarily unavailable; try again"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NO_PERM, "NO_PERM", "NO_PERM: the caller lacks the permission for this"},
    AmdSmiStatusInfo{AMDSMI_STATUS_INTERRUPT, "INTERRUPT", "INTERRUPT: the call was interrupted"},
    AmdSmiStatusInfo{AMDSMI_STATUS_IO, "IO", "IO: an input/output error occurred"},
    AmdSmiStatusInfo{AMDSMI_STATUS_ADDRESS_FAULT, "ADDRESS_FAULT", "ADDRESS_FAULT: a bad address"},
    AmdSmiStatusInfo{AMDSMI_STATUS_FILE_ERROR, "FILE_ERROR", "FILE_ERROR: a file could not be read or written"},
    AmdSmiStatusInfo{AMDSMI_STATUS_OUT_OF_RESOURCES, "OUT_OF_RESOURCES", "OUT_OF_RESOURCES: not enough memory"},
    AmdSmiStatusInfo{AMDSMI_STATUS_INTERNAL_EXCEPTION, "INTERNAL_EXCEPTION",
                     "INTERNAL_EXCEPTION: an internal exception was caught"},
    AmdSmiStatusInfo{AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS, "INPUT_OUT_OF_BOUNDS",
                     "INPUT_OUT_OF_BOUNDS: an argument is out of the allowed range"},
    AmdSmiStatusInfo{AMDSMI_STATUS_INIT_ERROR, "INIT_ERROR", "INIT_ERROR: the library failed to initialise"},
    AmdSmiStatusInfo{AMDSMI_STATUS_REFCOUNT_OVERFLOW, "REFCOUNT_OVERFLOW",
                     "REFCOUNT_OVERFLOW: an internal reference count overflowed"},
    AmdSmiStatusInfo{AMDSMI_STATUS_BUSY, "BUSY", "BUSY: the device is busy"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NOT_FOUND, "NOT_FOUND", "NOT_FOUND: the device or object was not found"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NOT_INIT, "NOT_INIT", "NOT_INIT: the library is not initialised"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NO_SLOT, "NO_SLOT", "NO_SLOT: no free slot"},
    AmdSmiStatusInfo{AMDSMI_STATUS_DRIVER_NOT_LOADED, "DRIVER_NOT_LOADED",
                     "DRIVER_NOT_LOADED: the driver is not loaded"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NO_DATA, "NO_DATA", "NO_DATA: no data was found"},
    AmdSmiStatusInfo{AMDSMI_STATUS_INSUFFICIENT_SIZE, "INSUFFICIENT_SIZE",
                     "INSUFFICIENT_SIZE: the buffer is too small for the data"},
    AmdSmiStatusInfo{AMDSMI_STATUS_UNEXPECTED_SIZE, "UNEXPECTED_SIZE",
                     "UNEXPECTED_SIZE: the data has an unexpected size"},
    AmdSmiStatusInfo{AMDSMI_STATUS_UNEXPECTED_DATA, "UNEXPECTED_DATA", "UNEXPECTED_DATA: the data is not as expected"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NON_AMD_CPU, "NON_AMD_CPU", "NON_AMD_CPU: the CPU is not an AMD CPU"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NO_ENERGY_DRV, "NO_ENERGY_DRV", "NO_ENERGY_DRV: the energy driver is not loaded"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NO_MSR_DRV, "NO_MSR_DRV", "NO_MSR_DRV: the MSR driver is not loaded"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NO_HSMP_DRV, "NO_HSMP_DRV", "NO_HSMP_DRV: the HSMP driver is not loaded"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NO_HSMP_SUP, "NO_HSMP_SUP", "NO_HSMP_SUP: HSMP is not supported"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NO_HSMP_MSG_SUP, "NO_HSMP_MSG_SUP",
                     "NO_HSMP_MSG_SUP: the HSMP message is not supported"},
    AmdSmiStatusInfo{AMDSMI_STATUS_HSMP_TIMEOUT, "HSMP_TIMEOUT", "HSMP_TIMEOUT: an HSMP message timed out"},
    AmdSmiStatusInfo{AMDSMI_STATUS_NO_DRV, "NO_DRV", "NO_DRV: no energy or HSMP driver is loaded"},
    AmdSmiStatusInfo{AMDSMI_STATUS_FILE_NOT_FOUND, "FILE_NOT_FOUND",
                     "FILE_NOT_FOUND: a file or directory was not found"},
    AmdSmiStatusInfo{AMDSMI_STATUS_ARG_PTR_NULL, "ARG_PTR_NULL", "ARG_PTR_NULL: a pointer argument is null"},
    AmdSmiStatusInfo{AMDSMI_STATUS_AMDGPU_RESTART_ERR, "AMDGPU_RESTART_ERR",
                     "AMDGPU_RESTART_ERR: restarting the amdgpu driver failed"},
    AmdSmiStatusInfo{AMDSMI_STATUS_SETTING_UNAVAILABLE, "SETTING_UNAVAILABLE",
                     "SETTING_UNAVAILABLE: the setting is not available"},
    AmdSmiStatusInfo{AMDSMI_STATUS_MAP_ERROR, "MAP_ERROR", "MAP_ERROR: an internal status could not be mapped"},
    AmdSmiStatusInfo{AMDSMI_STATUS_UNKNOWN_ERROR, "UNKNOWN_ERROR", "UNKNOWN_ERROR: an unknown error occurred"},
};

// `name` in upper case without `prefix` (if it has it).
std::string Unprefixed(std::string_view name, std::string_view prefix) {
  std::string upper = ToUpper(name);
  if (upper.starts_with(prefix)) upper.erase(0, prefix.size());
  return upper;
}

}  // namespace

const char* ReturnCodeText(nvmlReturn_t code) {
  for (const ReturnCodeInfo& info : kReturnCodes) {
    if (info.code == code) return info.text;
  }
  return "Unknown Error";
}

std::optional<nvmlReturn_t> ReturnCodeFromName(std::string_view name) {
  std::string upper = ToUpper(name);
  constexpr std::string_view kPrefix = "NVML_ERROR_";
  if (upper.starts_with(kPrefix)) upper.erase(0, kPrefix.size());
  if (upper == "NVML_SUCCESS") upper = "SUCCESS";
  for (const ReturnCodeInfo& info : kReturnCodes) {
    if (info.name == upper) return info.code;
  }
  return std::nullopt;
}

const char* AmdSmiStatusText(amdsmi_status_t status) {
  for (const AmdSmiStatusInfo& info : kAmdSmiStatuses) {
    if (info.code == status) return info.text;
  }
  return nullptr;
}

std::optional<amdsmi_status_t> AmdSmiStatusFromName(std::string_view name) {
  const std::string upper = Unprefixed(name, "AMDSMI_STATUS_");
  for (const AmdSmiStatusInfo& info : kAmdSmiStatuses) {
    if (info.name == upper) return info.code;
  }
  return std::nullopt;
}

std::optional<int> ApiCodeFromName(Api api, std::string_view name) {
  if (api == Api::kNvml) return ReturnCodeFromName(name);
  // An AMD SMI status's bits as an int (0xFFFFFFFF: -1), as fault rules carry codes.
  if (const auto status = AmdSmiStatusFromName(name)) return static_cast<int>(*status);
  return std::nullopt;
}

std::optional<Api> ApiOfCodeName(std::string_view name) {
  const std::string upper = ToUpper(name);
  if (upper.starts_with("NVML_")) return Api::kNvml;
  if (upper.starts_with("AMDSMI_")) return Api::kAmdSmi;
  return std::nullopt;
}

}  // namespace zeus::emulator
