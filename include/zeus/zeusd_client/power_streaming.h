// Copyright 2026 The Zeus C++ Authors.
//
// zeus::zeusd::PowerStreamingClient: follows the power streams of one or more
// zeusd daemons (GET /gpu/stream_power and /cpu/stream_power, server-sent
// events) and keeps, per endpoint and device, a bounded power TIMELINE, the
// latest reading, and the energy between two times (Zeus's F4 client, without
// W15's weaknesses: a timeline rather than the latest value only, an update
// wait that cannot miss an update, and energy that says when it is not
// complete).
//
// Time: every timestamp here is in the client's Clock (options.clock, by
// default SteadyClock()), in nanoseconds since that clock's origin, the same
// scale as PowerMonitor's readings. A daemon stamps its events with its Unix
// wall-clock ms; the client maps them with a per-endpoint offset measured at
// Start() with `clock_offset_round_trips` GET /time round trips:
//   offset = median over round trips of ((t_before + t_after) / 2 - daemon_time)
// and client time = daemon time + offset. The daemon's own stamp is kept too
// (PowerSample::daemon_timestamp_ms).
//
// Samples and energy. zeusd sends a GPU's power when it changed and at least
// once a second when it did not; a CPU's power (the average since the
// daemon's previous read) likewise, so for CPUs the step function below runs
// up to one daemon poll period late. A sample's value is taken to HOLD from
// its time until the next sample of that device (a step function), but never
// longer than `max_sample_hold` and never across a lost connection: the time
// after that, until the next sample, is a GAP whose energy is unknown.
// EnergyMj() integrates the step function over [t0, t1]; the part before the
// first sample, after the stream was lost, or beyond max_sample_hold is not
// counted and is reported in EnergyEstimate::uncovered / gaps (complete() is
// false). The last sample holds up to now (at most max_sample_hold) while its
// stream is connected; once the stream is lost, up to the loss.
//
// Errors (Result/Status; never exceptions):
//   Start(): kInvalidArgument - no targets, two targets with the same endpoint,
//              an id the daemon does not have, bad options;
//            kUnavailable     - a daemon cannot be reached (named; W13b: no
//              daemon is silently left out);
//            kPermissionDenied / kFailedPrecondition - ids were asked for
//              explicitly but the daemon does not grant that scope (named).
//   After Start(), a stream that fails is retried every reconnect_delay until
//   Stop(), except on 401/403: then that stream gives up and keeps the error
//   in StreamStatus::last_error (given_up = true).
//
// Thread-safety: every method may be called from any thread at once.

#ifndef ZEUS_ZEUSD_CLIENT_POWER_STREAMING_H_
#define ZEUS_ZEUSD_CLIENT_POWER_STREAMING_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/zeusd_client/client.h"

