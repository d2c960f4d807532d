// Copyright 2026 The Zeus C++ Authors.

#include "api_functions.h"

#include <cstddef>

namespace zeus::emulator {
namespace {

// How many of the functions are NVML's (they come first).
constexpr std::size_t kNvmlFunctionCount = 0
#define ZEUS_NVML_FN(kind, ret, name, params) +1
#include "device/nvml/nvml_api.def"
#undef ZEUS_NVML_FN
    ;

// Per AMD SMI function: whether its first parameter is a processor handle.
constexpr std::array kAmdSmiTakesProcessor = {
#define ZEUS_AMDSMI_FN(kind, name, params) std::string_view(#params).starts_with("(amdsmi_processor_handle"),
#include "device/amdsmi/amdsmi_api.def"
#undef ZEUS_AMDSMI_FN
};
static_assert(kNvmlFunctionCount + kAmdSmiTakesProcessor.size() == kApiFunctionNames.size());

}  // namespace

std::string_view ApiName(Api api) { return api == Api::kNvml ? "NVML" : "AMD SMI"; }

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

Api ApiOf(ApiFunction function) {
  return static_cast<std::size_t>(function) < kNvmlFunctionCount ? Api::kNvml : Api::kAmdSmi;
}

bool IsDeviceFunction(ApiFunction function) {
  const auto index = static_cast<std::size_t>(function);
  if (index < kNvmlFunctionCount) return ApiFunctionName(function).starts_with("nvmlDevice");
  return index < kApiFunctionNames.size() && kAmdSmiTakesProcessor[index - kNvmlFunctionCount];
}

bool IsFaultable(ApiFunction function) {
  return function != ApiFunction::nvmlInit_v2 && function != ApiFunction::nvmlShutdown &&
         function != ApiFunction::nvmlErrorString && function != ApiFunction::amdsmi_init &&
         function != ApiFunction::amdsmi_shut_down && function != ApiFunction::amdsmi_status_code_to_string;
}

}  // namespace zeus::emulator
