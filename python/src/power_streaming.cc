// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.power_streaming: the native PowerStreamingClient
// (include/zeus/zeusd_client/power_streaming.h) under
// zeus.monitor.power_streaming. Times cross this boundary as Unix seconds
// (floats), as time.time() gives them: the client runs on a Unix-time Clock,
// so a daemon's clock offset means what it means in Zeus. Start, waits and
// Stop release the GIL; errors go through ThrowError: Start's in the zeusd
// family (ValueError for a bad configuration, as Zeus), the queries' (an
// endpoint or device not streamed, t1 < t0) as ZeusNotFoundError /
// ZeusInvalidArgumentError, both ValueErrors as in Zeus's PowerMonitor.

#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "python/src/bindings.h"
#include "zeus/zeusd_client/power_streaming.h"

namespace zeus::python {
namespace {

using std::chrono::nanoseconds;
using zeusd::DeviceKind;
using zeusd::PowerStreamingClient;

// Unix time (std::chrono::system_clock since the epoch), the scale of
// Python's time.time(). It steps when the system clock is set; the client
// only subtracts and compares its readings.
class UnixClock final : public Clock {
 public:
  nanoseconds Now() const override {
    return std::chrono::duration_cast<nanoseconds>(std::chrono::system_clock::now().time_since_epoch());
  }
  void SleepFor(nanoseconds duration) const override { std::this_thread::sleep_for(duration); }
};

const Clock& TheUnixClock() {
  static const UnixClock* clock = new UnixClock();  // never destroyed: client threads may outlive statics
  return *clock;
}

double ToSeconds(nanoseconds t) { return std::chrono::duration<double>(t).count(); }

[[noreturn]] void ThrowInvalid(const std::string& message) {
  ThrowError(Error(ErrorCode::kInvalidArgument, message));
}

// The longest duration accepted from Python (options) and the cap on wait
// timeouts: one year, far inside nanoseconds' range.
constexpr double kMaxDurationS = 365.0 * 24 * 3600;
// Time points from Python: |t| <= 9e9 s (year ~2255) fits nanoseconds (9.2e18).
constexpr double kMaxTimePointS = 9e9;
// Samples per device: past this a timeline is a memory hazard, not a setting.
constexpr long long kMaxTimelineCapacity = 100'000'000;

// A time point in Unix seconds (None: `if_none`); ValueError unless finite
// and within kMaxTimePointS.
nanoseconds FromSeconds(std::optional<double> s, nanoseconds if_none) {
  if (!s) return if_none;
  if (!std::isfinite(*s) || std::abs(*s) > kMaxTimePointS) {
    ThrowInvalid("times must be finite numbers of Unix seconds within +-9e9 (got " + std::to_string(*s) + ")");
  }
  return std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(*s));
}

// An option's duration in seconds, as milliseconds; ValueError unless finite,
// > 0 (>= 0 when `zero_ok`) and at most one year.
std::chrono::milliseconds OptionDuration(const char* name, double s, bool zero_ok) {
  if (!std::isfinite(s) || s < 0 || (!zero_ok && s == 0) || s > kMaxDurationS) {
    ThrowInvalid(std::string(name) + " must be a finite number of seconds " + (zero_ok ? ">= 0" : "> 0") +
                 " and at most one year (31536000); got " + std::to_string(s));
  }
  return std::chrono::milliseconds(std::llround(s * 1000.0));
}

// A wait timeout: negative waits not at all, huge or infinite ones one year.
nanoseconds WaitTimeout(double s) {
  if (std::isnan(s)) ThrowInvalid("timeout_s must be a number of seconds (got NaN)");
  return std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(std::clamp(s, 0.0, kMaxDurationS)));
}

DeviceKind ParseKind(const std::string& kind) {
  if (kind == "gpu") return DeviceKind::kGpu;
  if (kind == "cpu") return DeviceKind::kCpu;
  ThrowError(Error(ErrorCode::kInvalidArgument, "device kind must be 'gpu' or 'cpu' (got '" + kind + "')"));
}

