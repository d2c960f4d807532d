// Copyright 2026 The Zeus C++ Authors.
//
// `zeusd serve`. The daemon loads NVML only from the path on its command line
// (or the driver's libnvidia-ml.so.1), never from its caller's environment,
// and ignores CUDA_VISIBLE_DEVICES: a root process must not load code, or
// pick devices, as its caller's environment says.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "apps/zeus/cli_flags.h"
#include "apps/zeusd/commands.h"
#include "apps/zeusd/emulator_state.h"
#include "http/http.h"
#include "zeus/base/error.h"
#include "zeus/device/discovery.h"
#include "zeus/device/environment.h"
#include "zeus/device/privileges.h"
#include "zeusd/auth.h"
#include "zeusd/command_override.h"
#include "zeusd/daemon.h"
#include "zeusd/startup.h"

namespace zeus::zeusd_cli {

int ExitWith(const Error& error) {
  std::fprintf(stderr, "error: %s\n", error.message().c_str());
  return ExitCodeFor(error.code());
}

namespace {

using cli::IntegerFlag;
using cli::OneOf;

struct ServeFlags {
  std::string mode = "uds";
  std::string socket_path = "/run/zeusd/zeusd.sock";
  std::string socket_permissions = "666";
  std::optional<unsigned> socket_uid;
  std::optional<unsigned> socket_gid;
  std::string tcp_bind_address = "127.0.0.1:4938";
  int num_workers = 0;
  double gpu_power_poll_hz = 20.0;
  double cpu_power_poll_hz = 10.0;
  int gpu_timeout_ms = 3000;
  std::string enable = "gpu-control,gpu-read,cpu-read";
  std::string gpu_command_overrides;
  std::string signing_key_path;
  std::string nvml_library;
  std::string amdsmi_library;
  std::string gpu_backend = "auto";
  bool no_counter_check = false;
  std::string powercap_root;
};

bool Has(const std::vector<zeusd::ApiGroup>& groups, zeusd::ApiGroup group) {
  for (zeusd::ApiGroup g : groups) {
    if (g == group) return true;
  }
  return false;
}

// "host:port" or "[v6]:port".
bool SplitHostPort(const std::string& text, std::string* host, std::uint16_t* port) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) return false;
  std::string h = text.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h.empty()) return false;
  unsigned long value = 0;
  for (char c : text.substr(colon + 1)) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned long>(c - '0');
    if (value > 65535) return false;
  }
  *host = h;
  *port = static_cast<std::uint16_t>(value);
  return true;
}

// What the flags say, checked before anything is opened.
struct ServePlan {
  std::vector<zeusd::ApiGroup> groups;
  std::string host;  // tcp mode
  std::uint16_t port = 0;
};

// Usage errors (kInvalidArgument, exit 2) name the flag.
Result<ServePlan> CheckFlags(const ServeFlags& flags) {
  ServePlan plan;
  auto groups = zeusd::ParseApiGroups(flags.enable);
  if (!groups) return Fail(ErrorCode::kInvalidArgument, fmt::format("--enable {}", groups.error().message()));
  plan.groups = std::move(*groups);
  if (!flags.signing_key_path.empty() && flags.signing_key_path.find('\0') != std::string::npos) {
    return Fail(ErrorCode::kInvalidArgument, "--signing-key-path is not a path");
  }
  if (flags.mode == "tcp" && !SplitHostPort(flags.tcp_bind_address, &plan.host, &plan.port)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--tcp-bind-address must be HOST:PORT such as 127.0.0.1:4938 (got '{}')",
                            flags.tcp_bind_address));
  }
  if (auto mode = zeusd::ParseOctalMode(flags.socket_permissions); !mode) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("--socket-permissions {}", mode.error().message()));
  }
  return plan;
}

// The --gpu-command-overrides table; null without the flag.
Result<std::unique_ptr<zeusd::GpuCommandOverrides>> LoadOverrides(const ServeFlags& flags) {
  if (flags.gpu_command_overrides.empty()) return std::unique_ptr<zeusd::GpuCommandOverrides>();
  auto loaded = zeusd::GpuCommandOverrides::Load(flags.gpu_command_overrides, ::geteuid());
  if (!loaded) return Fail(loaded.error());
  return std::make_unique<zeusd::GpuCommandOverrides>(std::move(*loaded));
}

