// Copyright 2026 The Zeus C++ Authors.
//
// The daemon's power pollers and its stream routes (private to src/zeusd):
// one Poller (power_stream.h) per GPU and per CPU, each polling only while a
// stream listens to it, and GET /gpu/stream_power and /cpu/stream_power,
// which subscribe a new SSE stream to the pollers of the devices asked for.
//
// What a poller publishes (W15): a GPU's power when it changed, a CPU's
// power over the time measured between two reads when a value changed, and
// either at least once a second even when nothing changed, so that a silent
// stream means a stalled daemon, never a constant draw.
//
// Thread-safety: Stream and the counts may be called concurrently; StopWithin
// once, after the last Stream.

#ifndef ZEUS_SRC_ZEUSD_POWER_POLLERS_H_
#define ZEUS_SRC_ZEUSD_POWER_POLLERS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "http/http.h"
#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeusd/gpu_calls.h"
#include "zeusd/power_stream.h"
#include "zeusd/query.h"

namespace zeus::zeusd {

// The period of `hz` polls a second; a second when `hz` is not positive.
std::chrono::microseconds PeriodOf(double hz);

class PowerPollers {
 public:
  // `gpus` and `cpus` (null: none) must outlive every poll, which may outlive
  // this object when a driver call hangs. Events are stamped with
  // `unix_time_ms` (null: the system clock).
  PowerPollers(const device::GpuSet* gpus, const device::CpuSet* cpus, double gpu_poll_hz, double cpu_poll_hz,
               const std::function<std::int64_t()>& unix_time_ms);

  // GET /gpu/stream_power?gpu_ids=... (`gpu`) or /cpu/stream_power?cpu_ids=...
  http::HttpResponse Stream(const Target& target, bool gpu);

  // Per device: polls made so far, and times its poller has gone idle (no
  // subscriber), its start included.
  std::vector<std::uint64_t> PollCounts(bool gpu) const;
  std::vector<std::uint64_t> IdleCounts(bool gpu) const;

  // Stops every poller, noting each in `shutdown`.
  void StopWithin(ShutdownDeadline& shutdown);

 private:
  const std::vector<std::shared_ptr<Poller>>& Of(bool gpu) const { return gpu ? gpu_pollers_ : cpu_pollers_; }

  std::vector<std::shared_ptr<Poller>> gpu_pollers_;
  std::vector<std::shared_ptr<Poller>> cpu_pollers_;
};

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_POWER_POLLERS_H_
