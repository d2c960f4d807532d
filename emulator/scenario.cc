// Copyright 2026 The Zeus C++ Authors.

#include "scenario.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <utility>

#include "return_codes.h"

namespace zeus::emulator {
namespace {

using Json = nlohmann::json;

// Bounds on values, chosen so that no unit conversion or energy product can
// overflow (see physics.h) while leaving room for any real GPU.
constexpr double kMaxPowerW = 100'000.0;
constexpr double kMaxPeriodMs = 60'000.0;
constexpr double kMaxWindowMs = 60'000.0;
constexpr double kMaxSettleMs = 60'000.0;
constexpr double kMaxLatencyMs = 600'000.0;
constexpr double kMaxTimeS = 1e9;
constexpr double kMaxTimeScale = 1e6;
constexpr std::int64_t kMaxClockMhz = 100'000;
constexpr std::int64_t kMaxTemperatureC = 1'000;
// NVML's buffer sizes include the terminating NUL.
constexpr std::size_t kMaxNameLength = NVML_DEVICE_NAME_V2_BUFFER_SIZE - 1;
constexpr std::size_t kMaxUuidLength = NVML_DEVICE_UUID_V2_BUFFER_SIZE - 1;
constexpr std::size_t kMaxVersionLength = NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE - 1;

constexpr std::string_view kDefaultDriverVersion = "550.54.15-zeus-emulator";
constexpr std::string_view kDefaultNvmlVersion = "12.550.54.15-zeus-emulator";
constexpr double kDefaultPowerUpdatePeriodMs = 100.0;
constexpr std::int64_t kAmpereAverageWindowNs = 1'000'000'000;  // see DefaultPowerAverageWindowNs
constexpr std::int64_t kCounterUpdatePeriodNs = 100'000'000;   // see DefaultCounterUpdatePeriodNs
constexpr std::array<unsigned int, 1> kDefaultMemoryClocksMhz = {1215};
constexpr std::array<unsigned int, 13> kDefaultGraphicsClocksMhz = {1980, 1830, 1680, 1530, 1380, 1230, 1080,
                                                                    930,  780,  630,  480,  330,  210};

struct ArchitectureName {
  std::string_view name;
  unsigned int value;
};
constexpr std::array kArchitectures = {
    ArchitectureName{"kepler", NVML_DEVICE_ARCH_KEPLER},
    ArchitectureName{"maxwell", NVML_DEVICE_ARCH_MAXWELL},
    ArchitectureName{"pascal", NVML_DEVICE_ARCH_PASCAL},
    ArchitectureName{"volta", NVML_DEVICE_ARCH_VOLTA},
    ArchitectureName{"turing", NVML_DEVICE_ARCH_TURING},
    ArchitectureName{"ampere", NVML_DEVICE_ARCH_AMPERE},
    ArchitectureName{"ada", NVML_DEVICE_ARCH_ADA},
    ArchitectureName{"hopper", NVML_DEVICE_ARCH_HOPPER},
    ArchitectureName{"blackwell", NVML_DEVICE_ARCH_BLACKWELL},
};

// Thrown inside this file only; ParseScenario turns it into an error string.
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void Fail(const std::string& path, const std::string& problem) {
  throw ScenarioError(path.empty() ? problem : fmt::format("{}: {}", path, problem));
}

// A short rendering of a JSON value for messages: `"abc"`, `12`, `[1,2]`.
std::string Show(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 48) text = text.substr(0, 45) + "...";
  return text;
}

std::string ChildPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string ElementPath(const std::string& path, std::size_t index) { return fmt::format("{}[{}]", path, index); }

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

// ---- Typed readers: each fails with "<path>: expected ..., got ..." ----------

double ReadNumber(const Json& value, const std::string& path) {
  if (!value.is_number()) Fail(path, fmt::format("expected a number, got {}", Show(value)));
  return value.get<double>();
}

double ReadNumberIn(const Json& value, const std::string& path, double min, double max, std::string_view unit) {
  const double number = ReadNumber(value, path);
  if (number < min || number > max) {
    Fail(path, fmt::format("must be between {} and {}{}, got {}", min, max, unit, Show(value)));
  }
  return number;
}

std::int64_t ReadInteger(const Json& value, const std::string& path) {
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      Fail(path, fmt::format("{} is too large", Show(value)));
    }
    return value.get<std::int64_t>();
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::trunc(number) == number && std::fabs(number) < 9e15) return static_cast<std::int64_t>(number);
  }
  Fail(path, fmt::format("expected an integer, got {}", Show(value)));
}

std::int64_t ReadIntegerIn(const Json& value, const std::string& path, std::int64_t min, std::int64_t max) {
  const std::int64_t number = ReadInteger(value, path);
  if (number < min || number > max) {
    Fail(path, fmt::format("must be between {} and {}, got {}", min, max, number));
  }
  return number;
}

