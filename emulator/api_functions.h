// Copyright 2026 The Zeus C++ Authors.
//
// The API functions the emulator implements, over both of its faces: the
// NVML functions of src/device/nvml/nvml_api.def (libzeus-nvml-emulator.so)
// and then the AMD SMI functions of src/device/amdsmi/amdsmi_api.def
// (libzeus-amdsmi-emulator.so), as one enum generated from the two lists,
// with their names. Used to name functions in fault rules and call counters.
//
// Thread-safety: everything here is immutable.

#ifndef ZEUS_EMULATOR_API_FUNCTIONS_H_
#define ZEUS_EMULATOR_API_FUNCTIONS_H_

#include <array>
#include <optional>
#include <string_view>

namespace zeus::emulator {

// The API a function (or a return code) belongs to.
enum class Api {
  kNvml,    // NVML (libzeus-nvml-emulator.so)
  kAmdSmi,  // AMD SMI (libzeus-amdsmi-emulator.so)
};

// "NVML" or "AMD SMI", for messages.
std::string_view ApiName(Api api);

// One enumerator per function in nvml_api.def, then one per function in
// amdsmi_api.def, spelled like the function.
enum class ApiFunction : int {
#define ZEUS_NVML_FN(kind, ret, name, params) name,
#include "device/nvml/nvml_api.def"
#undef ZEUS_NVML_FN
#define ZEUS_AMDSMI_FN(kind, name, params) name,
#include "device/amdsmi/amdsmi_api.def"
#undef ZEUS_AMDSMI_FN
};

inline constexpr std::array kApiFunctionNames = {
#define ZEUS_NVML_FN(kind, ret, name, params) std::string_view(#name),
#include "device/nvml/nvml_api.def"
#undef ZEUS_NVML_FN
#define ZEUS_AMDSMI_FN(kind, name, params) std::string_view(#name),
#include "device/amdsmi/amdsmi_api.def"
#undef ZEUS_AMDSMI_FN
};

inline constexpr int kApiFunctionCount = static_cast<int>(kApiFunctionNames.size());

// The function's C name, e.g. "nvmlDeviceGetPowerUsage".
std::string_view ApiFunctionName(ApiFunction function);

// The function with C name `name`, or nullopt.
std::optional<ApiFunction> ApiFunctionFromName(std::string_view name);

// The API `function` belongs to.
Api ApiOf(ApiFunction function);

// True for the functions a "*" fault rule matches: the nvmlDevice* functions,
// and the AMD SMI functions whose first parameter is a processor handle.
bool IsDeviceFunction(ApiFunction function);

// True for the functions a fault rule may name: every function except
// nvmlInit_v2, nvmlShutdown, nvmlErrorString, amdsmi_init, amdsmi_shut_down
// and amdsmi_status_code_to_string.
bool IsFaultable(ApiFunction function);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_API_FUNCTIONS_H_
