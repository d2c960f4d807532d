// Copyright 2026 The Zeus C++ Authors.
//
// ZeusdClient against a fake daemon (zeus::http::HttpServer on a Unix
// socket) whose answers the test writes: configuration from the
// environment, discovery, authentication outcomes, capabilities, the
// requests' targets and headers, and error answers.

#include "zeus/zeusd_client/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "http/http.h"
#include "testing/temp_dir.h"
#include "testing/result.h"

namespace zeus::zeusd {
namespace {

using ::testing::HasSubstr;

constexpr const char* kDiscover =
    R"({"gpus": [{"id": 0, "name": "NVIDIA A40", "pci_address": "0000:01:00.0", "cumulative_energy_available": true},
                 {"id": 1, "name": "NVIDIA A40", "pci_address": "0000:02:00.0", "cumulative_energy_available": true}],
        "cpus": [{"id": 0, "dram_available": true}], "enabled_api_groups": ["gpu-control", "gpu-read"],
        "auth_required": %s})";

class FakeDaemon {
 public:
  explicit FakeDaemon(bool auth_required) {
    discover_ = kDiscover;  // before the server starts
    discover_.replace(discover_.find("%s"), 2, auth_required ? "true" : "false");
    http::HttpServerOptions options;
    options.unix_socket_path = tmp_.File("zeusd.sock");
    options.threads = 1;
    auto server = http::HttpServer::Start(options, [this](const http::HttpRequest& r) { return Handle(r); });
    server_ = zeus::testing::Unwrap(std::move(server));
  }
  ~FakeDaemon() { server_->Shutdown(); }

  ZeusdConfig Config(std::string token = "") const {
    ZeusdConfig c;
    c.socket_path = tmp_.File("zeusd.sock");
    c.token = std::move(token);
    return c;
  }

  // Requests seen: "METHOD target auth-header".
  std::vector<std::string> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

  // The answers, changed between requests (under the lock: TSan does not
  // see the socket's ordering).
  void SetDiscover(std::string body) {
    std::lock_guard lock(mu_);
    discover_ = std::move(body);
  }
  void SetWhoami(http::HttpResponse r) {
    std::lock_guard lock(mu_);
    whoami_ = std::move(r);
  }
  void SetSetLimit(http::HttpResponse r) {
    std::lock_guard lock(mu_);
    set_limit_ = std::move(r);
  }
  // The answer to every request for `path` (the target without its query),
  // ahead of the answers above.
  void SetAnswer(const std::string& path, http::HttpResponse r) {
    std::lock_guard lock(mu_);
    answers_[path] = std::move(r);
  }

 private:
  http::HttpResponse Handle(const http::HttpRequest& r) {
    std::string auth;
    for (const auto& [name, value] : r.headers) {
      if (name == "Authorization" || name == "authorization") auth = value;
    }
    std::lock_guard lock(mu_);
    seen_.push_back(r.method + " " + r.target + " " + auth);
    if (auto it = answers_.find(r.target.substr(0, r.target.find('?'))); it != answers_.end()) return it->second;
    if (r.target == "/discover") return {200, discover_};
    if (r.target == "/auth/whoami") return whoami_;
    if (r.target.rfind("/gpu/set_power_limit", 0) == 0) return set_limit_;
    if (r.target.rfind("/gpu/get_power_limit", 0) == 0) return {200, R"({"1": {"power_limit_mw": 250000}})"};
    if (r.target == "/time") return {200, R"({"timestamp_ms": 1700000000123})"};
    return {404, R"({"error": "no route"})"};
  }

  testing::TempDir tmp_;
  std::mutex mu_;
  std::vector<std::string> seen_;
  std::string discover_;
  http::HttpResponse whoami_{200, R"({"sub": "alice", "scopes": ["gpu-read"], "exp": 2000000000})"};
  http::HttpResponse set_limit_{200, ""};
  std::map<std::string, http::HttpResponse> answers_;
  std::unique_ptr<http::HttpServer> server_;  // last: stopped before the rest goes
};

