// Copyright 2026 The Zeus C++ Authors.
//
// ZeusdCpu and OpenCpusLocalOrZeusd against a fake daemon (zeus::http's
// server on a Unix socket, answers written by the test) and fake powercap
// trees: energy since open from the daemon's counts, a count that goes back
// and a reset the daemon reports, error mapping, and the choice between
// local RAPL and the daemon (environment set or not, a local tree absent or
// with its counters missing, an unreachable daemon, a token without the
// scope, a daemon without the cpu-read group).

#include "zeus/zeusd_client/cpu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "http/http.h"
#include "testing/rapl_tree.h"
#include "testing/temp_dir.h"
#include "testing/result.h"

namespace zeus::zeusd {
namespace {

using ::testing::HasSubstr;

class FakeDaemon {
 public:
  FakeDaemon() {
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
  std::string socket() const { return tmp_.File("zeusd.sock"); }

  void SetGroups(std::string groups_json, bool auth_required) {
    std::lock_guard lock(mu_);
    groups_ = std::move(groups_json);
    auth_required_ = auth_required;
  }
  void SetScopes(std::string scopes_json) {
    std::lock_guard lock(mu_);
    scopes_ = std::move(scopes_json);
  }
  // The daemon's counts (µJ) per CPU id; DRAM absent: null.
  void SetCount(int id, std::uint64_t package_uj, std::optional<std::uint64_t> dram_uj) {
    std::lock_guard lock(mu_);
    counts_[id] = {package_uj, dram_uj};
    energy_answer_.reset();
  }
  // The next CPU energy answers are this one instead.
  void SetEnergyAnswer(http::HttpResponse r) {
    std::lock_guard lock(mu_);
    energy_answer_ = std::move(r);
  }
  std::vector<std::string> energy_targets() {
    std::lock_guard lock(mu_);
    return energy_targets_;
  }

 private:
  http::HttpResponse Handle(const http::HttpRequest& r) {
    std::lock_guard lock(mu_);
    if (r.target == "/discover") {
      return {200, fmt::format(R"({{"gpus": [], "cpus": [{{"id": 0, "dram_available": true}},
                                {{"id": 1, "dram_available": false}}], "enabled_api_groups": {},
                                "auth_required": {}}})",
                               groups_, auth_required_ ? "true" : "false")};
    }
    if (r.target == "/auth/whoami") return {200, fmt::format(R"({{"sub": "alice", "scopes": {}}})", scopes_)};
    if (r.target.rfind("/cpu/get_cumulative_energy", 0) == 0) {
      energy_targets_.push_back(r.target);
      if (energy_answer_) return *energy_answer_;
      std::string body = "{";
      for (const auto& [id, count] : counts_) {
        if (body.size() > 1) body += ",";
        body += fmt::format(R"("{}": {{"cpu_energy_uj": {}, "dram_energy_uj": {}}})", id, count.first,
                            count.second ? std::to_string(*count.second) : "null");
      }
      return {200, body + "}"};
    }
    return {404, R"({"error": "no route"})"};
  }

  testing::TempDir tmp_;
  std::mutex mu_;
  std::string groups_ = R"(["cpu-read"])";
  bool auth_required_ = false;
  std::string scopes_ = R"(["cpu-read"])";
  std::map<int, std::pair<std::uint64_t, std::optional<std::uint64_t>>> counts_;
  std::optional<http::HttpResponse> energy_answer_;
  std::vector<std::string> energy_targets_;
  std::unique_ptr<http::HttpServer> server_;  // last: stopped before the rest goes
};

std::shared_ptr<ZeusdClient> Connect(const FakeDaemon& daemon, std::string token = "") {
  auto client = ZeusdClient::Connect(daemon.Config(std::move(token)));
  return std::shared_ptr<ZeusdClient>(zeus::testing::Unwrap(std::move(client)));
}

