// Copyright 2026 The Zeus C++ Authors.
//
// CUDA_VISIBLE_DEVICES resolution, kept pure so that every rule is unit-tested.

#ifndef ZEUS_DEVICE_NVML_VISIBLE_DEVICES_H_
#define ZEUS_DEVICE_NVML_VISIBLE_DEVICES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::device::nvml {

// Maps a CUDA_VISIBLE_DEVICES value onto NVML indices, in the order given.
// `uuids` holds each NVML device's UUID by NVML index.
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
                                                        const std::vector<std::string>& uuids);

}  // namespace zeus::device::nvml

#endif  // ZEUS_DEVICE_NVML_VISIBLE_DEVICES_H_
