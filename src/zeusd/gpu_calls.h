// Copyright 2026 The Zeus C++ Authors.
//
// What zeusd's GPU routes run on a GPU's own threads, and how a request waits
// for them (private to src/zeusd): the value a read route answers for one
// GPU, awaiting a device call with a deadline, the error for a GPU stuck
// inside a driver call, and the daemon's Unix clock. See daemon.h for why:
// a hung driver call must cost only its GPU.

#ifndef ZEUS_SRC_ZEUSD_GPU_CALLS_H_
#define ZEUS_SRC_ZEUSD_GPU_CALLS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/serial_worker.h"
#include "zeus/base/error.h"
#include "zeus/device/gpu.h"

namespace zeus::zeusd {

// `clock()` when set, else the system clock: Unix time in ms.
std::int64_t UnixNowMs(const std::function<std::int64_t()>& clock);

// The JSON value a GPU read route (`path`, e.g. "/gpu/get_power") answers
// for `gpu`; the driver's error otherwise. Runs on the GPU's reader thread.
Result<nlohmann::json> ReadGpuValue(device::Gpu& gpu, const std::string& path);

// kUnavailable when GPU `id`'s `worker` has been inside one call for longer
// than `timeout` (a request is then answered at once instead of queueing
// behind a hung driver call); nullopt otherwise. `role` names the call.
std::optional<Error> HungGpuError(std::size_t id, const base::SerialWorker& worker, std::chrono::milliseconds timeout,
                                  std::string_view role);

// The value of a task's future, waiting until `deadline`: kTimeout naming
// GPU `id`, `what` and `timeout` when it is not ready by then, kUnavailable
// when the task was dropped (the daemon is stopping).
template <typename T>
Result<T> AwaitGpu(std::future<Result<T>>& future, std::chrono::steady_clock::time_point deadline, std::size_t id,
                   std::chrono::milliseconds timeout, std::string_view what) {
  if (future.wait_until(deadline) != std::future_status::ready) {
    return Fail(ErrorCode::kTimeout, fmt::format("GPU {} did not answer {} within {} ms; its driver call may hang", id,
                                                 what, timeout.count()));
  }
  try {
    return future.get();
  } catch (const std::future_error&) {
    return Fail(ErrorCode::kUnavailable, fmt::format("GPU {}: zeusd is shutting down", id));
  }
}

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_GPU_CALLS_H_
