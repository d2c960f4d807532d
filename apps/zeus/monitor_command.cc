// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/monitor_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/zeus/cli_flags.h"
#include "apps/zeus/monitor_child.h"
#include "apps/zeus/monitor_zeusd.h"
#include "apps/zeus/svg_plot.h"
#include "zeus/device/discovery.h"
#if ZEUS_HAVE_EXPORTER
#include "zeus/exporter/push.h"
#endif
#include "zeus/monitor/monitor.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/zeusd/cpu.h"

namespace zeus::cli {
namespace {

using json = nlohmann::json;
using std::chrono::nanoseconds;

constexpr long long kMaxIntervalMs = 60'000;
constexpr double kMaxKillAfterS = 86'400;
constexpr long long kMaxCount = 1'000'000'000;

struct MonitorFlags {
  std::vector<std::string> gpus_text;  // each "0" or "0,1"
  std::vector<std::size_t> gpus;       // parsed from gpus_text
  bool gpus_given = false;
  bool cpus = false;
  long long interval_ms = 100;
  double kill_after_s = 10;
  bool json = false;
  std::string timeline;
  std::string plot;
  std::string output;
  std::string pushgateway;  // push the window as EnergyHistogram does
  std::string job;
  std::vector<std::string> zeusd_urls;  // each "URL" or "URL,URL"
  std::string zeusd_token_file;
  std::vector<std::string> command;
  // `monitor power`
  long long live_interval_ms = 500;
  long long count = 0;
};

double Seconds(nanoseconds d) { return std::chrono::duration<double>(d).count(); }

// "0,,2" -> {"0", "", "2"}.
std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  for (std::size_t end = text.find(','); end != std::string::npos; begin = end + 1, end = text.find(',', begin)) {
    items.push_back(text.substr(begin, end - begin));
  }
  items.push_back(text.substr(begin));
  return items;
}

// The check of one --gpus word, "0" or "0,2": every comma-separated item a
// GPU index (a whole number, no sign, nothing past 2^32 - 1), in
// IntegerFlag's words ("--gpus must be at least 0 (got -1)"). Rewrites each
// item to plain decimal.
CLI::Validator GpuListFlag() {
  const CLI::Validator index = IntegerFlag<std::uint32_t>();
  auto check = [index](std::string& input) -> std::string {
    std::string rewritten;
    for (std::string& item : SplitCommas(input)) {
      if (item.empty()) return fmt::format("must be GPU indices separated by commas (got '{}')", input);
      if (std::string message = index(item); !message.empty()) return message;
      rewritten += (rewritten.empty() ? "" : ",") + item;
    }
    input = rewritten;
    return "";
  };
  return CLI::Validator(check, "INDEX[,INDEX...]", "");
}

// "--gpus 0,2" -> {0, 2}; the words were checked by GpuListFlag.
void ParseGpuList(MonitorFlags& flags) {
  flags.gpus.clear();
  flags.gpus_given = !flags.gpus_text.empty();
  for (const std::string& text : flags.gpus_text) {
    for (const std::string& item : SplitCommas(text)) flags.gpus.push_back(std::stoul(item));
  }
}

// Checks that `path` can be written before the command runs, without
// truncating an existing file: it must not be a directory, its directory must
// exist, and opening it for writing must work. A file created by the check is
// removed again.
Status CheckWritable(const char* flag, const std::string& path) {
  if (path.empty()) return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: the path is empty", flag));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} {}: is a directory; give a file name", flag, path));
  }
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (::stat(dir.c_str(), &st) != 0) {
    return Fail(ErrorFromErrno(errno, fmt::format("{} {}: directory {}", flag, path, dir)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("{} {}: {} is not a directory", flag, path, dir));
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  bool created = false;
  if (fd < 0 && errno == ENOENT) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    created = fd >= 0;
  }
  if (fd < 0) return Fail(ErrorFromErrno(errno, fmt::format("{} {}: cannot write", flag, path)));
  ::close(fd);
  if (created) ::unlink(path.c_str());
  return OkStatus();
}

