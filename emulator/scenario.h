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
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api_functions.h"
#include "device/nvml/nvml_abi.h"
#include "physics.h"

namespace zeus::emulator {

enum class ClockMode {
  kWall,    // emulated time = time_scale x CLOCK_MONOTONIC time since the epoch
  kManual,  // emulated time moves only through zeusEmulatorAdvanceTimeNs
};

// The most GPUs a scenario may have.
inline constexpr std::size_t kMaxScenarioGpus = 64;

// One emulated GPU, fully resolved (defaults filled in).
struct GpuSpec {
  std::string name;
  std::string uuid;
  std::string pci_bus_id;         // normalised "DDDDDDDD:BB:DD.F", upper-case hex
  std::string pci_bus_id_legacy;  // "DDDD:BB:DD.F"
  unsigned int pci_domain = 0;
  unsigned int pci_bus = 0;
  unsigned int pci_device = 0;
  unsigned int architecture = 0;  // an NVML_DEVICE_ARCH_* value

  std::uint32_t min_limit_mw = 0;
  std::uint32_t max_limit_mw = 0;
  std::uint32_t default_limit_mw = 0;
  std::uint32_t initial_limit_mw = 0;  // in force when the state is created

  bool energy_counter = false;
  PowerModel power;                              // the GPU's demand
  std::optional<std::uint32_t> memory_power_mw;  // memory power domain, if any
  std::optional<std::int64_t> counter_reset_ns;  // energy counter restarts here

  unsigned int temperature_c = 40;
  bool persistence_mode = false;
  bool mig = false;

  std::vector<unsigned int> memory_clocks_mhz;    // descending, distinct, non-empty
  std::vector<unsigned int> graphics_clocks_mhz;  // descending, distinct, non-empty

  std::int64_t power_update_period_ns = 0;   // > 0
  std::int64_t power_average_window_ns = 0;  // >= 0
};

// One fault rule. A call matches when its function is `function` (or, for
// nullopt, is any nvmlDevice* function) and, if `gpu` is set and the call
// addresses a GPU, that GPU is `gpu`.
struct FaultSpec {
  std::optional<ApiFunction> function;  // nullopt: "*"
  std::optional<int> gpu;
  nvmlReturn_t return_code = NVML_ERROR_UNKNOWN;  // never NVML_SUCCESS
  std::uint64_t after_calls = 0;                  // the first after_calls matching calls pass
  double probability = 1.0;                       // in [0, 1]
  std::uint64_t seed = 0;
  std::optional<std::uint64_t> max_failures;      // stop failing after this many failures
};

struct Scenario {
  std::string driver_version;
  std::string nvml_version;
  std::string state_file;  // empty until resolved (see LoadScenarioFile)
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
// scenario's own, or DefaultStatePath of the file's real path). On failure
// returns false and sets *error to "scenario <path>: <problem>".
bool LoadScenarioFile(const std::string& path, Scenario* out, std::string* error);

// The default state file for a scenario whose real path is `real_path`:
// "<tmp_dir>/zeus-nvml-emulator-<16 hex digits of a hash of real_path>.state".
std::string DefaultStatePath(std::string_view real_path, std::string_view tmp_dir);

// 64-bit FNV-1a hash of `bytes`.
std::uint64_t Fnv1a64(std::string_view bytes);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_SCENARIO_H_
