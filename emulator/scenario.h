// Copyright 2026 The Zeus C++ Authors.
//
// The emulator's scenario: which GPUs exist, how they behave, and which calls
// fail. A scenario is a JSON file (format: the top-level README, "The NVML emulator"); this module
// parses and validates it into plain values, with every unit converted to the
// emulator's integer units (mW, ns, MHz).
//
// Parsing is strict: wrong types, out-of-range values, missing required keys,
// unknown keys (typos) and duplicate keys are all errors, reported as one line
// that names the offending key by its path, e.g.
//   gpus[1].max_power_limit_w: expected a number, got "abc"
//
// Thread-safety: the functions are reentrant; a Scenario is a plain value.

#ifndef ZEUS_EMULATOR_SCENARIO_H_
#define ZEUS_EMULATOR_SCENARIO_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api_functions.h"
#include "device/nvml/nvml_abi.h"
#include "physics.h"

namespace zeus::emulator {

// Whose GPUs a scenario emulates (its "vendor"), and so which face of the
// emulator serves it: NVIDIA's through NVML (libzeus-nvml-emulator.so), AMD's
// through AMD SMI (libzeus-amdsmi-emulator.so).
enum class Vendor {
  kNvidia,
  kAmd,
};

// "nvidia" or "amd", as the scenario spells it.
std::string_view VendorName(Vendor vendor);

// What amdsmi_get_lib_version reports (scenario key "amdsmi_version").
// The default is AMD SMI 24.7.0.0, the library of ROCm 6.3.
struct AmdSmiVersion {
  std::uint32_t year = 24;
  std::uint32_t major = 7;
  std::uint32_t minor = 0;
  std::uint32_t release = 0;
};

// AMD SMI's energy counter unit when the scenario gives none
// ("energy_counter_resolution_uj"): 2^-16 J = 15.259 µJ, the unit of the
// energy accumulator in AMD's GPU metrics (rocm_smi_gpu_metrics.h: "Energy
// (15.259uJ (2^-16) units)"). Note that the library itself reports a rounded
// 15.3 as the resolution (rocm_smi.cc, kEnergyCounterResolution).
inline constexpr double kDefaultEnergyCounterResolutionUj = 15.259;

enum class ClockMode {
  kWall,    // emulated time = time_scale x CLOCK_MONOTONIC time since the epoch
  kManual,  // emulated time moves only through zeusEmulatorAdvanceTimeNs
};

// The most GPUs a scenario may have.
inline constexpr std::size_t kMaxScenarioGpus = 64;

// The module a GPU sits on, as on a superchip (Grace Hopper GH200: one Grace
// CPU, its LPDDR5X memory and one H100 GPU on one board), from the GPU's
// "module" object. The module's power is the GPU's drawn power plus these
// constant draws: what nvmlDeviceGetPowerUsage and the MODULE-scope power
// fields report on such a board ("Module scope - Metrics for the module
// (e.g. CPU + GPU)", NVML's documentation of NVML_FI_DEV_POWER_AVERAGE).
struct ModuleSpec {
  std::uint32_t cpu_power_mw = 0;         // the CPU's draw
  std::uint32_t cpu_memory_power_mw = 0;  // the CPU memory's draw
  // The constant part of the module's power.
  std::uint32_t extra_mw() const { return cpu_power_mw + cpu_memory_power_mw; }
};

// The most processes a GPU's scenario may list.
inline constexpr std::size_t kMaxScenarioProcesses = 64;
// The per-process utilization sample period when the scenario gives none:
// 1/6 s, the shortest of the sample periods NVML documents for utilization
// ("between 1 second and 1/6 second depending on the product",
// nvmlDeviceGetUtilizationRates), rounded to a whole microsecond.
inline constexpr std::int64_t kDefaultProcessSamplePeriodNs = 166'667'000;
// How much sample history the emulator keeps, as the driver's sample buffer:
// samples taken within this time before now.
inline constexpr std::int64_t kProcessSampleHistoryNs = 5 * 1'000'000'000LL;

// One step of a process's SM utilization: from `time_ns` on, `percent`.
struct UtilStep {
  std::int64_t time_ns;
  std::uint32_t percent;  // 0..100
};

// A process the scenario puts on a GPU (a "processes" entry). Its PID is
// not checked for liveness (tests give fake PIDs with fake /proc trees).
struct ScenarioProcess {
  std::uint32_t pid = 0;
  std::vector<UtilStep> sm_util;  // sorted; 0 % before the first step
  std::uint32_t mem_util_percent = 0;
  std::optional<std::uint64_t> used_memory_bytes;  // nullopt: NVML_VALUE_NOT_AVAILABLE
  std::int64_t start_ns = 0;                       // on the GPU over [start_ns, end_ns)
  std::int64_t end_ns = std::numeric_limits<std::int64_t>::max();