// The writes through `overrides`, and a write deadline that covers the
// longest override's commands, each up to its own timeout.
void UseOverrides(const zeusd::GpuCommandOverrides* overrides, zeusd::DaemonOptions& options) {
  for (zeusd::GpuOp op : zeusd::kAllGpuOps) {
    if (const zeusd::OverrideSpec* spec = overrides->Find(op)) {
      const auto commands_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
          spec->timeout * static_cast<std::int64_t>(spec->commands.size()));
      options.gpu_write_timeout = std::max(options.gpu_write_timeout, commands_ms + options.gpu_call_timeout);
    }
  }
  options.gpu_op_runner = [overrides](device::Gpu& gpu, std::size_t gpu_id, zeusd::GpuOp op,
                                      const zeusd::GpuOpArgs& args) { return overrides->Run(gpu, gpu_id, op, args); };
}

// `overrides` (may be null) must outlive the daemon.
Result<zeusd::DaemonOptions> MakeDaemonOptions(const ServeFlags& flags, const ServePlan& plan,
                                               const zeusd::GpuCommandOverrides* overrides) {
  zeusd::DaemonOptions options;
  options.enabled_groups = plan.groups;
  options.gpu_power_poll_hz = flags.gpu_power_poll_hz;
  options.cpu_power_poll_hz = flags.cpu_power_poll_hz;
  if (!flags.signing_key_path.empty()) {
    auto key = zeusd::ReadSigningKey(flags.signing_key_path);
    if (!key) return Fail(key.error());
    options.signing_key = std::move(*key);
  } else if (flags.mode == "tcp") {
    std::fprintf(stderr,
                 "zeusd: warning: serving TCP on %s without --signing-key-path: anyone who can reach it can change "
                 "GPU settings\n",
                 flags.tcp_bind_address.c_str());
  }
  options.gpu_call_timeout = std::chrono::milliseconds(flags.gpu_timeout_ms);
  options.gpu_write_timeout = options.gpu_call_timeout;
  // Above the check's own bound (EnergyCounterCheckOptions::wall_deadline,
  // 3 s): only a GPU whose driver call hangs reaches it.
  if (!flags.no_counter_check) options.energy_counter_check_deadline = std::chrono::milliseconds(6250);
  if (overrides != nullptr) UseOverrides(overrides, options);
  return options;
}

