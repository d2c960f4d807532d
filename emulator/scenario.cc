// Copyright 2026 The Zeus C++ Authors.
//
// The scenario's top level (scenario.h): ParseScenario and LoadScenarioFile,
// the scenario-wide keys (the vendor and its keys among them), the faults[]
// rules, the default state path and the content hash. The JSON readers live in scenario_json.cc, the gpus[] entries
// in scenario_gpu.cc (shared declarations: scenario_internal.h).

#include "scenario.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "return_codes.h"
#include "scenario_internal.h"

namespace zeus::emulator {
namespace {

constexpr std::string_view kDefaultDriverVersion = "550.54.15-zeus-emulator";
constexpr std::string_view kDefaultNvmlVersion = "12.550.54.15-zeus-emulator";

// The API that serves a vendor's GPUs.
Api ApiOfVendor(Vendor vendor) { return vendor == Vendor::kNvidia ? Api::kNvml : Api::kAmdSmi; }

}  // namespace

std::string_view VendorName(Vendor vendor) { return vendor == Vendor::kNvidia ? "nvidia" : "amd"; }

namespace internal {
namespace {

FaultSpec ReadFaultTrigger(const ObjectReader& in, FaultSpec fault);

// "nvmlDeviceGetPowerUsage is an NVML function", or, for a "*" rule, what it
// matches; for messages.
std::string DescribeRuleFunction(const FaultSpec& fault, Api api) {
  if (fault.function) return fmt::format("{} is an {} function", ApiFunctionName(*fault.function), ApiName(api));
  return fmt::format("this \"*\" rule matches the {} functions of this scenario's GPUs", ApiName(api));
}

// The rule's "return": a code of `api` (the function's API), by name or number.
int ReadFaultCode(const Json& code, const std::string& path, const FaultSpec& fault, Api api) {
  const Api other = api == Api::kNvml ? Api::kAmdSmi : Api::kNvml;
  const std::string_view kind = api == Api::kNvml ? "return code" : "status";
  const std::string_view other_kind = other == Api::kNvml ? "return code" : "status";
  if (code.is_string()) {
    const std::string name = code.get<std::string>();
    const std::optional<Api> prefixed = ApiOfCodeName(name);
    const std::optional<int> parsed = prefixed == other ? std::nullopt : ApiCodeFromName(api, name);
    if (parsed) return *parsed;
    if (prefixed == other || ApiCodeFromName(other, name)) {
      Fail(path, fmt::format("{} is an {} {}, but {}; name an {} {}", Show(code), ApiName(other), other_kind,
                             DescribeRuleFunction(fault, api), ApiName(api), kind));
    }
    Fail(path, fmt::format("unknown {} {} {}", ApiName(api), kind, Show(code)));
  }
  if (!code.is_number()) {
    Fail(path, fmt::format("expected an error name like \"{}\" or an integer, got {}",
                           api == Api::kNvml ? "NO_PERMISSION" : "NO_PERM", Show(code)));
  }
  if (api == Api::kNvml) {
    return static_cast<int>(
        ReadIntegerIn(code, path, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
  }
  // An amdsmi_status_t's bits, as an int.
  return static_cast<int>(
      static_cast<std::uint32_t>(ReadIntegerIn(code, path, 0, std::numeric_limits<std::uint32_t>::max())));
}

FaultSpec ReadFault(const Json& value, std::size_t index, std::size_t gpu_count, Vendor vendor) {
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
    if (ApiOf(*fault.function) != ApiOfVendor(vendor)) {
      Fail(function_path, fmt::format("{} is an {} function, but this scenario's GPUs (vendor \"{}\") are served "
                                      "by {}",
                                      ApiFunctionName(*fault.function), ApiName(ApiOf(*fault.function)),
                                      VendorName(vendor), ApiName(ApiOfVendor(vendor))));
    }
  }
  const Api api = fault.function ? ApiOf(*fault.function) : ApiOfVendor(vendor);
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
    fault.return_code = 0;  // success in both APIs: the call is slow or hangs, then works
    return ReadFaultTrigger(in, fault);
  }
  fault.return_code = ReadFaultCode(in.Require("return"), return_path, fault, api);
  if (fault.return_code == 0 && !delays) {
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

// "24.6.0" or "24.6.0.1": year, major, minor and (default 0) release.
AmdSmiVersion ReadAmdSmiVersion(const Json& value, const std::string& path) {
  const std::string text = ReadString(value, path, kMaxVersionLength);
  std::vector<std::uint32_t> parts;
  bool ok = true;
  for (std::size_t at = 0; ok && at <= text.size();) {
    std::size_t dot = text.find('.', at);
    if (dot == std::string::npos) dot = text.size();
    const std::string part = text.substr(at, dot - at);
    ok = !part.empty() && part.size() <= 9 && part.find_first_not_of("0123456789") == std::string::npos;
    if (ok) parts.push_back(static_cast<std::uint32_t>(std::stoul(part)));
    at = dot + 1;
  }
  if (!ok || parts.size() < 3 || parts.size() > 4) {
    Fail(path, fmt::format("expected a version like \"24.7.0\" (year.major.minor[.release]), got {}", Show(value)));
  }
  return AmdSmiVersion{parts[0], parts[1], parts[2], parts.size() == 4 ? parts[3] : 0};
}

// "vendor" and the top-level keys of one vendor: "amdsmi_version" (AMD),
// "driver_version" and "nvml_version" (NVIDIA).
void ReadVendor(const ObjectReader& root, Scenario* scenario) {
  if (const Json* vendor = root.Find("vendor")) {
    const std::string name = vendor->is_string() ? Lower(vendor->get<std::string>()) : std::string();
    if (name == "nvidia") {
      scenario->vendor = Vendor::kNvidia;
    } else if (name == "amd") {
      scenario->vendor = Vendor::kAmd;
    } else {
      Fail("vendor", fmt::format("expected \"nvidia\" or \"amd\", got {}", Show(*vendor)));
    }
  }
  if (scenario->vendor == Vendor::kAmd) {
    for (std::string_view key : {"driver_version", "nvml_version"}) {
      if (root.Find(key) != nullptr) FailVendorKey(std::string(key), Vendor::kNvidia);
    }
    if (const Json* version = root.Find("amdsmi_version")) {
      scenario->amdsmi_version = ReadAmdSmiVersion(*version, "amdsmi_version");
    }
  } else if (root.Find("amdsmi_version") != nullptr) {
    FailVendorKey("amdsmi_version", Vendor::kAmd);
  }
}

Scenario ReadScenario(const Json& root_json) {
  if (!root_json.is_object()) Fail("", fmt::format("the top level must be a JSON object, got {}", Show(root_json)));
  const ObjectReader root(root_json, "",
                          {"vendor", "amdsmi_version", "driver_version", "nvml_version", "state_file",
                           "state_file_shared", "clock", "time_scale", "power_update_period_ms",
                           "power_average_window_ms", "counter_update_period_ms", "power_settle_ms", "gpus",
                           "faults"});
  Scenario scenario;
  ReadVendor(root, &scenario);
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
  if (const Json* shared = root.Find("state_file_shared")) {
    scenario.state_file_shared = ReadBool(*shared, "state_file_shared");
    if (scenario.state_file_shared && scenario.state_file.empty()) {
      Fail("state_file_shared", "needs \"state_file\": the default state file is private to each user");
    }
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
  defaults.vendor = scenario.vendor;
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
      if (scenario.vendor == Vendor::kAmd && scenario.gpus[j].kfd_node_id == gpu.kfd_node_id) {
        Fail(ChildPath(ElementPath("gpus", i), "kfd_node_id"),
             fmt::format("{} is already used by gpus[{}] (by default GPU i is node i + 1)", gpu.kfd_node_id, j));
      }
    }
    scenario.gpus.push_back(std::move(gpu));
  }

  if (const Json* faults = root.Find("faults")) {
    const Json& array = ReadArray(*faults, "faults", /*allow_empty=*/true);
    for (std::size_t i = 0; i < array.size(); ++i) {
      scenario.faults.push_back(ReadFault(array[i], i, scenario.gpus.size(), scenario.vendor));
    }
  }
  return scenario;
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
}  // namespace internal

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

std::string DefaultStateDirectory() {
  if (const char* tmp_dir = std::getenv("TMPDIR"); tmp_dir != nullptr && *tmp_dir != '\0') return tmp_dir;
  // The runtime directory only if it is really ours (a `sudo` or `su` may
  // have kept another user's).
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime == '/') {
    struct stat info {};
    if (::stat(runtime, &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == ::geteuid() &&
        (info.st_mode & 0077) == 0) {
      return runtime;
    }
  }
  return "/tmp";
}

bool ParseScenario(std::string_view text, Scenario* out, std::string* error) {
  try {
    Scenario scenario = internal::ReadScenario(internal::ParseJson(text));
    scenario.content_hash = Fnv1a64(text);
    *out = std::move(scenario);
    return true;
  } catch (const internal::ScenarioError& e) {
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
  if (!internal::ReadWholeFile(path, &text, &problem) || !ParseScenario(text, &scenario, &problem)) {
    *error = fmt::format("scenario {}: {}", path, problem);
    return false;
  }
  std::string real_path = path;
  if (char* resolved = ::realpath(path.c_str(), nullptr)) {
    real_path = resolved;
    std::free(resolved);  // NOLINT(cppcoreguidelines-no-malloc): realpath allocates with malloc
  }
  if (scenario.state_file.empty()) {
    scenario.state_file = DefaultStatePath(real_path, DefaultStateDirectory());
    scenario.state_file_is_default = true;
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
