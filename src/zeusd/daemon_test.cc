// Copyright 2026 The Zeus C++ Authors.
//
// zeusd's routes, answers and middleware over in-process fake devices.

#include "zeusd/daemon.h"

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/fake_clock.h"
#include "testing/fake_gpu.h"
#include "testing/rapl_tree.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "zeus/device/discovery.h"

namespace zeus::zeusd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr std::int64_t kNowMs = 1'700'000'000'123;
constexpr char kKey[] = "test-signing-key";

const std::string* Header(const http::HttpResponse& r, std::string_view name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return &v;
  }
  return nullptr;
}

class DaemonTest : public ::testing::Test {
 protected:
  DaemonTest() : rapl_(dir_.path()) {
    std::vector<std::unique_ptr<device::Gpu>> gpus;
    zeus::testing::FakeGpuConfig a;
    a.name = "Fake A";
    zeus::testing::FakeGpuConfig b;
    b.name = "Fake B";
    b.energy_counter = false;
    auto ga = std::make_unique<zeus::testing::FakeGpu>(a, clock_, 0);
    auto gb = std::make_unique<zeus::testing::FakeGpu>(b, clock_, 1);
    gpu0_ = ga.get();
    gpu1_ = gb.get();
    gpus.push_back(std::move(ga));
    gpus.push_back(std::move(gb));
    gpu_set_ = std::make_unique<device::GpuSet>("1.0", std::move(gpus));
    rapl_.AddPackage(0, /*dram=*/true);
    rapl_.AddPackage(1, /*dram=*/false);
    rapl_.SetEnergy(0, false, 5'000'000);
    rapl_.SetEnergy(0, true, 1'000'000);
    rapl_.SetEnergy(1, false, 7'000'000);
    device::CpuOptions cpu_options;
    cpu_options.powercap_root = dir_.path();
    cpu_options.wrap_guard = false;
    cpu_set_ = std::move(device::OpenCpus(cpu_options).value());
  }

  void Start(DaemonOptions options = {}) {
    options.unix_time_ms = [] { return kNowMs; };
    options.gpu_power_poll_hz = 200;
    options.cpu_power_poll_hz = 200;
    daemon_ = std::make_unique<Daemon>(std::move(options), gpu_set_.get(), cpu_set_.get());
  }

  http::HttpResponse Call(const std::string& method, const std::string& target, const std::string& token = "") {
    http::HttpRequest request;
    request.method = method;
    request.target = target;
    if (!token.empty()) request.headers.emplace_back("Authorization", "Bearer " + token);
    return daemon_->Handle(request);
  }
  http::HttpResponse Get(const std::string& target, const std::string& token = "") { return Call("GET", target, token); }
  http::HttpResponse Post(const std::string& target, const std::string& token = "") {
    return Call("POST", target, token);
  }

  std::string Token(std::vector<ApiGroup> scopes, std::optional<std::int64_t> exp = std::nullopt,
                    const std::string& key = kKey) {
    return IssueToken(key, TokenClaims{"tester", std::move(scopes), exp}).value();
  }

  zeus::testing::TempDir dir_;
  zeus::testing::RaplTree rapl_;
  zeus::testing::FakeClock clock_;
  zeus::testing::FakeGpu* gpu0_ = nullptr;
  zeus::testing::FakeGpu* gpu1_ = nullptr;
  std::unique_ptr<device::GpuSet> gpu_set_;
  std::unique_ptr<device::CpuSet> cpu_set_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(DaemonTest, DiscoverAndTime) {
  Start();
  auto r = Get("/discover");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body), json::parse(R"({
    "gpus": [{"id": 0, "name": "Fake A", "pci_address": "0000:00:00.0", "cumulative_energy_available": true},
             {"id": 1, "name": "Fake B", "pci_address": "0000:00:00.0", "cumulative_energy_available": false}],
    "cpus": [{"id": 0, "dram_available": true}, {"id": 1, "dram_available": false}],
    "enabled_api_groups": ["gpu-control", "gpu-read", "cpu-read"],
    "auth_required": false})"));
  auto t = Get("/time");
  ASSERT_EQ(t.status, 200);
  EXPECT_EQ(json::parse(t.body), json::parse(R"({"timestamp_ms": 1700000000123})"));
  EXPECT_EQ(Get("/time?x=1").status, 400);
  EXPECT_EQ(Get("/nope").status, 404);
  auto wrong = Post("/discover");
  EXPECT_EQ(wrong.status, 405);
  ASSERT_NE(Header(wrong, "Allow"), nullptr);
}

