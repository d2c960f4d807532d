// Copyright 2026 The Zeus C++ Authors.

#include "zeus/device/environment.h"

#include <cstdlib>

#include <fmt/format.h>

namespace zeus::device {
namespace {

// The variable's value when it is set and not empty.
std::optional<std::string> NonEmptyVariable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace

NvmlLibraryChoice ChooseNvmlLibrary(const std::optional<std::string>& configured) {
  if (configured && !configured->empty()) return {*configured, "the configured NVML library", true};
  if (auto named = NonEmptyVariable(kNvmlLibraryVariable)) return {std::move(*named), kNvmlLibraryVariable, true};
  return {kSystemNvmlLibrary, "", false};
}

bool MayContinueWithoutGpus(const Error& open_error, const NvmlLibraryChoice& library) {
  return !library.named_explicitly && open_error.code() == ErrorCode::kUnavailable;
}

std::string ChoosePowercapRoot(const std::optional<std::string>& configured) {
  if (configured) return *configured;
  return NonEmptyVariable(kPowercapRootVariable).value_or(kDefaultPowercapRoot);
}

std::string ChooseSocRoot(const std::optional<std::string>& configured) {
  if (configured && !configured->empty()) return *configured;
  return NonEmptyVariable(kSocRootVariable).value_or(kDefaultSocRoot);
}

std::string ChooseProcRoot(const std::optional<std::string>& configured) {
  if (configured && !configured->empty()) return *configured;
  return NonEmptyVariable(kProcRootVariable).value_or(kDefaultProcRoot);
}

Result<bool> ChooseEnergyCounterCheck(std::optional<bool> configured) {
  if (configured) return *configured;
  const std::optional<std::string> value = NonEmptyVariable(kEnergyCounterCheckVariable);
  if (!value) return true;
  for (const char* on : {"1", "true", "on", "yes"}) {
    if (*value == on) return true;
  }
  for (const char* off : {"0", "false", "off", "no"}) {
    if (*value == off) return false;
  }
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("{}='{}' is not a switch: set it to 1 to check each GPU's energy counter against its power "
                          "when the GPUs are opened (the default), or 0 to trust the counters unchecked",
                          kEnergyCounterCheckVariable, *value));
}

std::optional<std::string> ChooseCudaVisibleDevices(const std::optional<std::string>& configured) {
  if (configured) return configured;
  if (const char* value = std::getenv(kCudaVisibleDevicesVariable); value != nullptr) return std::string(value);
  return std::nullopt;
}

void ClearDeviceEnvironment() {
  for (const char* name : {kCudaVisibleDevicesVariable, kNvmlLibraryVariable, kPowercapRootVariable, kSocRootVariable}) {
    ::unsetenv(name);
  }
}

}  // namespace zeus::device