bool ReadBool(const Json& value, const std::string& path) {
  if (!value.is_boolean()) Fail(path, fmt::format("expected true or false, got {}", Show(value)));
  return value.get<bool>();
}

std::string ReadString(const Json& value, const std::string& path, std::size_t max_length) {
  if (!value.is_string()) Fail(path, fmt::format("expected a string, got {}", Show(value)));
  std::string text = value.get<std::string>();
  if (text.empty()) Fail(path, "must not be empty");
  if (text.size() > max_length) {
    Fail(path, fmt::format("is {} characters long; at most {} fit", text.size(), max_length));
  }
  return text;
}

const Json& ReadArray(const Json& value, const std::string& path, bool allow_empty) {
  if (!value.is_array()) Fail(path, fmt::format("expected an array, got {}", Show(value)));
  if (!allow_empty && value.empty()) Fail(path, "must not be empty");
  return value;
}

// Watts (a number in [0, kMaxPowerW], or (0, kMaxPowerW] when `positive`) to
// whole milliwatts.
std::uint32_t ReadMilliwatts(const Json& value, const std::string& path, bool positive) {
  const double watts = ReadNumberIn(value, path, 0.0, kMaxPowerW, " W");
  if (positive && watts <= 0.0) Fail(path, fmt::format("must be greater than 0 W, got {}", Show(value)));
  return static_cast<std::uint32_t>(std::llround(watts * 1000.0));
}

std::int64_t ReadMillisAsNs(const Json& value, const std::string& path, double min_ms, double max_ms) {
  return std::llround(ReadNumberIn(value, path, min_ms, max_ms, " ms") * 1e6);
}

std::int64_t ReadSecondsAsNs(const Json& value, const std::string& path) {
  return std::llround(ReadNumberIn(value, path, 0.0, kMaxTimeS, " s") * 1e9);
}

std::string FormatWatts(std::uint32_t milliwatts) { return fmt::format("{} W", milliwatts / 1000.0); }

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

// ---- Sections ----------------------------------------------------------------

// Scenario-wide values that GPUs inherit.
struct GpuDefaults {
  std::optional<std::int64_t> power_update_period_ns;
  std::optional<std::int64_t> power_average_window_ns;
  std::optional<std::int64_t> counter_update_period_ns;
  std::optional<std::int64_t> power_settle_ns;
};

// The "unsupported" list: names of optional queries the GPU refuses.
void ReadUnsupported(const Json& value, const std::string& path, GpuSpec* gpu) {
  const Json& array = ReadArray(value, path, /*allow_empty=*/true);
  constexpr std::array<std::string_view, 4> kKnown = {"instant_power", "average_power", "memory_power",
                                                      "temperature"};
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string element_path = ElementPath(path, i);
    if (!array[i].is_string()) Fail(element_path, fmt::format("expected a string, got {}", Show(array[i])));
    const std::string name = array[i].get<std::string>();
    if (name == "instant_power") {
      gpu->instant_power_supported = false;
    } else if (name == "average_power") {
      gpu->average_power_supported = false;
    } else if (name == "memory_power") {
      gpu->memory_power_supported = false;
    } else if (name == "temperature") {
      gpu->temperature_supported = false;
    } else {
      Fail(element_path, fmt::format("unknown query {}; expected one of {}, {}, {}, {}", Show(array[i]), kKnown[0],
                                     kKnown[1], kKnown[2], kKnown[3]));
    }
  }
}

unsigned int ReadArchitecture(const Json& value, const std::string& path) {
  if (!value.is_string()) Fail(path, fmt::format("expected a string, got {}", Show(value)));
  const std::string name = Lower(value.get<std::string>());
  for (const ArchitectureName& arch : kArchitectures) {
    if (arch.name == name) return arch.value;
  }
  std::string known;
  for (const ArchitectureName& arch : kArchitectures) {
    known += known.empty() ? "" : ", ";
    known += arch.name;
  }
  Fail(path, fmt::format("unknown architecture {}; expected one of {}", Show(value), known));
}

// Clock list: distinct positive integers (MHz), returned in descending order.
std::vector<unsigned int> ReadClocks(const Json& value, const std::string& path) {
  const Json& array = ReadArray(value, path, /*allow_empty=*/false);
  std::vector<unsigned int> clocks;
  for (std::size_t i = 0; i < array.size(); ++i) {
    clocks.push_back(static_cast<unsigned int>(ReadIntegerIn(array[i], ElementPath(path, i), 1, kMaxClockMhz)));
  }
  std::sort(clocks.begin(), clocks.end(), std::greater<>());
  if (auto dup = std::adjacent_find(clocks.begin(), clocks.end()); dup != clocks.end()) {
    Fail(path, fmt::format("lists {} MHz twice", *dup));
  }
  return clocks;
}

