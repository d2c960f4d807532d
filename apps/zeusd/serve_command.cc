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
#include "http/http.h"
#include "zeus/base/error.h"
#include "zeus/device/discovery.h"
#include "zeus/device/privileges.h"
#include "zeusd/auth.h"
#include "zeusd/command_override.h"
#include "zeusd/daemon.h"
#include "zeusd/startup.h"

namespace zeus::zeusd_cli {
namespace {

using cli::IntegerFlag;
using cli::OneOf;

constexpr char kDefaultNvml[] = "libnvidia-ml.so.1";

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
  std::string powercap_root;
};

int ExitWith(const Error& error) {
  std::fprintf(stderr, "error: %s\n", error.message().c_str());
  return ExitCodeFor(error.code());
}

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

int RunServe(const ServeFlags& flags) {
  auto groups = zeusd::ParseApiGroups(flags.enable);
  if (!groups) return cli::UsageError(fmt::format("--enable {}", groups.error().message()));
  if (!flags.signing_key_path.empty() && flags.signing_key_path.find('\0') != std::string::npos) {
    return cli::UsageError("--signing-key-path is not a path");
  }
  std::string host;
  std::uint16_t port = 0;
  if (flags.mode == "tcp" && !SplitHostPort(flags.tcp_bind_address, &host, &port)) {
    return cli::UsageError(
        fmt::format("--tcp-bind-address must be HOST:PORT such as 127.0.0.1:4938 (got '{}')", flags.tcp_bind_address));
  }
  if (auto mode = zeusd::ParseOctalMode(flags.socket_permissions); !mode) {
    return cli::UsageError(fmt::format("--socket-permissions {}", mode.error().message()));
  }

  // The caller's environment chooses nothing for a root daemon.
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ::unsetenv("ZEUS_NVML_LIBRARY");
  ::unsetenv("ZEUS_POWERCAP_ROOT");
  if (flags.nvml_library.empty()) ::unsetenv("ZEUS_EMULATOR_CONFIG");

  std::unique_ptr<zeusd::GpuCommandOverrides> overrides;
  if (!flags.gpu_command_overrides.empty()) {
    auto loaded = zeusd::GpuCommandOverrides::Load(flags.gpu_command_overrides, ::geteuid());
    if (!loaded) return ExitWith(loaded.error());
    overrides = std::make_unique<zeusd::GpuCommandOverrides>(std::move(*loaded));
  }
  const device::Privileges privileges = device::CurrentPrivileges();
  if (Status ok = zeusd::CheckPrivileges(*groups, privileges, overrides != nullptr); !ok) {
    return ExitWith(ok.error());
  }

  zeusd::DaemonOptions options;
  options.enabled_groups = *groups;
  options.gpu_power_poll_hz = flags.gpu_power_poll_hz;
  options.cpu_power_poll_hz = flags.cpu_power_poll_hz;
  if (!flags.signing_key_path.empty()) {
    auto key = zeusd::ReadSigningKey(flags.signing_key_path);
    if (!key) return ExitWith(key.error());
    options.signing_key = std::move(*key);
  } else if (flags.mode == "tcp") {
    std::fprintf(stderr,
                 "zeusd: warning: serving TCP on %s without --signing-key-path: anyone who can reach it can change "
                 "GPU settings\n",
                 flags.tcp_bind_address.c_str());
  }
  options.gpu_call_timeout = std::chrono::milliseconds(flags.gpu_timeout_ms);
  options.gpu_write_timeout = options.gpu_call_timeout;
  if (overrides) {
    // A write waits for its override's commands, each up to its own timeout.
    for (zeusd::GpuOp op : zeusd::kAllGpuOps) {
      if (const zeusd::OverrideSpec* spec = overrides->Find(op)) {
        const auto commands_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
            spec->timeout * static_cast<std::int64_t>(spec->commands.size()));
        options.gpu_write_timeout = std::max(options.gpu_write_timeout, commands_ms + options.gpu_call_timeout);
      }
    }
    const zeusd::GpuCommandOverrides* table = overrides.get();
    options.gpu_op_runner = [table](device::Gpu& gpu, std::size_t gpu_id, zeusd::GpuOp op,
                                    const zeusd::GpuOpArgs& args) { return table->Run(gpu, gpu_id, op, args); };
  }

