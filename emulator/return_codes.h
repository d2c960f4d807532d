// Copyright 2026 The Zeus C++ Authors.
//
// The return codes of the emulator's two APIs, their texts and their names
// as used in scenario files:
//   * NVML: nvmlErrorString's texts; names are the NVML_ERROR_* enumerators
//     with or without the prefix ("NO_PERMISSION", "NVML_ERROR_GPU_IS_LOST").
//   * AMD SMI: amdsmi_status_code_to_string's texts; names are the
//     AMDSMI_STATUS_* enumerators with or without the prefix ("NOT_FOUND",
//     "AMDSMI_STATUS_NO_PERM").
// Names match in any case.
//
// Thread-safety: everything here is immutable.

#ifndef ZEUS_EMULATOR_RETURN_CODES_H_
#define ZEUS_EMULATOR_RETURN_CODES_H_

#include <optional>
#include <string_view>

#include "api_functions.h"
#include "device/amdsmi/amdsmi_abi.h"
#include "device/nvml/nvml_abi.h"

namespace zeus::emulator {

// The text nvmlErrorString returns for `code`; "Unknown Error" for codes
// NVML does not define. Never null; the string is static.
const char* ReturnCodeText(nvmlReturn_t code);

// The NVML code named `name`, which may be given with or without the
// "NVML_ERROR_" prefix and in any case ("NO_PERMISSION", "gpu_is_lost",
// "SUCCESS").
std::optional<nvmlReturn_t> ReturnCodeFromName(std::string_view name);

// The text amdsmi_status_code_to_string gives for `status`, or null for a
// code AMD SMI does not define. The string is static.
const char* AmdSmiStatusText(amdsmi_status_t status);

// The AMD SMI status named `name`, with or without the "AMDSMI_STATUS_"
// prefix, in any case ("NOT_FOUND", "amdsmi_status_no_perm", "SUCCESS").
std::optional<amdsmi_status_t> AmdSmiStatusFromName(std::string_view name);

// The code named `name` in `api`, as the int a fault rule carries (an AMD SMI
// status's bits), or nullopt.
std::optional<int> ApiCodeFromName(Api api, std::string_view name);

// The API whose prefix `name` carries ("NVML_..." or "AMDSMI_...", any case),
// or nullopt for an unprefixed name.
std::optional<Api> ApiOfCodeName(std::string_view name);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_RETURN_CODES_H_
