// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/gpu_routes.h"

#include <cstdio>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeusd/answers.h"

namespace zeus::zeusd {
namespace {

using json = nlohmann::json;

// The query fields of a write, in the order zeusd's errors list them.
std::vector<std::string_view> WriteFields(GpuOp op) {
  std::vector<std::string_view> names{"gpu_ids"};
  switch (op) {
    case GpuOp::kSetPowerLimit: names.push_back("power_limit_mw"); break;
    case GpuOp::kSetPersistenceMode: names.push_back("enabled"); break;
    case GpuOp::kSetGpuLockedClocks:
    case GpuOp::kSetMemLockedClocks:
      names.push_back("min_clock_mhz");
      names.push_back("max_clock_mhz");
      break;
    default: break;
  }
  names.push_back("block");
  return names;
}

// The write's own fields into `args`.
Status ParseWriteArgs(QueryFields& fields, GpuOp op, GpuOpArgs& args) {
  constexpr std::uint64_t kU32Max = 0xffffffffu;
  switch (op) {
    case GpuOp::kSetPowerLimit: {
      auto mw = fields.RequireUnsigned("power_limit_mw", kU32Max);
      if (!mw) return Fail(mw.error());
      args.power_limit_mw = static_cast<std::uint32_t>(*mw);
      return OkStatus();
    }
    case GpuOp::kSetPersistenceMode: {
      auto enabled = fields.RequireBool("enabled");
      if (!enabled) return Fail(enabled.error());
      args.enabled = *enabled;
      return OkStatus();
    }
    case GpuOp::kSetGpuLockedClocks:
    case GpuOp::kSetMemLockedClocks: {
      auto min_mhz = fields.RequireUnsigned("min_clock_mhz", kU32Max);
      if (!min_mhz) return Fail(min_mhz.error());
      auto max_mhz = fields.RequireUnsigned("max_clock_mhz", kU32Max);
      if (!max_mhz) return Fail(max_mhz.error());
      args.min_clock_mhz = static_cast<unsigned>(*min_mhz);
      args.max_clock_mhz = static_cast<unsigned>(*max_mhz);
      return OkStatus();
    }
    default: return OkStatus();
  }
}

}  // namespace

GpuRoutes::GpuRoutes(const device::GpuSet* gpus, std::vector<GpuInfo> info, GpuRouteOptions options)
    : gpus_(gpus), info_(std::move(info)), options_(std::move(options)) {
  for (std::size_t i = 0; i < info_.size(); ++i) {
    writers_.push_back(std::make_unique<base::SerialWorker>(fmt::format("zeusd-gpu{}", i)));
    readers_.push_back(std::make_unique<base::SerialWorker>(fmt::format("zeusd-gread{}", i)));
  }
}

void GpuRoutes::StopWithin(ShutdownDeadline& shutdown) {
  for (std::size_t i = 0; i < writers_.size(); ++i) {
    shutdown.Note(writers_[i]->StopWithin(shutdown.left()), "the writer of GPU", i);
  }
  for (std::size_t i = 0; i < readers_.size(); ++i) {
    shutdown.Note(readers_[i]->StopWithin(shutdown.left()), "the reader of GPU", i);
  }
}

std::vector<monitor::EnergyCounterCheck> GpuRoutes::CheckEnergyCounters(std::chrono::milliseconds deadline) {
  if (gpus_ == nullptr) return {};
  std::vector<monitor::EnergyCounterCheck> checks = monitor::CheckEnergyCountersOnGpuThreads(
      *gpus_, [this](std::size_t id, std::function<void()> task) { readers_[id]->Post(std::move(task)); }, deadline);
  for (std::size_t id = 0; id < checks.size(); ++id) {
    if (monitor::ShouldDistrust(checks[id])) info_[id].cumulative_energy_available = false;
  }
  return checks;
}

std::optional<http::HttpResponse> GpuRoutes::ParseWrite(const Target& target, GpuOp op, WriteRequest& request) const {
  QueryFields fields(target, WriteFields(op));
  auto ids_text = fields.Require("gpu_ids");
  if (!ids_text) return ErrorAnswer(ids_text.error());
  auto ids = ParseIdList("gpu_ids", *ids_text, count(), "GPU");
  if (!ids) return ErrorAnswer(ids.error());
  request.ids = std::move(*ids);
  if (Status parsed = ParseWriteArgs(fields, op, request.args); !parsed) return ErrorAnswer(parsed.error());
  auto block = fields.RequireBool("block");
  if (!block) return ErrorAnswer(block.error());
  request.block = *block;
  if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
  return std::nullopt;
}

std::map<std::size_t, Error> GpuRoutes::CheckWrite(const WriteRequest& request, GpuOp op) const {
  std::map<std::size_t, Error> errors;
  const std::uint32_t mw = request.args.power_limit_mw;
  for (std::size_t id : request.ids) {
    const auto& constraints = info_[id].constraints;
    if (op == GpuOp::kSetPowerLimit && constraints && (mw < constraints->min_mw || mw > constraints->max_mw)) {
      errors.emplace(id, Error(ErrorCode::kInvalidArgument,
                               fmt::format("power_limit_mw {} is outside GPU {}'s range [{}, {}] mW; nothing was "
                                           "changed",
                                           mw, id, constraints->min_mw, constraints->max_mw)));
    } else if (auto hung = HungGpuError(id, *writers_[id], options_.write_timeout, "a write")) {
      errors.emplace(id, *hung);
    }
  }
  return errors;
}

std::vector<std::pair<std::size_t, std::future<Status>>> GpuRoutes::PostWrite(const WriteRequest& request, GpuOp op) {
  std::vector<std::pair<std::size_t, std::future<Status>>> results;
  // One global order: every GPU applies concurrent requests in the same order.
  std::lock_guard<std::mutex> lock(post_mutex_);
  for (std::size_t id : request.ids) {
    auto promise = std::make_shared<std::promise<Status>>();
    if (request.block) results.emplace_back(id, promise->get_future());
    device::Gpu* gpu = &gpus_->gpu(id);
    writers_[id]->Post([runner = options_.runner, gpu, id, op, args = request.args, promise, blocking = request.block] {
      Status status = runner(*gpu, id, op, args);
      if (!status && !blocking) {
        std::fprintf(stderr, "zeusd: GPU %zu %s (non-blocking) failed: %s\n", id, std::string(GpuOpName(op)).c_str(),
                     status.error().message().c_str());
      }
      promise->set_value(std::move(status));
    });
  }
  return results;
}

http::HttpResponse GpuRoutes::Write(const Target& target, GpuOp op) {
  WriteRequest request;
  if (auto refused = ParseWrite(target, op, request)) return std::move(*refused);
  // Everything is checked for every GPU before any is changed.
  std::map<std::size_t, Error> errors = CheckWrite(request, op);
  if (!errors.empty()) return DeviceErrors(errors);
  auto results = PostWrite(request, op);
  const auto deadline = std::chrono::steady_clock::now() + options_.write_timeout;
  for (auto& [id, future] : results) {
    Status status = AwaitGpu(future, deadline, id, options_.write_timeout, GpuOpName(op));
    if (!status) errors.emplace(id, status.error());
  }
  if (!errors.empty()) return DeviceErrors(errors);
  return EmptyOk();
}

http::HttpResponse GpuRoutes::Read(const Target& target) {
  QueryFields fields(target, {"gpu_ids"});
  auto ids = OptionalIdList(fields, "gpu_ids", count(), "GPU");
  if (!ids) return ErrorAnswer(ids.error());
  if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
  const std::string& path = target.path;
  json answer = json::object();
  std::map<std::size_t, Error> errors;
  const std::int64_t timestamp_ms = UnixNowMs(options_.unix_time_ms);
  // The GPUs are read in parallel, each on its own reader thread.
  std::vector<std::pair<std::size_t, std::future<Result<json>>>> pending;
  for (std::size_t id : *ids) {
    if (auto hung = HungGpuError(id, *readers_[id], options_.call_timeout, path)) {
      errors.emplace(id, *hung);
      continue;
    }
    auto promise = std::make_shared<std::promise<Result<json>>>();
    pending.emplace_back(id, promise->get_future());
    device::Gpu* gpu = &gpus_->gpu(id);
    readers_[id]->Post([gpu, path, promise] { promise->set_value(ReadGpuValue(*gpu, path)); });
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.call_timeout;
  for (auto& [id, future] : pending) {
    Result<json> value = AwaitGpu(future, deadline, id, options_.call_timeout, path);
    if (!value) {
      errors.emplace(id, value.error());
      continue;
    }
    answer[std::to_string(id)] = std::move(*value);
  }
  if (!errors.empty()) return DeviceErrors(errors);
  if (path == "/gpu/get_power") return JsonAnswer(200, json{{"timestamp_ms", timestamp_ms}, {"power_mw", answer}});
  return JsonAnswer(200, answer);
}

}  // namespace zeus::zeusd
