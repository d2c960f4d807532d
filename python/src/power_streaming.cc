// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.power_streaming: the native PowerStreamingClient
// (include/zeus/zeusd/power_streaming.h) under
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
#include "zeus/zeusd/power_streaming.h"

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

nanoseconds FromSeconds(std::optional<double> s, nanoseconds if_none) {
  if (!s) return if_none;
  if (!std::isfinite(*s)) {
    ThrowError(Error(ErrorCode::kInvalidArgument, "times must be finite numbers of seconds"));
  }
  return std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(*s));
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
                                                  double timeout_s) {
  if (!std::isfinite(reconnect_delay_s) || reconnect_delay_s < 0) {
    ThrowError(Error(ErrorCode::kInvalidArgument, "reconnect_delay_s must be a finite number of seconds >= 0"));
  }
  std::vector<zeusd::PowerStreamingTarget> targets;
  for (const auto& [socket_path, host_port, token, gpu_ids, cpu_ids] : servers) {
    zeusd::PowerStreamingTarget target;
    target.config.socket_path = socket_path.value_or("");
    if (target.config.socket_path.empty()) target.config.host_port = host_port.value_or("");
    target.config.token = token.value_or("");
    target.config.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000.0));
    target.gpu_ids = gpu_ids;
    target.cpu_ids = cpu_ids;
    targets.push_back(std::move(target));
  }
  zeusd::PowerStreamingOptions options;
  options.reconnect_delay = std::chrono::milliseconds(static_cast<long long>(std::llround(reconnect_delay_s * 1000)));
  options.clock = &TheUnixClock();
  Result<std::unique_ptr<PowerStreamingClient>> client = [&] {
    py::gil_scoped_release release;
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

py::list Status(const PowerStreamingClient& c) {
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
           py::arg("timeout_s") = 10.0,
           "Connects to every server, measures clock offsets and starts the streams. servers: "
           "[(socket_path, host_port, token, gpu_indices, cpu_indices)].")
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
            const nanoseconds timeout = FromSeconds(std::max(0.0, timeout_s), {});
            py::gil_scoped_release release;
            return c.WaitForUpdate(last_seen, timeout);
          },
          py::arg("last_seen"), py::arg("timeout_s"))
      .def("status", &Status)
      .def("stop", &PowerStreamingClient::Stop, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("stopped", &PowerStreamingClient::stopped);
}

}  // namespace zeus::python