TEST(PciAddressTest, ZeusdFormat) {
  EXPECT_EQ(ZeusdPciAddress("00000000:1A:00.0"), "0000:1a:00.0");
  EXPECT_EQ(ZeusdPciAddress("00000001:B3:1F.3"), "0001:b3:1f.0");
  EXPECT_EQ(ZeusdPciAddress("00000009:0F:1E.0"), "0009:0f:1e.0");
  EXPECT_EQ(ZeusdPciAddress("00010000:01:00.0"), "10000:01:00.0");  // an Intel VMD domain is not cut to 16 bits
  EXPECT_EQ(ZeusdPciAddress("0000:3B:00.0"), "0000:3b:00.0");        // NVML's legacy busId form
  EXPECT_EQ(ZeusdPciAddress("garbage"), "garbage");
  EXPECT_EQ(ZeusdPciAddress("00000000:1A:00.0x"), "00000000:1A:00.0x");
}

TEST_F(DaemonTest, SetPowerLimitBlockingAndReads) {
  Start();
  auto r = Post("/gpu/set_power_limit?gpu_ids=1,0&power_limit_mw=150000&block=true");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "");
  EXPECT_THAT(gpu0_->power_limit_calls(), ElementsAre(150'000u));
  EXPECT_THAT(gpu1_->power_limit_calls(), ElementsAre(150'000u));
  auto limits = Get("/gpu/get_power_limit");
  ASSERT_EQ(limits.status, 200);
  EXPECT_EQ(json::parse(limits.body),
            json::parse(R"({"0": {"power_limit_mw": 150000}, "1": {"power_limit_mw": 150000}})"));
  auto constraints = Get("/gpu/get_power_limit_constraints?gpu_ids=1");
  EXPECT_EQ(json::parse(constraints.body),
            json::parse(R"({"1": {"min_power_limit_mw": 100000, "max_power_limit_mw": 250000}})"));
  // FakeGpu draws min(100 W demand, limit).
  auto power = Get("/gpu/get_power?gpu_ids=0");
  EXPECT_EQ(json::parse(power.body), json::parse(R"({"timestamp_ms": 1700000000123, "power_mw": {"0": 100000}})"));
  ASSERT_TRUE(Post("/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true").status == 200);
  EXPECT_EQ(json::parse(Get("/gpu/get_persistence_mode").body),
            json::parse(R"({"0": {"enabled": true}, "1": {"enabled": false}})"));
}

TEST_F(DaemonTest, DriverErrorsMapToStatusesPerDevice) {
  Start();
  gpu1_->FailWith("SetPowerLimitMw", Error(ErrorCode::kPermissionDenied, "no permission"));
  auto denied = Post("/gpu/set_power_limit?gpu_ids=1&power_limit_mw=150000&block=true");
  EXPECT_EQ(denied.status, 403);
  gpu0_->FailWith("SetPowerLimitMw", Error(ErrorCode::kInvalidArgument, "the driver says no"));
  gpu1_->FailWith("SetPowerLimitMw", Error(ErrorCode::kInternal, "boom"));
  auto worst = Post("/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=150000&block=true");
  EXPECT_EQ(worst.status, 500);
  EXPECT_EQ(json::parse(worst.body)["errors"].size(), 2u);
  // Non-blocking: queued is success; the driver's failures are only logged.
  EXPECT_EQ(Post("/gpu/set_power_limit?gpu_ids=1&power_limit_mw=150000&block=false").status, 200);
  auto energy = Get("/gpu/get_cumulative_energy");
  EXPECT_EQ(energy.status, 400);
  EXPECT_THAT(energy.body, HasSubstr("\"1\""));
  EXPECT_EQ(Get("/gpu/get_cumulative_energy?gpu_ids=0").status, 200);
}

// Every driver error, read and written, gets zeusd's documented status
// (zeus-reference 3.4): 400 for invalid-argument and not-supported, 403 for
// no-permission, 500 for every other (its not-found, unavailable and timeout
// included: only a GPU past the daemon's own deadline is 503).
TEST_F(DaemonTest, EveryDriverErrorGetsZeusdsStatus) {
  Start();
  const std::map<ErrorCode, int> expected = {
      {ErrorCode::kInvalidArgument, 400}, {ErrorCode::kNotFound, 500},      {ErrorCode::kNotSupported, 400},
      {ErrorCode::kPermissionDenied, 403}, {ErrorCode::kUnavailable, 500},  {ErrorCode::kDeviceLost, 500},
      {ErrorCode::kTimeout, 500},          {ErrorCode::kIoError, 500},      {ErrorCode::kFailedPrecondition, 500},
      {ErrorCode::kAlreadyExists, 500},    {ErrorCode::kAborted, 500},      {ErrorCode::kInternal, 500},
  };
  for (const auto& [code, status] : expected) {
    SCOPED_TRACE(std::string(ErrorCodeName(code)));
    gpu0_->FailWith("SetPowerLimitMw", Error(code, "the driver says no"));
    gpu0_->FailWith("PowerLimitMw", Error(code, "the driver says no"));
    auto write = Post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=150000&block=true");
    EXPECT_EQ(write.status, status);
    EXPECT_EQ(json::parse(write.body)["errors"]["0"], "the driver says no");
    EXPECT_EQ(Get("/gpu/get_power_limit?gpu_ids=0").status, status);
  }
}

// Issue 20: a set that could not apply to every GPU changed the first ones.
TEST_F(DaemonTest, ASetOutsideAGpusRangeChangesNoGpu) {
  Start();
  for (const char* block : {"true", "false"}) {
    auto out_of_range = Post(fmt::format("/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=5&block={}", block));
    EXPECT_EQ(out_of_range.status, 400);
    EXPECT_THAT(json::parse(out_of_range.body)["errors"]["1"].get<std::string>(),
                HasSubstr("outside GPU 1's range [100000, 250000] mW; nothing was changed"));
  }
  EXPECT_TRUE(gpu0_->power_limit_calls().empty());
  EXPECT_TRUE(gpu1_->power_limit_calls().empty());
}

// Issue 20: concurrent requests that set both GPUs left them at different
// limits. Every GPU now applies them in one order. (Probabilistic without
// the fix: the posting threads must interleave.)
TEST_F(DaemonTest, ConcurrentSetsOfSeveralGpusApplyInOneOrder) {
  Start();
  std::vector<std::thread> clients;
  for (std::uint32_t w = 101; w <= 164; ++w) {
    clients.emplace_back([this, w] {
      EXPECT_EQ(Post(fmt::format("/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw={}&block=true", w * 1000)).status,
                200);
    });
  }
  for (auto& client : clients) client.join();
  ASSERT_EQ(gpu0_->power_limit_calls().size(), 64u);
  EXPECT_EQ(gpu0_->power_limit_calls(), gpu1_->power_limit_calls());
}

// Issue 20: one hung driver call wedged every route once the HTTP workers
// were all waiting on it, and shutdown waited for ever.
TEST_F(DaemonTest, AHungGpuCostsOnlyThatGpu) {
  DaemonOptions options;
  options.gpu_call_timeout = std::chrono::milliseconds(300);
  Start(options);
  gpu1_->HangOn("PowerUsageMw");
  std::thread first([this] {
    auto hung = Get("/gpu/get_power?gpu_ids=1");
    EXPECT_EQ(hung.status, 503);
    EXPECT_THAT(hung.body, HasSubstr("GPU 1 did not answer /gpu/get_power within 300 ms"));
  });
  ASSERT_TRUE(zeus::testing::WaitUntil([&] { return gpu1_->hung_calls() == 1; }));
  // While that request waits: other GPUs, routes and the CPUs answer.
  EXPECT_EQ(Get("/gpu/get_power?gpu_ids=0").status, 200);
  EXPECT_EQ(Get("/discover").status, 200);
  EXPECT_EQ(Get("/cpu/get_cumulative_energy?cpu=true&dram=true").status, 200);
  EXPECT_EQ(Post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=150000&block=true").status, 200);
  first.join();
  // Once the reader has been inside the call past the deadline (counted from
  // when the reader began it, which may be a little after the first request
  // began to wait), the hung GPU is answered at once, for any read; a read
  // that names it along with another GPU is answered 503 for that GPU only.
  std::string again_error;
  ASSERT_TRUE(zeus::testing::WaitUntil([&] {
    auto again = Get("/gpu/get_power_limit?gpu_ids=0,1");
    EXPECT_EQ(again.status, 503);
    const auto errors = json::parse(again.body)["errors"];
    EXPECT_EQ(errors.size(), 1u) << again.body;
    again_error = errors.contains("1") ? errors["1"].get<std::string>() : again.body;
    return again_error.find("has not answered a driver call") != std::string::npos;
  })) << again_error;
  // Shutdown completes, leaving the hung call behind.
  EXPECT_FALSE(daemon_->StopDeviceThreads(std::chrono::milliseconds(100)));
  daemon_.reset();
  gpu1_->ReleaseHangs();
  (void)gpu1_->PowerLimitMw();  // returns once the released call has let go of the GPU
}

TEST_F(DaemonTest, WritesToOneGpuRunInArrivalOrder) {
  Start();
  for (std::uint32_t w = 101; w <= 140; ++w) {
    ASSERT_EQ(Post(fmt::format("/gpu/set_power_limit?gpu_ids=0&power_limit_mw={}&block=false", w * 1000)).status, 200);
  }
  ASSERT_EQ(Post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=200000&block=true").status, 200);
  const auto calls = gpu0_->power_limit_calls();
  ASSERT_EQ(calls.size(), 41u);
  for (std::uint32_t i = 0; i < 40; ++i) EXPECT_EQ(calls[i], (101 + i) * 1000);
  EXPECT_EQ(calls.back(), 200'000u);
}

TEST_F(DaemonTest, BadInputIs400) {
  Start();
  const char* bad[] = {
      "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=150000&block=true&extra=1",
      "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=150000&block=yes",
      "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=150000",
      "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=-1&block=true",
      "/gpu/set_power_limit?gpu_ids=&power_limit_mw=150000&block=true",
      "/gpu/set_power_limit?gpu_ids=0,,1&power_limit_mw=150000&block=true",
      "/gpu/set_power_limit?gpu_ids=2&power_limit_mw=150000&block=true",
      "/gpu/set_power_limit?gpu_ids=2&power_limit_mw=150000&block=false",
      "/gpu/set_persistence_mode?gpu_ids=0&enabled=1&block=true",
      "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=100&block=true",
      "/gpu/reset_locked_clocks?gpu_ids=0&block=TRUE",
  };
  for (const char* target : bad) {
    auto r = Post(target);
    EXPECT_EQ(r.status, 400) << target;
    EXPECT_TRUE(json::parse(r.body).contains("error")) << target << r.body;
  }
  for (const char* target : {"/gpu/get_power?gpu_id=0", "/gpu/get_power_limit?gpu_ids=5", "/gpu/get_power?gpu_ids=",
                             "/cpu/get_power?cpu_ids=0&x=1", "/cpu/get_cumulative_energy?cpu=true",
                             "/cpu/get_cumulative_energy?cpu=true&dram=no", "/cpu/get_cumulative_energy?cpu_ids=2&cpu=true&dram=true",
                             "/gpu/stream_power?gpu_ids=9", "/cpu/stream_power?bogus=1"}) {
    EXPECT_EQ(Get(target).status, 400) << target;
  }
  EXPECT_TRUE(gpu0_->power_limit_calls().empty());
}

TEST_F(DaemonTest, CpuEnergy) {
  Start();
  auto both = Get("/cpu/get_cumulative_energy?cpu=true&dram=true");
  ASSERT_EQ(both.status, 200) << both.body;
  const json j = json::parse(both.body);
  ASSERT_TRUE(j["0"]["cpu_energy_uj"].is_number());
  ASSERT_TRUE(j["0"]["dram_energy_uj"].is_number());
  EXPECT_TRUE(j["1"]["dram_energy_uj"].is_null());
  rapl_.SetEnergy(0, false, 5'250'000);
  auto cpu_only = json::parse(Get("/cpu/get_cumulative_energy?cpu_ids=0&cpu=true&dram=false").body);
  EXPECT_EQ(cpu_only["0"]["cpu_energy_uj"].get<std::uint64_t>() - j["0"]["cpu_energy_uj"].get<std::uint64_t>(),
            250'000u);
  EXPECT_TRUE(cpu_only["0"]["dram_energy_uj"].is_null());
  auto dram_only = json::parse(Get("/cpu/get_cumulative_energy?cpu_ids=0&cpu=false&dram=true").body);
  EXPECT_TRUE(dram_only["0"]["cpu_energy_uj"].is_null());
  EXPECT_TRUE(dram_only["0"]["dram_energy_uj"].is_number());
  auto power = json::parse(Get("/cpu/get_power").body);
  EXPECT_EQ(power["timestamp_ms"], kNowMs);
  EXPECT_EQ(power["power_mw"]["0"]["cpu_mw"], 0);  // the counters did not move
  EXPECT_EQ(power["power_mw"]["0"]["dram_mw"], 0);
  EXPECT_TRUE(power["power_mw"]["1"]["dram_mw"].is_null());
}

TEST_F(DaemonTest, DisabledGroupsAre404WhateverTheToken) {
  DaemonOptions options;
  options.enabled_groups = {ApiGroup::kGpuRead};
  options.signing_key = kKey;
  Start(options);
  const std::string all = Token({ApiGroup::kGpuControl, ApiGroup::kGpuRead, ApiGroup::kCpuRead});
  for (const std::string& token : {std::string(), all, std::string("garbage")}) {
    auto control = Post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=150000&block=true", token);
    EXPECT_EQ(control.status, 404);
    EXPECT_EQ(json::parse(control.body)["error"], "API group 'gpu-control' is not enabled on this server.");
    EXPECT_EQ(Get("/cpu/get_power", token).status, 404);
  }
  EXPECT_EQ(Get("/gpu/get_power_limit", all).status, 200);
  EXPECT_EQ(json::parse(Get("/discover").body)["enabled_api_groups"], json::parse(R"(["gpu-read"])"));
}

TEST_F(DaemonTest, MetricsIs404UnlessEnabled) {
  DaemonOptions options;
  options.signing_key = kKey;
  Start(options);  // the default groups: gpu-control, gpu-read, cpu-read
  const std::string all = Token({ApiGroup::kGpuControl, ApiGroup::kGpuRead, ApiGroup::kCpuRead, ApiGroup::kMetrics});
  for (const std::string& token : {std::string(), all}) {
    auto r = Get("/metrics", token);
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(json::parse(r.body)["error"], "API group 'metrics' is not enabled on this server.");
  }
}

// Open like /discover: a scraper sends no token.
TEST_F(DaemonTest, MetricsServesTheCollectorsExpositionWithoutAToken) {
  DaemonOptions options;
  options.enabled_groups = {ApiGroup::kGpuRead, ApiGroup::kMetrics};
  options.signing_key = kKey;
  options.metrics.hostname = "h1";
  Start(options);
  EXPECT_EQ(Get("/gpu/get_power_limit").status, 401) << "the other groups still need a token";
  // FakeGpuConfig's default: 100 W demand under a 250 W limit.
  const std::string power0 = R"(zeus_gpu_power_watts{gpu="0",hostname="h1",model="Fake A",uuid="GPU-fake"} 100)";
  http::HttpResponse r;
  EXPECT_TRUE(zeus::testing::WaitUntil([&] {
    r = Get("/metrics");
    return r.status != 200 || r.body.find(power0 + "\n") != std::string::npos;
  }));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(r.body, HasSubstr(power0 + "\n"));
  EXPECT_THAT(r.body, HasSubstr("# TYPE zeus_gpu_power_watts gauge\n"));
  EXPECT_THAT(r.body, HasSubstr(R"(zeus_device_up{device="gpu",gpu="1",hostname="h1",model="Fake B",uuid="GPU-fake"} 1)"));
  rapl_.SetEnergy(0, false, 8'000'000);  // +3 J on package 0 since the collector started
  EXPECT_THAT(Get("/metrics").body, HasSubstr("zeus_cpu_energy_joules_total{hostname=\"h1\",package=\"0\"} 3\n"));
  EXPECT_EQ(Get("/metrics?x=1").status, 400);
  EXPECT_EQ(Post("/metrics").status, 405);
  EXPECT_EQ(json::parse(Get("/discover").body)["enabled_api_groups"], json::parse(R"(["gpu-read", "metrics"])"));
}

TEST_F(DaemonTest, WithoutAKeyTokensAreIgnoredAndAuthIs404) {
  Start();
  EXPECT_EQ(Get("/gpu/get_power_limit", "garbage").status, 200);
  EXPECT_EQ(Get("/auth/whoami").status, 404);
  EXPECT_EQ(Get("/auth/whoami", Token({ApiGroup::kGpuRead})).status, 404);
}

TEST_F(DaemonTest, Authentication) {
  DaemonOptions options;
  options.signing_key = kKey;
  Start(options);
  EXPECT_EQ(Get("/discover").status, 200);
  EXPECT_EQ(json::parse(Get("/discover").body)["auth_required"], true);
  EXPECT_EQ(Get("/time").status, 200);

  auto missing = Get("/gpu/get_power_limit");
  EXPECT_EQ(missing.status, 401);
  ASSERT_NE(Header(missing, "WWW-Authenticate"), nullptr);
  EXPECT_EQ(*Header(missing, "WWW-Authenticate"), "Bearer realm=\"zeusd\"");
  http::HttpRequest basic{"GET", "/gpu/get_power_limit", "", "", {{"authorization", "Basic abc"}}};
  EXPECT_EQ(daemon_->Handle(basic).status, 401);
  EXPECT_EQ(Get("/gpu/get_power_limit", "not-a-jwt").status, 401);
  auto expired = Get("/gpu/get_power_limit", Token({ApiGroup::kGpuRead}, kNowMs / 1000 - 1));
  EXPECT_EQ(expired.status, 401);
  EXPECT_EQ(json::parse(expired.body)["error"], "Token has expired.");
  EXPECT_EQ(Get("/gpu/get_power_limit", Token({ApiGroup::kGpuRead}, std::nullopt, "other-key")).status, 401);

  const std::string reader = Token({ApiGroup::kGpuRead}, kNowMs / 1000 + 60);
  EXPECT_EQ(Get("/gpu/get_power_limit", reader).status, 200);
  auto forbidden = Post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=150000&block=true", reader);
  EXPECT_EQ(forbidden.status, 403);
  EXPECT_THAT(json::parse(forbidden.body)["error"].get<std::string>(), HasSubstr("Token scopes: [gpu-read]"));
  EXPECT_EQ(Get("/cpu/get_power", reader).status, 403);  // a GPU scope does not open CPU routes
  const std::string cpu = Token({ApiGroup::kCpuRead});
  EXPECT_EQ(Get("/gpu/get_power", cpu).status, 403);
  EXPECT_EQ(Get("/cpu/get_cumulative_energy?cpu=true&dram=true", cpu).status, 200);
  EXPECT_EQ(Post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=150000&block=true", Token({ApiGroup::kGpuControl})).status,
            200);

  auto whoami = Get("/auth/whoami", reader);
  ASSERT_EQ(whoami.status, 200);
  EXPECT_EQ(json::parse(whoami.body),
            json::parse(fmt::format(R"({{"sub": "tester", "scopes": ["gpu-read"], "exp": {}}})", kNowMs / 1000 + 60)));
  EXPECT_FALSE(json::parse(Get("/auth/whoami", cpu).body).contains("exp"));
  EXPECT_EQ(Get("/auth/whoami").status, 401);
  EXPECT_EQ(Get("/auth/whoami", "x.y.z").status, 401);
}

TEST_F(DaemonTest, StreamsPollOnlyWhileSomeoneListensAndOnlyWhatWasAsked) {
  Start();
  // Each poller went idle once started (it waits for a subscriber) without
  // polling.
  ASSERT_TRUE(zeus::testing::WaitUntil([&] {
    return daemon_->GpuPollerIdles() == std::vector<std::uint64_t>{1, 1} &&
           daemon_->CpuPollerIdles() == std::vector<std::uint64_t>{1, 1};
  }));
  EXPECT_THAT(daemon_->GpuPollCounts(), ElementsAre(0u, 0u));
  EXPECT_THAT(daemon_->CpuPollCounts(), ElementsAre(0u, 0u));
  auto r = Get("/gpu/stream_power?gpu_ids=1");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/event-stream");
  ASSERT_NE(Header(r, "Cache-Control"), nullptr);
  ASSERT_NE(r.stream, nullptr);
  std::atomic<int> wakeups{0};
  r.stream->SetWakeup([&] { ++wakeups; });
  ASSERT_TRUE(zeus::testing::WaitUntil([&] { return wakeups.load() > 0; }));
  const std::string frames = r.stream->Next();
  EXPECT_THAT(frames, HasSubstr("data: {\"gpu_id\":1,\"power_mw\":100000,\"timestamp_ms\":1700000000123}\n\n"));
  ASSERT_TRUE(zeus::testing::WaitUntil([&] { return daemon_->GpuPollCounts()[1] > 3; }));
  EXPECT_EQ(daemon_->GpuPollCounts()[0], 0u);
  EXPECT_EQ(daemon_->GpuPollerIdles()[1], 1u) << "GPU 1's poller paused while its stream listened";
  r.stream.reset();  // the client went away
  // GPU 1's poller goes idle again: it waits for a subscriber and polls no
  // more, while GPU 0's never left its first idle.
  ASSERT_TRUE(zeus::testing::WaitUntil([&] { return daemon_->GpuPollerIdles()[1] == 2; }));
  const std::uint64_t stopped_at = daemon_->GpuPollCounts()[1];
  EXPECT_THAT(daemon_->GpuPollerIdles(), ElementsAre(1u, 2u));
  EXPECT_THAT(daemon_->GpuPollCounts(), ElementsAre(0u, stopped_at));

  auto cpu = Get("/cpu/stream_power?cpu_ids=0");
  ASSERT_EQ(cpu.status, 200);
  std::atomic<int> cpu_wakeups{0};
  cpu.stream->SetWakeup([&] { ++cpu_wakeups; });
  ASSERT_TRUE(zeus::testing::WaitUntil([&] { return cpu_wakeups.load() > 0; }));
  EXPECT_THAT(cpu.stream->Next(),
              HasSubstr("data: {\"cpu_id\":0,\"cpu_mw\":0,\"dram_mw\":0,\"timestamp_ms\":1700000000123}\n\n"));
  EXPECT_EQ(daemon_->CpuPollCounts()[1], 0u);
  EXPECT_THAT(daemon_->CpuPollerIdles(), ElementsAre(1u, 1u));
}

}  // namespace
}  // namespace zeus::zeusd