TEST(ZeusdCpuTest, EnergyIsTheDaemonsCountSinceOpenWithDramFromDiscover) {
  FakeDaemon daemon;
  daemon.SetCount(0, 5'000'000, 1'000'000);
  daemon.SetCount(1, 9'000'000, std::nullopt);
  auto cpus = OpenZeusdCpus(Connect(daemon));
  ASSERT_TRUE(cpus) << cpus.error().message();
  ASSERT_EQ((*cpus)->size(), 2u);
  device::Cpu& zero = (*cpus)->cpu(0);
  device::Cpu& one = (*cpus)->cpu(1);
  EXPECT_EQ(zero.name(), "package-0");
  EXPECT_EQ(one.name(), "package-1");
  EXPECT_TRUE(zero.has_dram());
  EXPECT_FALSE(one.has_dram());
  EXPECT_EQ(zero.max_safe_read_interval(), std::chrono::nanoseconds::max());

  daemon.SetCount(0, 7'500'000, 1'250'000);
  daemon.SetCount(1, 9'000'001, std::nullopt);
  auto e0 = zero.TotalEnergy();
  ASSERT_TRUE(e0) << e0.error().message();
  EXPECT_DOUBLE_EQ(e0->package_mj, 2500.0);  // (7.5e6 - 5e6) µJ
  ASSERT_TRUE(e0->dram_mj);
  EXPECT_DOUBLE_EQ(*e0->dram_mj, 250.0);  // (1.25e6 - 1e6) µJ
  EXPECT_FALSE(e0->wrap_uncertain);
  EXPECT_EQ(e0->counter_resets, 0u);
  auto e1 = one.TotalEnergy();
  ASSERT_TRUE(e1) << e1.error().message();
  EXPECT_DOUBLE_EQ(e1->package_mj, 0.001);
  EXPECT_FALSE(e1->dram_mj);
  // One package per request, DRAM asked for only where the daemon has it.
  EXPECT_THAT(daemon.energy_targets(),
              ::testing::Contains("/cpu/get_cumulative_energy?cpu_ids=1&cpu=true&dram=false"));
  EXPECT_THAT(daemon.energy_targets(),
              ::testing::Contains("/cpu/get_cumulative_energy?cpu_ids=0&cpu=true&dram=true"));
}

TEST(ZeusdCpuTest, ACountThatGoesBackIsAResetOnceThenCountsOn) {
  FakeDaemon daemon;
  daemon.SetCount(0, 1'000'000, 2'000'000);
  auto cpu = ZeusdCpu::Open(Connect(daemon), 0, /*has_dram=*/true);
  ASSERT_TRUE(cpu) << cpu.error().message();
  daemon.SetCount(0, 3'000'000, 2'500'000);
  auto before = (*cpu)->TotalEnergy();
  ASSERT_TRUE(before);
  EXPECT_DOUBLE_EQ(before->package_mj, 2000.0);
  // The daemon restarted: both its counts start again from its new origin.
  daemon.SetCount(0, 400'000, 100'000);
  auto reset = (*cpu)->TotalEnergy();
  ASSERT_FALSE(reset);
  EXPECT_EQ(reset.error().code(), ErrorCode::kIoError);
  EXPECT_THAT(reset.error().message(), HasSubstr("went back from 3000000 to 400000"));
  EXPECT_THAT(reset.error().message(), HasSubstr(daemon.socket()));
  daemon.SetCount(0, 1'400'000, 300'000);
  auto after = (*cpu)->TotalEnergy();
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_DOUBLE_EQ(after->package_mj, 3000.0);  // 2000 + (1.4e6 - 0.4e6) / 1000
  EXPECT_DOUBLE_EQ(*after->dram_mj, 700.0);     // 500 + (0.3e6 - 0.1e6) / 1000
  EXPECT_EQ(after->counter_resets, 2u);         // the package's and the DRAM's
}

TEST(ZeusdCpuTest, AResetTheDaemonSawIsCountedAndErrorsAreTheClients) {
  FakeDaemon daemon;
  daemon.SetCount(0, 1'000'000, 0);
  auto cpu = ZeusdCpu::Open(Connect(daemon), 0, /*has_dram=*/false);
  ASSERT_TRUE(cpu) << cpu.error().message();
  daemon.SetEnergyAnswer({500, R"x({"errors": {"0": "/sys/class/powercap/intel-rapl:0/energy_uj: the counter went )x"
                               R"x(back ..., so the counter was reset (CPU hotplug, ...)"}})x"});
  auto reset = (*cpu)->TotalEnergy();
  ASSERT_FALSE(reset);
  EXPECT_THAT(reset.error().message(), HasSubstr("package-0"));
  daemon.SetEnergyAnswer({403, R"({"error": "Token lacks the required scope 'cpu-read'. Token scopes: []"})"});
  auto denied = (*cpu)->TotalEnergy();
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(denied.error().message(), HasSubstr(daemon.socket()));
  daemon.SetEnergyAnswer({200, R"({"0": {"cpu_energy_uj": null, "dram_energy_uj": null}})"});
  auto empty = (*cpu)->TotalEnergy();
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code(), ErrorCode::kIoError);
  EXPECT_THAT(empty.error().message(), HasSubstr("no package energy"));
  daemon.SetCount(0, 1'500'000, 0);  // the count went on across the daemon's reset
  auto after = (*cpu)->TotalEnergy();
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_DOUBLE_EQ(after->package_mj, 500.0);
  EXPECT_EQ(after->counter_resets, 1u);  // the daemon's, not the failed reads
}

