// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/power_pollers.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeusd/answers.h"
#include "zeusd/cpu_routes.h"

namespace zeus::zeusd {
namespace {

using json = nlohmann::json;

// Captures no daemon object: a poll stuck in a hung driver call may outlive
// the daemon.
Poller::PollFn GpuPollFn(const device::GpuSet* gpus, std::function<std::int64_t()> clock, std::size_t id) {
  struct State {
    std::optional<std::uint32_t> last_mw;
    std::chrono::steady_clock::time_point last_sent;
  };
  auto state = std::make_shared<State>();
  return [gpus, clock = std::move(clock), id, state](bool resumed) -> std::optional<std::string> {
    if (resumed) state->last_mw.reset();
    auto mw = gpus->gpu(id).PowerUsageMw();
    if (!mw) {
      std::fprintf(stderr, "zeusd: reading GPU %zu's power: %s\n", id, mw.error().message().c_str());
      return std::nullopt;
    }
    const auto now = std::chrono::steady_clock::now();
    if (state->last_mw == *mw && now - state->last_sent < std::chrono::seconds(1)) return std::nullopt;
    state->last_mw = *mw;
    state->last_sent = now;
    return json{{"timestamp_ms", UnixNowMs(clock)}, {"gpu_id", id}, {"power_mw", *mw}}.dump();
  };
}

Poller::PollFn CpuPollFn(const device::CpuSet* cpus, std::function<std::int64_t()> clock, std::size_t id) {
  struct State {
    std::optional<CpuReading> last;
    std::chrono::steady_clock::time_point last_read;
    std::optional<std::pair<std::uint64_t, std::optional<std::uint64_t>>> last_sent_mw;
    std::chrono::steady_clock::time_point last_sent;
  };
  auto state = std::make_shared<State>();
  return [cpus, clock = std::move(clock), id, state](bool resumed) -> std::optional<std::string> {
    if (resumed) {
      state->last.reset();
      state->last_sent_mw.reset();
    }
    auto reading = ReadCpu(*cpus, id);
    const auto now = std::chrono::steady_clock::now();
    if (!reading) {
      std::fprintf(stderr, "zeusd: reading CPU %zu's energy: %s\n", id, reading.error().message().c_str());
      return std::nullopt;
    }
    std::optional<CpuReading> previous = state->last;
    const auto previous_time = state->last_read;
    state->last = *reading;
    state->last_read = now;
    if (!previous) return std::nullopt;  // the baseline
    const double elapsed_s = std::chrono::duration<double>(now - previous_time).count();
    const std::uint64_t cpu_mw = PowerMw(reading->package_mj - previous->package_mj, elapsed_s);
    std::optional<std::uint64_t> dram_mw;
    if (reading->dram_mj && previous->dram_mj) dram_mw = PowerMw(*reading->dram_mj - *previous->dram_mj, elapsed_s);
    const auto values = std::make_pair(cpu_mw, dram_mw);
    if (state->last_sent_mw == values && now - state->last_sent < std::chrono::seconds(1)) return std::nullopt;
    state->last_sent_mw = values;
    state->last_sent = now;
    json event = {{"timestamp_ms", UnixNowMs(clock)}, {"cpu_id", id}, {"cpu_mw", cpu_mw}, {"dram_mw", nullptr}};
    if (dram_mw) event["dram_mw"] = *dram_mw;
    return event.dump();
  };
}

}  // namespace

std::chrono::microseconds PeriodOf(double hz) {
  const double us = hz > 0 ? 1e6 / hz : 1e6;
  return std::chrono::microseconds(std::max<std::int64_t>(1, static_cast<std::int64_t>(us)));
}

PowerPollers::PowerPollers(const device::GpuSet* gpus, const device::CpuSet* cpus, double gpu_poll_hz,
                           double cpu_poll_hz, const std::function<std::int64_t()>& unix_time_ms) {
  const std::size_t gpu_count = gpus == nullptr ? 0 : gpus->size();
  for (std::size_t i = 0; i < gpu_count; ++i) {
    gpu_pollers_.push_back(std::make_shared<Poller>(fmt::format("zeusd-gpoll{}", i), PeriodOf(gpu_poll_hz),
                                                    GpuPollFn(gpus, unix_time_ms, i)));
  }
  const std::size_t cpu_count = cpus == nullptr ? 0 : cpus->size();
  for (std::size_t i = 0; i < cpu_count; ++i) {
    cpu_pollers_.push_back(std::make_shared<Poller>(fmt::format("zeusd-cpoll{}", i), PeriodOf(cpu_poll_hz),
                                                    CpuPollFn(cpus, unix_time_ms, i)));
  }
}

http::HttpResponse PowerPollers::Stream(const Target& target, bool gpu) {
  const std::string_view name = gpu ? "gpu_ids" : "cpu_ids";
  QueryFields fields(target, {name});
  auto ids = OptionalIdList(fields, name, Of(gpu).size(), gpu ? "GPU" : "CPU");
  if (!ids) return ErrorAnswer(ids.error());
  if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
  std::vector<std::shared_ptr<Poller>> pollers;
  for (std::size_t id : *ids) pollers.push_back(Of(gpu)[id]);
  http::HttpResponse response;
  response.status = 200;
  response.content_type = "text/event-stream";
  response.headers.emplace_back("Cache-Control", "no-cache");
  response.stream = std::make_shared<Subscription>(std::move(pollers));
  return response;
}

std::vector<std::uint64_t> PowerPollers::PollCounts(bool gpu) const {
  std::vector<std::uint64_t> counts;
  for (const auto& poller : Of(gpu)) counts.push_back(poller->polls());
  return counts;
}

std::vector<std::uint64_t> PowerPollers::IdleCounts(bool gpu) const {
  std::vector<std::uint64_t> counts;
  for (const auto& poller : Of(gpu)) counts.push_back(poller->idles());
  return counts;
}

void PowerPollers::StopWithin(ShutdownDeadline& shutdown) {
  for (std::size_t i = 0; i < gpu_pollers_.size(); ++i) {
    shutdown.Note(gpu_pollers_[i]->StopWithin(shutdown.left()), "the power poller of GPU", i);
  }
  for (std::size_t i = 0; i < cpu_pollers_.size(); ++i) {
    shutdown.Note(cpu_pollers_[i]->StopWithin(shutdown.left()), "the power poller of CPU", i);
  }
}

}  // namespace zeus::zeusd
