// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor`: its flags, the devices it opens, and the run: checks,
// devices, sampling (monitor_sampling), the command and its signals
// (monitor_child), the report (monitor_report). `zeus monitor power`.

#include "apps/zeus/monitor_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/zeus/cli_flags.h"
#include "apps/zeus/monitor_child.h"
#include "apps/zeus/monitor_flags.h"
#include "apps/zeus/monitor_report.h"
#include "apps/zeus/monitor_sampling.h"
#include "apps/zeus/monitor_zeusd.h"
#include "zeus/device/discovery.h"
#include "zeus/device/environment.h"
#include "zeus/zeusd_client/cpu.h"

namespace zeus::cli {
namespace {

using std::chrono::nanoseconds;

constexpr long long kMaxIntervalMs = 60'000;
constexpr double kMaxKillAfterS = 86'400;
constexpr long long kMaxCount = 1'000'000'000;

// Opens what the flags ask for. No NVIDIA driver is not an error (the
// command is still timed); an explicitly named library that fails is. A RAPL
// package that cannot be read is kept: the window reports its error and the
// other packages are measured. With --zeusd, local GPUs are opened only when
// --gpus names them.
// --cpus: local RAPL, or zeusd's when local RAPL is unreadable and ZEUSD_*
// is set.
Status OpenCpuDevices(Devices* d) {
  auto cpus = zeusd::OpenCpusLocalOrZeusd();
  if (!cpus) return Fail(cpus.error());
  d->cpus = std::move(cpus->cpus);
  if (cpus->zeusd_endpoint) d->notes.push_back(*cpus->note);
  if (d->cpus->empty()) d->notes.push_back("--cpus: no RAPL packages found; CPU energy is not measured");
  for (std::size_t i = 0; i < d->cpus->size(); ++i) d->cpu_indices.push_back(i);
  return OkStatus();
}

Result<Devices> OpenDevices(const MonitorFlags& flags) {
  Devices d;
  if (!flags.zeusd_urls.empty() && !flags.gpus_given) {
    d.gpus = std::make_unique<device::GpuSet>("", std::vector<std::unique_ptr<device::Gpu>>{});
    if (flags.cpus) {
      if (Status opened = OpenCpuDevices(&d); !opened) return Fail(opened.error());
    }
    return d;
  }
  const device::GpuLibraryChoice library = device::ChooseNvmlLibrary();
  auto gpus = device::OpenGpus();
  if (!gpus) {
    if (!device::MayContinueWithoutGpus(gpus.error(), library) || flags.gpus_given) {
      return Fail(gpus.error());
    }
    d.notes.push_back(gpus.error().message());
    d.gpus = std::make_unique<device::GpuSet>("", std::vector<std::unique_ptr<device::Gpu>>{});
  } else {
    d.gpus = std::move(*gpus);
  }
  if (flags.gpus_given) {
    for (std::size_t i : flags.gpus) {
      if (i >= d.gpus->size()) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("--gpus: GPU {} does not exist; {} GPU{} visible (see `zeus info`)", i,
                                d.gpus->size(), d.gpus->size() == 1 ? " is" : "s are"));
      }
      if (std::count(flags.gpus.begin(), flags.gpus.end(), i) > 1) {
        return Fail(ErrorCode::kInvalidArgument, fmt::format("--gpus: GPU {} is listed twice", i));
      }
    }
    d.gpu_indices = flags.gpus;
  } else {
    for (std::size_t i = 0; i < d.gpus->size(); ++i) d.gpu_indices.push_back(i);
  }
  if (flags.cpus) {
    if (Status opened = OpenCpuDevices(&d); !opened) return Fail(opened.error());
  }
  return d;
}

// `zeus monitor -- CMD`: the checks, the devices, sampling, the command
// inside the window (unless a signal came first), then the report.
int RunMonitor(MonitorFlags& flags, const MonitorHooks& hooks) {
  // First, before anything slow: a signal from now on is held, never lost.
  SignalRelay& relay = SignalRelay::Install();
  if (Status usage = CheckMonitorUsage(flags); !usage) return Failure(usage.error());
  auto devices = OpenDevices(flags);
  if (!devices) return Failure(devices.error());
  for (const std::string& note : devices->notes) fmt::print(stderr, "zeus monitor: {}\n", note);
  if ((!flags.timeline.empty() || !flags.plot.empty()) && devices->gpu_indices.empty()) {
    return Failure(Error(ErrorCode::kInvalidArgument,
                         fmt::format("{}: no GPUs to sample; drop the flag or make a GPU visible{}",
                                     flags.timeline.empty() ? "--plot" : "--timeline",
                                     flags.zeusd_urls.empty() ? "" : " (with --zeusd, local GPUs only with --gpus)")));
  }
  auto sampling = CommandMeasurement::Start(flags, *devices);
  if (!sampling) return Failure(sampling.error());
  if (hooks.before_command) hooks.before_command();
  if (std::optional<int> early = relay.TakePending()) return ReportNotStarted(flags, *early);
  auto run = (*sampling)->Run(relay, flags);
  if (!run) return Failure(run.error());
  return ReportRun(flags, *devices, **sampling, *run);
}