// One server as zeus.monitor.power_streaming passes it:
// (socket_path, host_port, token, gpu_indices, cpu_indices).
using ServerTuple = std::tuple<std::optional<std::string>, std::optional<std::string>, std::optional<std::string>,
                               std::optional<std::vector<int>>, std::optional<std::vector<int>>>;

std::unique_ptr<PowerStreamingClient> StartNative(const std::vector<ServerTuple>& servers, double reconnect_delay_s,
                                                  double timeout_s, double max_sample_hold_s, double stall_timeout_s,
                                                  const py::int_& timeline_capacity) {
  zeusd::PowerStreamingOptions options;
  options.reconnect_delay = OptionDuration("reconnect_delay_s", reconnect_delay_s, /*zero_ok=*/true);
  options.max_sample_hold = OptionDuration("max_sample_hold_s", max_sample_hold_s, /*zero_ok=*/false);
  options.stall_timeout = OptionDuration("stall_timeout_s", stall_timeout_s, /*zero_ok=*/true);
  if (timeline_capacity < py::int_(2) || timeline_capacity > py::int_(kMaxTimelineCapacity)) {
    ThrowInvalid("timeline_capacity must be an integer from 2 to " + std::to_string(kMaxTimelineCapacity) +
                 " (samples kept per device); got " + py::str(py::object(timeline_capacity)).cast<std::string>());
  }
  options.timeline_capacity = static_cast<std::size_t>(timeline_capacity.cast<long long>());
  options.clock = &TheUnixClock();
  const std::chrono::milliseconds timeout = OptionDuration("timeout_s", timeout_s, /*zero_ok=*/false);
  std::vector<zeusd::PowerStreamingTarget> targets;
  for (const auto& [socket_path, host_port, token, gpu_ids, cpu_ids] : servers) {
    zeusd::PowerStreamingTarget target;
    target.config.socket_path = socket_path.value_or("");
    if (target.config.socket_path.empty()) target.config.host_port = host_port.value_or("");
    target.config.token = token.value_or("");
    target.config.timeout = timeout;
    target.gpu_ids = gpu_ids;
    target.cpu_ids = cpu_ids;
    targets.push_back(std::move(target));
  }
  Result<std::unique_ptr<PowerStreamingClient>> client = [&] {
    ReleaseGil release;
    return PowerStreamingClient::Start(std::move(targets), options);
  }();
  if (!client) {
    // Zeus's exceptions for a bad configuration: an id the daemon lacks or a
    // repeated endpoint is a ValueError; a scope not granted (token missing,
    // rejected or without it, or the group disabled) a ZeusdCapabilityError.
    const Error& e = client.error();
    if (e.code() == ErrorCode::kInvalidArgument) ThrowError(e, ErrorDomain::kGeneral);
    if (e.code() == ErrorCode::kPermissionDenied) {
      ThrowError(Error(ErrorCode::kFailedPrecondition, e.message()), ErrorDomain::kZeusd);
    }
    ThrowError(e, ErrorDomain::kZeusd);
  }
  return std::move(*client);
}

py::dict Latest(const PowerStreamingClient& c) {
  auto latest = c.Latest();
  py::dict out;
  for (const auto& [endpoint, readings] : latest) {
    py::dict gpus;
    for (const auto& [id, w] : readings.gpu_power_w) gpus[py::int_(id)] = w;
    py::dict cpus;
    for (const auto& [id, r] : readings.cpu_power_w) cpus[py::int_(id)] = py::make_tuple(r.cpu_w, r.dram_w);
    out[py::str(endpoint)] = py::make_tuple(ToSeconds(readings.time), gpus, cpus);
  }
  return out;
}

py::list Timeline(const PowerStreamingClient& c, const std::string& endpoint, const std::string& kind, int id,
                  std::optional<double> t0, std::optional<double> t1) {
  auto samples = Unwrap(c.Timeline(endpoint, ParseKind(kind), id, FromSeconds(t0, nanoseconds::min()),
                                   FromSeconds(t1, nanoseconds::max())),
                        ErrorDomain::kGeneral);
  py::list out;
  for (const zeusd::PowerSample& s : samples) {
    std::optional<double> dram_w;
    if (s.dram_mw) dram_w = static_cast<double>(*s.dram_mw) / 1000.0;
    out.append(py::make_tuple(ToSeconds(s.time), static_cast<double>(s.power_mw) / 1000.0, dram_w));
  }
  return out;
}

