// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/gpu_calls.h"

#include <algorithm>
#include <cstdio>

namespace zeus::zeusd {

using json = nlohmann::json;

std::int64_t UnixNowMs(const std::function<std::int64_t()>& clock) {
  if (clock) return clock();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<json> ReadGpuValue(device::Gpu& gpu, const std::string& path) {
  if (path == "/gpu/get_power_limit") {
    auto mw = gpu.PowerLimitMw();
    if (!mw) return Fail(mw.error());
    return json{{"power_limit_mw", *mw}};
  }
  if (path == "/gpu/get_power_limit_constraints") {
    auto c = gpu.PowerLimitConstraintsMw();
    if (!c) return Fail(c.error());
    return json{{"min_power_limit_mw", c->min_mw}, {"max_power_limit_mw", c->max_mw}};
  }
  if (path == "/gpu/get_persistence_mode") {
    auto enabled = gpu.PersistenceMode();
    if (!enabled) return Fail(enabled.error());
    return json{{"enabled", *enabled}};
  }
  if (path == "/gpu/get_cumulative_energy") {
    auto mj = gpu.TotalEnergyMj();
    if (!mj) return Fail(mj.error());
    return json{{"energy_mj", *mj}};
  }
  auto mw = gpu.PowerUsageMw();  // /gpu/get_power
  if (!mw) return Fail(mw.error());
  return json(*mw);
}

std::optional<Error> HungGpuError(std::size_t id, const base::SerialWorker& worker, std::chrono::milliseconds timeout,
                                  std::string_view role) {
  const auto busy = worker.busy_for();
  if (busy <= timeout) return std::nullopt;
  return Error(ErrorCode::kUnavailable,
               fmt::format("GPU {} has not answered a driver call ({}) for {:.1f} s; its driver may hang. Other GPUs "
                           "still answer; retry later",
                           id, role, std::chrono::duration<double>(busy).count()),
               NativeSpace::kHttp, kGpuPastDeadlineStatus);
}

std::chrono::milliseconds ShutdownDeadline::left() const {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(end_ - std::chrono::steady_clock::now()));
}

void ShutdownDeadline::Note(bool stopped, std::string_view what, std::size_t id) {
  if (stopped) return;
  clean_ = false;
  std::fprintf(stderr, "zeusd: %.*s %zu is still inside a driver call; leaving it behind\n",
               static_cast<int>(what.size()), what.data(), id);
}

}  // namespace zeus::zeusd