int RunLivePower(MonitorFlags& flags) {
  SignalRelay& relay = SignalRelay::Install();
  ParseGpuList(flags);  // the ranges were checked while parsing
  auto devices = OpenDevices(flags);
  if (!devices) {
    fmt::print(stderr, "error: {}\n", devices.error().message());
    return ExitCodeFor(devices.error().code());
  }
  if (devices->gpu_indices.empty()) {
    fmt::print(stderr, "error: no GPUs to watch{}\n",
               devices->notes.empty() ? "" : ": " + devices->notes.front());
    return ExitCodeFor(ErrorCode::kUnavailable);
  }
  if (relay.TakePending()) return 0;
  std::string header = fmt::format("{:>9}", "time_s");
  for (std::size_t i : devices->gpu_indices) header += fmt::format(" {:>11}", fmt::format("gpu{}_w", i));
  fmt::print("{}\n", header);
  std::fflush(stdout);
  const nanoseconds start = SteadyClock().Now();
  for (long long line = 0; flags.count == 0 || line < flags.count; ++line) {
    std::string row = fmt::format("{:>9.2f}", ToSeconds(SteadyClock().Now() - start));
    for (std::size_t i : devices->gpu_indices) {
      device::Gpu& gpu = devices->gpus->gpu(i);
      auto p = gpu.InstantPowerMw();
      if (!p) p = gpu.PowerUsageMw();
      row += p ? fmt::format(" {:>11.1f}", *p / 1000.0) : fmt::format(" {:>11}", "error");
    }
    fmt::print("{}\n", row);
    std::fflush(stdout);
    if (flags.count != 0 && line + 1 >= flags.count) break;
    if (relay.WaitFor(std::chrono::milliseconds(flags.live_interval_ms))) break;
  }
  return 0;
}

}  // namespace