struct PciAddress {
  unsigned int domain, bus, device, function;
};

PciAddress ReadPciBusId(const Json& value, const std::string& path) {
  const std::string text = ReadString(value, path, NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE - 1);
  // "DDDD:BB:DD.F" or "DDDDDDDD:BB:DD.F", hex.
  const auto colon = text.find(':');
  const bool shape_ok =
      (colon == 4 || colon == 8) && text.size() == colon + 8 && text[colon + 3] == ':' && text[colon + 6] == '.';
  bool hex_ok = shape_ok;
  for (std::size_t i = 0; hex_ok && i < text.size(); ++i) {
    if (i == colon || i == colon + 3 || i == colon + 6) continue;
    hex_ok = std::isxdigit(static_cast<unsigned char>(text[i])) != 0;
  }
  if (!hex_ok || text.back() > '7') {
    Fail(path, fmt::format("expected a PCI bus id like \"00000000:1A:00.0\", got {}", Show(value)));
  }
  auto hex = [&](std::size_t pos, std::size_t len) {
    return static_cast<unsigned int>(std::stoul(text.substr(pos, len), nullptr, 16));
  };
  return PciAddress{hex(0, colon), hex(colon + 1, 2), hex(colon + 4, 2), hex(colon + 7, 1)};
}

void SetPciAddress(const PciAddress& pci, GpuSpec* gpu) {
  gpu->pci_domain = pci.domain;
  gpu->pci_bus = pci.bus;
  gpu->pci_device = pci.device;
  gpu->pci_bus_id = fmt::format("{:08X}:{:02X}:{:02X}.{:X}", pci.domain, pci.bus, pci.device, pci.function);
  gpu->pci_bus_id_legacy =
      fmt::format("{:04X}:{:02X}:{:02X}.{:X}", pci.domain & 0xFFFFu, pci.bus, pci.device, pci.function);
}

std::string DefaultUuid(std::size_t index, const std::string& name) {
  const std::string seed = fmt::format("{}/{}", index, name);
  const std::uint64_t hi = Fnv1a64(seed);
  const std::uint64_t lo = Fnv1a64(fmt::format("zeus-emulator:{}", seed));
  return fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFFu, hi & 0xFFFFu, lo >> 48,
                     lo & 0xFFFFFFFFFFFFull);
}

PowerModel ReadWorkload(const Json& value, const std::string& path) {
  const ObjectReader workload(value, path, {"power_limits_w", "power_w", "iteration_time_s"});
  const std::string limits_path = workload.PathOf("power_limits_w");
  const Json& limits = ReadArray(workload.Require("power_limits_w"), limits_path, /*allow_empty=*/false);
  const std::string power_path = workload.PathOf("power_w");
  const Json& powers = ReadArray(workload.Require("power_w"), power_path, /*allow_empty=*/false);
  if (powers.size() != limits.size()) {
    Fail(power_path, fmt::format("has {} entries but power_limits_w has {}", powers.size(), limits.size()));
  }
  const Json* times = workload.Find("iteration_time_s");
  const std::string times_path = workload.PathOf("iteration_time_s");
  if (times != nullptr) {
    ReadArray(*times, times_path, /*allow_empty=*/false);
    if (times->size() != limits.size()) {
      Fail(times_path, fmt::format("has {} entries but power_limits_w has {}", times->size(), limits.size()));
    }
  }
  std::vector<CurvePoint> points;
  for (std::size_t i = 0; i < limits.size(); ++i) {
    CurvePoint point{};
    const std::string limit_path = ElementPath(limits_path, i);
    point.limit_mw = ReadMilliwatts(limits[i], limit_path, /*positive=*/true);
    if (!points.empty() && point.limit_mw <= points.back().limit_mw) {
      Fail(limit_path, fmt::format("limits must be strictly increasing ({} follows {})", FormatWatts(point.limit_mw),
                                   FormatWatts(points.back().limit_mw)));
    }
    point.power_mw = ReadNumberIn(powers[i], ElementPath(power_path, i), 0.0, kMaxPowerW, " W") * 1000.0;
    if (times != nullptr) {
      const std::string time_path = ElementPath(times_path, i);
      const double seconds = ReadNumberIn((*times)[i], time_path, 0.0, kMaxTimeS, " s");
      if (seconds <= 0.0) Fail(time_path, fmt::format("must be greater than 0 s, got {}", Show((*times)[i])));
      point.iteration_time_s = seconds;
    }
    points.push_back(point);
  }
  return PowerModel::Workload(std::move(points));
}

