// Copyright 2026 The Zeus C++ Authors.

#include "device/visible_devices.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "base/strings.h"

namespace zeus::device {
namespace {

// "-1", "-2", ...
bool IsNegativeIndex(std::string_view entry) {
  if (entry.size() < 2 || entry.front() != '-') return false;
  return std::all_of(entry.begin() + 1, entry.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Result<std::vector<unsigned int>> ResolveVisibleDevices(std::optional<std::string_view> spec,
                                                        const std::vector<std::string>& uuids,
                                                        std::string_view variable) {
  std::vector<unsigned int> visible;
  if (!spec) {
    for (unsigned int i = 0; i < uuids.size(); ++i) visible.push_back(i);
    return visible;
  }
  const std::string_view all = *spec;
  auto bad = [&](std::string_view entry, std::string_view why) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}={}: entry \"{}\" {}; use comma-separated GPU indices (0-{}) or "
                            "GPU UUIDs as listed by `zeus info`",
                            variable, all, entry, why, uuids.empty() ? 0 : uuids.size() - 1));
  };
  if (base::Trim(all).empty()) return visible;

  std::size_t start = 0;
  while (start <= all.size()) {
    std::size_t comma = all.find(',', start);
    if (comma == std::string_view::npos) comma = all.size();
    const std::string_view entry = base::Trim(all.substr(start, comma - start));
    start = comma + 1;

    unsigned int index = 0;
    if (entry.empty()) return bad(entry, "is empty");
    if (IsNegativeIndex(entry)) {
      // CUDA stops at the first invalid entry; a negative index is the
      // usual, deliberate way to say "no (more) GPUs".
      if (comma != all.size()) {
        return bad(entry, "hides every entry after it (CUDA stops at it); remove those entries or the -1");
      }
      break;
    }
    if (entry.starts_with("MIG-") || entry.starts_with("MIG/")) {
      return Fail(ErrorCode::kNotSupported,
                  fmt::format("{}={}: \"{}\" is a MIG instance, which is not supported: NVML "
                              "cannot measure power or energy of a single MIG instance; use whole GPUs",
                              variable, all, entry));
    }
    if (entry.starts_with("GPU-")) {
      std::optional<unsigned int> match;
      for (unsigned int i = 0; i < uuids.size(); ++i) {
        if (std::string_view(uuids[i]).starts_with(entry)) {
          if (match) return bad(entry, "matches more than one GPU");
          match = i;
        }
      }
      if (!match) return bad(entry, "matches no GPU");
      index = *match;
    } else {
      auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
      if (ec != std::errc() || end != entry.data() + entry.size()) return bad(entry, "is neither an index nor a UUID");
      if (index >= uuids.size()) {
        return bad(entry, fmt::format("is out of range: this machine has {} GPU{}", uuids.size(),
                                      uuids.size() == 1 ? "" : "s"));
      }
    }
    if (std::find(visible.begin(), visible.end(), index) != visible.end()) return bad(entry, "repeats a GPU");
    visible.push_back(index);
    if (comma == all.size()) break;
  }
  return visible;
}

Result<std::vector<unsigned int>> ResolveAmdVisibleDevices(std::optional<std::string_view> rocr,
                                                           std::optional<std::string_view> hip,
                                                           std::string_view hip_variable,
                                                           const std::vector<std::string>& uuids) {
  std::vector<std::string> prefixed;
  prefixed.reserve(uuids.size());
  for (const std::string& uuid : uuids) prefixed.push_back(uuid.starts_with("GPU-") ? uuid : "GPU-" + uuid);
  auto first = ResolveVisibleDevices(rocr, prefixed, "ROCR_VISIBLE_DEVICES");
  if (!first) return first;
  std::vector<std::string> left;
  left.reserve(first->size());
  for (unsigned int index : *first) left.push_back(prefixed[index]);
  auto second = ResolveVisibleDevices(hip, left, hip_variable);
  if (!second) return second;
  std::vector<unsigned int> visible;
  visible.reserve(second->size());
  for (unsigned int position : *second) visible.push_back((*first)[position]);
  return visible;
}

}  // namespace zeus::device
