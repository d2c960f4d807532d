// Copyright 2026 The Zeus C++ Authors.
//
// Visible-devices resolution (CUDA_VISIBLE_DEVICES, and on AMD
// ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES), kept pure so that every
// rule is unit-tested.

#ifndef ZEUS_DEVICE_VISIBLE_DEVICES_H_
#define ZEUS_DEVICE_VISIBLE_DEVICES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::device {

// Maps a CUDA_VISIBLE_DEVICES value onto NVML indices, in the order given.
// `uuids` holds each NVML device's UUID by NVML index. `variable` names the
// setting in messages (HIP_VISIBLE_DEVICES, ...).
//
// Rules: unset (nullopt) -> every device in NVML order; an empty or
// all-blank value -> no device (as CUDA does). Entries are separated by
// commas, surrounding blanks ignored, and each is either a decimal NVML index
// or a GPU UUID ("GPU-..."; a unique prefix suffices, as in CUDA). A negative
// index ("-1") as the last entry ends the list, as in CUDA: "-1" alone is no
// device, "0,1,-1" is 0 and 1. Errors, each naming the entry: "MIG-..." ->
// kNotSupported; a negative index followed by more entries (CUDA would
// silently ignore them), an index out of range, an unknown or ambiguous UUID,
// a duplicate, or anything else -> kInvalidArgument. (CUDA instead stops
// silently at the first invalid entry; we refuse rather than see other GPUs
// than CUDA would.)
Result<std::vector<unsigned int>> ResolveVisibleDevices(std::optional<std::string_view> spec,
                                                        const std::vector<std::string>& uuids,
                                                        std::string_view variable = "CUDA_VISIBLE_DEVICES");

// ROCm's two levels (AmdVisibleDevices, environment.h): `rocr` selects from
// every GPU (`uuids` in HIP order), then `hip` selects from what `rocr` left,
// by position in that list. Each level follows ResolveVisibleDevices' rules;
// a UUID entry ("GPU-<prefix>") matches "GPU-" followed by the AMD SMI UUID.
// Returns indices into `uuids`.
Result<std::vector<unsigned int>> ResolveAmdVisibleDevices(std::optional<std::string_view> rocr,
                                                           std::optional<std::string_view> hip,
                                                           std::string_view hip_variable,
                                                           const std::vector<std::string>& uuids);

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_VISIBLE_DEVICES_H_
