// Copyright 2026 The Zeus C++ Authors.
//
// The one translation table from nvmlReturn_t to zeus::Error.

#ifndef ZEUS_DEVICE_NVML_NVML_ERROR_H_
#define ZEUS_DEVICE_NVML_NVML_ERROR_H_

#include <span>
#include <string_view>

#include "device/nvml/nvml_abi.h"
#include "zeus/base/error.h"

namespace zeus::device::nvml {

// What kind of call failed; it changes the advice in some messages (a
// permission failure on a setter names the ways to get the privilege).
enum class NvmlOperation { kQuery, kSetter };

struct NvmlErrorEntry {
  nvmlReturn_t code;
  std::string_view name;  // "NO_PERMISSION"
  ErrorCode error_code;
  std::string_view explanation;  // what it means and what to do
};

// Every return code NVML defines (nvml_abi.h), with its translation.
std::span<const NvmlErrorEntry> NvmlErrorTable();

// Translates `code` (not NVML_SUCCESS). `what` names the call in words, e.g.
// "changing the power limit of GPU 0"; it starts the message. Codes outside
// the table are kInternal and keep their number.
Error NvmlError(nvmlReturn_t code, std::string_view what, NvmlOperation operation);

}  // namespace zeus::device::nvml

#endif  // ZEUS_DEVICE_NVML_NVML_ERROR_H_
