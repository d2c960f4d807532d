// Copyright 2026 The Zeus C++ Authors.
//
// The NVML functions the emulator implements, as an enum generated from
// src/device/nvml/nvml_api.def, with their names. Used to name functions in
// fault rules and call counters.
//
// Thread-safety: everything here is immutable.

#ifndef ZEUS_EMULATOR_API_FUNCTIONS_H_
#define ZEUS_EMULATOR_API_FUNCTIONS_H_

#include <array>
#include <optional>
#include <string_view>

namespace zeus::emulator {

// One enumerator per function in nvml_api.def, spelled like the function.
enum class ApiFunction : int {
#define ZEUS_NVML_FN(kind, ret, name, params) name,
#include "device/nvml/nvml_api.def"
#undef ZEUS_NVML_FN
};

inline constexpr std::array kApiFunctionNames = {
#define ZEUS_NVML_FN(kind, ret, name, params) std::string_view(#name),
#include "device/nvml/nvml_api.def"
#undef ZEUS_NVML_FN
};

inline constexpr int kApiFunctionCount = static_cast<int>(kApiFunctionNames.size());

// The function's C name, e.g. "nvmlDeviceGetPowerUsage".
std::string_view ApiFunctionName(ApiFunction function);

// The function with C name `name`, or nullopt.
std::optional<ApiFunction> ApiFunctionFromName(std::string_view name);

// True for the nvmlDevice* functions (the ones a "*" fault rule matches).
bool IsDeviceFunction(ApiFunction function);

// True for the functions a fault rule may name: every function except
// nvmlInit_v2, nvmlShutdown and nvmlErrorString.
bool IsFaultable(ApiFunction function);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_API_FUNCTIONS_H_