TEST(ZeusdConfigTest, TheSocketComesFirstThenHostPortThenNothing) {
  setenv("ZEUSD_SOCK_PATH", "/run/zeusd/zeusd.sock", 1);
  setenv("ZEUSD_HOST_PORT", "node1:4938", 1);
  setenv("ZEUSD_TOKEN", "tok", 1);
  auto c = ZeusdConfig::FromEnv();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->socket_path, "/run/zeusd/zeusd.sock");
  EXPECT_EQ(c->host_port, "");
  EXPECT_EQ(c->token, "tok");
  EXPECT_EQ(c->endpoint(), "/run/zeusd/zeusd.sock");
  unsetenv("ZEUSD_SOCK_PATH");
  c = ZeusdConfig::FromEnv();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->endpoint(), "node1:4938");
  unsetenv("ZEUSD_HOST_PORT");
  unsetenv("ZEUSD_TOKEN");
  EXPECT_FALSE(ZeusdConfig::FromEnv());
}

TEST(ZeusdClientTest, WithoutAuthEveryEnabledGroupIsUsableAndRequestsAreWellFormed) {
  FakeDaemon daemon(/*auth_required=*/false);
  auto client = ZeusdClient::Connect(daemon.Config("ignored-token"));
  ASSERT_TRUE(client) << client.error().message();
  const ZeusdCapabilities& caps = (*client)->capabilities();
  ASSERT_EQ(caps.gpus.size(), 2u);
  EXPECT_EQ(caps.gpus[1].pci_address, "0000:02:00.0");
  EXPECT_TRUE(caps.can_control_gpu());
  EXPECT_TRUE(caps.can_read_gpu());
  EXPECT_FALSE(caps.can_read_cpu());  // not enabled
  EXPECT_TRUE((*client)->SetPowerLimitMw({1, 0}, 175000, true));
  auto limits = (*client)->GetPowerLimitMw({1});
  ASSERT_TRUE(limits);
  EXPECT_EQ(limits->at(1), 250000u);
  EXPECT_EQ((*client)->TimeMs().value(), 1700000000123);
  const auto seen = daemon.seen();
  ASSERT_EQ(seen.size(), 4u);  // no /auth/whoami without auth
  EXPECT_EQ(seen[1], "POST /gpu/set_power_limit?gpu_ids=1,0&power_limit_mw=175000&block=true Bearer ignored-token");
  EXPECT_EQ(seen[2], "GET /gpu/get_power_limit?gpu_ids=1 Bearer ignored-token");
  Status s = (*client)->Require(false, false, /*read_cpu=*/true, {0, 7});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(s.error().message(), HasSubstr("API group 'cpu-read' is not enabled"));
  EXPECT_THAT(s.error().message(), HasSubstr("GPU 7 is not available"));
}

TEST(ZeusdClientTest, AuthOutcomesAreKeptAndScopesDecide) {
  FakeDaemon daemon(/*auth_required=*/true);
  auto none = ZeusdClient::Connect(daemon.Config());
  ASSERT_TRUE(none);
  ASSERT_TRUE((*none)->capabilities().auth_error);
  EXPECT_THAT((*none)->capabilities().auth_error->message(), HasSubstr("no token was provided"));
  EXPECT_FALSE((*none)->capabilities().can_read_gpu());
  EXPECT_EQ((*none)->Require(false, true, false).error().code(), ErrorCode::kPermissionDenied);

  auto reader = ZeusdClient::Connect(daemon.Config("t1"));
  ASSERT_TRUE(reader);
  EXPECT_EQ((*reader)->capabilities().subject, "alice");
  EXPECT_EQ((*reader)->capabilities().expires_unix_s, 2000000000);
  EXPECT_TRUE((*reader)->capabilities().can_read_gpu());
  EXPECT_FALSE((*reader)->capabilities().can_control_gpu());
  Status s = (*reader)->Require(/*control_gpu=*/true, false, false);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message(), HasSubstr("the token lacks the 'gpu-control' scope (it has: gpu-read)"));

  daemon.SetWhoami({401, R"({"error": "Token has expired."})"});
  auto expired = ZeusdClient::Connect(daemon.Config("t2"));
  ASSERT_TRUE(expired);
  ASSERT_TRUE((*expired)->capabilities().auth_error);
  EXPECT_THAT((*expired)->capabilities().auth_error->message(), HasSubstr("token rejected: Token has expired."));
}