  std::unique_ptr<device::GpuSet> gpus;
  // /metrics exports the GPUs, and the CPUs only when cpu-read is enabled too
  // (RAPL counters are root-only on the host; exposing them is cpu-read's call).
  if (Has(*groups, zeusd::ApiGroup::kGpuControl) || Has(*groups, zeusd::ApiGroup::kGpuRead) ||
      Has(*groups, zeusd::ApiGroup::kMetrics)) {
    device::GpuOptions gpu_options;
    gpu_options.nvml_library = flags.nvml_library.empty() ? std::string(kDefaultNvml) : flags.nvml_library;
    gpu_options.cuda_visible_devices = std::nullopt;  // unset above: every GPU
    auto opened = device::OpenGpus(gpu_options);
    if (opened) {
      gpus = std::move(*opened);
    } else if (flags.nvml_library.empty() && opened.error().code() == ErrorCode::kUnavailable) {
      std::fprintf(stderr, "zeusd: no GPUs: %s\n", opened.error().message().c_str());
    } else {
      return ExitWith(opened.error());
    }
  }
  std::unique_ptr<device::CpuSet> cpus;
  if (Has(*groups, zeusd::ApiGroup::kCpuRead)) {
    device::CpuOptions cpu_options;
    if (!flags.powercap_root.empty()) {
      cpu_options.powercap_root = flags.powercap_root;
    } else {
      std::error_code ec;
      cpu_options.powercap_root = std::filesystem::exists("/zeus_sys/class/powercap", ec) ? "/zeus_sys/class/powercap"
                                                                                           : "/sys/class/powercap";
    }
    auto opened = device::OpenCpus(cpu_options);
    if (!opened) return ExitWith(opened.error());
    cpus = std::move(*opened);
  }

  // Signals are taken synchronously by this thread; block them before any
  // other thread starts so that none of those receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto daemon = std::make_unique<zeusd::Daemon>(std::move(options), gpus.get(), cpus.get());
  http::HttpServerOptions server_options;
  server_options.threads = flags.num_workers > 0
                               ? flags.num_workers
                               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  server_options.max_body_bytes = 64 << 10;
  server_options.shutdown_grace = std::chrono::milliseconds(2000);
  std::string where;
  std::optional<zeusd::StagedSocket> staged;
  if (flags.mode == "uds") {
    if (Status ready = zeusd::PrepareSocketPath(flags.socket_path); !ready) return ExitWith(ready.error());
    auto created = zeusd::StagedSocket::Create(flags.socket_path);
    if (!created) return ExitWith(created.error());
    staged.emplace(std::move(*created));
    server_options.unix_socket_path = staged->bind_path();
    where = flags.socket_path;
  } else {
    server_options.host = host;
    server_options.port = port;
    where = flags.tcp_bind_address;
  }
  zeusd::Daemon* handler = daemon.get();
  auto server = http::HttpServer::Start(server_options, [handler](const http::HttpRequest& r) { return handler->Handle(r); });
  if (!server) return ExitWith(server.error());
  // Port 0 picks a free port: say which (tests and scripts read it from this line).
  if (flags.mode != "uds" && port == 0) {
    where = host.find(':') == std::string::npos ? fmt::format("{}:{}", host, (*server)->port())
                                                : fmt::format("[{}]:{}", host, (*server)->port());
  }
  if (flags.mode == "uds") {
    if (Status published = staged->Publish(flags.socket_permissions, flags.socket_uid, flags.socket_gid);
        !published) {
      (*server)->Shutdown();
      return ExitWith(published.error());
    }
    staged.reset();
  }
  std::string enabled;
  for (zeusd::ApiGroup group : *groups) enabled += fmt::format("{}{}", enabled.empty() ? "" : ",", zeusd::ApiGroupName(group));
  std::fprintf(stderr, "zeusd: listening on %s (%zu GPUs, %zu CPUs, groups: %s, auth: %s)\n", where.c_str(),
               gpus ? gpus->size() : 0, cpus ? cpus->size() : 0, enabled.empty() ? "none" : enabled.c_str(),
               daemon != nullptr && !flags.signing_key_path.empty() ? "on" : "off");

  int received = 0;
  sigwait(&signals, &received);
  std::fprintf(stderr, "zeusd: %s, shutting down\n", received == SIGINT ? "SIGINT" : "SIGTERM");
  (*server)->Shutdown();
  server->reset();
  if (flags.mode == "uds") ::unlink(flags.socket_path.c_str());
  if (!daemon->StopDeviceThreads(std::chrono::milliseconds(2000))) {
    // A driver call still hangs: tearing the devices down under it could
    // crash, so leave without destructors.
    std::fprintf(stderr, "zeusd: exiting with a driver call still hung\n");
    std::fflush(stderr);
    std::_Exit(0);
  }
  daemon.reset();
  return 0;
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
  cmd->add_option("--powercap-root", flags->powercap_root,
                  "powercap root for RAPL (default /zeus_sys/class/powercap if present, else /sys/class/powercap)");
  cmd->callback([flags, exit_code] { *exit_code = RunServe(*flags); });
}

}  // namespace zeus::zeusd_cli
