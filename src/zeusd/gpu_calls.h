// Copyright 2026 The Zeus C++ Authors.
//
// What zeusd's GPU routes run on a GPU's own threads, and how a request waits
// for them (private to src/zeusd): the value a read route answers for one
// GPU, awaiting a device call with a deadline, the error for a GPU stuck
// inside a driver call, stopping the device threads with one deadline, and
// the daemon's Unix clock. See daemon.h for why: a hung driver call must cost
// only its GPU.
//
// A GPU past its deadline is answered 503 (retry later; other GPUs still
// answer): zeusd's own status for a case the original daemon does not have,
// carried by the error itself (NativeSpace::kHttp, kGpuPastDeadlineStatus),
// so that zeusd's table (http::kZeusdErrorStatuses) stays the original's for
// the driver's own errors, its timeouts included (500).

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

// The status of a GPU that did not answer within its deadline.
inline constexpr int kGpuPastDeadlineStatus = 503;

// `clock()` when set, else the system clock: Unix time in ms.
std::int64_t UnixNowMs(const std::function<std::int64_t()>& clock);

// The JSON value a GPU read route (`path`, e.g. "/gpu/get_power") answers
// for `gpu`; the driver's error otherwise. Runs on the GPU's reader thread.
Result<nlohmann::json> ReadGpuValue(device::Gpu& gpu, const std::string& path);

// kUnavailable (answered kGpuPastDeadlineStatus) when GPU `id`'s `worker` has
// been inside one call for longer than `timeout` (a request is then answered
// at once instead of queueing behind a hung driver call); nullopt otherwise.
// `role` names the call.
std::optional<Error> HungGpuError(std::size_t id, const base::SerialWorker& worker, std::chrono::milliseconds timeout,
                                  std::string_view role);

// The value of a task's future, waiting until `deadline`: kTimeout naming
// GPU `id`, `what` and `timeout` when it is not ready by then, kUnavailable
// when the task was dropped (the daemon is stopping); both are answered
// kGpuPastDeadlineStatus.
template <typename T>
Result<T> AwaitGpu(std::future<Result<T>>& future, std::chrono::steady_clock::time_point deadline, std::size_t id,
                   std::chrono::milliseconds timeout, std::string_view what) {
  if (future.wait_until(deadline) != std::future_status::ready) {
    return Fail(Error(ErrorCode::kTimeout,
                      fmt::format("GPU {} did not answer {} within {} ms; its driver call may hang", id, what,
                                  timeout.count()),
                      NativeSpace::kHttp, kGpuPastDeadlineStatus));
  }
  try {
    return future.get();
  } catch (const std::future_error&) {
    return Fail(Error(ErrorCode::kUnavailable, fmt::format("GPU {}: zeusd is shutting down", id), NativeSpace::kHttp,
                      kGpuPastDeadlineStatus));
  }
}

// One deadline for stopping all of the daemon's device threads.
class ShutdownDeadline {
 public:
  explicit ShutdownDeadline(std::chrono::milliseconds deadline)
      : end_(std::chrono::steady_clock::now() + deadline) {}

  // What is left of the deadline; zero once it has passed.
  std::chrono::milliseconds left() const;
  // Records whether thread `what` `id` stopped; one that did not is still
  // inside a driver call and is named on stderr.
  void Note(bool stopped, std::string_view what, std::size_t id);
  // Every thread noted so far stopped.
  bool clean() const { return clean_; }

 private:
  std::chrono::steady_clock::time_point end_;
  bool clean_ = true;
};

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_GPU_CALLS_H_
