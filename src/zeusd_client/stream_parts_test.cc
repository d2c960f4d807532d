// Copyright 2026 The Zeus C++ Authors.
//
// The daemon-free parts of PowerStreamingClient: SSE splitting (frames split
// across pieces, several per piece, CRLF and CR, comments, other fields,
// multi-line data, oversized lines), event decoding (missing and mistyped
// fields, null DRAM), the clock-offset median on a fake clock, and the
// step-function energy with its gaps, all against hand-computed values.

#include "zeusd_client/stream_parts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/fake_clock.h"

namespace zeus::zeusd::internal {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Split(const std::vector<std::string>& pieces, SseSplitter* splitter = nullptr) {
  SseSplitter local;
  if (splitter == nullptr) splitter = &local;
  std::vector<std::string> events;
  for (const std::string& piece : pieces) {
    splitter->Feed(piece, [&](const std::string& data) { events.push_back(data); });
  }
  return events;
}

TEST(SseSplitterTest, WholeFramesSeveralPerPiece) {
  EXPECT_THAT(Split({"data: {\"a\":1}\n\ndata: 2\n\n"}), ElementsAre("{\"a\":1}", "2"));
}

TEST(SseSplitterTest, FramesSplitAnywhereAcrossPieces) {
  const std::string stream = "data: first\n\ndata: second\n\n";
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    EXPECT_THAT(Split({stream.substr(0, cut), stream.substr(cut)}), ElementsAre("first", "second")) << cut;
  }
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  EXPECT_THAT(Split(bytes), ElementsAre("first", "second"));
}

TEST(SseSplitterTest, CrLfAndCrLineEnds) {
  EXPECT_THAT(Split({"data: a\r\n\r\ndata: b\r\r"}), ElementsAre("a", "b"));
  // "\r" at the end of one piece and "\n" at the start of the next are one line end.
  EXPECT_THAT(Split({"data: a\r", "\n\r", "\n"}), ElementsAre("a"));
}

TEST(SseSplitterTest, CommentsOtherFieldsAndEmptyEventsAreNotEvents) {
  EXPECT_THAT(Split({": keep-alive\n\nevent: x\nid: 3\nretry: 10\n\ndata:no-space\n\n\n\n"}),
              ElementsAre("no-space"));
  EXPECT_THAT(Split({"data: one\ndata: two\n\n"}), ElementsAre("one\ntwo"));
  EXPECT_THAT(Split({"data\n\n"}), ElementsAre(""));
  // An unfinished event is not reported.
  EXPECT_THAT(Split({"data: pending\n"}), ElementsAre());
}

TEST(SseSplitterTest, OversizedLinesAreDroppedAndCounted) {
  SseSplitter splitter(8);
  EXPECT_THAT(Split({"data: 0123456789\n\ndata: ok\n\n"}, &splitter), ElementsAre("ok"));
  EXPECT_EQ(splitter.oversized(), 1u);
}

TEST(ParseStreamEventTest, GpuAndCpuEvents) {
  auto gpu = ParseStreamEvent(DeviceKind::kGpu, R"({"timestamp_ms": 1700000000123, "gpu_id": 2, "power_mw": 150000})");
  ASSERT_TRUE(gpu) << gpu.error().message();
  EXPECT_EQ(gpu->timestamp_ms, 1700000000123);
  EXPECT_EQ(gpu->id, 2);
  EXPECT_EQ(gpu->power_mw, 150000u);
  EXPECT_FALSE(gpu->dram_mw);
  auto cpu =
      ParseStreamEvent(DeviceKind::kCpu, R"({"timestamp_ms": 5, "cpu_id": 1, "cpu_mw": 40000, "dram_mw": 3000})");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->id, 1);
  EXPECT_EQ(cpu->power_mw, 40000u);
  EXPECT_EQ(cpu->dram_mw, 3000u);
  auto no_dram =
      ParseStreamEvent(DeviceKind::kCpu, R"({"timestamp_ms": 5, "cpu_id": 0, "cpu_mw": 1, "dram_mw": null})");
  ASSERT_TRUE(no_dram);
  EXPECT_FALSE(no_dram->dram_mw);
}

