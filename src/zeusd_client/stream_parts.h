// Copyright 2026 The Zeus C++ Authors.
//
// The pieces of PowerStreamingClient that need no daemon, each unit-tested on
// its own: the server-sent-events splitter, zeusd's event decoding, the
// clock-offset median and the step-function energy integral.

#ifndef ZEUS_SRC_ZEUSD_CLIENT_STREAM_PARTS_H_
#define ZEUS_SRC_ZEUSD_CLIENT_STREAM_PARTS_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/zeusd_client/power_streaming.h"

namespace zeus::zeusd::internal {

// Splits a text/event-stream body, fed in pieces cut anywhere, into events.
// Lines end with "\n", "\r\n" or "\r"; an empty line ends an event; "data:"
// lines (one space after the colon dropped) make its data, joined with "\n";
// comment lines (":...") and other fields are ignored; an event without data
// is not reported. A line longer than max_line_bytes is dropped whole and
// counted in oversized().
class SseSplitter {
 public:
  explicit SseSplitter(std::size_t max_line_bytes = 1 << 20) : max_line_bytes_(max_line_bytes) {}
  void Feed(std::string_view piece, const std::function<void(const std::string& data)>& on_event);
  std::uint64_t oversized() const { return oversized_; }

 private:
  void Line(std::string_view line, const std::function<void(const std::string&)>& on_event);

  std::size_t max_line_bytes_;
  std::string line_;
  bool line_too_long_ = false;
  bool after_cr_ = false;  // the last character fed was "\r" (a "\n" next is part of it)
  std::string data_;
  bool has_data_ = false;
  std::uint64_t oversized_ = 0;
};

// One zeusd event: GPU {timestamp_ms, gpu_id, power_mw}; CPU {timestamp_ms,
// cpu_id, cpu_mw, dram_mw|null}. kInvalidArgument (naming the problem) for
// non-JSON, a missing or mistyped field, a negative value.
struct StreamEvent {
  std::int64_t timestamp_ms = 0;
  int id = 0;
  std::uint64_t power_mw = 0;
  std::optional<std::uint64_t> dram_mw;
};
Result<StreamEvent> ParseStreamEvent(DeviceKind kind, std::string_view data);

// The median over `round_trips` of ((t_before + t_after) / 2 - daemon time),
// t_before/t_after read from `clock` around each daemon_time_ms() call (the
// mean of the two middle values for an even count). The first failure of
// daemon_time_ms() is returned.
Result<std::chrono::nanoseconds> MeasureClockOffset(const Clock& clock, int round_trips,
                                                    const std::function<Result<std::int64_t>()>& daemon_time_ms);

// A device's timeline as kept: samples, and markers (known = false) at the
// times its stream was lost. Times never decrease.
struct TimelineEntry {
  std::chrono::nanoseconds time{0};
  bool known = true;
  PowerSample sample;
};

// The step-function integral over [t0, t1] (see power_streaming.h): each
// known entry holds until the next entry, at most max_hold; the last one
// holds until `open_until` (at most max_hold) when set, else not at all
// (null open_until: the stream is not connected now).
EnergyEstimate IntegrateEnergy(const std::deque<TimelineEntry>& timeline, std::chrono::nanoseconds t0,
                               std::chrono::nanoseconds t1, std::chrono::nanoseconds max_hold,
                               std::optional<std::chrono::nanoseconds> open_until);

}  // namespace zeus::zeusd::internal

#endif  // ZEUS_SRC_ZEUSD_CLIENT_STREAM_PARTS_H_