TEST(ZeusdClientTest, ErrorAnswersNameTheOperationStatusAndPerDeviceMessages) {
  FakeDaemon daemon(/*auth_required=*/false);
  auto client = ZeusdClient::Connect(daemon.Config());
  ASSERT_TRUE(client);
  daemon.SetSetLimit({403, R"({"errors": {"1": "Insufficient permissions"}})"});
  Status s = (*client)->SetPowerLimitMw({1}, 100000, true);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(s.error().native_code(), 403);
  EXPECT_THAT(s.error().message(), HasSubstr("failed to set the power limit (HTTP 403): GPU/CPU 1: Insufficient permissions"));
  // An id the daemon does not have is bad input (zeusd answers 400), not a
  // missing route or group (404).
  daemon.SetSetLimit({400, R"({"error": "GPU 5 not found"})"});
  s = (*client)->SetPowerLimitMw({5}, 100000, true);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message(), HasSubstr("GPU 5 not found"));
}

// Each status zeusd answers (zeus-reference 3.4, and 503 for a GPU past its
// deadline) reads back through the HTTP layer's table, with the status as
// the native code and, for 401 and 404, what to do.
TEST(ZeusdClientTest, EveryStatusTheDaemonAnswersHasItsCode) {
  FakeDaemon daemon(/*auth_required=*/false);
  auto client = ZeusdClient::Connect(daemon.Config());
  ASSERT_TRUE(client);
  const std::vector<std::pair<int, ErrorCode>> answers = {
      {400, ErrorCode::kInvalidArgument}, {401, ErrorCode::kPermissionDenied}, {403, ErrorCode::kPermissionDenied},
      {404, ErrorCode::kNotFound},        {405, ErrorCode::kInvalidArgument},  {500, ErrorCode::kInternal},
      {503, ErrorCode::kUnavailable},
  };
  for (const auto& [status, code] : answers) {
    daemon.SetSetLimit({status, R"({"error": "no"})"});
    Status s = (*client)->SetPowerLimitMw({0}, 100000, true);
    ASSERT_FALSE(s) << status;
    EXPECT_EQ(s.error().code(), code) << status;
    EXPECT_EQ(s.error().native_code(), status);
    EXPECT_THAT(s.error().message(), HasSubstr(fmt::format("failed to set the power limit (HTTP {}): no.", status)));
  }
  daemon.SetSetLimit({401, R"({"error": "no"})"});
  EXPECT_THAT((*client)->SetPowerLimitMw({0}, 100000, true).error().message(), HasSubstr("Set ZEUSD_TOKEN"));
  daemon.SetSetLimit({404, R"({"error": "no"})"});
  EXPECT_THAT((*client)->SetPowerLimitMw({0}, 100000, true).error().message(),
              HasSubstr("Enable the API group with zeusd serve --enable"));
}

TEST(ZeusdClientTest, AnOldDaemonWithoutGpuFieldsIsRefusedWithAnUpgradeHint) {
  FakeDaemon daemon(/*auth_required=*/false);
  daemon.SetDiscover(R"({"gpus": [{"id": 0}], "cpus": [], "enabled_api_groups": [], "auth_required": false})");
  auto client = ZeusdClient::Connect(daemon.Config());
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(client.error().message(), HasSubstr("Upgrade zeusd"));
}

TEST(ZeusdClientTest, NoDaemonIsUnavailableNamingTheSocket) {
  ZeusdConfig c;
  c.socket_path = "/nonexistent/zeusd.sock";
  auto client = ZeusdClient::Connect(c);
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(client.error().message(), HasSubstr("cannot reach zeusd at /nonexistent/zeusd.sock"));
}