PowerModel ReadSchedule(const Json& value, const std::string& path) {
  const Json& array = ReadArray(value, path, /*allow_empty=*/false);
  std::vector<ScheduleStep> steps;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const ObjectReader step(array[i], ElementPath(path, i), {"at_s", "power_w"});
    ScheduleStep parsed{};
    parsed.time_ns = ReadSecondsAsNs(step.Require("at_s"), step.PathOf("at_s"));
    parsed.power_mw = ReadMilliwatts(step.Require("power_w"), step.PathOf("power_w"), /*positive=*/false);
    if (i == 0 && parsed.time_ns != 0) {
      Fail(step.PathOf("at_s"), fmt::format("the first step must be at 0 s, got {}", Show(step.Require("at_s"))));
    }
    if (!steps.empty() && parsed.time_ns <= steps.back().time_ns) {
      Fail(step.PathOf("at_s"), "steps must be in strictly increasing time order");
    }
    steps.push_back(parsed);
  }
  return PowerModel::Schedule(std::move(steps));
}

GpuSpec ReadGpu(const Json& value, std::size_t index, const GpuDefaults& defaults) {
  const ObjectReader in(value, ElementPath("gpus", index),
                        {"name",
                         "architecture",
                         "min_power_limit_w",
                         "max_power_limit_w",
                         "default_power_limit_w",
                         "energy_counter",
                         "power_w",
                         "workload",
                         "power_schedule",
                         "power_limit_w",
                         "uuid",
                         "pci_bus_id",
                         "memory_power_w",
                         "temperature_c",
                         "persistence_mode",
                         "mig",
                         "supported_memory_clocks_mhz",
                         "supported_graphics_clocks_mhz",
                         "power_update_period_ms",
                         "power_average_window_ms",
                         "counter_update_period_ms",
                         "power_settle_ms",
                         "unsupported",
                         "counter_reset_at_s"});
  GpuSpec gpu;
  gpu.name = ReadString(in.Require("name"), in.PathOf("name"), kMaxNameLength);
  gpu.architecture = ReadArchitecture(in.Require("architecture"), in.PathOf("architecture"));
  gpu.min_limit_mw = ReadMilliwatts(in.Require("min_power_limit_w"), in.PathOf("min_power_limit_w"), true);
  gpu.max_limit_mw = ReadMilliwatts(in.Require("max_power_limit_w"), in.PathOf("max_power_limit_w"), true);
  gpu.default_limit_mw = ReadMilliwatts(in.Require("default_power_limit_w"), in.PathOf("default_power_limit_w"), true);
  if (gpu.min_limit_mw > gpu.max_limit_mw) {
    Fail(in.PathOf("min_power_limit_w"), fmt::format("{} is above max_power_limit_w ({})",
                                                     FormatWatts(gpu.min_limit_mw), FormatWatts(gpu.max_limit_mw)));
  }
  auto check_in_range = [&](std::string_view key, std::uint32_t limit_mw) {
    if (limit_mw < gpu.min_limit_mw || limit_mw > gpu.max_limit_mw) {
      Fail(in.PathOf(key),
           fmt::format("{} is outside [min_power_limit_w, max_power_limit_w] = [{}, {}]", FormatWatts(limit_mw),
                       FormatWatts(gpu.min_limit_mw), FormatWatts(gpu.max_limit_mw)));
    }
  };
  check_in_range("default_power_limit_w", gpu.default_limit_mw);
  gpu.initial_limit_mw = gpu.default_limit_mw;
  if (const Json* limit = in.Find("power_limit_w")) {
    gpu.initial_limit_mw = ReadMilliwatts(*limit, in.PathOf("power_limit_w"), true);
    check_in_range("power_limit_w", gpu.initial_limit_mw);
  }
  gpu.energy_counter = ReadBool(in.Require("energy_counter"), in.PathOf("energy_counter"));

  // Exactly one source of demand.
  std::vector<std::string_view> sources;
  for (std::string_view key : {"power_w", "workload", "power_schedule"}) {
    if (in.Find(key) != nullptr) sources.push_back(key);
  }
  if (sources.size() != 1) {
    Fail(in.path(), sources.empty() ? std::string("needs one of \"power_w\", \"workload\" or \"power_schedule\"")
                                    : fmt::format("give only one of \"power_w\", \"workload\" and \"power_schedule\" "
                                                  "(found \"{}\" and \"{}\")",
                                                  sources[0], sources[1]));
  }
  if (sources[0] == "power_w") {
    gpu.power = PowerModel::Constant(ReadMilliwatts(in.Require("power_w"), in.PathOf("power_w"), false));
  } else if (sources[0] == "workload") {
    gpu.power = ReadWorkload(in.Require("workload"), in.PathOf("workload"));
  } else {
    gpu.power = ReadSchedule(in.Require("power_schedule"), in.PathOf("power_schedule"));
  }

  gpu.uuid = in.Find("uuid") != nullptr ? ReadString(in.Require("uuid"), in.PathOf("uuid"), kMaxUuidLength)
                                        : DefaultUuid(index, gpu.name);
  if (const Json* pci = in.Find("pci_bus_id")) {
    SetPciAddress(ReadPciBusId(*pci, in.PathOf("pci_bus_id")), &gpu);
  } else {
    SetPciAddress(PciAddress{0, static_cast<unsigned int>(index + 1) & 0xFFu, 0, 0}, &gpu);
  }
  if (const Json* memory = in.Find("memory_power_w")) {
    gpu.memory_power_mw = ReadMilliwatts(*memory, in.PathOf("memory_power_w"), false);
  }
  if (const Json* temperature = in.Find("temperature_c")) {
    gpu.temperature_c =
        static_cast<unsigned int>(ReadIntegerIn(*temperature, in.PathOf("temperature_c"), 0, kMaxTemperatureC));
  }
  if (const Json* persistence = in.Find("persistence_mode")) {
    gpu.persistence_mode = ReadBool(*persistence, in.PathOf("persistence_mode"));
  }
  if (const Json* mig = in.Find("mig")) gpu.mig = ReadBool(*mig, in.PathOf("mig"));

  if (const Json* clocks = in.Find("supported_memory_clocks_mhz")) {
    gpu.memory_clocks_mhz = ReadClocks(*clocks, in.PathOf("supported_memory_clocks_mhz"));
  } else {
    gpu.memory_clocks_mhz.assign(kDefaultMemoryClocksMhz.begin(), kDefaultMemoryClocksMhz.end());
  }
  if (const Json* clocks = in.Find("supported_graphics_clocks_mhz")) {
    gpu.graphics_clocks_mhz = ReadClocks(*clocks, in.PathOf("supported_graphics_clocks_mhz"));
  } else {
    gpu.graphics_clocks_mhz.assign(kDefaultGraphicsClocksMhz.begin(), kDefaultGraphicsClocksMhz.end());
  }

  if (const Json* period = in.Find("power_update_period_ms")) {
    gpu.power_update_period_ns = ReadMillisAsNs(*period, in.PathOf("power_update_period_ms"), 0.0, kMaxPeriodMs);
  } else {
    gpu.power_update_period_ns =
        defaults.power_update_period_ns.value_or(std::llround(kDefaultPowerUpdatePeriodMs * 1e6));
  }
  if (gpu.power_update_period_ns <= 0) {
    Fail(in.PathOf("power_update_period_ms"), "must be greater than 0 ms");
  }
  if (const Json* window = in.Find("power_average_window_ms")) {
    gpu.power_average_window_ns = ReadMillisAsNs(*window, in.PathOf("power_average_window_ms"), 0.0, kMaxWindowMs);
  } else if (defaults.power_average_window_ns) {
    gpu.power_average_window_ns = *defaults.power_average_window_ns;
  } else {
    gpu.power_average_window_ns = DefaultPowerAverageWindowNs(gpu.architecture, gpu.name);
  }
  if (const Json* period = in.Find("counter_update_period_ms")) {
    gpu.counter_update_period_ns =
        ReadMillisAsNs(*period, in.PathOf("counter_update_period_ms"), 0.0, kMaxPeriodMs);
  } else {
    gpu.counter_update_period_ns =
        defaults.counter_update_period_ns.value_or(DefaultCounterUpdatePeriodNs(gpu.architecture));
  }
  if (const Json* settle = in.Find("power_settle_ms")) {
    gpu.power_settle_ns = ReadMillisAsNs(*settle, in.PathOf("power_settle_ms"), 0.0, kMaxSettleMs);
  } else {
    gpu.power_settle_ns = defaults.power_settle_ns.value_or(kDefaultPowerSettleNs);
  }
  if (const Json* unsupported = in.Find("unsupported")) {
    ReadUnsupported(*unsupported, in.PathOf("unsupported"), &gpu);
  }
  if (const Json* reset = in.Find("counter_reset_at_s")) {
    gpu.counter_reset_ns = ReadSecondsAsNs(*reset, in.PathOf("counter_reset_at_s"));
  }
  return gpu;
}

