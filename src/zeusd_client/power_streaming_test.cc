// Copyright 2026 The Zeus C++ Authors.
//
// PowerStreamingClient against a fake daemon (zeus::http::HttpServer on a
// Unix socket) whose CPU stream the test writes: CPU readings with and
// without DRAM, malformed events counted and skipped, a 503 answer retried
// (not given up), the FakeClock offset applied to every sample, an update
// wait that returns at once for an update it has not been told about, a
// prompt Stop() while the stream is blocked in a read, and a silent stream
// reconnected after stall_timeout.

#include "zeus/zeusd_client/power_streaming.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "http/fed_body_stream.h"
#include "http/http.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "testing/result.h"

namespace zeus::zeusd {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// Two CPUs (0 with DRAM), cpu-read only, no auth; /time says 1,700,000,000,000
// ms. The first `refusals` stream requests get 503.
class FakeDaemon {
 public:
  explicit FakeDaemon(int refusals) : refusals_(refusals) {
    http::HttpServerOptions options;
    options.unix_socket_path = tmp_.File("zeusd.sock");
    options.threads = 2;
    auto server = http::HttpServer::Start(options, [this](const http::HttpRequest& r) { return Handle(r); });
    server_ = zeus::testing::Unwrap(std::move(server));
  }
  ~FakeDaemon() { server_->Shutdown(); }

  ZeusdConfig Config() const {
    ZeusdConfig c;
    c.socket_path = tmp_.File("zeusd.sock");
    return c;
  }
  std::shared_ptr<http::FedBodyStream> Stream() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stream_.lock();
  }
  std::string target() {
    std::lock_guard<std::mutex> lock(mutex_);
    return target_;
  }

 private:
  http::HttpResponse Handle(const http::HttpRequest& r) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (r.target == "/discover") {
      return {200, R"({"gpus": [], "cpus": [{"id": 0, "dram_available": true}, {"id": 1, "dram_available": false}],
                       "enabled_api_groups": ["cpu-read"], "auth_required": false})"};
    }
    if (r.target == "/time") return {200, R"({"timestamp_ms": 1700000000000})"};
    if (r.target.rfind("/cpu/stream_power", 0) == 0) {
      target_ = r.target;
      if (refusals_ > 0) {
        --refusals_;
        return {503, R"({"message": "busy"})"};
      }
      http::HttpResponse response;
      response.content_type = "text/event-stream";
      auto stream = std::make_shared<http::FedBodyStream>();
      stream_ = stream;
      response.stream = stream;
      return response;
    }
    return {404, R"({"message": "no route"})"};
  }

  testing::TempDir tmp_;
  std::mutex mutex_;
  int refusals_;
  std::string target_;
  std::weak_ptr<http::FedBodyStream> stream_;
  std::unique_ptr<http::HttpServer> server_;
};