TEST(ZeusdCpuTest, AListedDramWithoutACountIsAnError) {
  FakeDaemon daemon;
  daemon.SetCount(0, 1'000'000, std::nullopt);
  auto cpu = ZeusdCpu::Open(Connect(daemon), 0, /*has_dram=*/true);
  ASSERT_FALSE(cpu);
  EXPECT_EQ(cpu.error().code(), ErrorCode::kIoError);
  EXPECT_THAT(cpu.error().message(), HasSubstr("no DRAM energy"));
}

class LocalOrZeusdTest : public ::testing::Test {
 protected:
  device::CpuOptions Local(const std::string& root) const {
    device::CpuOptions options;
    options.powercap_root = root;
    options.wrap_guard = false;
    return options;
  }
  // A readable local tree with one package.
  std::string ReadableTree() {
    testing::RaplTree tree(tmp_.File("powercap"));
    tree.AddPackage(0, /*dram=*/false);
    tree.AddPackage(1, /*dram=*/false);
    tree.SetEnergy(0, false, 100);
    return tree.root();
  }
  testing::TempDir tmp_;
  FakeDaemon daemon_;
};

TEST_F(LocalOrZeusdTest, WithoutTheEnvironmentItIsLocalRaplExactly) {
  testing::ScopedEnv sock("ZEUSD_SOCK_PATH", std::nullopt);
  testing::ScopedEnv host("ZEUSD_HOST_PORT", std::nullopt);
  auto readable = OpenCpusLocalOrZeusd(Local(ReadableTree()));
  ASSERT_TRUE(readable) << readable.error().message();
  EXPECT_EQ(readable->cpus->size(), 2u);
  EXPECT_FALSE(readable->zeusd_endpoint);
  // No RAPL at all is still no CPUs, not an error, and not the daemon.
  auto absent = OpenCpusLocalOrZeusd(Local(tmp_.File("none")));
  ASSERT_TRUE(absent) << absent.error().message();
  EXPECT_TRUE(absent->cpus->empty());
  EXPECT_TRUE(daemon_.energy_targets().empty());
}

TEST_F(LocalOrZeusdTest, ReadableLocalRaplIsPreferredEvenWithADaemonConfigured) {
  ZeusdConfig nowhere;
  nowhere.socket_path = tmp_.File("no-daemon.sock");
  auto opened = OpenCpusLocalOrZeusd(Local(ReadableTree()), nowhere, CpuDemand::kRequired);
  ASSERT_TRUE(opened) << opened.error().message();
  EXPECT_EQ(opened->cpus->size(), 2u);
  EXPECT_FALSE(opened->zeusd_endpoint);
}

TEST_F(LocalOrZeusdTest, AbsentLocalRaplWithTheEnvironmentSetIsTheDaemons) {
  daemon_.SetCount(0, 1'000'000, 3'000'000);
  daemon_.SetCount(1, 2'000'000, std::nullopt);
  testing::ScopedEnv sock("ZEUSD_SOCK_PATH", daemon_.socket());
  auto opened = OpenCpusLocalOrZeusd(Local(tmp_.File("none")));
  ASSERT_TRUE(opened) << opened.error().message();
  ASSERT_EQ(opened->cpus->size(), 2u);
  EXPECT_EQ(opened->zeusd_endpoint, daemon_.socket());
  ASSERT_TRUE(opened->note);
  EXPECT_THAT(*opened->note, HasSubstr(tmp_.File("none")));
  daemon_.SetCount(0, 1'250'000, 3'000'500);
  auto energy = opened->cpus->cpu(0).TotalEnergy();
  ASSERT_TRUE(energy) << energy.error().message();
  EXPECT_DOUBLE_EQ(energy->package_mj, 250.0);
  EXPECT_DOUBLE_EQ(*energy->dram_mj, 0.5);
}