void RegisterMonitorCommand(CLI::App& app, int* exit_code, MonitorHooks hooks) {
  auto flags = std::make_shared<MonitorFlags>();
  auto* cmd = app.add_subcommand("monitor", "Measure the time and energy of a command (zeus monitor -- CMD ARGS...)");
  // List flags take one word per occurrence (split at commas here), so a
  // following `--` is never taken as the end of their list: everything after
  // `--` belongs to the command.
  cmd->add_option("--gpus", flags->gpus_text, "GPUs to measure, as comma-separated indices (default: all visible)")
      ->transform(GpuListFlag())
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--cpus", flags->cpus, "Also measure CPU package and DRAM energy (RAPL)");
  cmd->add_option("--interval-ms", flags->interval_ms,
                  "Power sampling period in ms, 1 to 60000 (default 100 = 10 Hz; 1 = 1 kHz)")
      ->transform(IntegerFlag<long long>(1, kMaxIntervalMs));
  cmd->add_option("--kill-after", flags->kill_after_s,
                  "Seconds the command has to exit after a signal is relayed to it before it gets SIGKILL, "
                  "0 to 86400 = one day (default 10)")
      ->check(NumberRange(0, kMaxKillAfterS));
  cmd->add_flag("--json", flags->json, "Print the report as one JSON object");
  cmd->add_option("--timeline", flags->timeline, "Write the power timeline per GPU (CSV, or JSON for *.json)");
  cmd->add_option("--plot", flags->plot, "Write an SVG plot of power over time per GPU");
  cmd->add_option("-o,--output", flags->output, "Write the report to this file instead of stdout");
  cmd->add_option("--pushgateway", flags->pushgateway,
                  "Push the command's energy to this Prometheus Pushgateway (http://HOST:PORT) as Zeus's "
                  "EnergyHistogram does (window=\"command\"); needs --job");
  cmd->add_option("--job", flags->job, "The Pushgateway job name for --pushgateway");
  cmd->add_option("--zeusd", flags->zeusd_urls,
                  "Also measure the devices of these zeusd daemons (other nodes), from their power streams: "
                  "unix:///path/to/zeusd.sock or http://HOST:PORT (PORT defaults to 4938), comma-separated. "
                  "Local GPUs are then measured only when --gpus names them; --cpus still adds local RAPL")
      ->transform(ZeusdUrlListFlag())
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--zeusd-token-file", flags->zeusd_token_file,
                  "A file whose first line is the token for the --zeusd daemons that require one (default: "
                  "$ZEUSD_TOKEN)");
  cmd->add_option("--carbon", flags->carbon,
                  "Also report carbon emissions (gCO2eq) at the yearly average intensity of this country or region: "
                  "ISO 3166 alpha-2 or alpha-3 code or name (FR, FRA, France, World, EU), from the table shipped "
                  "with zeus (Ember's data; $ZEUS_CARBON_DATA names another)");
  cmd->add_flag("--per-process", flags->per_process,
                "Also report, per GPU, the energy of the command's process tree next to other processes', idle and "
                "unattributed energy (a model: idle power, then the active rest by each process's share of the "
                "GPU's utilization; see the README)");
  cmd->add_option("--idle-power", flags->idle_power,
                  "With --per-process: a GPU model's idle power, MODEL=WATTS (the model as `zeus info` shows it; "
                  "repeatable). Default: the lowest power seen over the last ten minutes")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("command", flags->command, "The command to run, after --")->expected(-1);
  cmd->footer(
      "Runs the command and passes its exit code through (128+N if killed by signal N; 127/126 if it cannot be\n"
      "run). Output paths are checked before it starts; a report or file that cannot be written makes the exit\n"
      "code non-zero. Everything after -- belongs to the command.\n"
      "Signals: zeus holds SIGINT, SIGTERM, SIGHUP and SIGQUIT from before main. One that arrives before the\n"
      "command starts cancels it (exit 128+N, reported). The command runs in a process group of its own: a signal\n"
      "sent to zeus (kill -TERM <pid>) is forwarded to the whole group, and if any of it is still running\n"
      "--kill-after seconds after the first signal, the group gets SIGKILL. With zeus in the foreground of its\n"
      "terminal (stdin), the command gets the terminal: Ctrl-C, Ctrl-\\ and Ctrl-Z reach it directly, once. If zeus\n"
      "itself is killed, so is the command's group (PR_SET_PDEATHSIG and a watchdog process).\n"
      "Clock: time is wall time; with GPUs of the Zeus NVML emulator, GPU energy and power are over the\n"
      "emulator's time (its scenario's time_scale), reported as time_s next to wall_time_s.\n"
      "Reports wall time, and per device energy (J), average and peak power (W), and the total. GPUs with an\n"
      "energy counter are measured by it; others by integrating power. The peak is never below the average.\n"
      "zeusd: with --zeusd, each daemon streams every GPU and CPU package our token may read (gpu-read, cpu-read);\n"
      "their energy is integrated from the streamed power over the command's run on this machine's clock (each\n"
      "daemon's clock offset is measured first) and reported per daemon, then added to the total. A device is\n"
      "uncertain when part of the run had no reading (a lost or silent stream); its energy then counts only the\n"
      "covered part. A daemon that cannot be reached, or that streams nothing to us (read groups disabled, token\n"
      "missing, rejected or without the scopes), is an error before the command starts.\n"
      "Example: zeus monitor --json --plot power.svg -- python train.py --epochs 3\n"
      "Example: zeus monitor --zeusd http://node1:4938,http://node2:4938 -- mpirun -H node1,node2 train");
  cmd->callback([flags, exit_code, cmd, hooks = std::move(hooks)] {
    if (cmd->got_subcommand("power")) return;
    *exit_code = RunMonitor(*flags, hooks);
  });

  auto* power = cmd->add_subcommand("power", "Print live power per GPU until Ctrl-C");
  power->add_option("--interval-ms", flags->live_interval_ms, "Print period in ms, 1 to 60000 (default 500)")
      ->transform(IntegerFlag<long long>(1, kMaxIntervalMs));
  power->add_option("--gpus", flags->gpus_text, "GPUs to watch, as comma-separated indices (default: all)")
      ->transform(GpuListFlag())
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  power->add_option("--count", flags->count,
                    "Stop after this many lines, at most 1000000000; 0 (the default) prints until Ctrl-C or another "
                    "signal")
      ->transform(IntegerFlag<long long>(0, kMaxCount));
  power->callback([flags, exit_code] { *exit_code = RunLivePower(*flags); });
}

}  // namespace zeus::cli