// Whether two output paths name one file that one output would overwrite
// with the other: the same path once made absolute and its existing part
// resolved (symlinks, "..", "."), or the same inode (a hard link); a regular
// file or one not there yet (a device such as /dev/null may be shared).
bool SameOutputFile(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const bool same = (!ec && resolved == fs::weakly_canonical(fs::absolute(b, ec), ec) && !ec) ||
                    (fs::equivalent(a, b, ec) && !ec);
  const fs::file_status st = fs::status(resolved, ec);
  return same && (!fs::exists(st) || fs::is_regular_file(st));
}

// The output paths' checks before anything runs: no two of -o, --timeline
// and --plot name the same file (one would overwrite the other), and each
// can be written (CheckWritable). kInvalidArgument naming both flags, or
// CheckWritable's error.
Status CheckOutputPaths(const MonitorFlags& flags) {
  const std::pair<const char*, const std::string*> paths[] = {
      {"-o/--output", &flags.output}, {"--timeline", &flags.timeline}, {"--plot", &flags.plot}};
  for (std::size_t i = 0; i < std::size(paths); ++i) {
    for (std::size_t j = i + 1; j < std::size(paths); ++j) {
      const std::string& a = *paths[i].second;
      const std::string& b = *paths[j].second;
      if (a.empty() || b.empty() || !SameOutputFile(a, b)) continue;
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} {} and {} {} name the same file; give each output its own file", paths[i].first, a,
                              paths[j].first, b));
    }
  }
  for (const auto& [flag, path] : paths) {
    if (path->empty()) continue;
    if (Status s = CheckWritable(flag, *path); !s) return s;
  }
  return OkStatus();
}

// How long `zeus monitor --zeusd` waits for a first reading of every remote
// device before the command starts, and for a reading past its end after.
constexpr std::chrono::seconds kZeusdReadyTimeout{30};
constexpr std::chrono::seconds kZeusdSettleTimeout{5};

struct Devices {
  std::unique_ptr<device::GpuSet> gpus;
  std::unique_ptr<device::CpuSet> cpus;
  std::vector<std::size_t> gpu_indices;
  std::vector<std::size_t> cpu_indices;
  std::vector<std::string> notes;
};

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
    if (Status opened = OpenCpuDevices(&d); !opened) return Fail(opened.error());
  }
  return d;
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
      s.points.emplace_back(Seconds(sample.time - pm.start_time()), *sample.instant_mw / 1000.0);
    }
    plot.series.push_back(std::move(s));
  }
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Fail(ErrorFromErrno(errno, path).WithContext("--plot"));
  errno = 0;
  out << RenderSvg(plot);
  if (!out.flush()) {
    const int err = errno != 0 ? errno : EIO;
    return Fail(Error(ErrorCode::kIoError, fmt::format("--plot {}: cannot write: {}", path, std::strerror(err)),
                      NativeSpace::kErrno, err));
  }
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

// Writes the report to -o FILE or stdout. False (after a message) on failure.
bool EmitReport(const MonitorFlags& flags, const std::string& text) {
  if (flags.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0;
  }
  std::ofstream out(flags.output, std::ios::trunc);
  out << text;
  if (!out.flush()) {
    fmt::print(stderr, "error: --output {}: cannot write the report: {}\n", flags.output, std::strerror(errno));
    return false;
  }
  return true;
}

// The report when a signal arrived before the command started.
int ReportNotStarted(const MonitorFlags& flags, int signal) {
  const int exit_code = 128 + signal;
  const std::string reason = fmt::format("{} arrived before the command started; it was not run", SignalName(signal));
  std::string text;
  if (flags.json) {
    json report;
    report["command"] = flags.command;
    report["started"] = false;
    report["exit_code"] = exit_code;
    report["signal"] = SignalName(signal);
    report["error"] = reason;
    report["time_s"] = 0.0;
    report["gpus"] = json::array();
    report["cpus"] = json::array();
    report["total_energy_j"] = 0.0;
    text = report.dump(2) + "\n";
  } else {
    text = fmt::format("\nzeus monitor: {}: {}\n", JoinCommand(flags.command), reason);
  }
  (void)EmitReport(flags, text);
  fmt::print(stderr, "zeus monitor: {}\n", reason);
  return exit_code;
}