FaultSpec ReadFaultTrigger(const ObjectReader& in, FaultSpec fault);

FaultSpec ReadFault(const Json& value, std::size_t index, std::size_t gpu_count) {
  const ObjectReader in(value, ElementPath("faults", index),
                        {"function", "gpu", "return", "latency_ms", "hang", "after_calls", "probability", "seed",
                         "max_failures"});
  FaultSpec fault;
  const std::string function_path = in.PathOf("function");
  const Json& function = in.Require("function");
  if (!function.is_string()) Fail(function_path, fmt::format("expected a string, got {}", Show(function)));
  if (function.get<std::string>() != "*") {
    fault.function = ApiFunctionFromName(function.get<std::string>());
    if (!fault.function) {
      Fail(function_path,
           fmt::format("unknown function {}; name an NVML function from nvml_api.def, or \"*\"", Show(function)));
    }
    if (!IsFaultable(*fault.function)) {
      Fail(function_path, fmt::format("{} cannot be faulted", ApiFunctionName(*fault.function)));
    }
  }
  if (const Json* gpu = in.Find("gpu")) {
    const std::int64_t index_value = ReadInteger(*gpu, in.PathOf("gpu"));
    if (index_value < 0 || static_cast<std::uint64_t>(index_value) >= gpu_count) {
      Fail(in.PathOf("gpu"), fmt::format("no GPU {} (the scenario has {})", index_value, gpu_count));
    }
    fault.gpu = static_cast<int>(index_value);
  }
  if (const Json* latency = in.Find("latency_ms")) {
    fault.latency_ns = ReadMillisAsNs(*latency, in.PathOf("latency_ms"), 0.0, kMaxLatencyMs);
  }
  if (const Json* hang = in.Find("hang")) fault.hang = ReadBool(*hang, in.PathOf("hang"));
  const std::string return_path = in.PathOf("return");
  const bool delays = fault.latency_ns > 0 || fault.hang;
  if (delays && in.Find("return") == nullptr) {
    fault.return_code = NVML_SUCCESS;  // the call is slow or hangs, then works
    return ReadFaultTrigger(in, fault);
  }
  const Json& code = in.Require("return");
  if (code.is_string()) {
    const std::optional<nvmlReturn_t> parsed = ReturnCodeFromName(code.get<std::string>());
    if (!parsed) Fail(return_path, fmt::format("unknown NVML return code {}", Show(code)));
    fault.return_code = *parsed;
  } else if (code.is_number()) {
    fault.return_code = static_cast<nvmlReturn_t>(
        ReadIntegerIn(code, return_path, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
  } else {
    Fail(return_path, fmt::format("expected an error name like \"NO_PERMISSION\" or an integer, got {}", Show(code)));
  }
  if (fault.return_code == NVML_SUCCESS && !delays) {
    Fail(return_path, "SUCCESS is not a fault; name an error code such as \"UNKNOWN\"");
  }
  return ReadFaultTrigger(in, fault);
}

// The keys that say which matching calls fire: after_calls, max_failures,
// probability, seed.
FaultSpec ReadFaultTrigger(const ObjectReader& in, FaultSpec fault) {
  if (const Json* after = in.Find("after_calls")) {
    fault.after_calls = static_cast<std::uint64_t>(
        ReadIntegerIn(*after, in.PathOf("after_calls"), 0, std::numeric_limits<std::int64_t>::max()));
  }
  if (const Json* max_failures = in.Find("max_failures")) {
    fault.max_failures = static_cast<std::uint64_t>(
        ReadIntegerIn(*max_failures, in.PathOf("max_failures"), 1, std::numeric_limits<std::int64_t>::max()));
  }
  if (const Json* probability = in.Find("probability")) {
    fault.probability = ReadNumberIn(*probability, in.PathOf("probability"), 0.0, 1.0, "");
  }
  if (const Json* seed = in.Find("seed")) {
    if (seed->is_number_unsigned()) {
      fault.seed = seed->get<std::uint64_t>();
    } else {
      fault.seed = static_cast<std::uint64_t>(
          ReadIntegerIn(*seed, in.PathOf("seed"), 0, std::numeric_limits<std::int64_t>::max()));
    }
  }
  return fault;
}

Scenario ReadScenario(const Json& root_json) {
  if (!root_json.is_object()) Fail("", fmt::format("the top level must be a JSON object, got {}", Show(root_json)));
  const ObjectReader root(root_json, "",
                          {"driver_version", "nvml_version", "state_file", "clock", "time_scale",
                           "power_update_period_ms", "power_average_window_ms", "counter_update_period_ms",
                           "power_settle_ms", "gpus", "faults"});
  Scenario scenario;
  scenario.driver_version = std::string(kDefaultDriverVersion);
  scenario.nvml_version = std::string(kDefaultNvmlVersion);
  if (const Json* version = root.Find("driver_version")) {
    scenario.driver_version = ReadString(*version, "driver_version", kMaxVersionLength);
  }
  if (const Json* version = root.Find("nvml_version")) {
    scenario.nvml_version = ReadString(*version, "nvml_version", kMaxVersionLength);
  }
  if (const Json* state_file = root.Find("state_file")) {
    scenario.state_file = ReadString(*state_file, "state_file", PATH_MAX - 1);
  }
  if (const Json* clock = root.Find("clock")) {
    if (!clock->is_string()) Fail("clock", fmt::format("expected \"wall\" or \"manual\", got {}", Show(*clock)));
    const std::string mode = Lower(clock->get<std::string>());
    if (mode == "wall") {
      scenario.clock = ClockMode::kWall;
    } else if (mode == "manual") {
      scenario.clock = ClockMode::kManual;
    } else {
      Fail("clock", fmt::format("expected \"wall\" or \"manual\", got {}", Show(*clock)));
    }
  }
  if (const Json* scale = root.Find("time_scale")) {
    scenario.time_scale = ReadNumberIn(*scale, "time_scale", 0.0, kMaxTimeScale, "");
    if (scenario.time_scale <= 0.0) Fail("time_scale", fmt::format("must be greater than 0, got {}", Show(*scale)));
  }
  GpuDefaults defaults;
  if (const Json* period = root.Find("power_update_period_ms")) {
    defaults.power_update_period_ns = ReadMillisAsNs(*period, "power_update_period_ms", 0.0, kMaxPeriodMs);
    if (*defaults.power_update_period_ns <= 0) Fail("power_update_period_ms", "must be greater than 0 ms");
  }
  if (const Json* window = root.Find("power_average_window_ms")) {
    defaults.power_average_window_ns = ReadMillisAsNs(*window, "power_average_window_ms", 0.0, kMaxWindowMs);
  }
  if (const Json* period = root.Find("counter_update_period_ms")) {
    defaults.counter_update_period_ns = ReadMillisAsNs(*period, "counter_update_period_ms", 0.0, kMaxPeriodMs);
  }
  if (const Json* settle = root.Find("power_settle_ms")) {
    defaults.power_settle_ns = ReadMillisAsNs(*settle, "power_settle_ms", 0.0, kMaxSettleMs);
  }

  const Json& gpus = ReadArray(root.Require("gpus"), "gpus", /*allow_empty=*/true);
  if (gpus.size() > kMaxScenarioGpus)
    Fail("gpus", fmt::format("has {} GPUs; at most {} are supported", gpus.size(), kMaxScenarioGpus));
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    GpuSpec gpu = ReadGpu(gpus[i], i, defaults);
    for (std::size_t j = 0; j < scenario.gpus.size(); ++j) {
      if (scenario.gpus[j].uuid == gpu.uuid) {
        Fail(ChildPath(ElementPath("gpus", i), "uuid"), fmt::format("\"{}\" is already used by gpus[{}]", gpu.uuid, j));
      }
      if (scenario.gpus[j].pci_bus_id == gpu.pci_bus_id) {
        Fail(ChildPath(ElementPath("gpus", i), "pci_bus_id"),
             fmt::format("\"{}\" is already used by gpus[{}]", gpu.pci_bus_id, j));
      }
    }
    scenario.gpus.push_back(std::move(gpu));
  }

  if (const Json* faults = root.Find("faults")) {
    const Json& array = ReadArray(*faults, "faults", /*allow_empty=*/true);
    for (std::size_t i = 0; i < array.size(); ++i) {
      scenario.faults.push_back(ReadFault(array[i], i, scenario.gpus.size()));
    }
  }
  return scenario;
}

// "line 3, column 5: JSON syntax error: <detail>" from nlohmann's message
// "[json.exception.parse_error.101] parse error at line 3, column 5: <detail>".
std::string DescribeParseError(const nlohmann::json::parse_error& error) {
  const std::string what = error.what();
  std::string where;
  std::size_t line = 0;
  std::size_t column = 0;
  const std::size_t at = what.find(" at line ");
  if (at != std::string::npos && std::sscanf(what.c_str() + at, " at line %zu, column %zu", &line, &column) == 2) {
    where = fmt::format("line {}, column {}", line, column);
  } else {
    where = fmt::format("byte {}", error.byte);
  }
  std::string detail = what;
  if (const std::size_t colon = what.find(": ", at == std::string::npos ? 0 : at); colon != std::string::npos) {
    detail = what.substr(colon + 2);
  }
  constexpr std::string_view kRedundant = "syntax error ";
  if (detail.starts_with(kRedundant)) detail.erase(0, kRedundant.size());
  return fmt::format("{}: JSON syntax error: {}", where, detail);
}

// Tracks where a parse is (for messages) and rejects duplicate keys.
class DuplicateKeyChecker {
 public:
  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        frames_.push_back(Frame{false, 0, {}, {}});
        break;
      case Json::parse_event_t::array_start:
        frames_.push_back(Frame{true, 0, {}, {}});
        break;
      case Json::parse_event_t::key: {
        if (frames_.empty() || !parsed.is_string()) break;
        Frame& object = frames_.back();
        object.key = parsed.get<std::string>();
        if (!object.keys.insert(object.key).second) Fail(ObjectPath(), fmt::format("duplicate key {}", Show(parsed)));
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        ElementDone();
        break;
      case Json::parse_event_t::value:
        ElementDone();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool is_array;
    std::size_t index;           // arrays: the element being parsed
    std::string key;             // objects: the latest key
    std::set<std::string> keys;  // objects: every key so far
  };

  void ElementDone() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
  }

  // The path of the innermost object, e.g. "gpus[0]".
  std::string ObjectPath() const {
    std::string path;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      path = frames_[i].is_array ? ElementPath(path, frames_[i].index) : ChildPath(path, frames_[i].key);
    }
    return path;
  }

  std::vector<Frame> frames_;
};

