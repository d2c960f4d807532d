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

}  // namespace zeus::emulator