// /metrics exports the GPUs, and the CPUs only when cpu-read is enabled too
// (RAPL counters are root-only on the host; exposing them is cpu-read's call).
// Null when no group needs GPUs, or when no driver of the chosen backend is present.
Result<std::unique_ptr<device::GpuSet>> OpenDaemonGpus(const ServeFlags& flags,
                                                       const std::vector<zeusd::ApiGroup>& groups) {
  if (!Has(groups, zeusd::ApiGroup::kGpuControl) && !Has(groups, zeusd::ApiGroup::kGpuRead) &&
      !Has(groups, zeusd::ApiGroup::kMetrics)) {
    return std::unique_ptr<device::GpuSet>();
  }
  device::GpuOptions gpu_options;
  const device::GpuLibraryChoice library = device::ChooseNvmlLibrary(flags.nvml_library);
  gpu_options.nvml_library = library.path;
  if (!flags.amdsmi_library.empty()) gpu_options.amdsmi_library = flags.amdsmi_library;
  gpu_options.cuda_visible_devices = std::nullopt;  // unset above: every GPU
  // The counter check runs in the daemon, on each GPU's own reader thread
  // (DaemonOptions::energy_counter_check_deadline), so that one hung GPU
  // cannot keep the daemon from starting. OpenGpus checks nothing.
  // A named library must load; an absent system one means no GPUs of it.
  std::string absent;  // why each vendor has no GPUs, for one line at the end
  auto open = [&](device::GpuVendor vendor, bool named) -> Result<std::unique_ptr<device::GpuSet>> {
    gpu_options.vendor = vendor;
    auto opened = device::OpenGpus(gpu_options);
    if (opened || named || opened.error().code() != ErrorCode::kUnavailable) return opened;
    absent += absent.empty() ? opened.error().message() : "; " + opened.error().message();
    return std::unique_ptr<device::GpuSet>();
  };
  auto report_absent = [&](Result<std::unique_ptr<device::GpuSet>> chosen) {
    if (chosen && *chosen == nullptr) std::fprintf(stderr, "zeusd: no GPUs: %s\n", absent.c_str());
    return chosen;
  };
  const bool nvml_named = library.named_explicitly;
  const bool amdsmi_named = !flags.amdsmi_library.empty();
  if (flags.gpu_backend == "nvml") return report_absent(open(device::GpuVendor::kNvidia, nvml_named));
  if (flags.gpu_backend == "amdsmi") return report_absent(open(device::GpuVendor::kAmd, amdsmi_named));
  // auto: probe both, as Zeus's daemon does; GPUs of both kinds is an error.
  auto nvidia = open(device::GpuVendor::kNvidia, nvml_named);
  if (!nvidia) return nvidia;
  auto amd = open(device::GpuVendor::kAmd, amdsmi_named);
  if (!amd) return amd;
  const bool has_nvidia = *nvidia != nullptr && !(*nvidia)->empty();
  const bool has_amd = *amd != nullptr && !(*amd)->empty();
  if (has_nvidia && has_amd) {
    return Fail(ErrorCode::kInvalidArgument,
                "both NVIDIA and AMD GPUs were found; one zeusd serves one vendor: choose with --gpu-backend nvml "
                "or --gpu-backend amdsmi (and run a second zeusd for the other)");
  }
  if (has_amd) return amd;
  if (*nvidia != nullptr) return nvidia;
  return report_absent(std::move(amd));
}

// Null unless cpu-read is enabled.
Result<std::unique_ptr<device::CpuSet>> OpenDaemonCpus(const ServeFlags& flags,
                                                       const std::vector<zeusd::ApiGroup>& groups) {
  if (!Has(groups, zeusd::ApiGroup::kCpuRead)) return std::unique_ptr<device::CpuSet>();
  device::CpuOptions cpu_options;
  if (!flags.powercap_root.empty()) {
    cpu_options.powercap_root = flags.powercap_root;
  } else {
    std::error_code ec;
    cpu_options.powercap_root = std::filesystem::exists("/zeus_sys/class/powercap", ec) ? "/zeus_sys/class/powercap"
                                                                                         : "/sys/class/powercap";
  }
  return device::OpenCpus(cpu_options);
}

// Signals are taken synchronously by the main thread; blocked before any
// other thread starts so that none of those receives them.
sigset_t BlockShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

struct Listener {
  std::unique_ptr<http::HttpServer> server;
  std::string where;  // the socket path or HOST:PORT, the port picked when 0
};

// Serves `daemon` on the socket (created aside, then published with its
// owner and mode) or on TCP.
Result<Listener> Listen(const ServeFlags& flags, const ServePlan& plan, zeusd::Daemon& daemon) {
  http::HttpServerOptions server_options;
  server_options.threads = flags.num_workers > 0 ? flags.num_workers
                                                 : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  server_options.max_body_bytes = 64 << 10;
  server_options.shutdown_grace = std::chrono::milliseconds(2000);
  Listener listener;
  std::optional<zeusd::StagedSocket> staged;
  if (flags.mode == "uds") {
    if (Status ready = zeusd::PrepareSocketPath(flags.socket_path); !ready) return Fail(ready.error());
    auto created = zeusd::StagedSocket::Create(flags.socket_path);
    if (!created) return Fail(created.error());
    staged.emplace(std::move(*created));
    server_options.unix_socket_path = staged->bind_path();
    listener.where = flags.socket_path;
  } else {
    server_options.host = plan.host;
    server_options.port = plan.port;
    listener.where = flags.tcp_bind_address;
  }
  auto server = http::HttpServer::Start(server_options, [&daemon](const http::HttpRequest& r) { return daemon.Handle(r); });
  if (!server) return Fail(server.error());
  listener.server = std::move(*server);
  // Port 0 picks a free port: say which (tests and scripts read it from the log line).
  if (flags.mode != "uds" && plan.port == 0) {
    const std::uint16_t port = listener.server->port();
    listener.where = plan.host.find(':') == std::string::npos ? fmt::format("{}:{}", plan.host, port)
                                                              : fmt::format("[{}]:{}", plan.host, port);
  }
  if (staged) {
    if (Status published = staged->Publish(flags.socket_permissions, flags.socket_uid, flags.socket_gid);
        !published) {
      listener.server->Shutdown();
      return Fail(published.error());
    }
  }
  return listener;
}