TEST(ParseStreamEventTest, MalformedEventsNameTheProblem) {
  struct Case {
    DeviceKind kind;
    const char* data;
    const char* message;
  };
  const Case cases[] = {
      {DeviceKind::kGpu, "not json", "not JSON"},
      {DeviceKind::kGpu, "[1, 2]", "not a JSON object"},
      {DeviceKind::kGpu, R"({"gpu_id": 0, "power_mw": 1})", "'timestamp_ms'"},
      {DeviceKind::kGpu, R"({"timestamp_ms": 1, "power_mw": 1})", "'gpu_id'"},
      {DeviceKind::kGpu, R"({"timestamp_ms": 1, "gpu_id": 0})", "'power_mw'"},
      {DeviceKind::kGpu, R"({"timestamp_ms": 1, "gpu_id": 0, "power_mw": "5"})", "'power_mw'"},
      {DeviceKind::kGpu, R"({"timestamp_ms": 1, "gpu_id": 0, "power_mw": -5})", "'power_mw'"},
      {DeviceKind::kGpu, R"({"timestamp_ms": 1, "gpu_id": 0, "power_mw": 1.5})", "'power_mw'"},
      // A CPU event on the GPU stream, and a GPU event on the CPU stream.
      {DeviceKind::kGpu, R"({"timestamp_ms": 1, "cpu_id": 0, "cpu_mw": 1, "dram_mw": null})", "'gpu_id'"},
      {DeviceKind::kCpu, R"({"timestamp_ms": 1, "gpu_id": 0, "power_mw": 1})", "'cpu_id'"},
      {DeviceKind::kCpu, R"({"timestamp_ms": 1, "cpu_id": 0, "cpu_mw": 1})", "'dram_mw'"},
  };
  for (const Case& c : cases) {
    auto event = ParseStreamEvent(c.kind, c.data);
    ASSERT_FALSE(event) << c.data;
    EXPECT_EQ(event.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(event.error().message(), HasSubstr(c.message)) << c.data;
  }
}

TEST(MeasureClockOffsetTest, MedianOfRoundTripMidpoints) {
  // The clock starts at 1000 s. Round trips (before, after, daemon):
  //   1000 s, +2 ms, daemon 1 ms   -> midpoint 1000.001 s - 0.001 s = 1000 s
  //   then +10 ms (after 1000.012), daemon 5 ms -> midpoint 1000.007 - 0.005 = 1000.002 s
  //   then +4 ms  (after 1000.016), daemon 100 ms -> midpoint 1000.014 - 0.1 = 999.914 s
  // Sorted: 999.914, 1000, 1000.002: the median is 1000 s.
  testing::FakeClock clock;
  const std::vector<std::pair<milliseconds, std::int64_t>> trips = {
      {milliseconds(2), 1}, {milliseconds(10), 5}, {milliseconds(4), 100}};
  std::size_t next = 0;
  auto offset = MeasureClockOffset(clock, 3, [&]() -> Result<std::int64_t> {
    clock.Advance(trips[next].first);
    return trips[next++].second;
  });
  ASSERT_TRUE(offset);
  EXPECT_EQ(*offset, seconds(1000));
  // An even count averages the two middle values: a fourth trip of +0 ms at
  // daemon 16 ms gives 1000.016 - 0.016 = 1000 s; sorted 999.914, 1000,
  // 1000, 1000.002 -> 1000 s. With daemon 12 ms instead: 1000.004 s; sorted
  // 999.914, 1000, 1000.002, 1000.004 -> 1000.001 s.
  testing::FakeClock clock2;
  const std::vector<std::pair<milliseconds, std::int64_t>> trips2 = {
      {milliseconds(2), 1}, {milliseconds(10), 5}, {milliseconds(4), 100}, {milliseconds(0), 12}};
  next = 0;
  auto even = MeasureClockOffset(clock2, 4, [&]() -> Result<std::int64_t> {
    clock2.Advance(trips2[next].first);
    return trips2[next++].second;
  });
  ASSERT_TRUE(even);
  EXPECT_EQ(*even, milliseconds(1000001));
  // A failing round trip is the answer.
  auto failing = MeasureClockOffset(clock, 5, [&]() -> Result<std::int64_t> {
    return Fail(ErrorCode::kUnavailable, "daemon gone");
  });
  ASSERT_FALSE(failing);
  EXPECT_EQ(failing.error().code(), ErrorCode::kUnavailable);
  EXPECT_FALSE(MeasureClockOffset(clock, 0, [] { return Result<std::int64_t>(0); }));
}

TimelineEntry Sample(nanoseconds time, std::uint64_t power_mw, std::optional<std::uint64_t> dram_mw = {}) {
  TimelineEntry entry;
  entry.time = time;
  entry.sample.time = time;
  entry.sample.power_mw = power_mw;
  entry.sample.dram_mw = dram_mw;
  return entry;
}

TimelineEntry Lost(nanoseconds time) {
  TimelineEntry entry;
  entry.time = time;
  entry.known = false;
  return entry;
}

TEST(IntegrateEnergyTest, StepFunctionWhileConnected) {
  // 100 W from 1 s, 200 W from 3 s, connected until 6 s. Over [0, 5]:
  // [0, 1) unknown; 100 W * 2 s + 200 W * 2 s = 600 J = 600000 mJ.
  const std::deque<TimelineEntry> timeline = {Sample(seconds(1), 100000), Sample(seconds(3), 200000)};
  auto e = IntegrateEnergy(timeline, seconds(0), seconds(5), seconds(3), seconds(6));
  EXPECT_DOUBLE_EQ(e.energy_mj, 600000);
  EXPECT_EQ(e.uncovered, seconds(1));
  EXPECT_EQ(e.gaps, 1);
  EXPECT_FALSE(e.dram_energy_mj);
  // Inside one step: [1.5, 2.5] at 100 W = 100 J, complete.
  auto inside = IntegrateEnergy(timeline, milliseconds(1500), milliseconds(2500), seconds(3), seconds(6));
  EXPECT_DOUBLE_EQ(inside.energy_mj, 100000);
  EXPECT_TRUE(inside.complete());
  // Beyond "now" (6 s) nothing is known yet: [1, 8] = 200 J + 600 J, 2 s unknown.
  auto future = IntegrateEnergy(timeline, seconds(1), seconds(8), seconds(10), seconds(6));
  EXPECT_DOUBLE_EQ(future.energy_mj, 800000);
  EXPECT_EQ(future.uncovered, seconds(2));
  EXPECT_EQ(future.gaps, 1);
}

TEST(IntegrateEnergyTest, DisconnectedTailCountsNothing) {
  // Same samples, stream not connected now and no loss marker: the last
  // sample holds not at all: 200 J, [0, 1) and [3, 5) unknown (two gaps).
  const std::deque<TimelineEntry> timeline = {Sample(seconds(1), 100000), Sample(seconds(3), 200000)};
  auto e = IntegrateEnergy(timeline, seconds(0), seconds(5), seconds(3), std::nullopt);
  EXPECT_DOUBLE_EQ(e.energy_mj, 200000);
  EXPECT_EQ(e.uncovered, seconds(3));
  EXPECT_EQ(e.gaps, 2);
  EXPECT_FALSE(e.complete());
}

TEST(IntegrateEnergyTest, HoldIsBoundedAndLossMarkersAreGaps) {
  // 100 W at 0 s, then nothing until 50 W at 10 s; hold 3 s; now 12 s.
  // [0, 3) 300 J, [3, 10) unknown, [10, 12) 100 J.
  const std::deque<TimelineEntry> silent = {Sample(seconds(0), 100000), Sample(seconds(10), 50000)};
  auto e = IntegrateEnergy(silent, seconds(0), seconds(12), seconds(3), seconds(12));
  EXPECT_DOUBLE_EQ(e.energy_mj, 400000);
  EXPECT_EQ(e.uncovered, seconds(7));
  EXPECT_EQ(e.gaps, 1);
  // 100 W at 0 s, lost at 2 s, 100 W again at 5 s, now 8 s:
  // [0, 2) 200 J, [2, 5) unknown, [5, 8) 300 J.
  const std::deque<TimelineEntry> lost = {Sample(seconds(0), 100000), Lost(seconds(2)), Sample(seconds(5), 100000)};
  auto l = IntegrateEnergy(lost, seconds(0), seconds(8), seconds(10), seconds(8));
  EXPECT_DOUBLE_EQ(l.energy_mj, 500000);
  EXPECT_EQ(l.uncovered, seconds(3));
  EXPECT_EQ(l.gaps, 1);
  // Lost and not back: everything after 2 s is unknown.
  const std::deque<TimelineEntry> gone = {Sample(seconds(0), 100000), Lost(seconds(2))};
  auto g = IntegrateEnergy(gone, seconds(0), seconds(8), seconds(10), std::nullopt);
  EXPECT_DOUBLE_EQ(g.energy_mj, 200000);
  EXPECT_EQ(g.uncovered, seconds(6));
  EXPECT_EQ(g.gaps, 1);
}

TEST(IntegrateEnergyTest, DramAndEmptyTimelines) {
  // CPU 50 W and DRAM 5 W from 0 s, now 2 s: 100 J and 10 J.
  const std::deque<TimelineEntry> cpu = {Sample(seconds(0), 50000, 5000)};
  auto e = IntegrateEnergy(cpu, seconds(0), seconds(2), seconds(3), seconds(2));
  EXPECT_DOUBLE_EQ(e.energy_mj, 100000);
  ASSERT_TRUE(e.dram_energy_mj);
  EXPECT_DOUBLE_EQ(*e.dram_energy_mj, 10000);
  EXPECT_TRUE(e.complete());
  auto empty = IntegrateEnergy({}, seconds(0), seconds(2), seconds(3), seconds(2));
  EXPECT_EQ(empty.energy_mj, 0);
  EXPECT_EQ(empty.uncovered, seconds(2));
  EXPECT_EQ(empty.gaps, 1);
  auto point = IntegrateEnergy(cpu, seconds(1), seconds(1), seconds(3), seconds(2));
  EXPECT_EQ(point.energy_mj, 0);
  EXPECT_TRUE(point.complete());
}

}  // namespace
}  // namespace zeus::zeusd::internal