  bool RunningAt(std::int64_t time_ns) const { return start_ns <= time_ns && time_ns < end_ns; }
  // The SM utilization at `time_ns` (0 outside [start_ns, end_ns)).
  std::uint32_t SmPercentAt(std::int64_t time_ns) const;
};

// One emulated GPU, fully resolved (defaults filled in).
struct GpuSpec {
  std::string name;
  std::string uuid;
  std::string pci_bus_id;         // normalised "DDDDDDDD:BB:DD.F", upper-case hex
  std::string pci_bus_id_legacy;  // "DDDD:BB:DD.F"
  unsigned int pci_domain = 0;
  unsigned int pci_bus = 0;
  unsigned int pci_device = 0;
  unsigned int pci_function = 0;
  unsigned int architecture = 0;  // an NVML_DEVICE_ARCH_* value (NVIDIA only)

  std::uint32_t min_limit_mw = 0;
  std::uint32_t max_limit_mw = 0;
  std::uint32_t default_limit_mw = 0;
  std::uint32_t initial_limit_mw = 0;  // in force when the state is created

  bool energy_counter = false;
  PowerModel power;                              // the GPU's demand
  std::optional<std::uint32_t> memory_power_mw;  // memory power domain, if any
  std::optional<ModuleSpec> module;              // the superchip module, if any
  std::optional<std::int64_t> counter_reset_ns;  // energy counter restarts here

  unsigned int temperature_c = 40;
  bool persistence_mode = false;
  bool mig = false;

  std::vector<unsigned int> memory_clocks_mhz;    // descending, distinct, non-empty
  std::vector<unsigned int> graphics_clocks_mhz;  // descending, distinct, non-empty

  std::int64_t power_update_period_ns = 0;   // > 0
  std::int64_t power_average_window_ns = 0;  // >= 0
  // The energy counter advances only at instants k x this period (0: it
  // moves continuously). Default: DefaultCounterUpdatePeriodNs.
  std::int64_t counter_update_period_ns = 0;  // >= 0
  // The counter reads the true energy x this: a driver fault, a counter at a
  // wrong rate or in wrong units (1000: µJ read as mJ), or 0: a counter that
  // never advances. Scenario key "energy_counter_rate", 0 to 1e6.
  double energy_counter_rate = 1.0;
  // After a limit change, the drawn power's cap moves from the old limit to
  // the new one over this time (0: at once). See RecordLimitRamp.
  std::int64_t power_settle_ns = 0;  // >= 0

  // Optional queries this GPU answers (false: NVML_ERROR_NOT_SUPPORTED), from
  // the scenario's "unsupported" list. Memory power also needs memory_power_mw.
  bool instant_power_supported = true;  // field NVML_FI_DEV_POWER_INSTANT
  bool average_power_supported = true;  // field NVML_FI_DEV_POWER_AVERAGE, GPU scope
  bool memory_power_supported = true;   // field NVML_FI_DEV_POWER_AVERAGE, memory scope
  // Both power fields at NVML_POWER_SCOPE_GPU ("gpu_scope_power" in the
  // list), as on drivers that offer only the module's power. Then the energy
  // counter counts the module's energy too (ModuleCountsEnergy).
  bool gpu_scope_power_supported = true;
  bool temperature_supported = true;    // nvmlDeviceGetTemperature
  // nvmlDeviceGetComputeRunningProcesses_v3 and nvmlDeviceGetProcessUtilization
  // ("processes" in the list).
  bool processes_supported = true;

  // AMD GPUs only (vendor amd). The energy counter's unit, µJ, as the float
  // amdsmi_get_energy_count reports: the accumulator is the counted energy
  // in µJ divided by it, rounded down.
  float energy_counter_resolution_uj = static_cast<float>(kDefaultEnergyCounterResolutionUj);
  // The KFD topology node (amdsmi_kfd_info_t.node_id; HIP orders GPUs by it).
  // Default: index + 1; distinct across the scenario's GPUs.
  std::uint32_t kfd_node_id = 0;
  // False: the die reports no power (the secondary die of a dual-die MI250):
  // its socket power reads 0 and its energy accumulator stays 0.
  bool reports_power = true;

