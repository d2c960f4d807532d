// Copyright 2026 The Zeus C++ Authors.
//
// NVML return codes: their nvmlErrorString texts and their names (the
// NVML_ERROR_* enumerator without the prefix), as used in scenario files.
//
// Thread-safety: everything here is immutable.

#ifndef ZEUS_EMULATOR_RETURN_CODES_H_
#define ZEUS_EMULATOR_RETURN_CODES_H_

#include <optional>
#include <string_view>

#include "device/nvml/nvml_abi.h"

namespace zeus::emulator {

// The text nvmlErrorString returns for `code`; "Unknown Error" for codes
// NVML does not define. Never null; the string is static.
const char* ReturnCodeText(nvmlReturn_t code);

// The code named `name`, which may be given with or without the "NVML_ERROR_"
// prefix and in any case ("NO_PERMISSION", "gpu_is_lost", "SUCCESS").
std::optional<nvmlReturn_t> ReturnCodeFromName(std::string_view name);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_RETURN_CODES_H_
