// Copyright 2026 The Zeus C++ Authors.
//
// zeusd's HTTP API over a GpuSet and a CpuSet: routes, query parameters, JSON
// answers, status codes and error bodies as zeusd's (zeus-reference 3.4), the
// authentication middleware, the power streams (A15), and GET /metrics.
//
// GET /metrics (group metrics): the Prometheus text exposition 0.0.4 of
// zeus::exporter's Collector over the daemon's GpuSet and CpuSet, the same
// series as `zeus exporter`. Open, like /discover and /time: it needs no
// token even when tokens are required, so enabling the group publishes those
// series (RAPL energy included when the daemon has CPUs) to anyone who can
// reach the socket or port.
//
// Answers: 200 with the route's JSON; errors as {"error": "<message>"} with
// 400 (bad input, an id out of range, a driver's invalid-argument or
// not-supported), 401 (no or bad token, with WWW-Authenticate), 403 (a token
// without the scope, or the driver's no-permission), 404 (a disabled API
// group whatever the token, an unknown route), 405 (wrong method), 500
// (another driver error, its not-found and timeout included; a failed
// override command), 503 (a GPU that did not answer within its deadline).
// Failures of several devices are {"errors": {"<id>": "<message>"}} with the
// worst status. An error's status is zeusd's table in the HTTP layer
// (http::kZeusdErrorStatuses, src/http/http_status.h; answers.h).
//
// The parts: middleware.h (the middleware in zeusd's order), gpu_routes.h
// (GPU writes and reads on each GPU's threads), cpu_routes.h, power_pollers.h
// (the pollers and the stream routes); daemon.cc holds the route table.
//
// A hung driver costs only its GPU. Every driver call runs on a thread of
// that GPU (one for reads, one for writes, one poller for its stream) and a
// request waits for it at most gpu_call_timeout (writes: gpu_write_timeout).
// A GPU whose reader or writer is still inside a call past that deadline is
// answered 503 at once, without queueing more calls behind the hung one;
// other GPUs, /discover, /time, the CPUs and tokens are unaffected, as long
// as the HTTP server has a worker free (each waits at most the deadline).
//
// Writes: each GPU applies the writes of all requests one at a time, in one
// global arrival order (a request's writes are queued on its GPUs under one
// lock), so concurrent requests that set several GPUs leave them all at the
// values of the same, last request. A set is validated for every GPU named
// (ids, power limit within each GPU's constraints as read at start-up)
// before any GPU is changed, but it is not atomic: when the driver fails on
// one GPU the others keep their new values, and the answer names each
// failure (zeusd's API has no rollback). A blocking request waits for its
// GPUs' results; a non-blocking one is answered once queued.
//
// Thread-safety: Handle may be called concurrently (from the HTTP server's
// worker threads).

#ifndef ZEUS_SRC_ZEUSD_DAEMON_H_
#define ZEUS_SRC_ZEUSD_DAEMON_H_

#include <cstddef>
#include <cstdint>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/http.h"
#include "zeus/base/error.h"
#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/exporter/collector.h"
#include "zeusd/auth.h"
#include "zeusd/gpu_ops.h"

namespace zeus::zeusd {

struct DaemonOptions {
  std::vector<ApiGroup> enabled_groups{ApiGroup::kGpuControl, ApiGroup::kGpuRead, ApiGroup::kCpuRead};
  // Set: tokens are required (HS256 with this key). Unset: tokens are ignored
  // and /auth/* is 404.
  std::optional<std::string> signing_key;
  double gpu_power_poll_hz = 20.0;
  double cpu_power_poll_hz = 10.0;
  // Null: ApplyGpuOp.
  GpuOpRunner gpu_op_runner;
  // Unix time in ms; null: the system clock. For token expiry and answers'
  // timestamps.
  std::function<std::int64_t()> unix_time_ms;
  // The Collector behind /metrics, made (and sampling) only when the metrics
  // group is enabled. A null log writes "zeusd: metrics: ..." to stderr.
  exporter::CollectorOptions metrics;
  // How long a request waits for one GPU's driver call (reads); also the
  // deadline for the device threads to stop at shutdown.
  std::chrono::milliseconds gpu_call_timeout{5000};
  // How long a blocking write waits for its GPU; zero: gpu_call_timeout.
  // zeusd sets it above the longest command override.
  std::chrono::milliseconds gpu_write_timeout{0};
  // Trust, but check: at start, each GPU's energy counter against its power
  // on the GPU's own reader thread (GpuRoutes::CheckEnergyCounters), at most
  // this long in all, before /metrics starts; a disagreeing counter is then
  // not used (one line on stderr). Zero: no check.
  std::chrono::milliseconds energy_counter_check_deadline{0};
};

class Daemon {
 public:
  // `gpus` and `cpus` may be null (no GPUs, no CPUs) and must outlive the
  // Daemon. Reads the GPUs' names and PCI addresses once, for /discover.
  // With the metrics group, starts the Collector; if that fails the error is
  // logged and /metrics answers it with 500.
  Daemon(DaemonOptions options, const device::GpuSet* gpus, const device::CpuSet* cpus);
  // StopDeviceThreads(gpu_call_timeout) unless it was called already.
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  http::HttpResponse Handle(const http::HttpRequest& request);

  // Finishes the queued GPU writes and stops the device threads and the
  // metrics collector, waiting at most `deadline` for each. False: a driver
  // call is still hung; its thread is left running (the daemon's state is
  // then never freed, since that call still uses it), and a process should
  // exit without running destructors that tear down the devices under it
  // (zeusd calls _exit). Call once, after the HTTP server has stopped.
  bool StopDeviceThreads(std::chrono::milliseconds deadline);

  // Power polls made so far by the GPU and CPU pollers, per device, and the
  // times each poller has gone idle (no stream listens; its start included):
  // what a test of demand-driven polling watches.
  std::vector<std::uint64_t> GpuPollCounts() const;
  std::vector<std::uint64_t> CpuPollCounts() const;
  std::vector<std::uint64_t> GpuPollerIdles() const;
  std::vector<std::uint64_t> CpuPollerIdles() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// "00000000:1A:00.0" -> "0000:1a:00.0" (zeusd's dddd:bb:dd.0, function 0,
// lower case, as Linux names the device under /sys/bus/pci/devices); a domain
// wider than 16 bits keeps its digits ("00010000:01:00.0" -> "10000:01:00.0");
// the input unchanged when it does not parse.
std::string ZeusdPciAddress(std::string_view nvml_bus_id);

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_DAEMON_H_