namespace zeus::zeusd {

enum class DeviceKind { kGpu, kCpu };

// "gpu" or "cpu".
const char* DeviceKindName(DeviceKind kind);

// One daemon to follow. Per device kind (Zeus's `_resolve_streaming`):
//   nullopt   - stream every device of that kind if the daemon has some and
//               the group is enabled and the token has the scope; otherwise
//               skip that kind silently;
//   empty     - never stream that kind;
//   non-empty - these ids; each must exist on the daemon (kInvalidArgument)
//               and the scope must be granted (kPermissionDenied for a
//               missing/rejected token or scope, kFailedPrecondition for a
//               group the daemon does not enable; the message names it).
struct PowerStreamingTarget {
  ZeusdConfig config;
  std::optional<std::vector<int>> gpu_ids;
  std::optional<std::vector<int>> cpu_ids;
};

struct PowerStreamingOptions {
  // Between a failed or lost stream and the next try.
  std::chrono::milliseconds reconnect_delay{1000};
  // GET /time round trips per endpoint for the clock offset (>= 1).
  int clock_offset_round_trips = 5;
  // Samples kept per device (the oldest are dropped first; >= 2).
  std::size_t timeline_capacity = 100000;
  // The longest a sample's value is taken to hold without a newer one (zeusd
  // repeats an unchanged value every second).
  std::chrono::milliseconds max_sample_hold{3000};
  // A connected stream silent this long is taken as stalled: dropped and
  // reconnected (zeusd sends every streamed device at least once a second).
  // 0: never.
  std::chrono::milliseconds stall_timeout{10000};
  // The local clock for every timestamp (see the file comment). Must outlive
  // the client. Null: SteadyClock(). Waits (reconnect_delay, WaitForUpdate)
  // are in real time whatever the clock.
  const Clock* clock = nullptr;
};

// One event of a device, in client time.
struct PowerSample {
  std::chrono::nanoseconds time{0};      // daemon_timestamp_ms + the endpoint's offset
  std::int64_t daemon_timestamp_ms = 0;  // as the daemon stamped it (Unix ms)
  std::uint64_t power_mw = 0;            // GPU power, or CPU package power
  std::optional<std::uint64_t> dram_mw;  // CPU only, when the daemon reports DRAM
};

struct CpuPowerReading {
  double cpu_w = 0;
  std::optional<double> dram_w;
};

// The latest reading of every device of one endpoint (Zeus's PowerReadings).
struct PowerReadings {
  // The latest sample time of any device of this endpoint (max, so it never
  // goes back); 0 before the first event.
  std::chrono::nanoseconds time{0};
  std::map<int, double> gpu_power_w;
  std::map<int, CpuPowerReading> cpu_power_w;
};

struct EnergyEstimate {
  double energy_mj = 0;                 // GPU, or CPU package
  std::optional<double> dram_energy_mj;  // CPU with DRAM readings
  // The part of [t0, t1] with no known power (before the first sample, after
  // a lost connection, beyond max_sample_hold, or after the last sample while
  // disconnected), and the number of such stretches.
  std::chrono::nanoseconds uncovered{0};
  int gaps = 0;
  bool complete() const { return gaps == 0; }
};

// The state of one stream (one endpoint, one device kind).
struct StreamStatus {
  std::string endpoint;  // ZeusdConfig::endpoint()
  DeviceKind kind = DeviceKind::kGpu;
  std::vector<int> ids;    // the devices streamed
  bool connected = false;  // a 200 response is being read now
  bool given_up = false;   // 401/403, or the daemon stopped granting the scope
  std::optional<Error> last_error;  // the latest failure, kept after reconnecting
  std::uint64_t connects = 0;       // 200 responses received
  std::uint64_t reconnects = 0;     // connects after the first one
  std::uint64_t failures = 0;       // tries that failed (transport or status)
  std::uint64_t events = 0;         // events stored
  std::uint64_t malformed = 0;      // events logged and skipped
};

class PowerStreamingClient {
 public:
  // Connects to every target (ZeusdClient::Connect: /discover, auth),
  // resolves the devices to stream, measures each endpoint's clock offset,
  // then starts one thread per streamed kind per endpoint. Returns once the
  // threads are started (not once connected: wait with WaitForUpdate or
  // Streams()). Errors: see the file comment.
  static Result<std::unique_ptr<PowerStreamingClient>> Start(std::vector<PowerStreamingTarget> targets,
                                                             PowerStreamingOptions options = {});
  virtual ~PowerStreamingClient() = default;  // Stop()s

  // The endpoints in the order given to Start().
  virtual std::vector<std::string> Endpoints() const = 0;
  // An endpoint's clock offset (client time - daemon time); kNotFound for an
  // unknown endpoint.
  virtual Result<std::chrono::nanoseconds> ClockOffset(const std::string& endpoint) const = 0;

  // Every endpoint's latest readings (a copy), by endpoint. An endpoint whose
  // streams have sent nothing yet has empty maps.
  virtual std::map<std::string, PowerReadings> Latest() const = 0;

  // The samples of one device with t0 <= time <= t1 (a copy, oldest first).
  // kNotFound for an endpoint or device not streamed.
  virtual Result<std::vector<PowerSample>> Timeline(
      const std::string& endpoint, DeviceKind kind, int id,
      std::chrono::nanoseconds t0 = std::chrono::nanoseconds::min(),
      std::chrono::nanoseconds t1 = std::chrono::nanoseconds::max()) const = 0;

  // The energy of one device over [t0, t1] (client time; see the file
  // comment for what counts). kInvalidArgument for t1 < t0; kNotFound for an
  // endpoint or device not streamed; kFailedPrecondition when t0 is before
  // the oldest sample still in the timeline while older ones were dropped.
  virtual Result<EnergyEstimate> EnergyMj(const std::string& endpoint, DeviceKind kind, int id,
                                          std::chrono::nanoseconds t0, std::chrono::nanoseconds t1) const = 0;

  // A counter that grows by one with every stored event and every stream
  // status change (connect, loss, give-up, stop). Starts at 0.
  virtual std::uint64_t sequence() const = 0;
  // Blocks until sequence() > last_seen_seq, the timeout passes, or Stop();
  // returns sequence() then. Pass the value it returned last time: an update
  // between two calls is never missed.
  virtual std::uint64_t WaitForUpdate(std::uint64_t last_seen_seq, std::chrono::nanoseconds timeout) const = 0;

  // Every stream's state, in endpoint order, GPU before CPU.
  virtual std::vector<StreamStatus> Streams() const = 0;

  // Stops every stream (interrupting blocked reads) and joins the threads.
  // Idempotent; the data stays readable afterwards. Wakes WaitForUpdate.
  virtual void Stop() = 0;
  virtual bool stopped() const = 0;
};

}  // namespace zeus::zeusd

#endif  // ZEUS_ZEUSD_CLIENT_POWER_STREAMING_H_