TEST(ZeusdClientTest, EveryTypedCallSendsItsTargetAndDecodesItsAnswer) {
  FakeDaemon daemon(/*auth_required=*/false);
  for (const char* write : {"/gpu/set_gpu_locked_clocks", "/gpu/set_mem_locked_clocks", "/gpu/reset_gpu_locked_clocks",
                            "/gpu/reset_mem_locked_clocks", "/gpu/reset_locked_clocks", "/gpu/set_persistence_mode"}) {
    daemon.SetAnswer(write, {200, ""});
  }
  daemon.SetAnswer("/gpu/get_power", {200, R"({"timestamp_ms": 1700000000001, "power_mw": {"0": 70000, "1": 80000}})"});
  daemon.SetAnswer("/cpu/get_power", {200, R"({"timestamp_ms": 1700000000002,
      "power_mw": {"0": {"cpu_mw": 30000, "dram_mw": 4000}, "1": {"cpu_mw": 20000, "dram_mw": null}}})"});
  daemon.SetAnswer("/gpu/get_power_limit_constraints",
                   {200, R"({"0": {"min_power_limit_mw": 100000, "max_power_limit_mw": 300000}})"});
  daemon.SetAnswer("/gpu/get_persistence_mode", {200, R"({"0": {"enabled": true}, "1": {"enabled": false}})"});
  auto client = ZeusdClient::Connect(daemon.Config());
  ASSERT_TRUE(client) << client.error().message();
  ZeusdClient& c = **client;

  EXPECT_TRUE(c.SetGpuLockedClocks({0, 1}, 210, 1740, true));
  EXPECT_TRUE(c.SetMemLockedClocks({1}, 405, 1215, false));
  EXPECT_TRUE(c.ResetGpuLockedClocks({0}, true));
  EXPECT_TRUE(c.ResetMemLockedClocks({0}, false));
  EXPECT_TRUE(c.ResetLockedClocks({1}, true));
  EXPECT_TRUE(c.SetPersistenceMode({0}, true, true));
  auto gpu_power = c.GetGpuPower({0, 1});
  ASSERT_TRUE(gpu_power) << gpu_power.error().message();
  EXPECT_EQ(gpu_power->timestamp_ms, 1700000000001);
  EXPECT_EQ(gpu_power->power_mw, (std::map<int, std::uint32_t>{{0, 70000}, {1, 80000}}));
  auto cpu_power = c.GetCpuPower();
  ASSERT_TRUE(cpu_power) << cpu_power.error().message();
  EXPECT_EQ(cpu_power->timestamp_ms, 1700000000002);
  ASSERT_EQ(cpu_power->power_mw.size(), 2u);
  EXPECT_EQ(cpu_power->power_mw.at(0).cpu_mw, 30000u);
  EXPECT_EQ(cpu_power->power_mw.at(0).dram_mw, 4000u);
  EXPECT_EQ(cpu_power->power_mw.at(1).cpu_mw, 20000u);
  EXPECT_EQ(cpu_power->power_mw.at(1).dram_mw, std::nullopt);
  auto ranges = c.GetPowerLimitRangeMw({0});
  ASSERT_TRUE(ranges) << ranges.error().message();
  EXPECT_EQ(ranges->at(0).min_mw, 100000u);
  EXPECT_EQ(ranges->at(0).max_mw, 300000u);
  auto persistence = c.GetPersistenceMode();
  ASSERT_TRUE(persistence) << persistence.error().message();
  EXPECT_EQ(*persistence, (std::map<int, bool>{{0, true}, {1, false}}));

  const std::vector<std::string> seen = daemon.seen();
  const std::vector<std::string> expected = {
      "GET /discover ",
      "POST /gpu/set_gpu_locked_clocks?gpu_ids=0,1&min_clock_mhz=210&max_clock_mhz=1740&block=true ",
      "POST /gpu/set_mem_locked_clocks?gpu_ids=1&min_clock_mhz=405&max_clock_mhz=1215&block=false ",
      "POST /gpu/reset_gpu_locked_clocks?gpu_ids=0&block=true ",
      "POST /gpu/reset_mem_locked_clocks?gpu_ids=0&block=false ",
      "POST /gpu/reset_locked_clocks?gpu_ids=1&block=true ",
      "POST /gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true ",
      "GET /gpu/get_power?gpu_ids=0,1 ",
      "GET /cpu/get_power ",
      "GET /gpu/get_power_limit_constraints?gpu_ids=0 ",
      "GET /gpu/get_persistence_mode ",
  };
  EXPECT_EQ(seen, expected);
}