void AnnounceListening(const ServeFlags& flags, const ServePlan& plan, const Listener& listener,
                       const device::GpuSet* gpus, const device::CpuSet* cpus) {
  std::string enabled;
  for (zeusd::ApiGroup group : plan.groups) enabled += fmt::format("{}{}", enabled.empty() ? "" : ",", zeusd::ApiGroupName(group));
  std::fprintf(stderr, "zeusd: listening on %s (%zu GPUs, %zu CPUs, groups: %s, auth: %s)\n", listener.where.c_str(),
               gpus ? gpus->size() : 0, cpus ? cpus->size() : 0, enabled.empty() ? "none" : enabled.c_str(),
               !flags.signing_key_path.empty() ? "on" : "off");
}

// Serves until SIGINT or SIGTERM, then stops the server and the device
// threads. A driver call that still hangs leaves by _exit: tearing the
// devices down under it could crash.
int ServeUntilSignalled(const sigset_t& signals, const ServeFlags& flags, Listener& listener,
                        std::unique_ptr<zeusd::Daemon> daemon) {
  int received = 0;
  sigwait(&signals, &received);
  std::fprintf(stderr, "zeusd: %s, shutting down\n", received == SIGINT ? "SIGINT" : "SIGTERM");
  listener.server->Shutdown();
  listener.server.reset();
  if (flags.mode == "uds") ::unlink(flags.socket_path.c_str());
  if (!daemon->StopDeviceThreads(std::chrono::milliseconds(2000))) {
    std::fprintf(stderr, "zeusd: exiting with a driver call still hung\n");
    std::fflush(stderr);
    std::_Exit(0);
  }
  daemon.reset();
  return 0;
}

int RunServe(const ServeFlags& flags) {
  Result<ServePlan> plan = CheckFlags(flags);
  if (!plan) return ExitWith(plan.error());

  // The caller's environment chooses nothing for a root daemon.
  device::ClearDeviceEnvironment();
  if (flags.nvml_library.empty() && flags.amdsmi_library.empty()) ::unsetenv("ZEUS_EMULATOR_CONFIG");
  if (flags.amdsmi_library.empty()) ::unsetenv("ZEUS_AMDSMI_EMULATOR_CONFIG");

  auto overrides = LoadOverrides(flags);
  if (!overrides) return ExitWith(overrides.error());
  const device::Privileges privileges = device::CurrentPrivileges();
  if (Status ok = zeusd::CheckPrivileges(plan->groups, privileges, *overrides != nullptr); !ok) {
    return ExitWith(ok.error());
  }
  auto options = MakeDaemonOptions(flags, *plan, overrides->get());
  if (!options) return ExitWith(options.error());
  auto gpus = OpenDaemonGpus(flags, plan->groups);
  if (!gpus) return ExitWith(gpus.error());
  if (*gpus != nullptr) {
    const std::string library = (*gpus)->vendor() == device::GpuVendor::kAmd
                                    ? flags.amdsmi_library
                                    : device::ChooseNvmlLibrary(flags.nvml_library).path;
    if (auto warning = PrivateEmulatorStateWarning(**gpus, library)) std::fprintf(stderr, "%s\n", warning->c_str());
  }
  auto cpus = OpenDaemonCpus(flags, plan->groups);
  if (!cpus) return ExitWith(cpus.error());

  const sigset_t signals = BlockShutdownSignals();
  auto daemon = std::make_unique<zeusd::Daemon>(std::move(*options), gpus->get(), cpus->get());
  Result<Listener> listener = Listen(flags, *plan, *daemon);
  if (!listener) return ExitWith(listener.error());
  AnnounceListening(flags, *plan, *listener, gpus->get(), cpus->get());
  return ServeUntilSignalled(signals, flags, *listener, std::move(daemon));
}

}  // namespace

void RegisterServeCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand("serve", "Run the daemon");
  cmd->add_option("--mode", flags->mode, "uds (a Unix socket, default) or tcp")->check(OneOf({"uds", "tcp"}));
  cmd->add_option("--socket-path", flags->socket_path, "The Unix socket (default /run/zeusd/zeusd.sock)");
  cmd->add_option("--socket-permissions", flags->socket_permissions, "The socket's mode in octal (default 666)");
  cmd->add_option("--socket-uid", flags->socket_uid, "The socket's owner (default: unchanged)")
      ->transform(IntegerFlag<unsigned>());
  cmd->add_option("--socket-gid", flags->socket_gid, "The socket's group (default: unchanged)")
      ->transform(IntegerFlag<unsigned>());
  cmd->add_option("--tcp-bind-address", flags->tcp_bind_address, "HOST:PORT in tcp mode (default 127.0.0.1:4938)");
  cmd->add_option("--num-workers", flags->num_workers, "HTTP worker threads (default: one per logical CPU)")
      ->transform(IntegerFlag<int>(1, 1024));
  cmd->add_option("--gpu-power-poll-hz", flags->gpu_power_poll_hz, "GPU power polling rate for streams (default 20)")
      ->check(cli::NumberRange(0.01, 1000));
  cmd->add_option("--cpu-power-poll-hz", flags->cpu_power_poll_hz, "CPU power polling rate for streams (default 10)")
      ->check(cli::NumberRange(0.01, 1000));
  cmd->add_option("--gpu-timeout-ms", flags->gpu_timeout_ms,
                  "How long a request waits for one GPU's driver call before answering 503 (default 3000); a GPU "
                  "still inside a call past it is answered 503 at once")
      ->transform(IntegerFlag<int>(10, 600000));
  cmd->add_option("--enable", flags->enable,
                  "Comma-separated API groups: gpu-control, gpu-read, cpu-read, metrics (default: the first "
                  "three). metrics serves GET /metrics for Prometheus (the GPUs, and the CPUs' RAPL energy with "
                  "cpu-read) with no token even when --signing-key-path is set, like /discover and /time");
  cmd->add_option("--gpu-command-overrides", flags->gpu_command_overrides,
                  "TOML file of commands that replace GPU writes (must not be world-writable)");
  cmd->add_option("--signing-key-path", flags->signing_key_path,
                  "Require tokens (JWT HS256) signed with the key in this file");
  cmd->add_option("--nvml-library", flags->nvml_library,
                  "NVML library to load (default: the driver's libnvidia-ml.so.1; ZEUS_NVML_LIBRARY is ignored, "
                  "ZEUS_EMULATOR_CONFIG honoured only with this flag)");
  cmd->add_option("--amdsmi-library", flags->amdsmi_library,
                  "AMD SMI library to load (default: ROCm's libamd_smi.so; ZEUS_AMDSMI_LIBRARY is ignored, the "
                  "emulator's configuration honoured only with this flag)");
  cmd->add_flag("--no-counter-check", flags->no_counter_check,
               "Trust the GPUs' energy counters unchecked (default: at start, each counter is compared with its "
               "GPU's power, on that GPU's own thread, and one that disagrees by more than 1.25x is not served)");
  cmd->add_option("--gpu-backend", flags->gpu_backend,
                  "Whose GPUs to serve: nvml (NVIDIA), amdsmi (AMD), or auto (probe both; an error if both have "
                  "GPUs; neither: no GPUs)")
      ->check(CLI::IsMember({"auto", "nvml", "amdsmi"}));
  cmd->add_option("--powercap-root", flags->powercap_root,
                  "powercap root for RAPL (default /zeus_sys/class/powercap if present, else /sys/class/powercap)");
  cmd->callback([flags, exit_code] { *exit_code = RunServe(*flags); });
}

}  // namespace zeus::zeusd_cli