TEST_F(LocalOrZeusdTest, LocalCountersThatAreMissingSendTheReadsToTheDaemon) {
  const std::string root = ReadableTree();
  ASSERT_EQ(std::remove(testing::RaplTree(root).EnergyPath(1, false).c_str()), 0);
  daemon_.SetCount(0, 0, 0);
  daemon_.SetCount(1, 0, std::nullopt);
  auto opened = OpenCpusLocalOrZeusd(Local(root), daemon_.Config(), CpuDemand::kRequired);
  ASSERT_TRUE(opened) << opened.error().message();
  EXPECT_EQ(opened->zeusd_endpoint, daemon_.socket());
  EXPECT_THAT(*opened->note, HasSubstr("intel-rapl:1/energy_uj"));
}

TEST_F(LocalOrZeusdTest, AnUnreachableDaemonIsAnErrorNamingTheSocket) {
  ZeusdConfig nowhere;
  nowhere.socket_path = tmp_.File("no-daemon.sock");
  for (CpuDemand demand : {CpuDemand::kRequired, CpuDemand::kIfServed}) {
    auto opened = OpenCpusLocalOrZeusd(Local(tmp_.File("none")), nowhere, demand);
    ASSERT_FALSE(opened);
    EXPECT_EQ(opened.error().code(), ErrorCode::kUnavailable);
    EXPECT_THAT(opened.error().message(), HasSubstr("cannot reach zeusd at " + nowhere.socket_path));
    EXPECT_THAT(opened.error().message(), HasSubstr("local RAPL is not usable"));
  }
}

TEST_F(LocalOrZeusdTest, ATokenWithoutTheScopeIsAnErrorSayingSo) {
  daemon_.SetGroups(R"(["gpu-read", "cpu-read"])", /*auth_required=*/true);
  daemon_.SetScopes(R"(["gpu-read"])");
  for (CpuDemand demand : {CpuDemand::kRequired, CpuDemand::kIfServed}) {
    auto opened = OpenCpusLocalOrZeusd(Local(tmp_.File("none")), daemon_.Config("a-token"), demand);
    ASSERT_FALSE(opened);
    EXPECT_EQ(opened.error().code(), ErrorCode::kFailedPrecondition);
    EXPECT_THAT(opened.error().message(), HasSubstr("lacks the 'cpu-read' scope"));
    EXPECT_THAT(opened.error().message(), HasSubstr(daemon_.socket()));
  }
  // No token at all, on a daemon that wants one.
  auto opened = OpenCpusLocalOrZeusd(Local(tmp_.File("none")), daemon_.Config(), CpuDemand::kRequired);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(opened.error().message(), HasSubstr("ZEUSD_TOKEN"));
}

TEST_F(LocalOrZeusdTest, ADaemonWithoutCpuReadIsAnErrorUnlessCpusAreOptional) {
  daemon_.SetGroups(R"(["gpu-control", "gpu-read"])", /*auth_required=*/false);
  auto required = OpenCpusLocalOrZeusd(Local(tmp_.File("none")), daemon_.Config(), CpuDemand::kRequired);
  ASSERT_FALSE(required);
  EXPECT_EQ(required.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(required.error().message(), HasSubstr("'cpu-read' is not enabled"));
  EXPECT_THAT(required.error().message(), HasSubstr("--enable"));
  auto optional = OpenCpusLocalOrZeusd(Local(tmp_.File("none")), daemon_.Config(), CpuDemand::kIfServed);
  ASSERT_TRUE(optional) << optional.error().message();
  EXPECT_TRUE(optional->cpus->empty());
  EXPECT_FALSE(optional->zeusd_endpoint);
  ASSERT_TRUE(optional->note);
  EXPECT_THAT(*optional->note, HasSubstr("'cpu-read' is not enabled"));
}

}  // namespace
}  // namespace zeus::zeusd
