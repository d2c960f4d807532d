// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/monitor_command.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/zeus/svg_plot.h"
#include "zeus/device/discovery.h"
#include "zeus/monitor/monitor.h"
#include "zeus/monitor/power_monitor.h"

namespace zeus::cli {
namespace {

using json = nlohmann::json;
using std::chrono::nanoseconds;

struct MonitorFlags {
  std::vector<std::size_t> gpus;
  bool gpus_given = false;
  bool cpus = false;
  int interval_ms = 100;
  bool json = false;
  std::string timeline;
  std::string plot;
  std::string output;
  std::vector<std::string> command;
  // `monitor power`
  int live_interval_ms = 500;
  int count = 0;
};

// The child being measured, for the signal forwarder.
std::atomic<pid_t> g_child{0};
std::atomic<bool> g_stop{false};

void ForwardSignal(int sig) {
  const pid_t child = g_child.load();
  if (child > 0) ::kill(child, sig);
  g_stop.store(true);
}

void InstallForwarders() {
  struct sigaction sa {};
  sa.sa_handler = ForwardSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);
}

struct Devices {
  std::unique_ptr<device::GpuSet> gpus;
  std::unique_ptr<device::CpuSet> cpus;
  std::vector<std::size_t> gpu_indices;
  std::vector<std::size_t> cpu_indices;
  std::vector<std::string> notes;
};

// Opens what the flags ask for. No NVIDIA driver is not an error (the
// command is still timed); an explicitly named library that fails is.
Result<Devices> OpenDevices(const MonitorFlags& flags) {
  Devices d;
  const char* lib_env = std::getenv("ZEUS_NVML_LIBRARY");
  const bool explicit_library = lib_env != nullptr && *lib_env != '\0';
  auto gpus = device::OpenGpus();
  if (!gpus) {
    if (explicit_library || gpus.error().code() != ErrorCode::kUnavailable || flags.gpus_given) {
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
    auto cpus = device::OpenCpus();
    if (!cpus) return Fail(cpus.error());
    d.cpus = std::move(*cpus);
    if (d.cpus->empty()) d.notes.push_back("--cpus: no RAPL packages found; CPU energy is not measured");
    for (std::size_t i = 0; i < d.cpus->size(); ++i) {
      if (auto e = d.cpus->cpu(i).TotalEnergy(); !e) return Fail(e.error());
      d.cpu_indices.push_back(i);
    }
  }
  return d;
}

Result<int> RunChild(const std::vector<std::string>& command) {
  std::vector<std::string> args = command;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return Fail(ErrorFromErrno(errno, "fork"));
  if (pid == 0) {
    // Default dispositions in the child.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
    ::execvp(argv[0], argv.data());
    const int err = errno;
    fmt::print(stderr, "error: cannot run {}: {}\n", command[0], std::strerror(err));
    ::_exit(err == ENOENT ? 127 : 126);
  }
  g_child.store(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Fail(ErrorFromErrno(errno, "waitpid"));
  }
  g_child.store(0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

Status WritePlot(const std::string& path, const monitor::PowerMonitor& pm, const std::string& command,
                 double time_s) {
  LinePlot plot;
  plot.title = "GPU power during the command";
  plot.subtitle = fmt::format("{} ({:.2f} s, sampled every {} ms)", command, time_s,
                              std::chrono::duration_cast<std::chrono::milliseconds>(pm.interval()).count());
  plot.x_label = "time since start (s)";
  plot.y_label = "power (W)";
  for (std::size_t gpu : pm.gpu_indices()) {
    PlotSeries s;
    s.label = fmt::format("GPU {}", gpu);
    s.step = true;
    for (const monitor::PowerSample& sample : pm.Timeline(gpu)) {
      if (!sample.instant_mw) continue;
      s.points.emplace_back(std::chrono::duration<double>(sample.time - pm.start_time()).count(),
                            *sample.instant_mw / 1000.0);
    }
    plot.series.push_back(std::move(s));
  }
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Fail(ErrorFromErrno(errno, path).WithContext("--plot"));
  out << RenderSvg(plot);
  if (!out.flush()) return Fail(ErrorCode::kIoError, fmt::format("--plot {}: write failed", path));
  return OkStatus();
}

std::string JoinCommand(const std::vector<std::string>& command) {
  std::string out;
  for (const std::string& a : command) {
    if (!out.empty()) out += ' ';
    out += a.find_first_of(" \t\"'") == std::string::npos ? a : "'" + a + "'";
  }
  return out;
}

int RunMonitor(const MonitorFlags& flags) {
  if (flags.command.empty()) {
    fmt::print(stderr, "error: no command to measure; usage: zeus monitor [OPTIONS] -- CMD ARGS...\n");
    return ExitCodeFor(ErrorCode::kInvalidArgument);
  }
  if (flags.interval_ms < 1 || flags.interval_ms > 60'000) {
    fmt::print(stderr, "error: --interval-ms must be between 1 and 60000 (got {})\n", flags.interval_ms);
    return ExitCodeFor(ErrorCode::kInvalidArgument);
  }
  auto devices = OpenDevices(flags);
  if (!devices) {
    fmt::print(stderr, "error: {}\n", devices.error().message());
    return ExitCodeFor(devices.error().code());
  }
  for (const std::string& note : devices->notes) fmt::print(stderr, "zeus monitor: {}\n", note);

  std::unique_ptr<monitor::PowerMonitor> power;
  if (!devices->gpu_indices.empty()) {
    monitor::PowerMonitorOptions pm;
    pm.interval = std::chrono::milliseconds(flags.interval_ms);
    auto created = monitor::PowerMonitor::Create(*devices->gpus, devices->gpu_indices, pm);
    if (!created) {
      fmt::print(stderr, "error: {}\n", created.error().message());
      return ExitCodeFor(created.error().code());
    }
    power = std::move(*created);
  }
  monitor::MonitorOptions options;
  options.gpu_indices = devices->gpu_indices;
  options.cpu_indices = devices->cpu_indices;
  options.power_source = power.get();
  auto mon = monitor::Monitor::Create(devices->gpus.get(), devices->cpus.get(), options);
  if (!mon) {
    fmt::print(stderr, "error: {}\n", mon.error().message());
    return ExitCodeFor(mon.error().code());
  }

  InstallForwarders();
  const nanoseconds start = SteadyClock().Now();
  (void)(*mon)->BeginWindow("command");
  auto child = RunChild(flags.command);
  auto measurement = (*mon)->EndWindow("command");
  const nanoseconds end = SteadyClock().Now();
  if (!child) {
    fmt::print(stderr, "error: {}\n", child.error().message());
    return ExitCodeFor(child.error().code());
  }
  if (!measurement) {
    fmt::print(stderr, "error: {}\n", measurement.error().message());
    return ExitCodeFor(measurement.error().code());
  }

  json report;
  report["command"] = flags.command;
  report["exit_code"] = *child;
  report["time_s"] = measurement->time_s;
  report["gpus"] = json::array();
  int failures = 0;
  for (const monitor::GpuMeasurement& g : measurement->gpus) {
    json j;
    j["index"] = g.index;
    if (g.error) {
      ++failures;
      j["energy_j"] = nullptr;
      j["avg_power_w"] = nullptr;
      j["error"] = g.error->message();
    } else {
      j["energy_j"] = g.energy_j;
      j["avg_power_w"] = measurement->time_s > 0 ? g.energy_j / measurement->time_s : 0.0;
      j["error"] = nullptr;
    }
    auto stats = power ? power->Stats(g.index, start, end) : Result<monitor::PowerStats>(monitor::PowerStats{});
    j["peak_power_w"] = stats && stats->samples > 0 ? json(stats->peak_power_w) : json(nullptr);
    auto period = power ? power->UpdatePeriod(g.index) : std::nullopt;
    j["update_period_s"] = period ? json(std::chrono::duration<double>(*period).count()) : json(nullptr);
    j["source"] = std::string(monitor::EnergySourceName(g.source));
    j["uncertain"] = g.uncertain;
    report["gpus"].push_back(j);
  }
  report["cpus"] = json::array();
  for (const monitor::CpuMeasurement& c : measurement->cpus) {
    json j;
    j["index"] = c.index;
    j["name"] = devices->cpus->cpu(c.index).name();
    j["energy_j"] = c.error ? json(nullptr) : json(c.package_energy_j);
    j["dram_energy_j"] = c.error || !c.dram_energy_j ? json(nullptr) : json(*c.dram_energy_j);
    j["avg_power_w"] = c.error || measurement->time_s <= 0 ? json(nullptr)
                                                            : json(c.package_energy_j / measurement->time_s);
    j["uncertain"] = c.uncertain;
    j["error"] = c.error ? json(c.error->message()) : json(nullptr);
    if (c.error) ++failures;
    report["cpus"].push_back(j);
  }
  report["total_energy_j"] = measurement->total_energy_j;

  std::string text;
  if (flags.json) {
    text = report.dump(2) + "\n";
  } else {
    text += fmt::format("\nzeus monitor: {} exited with {} after {:.3f} s\n", JoinCommand(flags.command), *child,
                        measurement->time_s);
    text += fmt::format("  {:<10} {:>12} {:>12} {:>12}  {}\n", "device", "energy (J)", "avg (W)", "peak (W)", "how");
    for (const json& g : report["gpus"]) {
      const std::string label = fmt::format("GPU {}", g["index"].get<std::size_t>());
      if (!g["error"].is_null()) {
        text += fmt::format("  {:<10} {:>12} {:>12} {:>12}  error: {}\n", label, "-", "-", "-",
                            g["error"].get<std::string>());
        continue;
      }
      text += fmt::format("  {:<10} {:>12.2f} {:>12.2f} {:>12}  {}{}\n", label, g["energy_j"].get<double>(),
                          g["avg_power_w"].get<double>(),
                          g["peak_power_w"].is_null() ? "-" : fmt::format("{:.2f}", g["peak_power_w"].get<double>()),
                          g["source"].get<std::string>(), g["uncertain"].get<bool>() ? " (uncertain)" : "");
    }
    for (const json& c : report["cpus"]) {
      const std::string label = c["name"].get<std::string>();
      if (!c["error"].is_null()) {
        text += fmt::format("  {:<10} error: {}\n", label, c["error"].get<std::string>());
        continue;
      }
      text += fmt::format("  {:<10} {:>12.2f} {:>12.2f} {:>12}  rapl{}\n", label, c["energy_j"].get<double>(),
                          c["avg_power_w"].get<double>(), "-", c["uncertain"].get<bool>() ? " (uncertain)" : "");
      if (!c["dram_energy_j"].is_null()) {
        text += fmt::format("  {:<10} {:>12.2f} {:>12.2f} {:>12}  rapl\n", "  dram", c["dram_energy_j"].get<double>(),
                            c["dram_energy_j"].get<double>() / measurement->time_s, "-");
      }
    }
    text += fmt::format("  {:<10} {:>12.2f}\n", "total", measurement->total_energy_j);
  }
  if (!flags.output.empty()) {
    std::ofstream out(flags.output, std::ios::trunc);
    out << text;
    if (!out.flush()) {
      fmt::print(stderr, "error: --output {}: cannot write\n", flags.output);
      return 1;
    }
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }

  if (!flags.timeline.empty() && power) {
    const bool as_json = flags.timeline.ends_with(".json");
    Status s = as_json ? power->WriteTimelineJson(flags.timeline) : power->WriteTimelineCsv(flags.timeline);
    if (!s) fmt::print(stderr, "error: --timeline: {}\n", s.error().message());
  }
  if (!flags.plot.empty() && power) {
    if (Status s = WritePlot(flags.plot, *power, JoinCommand(flags.command), measurement->time_s); !s) {
      fmt::print(stderr, "error: {}\n", s.error().message());
    }
  }
  if (failures > 0) fmt::print(stderr, "zeus monitor: {} device(s) could not be measured (see the report)\n", failures);
  return *child;
}

int RunLivePower(const MonitorFlags& flags) {
  if (flags.live_interval_ms < 1) {
    fmt::print(stderr, "error: --interval-ms must be at least 1\n");
    return ExitCodeFor(ErrorCode::kInvalidArgument);
  }
  MonitorFlags open_flags = flags;
  auto devices = OpenDevices(open_flags);
  if (!devices) {
    fmt::print(stderr, "error: {}\n", devices.error().message());
    return ExitCodeFor(devices.error().code());
  }
  if (devices->gpu_indices.empty()) {
    fmt::print(stderr, "error: no GPUs to watch{}\n",
               devices->notes.empty() ? "" : ": " + devices->notes.front());
    return ExitCodeFor(ErrorCode::kUnavailable);
  }
  InstallForwarders();
  std::string header = fmt::format("{:>9}", "time_s");
  for (std::size_t i : devices->gpu_indices) header += fmt::format(" {:>11}", fmt::format("gpu{}_w", i));
  fmt::print("{}\n", header);
  std::fflush(stdout);
  const nanoseconds start = SteadyClock().Now();
  for (int line = 0; !g_stop.load() && (flags.count == 0 || line < flags.count); ++line) {
    std::string row = fmt::format("{:>9.2f}", std::chrono::duration<double>(SteadyClock().Now() - start).count());
    for (std::size_t i : devices->gpu_indices) {
      device::Gpu& gpu = devices->gpus->gpu(i);
      auto p = gpu.InstantPowerMw();
      if (!p) p = gpu.PowerUsageMw();
      row += p ? fmt::format(" {:>11.1f}", *p / 1000.0) : fmt::format(" {:>11}", "error");
    }
    fmt::print("{}\n", row);
    std::fflush(stdout);
    if (flags.count != 0 && line + 1 >= flags.count) break;
    for (int slept = 0; slept < flags.live_interval_ms && !g_stop.load(); slept += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(10, flags.live_interval_ms - slept)));
    }
  }
  return 0;
}

}  // namespace

void RegisterMonitorCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<MonitorFlags>();
  auto* cmd = app.add_subcommand("monitor", "Measure the time and energy of a command (zeus monitor -- CMD ARGS...)");
  cmd->add_option("--gpus", flags->gpus, "GPUs to measure, as comma-separated indices (default: all visible)")
      ->delimiter(',')
      ->each([flags](const std::string&) { flags->gpus_given = true; });
  cmd->add_flag("--cpus", flags->cpus, "Also measure CPU package and DRAM energy (RAPL)");
  cmd->add_option("--interval-ms", flags->interval_ms, "Power sampling period in ms (default 100 = 10 Hz; 1 = 1 kHz)");
  cmd->add_flag("--json", flags->json, "Print the report as one JSON object");
  cmd->add_option("--timeline", flags->timeline, "Write the power timeline per GPU (CSV, or JSON for *.json)");
  cmd->add_option("--plot", flags->plot, "Write an SVG plot of power over time per GPU");
  cmd->add_option("-o,--output", flags->output, "Write the report to this file instead of stdout");
  cmd->add_option("command", flags->command, "The command to run, after --")->expected(-1);
  cmd->footer(
      "Runs the command, passes its exit code through (128+N if killed by signal N) and forwards SIGINT,\n"
      "SIGTERM, SIGHUP and SIGQUIT to it. Then reports wall time, and per device energy (J), average and peak\n"
      "power (W), and the total. GPUs with an energy counter are measured by it; others by integrating power.\n"
      "Example: zeus monitor --json --plot power.svg -- python train.py --epochs 3");
  cmd->callback([flags, exit_code, cmd] {
    if (cmd->got_subcommand("power")) return;
    *exit_code = RunMonitor(*flags);
  });

  auto* power = cmd->add_subcommand("power", "Print live power per GPU until Ctrl-C");
  power->add_option("--interval-ms", flags->live_interval_ms, "Print period in ms (default 500)");
  power->add_option("--gpus", flags->gpus, "GPUs to watch (default: all)")
      ->delimiter(',')
      ->each([flags](const std::string&) { flags->gpus_given = true; });
  power->add_option("--count", flags->count, "Stop after this many lines (default: until Ctrl-C)");
  power->callback([flags, exit_code] { *exit_code = RunLivePower(*flags); });
}

}  // namespace zeus::cli
