// Copyright 2026 The Zeus C++ Authors.
//
// The scenario's gpus[] entries: ReadGpu (declared in scenario_internal.h)
// and its steps (power limits, demand, identity and readings, clock lists,
// timings, the keys of one vendor's GPUs) with their parts (architecture
// names, clock lists, PCI bus ids, default UUIDs, the workload curve and the
// power schedule), and the defaults that depend on the architecture
// (scenario.h: DefaultPowerAverageWindowNs, DefaultCounterUpdatePeriodNs,
// IsGa100Name).

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "device/amdsmi/amdsmi_abi.h"
#include "scenario_internal.h"

namespace zeus::emulator {
namespace {

constexpr double kDefaultPowerUpdatePeriodMs = 100.0;
constexpr std::int64_t kAmpereAverageWindowNs = 1'000'000'000;  // see DefaultPowerAverageWindowNs
constexpr std::int64_t kCounterUpdatePeriodNs = 100'000'000;   // see DefaultCounterUpdatePeriodNs
constexpr std::array<unsigned int, 1> kDefaultMemoryClocksMhz = {1215};
constexpr std::array<unsigned int, 13> kDefaultGraphicsClocksMhz = {1980, 1830, 1680, 1530, 1380, 1230, 1080,
                                                                    930,  780,  630,  480,  330,  210};
// AMD GPUs: the window of average_socket_power. AMD documents none; 1 s (as
// NVML's average on Ampere and newer) is the emulator's choice.
constexpr std::int64_t kAmdAverageWindowNs = 1'000'000'000;
constexpr double kMaxEnergyCounterResolutionUj = 1e6;
// The keys of one vendor's GPUs only.
constexpr std::array<std::string_view, 5> kNvidiaOnlyKeys = {"architecture", "memory_power_w", "module",
                                                             "persistence_mode", "mig"};
constexpr std::array<std::string_view, 3> kAmdOnlyKeys = {"energy_counter_resolution_uj", "kfd_node_id",
                                                          "reports_power"};

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

}  // namespace

namespace internal {
namespace {

// The "unsupported" list: names of optional queries the GPU refuses. AMD
// GPUs know only the first three.
void ReadUnsupported(const Json& value, const std::string& path, Vendor vendor, GpuSpec* gpu) {
  const Json& array = ReadArray(value, path, /*allow_empty=*/true);
  constexpr std::array<std::string_view, 6> kKnown = {"instant_power", "average_power", "memory_power",
                                                      "temperature", "gpu_scope_power", "processes"};
  constexpr std::array<std::string_view, 3> kNvmlOnly = {"memory_power", "gpu_scope_power", "processes"};
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string element_path = ElementPath(path, i);
    if (!array[i].is_string()) Fail(element_path, fmt::format("expected a string, got {}", Show(array[i])));
    const std::string name = array[i].get<std::string>();
    if (vendor == Vendor::kAmd && std::find(kNvmlOnly.begin(), kNvmlOnly.end(), name) != kNvmlOnly.end()) {
      Fail(element_path, fmt::format("{} is an NVML query; AMD GPUs know only instant_power, average_power and "
                                     "temperature",
                                     Show(array[i])));
    }
    if (name == "instant_power") {
      gpu->instant_power_supported = false;
    } else if (name == "average_power") {
      gpu->average_power_supported = false;
    } else if (name == "memory_power") {
      gpu->memory_power_supported = false;
    } else if (name == "temperature") {
      gpu->temperature_supported = false;
    } else if (name == "gpu_scope_power") {
      gpu->gpu_scope_power_supported = false;
    } else if (name == "processes") {
      gpu->processes_supported = false;
    } else {
      Fail(element_path, fmt::format("unknown query {}; expected one of {}, {}, {}, {}, {}, {}", Show(array[i]),
                                     kKnown[0], kKnown[1], kKnown[2], kKnown[3], kKnown[4], kKnown[5]));
    }
  }
}

// The "module" object: the superchip around the GPU (ModuleSpec).
ModuleSpec ReadModule(const Json& value, const std::string& path) {
  const ObjectReader module(value, path, {"cpu_power_w", "cpu_memory_power_w"});
  ModuleSpec spec;
  spec.cpu_power_mw = ReadMilliwatts(module.Require("cpu_power_w"), module.PathOf("cpu_power_w"), false);
  if (const Json* memory = module.Find("cpu_memory_power_w")) {
    spec.cpu_memory_power_mw = ReadMilliwatts(*memory, module.PathOf("cpu_memory_power_w"), false);
  }
  return spec;
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

// The KFD node id: an integer, not AMD SMI's "N/A" (all ones).
std::uint32_t ReadKfdNodeId(const Json& value, const std::string& path) {
  return static_cast<std::uint32_t>(ReadIntegerIn(value, path, 0, AMDSMI_NOT_AVAILABLE_U32 - 1));
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
  gpu->pci_function = pci.function;
  gpu->pci_bus_id = fmt::format("{:08X}:{:02X}:{:02X}.{:X}", pci.domain, pci.bus, pci.device, pci.function);
  gpu->pci_bus_id_legacy =
      fmt::format("{:04X}:{:02X}:{:02X}.{:X}", pci.domain & 0xFFFFu, pci.bus, pci.device, pci.function);
}

// NVIDIA: "GPU-" and UUID-shaped hex; AMD: the UUID-shaped hex alone, as
// AMD SMI reports UUIDs.
std::string DefaultUuid(std::size_t index, const std::string& name, Vendor vendor) {
  const std::string seed = fmt::format("{}/{}", index, name);
  const std::uint64_t hi = Fnv1a64(seed);
  const std::uint64_t lo = Fnv1a64(fmt::format("zeus-emulator:{}", seed));
  return fmt::format("{}{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", vendor == Vendor::kNvidia ? "GPU-" : "", hi >> 32,
                     (hi >> 16) & 0xFFFFu, hi & 0xFFFFu, lo >> 48, lo & 0xFFFFFFFFFFFFull);
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

// The limits: min <= default, initial (power_limit_w) <= max.
void ReadPowerLimits(const ObjectReader& in, GpuSpec* gpu) {
  gpu->min_limit_mw = ReadMilliwatts(in.Require("min_power_limit_w"), in.PathOf("min_power_limit_w"), true);
  gpu->max_limit_mw = ReadMilliwatts(in.Require("max_power_limit_w"), in.PathOf("max_power_limit_w"), true);
  gpu->default_limit_mw =
      ReadMilliwatts(in.Require("default_power_limit_w"), in.PathOf("default_power_limit_w"), true);
  if (gpu->min_limit_mw > gpu->max_limit_mw) {
    Fail(in.PathOf("min_power_limit_w"), fmt::format("{} is above max_power_limit_w ({})",
                                                     FormatWatts(gpu->min_limit_mw), FormatWatts(gpu->max_limit_mw)));
  }
  auto check_in_range = [&](std::string_view key, std::uint32_t limit_mw) {
    if (limit_mw < gpu->min_limit_mw || limit_mw > gpu->max_limit_mw) {
      Fail(in.PathOf(key),
           fmt::format("{} is outside [min_power_limit_w, max_power_limit_w] = [{}, {}]", FormatWatts(limit_mw),
                       FormatWatts(gpu->min_limit_mw), FormatWatts(gpu->max_limit_mw)));
    }
  };
  check_in_range("default_power_limit_w", gpu->default_limit_mw);
  gpu->initial_limit_mw = gpu->default_limit_mw;
  if (const Json* limit = in.Find("power_limit_w")) {
    gpu->initial_limit_mw = ReadMilliwatts(*limit, in.PathOf("power_limit_w"), true);
    check_in_range("power_limit_w", gpu->initial_limit_mw);
  }
}

// The demand: exactly one of power_w, workload and power_schedule.
PowerModel ReadDemand(const ObjectReader& in) {
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
    return PowerModel::Constant(ReadMilliwatts(in.Require("power_w"), in.PathOf("power_w"), false));
  }
  if (sources[0] == "workload") return ReadWorkload(in.Require("workload"), in.PathOf("workload"));
  return ReadSchedule(in.Require("power_schedule"), in.PathOf("power_schedule"));
}

// UUID and PCI address (derived from the index and name when absent), and
// the optional readings and modes.
void ReadIdentityAndReadings(const ObjectReader& in, std::size_t index, Vendor vendor, GpuSpec* gpu) {
  gpu->uuid = in.Find("uuid") != nullptr ? ReadString(in.Require("uuid"), in.PathOf("uuid"), kMaxUuidLength)
                                         : DefaultUuid(index, gpu->name, vendor);
  if (const Json* pci = in.Find("pci_bus_id")) {
    const PciAddress address = ReadPciBusId(*pci, in.PathOf("pci_bus_id"));
    if (vendor == Vendor::kAmd && address.device > 0x1F) {
      // AMD SMI's BDF has 5 bits for the device.
      Fail(in.PathOf("pci_bus_id"),
           fmt::format("device {:02X} is above 1F, the largest PCI device number", address.device));
    }
    SetPciAddress(address, gpu);
  } else {
    SetPciAddress(PciAddress{0, static_cast<unsigned int>(index + 1) & 0xFFu, 0, 0}, gpu);
  }
  if (const Json* memory = in.Find("memory_power_w")) {
    gpu->memory_power_mw = ReadMilliwatts(*memory, in.PathOf("memory_power_w"), false);
  }
  if (const Json* temperature = in.Find("temperature_c")) {
    gpu->temperature_c =
        static_cast<unsigned int>(ReadIntegerIn(*temperature, in.PathOf("temperature_c"), 0, kMaxTemperatureC));
  }
  if (const Json* persistence = in.Find("persistence_mode")) {
    gpu->persistence_mode = ReadBool(*persistence, in.PathOf("persistence_mode"));
  }
  if (const Json* mig = in.Find("mig")) gpu->mig = ReadBool(*mig, in.PathOf("mig"));
}

// The thermal model's defaults (docs/emulator-thermal.md says where each figure comes from):
//   * ambient_c 30: an idle data-center GPU's temperature, and the temperature at time 0.
//   * time_constant_s 30: "tens of seconds" for a heat-sinked data-center GPU's die (an assumption; the
//     ML.ENERGY post on thermally stable profiling shows trials drifting over seconds to tens of seconds).
//   * resistance_c_per_w: 45 °C / max_power_limit_w, so that the GPU at its maximum limit settles 45 °C
//     above ambient (75 °C, a typical loaded data-center GPU).
//   * leakage_per_c 0.003: total power +0.3 %/°C. Leakage power grows with temperature ("exponentially",
//     Temperature-Aware Performance and Power Modeling, 2004, CiteSeerX 10.1.1.10.6575; total power
//     quadratically on a K20, Price et al., arXiv:1407.8116); the coefficient is an assumption: a few per
//     cent per °C of leakage times a leakage share of a few tens of per cent.
//   * reference_c: ambient_c (power_w / the workload's power is the power of a cold GPU).
constexpr double kDefaultAmbientC = 30.0;
constexpr double kDefaultThermalTimeConstantS = 30.0;
constexpr double kDefaultLoadedRiseC = 45.0;
constexpr double kDefaultLeakagePerC = 0.003;
// The default idle power (idle_power_w): ~50 W, an idle A100 (field notes: dcgm-exporter #464), capped at the
// limit in force.
constexpr double kDefaultIdlePowerW = 50.0;
constexpr double kMaxThermalTimeConstantS = 86'400.0;

void ReadThermal(const Json& value, const std::string& path, GpuSpec* gpu) {
  const ObjectReader in(value, path,
                        {"ambient_c", "resistance_c_per_w", "time_constant_s", "leakage_per_c", "reference_c"});
  ThermalModel thermal;
  const double max_limit_w = gpu->max_limit_mw / 1000.0;
  thermal.ambient_c = kDefaultAmbientC;
  if (const Json* ambient = in.Find("ambient_c")) {
    thermal.ambient_c = ReadNumberIn(*ambient, in.PathOf("ambient_c"), -50.0, 200.0, " °C");
  }
  thermal.resistance_c_per_w = kDefaultLoadedRiseC / max_limit_w;
  if (const Json* r = in.Find("resistance_c_per_w")) {
    thermal.resistance_c_per_w = ReadNumberIn(*r, in.PathOf("resistance_c_per_w"), 0.0, 10.0, " °C/W");
    if (!(thermal.resistance_c_per_w > 0.0)) Fail(in.PathOf("resistance_c_per_w"), "must be greater than 0");
  }
  thermal.time_constant_s = kDefaultThermalTimeConstantS;
  if (const Json* tau = in.Find("time_constant_s")) {
    thermal.time_constant_s = ReadNumberIn(*tau, in.PathOf("time_constant_s"), 0.0, kMaxThermalTimeConstantS, " s");
    if (!(thermal.time_constant_s > 0.0)) Fail(in.PathOf("time_constant_s"), "must be greater than 0 s");
  }
  thermal.leakage_per_c = kDefaultLeakagePerC;
  if (const Json* k = in.Find("leakage_per_c")) {
    thermal.leakage_per_c = ReadNumberIn(*k, in.PathOf("leakage_per_c"), 0.0, 1.0, " per °C");
  }
  thermal.reference_c = thermal.ambient_c;
  if (const Json* reference = in.Find("reference_c")) {
    thermal.reference_c = ReadNumberIn(*reference, in.PathOf("reference_c"), -50.0, 200.0, " °C");
  }
  // No thermal runaway: the uncapped lag's rate 1 - R k W must stay positive for any work power W <= max limit.
  const double gain = thermal.resistance_c_per_w * thermal.leakage_per_c * max_limit_w;
  if (!(gain < 1.0)) {
    Fail(in.PathOf("leakage_per_c"),
         fmt::format("resistance_c_per_w x leakage_per_c x max_power_limit_w is {:.3g}, which must be below 1 "
                     "(else the modelled GPU heats without bound); lower either",
                     gain));
  }
  if (!(1.0 + thermal.leakage_per_c * (thermal.ambient_c - thermal.reference_c) > 0.0)) {
    Fail(in.PathOf("reference_c"), "is so far above ambient_c that a cool GPU would draw no power; lower it");
  }
  gpu->power.set_thermal(thermal);
}

// The clock lists; on AMD GPUs at most AMDSMI_MAX_NUM_FREQUENCIES each (what
// amdsmi_frequencies_t holds).
void ReadClockLists(const ObjectReader& in, Vendor vendor, GpuSpec* gpu) {
  auto read = [&](std::string_view key, std::vector<unsigned int>* out, auto defaults) {
    if (const Json* clocks = in.Find(key)) {
      *out = ReadClocks(*clocks, in.PathOf(key));
      if (vendor == Vendor::kAmd && out->size() > AMDSMI_MAX_NUM_FREQUENCIES) {
        Fail(in.PathOf(key), fmt::format("has {} clocks; AMD SMI reports at most {}", out->size(),
                                         static_cast<int>(AMDSMI_MAX_NUM_FREQUENCIES)));
      }
    } else {
      out->assign(defaults.begin(), defaults.end());
    }
  };
  read("supported_memory_clocks_mhz", &gpu->memory_clocks_mhz, kDefaultMemoryClocksMhz);
  read("supported_graphics_clocks_mhz", &gpu->graphics_clocks_mhz, kDefaultGraphicsClocksMhz);
}

// The sensor's update period and averaging window, the energy counter's
// update period and the limit's settling time: the GPU's own, else the
// scenario's, else the architecture's default.
void ReadTimings(const ObjectReader& in, const GpuDefaults& defaults, GpuSpec* gpu) {
  if (const Json* period = in.Find("power_update_period_ms")) {
    gpu->power_update_period_ns = ReadMillisAsNs(*period, in.PathOf("power_update_period_ms"), 0.0, kMaxPeriodMs);
  } else {
    gpu->power_update_period_ns =
        defaults.power_update_period_ns.value_or(std::llround(kDefaultPowerUpdatePeriodMs * 1e6));
  }
  if (gpu->power_update_period_ns <= 0) {
    Fail(in.PathOf("power_update_period_ms"), "must be greater than 0 ms");
  }
  if (const Json* window = in.Find("power_average_window_ms")) {
    gpu->power_average_window_ns = ReadMillisAsNs(*window, in.PathOf("power_average_window_ms"), 0.0, kMaxWindowMs);
  } else if (defaults.power_average_window_ns) {
    gpu->power_average_window_ns = *defaults.power_average_window_ns;
  } else if (defaults.vendor == Vendor::kAmd) {
    gpu->power_average_window_ns = kAmdAverageWindowNs;
  } else {
    gpu->power_average_window_ns = DefaultPowerAverageWindowNs(gpu->architecture, gpu->name);
  }
  if (const Json* period = in.Find("counter_update_period_ms")) {
    gpu->counter_update_period_ns =
        ReadMillisAsNs(*period, in.PathOf("counter_update_period_ms"), 0.0, kMaxPeriodMs);
  } else {
    gpu->counter_update_period_ns =
        defaults.counter_update_period_ns.value_or(DefaultCounterUpdatePeriodNs(gpu->architecture));
  }
  if (const Json* settle = in.Find("power_settle_ms")) {
    gpu->power_settle_ns = ReadMillisAsNs(*settle, in.PathOf("power_settle_ms"), 0.0, kMaxSettleMs);
  } else {
    gpu->power_settle_ns = defaults.power_settle_ns.value_or(kDefaultPowerSettleNs);
  }
}

// The keys of one vendor's GPUs: each key of the other vendor's is an error,
// and the AMD keys are read.
void ReadVendorKeys(const ObjectReader& in, std::size_t index, Vendor vendor, GpuSpec* gpu) {
  const Vendor other = vendor == Vendor::kNvidia ? Vendor::kAmd : Vendor::kNvidia;
  const std::span<const std::string_view> foreign =
      other == Vendor::kAmd ? std::span<const std::string_view>(kAmdOnlyKeys) : kNvidiaOnlyKeys;
  for (std::string_view key : foreign) {
    if (in.Find(key) != nullptr) FailVendorKey(in.PathOf(key), other);
  }
  if (vendor != Vendor::kAmd) return;
  gpu->kfd_node_id = static_cast<std::uint32_t>(index + 1);
  if (const Json* node = in.Find("kfd_node_id")) gpu->kfd_node_id = ReadKfdNodeId(*node, in.PathOf("kfd_node_id"));
  if (const Json* resolution = in.Find("energy_counter_resolution_uj")) {
    const std::string path = in.PathOf("energy_counter_resolution_uj");
    const double uj = ReadNumberIn(*resolution, path, 0.0, kMaxEnergyCounterResolutionUj, " µJ");
    if (!(uj > 0.0)) Fail(path, fmt::format("must be greater than 0 µJ, got {}", Show(*resolution)));
    gpu->energy_counter_resolution_uj = static_cast<float>(uj);
  }
  if (const Json* reports = in.Find("reports_power")) {
    gpu->reports_power = ReadBool(*reports, in.PathOf("reports_power"));
  }
}

}  // namespace

[[noreturn]] void FailVendorKey(const std::string& path, Vendor vendor) {
  const Vendor other = vendor == Vendor::kNvidia ? Vendor::kAmd : Vendor::kNvidia;
  Fail(path, fmt::format("is only for {} GPUs, and this scenario's vendor is \"{}\"{}",
                         vendor == Vendor::kNvidia ? "NVIDIA" : "AMD", VendorName(other),
                         other == Vendor::kNvidia ? " (the default; set \"vendor\": \"amd\" for AMD GPUs)" : ""));
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
                         "module",
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
                         "counter_reset_at_s",
                         "idle_power_w",
                         "energy_counter_rate",
                         "thermal",
                         "processes",
                         "process_sample_period_ms",
                         "energy_counter_resolution_uj",
                         "kfd_node_id",
                         "reports_power"});
  const Vendor vendor = defaults.vendor;
  GpuSpec gpu;
  ReadVendorKeys(in, index, vendor, &gpu);
  gpu.name = ReadString(in.Require("name"), in.PathOf("name"), kMaxNameLength);
  if (vendor == Vendor::kNvidia) {
    gpu.architecture = ReadArchitecture(in.Require("architecture"), in.PathOf("architecture"));
  }
  ReadPowerLimits(in, &gpu);
  // AMD GPUs: optional, as every Instinct GPU has an energy counter.
  gpu.energy_counter = vendor == Vendor::kAmd && in.Find("energy_counter") == nullptr
                           ? true
                           : ReadBool(in.Require("energy_counter"), in.PathOf("energy_counter"));
  gpu.power = ReadDemand(in);
  ReadIdentityAndReadings(in, index, vendor, &gpu);
  ReadClockLists(in, vendor, &gpu);
  ReadTimings(in, defaults, &gpu);
  if (const Json* unsupported = in.Find("unsupported")) {
    ReadUnsupported(*unsupported, in.PathOf("unsupported"), vendor, &gpu);
  }
  if (const Json* module = in.Find("module")) gpu.module = ReadModule(*module, in.PathOf("module"));
  if (!gpu.gpu_scope_power_supported && !gpu.module) {
    Fail(in.PathOf("unsupported"), "\"gpu_scope_power\" needs a \"module\" (a driver without the GPU scope reports "
                                   "the module's power)");
  }
  if (const Json* reset = in.Find("counter_reset_at_s")) {
    gpu.counter_reset_ns = ReadSecondsAsNs(*reset, in.PathOf("counter_reset_at_s"));
  }
  gpu.power.set_idle_mw(static_cast<std::uint32_t>(std::llround(kDefaultIdlePowerW * 1000.0)));
  if (const Json* idle = in.Find("idle_power_w")) {
    gpu.power.set_idle_mw(ReadMilliwatts(*idle, in.PathOf("idle_power_w"), /*positive=*/false));
  }
  if (const Json* rate = in.Find("energy_counter_rate")) {
    gpu.energy_counter_rate = ReadNumberIn(*rate, in.PathOf("energy_counter_rate"), 0.0, kMaxEnergyCounterRate, "");
  }
  if (const Json* thermal = in.Find("thermal")) {
    if (in.Find("temperature_c") != nullptr) {
      Fail(in.PathOf("temperature_c"), "give either temperature_c (a fixed reading) or thermal (a modelled one), "
                                       "not both; thermal.ambient_c sets the starting temperature");
    }
    ReadThermal(*thermal, in.PathOf("thermal"), &gpu);
  }
  ReadProcesses(in, &gpu);
  return gpu;
}

}  // namespace internal

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

}  // namespace zeus::emulator