// Parses JSON with comments allowed and duplicate keys rejected.
Json ParseJson(std::string_view text) {
  DuplicateKeyChecker checker;
  Json::parser_callback_t reject_duplicates = [&checker](int depth, Json::parse_event_t event, Json& parsed) {
    return checker(depth, event, parsed);
  };
  try {
    return Json::parse(text.begin(), text.end(), reject_duplicates, /*allow_exceptions=*/true,
                       /*ignore_comments=*/true);
  } catch (const Json::parse_error& error) {
    throw ScenarioError(DescribeParseError(error));
  } catch (const Json::exception& error) {
    std::string what = error.what();
    if (const std::size_t bracket = what.find("] "); what.starts_with("[") && bracket != std::string::npos) {
      what.erase(0, bracket + 2);
    }
    throw ScenarioError(fmt::format("JSON error: {}", what));
  }
}

bool ReadWholeFile(const std::string& path, std::string* text, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = fmt::format("cannot open: {}", std::strerror(errno));
    return false;
  }
  text->clear();
  std::array<char, 1 << 14> buffer{};
  while (true) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = fmt::format("cannot read: {}", std::strerror(errno));
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    text->append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return true;
}

}  // namespace

bool IsGa100Name(std::string_view name) {
  const std::string upper = [&] {
    std::string text(name);
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return text;
  }();
  for (std::string_view chip : {"A100", "A800", "A30"}) {
    for (std::size_t at = upper.find(chip); at != std::string::npos; at = upper.find(chip, at + 1)) {
      const bool starts = at == 0 || !std::isalnum(static_cast<unsigned char>(upper[at - 1]));
      const std::size_t end = at + chip.size();
      const bool ends = end == upper.size() || !std::isalnum(static_cast<unsigned char>(upper[end]));
      if (starts && ends) return true;
    }
  }
  return false;
}

