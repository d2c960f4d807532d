// Copyright 2026 The Zeus C++ Authors.
//
// The one translation table from amdsmi_status_t to zeus::Error.

#ifndef ZEUS_DEVICE_AMDSMI_AMDSMI_ERROR_H_
#define ZEUS_DEVICE_AMDSMI_AMDSMI_ERROR_H_

#include <span>
#include <string_view>

#include "device/amdsmi/amdsmi_abi.h"
#include "zeus/base/error.h"

namespace zeus::device::amdsmi {

// What kind of call failed; a permission failure on a setter names the ways
// to get the privilege.
enum class AmdSmiOperation { kQuery, kSetter };

struct AmdSmiErrorEntry {
  amdsmi_status_t code;
  std::string_view name;  // "NO_PERM"
  ErrorCode error_code;
  std::string_view explanation;  // what it means and what to do
};

// Every status code AMD SMI 24.7 defines (amdsmi_abi.h), with its translation.
std::span<const AmdSmiErrorEntry> AmdSmiErrorTable();

// Translates `code` (not AMDSMI_STATUS_SUCCESS). `what` names the call in
// words, e.g. "changing the power cap of GPU 0"; it starts the message. The
// error carries NativeSpace::kAmdSmi and the code. Codes outside the table
// are kInternal and keep their number.
Error AmdSmiError(amdsmi_status_t code, std::string_view what, AmdSmiOperation operation);

}  // namespace zeus::device::amdsmi

#endif  // ZEUS_DEVICE_AMDSMI_AMDSMI_ERROR_H_
