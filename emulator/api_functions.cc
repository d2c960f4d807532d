// Copyright 2026 The Zeus C++ Authors.

#include "api_functions.h"

#include <cstddef>

namespace zeus::emulator {

std::string_view ApiFunctionName(ApiFunction function) {
  const auto index = static_cast<std::size_t>(function);
  return index < kApiFunctionNames.size() ? kApiFunctionNames[index] : std::string_view("?");
}

std::optional<ApiFunction> ApiFunctionFromName(std::string_view name) {
  for (std::size_t i = 0; i < kApiFunctionNames.size(); ++i) {
    if (kApiFunctionNames[i] == name) return static_cast<ApiFunction>(i);
  }
  return std::nullopt;
}

bool IsDeviceFunction(ApiFunction function) { return ApiFunctionName(function).starts_with("nvmlDevice"); }

bool IsFaultable(ApiFunction function) {
  return function != ApiFunction::nvmlInit_v2 && function != ApiFunction::nvmlShutdown &&
         function != ApiFunction::nvmlErrorString;
}

}  // namespace zeus::emulator
