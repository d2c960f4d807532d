// Copyright 2026 The Zeus C++ Authors.
//
// zeusd's GPU routes (private to src/zeusd): the writes (POST /gpu/set_* and
// /gpu/reset_*) and the reads (GET /gpu/get_*), each GPU's calls on that
// GPU's own threads (a writer and a reader, base::SerialWorker) with a
// deadline. The rules they keep are daemon.h's: a hung GPU costs only
// itself; writes are applied in one global arrival order and validated for
// every GPU named before any is changed.
//
// Thread-safety: Write and Read may be called concurrently; StopWithin once,
// after the last of them.

#ifndef ZEUS_SRC_ZEUSD_GPU_ROUTES_H_
#define ZEUS_SRC_ZEUSD_GPU_ROUTES_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/serial_worker.h"
#include "http/http.h"
#include "zeus/device/gpu.h"
#include "zeus/monitor/counter_check.h"
#include "zeusd/gpu_calls.h"
#include "zeusd/gpu_ops.h"
#include "zeusd/query.h"

namespace zeus::zeusd {

// What the daemon read of a GPU at start-up.
struct GpuInfo {
  std::string name;
  std::string pci_address;
  bool cumulative_energy_available = false;
  std::optional<device::PowerLimitConstraints> constraints;  // unset: unreadable, not checked
};

struct GpuRouteOptions {
  GpuOpRunner runner;                     // carries out the writes; must be set
  std::chrono::milliseconds call_timeout;  // how long a read waits for one GPU
  std::chrono::milliseconds write_timeout;  // how long a blocking write waits for its GPUs
  std::function<std::int64_t()> unix_time_ms;  // null: the system clock
};

class GpuRoutes {
 public:
  // `gpus` (null: none) must outlive this; `info` has one entry per GPU.
  // Starts a writer and a reader thread per GPU.
  GpuRoutes(const device::GpuSet* gpus, std::vector<GpuInfo> info, GpuRouteOptions options);

  std::size_t count() const { return info_.size(); }
  const std::vector<GpuInfo>& info() const { return info_; }

  // POST /gpu/<op's name>?gpu_ids=...&<op's fields>&block=...
  http::HttpResponse Write(const Target& target, GpuOp op);
  // GET /gpu/get_power_limit, get_power_limit_constraints,
  // get_persistence_mode, get_cumulative_energy, get_power (?gpu_ids=...).
  http::HttpResponse Read(const Target& target);

  // Finishes the queued writes, then stops the writers and the readers,
  // noting each in `shutdown`.
  void StopWithin(ShutdownDeadline& shutdown);

  // Trust, but check (zeus/monitor/counter_check.h): each GPU's energy
  // counter against its power, every GPU's check on its own reader thread at
  // once, waiting at most `deadline` in all. A GPU whose counter disagrees is
  // distrusted (Gpu::DistrustEnergyCounter: its cumulative energy answers 400
  // from then on, as Zeus's daemon does) and its /discover entry says
  // cumulative_energy_available false. A GPU whose check has not ended by
  // then (a hung driver call) is reported inconclusive (error kTimeout) and left as it is; its
  // reader is then the hung thread the routes already answer 503 for. Call
  // once, before serving.
  std::vector<monitor::EnergyCounterCheck> CheckEnergyCounters(std::chrono::milliseconds deadline);

 private:
  // The request's GPUs and the write's arguments, or the answer that ends it.
  struct WriteRequest {
    std::vector<std::size_t> ids;
    GpuOpArgs args;
    bool block = false;
  };
  std::optional<http::HttpResponse> ParseWrite(const Target& target, GpuOp op, WriteRequest& request) const;
  // Per GPU: a power limit outside its range, or a writer hung past its deadline.
  std::map<std::size_t, Error> CheckWrite(const WriteRequest& request, GpuOp op) const;
  // Queues the write on every GPU of the request under one lock; the futures
  // of a blocking request.
  std::vector<std::pair<std::size_t, std::future<Status>>> PostWrite(const WriteRequest& request, GpuOp op);

  const device::GpuSet* gpus_;
  std::vector<GpuInfo> info_;
  GpuRouteOptions options_;
  std::vector<std::unique_ptr<base::SerialWorker>> writers_;  // one per GPU
  std::vector<std::unique_ptr<base::SerialWorker>> readers_;  // one per GPU
  std::mutex post_mutex_;  // the writes of one request are queued on their GPUs together
};

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_GPU_ROUTES_H_
