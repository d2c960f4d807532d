// Copyright 2026 The Zeus C++ Authors.
//
// Private to the scenario parser (scenario.cc, scenario_json.cc,
// scenario_gpu.cc); not part of scenario.h's interface. Holds what those
// files share: the bounds on scenario values, ScenarioError and its Fail
// helper, the typed JSON readers (each fails with "<path>: expected ..., got
// ..."), ObjectReader, ParseJson, and the gpus[] section reader ReadGpu.
//
// Every reader reports a problem by throwing ScenarioError; ParseScenario
// (scenario.cc) catches it and turns it into the one-line error string. No
// exception leaves the parser.

#ifndef ZEUS_EMULATOR_SCENARIO_INTERNAL_H_
#define ZEUS_EMULATOR_SCENARIO_INTERNAL_H_

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "device/nvml/nvml_abi.h"
#include "scenario.h"

namespace zeus::emulator::internal {

using Json = nlohmann::json;

// Bounds on values, chosen so that no unit conversion or energy product can
// overflow (see physics.h) while leaving room for any real GPU.
inline constexpr double kMaxPowerW = 100'000.0;
inline constexpr double kMaxPeriodMs = 60'000.0;
inline constexpr double kMaxWindowMs = 60'000.0;
inline constexpr double kMaxSettleMs = 60'000.0;
inline constexpr double kMaxLatencyMs = 600'000.0;
inline constexpr double kMaxTimeS = 1e9;
inline constexpr double kMaxTimeScale = 1e6;
inline constexpr double kMaxEnergyCounterRate = 1e6;
inline constexpr std::int64_t kMaxClockMhz = 100'000;
inline constexpr std::int64_t kMaxTemperatureC = 1'000;
// NVML's buffer sizes include the terminating NUL.
inline constexpr std::size_t kMaxNameLength = NVML_DEVICE_NAME_V2_BUFFER_SIZE - 1;
inline constexpr std::size_t kMaxUuidLength = NVML_DEVICE_UUID_V2_BUFFER_SIZE - 1;
inline constexpr std::size_t kMaxVersionLength = NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE - 1;

// Thrown inside the scenario parser only; ParseScenario turns it into an error string.
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws ScenarioError("<path>: <problem>"), or just `problem` for an empty path.
[[noreturn]] void Fail(const std::string& path, const std::string& problem);

// A short rendering of a JSON value for messages: `"abc"`, `12`, `[1,2]`.
std::string Show(const Json& value);

// "a.b" for path "a" and key "b" ("b" for an empty path); "a[3]" for index 3.
std::string ChildPath(const std::string& path, std::string_view key);
std::string ElementPath(const std::string& path, std::size_t index);

// `text` in lower case (ASCII).
std::string Lower(std::string_view text);

// ---- Typed readers: each fails with "<path>: expected ..., got ..." ----------

double ReadNumber(const Json& value, const std::string& path);
// A number in [min, max]; `unit` (e.g. " W") follows the bounds in the message.
double ReadNumberIn(const Json& value, const std::string& path, double min, double max, std::string_view unit);
// An integer: a JSON integer, or a float with no fractional part below 9e15.
std::int64_t ReadInteger(const Json& value, const std::string& path);
std::int64_t ReadIntegerIn(const Json& value, const std::string& path, std::int64_t min, std::int64_t max);
bool ReadBool(const Json& value, const std::string& path);
// A non-empty string of at most max_length characters.
std::string ReadString(const Json& value, const std::string& path, std::size_t max_length);
const Json& ReadArray(const Json& value, const std::string& path, bool allow_empty);
// Watts (a number in [0, kMaxPowerW], or (0, kMaxPowerW] when `positive`) to
// whole milliwatts.
std::uint32_t ReadMilliwatts(const Json& value, const std::string& path, bool positive);
// Milliseconds in [min_ms, max_ms] to whole nanoseconds.
std::int64_t ReadMillisAsNs(const Json& value, const std::string& path, double min_ms, double max_ms);
// Seconds in [0, kMaxTimeS] to whole nanoseconds.
std::int64_t ReadSecondsAsNs(const Json& value, const std::string& path);
// "<watts> W" for messages.
std::string FormatWatts(std::uint32_t milliwatts);

// A JSON object being read: knows its path and rejects keys it does not know.
class ObjectReader {
 public:
  ObjectReader(const Json& json, std::string path, std::initializer_list<std::string_view> known_keys)
      : json_(json), path_(std::move(path)) {
    if (!json_.is_object()) Fail(path_, fmt::format("expected an object, got {}", Show(json_)));
    for (auto it = json_.begin(); it != json_.end(); ++it) {
      if (std::find(known_keys.begin(), known_keys.end(), it.key()) == known_keys.end()) {
        Fail(path_, fmt::format("unknown key \"{}\"", it.key()));
      }
    }
  }

  const std::string& path() const { return path_; }
  std::string PathOf(std::string_view key) const { return ChildPath(path_, key); }

  // The value at `key`, or null if absent.
  const Json* Find(std::string_view key) const {
    auto it = json_.find(std::string(key));
    return it == json_.end() ? nullptr : &*it;
  }

  const Json& Require(std::string_view key) const {
    if (const Json* value = Find(key)) return *value;
    Fail(path_, fmt::format("missing required key \"{}\"", key));
  }

 private:
  const Json& json_;
  std::string path_;
};

// Parses JSON with comments allowed and duplicate keys rejected. Syntax errors
// and duplicate keys throw ScenarioError naming where they are.
Json ParseJson(std::string_view text);

// ---- Sections ----------------------------------------------------------------

// Scenario-wide values that GPUs inherit.
struct GpuDefaults {
  Vendor vendor = Vendor::kNvidia;  // decides which GPU keys are valid
  std::optional<std::int64_t> power_update_period_ns;
  std::optional<std::int64_t> power_average_window_ns;
  std::optional<std::int64_t> counter_update_period_ns;
  std::optional<std::int64_t> power_settle_ns;
};

// Fails at `path` (a key) because the key is only for `vendor`'s GPUs and
// the scenario's vendor is the other one.
[[noreturn]] void FailVendorKey(const std::string& path, Vendor vendor);

// Reads gpus[index] (scenario_gpu.cc), filling in defaults from `defaults`
// and then from the architecture (NVIDIA) or the AMD defaults.
GpuSpec ReadGpu(const Json& value, std::size_t index, const GpuDefaults& defaults);

// Reads a GPU's "processes" and "process_sample_period_ms"
// (scenario_processes.cc), and gives gpu->power the load they put on the GPU
// (PowerModel::set_process_load).
void ReadProcesses(const ObjectReader& in, GpuSpec* gpu);

}  // namespace zeus::emulator::internal

#endif  // ZEUS_EMULATOR_SCENARIO_INTERNAL_H_