  // Per-process accounting (nvml_emulator_processes.cc).
  std::vector<ScenarioProcess> processes;
  std::int64_t process_sample_period_ns = kDefaultProcessSamplePeriodNs;  // > 0
};

// Whether the energy counter counts the module's energy (GPU + CPU + CPU
// memory) rather than the GPU's: on a module whose driver does not offer the
// GPU scope, as Zeus observed on GH200 (ml-energy/zeus#172: "the cumulative
// energy counter is for the entire chip/module").
inline bool ModuleCountsEnergy(const GpuSpec& spec) {
  return spec.module.has_value() && !spec.gpu_scope_power_supported;
}

// Defaults that depend on the architecture (and, for Ampere, the chip). Each
// comes from ../shared/docs/field-notes.md, section 3.1:
//   * Power averaging window of nvmlDeviceGetPowerUsage ("nvmlDeviceGetPowerUsage
//     semantics change by generation", NVML docs): Ampere except GA100, and
//     newer, report a 1 s average; GA100 and older report instantaneous power
//     (window 0). GA100 is recognised by the name (IsGa100Name).
//   * Energy counter update period ("Counter update granularity": ~10 ms on
//     one system, "every 20-100 ms" on newer GPUs, "approximately every
//     100 ms"): 100 ms for every architecture with a counter. The notes give
//     no per-generation figure, so the emulator takes the commonly reported
//     value, which is also the upper end of the range and so the case most
//     likely to expose a short-window problem.
std::int64_t DefaultPowerAverageWindowNs(unsigned int architecture, std::string_view name);
std::int64_t DefaultCounterUpdatePeriodNs(unsigned int architecture);
// Power settling after a limit change: the field notes give no figure. 100 ms
// (one default power-sensor update period) is a plausible order for the
// board's power controller; scenarios override it with power_settle_ms.
inline constexpr std::int64_t kDefaultPowerSettleNs = 100'000'000;
// True for names of GA100 products: "A100", "A800" and "A30" as whole words
// (e.g. "NVIDIA A100-SXM4-40GB"; "RTX A3000" is not GA100).
bool IsGa100Name(std::string_view name);

// One fault rule. A call matches when its function is `function` (or, for
// nullopt, is any device function: IsDeviceFunction) and, if `gpu` is set and
// the call addresses a GPU, that GPU is `gpu`.
//
// A firing rule acts in this order: it waits `latency_ns` (wall time), then,
// if `hang`, blocks until the test releases hung calls
// (zeusEmulatorReleaseHungCalls), then returns `return_code`, or, if that is
// 0 (success, in both APIs: a pure latency/hang rule), lets the call do its
// work.
struct FaultSpec {
  std::optional<ApiFunction> function;  // nullopt: "*"
  std::optional<int> gpu;
  // A code of the function's API (the scenario vendor's for "*"): an
  // nvmlReturn_t, or an amdsmi_status_t's bits as an int. 0 (success) only
  // for a rule with a latency or a hang.
  int return_code = NVML_ERROR_UNKNOWN;
  std::int64_t latency_ns = 0;  // >= 0, wall time
  bool hang = false;
  std::uint64_t after_calls = 0;                  // the first after_calls matching calls pass
  double probability = 1.0;                       // in [0, 1]
  std::uint64_t seed = 0;
  std::optional<std::uint64_t> max_failures;      // stop failing after this many failures
};

struct Scenario {
  Vendor vendor = Vendor::kNvidia;
  AmdSmiVersion amdsmi_version;  // vendor amd only
  std::string driver_version;
  std::string nvml_version;
  std::string state_file;  // empty until resolved (see LoadScenarioFile)
  // True when state_file is DefaultStatePath's: the state may then live in a
  // private per-user directory beneath state_file's (state_file.h).
  bool state_file_is_default = false;
  // "state_file_shared": processes of other users may share the state file
  // (it is created 0666 and may be owned by another user). Requires an
  // explicit state_file.
  bool state_file_shared = false;
  ClockMode clock = ClockMode::kWall;
  double time_scale = 1.0;  // emulated seconds per wall second (> 0)
  std::vector<GpuSpec> gpus;
  std::vector<FaultSpec> faults;
  std::uint64_t content_hash = 0;  // FNV-1a of the file's bytes
};

// Parses and validates scenario JSON text. Comments (// and /* */) are
// allowed. On success fills *out (state_file stays empty unless the text sets
// it) and returns true. On failure returns false and sets *error to a
// one-line message without a file prefix, e.g.
//   "gpus[0]: unknown key \"power_watts\"".
bool ParseScenario(std::string_view text, Scenario* out, std::string* error);

// Reads the file at `path`, parses it, and resolves the state file path (the
// scenario's own, relative to the scenario's directory, or DefaultStatePath of
// the file's real path in DefaultStateDirectory()). On failure returns false
// and sets *error to "scenario <path>: <problem>".
bool LoadScenarioFile(const std::string& path, Scenario* out, std::string* error);

// The default state file for a scenario whose real path is `real_path`:
// "<tmp_dir>/zeus-nvml-emulator-<16 hex digits of a hash of real_path>.state"
// ("/tmp" for an empty tmp_dir).
std::string DefaultStatePath(std::string_view real_path, std::string_view tmp_dir);

// The directory for default state files: $TMPDIR if set, else
// $XDG_RUNTIME_DIR if it is a directory of this user's that only this user
// may access, else "/tmp". (Where that directory is not private to the user,
// the state file goes to a private subdirectory: state_file.h.)
std::string DefaultStateDirectory();

// 64-bit FNV-1a hash of `bytes`.
std::uint64_t Fnv1a64(std::string_view bytes);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_SCENARIO_H_