TEST(ZeusdClientTest, AnswersWithoutTheirFieldsAreIoErrorsNamingTheRoute) {
  FakeDaemon daemon(/*auth_required=*/false);
  daemon.SetAnswer("/gpu/get_power", {200, R"({"timestamp_ms": 1, "power_mw": {"0": "a lot"}})"});
  daemon.SetAnswer("/cpu/get_power", {200, R"({"power_mw": {}})"});
  daemon.SetAnswer("/gpu/get_power_limit_constraints", {200, R"({"0": {"min_power_limit_mw": 1}})"});
  daemon.SetAnswer("/gpu/get_persistence_mode", {200, R"({"0": {}})"});
  auto client = ZeusdClient::Connect(daemon.Config());
  ASSERT_TRUE(client) << client.error().message();
  ZeusdClient& c = **client;
  const Error errors[] = {c.GetGpuPower().error(), c.GetCpuPower().error(), c.GetPowerLimitRangeMw().error(),
                          c.GetPersistenceMode().error()};
  for (const Error& e : errors) EXPECT_EQ(e.code(), ErrorCode::kIoError) << e.message();
  EXPECT_THAT(errors[0].message(), HasSubstr("zeusd's /gpu/get_power answer is malformed"));
  EXPECT_THAT(errors[1].message(), HasSubstr("zeusd's /cpu/get_power answer has no timestamp_ms"));
  EXPECT_THAT(errors[2].message(), HasSubstr("zeusd's /gpu/get_power_limit_constraints answer is malformed"));
  EXPECT_THAT(errors[3].message(), HasSubstr("lacks 'enabled'"));
}

// Every call goes through the one status table: a 403 (a token without the
// scope, or the driver's refusal) is kPermissionDenied whichever call met it.
TEST(ZeusdClientTest, A403FromAnyCallIsPermissionDenied) {
  FakeDaemon daemon(/*auth_required=*/false);
  for (const char* path : {"/gpu/set_power_limit", "/gpu/set_persistence_mode", "/gpu/set_gpu_locked_clocks",
                           "/gpu/reset_gpu_locked_clocks", "/gpu/set_mem_locked_clocks", "/gpu/reset_mem_locked_clocks",
                           "/gpu/reset_locked_clocks", "/gpu/get_power_limit", "/gpu/get_power_limit_constraints",
                           "/gpu/get_persistence_mode", "/gpu/get_cumulative_energy", "/gpu/get_power",
                           "/cpu/get_cumulative_energy", "/cpu/get_power"}) {
    daemon.SetAnswer(path, {403, R"({"error": "the token lacks the scope"})"});
  }
  auto client = ZeusdClient::Connect(daemon.Config());
  ASSERT_TRUE(client) << client.error().message();
  ZeusdClient& c = **client;
  const std::vector<std::pair<const char*, std::function<Status()>>> calls = {
      {"SetPowerLimitMw", [&] { return c.SetPowerLimitMw({0}, 100000); }},
      {"SetPersistenceMode", [&] { return c.SetPersistenceMode({0}, true); }},
      {"SetGpuLockedClocks", [&] { return c.SetGpuLockedClocks({0}, 1, 2); }},
      {"ResetGpuLockedClocks", [&] { return c.ResetGpuLockedClocks({0}); }},
      {"SetMemLockedClocks", [&] { return c.SetMemLockedClocks({0}, 1, 2); }},
      {"ResetMemLockedClocks", [&] { return c.ResetMemLockedClocks({0}); }},
      {"ResetLockedClocks", [&] { return c.ResetLockedClocks({0}); }},
      {"GetPowerLimitMw", [&] { return Status(c.GetPowerLimitMw().map([](auto&&) {})); }},
      {"GetPowerLimitRangeMw", [&] { return Status(c.GetPowerLimitRangeMw().map([](auto&&) {})); }},
      {"GetPersistenceMode", [&] { return Status(c.GetPersistenceMode().map([](auto&&) {})); }},
      {"GetGpuEnergyMj", [&] { return Status(c.GetGpuEnergyMj().map([](auto&&) {})); }},
      {"GetGpuPower", [&] { return Status(c.GetGpuPower().map([](auto&&) {})); }},
      {"GetCpuEnergy", [&] { return Status(c.GetCpuEnergy().map([](auto&&) {})); }},
      {"GetCpuPower", [&] { return Status(c.GetCpuPower().map([](auto&&) {})); }},
  };
  for (const auto& [name, call] : calls) {
    const Status s = call();
    ASSERT_FALSE(s) << name;
    EXPECT_EQ(s.error().code(), ErrorCode::kPermissionDenied) << name << ": " << s.error().message();
    EXPECT_EQ(s.error().native_code(), 403) << name;
    EXPECT_THAT(s.error().message(), HasSubstr("the token lacks the scope")) << name;
  }
}

}  // namespace
}  // namespace zeus::zeusd
