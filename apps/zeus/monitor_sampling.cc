// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/monitor_sampling.h"

#include <algorithm>
#include <string_view>
#include <utility>

#if ZEUS_HAVE_EXPORTER
#include "zeus/exporter/push.h"
#endif

namespace zeus::cli {
namespace {

using std::chrono::nanoseconds;

// How long `zeus monitor --zeusd` waits for a first reading of every remote
// device before the command starts, and for a reading past its end after.
constexpr std::chrono::seconds kZeusdReadyTimeout{30};
constexpr std::chrono::seconds kZeusdSettleTimeout{5};

}  // namespace

// The window's begin and end through the histogram, which pushes the
// measurement in the background; its destructor waits (bounded).
#if ZEUS_HAVE_EXPORTER
class CommandMeasurement::Pusher {
 public:
  explicit Pusher(std::unique_ptr<exporter::EnergyHistogram> histogram) : histogram_(std::move(histogram)) {}
  Status BeginWindow(std::string_view name) { return histogram_->BeginWindow(name); }
  Result<monitor::Measurement> EndWindow(std::string_view name) { return histogram_->EndWindow(name); }

 private:
  std::unique_ptr<exporter::EnergyHistogram> histogram_;
};
#else
// No exporter in this build: never made (Start refuses --pushgateway).
class CommandMeasurement::Pusher {
 public:
  Status BeginWindow(std::string_view /*name*/) { return Fail(ErrorCode::kNotSupported, "no exporter"); }
  Result<monitor::Measurement> EndWindow(std::string_view /*name*/) {
    return Fail(ErrorCode::kNotSupported, "no exporter");
  }
};
#endif

CommandMeasurement::~CommandMeasurement() = default;

Result<std::unique_ptr<CommandMeasurement>> CommandMeasurement::Start(const MonitorFlags& flags,
                                                                      const Devices& devices) {
  std::unique_ptr<CommandMeasurement> m(new CommandMeasurement());
  const Clock* driver_clock = devices.gpu_indices.empty() ? nullptr : devices.gpus->driver_clock();
  m->emulator_clock_ = driver_clock != nullptr;
  m->clock_ = driver_clock != nullptr ? driver_clock : &SteadyClock();
  if (!devices.gpu_indices.empty()) {
    monitor::PowerMonitorOptions pm;
    pm.interval = std::chrono::milliseconds(flags.interval_ms);
    pm.clock = m->clock_;
    auto created = monitor::PowerMonitor::Create(*devices.gpus, devices.gpu_indices, pm);
    if (!created) return Fail(created.error());
    m->power_ = std::move(*created);
  }
  monitor::MonitorOptions options;
  options.gpu_indices = devices.gpu_indices;
  options.cpu_indices = devices.cpu_indices;
  options.power_source = m->power_.get();
  options.clock = m->clock_;
  auto mon = monitor::Monitor::Create(devices.gpus.get(), devices.cpus.get(), options);
  if (!mon) return Fail(mon.error());
  m->monitor_ = std::move(*mon);
  if (!flags.pushgateway.empty()) {
#if ZEUS_HAVE_EXPORTER
    auto created = exporter::EnergyHistogram::Create(*m->monitor_, {flags.pushgateway, flags.job, nullptr});
    if (!created) return Fail(ErrorCode::kInvalidArgument, created.error().message());
    m->push_ = std::make_unique<Pusher>(std::move(*created));
#else
    return Fail(ErrorCode::kNotSupported,
                "--pushgateway needs Prometheus support, which this build of zeus leaves out (built without the "
                "EXPORTER component); use the zeus Debian package or build with prometheus-cpp");
#endif
  }
  if (Status remote = m->StartRemote(flags); !remote) return Fail(remote.error());
  if (flags.per_process) {
    if (devices.gpu_indices.empty()) {
      return Fail(ErrorCode::kInvalidArgument, "--per-process: no local GPUs to measure; make a GPU visible");
    }
    // At least 100 ms: the driver's per-process samples come every 1/6 s to 1 s.
    const auto interval = std::max<nanoseconds>(std::chrono::milliseconds(flags.interval_ms),
                                                std::chrono::milliseconds(100));
    auto processes = ProcessTreeMeasurement::Start(*devices.gpus, devices.gpu_indices, interval, m->clock_);
    if (!processes) return Fail(processes.error());
    m->processes_ = std::move(*processes);
  }
  return m;
}

Status CommandMeasurement::StartRemote(const MonitorFlags& flags) {
  if (flags.zeusd_urls.empty()) return OkStatus();
  auto token = ZeusdToken(flags.zeusd_token_file);
  if (!token) return Fail(ErrorCode::kInvalidArgument, token.error().message());
  auto started = RemoteMeasurement::Start(flags.zeusd_urls, *token, kZeusdReadyTimeout);
  if (!started) return Fail(started.error());
  remote_ = std::move(*started);
  return OkStatus();
}

Result<MeasuredRun> CommandMeasurement::Run(SignalRelay& relay, const MonitorFlags& flags) {
  MeasuredRun run;
  run.start = clock_->Now();
  const nanoseconds wall_start = SteadyClock().Now();
  (void)(push_ ? push_->BeginWindow("command") : monitor_->BeginWindow("command"));
  if (remote_) remote_->Begin();
  auto child = relay.Run(flags.command, std::chrono::duration_cast<nanoseconds>(
                                            std::chrono::duration<double>(flags.kill_after_s)));
  auto measurement = push_ ? push_->EndWindow("command") : monitor_->EndWindow("command");
  const nanoseconds wall_end = SteadyClock().Now();
  run.end = clock_->Now();
  if (processes_) processes_->Stop();
  if (remote_) remote_->End(kZeusdSettleTimeout);
  if (!child) return Fail(child.error());
  if (!measurement) return Fail(measurement.error());
  run.child = std::move(*child);
  run.measurement = std::move(*measurement);
  run.wall_time_s = std::chrono::duration<double>(wall_end - wall_start).count();
  return run;
}

}  // namespace zeus::cli
