// Copyright 2026 The Zeus C++ Authors.
//
// ZeusdClient against a fake daemon (zeus::http::HttpServer on a Unix
// socket) whose answers the test writes: configuration from the
// environment, discovery, authentication outcomes, capabilities, the
// requests' targets and headers, and error answers.

#include "zeus/zeusd/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "http/http.h"
#include "testing/temp_dir.h"

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
    EXPECT_TRUE(server) << server.error().message();
    server_ = std::move(*server);
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

 private:
  http::HttpResponse Handle(const http::HttpRequest& r) {
    std::string auth;
    for (const auto& [name, value] : r.headers) {
      if (name == "Authorization" || name == "authorization") auth = value;
    }
    std::lock_guard lock(mu_);
    seen_.push_back(r.method + " " + r.target + " " + auth);
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
  daemon.SetSetLimit({400, R"({"error": "GPU 5 not found"})"});
  s = (*client)->SetPowerLimitMw({5}, 100000, true);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message(), HasSubstr("GPU 5 not found"));
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

}  // namespace
}  // namespace zeus::zeusd
