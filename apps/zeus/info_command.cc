// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/info_command.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "zeus/base/version.h"
#include "zeus/device/discovery.h"
#include "zeus/device/environment.h"
#include "zeus/device/privileges.h"
#include "zeus/monitor/counter_check.h"
#include "zeus/zeusd_client/client.h"
#include "zeus/zeusd_client/cpu.h"

namespace zeus::cli {
namespace {

using json = nlohmann::json;

double Watts(std::uint32_t mw) { return mw / 1000.0; }

// Reads everything `zeus info` shows into one JSON document; the text form is
// rendered from it, so the two never disagree.
json CollectGpu(device::Gpu& gpu, std::size_t index, std::vector<std::string>& problems) {
  json j;
  j["index"] = index;
  j["nvml_index"] = gpu.nvml_index();
  auto note = [&](const auto& result) {
    if (!result) problems.push_back(result.error().message());
  };
  auto name = gpu.Name();
  note(name);
  j["name"] = name ? json(*name) : json(nullptr);
  auto uuid = gpu.Uuid();
  note(uuid);
  j["uuid"] = uuid ? json(*uuid) : json(nullptr);
  auto pci = gpu.PciBusId();
  j["pci_bus_id"] = pci ? json(*pci) : json(nullptr);
  auto arch = gpu.Architecture();
  note(arch);
  j["architecture"] = arch ? json(std::string(device::GpuArchitectureName(*arch))) : json(nullptr);
  auto mig = gpu.MigEnabled();
  j["mig"] = mig ? json(*mig) : json(nullptr);

  auto limit = gpu.PowerLimitMw();
  note(limit);
  j["power_limit_w"] = limit ? json(Watts(*limit)) : json(nullptr);
  auto def = gpu.DefaultPowerLimitMw();
  note(def);
  j["default_power_limit_w"] = def ? json(Watts(*def)) : json(nullptr);
  auto constraints = gpu.PowerLimitConstraintsMw();
  note(constraints);
  j["min_power_limit_w"] = constraints ? json(Watts(constraints->min_mw)) : json(nullptr);
  j["max_power_limit_w"] = constraints ? json(Watts(constraints->max_mw)) : json(nullptr);
  auto enforced = gpu.EnforcedPowerLimitMw();
  j["enforced_power_limit_w"] = enforced ? json(Watts(*enforced)) : json(nullptr);
  j["energy_counter"] = gpu.SupportsEnergyCounter();
  if (j["energy_counter"].get<bool>()) {
    auto energy = gpu.TotalEnergyMj();
    j["energy_counter_mj"] = energy ? json(*energy) : json(nullptr);
  } else {
    j["energy_counter_mj"] = nullptr;
  }
  auto power = gpu.PowerUsageMw();
  note(power);
  j["power_w"] = power ? json(Watts(*power)) : json(nullptr);
  // What the power readings cover: "gpu", "module" (a superchip's GPU + CPU +
  // memory, where the driver offers no GPU scope) or "unscoped".
  auto scope = gpu.PowerReadingScope();
  note(scope);
  j["power_scope"] = scope ? json(std::string(device::PowerScopeName(*scope))) : json(nullptr);
  auto persistence = gpu.PersistenceMode();
  j["persistence_mode"] = persistence ? json(*persistence) : json(nullptr);
  auto temperature = gpu.TemperatureC();
  j["temperature_c"] = temperature ? json(*temperature) : json(nullptr);
  return j;
}

json CollectCpus(std::vector<std::string>& problems, bool& any_unreadable) {
  json j;
  const std::string root = device::ChoosePowercapRoot();
  j["powercap_root"] = root;
  device::CpuOptions options;
  options.wrap_guard = false;  // one read each; no long-lived accumulation here
  auto cpus = device::OpenCpus(options);
  j["packages"] = json::array();
  if (!cpus) {
    j["available"] = false;
    j["error"] = cpus.error().message();
    problems.push_back(cpus.error().message());
    return j;
  }
  j["available"] = !(*cpus)->empty();
  j["error"] = nullptr;
  for (std::size_t i = 0; i < (*cpus)->size(); ++i) {
    device::Cpu& cpu = (*cpus)->cpu(i);
    json p;
    p["index"] = i;
    p["name"] = cpu.name();
    p["dram"] = cpu.has_dram();
    auto energy = cpu.TotalEnergy();
    p["readable"] = static_cast<bool>(energy);
    p["error"] = energy ? json(nullptr) : json(energy.error().message());
    if (!energy) any_unreadable = true;
    j["packages"].push_back(p);
  }
  return j;
}

std::string Fmt(const json& v, const char* unit = "") {
  if (v.is_null()) return "n/a";
  if (v.is_number_float()) return fmt::format("{:g}{}", v.get<double>(), unit);
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_string()) return v.get<std::string>() + unit;
  return v.dump() + unit;
}

// The daemon named by ZEUSD_SOCK_PATH/ZEUSD_HOST_PORT: null when none is
// configured; else its endpoint, groups, GPUs and our scopes, or the error.
json CollectZeusd(std::vector<std::string>& problems) {
  auto config = zeusd::ZeusdConfig::FromEnv();
  if (!config) return nullptr;
  json out = {{"endpoint", config->endpoint()}, {"token", !config->token.empty()}};
  auto client = zeusd::ZeusdClient::Connect(*config);
  if (!client) {
    out["error"] = client.error().message();
    problems.push_back(client.error().message());
    return out;
  }
  const zeusd::ZeusdCapabilities& caps = (*client)->capabilities();
  out["error"] = nullptr;
  out["enabled_api_groups"] = caps.enabled_api_groups;
  out["auth_required"] = caps.auth_required;
  out["scopes"] = caps.scopes;
  out["auth_error"] = caps.auth_error ? json(caps.auth_error->message()) : json(nullptr);
  out["can_control_gpu"] = caps.can_control_gpu();
  out["can_read_gpu"] = caps.can_read_gpu();
  out["can_read_cpu"] = caps.can_read_cpu();
  out["gpus"] = json::array();
  for (const auto& g : caps.gpus) out["gpus"].push_back({{"id", g.id}, {"name", g.name}, {"pci_address", g.pci_address}});
  out["cpus"] = json::array();
  for (const auto& c : caps.cpus) out["cpus"].push_back({{"id", c.id}, {"dram_available", c.dram_available}});
  if (caps.auth_error) problems.push_back(caps.auth_error->message());
  // Where CPU energy is read: local RAPL when readable, else through the daemon.
  device::CpuOptions options;
  options.wrap_guard = false;
  auto cpus = zeusd::OpenCpusLocalOrZeusd(options, config, zeusd::CpuDemand::kRequired);
  out["cpu_energy_source"] = !cpus ? json(nullptr) : json(cpus->zeusd_endpoint ? "zeusd" : "local");
  out["cpu_energy_error"] = cpus ? json(nullptr) : json(cpus.error().message());
  if (!cpus) problems.push_back(cpus.error().message());
  return out;
}

void PrintZeusd(const json& z) {
  if (z.is_null()) return;
  fmt::print("\nzeusd at {}: ", z["endpoint"].get<std::string>());
  if (!z["error"].is_null()) {
    fmt::print("unreachable ({})\n", z["error"].get<std::string>());
    return;
  }
  fmt::print("{} GPU{}, {} CPU{}; groups {}; auth {}\n", z["gpus"].size(), z["gpus"].size() == 1 ? "" : "s",
             z["cpus"].size(), z["cpus"].size() == 1 ? "" : "s",
             fmt::join(z["enabled_api_groups"].get<std::vector<std::string>>(), ", "),
             z["auth_required"].get<bool>() ? "required" : "off");
  if (z["auth_required"].get<bool>()) {
    fmt::print("  our scopes: {}\n", z["auth_error"].is_null()
                                         ? fmt::format("{}", fmt::join(z["scopes"].get<std::vector<std::string>>(), ", "))
                                         : z["auth_error"].get<std::string>());
  }
  fmt::print("  through it: GPU power limits {}, GPU reads {}, CPU energy {}\n",
             z["can_control_gpu"].get<bool>() ? "yes" : "no", z["can_read_gpu"].get<bool>() ? "yes" : "no",
             z["can_read_cpu"].get<bool>() ? "yes" : "no");
  if (z["cpu_energy_source"] == "zeusd") {
    fmt::print("  CPUs are read through zeusd at {} (local RAPL is not readable)\n", z["endpoint"].get<std::string>());
  }
}

// " (GPU scope)", " (module scope: ...)", ... after the power reading.
std::string PowerScopeNote(const json& scope) {
  if (scope == "gpu") return " (GPU scope)";
  if (scope == "module") return " (module scope: the whole superchip, CPU and memory included)";
  if (scope == "unscoped") return " (unscoped: the driver's board reading)";
  return " (scope n/a)";
}

void PrintText(const json& info) {
  fmt::print("Zeus {}\n\n", info["version"].get<std::string>());
  const json& driver = info["driver"];
  const bool amd = driver["vendor"] == "amd";
  if (!driver["available"].get<bool>()) {
    fmt::print("GPU driver: none. {}\n", driver["error"].get<std::string>());
  } else if (amd) {
    fmt::print("AMD GPUs: AMD SMI {} (from {})\n", Fmt(driver["version"]), driver["amdsmi_library"].get<std::string>());
  } else {
    fmt::print("NVIDIA driver: {} (NVML from {})\n", Fmt(driver["version"]), driver["nvml_library"].get<std::string>());
  }
  if (driver["available"].get<bool>()) {
    fmt::print("GPUs: {}\n", info["gpus"].size());
    for (const json& g : info["gpus"]) {
      fmt::print("  GPU {}: {} ({})\n", g["index"].get<std::size_t>(), Fmt(g["name"]), Fmt(g["architecture"]));
      fmt::print("    UUID             {}\n", Fmt(g["uuid"]));
      fmt::print("    PCI bus id       {}\n", Fmt(g["pci_bus_id"]));
      fmt::print("    {} index       {}\n", amd ? "HIP " : "NVML", g["nvml_index"].get<unsigned>());
      fmt::print("    Power limit      {} (default {}, min {}, max {}, enforced {})\n", Fmt(g["power_limit_w"], " W"),
                 Fmt(g["default_power_limit_w"], " W"), Fmt(g["min_power_limit_w"], " W"),
                 Fmt(g["max_power_limit_w"], " W"), Fmt(g["enforced_power_limit_w"], " W"));
      fmt::print("    Power now        {}{}\n", Fmt(g["power_w"], " W"), PowerScopeNote(g["power_scope"]));
      fmt::print("    Energy counter   {}\n",
                 g["energy_counter"].get<bool>() ? "yes"
                 : amd && g["power_w"].is_null() ? "no (this GPU reports neither power nor energy of its own)"
                 : amd                           ? "no (energy is integrated from power samples)"
                                                 : "no (pre-Volta: energy is integrated from power samples)");
      const json& check = g["energy_counter_check"];
      if (check.is_object()) {
        fmt::print("    Counter check    {}: {}\n", check["verdict"].get<std::string>(), check["detail"].get<std::string>());
      }
      fmt::print("    Persistence mode {}   Temperature {}   MIG {}\n", Fmt(g["persistence_mode"]),
                 Fmt(g["temperature_c"], " C"), Fmt(g["mig"]));
    }
  }
  const json& cpus = info["cpus"];
  fmt::print("\nCPUs (RAPL under {}): ", cpus["powercap_root"].get<std::string>());
  if (cpus["packages"].empty()) {
    fmt::print("none found{}\n", cpus["error"].is_null() ? "" : ": " + cpus["error"].get<std::string>());
  } else {
    fmt::print("{} package{}\n", cpus["packages"].size(), cpus["packages"].size() == 1 ? "" : "s");
    for (const json& p : cpus["packages"]) {
      fmt::print("  {}: DRAM {}, energy counter {}\n", p["name"].get<std::string>(), Fmt(p["dram"]),
                 p["readable"].get<bool>() ? "readable" : "not readable");
      if (!p["error"].is_null()) fmt::print("    {}\n", p["error"].get<std::string>());
    }
  }
  const json& priv = info["privileges"];
  fmt::print("\nWhat you may change (user: {}{}):\n", priv["root"].get<bool>() ? "root" : "not root",
             priv["cap_sys_admin"].get<bool>() ? ", CAP_SYS_ADMIN" : "");
  fmt::print("  GPU power limits, persistence mode, locked clocks: {}\n",
             priv["can_change_gpu_settings"].get<bool>()
                 ? "yes"
                 : amd ? "no (AMD SMI needs root: run with sudo, or through zeusd serve --gpu-backend amdsmi)"
                       : "no (NVML needs root or CAP_SYS_ADMIN: run with sudo, or in a container add the "
                         "capability: docker run --cap-add SYS_ADMIN)");
  // The reason is each package's own (permission, a missing file, garbage),
  // printed above with it.
  std::size_t unreadable = 0;
  for (const json& p : cpus["packages"]) unreadable += p["readable"].get<bool>() ? 0 : 1;
  std::string rapl = "yes";
  if (priv["can_read_rapl"].is_null()) {
    rapl = "n/a (no RAPL packages found)";
  } else if (unreadable > 0) {
    rapl = fmt::format("no for {} of {} package{} (the reason is under each above)", unreadable,
                       cpus["packages"].size(), cpus["packages"].size() == 1 ? "" : "s");
  }
  const json& zeusd = info["zeusd"];
  if (unreadable > 0 && zeusd.is_object() && zeusd.contains("cpu_energy_source") &&
      zeusd["cpu_energy_source"] == "zeusd") {
    rapl += " locally; through zeusd instead (below)";
  }
  fmt::print("  Read CPU/DRAM energy: {}\n", rapl);
  PrintZeusd(info["zeusd"]);
  for (const json& p : info["problems"]) fmt::print(stderr, "warning: {}\n", p.get<std::string>());
}

json CheckToJson(const monitor::EnergyCounterCheck& check) {
  json j;
  j["verdict"] = std::string(monitor::CounterVerdictName(check.verdict));
  const bool compared = check.verdict == monitor::CounterVerdict::kAgrees ||
                        check.verdict == monitor::CounterVerdict::kDisagrees;
  j["ratio"] = compared && check.ratio > 0 ? json(check.ratio) : json(nullptr);
  j["counter_energy_j"] = compared && check.duration_s > 0 ? json(check.counter_energy_mj / 1000.0) : json(nullptr);
  j["integrated_energy_j"] = compared && check.duration_s > 0 ? json(check.integrated_energy_mj / 1000.0) : json(nullptr);
  j["duration_s"] = check.duration_s > 0 ? json(check.duration_s) : json(nullptr);
  j["power_source"] = check.power_source.empty() ? json(nullptr) : json(check.power_source);
  j["detail"] = check.detail;
  return j;
}

// Trust, but check: each GPU's energy counter against its integrated power
// (zeus/monitor/counter_check.h), each GPU on a thread of its own (so that
// eight GPUs' calls do not make every poll late), bounded by the check itself.
void CheckCounters(const device::GpuSet& gpus, json& gpu_infos, std::vector<std::string>& problems) {
  std::vector<std::jthread> threads;  // joined before `gpus` goes
  const std::vector<monitor::EnergyCounterCheck> checks = monitor::CheckEnergyCountersOnGpuThreads(
      gpus, [&threads](std::size_t, std::function<void()> task) { threads.emplace_back(std::move(task)); },
      std::chrono::milliseconds(6250));
  for (std::size_t i = 0; i < checks.size(); ++i) {
    gpu_infos[i]["energy_counter_check"] = CheckToJson(checks[i]);
    if (auto warning = monitor::CounterCheckWarning(i, checks[i])) problems.push_back(std::move(*warning));
  }
}

int RunInfo(bool as_json, bool check_flag) {
  // --no-counter-check, or ZEUS_ENERGY_COUNTER_CHECK=0, skips the check.
  const Result<bool> check_variable = device::ChooseEnergyCounterCheck();
  if (!check_variable) {
    fmt::print(stderr, "error: {}\n", check_variable.error().message());
    return ExitCodeFor(check_variable.error().code());
  }
  const bool check_counters = check_flag && *check_variable;
  json info;
  info["version"] = std::string(Version());
  std::vector<std::string> problems;

  // A library named explicitly must load; the system driver may be absent.
  const device::GpuLibraryChoice library = device::ChooseNvmlLibrary();
  device::GpuOptions gpu_options;
  gpu_options.allow_mig = true;  // list MIG-mode GPUs rather than refuse them
  auto gpus = device::OpenGpus(gpu_options);
  json driver;
  info["gpus"] = json::array();
  if (!gpus) {
    const Error& e = gpus.error();
    if (!device::MayContinueWithoutGpus(e, library)) {
      fmt::print(stderr, "error: {}\n", e.message());
      return ExitCodeFor(e.code());
    }
    driver["available"] = false;
    driver["vendor"] = nullptr;
    driver["error"] = e.message();
    driver["version"] = nullptr;
    driver["nvml_library"] = nullptr;
    driver["amdsmi_library"] = nullptr;
  } else {
    const bool amd = (*gpus)->vendor() == device::GpuVendor::kAmd;
    driver["available"] = true;
    driver["vendor"] = std::string(device::GpuVendorName((*gpus)->vendor()));
    driver["error"] = nullptr;
    driver["version"] = (*gpus)->driver_version().empty() ? json(nullptr) : json((*gpus)->driver_version());
    driver["nvml_library"] = amd ? json(nullptr) : json(library.path);
    driver["amdsmi_library"] = amd ? json(device::ChooseAmdSmiLibrary().path) : json(nullptr);
    for (std::size_t i = 0; i < (*gpus)->size(); ++i) {
      info["gpus"].push_back(CollectGpu((*gpus)->gpu(i), i, problems));
      info["gpus"][i]["energy_counter_check"] = nullptr;
    }
    if (check_counters) CheckCounters(**gpus, info["gpus"], problems);
  }
  info["driver"] = driver;

  bool any_unreadable = false;
  info["cpus"] = CollectCpus(problems, any_unreadable);

  const device::Privileges privileges = device::CurrentPrivileges();
  info["privileges"] = {{"root", privileges.is_root},
                        {"cap_sys_admin", privileges.has_cap_sys_admin},
                        {"can_change_gpu_settings", privileges.can_change_gpu_settings()},
                        {"can_read_rapl", info["cpus"]["packages"].empty() ? json(nullptr) : json(!any_unreadable)}};
  info["zeusd"] = CollectZeusd(problems);
  info["problems"] = problems;

  if (as_json) {
    fmt::print("{}\n", info.dump(2));
  } else {
    PrintText(info);
  }
  return 0;
}

}  // namespace

void RegisterInfoCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("info", "List the GPUs and CPUs this machine can measure and control");
  auto as_json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *as_json, "Print one JSON object instead of text");
  auto no_check = std::make_shared<bool>(false);
  cmd->add_flag("--no-counter-check", *no_check,
                "Skip comparing each GPU's energy counter with its integrated power (saves about 0.4 s; as "
                "ZEUS_ENERGY_COUNTER_CHECK=0)");
  cmd->footer(
      "Shows the NVIDIA driver, each visible GPU (name, UUID, architecture, power limits, whether it has an\n"
      "energy counter), the RAPL CPU packages and whether DRAM is measured, and what the current user may change.\n"
      "Each energy counter is checked against the GPU's power integrated over the same 0.25 s: it agrees within\n"
      "1.25x, disagrees (a counter at a wrong rate or in wrong units, or one that never advances; a warning),\n"
      "or the check is inconclusive (an idle GPU drawing under 1 W, a swinging load seen only through an averaged\n"
      "power field, polls too late to time a step, a failed read). Only zeus info, zeusd and the exporter run\n"
      "the check; opening GPUs elsewhere (zeus monitor, ZeusMonitor) does not.\n"
      "With no NVIDIA driver it says so and still lists the CPUs (exit code 0).");
  cmd->callback([as_json, no_check, exit_code] { *exit_code = RunInfo(*as_json, !*no_check); });
}

}  // namespace zeus::cli
