// Copyright 2026 The Zeus C++ Authors.

#include "zeusd_client/stream_parts.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zeus::zeusd::internal {

using std::chrono::nanoseconds;

void SseSplitter::Feed(std::string_view piece, const std::function<void(const std::string&)>& on_event) {
  for (char c : piece) {
    if (c == '\n' && after_cr_) {  // the second half of "\r\n"
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      if (line_too_long_) {
        ++oversized_;
      } else {
        Line(line_, on_event);
      }
      line_.clear();
      line_too_long_ = false;
      continue;
    }
    if (line_too_long_) continue;
    if (line_.size() >= max_line_bytes_) {
      line_too_long_ = true;
      line_.clear();
      continue;
    }
    line_ += c;
  }
}

void SseSplitter::Line(std::string_view line, const std::function<void(const std::string&)>& on_event) {
  if (line.empty()) {
    if (has_data_) on_event(data_);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // a comment
  const std::size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  if (field != "data") return;
  std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (has_data_) data_ += '\n';
  data_ += value;
  has_data_ = true;
}

Result<StreamEvent> ParseStreamEvent(DeviceKind kind, std::string_view data) {
  const nlohmann::json event = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded()) return Fail(ErrorCode::kInvalidArgument, fmt::format("not JSON: '{}'", data));
  if (!event.is_object()) return Fail(ErrorCode::kInvalidArgument, fmt::format("not a JSON object: '{}'", data));
  auto integer = [&](const char* name, bool nullable) -> Result<std::optional<std::int64_t>> {
    const auto it = event.find(name);
    if (it == event.end()) return Fail(ErrorCode::kInvalidArgument, fmt::format("no '{}' in '{}'", name, data));
    if (nullable && it->is_null()) return std::optional<std::int64_t>();
    if (!it->is_number_integer() || (name != std::string_view("timestamp_ms") && it->get<std::int64_t>() < 0)) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' is not a non-negative integer in '{}'", name, data));
    }
    return std::optional<std::int64_t>(it->get<std::int64_t>());
  };
  const bool gpu = kind == DeviceKind::kGpu;
  StreamEvent out;
  auto timestamp = integer("timestamp_ms", false);
  if (!timestamp) return Fail(timestamp.error());
  auto id = integer(gpu ? "gpu_id" : "cpu_id", false);
  if (!id) return Fail(id.error());
  auto power = integer(gpu ? "power_mw" : "cpu_mw", false);
  if (!power) return Fail(power.error());
  out.timestamp_ms = **timestamp;
  if (**id > 1 << 20) return Fail(ErrorCode::kInvalidArgument, fmt::format("device id out of range in '{}'", data));
  out.id = static_cast<int>(**id);
  out.power_mw = static_cast<std::uint64_t>(**power);
  if (!gpu) {
    auto dram = integer("dram_mw", true);
    if (!dram) return Fail(dram.error());
    if (*dram) out.dram_mw = static_cast<std::uint64_t>(**dram);
  }
  return out;
}

Result<nanoseconds> MeasureClockOffset(const Clock& clock, int round_trips,
                                       const std::function<Result<std::int64_t>()>& daemon_time_ms) {
  if (round_trips < 1) return Fail(ErrorCode::kInvalidArgument, "clock offset needs at least one round trip");
  std::vector<nanoseconds> offsets;
  for (int i = 0; i < round_trips; ++i) {
    const nanoseconds before = clock.Now();
    Result<std::int64_t> daemon_ms = daemon_time_ms();
    const nanoseconds after = clock.Now();
    if (!daemon_ms) return Fail(daemon_ms.error());
    offsets.push_back(before + (after - before) / 2 - std::chrono::milliseconds(*daemon_ms));
  }
  std::sort(offsets.begin(), offsets.end());
  const std::size_t n = offsets.size();
  if (n % 2 == 1) return offsets[n / 2];
  return offsets[n / 2 - 1] + (offsets[n / 2] - offsets[n / 2 - 1]) / 2;
}

EnergyEstimate IntegrateEnergy(const std::deque<TimelineEntry>& timeline, nanoseconds t0, nanoseconds t1,
                               nanoseconds max_hold, std::optional<nanoseconds> open_until) {
  EnergyEstimate out;
  double energy_mj = 0;
  double dram_mj = 0;
  bool any_dram = false;
  bool in_gap = false;  // the previous stretch counted was uncovered
  auto uncovered = [&](nanoseconds from, nanoseconds to) {
    from = std::max(from, t0);
    to = std::min(to, t1);
    if (to <= from) return;
    out.uncovered += to - from;
    if (!in_gap) ++out.gaps;
    in_gap = true;
  };
  auto covered = [&](nanoseconds from, nanoseconds to, const PowerSample& sample) {
    from = std::max(from, t0);
    to = std::min(to, t1);
    if (to <= from) return;
    const double seconds = std::chrono::duration<double>(to - from).count();
    energy_mj += static_cast<double>(sample.power_mw) * seconds;
    if (sample.dram_mw) {
      dram_mj += static_cast<double>(*sample.dram_mw) * seconds;
      any_dram = true;
    }
    in_gap = false;
  };
  if (t1 > t0) {
    const nanoseconds first = timeline.empty() ? t1 : timeline.front().time;
    uncovered(t0, first);
    for (std::size_t i = 0; i < timeline.size(); ++i) {
      const TimelineEntry& entry = timeline[i];
      if (entry.time >= t1) break;
      const bool last = i + 1 == timeline.size();
      nanoseconds end = last ? (open_until && entry.known ? std::max(*open_until, entry.time) : entry.time)
                             : timeline[i + 1].time;
      if (!entry.known) {
        uncovered(entry.time, last ? t1 : end);
        continue;
      }
      const nanoseconds held_end = std::min(end, entry.time + max_hold);
      covered(entry.time, held_end, entry.sample);
      uncovered(held_end, last ? t1 : end);
    }
  }
  out.energy_mj = energy_mj;
  if (any_dram) out.dram_energy_mj = dram_mj;
  return out;
}

}  // namespace zeus::zeusd::internal