int RunMonitor(MonitorFlags& flags) {
  // First, before anything slow: a signal from now on is held, never lost.
  SignalRelay& relay = SignalRelay::Install();
  auto usage_error = [](const std::string& message) {
    fmt::print(stderr, "error: {}\n", message);
    return ExitCodeFor(ErrorCode::kInvalidArgument);
  };
  if (flags.command.empty()) return usage_error("no command to measure; usage: zeus monitor [OPTIONS] -- CMD ARGS...");
  ParseGpuList(flags);  // the ranges were checked while parsing
  if (!flags.zeusd_token_file.empty() && flags.zeusd_urls.empty()) {
    return usage_error("--zeusd-token-file is for --zeusd daemons: give --zeusd URL too");
  }
  if (flags.pushgateway.empty() != flags.job.empty()) {
    return usage_error("--pushgateway and --job go together: give both (e.g. --pushgateway http://localhost:9091 "
                       "--job train)");
  }
  if (Status s = CheckOutputPaths(flags); !s) {
    fmt::print(stderr, "error: {}\n", s.error().message());
    const ErrorCode code = s.error().code();
    return ExitCodeFor(code == ErrorCode::kPermissionDenied ? code : ErrorCode::kInvalidArgument);
  }

  auto devices = OpenDevices(flags);
  if (!devices) {
    fmt::print(stderr, "error: {}\n", devices.error().message());
    return ExitCodeFor(devices.error().code());
  }
  for (const std::string& note : devices->notes) fmt::print(stderr, "zeus monitor: {}\n", note);
  if ((!flags.timeline.empty() || !flags.plot.empty()) && devices->gpu_indices.empty()) {
    return usage_error(fmt::format("{}: no GPUs to sample; drop the flag or make a GPU visible{}",
                                   flags.timeline.empty() ? "--plot" : "--timeline",
                                   flags.zeusd_urls.empty() ? "" : " (with --zeusd, local GPUs only with --gpus)"));
  }

  // Energy and time from one clock: the emulator's when the GPUs are emulated
  // (its energy counters count emulated time, which a scenario may scale).
  const Clock* driver_clock = devices->gpu_indices.empty() ? nullptr : devices->gpus->driver_clock();
  const Clock& clock = driver_clock != nullptr ? *driver_clock : SteadyClock();

  std::unique_ptr<monitor::PowerMonitor> power;
  if (!devices->gpu_indices.empty()) {
    monitor::PowerMonitorOptions pm;
    pm.interval = std::chrono::milliseconds(flags.interval_ms);
    pm.clock = &clock;
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
  options.clock = &clock;
  auto mon = monitor::Monitor::Create(devices->gpus.get(), devices->cpus.get(), options);
  if (!mon) {
    fmt::print(stderr, "error: {}\n", mon.error().message());
    return ExitCodeFor(mon.error().code());
  }

#if ZEUS_HAVE_EXPORTER
  std::unique_ptr<exporter::EnergyHistogram> push;  // pushes in the background; its destructor waits (bounded)
  if (!flags.pushgateway.empty()) {
    auto created = exporter::EnergyHistogram::Create(**mon, {flags.pushgateway, flags.job, nullptr});
    if (!created) return usage_error(created.error().message());
    push = std::move(*created);
  }
#else
  monitor::Monitor* push = nullptr;  // no exporter in this build: windows go to the monitor alone
  if (!flags.pushgateway.empty()) {
    fmt::print(stderr,
               "error: --pushgateway needs Prometheus support, which this build of zeus leaves out (built "
               "without the EXPORTER component); use the zeus Debian package or build with prometheus-cpp\n");
    return ExitCodeFor(ErrorCode::kNotSupported);
  }
#endif

  std::unique_ptr<RemoteMeasurement> remote;
  if (!flags.zeusd_urls.empty()) {
    auto token = ZeusdToken(flags.zeusd_token_file);
    if (!token) return usage_error(token.error().message());
    auto started = RemoteMeasurement::Start(flags.zeusd_urls, *token, kZeusdReadyTimeout);
    if (!started) {
      fmt::print(stderr, "error: {}\n", started.error().message());
      return ExitCodeFor(started.error().code());
    }
    remote = std::move(*started);
  }

  // Test seam: a test delivers a signal here, with the devices open.
  TestHoldWhileFileExists("ZEUS_MONITOR_TEST_HOLD_FILE");
  if (std::optional<int> early = relay.TakePending()) return ReportNotStarted(flags, *early);

  const nanoseconds start = clock.Now();
  const nanoseconds wall_start = SteadyClock().Now();
  (void)(push ? push->BeginWindow("command") : (*mon)->BeginWindow("command"));
  if (remote) remote->Begin();
  auto child = relay.Run(flags.command, std::chrono::duration_cast<nanoseconds>(
                                            std::chrono::duration<double>(flags.kill_after_s)));
  auto measurement = push ? push->EndWindow("command") : (*mon)->EndWindow("command");
  const nanoseconds wall_end = SteadyClock().Now();
  const nanoseconds end = clock.Now();
  if (remote) remote->End(kZeusdSettleTimeout);
  if (!child) {
    fmt::print(stderr, "error: {}\n", child.error().message());
    return ExitCodeFor(child.error().code());
  }
  if (!measurement) {
    fmt::print(stderr, "error: {}\n", measurement.error().message());
    return ExitCodeFor(measurement.error().code());
  }
  const double time_s = measurement->time_s;
  const double wall_time_s = Seconds(wall_end - wall_start);

  json report;
  report["command"] = flags.command;
  report["started"] = !child->exec_error.has_value();
  report["exit_code"] = child->exit_code;
  report["error"] = child->exec_error ? json(*child->exec_error) : json(nullptr);
  report["signal"] = child->signal_received ? json(SignalName(*child->signal_received)) : json(nullptr);
  report["signal_forwarded"] = child->signal_forwarded;
  report["killed_after_grace"] = child->killed_after_grace;
  report["time_s"] = time_s;
  report["wall_time_s"] = wall_time_s;
  report["clock"] = driver_clock != nullptr ? "emulator" : "wall";
  report["gpus"] = json::array();
  int failures = 0;
  for (const monitor::GpuMeasurement& g : measurement->gpus) {
    json j;
    j["index"] = g.index;
    std::optional<double> avg;
    if (g.error) {
      ++failures;
      j["energy_j"] = nullptr;
      j["error"] = g.error->message();
    } else {
      j["energy_j"] = g.energy_j;
      if (time_s > 0) avg = g.energy_j / time_s;
      j["error"] = nullptr;
    }
    // The peak is the highest power known in the window: the largest reading
    // in force during it (the one at its start included), or the average when
    // that is higher (the energy counted more than the readings explain: the
    // power changed between two readings, or the window is shorter than the
    // sampling interval). So the average never exceeds the peak.
    auto stats = power ? power->Stats(g.index, start, end) : Result<monitor::PowerStats>(monitor::PowerStats{});
    std::optional<double> peak;
    std::string peak_from = "readings";
    if (stats && stats->samples > 0) peak = stats->peak_power_w;
    // Energy is known to 1 mJ (the counter's unit): an average above the peak
    // by less than that over the window is the peak, within resolution.
    if (avg && peak && *avg > *peak && *avg - *peak <= 0.001 / time_s + 1e-9 * *peak) avg = peak;
    if (avg && (!peak || *avg > *peak)) {
      peak = avg;
      peak_from = "average";
    }
    j["avg_power_w"] = avg ? json(*avg) : json(nullptr);
    j["peak_power_w"] = peak ? json(*peak) : json(nullptr);
    j["peak_from"] = peak ? json(peak_from) : json(nullptr);
    auto period = power ? power->UpdatePeriod(g.index) : std::nullopt;
    j["update_period_s"] = period ? json(Seconds(*period)) : json(nullptr);
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
    // RAPL counts real energy: its average is over wall time, whatever the GPUs' clock.
    j["avg_power_w"] = c.error || wall_time_s <= 0 ? json(nullptr) : json(c.package_energy_j / wall_time_s);
    j["uncertain"] = c.uncertain;
    j["error"] = c.error ? json(c.error->message()) : json(nullptr);
    if (c.error) ++failures;
    report["cpus"].push_back(j);
  }
  const double remote_energy_j = remote ? remote->total_energy_j() : 0.0;
  if (remote) {
    report["zeusd_time_s"] = remote->time_s();
    report["zeusd"] = remote->Report();
    report["zeusd_energy_j"] = remote_energy_j;
  }
  report["total_energy_j"] = measurement->total_energy_j + remote_energy_j;

  std::string text;
  if (flags.json) {
    text = report.dump(2) + "\n";
  } else {
    if (child->exec_error) {
      text += fmt::format("\nzeus monitor: {}\n", *child->exec_error);
    } else {
      text += fmt::format("\nzeus monitor: {} exited with {} after {:.3f} s", JoinCommand(flags.command),
                          child->exit_code, wall_time_s);
      // The emulator's clock shown where it parts from the wall clock (a time_scale, a manual clock).
      if (driver_clock != nullptr && std::abs(time_s - wall_time_s) > 0.05 * wall_time_s + 0.01) {
        text += fmt::format(" ({:.3f} s of emulated GPU time)", time_s);
      }
      text += "\n";
    }
    if (child->signal_received) {
      text += fmt::format("  {} {}", SignalName(*child->signal_received),
                          child->signal_forwarded ? "was forwarded to the command"
                                                  : "could not be forwarded: the command had exited");
      text += child->killed_after_grace
                  ? fmt::format("; its process group was still running {} s later and was killed (SIGKILL)\n",
                                flags.kill_after_s)
                  : "\n";
    }
    text += fmt::format("  {:<10} {:>12} {:>12} {:>12}  {}\n", "device", "energy (J)", "avg (W)", "peak (W)", "how");
    bool short_window = false;
    for (const json& g : report["gpus"]) {
      const std::string label = fmt::format("GPU {}", g["index"].get<std::size_t>());
      if (!g["error"].is_null()) {
        text += fmt::format("  {:<10} {:>12} {:>12} {:>12}  error: {}\n", label, "-", "-", "-",
                            g["error"].get<std::string>());
        continue;
      }
      auto number = [](const json& v) { return v.is_null() ? std::string("-") : fmt::format("{:.2f}", v.get<double>()); };
      const bool peak_is_avg = g["peak_from"] == "average";
      short_window = short_window || peak_is_avg;
      text += fmt::format("  {:<10} {:>12.2f} {:>12} {:>12}  {}{}\n", label, g["energy_j"].get<double>(),
                          number(g["avg_power_w"]), number(g["peak_power_w"]) + (peak_is_avg ? "*" : ""),
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
                            wall_time_s > 0 ? c["dram_energy_j"].get<double>() / wall_time_s : 0.0, "-");
      }
    }
    if (remote) text += remote->Text();
    text += fmt::format("  {:<10} {:>12.2f}\n", "total", measurement->total_energy_j + remote_energy_j);
    if (short_window) {
      text += fmt::format(
          "  * the average is above every power reading (one every {} ms) in the window: the window is short against "
          "the sampling interval or the counter's resolution, or power changed between readings; the peak shown is "
          "the average\n",
          flags.interval_ms);
    }
  }
  int exit_code = child->exit_code;
  auto write_failed = [&exit_code] {
    if (exit_code == 0) exit_code = 1;
  };
  if (!EmitReport(flags, text)) write_failed();
  if (!flags.timeline.empty() && power) {
    const bool as_json = flags.timeline.ends_with(".json");
    Status s = as_json ? power->WriteTimelineJson(flags.timeline) : power->WriteTimelineCsv(flags.timeline);
    if (!s) {
      fmt::print(stderr, "error: --timeline: {}\n", s.error().message());
      write_failed();
    }
  }
  if (!flags.plot.empty() && power) {
    if (Status s = WritePlot(flags.plot, *power, JoinCommand(flags.command), time_s); !s) {
      fmt::print(stderr, "error: {}\n", s.error().message());
      write_failed();
    }
  }
  if (child->exec_error) fmt::print(stderr, "error: {}\n", *child->exec_error);
  if (child->killed_after_grace) {
    fmt::print(stderr,
               "zeus monitor: the command's process group did not exit within {} s of {}; it was killed with SIGKILL\n",
               flags.kill_after_s, SignalName(*child->signal_received));
  }
  if (failures > 0) fmt::print(stderr, "zeus monitor: {} device(s) could not be measured (see the report)\n", failures);
  if (remote) {
    for (const std::string& note : remote->notes()) fmt::print(stderr, "zeus monitor: {}\n", note);
  }
  return exit_code;
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
    std::string row = fmt::format("{:>9.2f}", Seconds(SteadyClock().Now() - start));
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

void RegisterMonitorCommand(CLI::App& app, int* exit_code) {
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
  cmd->callback([flags, exit_code, cmd] {
    if (cmd->got_subcommand("power")) return;
    *exit_code = RunMonitor(*flags);
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
