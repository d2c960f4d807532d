// Copyright 2026 The Zeus C++ Authors.

#include "zeus/device/environment.h"

#include <algorithm>
#include <cctype>
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

GpuLibraryChoice ChooseNvmlLibrary(const std::optional<std::string>& configured) {
  if (configured && !configured->empty()) return {*configured, "the configured NVML library", true};
  if (auto named = NonEmptyVariable(kNvmlLibraryVariable)) return {std::move(*named), kNvmlLibraryVariable, true};
  return {kSystemNvmlLibrary, "", false};
}

GpuLibraryChoice ChooseAmdSmiLibrary(const std::optional<std::string>& configured) {
  if (configured && !configured->empty()) return {*configured, "the configured AMD SMI library", true};
  if (auto named = NonEmptyVariable(kAmdSmiLibraryVariable)) {
    return {std::move(*named), kAmdSmiLibraryVariable, true};
  }
  return {kSystemAmdSmiLibrary, "", false};
}

Result<std::optional<GpuVendor>> ChooseGpuVendor(std::optional<GpuVendor> configured) {
  if (configured) return configured;
  std::optional<std::string> value = NonEmptyVariable(kGpuVendorVariable);
  if (!value) return std::optional<GpuVendor>();
  std::string lower = *value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "auto") return std::optional<GpuVendor>();
  if (lower == "nvidia") return std::optional<GpuVendor>(GpuVendor::kNvidia);
  if (lower == "amd") return std::optional<GpuVendor>(GpuVendor::kAmd);
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("{}='{}' is not a GPU vendor: set it to nvidia, amd, or auto (NVIDIA where an NVIDIA "
                          "driver has GPUs, else AMD; the default)",
                          kGpuVendorVariable, *value));
}

bool MayContinueWithoutGpus(const Error& open_error, const GpuLibraryChoice& library) {
  if (library.named_explicitly || ChooseAmdSmiLibrary().named_explicitly) return false;
  if (NonEmptyVariable(kGpuVendorVariable).value_or("auto") != "auto") return false;
  return open_error.code() == ErrorCode::kUnavailable;
}

AmdVisibleDevices ChooseAmdVisibleDevices(const std::optional<std::string>& configured) {
  AmdVisibleDevices visible;
  if (const char* rocr = std::getenv(kRocrVisibleDevicesVariable); rocr != nullptr) visible.rocr = rocr;
  if (configured) {
    visible.hip = configured;
    visible.hip_origin = "the configured visible devices";
  } else if (const char* hip = std::getenv(kHipVisibleDevicesVariable); hip != nullptr) {
    visible.hip = hip;
    visible.hip_origin = kHipVisibleDevicesVariable;
  } else if (const char* cuda = std::getenv(kCudaVisibleDevicesVariable); cuda != nullptr) {
    visible.hip = cuda;
    visible.hip_origin = kCudaVisibleDevicesVariable;
  }
  return visible;
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
  for (const char* name : {kCudaVisibleDevicesVariable, kHipVisibleDevicesVariable, kRocrVisibleDevicesVariable,
                           kNvmlLibraryVariable, kAmdSmiLibraryVariable, kGpuVendorVariable, kPowercapRootVariable,
                           kSocRootVariable}) {
    ::unsetenv(name);
  }
}

}  // namespace zeus::device