std::int64_t DefaultPowerAverageWindowNs(unsigned int architecture, std::string_view name) {
  if (architecture >= NVML_DEVICE_ARCH_AMPERE && !IsGa100Name(name)) return kAmpereAverageWindowNs;
  return 0;
}

std::int64_t DefaultCounterUpdatePeriodNs(unsigned int /*architecture*/) { return kCounterUpdatePeriodNs; }

std::uint64_t Fnv1a64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string DefaultStatePath(std::string_view real_path, std::string_view tmp_dir) {
  std::string dir(tmp_dir.empty() ? std::string_view("/tmp") : tmp_dir);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return fmt::format("{}/zeus-nvml-emulator-{:016x}.state", dir, Fnv1a64(real_path));
}

bool ParseScenario(std::string_view text, Scenario* out, std::string* error) {
  try {
    Scenario scenario = ReadScenario(ParseJson(text));
    scenario.content_hash = Fnv1a64(text);
    *out = std::move(scenario);
    return true;
  } catch (const ScenarioError& e) {
    *error = e.what();
  } catch (const std::exception& e) {
    *error = fmt::format("unexpected error: {}", e.what());
  }
  return false;
}

bool LoadScenarioFile(const std::string& path, Scenario* out, std::string* error) {
  std::string text;
  std::string problem;
  Scenario scenario;
  if (!ReadWholeFile(path, &text, &problem) || !ParseScenario(text, &scenario, &problem)) {
    *error = fmt::format("scenario {}: {}", path, problem);
    return false;
  }
  std::string real_path = path;
  if (char* resolved = ::realpath(path.c_str(), nullptr)) {
    real_path = resolved;
    std::free(resolved);  // NOLINT(cppcoreguidelines-no-malloc): realpath allocates with malloc
  }
  if (scenario.state_file.empty()) {
    const char* tmp_dir = std::getenv("TMPDIR");
    scenario.state_file = DefaultStatePath(real_path, tmp_dir != nullptr ? tmp_dir : "");
  } else if (scenario.state_file.front() != '/') {
    // Relative state files are relative to the scenario's directory.
    const std::size_t slash = real_path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : real_path.substr(0, slash);
    scenario.state_file = fmt::format("{}/{}", dir, scenario.state_file);
  }
  *out = std::move(scenario);
  return true;
}

}  // namespace zeus::emulator