TEST(PowerStreamingClientTest, CpuReadingsMalformedEventsRetriesAndOffset) {
  FakeDaemon daemon(/*refusals=*/2);
  // The fake clock stands still at 1000 s, so every round trip's midpoint is
  // 1000 s and the offset is 1000 s - 1,700,000,000 s.
  testing::FakeClock clock;
  PowerStreamingOptions options;
  options.clock = &clock;
  options.reconnect_delay = milliseconds(10);
  auto started = PowerStreamingClient::Start({{daemon.Config(), std::nullopt, std::nullopt}}, options);
  ASSERT_TRUE(started) << started.error().message();
  PowerStreamingClient& client = **started;
  const std::string endpoint = daemon.Config().endpoint();
  const nanoseconds offset = seconds(1000) - seconds(1700000000);
  EXPECT_EQ(*client.ClockOffset(endpoint), offset);
  ASSERT_EQ(client.Streams().size(), 1u);  // no GPUs: CPUs only
  EXPECT_EQ(client.Streams()[0].kind, DeviceKind::kCpu);

  // Two 503s are retried; the third try streams.
  ASSERT_TRUE(testing::WaitUntil([&] { return daemon.Stream() != nullptr; }, seconds(60)));
  EXPECT_EQ(daemon.target(), "/cpu/stream_power?cpu_ids=0,1");
  {
    const StreamStatus s = client.Streams()[0];
    EXPECT_EQ(s.failures, 2u);
    EXPECT_FALSE(s.given_up);
    ASSERT_TRUE(s.last_error);
    EXPECT_THAT(s.last_error->message(), ::testing::HasSubstr("503"));
  }
  const std::uint64_t before = client.sequence();
  daemon.Stream()->Push(
      "data: {\"timestamp_ms\": 1700000000500, \"cpu_id\": 0, \"cpu_mw\": 40000, \"dram_mw\": 5000}\n\n"
      "data: not json\n\n"
      ": a comment\n\n"
      "data: {\"timestamp_ms\": 1700000000600, \"cpu_id\": 7, \"cpu_mw\": 1, \"dram_mw\": null}\n\n"
      "data: {\"timestamp_ms\": 1700000000700, \"cpu_id\": 1, \"cpu_mw\": 30000, \"dram_mw\": null}\r\n\r\n");
  ASSERT_TRUE(testing::WaitUntil([&] { return client.Streams()[0].events == 2; }, seconds(60)));
  EXPECT_EQ(client.Streams()[0].malformed, 2u);  // not JSON; CPU 7 was not asked for
  // The updates happened after `before`: a wait from there returns at once.
  EXPECT_GT(client.WaitForUpdate(before, seconds(0)), before);

  auto latest = client.Latest();
  ASSERT_EQ(latest.count(endpoint), 1u);
  const PowerReadings& r = latest[endpoint];
  EXPECT_EQ(r.time, milliseconds(1700000000700) + offset);  // 1000.7 s
  EXPECT_EQ(r.time, milliseconds(1000700));
  ASSERT_EQ(r.cpu_power_w.size(), 2u);
  EXPECT_EQ(r.cpu_power_w.at(0).cpu_w, 40.0);
  EXPECT_EQ(r.cpu_power_w.at(0).dram_w, 5.0);
  EXPECT_EQ(r.cpu_power_w.at(1).cpu_w, 30.0);
  EXPECT_FALSE(r.cpu_power_w.at(1).dram_w);
  EXPECT_TRUE(r.gpu_power_w.empty());

  // CPU 0 from 1000.5 s (its only sample) to 1002.5 s on the fake clock,
  // still connected, now = 1002.5 s: 40 W and 5 W for 2 s.
  clock.Advance(milliseconds(2500));
  auto energy = client.EnergyMj(endpoint, DeviceKind::kCpu, 0, milliseconds(1000500), milliseconds(1002500));
  ASSERT_TRUE(energy) << energy.error().message();
  EXPECT_DOUBLE_EQ(energy->energy_mj, 80000);
  ASSERT_TRUE(energy->dram_energy_mj);
  EXPECT_DOUBLE_EQ(*energy->dram_energy_mj, 10000);
  EXPECT_TRUE(energy->complete());

  // Stop() while the stream thread is blocked reading: returns promptly
  // (within the deadline; a blocked read would hang it for ever).
  auto stopped = std::async(std::launch::async, [&] { client.Stop(); });
  ASSERT_EQ(stopped.wait_for(seconds(60)), std::future_status::ready);
  EXPECT_TRUE(client.stopped());
  EXPECT_FALSE(client.Streams()[0].connected);
  // After the loss, the tail no longer counts: from 1000.5 s to 1010 s only
  // the part up to the loss marker (at the fake clock's 1002.5 s) is known.
  clock.Advance(seconds(5));
  auto after = client.EnergyMj(endpoint, DeviceKind::kCpu, 0, milliseconds(1000500), seconds(1010));
  ASSERT_TRUE(after);
  EXPECT_DOUBLE_EQ(after->energy_mj, 80000);
  EXPECT_EQ(after->uncovered, milliseconds(7500));
  EXPECT_EQ(after->gaps, 1);
  // Waits after Stop() return at once.
  EXPECT_EQ(client.WaitForUpdate(client.sequence(), seconds(60)), client.sequence());
}

// A connected stream that goes silent past stall_timeout is taken as a
// stalled daemon (zeusd repeats every value each second): dropped with a
// timeout and reconnected.
TEST(PowerStreamingClientTest, ASilentStreamIsReconnected) {
  FakeDaemon daemon(0);
  PowerStreamingOptions options;
  options.stall_timeout = milliseconds(100);
  options.reconnect_delay = milliseconds(10);
  auto started = PowerStreamingClient::Start({{daemon.Config(), std::nullopt, std::nullopt}}, options);
  ASSERT_TRUE(started) << started.error().message();
  PowerStreamingClient& client = **started;
  ASSERT_TRUE(testing::WaitUntil([&] { return client.Streams()[0].reconnects >= 2; }, seconds(60)));
  const StreamStatus s = client.Streams()[0];
  ASSERT_TRUE(s.last_error);
  EXPECT_EQ(s.last_error->code(), ErrorCode::kTimeout) << s.last_error->message();
  EXPECT_FALSE(s.given_up);
  EXPECT_EQ(s.events, 0u);
}

TEST(PowerStreamingClientTest, BadArgumentsAreRefused) {
  EXPECT_EQ(PowerStreamingClient::Start({}).error().code(), ErrorCode::kInvalidArgument);
  FakeDaemon daemon(0);
  PowerStreamingOptions options;
  options.clock_offset_round_trips = 0;
  EXPECT_EQ(PowerStreamingClient::Start({{daemon.Config(), {}, {}}}, options).error().code(),
            ErrorCode::kInvalidArgument);
  auto twice = PowerStreamingClient::Start({{daemon.Config(), std::nullopt, std::vector<int>{1, 1}}});
  ASSERT_FALSE(twice);
  EXPECT_THAT(twice.error().message(), ::testing::HasSubstr("CPU 1 is listed twice"));
  auto missing = PowerStreamingClient::Start({{daemon.Config(), std::nullopt, std::vector<int>{2}}});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(missing.error().message(), ::testing::HasSubstr("CPU 2 is not on zeusd"));
  // GPUs asked for from a daemon that has none.
  auto gpus = PowerStreamingClient::Start({{daemon.Config(), std::vector<int>{0}, std::nullopt}});
  ASSERT_FALSE(gpus);
  EXPECT_THAT(gpus.error().message(), ::testing::HasSubstr("GPU 0 is not on zeusd"));
}

}  // namespace
}  // namespace zeus::zeusd