py::tuple Energy(const PowerStreamingClient& c, const std::string& endpoint, const std::string& kind, int id,
                 double t0, double t1) {
  auto e = Unwrap(c.EnergyMj(endpoint, ParseKind(kind), id, FromSeconds(t0, {}), FromSeconds(t1, {})),
                  ErrorDomain::kGeneral);
  std::optional<double> dram_j;
  if (e.dram_energy_mj) dram_j = *e.dram_energy_mj / 1000.0;
  return py::make_tuple(e.energy_mj / 1000.0, dram_j, ToSeconds(e.uncovered), e.gaps);
}

py::list StreamStatuses(const PowerStreamingClient& c) {
  py::list out;
  for (const zeusd::StreamStatus& s : c.Streams()) {
    py::dict d;
    d["endpoint"] = s.endpoint;
    d["kind"] = zeusd::DeviceKindName(s.kind);
    d["ids"] = s.ids;
    d["connected"] = s.connected;
    d["given_up"] = s.given_up;
    d["last_error"] = s.last_error ? py::object(py::str(s.last_error->message())) : py::object(py::none());
    d["connects"] = s.connects;
    d["reconnects"] = s.reconnects;
    d["failures"] = s.failures;
    d["events"] = s.events;
    d["malformed"] = s.malformed;
    out.append(d);
  }
  return out;
}

}  // namespace

void RegisterPowerStreaming(py::module_& m) {
  py::module_ s = m.def_submodule("power_streaming",
                                  "The native PowerStreamingClient (zeus.monitor.power_streaming is the API).");
  py::class_<PowerStreamingClient>(s, "Client")
      .def(py::init(&StartNative), py::arg("servers"), py::arg("reconnect_delay_s") = 1.0,
           py::arg("timeout_s") = 10.0, py::arg("max_sample_hold_s") = 3.0, py::arg("stall_timeout_s") = 10.0,
           py::arg("timeline_capacity") = py::int_(100000),
           "Connects to every server, measures clock offsets and starts the streams. servers: "
           "[(socket_path, host_port, token, gpu_indices, cpu_indices)]. Durations in seconds (stall_timeout_s "
           "0: never); ValueError for a non-finite, out-of-range duration or capacity.")
      .def("endpoints", &PowerStreamingClient::Endpoints)
      .def("clock_offset_s",
           [](const PowerStreamingClient& c, const std::string& endpoint) {
             return ToSeconds(Unwrap(c.ClockOffset(endpoint), ErrorDomain::kGeneral));
           })
      .def("latest", &Latest, "{endpoint: (time_s, {gpu: W}, {cpu: (cpu_w, dram_w|None)})}")
      .def("timeline", &Timeline, py::arg("endpoint"), py::arg("kind"), py::arg("id"), py::arg("start_s") = py::none(),
           py::arg("end_s") = py::none(), "[(time_s, W, dram_W|None)], oldest first")
      .def("energy", &Energy, py::arg("endpoint"), py::arg("kind"), py::arg("id"), py::arg("start_s"),
           py::arg("end_s"), "(energy_j, dram_energy_j|None, uncovered_s, gaps)")
      .def("sequence", &PowerStreamingClient::sequence)
      .def(
          "wait_for_update",
          [](const PowerStreamingClient& c, std::uint64_t last_seen, double timeout_s) {
            const nanoseconds timeout = WaitTimeout(timeout_s);
            ReleaseGil release;
            return c.WaitForUpdate(last_seen, timeout);
          },
          py::arg("last_seen"), py::arg("timeout_s"))
      .def("status", &StreamStatuses)
      .def("stop", &PowerStreamingClient::Stop, py::call_guard<ReleaseGil>())
      .def_property_readonly("stopped", &PowerStreamingClient::stopped);
}

}  // namespace zeus::python
