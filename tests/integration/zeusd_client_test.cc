// Copyright 2026 The Zeus C++ Authors.
//
// Our clients of zeusd, against the real daemon (build/bin/zeusd, as root,
// on the NVML emulator) and zeus-emulated-train run as an unprivileged user
// (nobody, through setpriv): the optimizer changes limits through the
// daemon when ZEUSD_SOCK_PATH is set, applies the optimum computed here by
// hand, and the original limit is back after a normal end and after SIGTERM
// (read by this process); a configured daemon that is unreachable, or a token
// without the gpu-control scope, is an error that says so (W13b); without the
// daemon an unprivileged run is refused and told how to fix it; `zeus info`
// shows the daemon. CPU energy: `zeus monitor --cpus` as nobody, whose
// powercap tree (a fake one, counters root-only) is unreadable, reads the
// counters through the daemon (cpu-read, --powercap-root on the same tree)
// and reports the counter's delta; an absent daemon or a token without
// cpu-read is an error naming it.

#include <signal.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "testing/rapl_tree.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "zeus/device/discovery.h"

namespace zeus {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using testing::ProcessResult;

// Demand (W) and iteration time (s) at limits 100..300 W. Energy per step at
// each limit of the 50 W grid, by hand: 100*2.0=200, 150*1.4=210,
// 200*1.1=220, 240*1.0=240, 260*0.98=254.8 J: the energy optimum is 100 W.
json Gpu(double original_w) {
  return {{"name", "Tesla V100-SXM2-32GB"},
          {"architecture", "volta"},
          {"min_power_limit_w", 100},
          {"max_power_limit_w", 300},
          {"default_power_limit_w", 300},
          {"power_limit_w", original_w},
          {"energy_counter", true},
          {"workload",
           {{"power_limits_w", {100, 150, 200, 250, 300}},
            {"power_w", {100, 150, 200, 240, 260}},
            {"iteration_time_s", {2.0, 1.4, 1.1, 1.0, 0.98}}}}};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Accepts(const std::string& socket_path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  socket_path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

class ZeusdClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the daemon runs as root, the trainer as nobody";
    // nobody must reach the scenario, the emulator's state and the socket.
    ASSERT_EQ(chmod(tmp_.path().c_str(), 0777), 0);
    json s = {{"clock", "manual"},
              {"state_file", tmp_.File("state")},
              {"state_file_shared", true},  // root's daemon and nobody's trainer share it
              {"gpus", {Gpu(250)}}};
    scenario_ = tmp_.Write("scenario.json", s.dump());
    ASSERT_EQ(chmod(scenario_.c_str(), 0644), 0);
    socket_ = tmp_.File("zeusd.sock");
  }

  std::map<std::string, std::optional<std::string>> EmulatorEnv() const {
    auto env = DeviceEnv();
    if (tmpdir_) env["TMPDIR"] = *tmpdir_;
    return env;
  }

  std::map<std::string, std::optional<std::string>> DeviceEnv() const {
    return {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
            {"ZEUS_EMULATOR_CONFIG", scenario_},
            {"CUDA_VISIBLE_DEVICES", std::nullopt},
            {"ZEUSD_SOCK_PATH", std::nullopt},
            {"ZEUSD_HOST_PORT", std::nullopt},
            {"ZEUSD_TOKEN", std::nullopt}};
  }

  // Starts zeusd as root on the emulator; ready when its socket accepts.
  void StartDaemon(std::vector<std::string> extra = {}, const std::string& groups = "gpu-control,gpu-read") {
    std::vector<std::string> argv = {ZEUS_TEST_ZEUSD_PATH, "serve", "--mode", "uds", "--socket-path", socket_,
                                     "--socket-permissions", "666", "--nvml-library", ZEUS_TEST_EMULATOR_PATH,
                                     "--enable", groups};
    argv.insert(argv.end(), extra.begin(), extra.end());
    daemon_ = std::make_unique<testing::BackgroundProcess>(argv, tmp_.File("zeusd.out"), tmp_.File("zeusd.err"),
                                                           EmulatorEnv());
    ASSERT_TRUE(testing::WaitUntil([&] { return Accepts(socket_) || !daemon_->Running(); }))
        << "zeusd did not listen within 60 s";
    ASSERT_TRUE(daemon_->Running()) << ReadFile(tmp_.File("zeusd.err"));
    // The emulator's state file was created by root; nobody writes it too.
    chmod(tmp_.File("state").c_str(), 0666);
  }

  std::vector<std::string> TrainArgs(std::vector<std::string> extra, bool as_nobody = true) const {
    std::vector<std::string> args;
    if (as_nobody) args = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    std::vector<std::string> train = {ZEUS_TEST_TRAIN_PATH, "--epochs", "2", "--steps-per-epoch", "40",
                                      "--wait-steps", "1", "--warmup-steps", "2", "--profile-steps", "5",
                                      "--stride-w", "50", "--selector", "energy", "--json"};
    args.insert(args.end(), train.begin(), train.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::map<std::string, std::optional<std::string>> TrainEnv(bool with_daemon, std::string token = "") const {
    auto env = EmulatorEnv();
    if (with_daemon) env["ZEUSD_SOCK_PATH"] = socket_;
    if (!token.empty()) env["ZEUSD_TOKEN"] = token;
    return env;
  }

  // The limits in force, read by this process (root) through the emulator.
  std::vector<double> LimitsW() const {
    testing::ScopedEnv config("ZEUS_EMULATOR_CONFIG", scenario_);
    testing::ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::nullopt);
    device::GpuOptions options;
    options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
    auto gpus = device::OpenGpus(options);
    EXPECT_TRUE(gpus) << gpus.error().message();
    std::vector<double> limits;
    if (!gpus) return limits;
    for (std::size_t i = 0; i < (*gpus)->size(); ++i) limits.push_back((*gpus)->gpu(i).PowerLimitMw().value() / 1000.0);
    return limits;
  }

  testing::TempDir tmp_;
  std::string scenario_;
  std::string socket_;
  std::unique_ptr<testing::BackgroundProcess> daemon_;
  std::optional<std::string> tmpdir_;  // the emulator's default state directory; nullopt: the caller's
};

TEST_F(ZeusdClientTest, NobodyOptimizesThroughTheDaemonAndTheOriginalLimitIsRestored) {
  StartDaemon();
  ProcessResult r = testing::RunProcess(TrainArgs({}), TrainEnv(/*with_daemon=*/true));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["state"], "done") << r.err;
  EXPECT_EQ(out["optimal_power_limit_w"], 100) << r.err;
  EXPECT_EQ(out["measurements"].size(), 5u);
  EXPECT_EQ(LimitsW(), std::vector<double>{250});
}

// The emulator's default, private per-user state: root's daemon and nobody's
// trainer emulate two different GPUs. Both say so: zeusd at start, the trainer
// when the limit it set through zeusd is not what its own GPU reports.
TEST_F(ZeusdClientTest, OnPrivateEmulatorStatesBothSidesWarnThatTheGpusDiffer) {
  tmpdir_ = tmp_.path();  // each user gets tmp_/zeus-nvml-emulator-<uid>/
  scenario_ = tmp_.Write("private.json", json{{"clock", "manual"}, {"gpus", {Gpu(250)}}}.dump());
  ASSERT_EQ(chmod(scenario_.c_str(), 0644), 0);
  StartDaemon();
  EXPECT_THAT(ReadFile(tmp_.File("zeusd.err")), HasSubstr("is private to uid 0"));
  ProcessResult r = testing::RunProcess(TrainArgs({}), TrainEnv(/*with_daemon=*/true));
  EXPECT_THAT(r.err, HasSubstr("W) is not what this process's emulated GPU reports (250 W): zeusd emulates other "
                               "GPUs than this process"));
  const std::string once = "is not what this process's emulated GPU reports";
  EXPECT_EQ(r.err.find(once), r.err.rfind(once)) << r.err;  // one warning, not one per change
}

TEST_F(ZeusdClientTest, NobodyRestoresThroughTheDaemonOnSigterm) {
  StartDaemon();
  testing::BackgroundProcess train(TrainArgs({"--pause-at-step", "17"}), tmp_.File("train.out"),
                                   tmp_.File("train.err"), TrainEnv(/*with_daemon=*/true));
  ASSERT_TRUE(testing::WaitUntil(
      [&] { return !train.Running() || ReadFile(tmp_.File("train.err")).find("paused at step 17") != std::string::npos; }))
      << "no pause within 60 s";
  ASSERT_TRUE(train.Running()) << ReadFile(tmp_.File("train.err"));
  // Step 1 waits, 2-8 run at 300 W, 9-15 at 250 W, 16-22 at 200 W: the
  // daemon set 200 W for the nobody process.
  EXPECT_EQ(LimitsW(), std::vector<double>{200}) << ReadFile(tmp_.File("train.err"));
  train.Signal(SIGTERM);
  EXPECT_EQ(train.Wait(), 128 + SIGTERM);
  EXPECT_THAT(ReadFile(tmp_.File("train.err")), HasSubstr("original power limits restored"));
  EXPECT_EQ(LimitsW(), std::vector<double>{250});
}

TEST_F(ZeusdClientTest, AConfiguredButUnreachableDaemonIsAnErrorThatSaysSo) {
  // No daemon; the socket path does not exist. As root: NVML would work, but
  // the daemon was asked for, so it is not silently bypassed.
  ProcessResult r = testing::RunProcess(TrainArgs({}, /*as_nobody=*/false), TrainEnv(/*with_daemon=*/true));
  EXPECT_EQ(r.exit_code, 4) << r.err;  // unavailable
  EXPECT_THAT(r.err, HasSubstr("cannot reach zeusd at " + socket_));
  EXPECT_THAT(r.err, HasSubstr("ZEUSD_SOCK_PATH"));
  EXPECT_EQ(LimitsW(), std::vector<double>{250});
}

TEST_F(ZeusdClientTest, ATokenWithoutTheControlScopeIsAnErrorThatNamesIt) {
  const std::string key = tmp_.Write("key", "a signing key for the test only");
  chmod(key.c_str(), 0600);
  ProcessResult token = testing::RunProcess({ZEUS_TEST_ZEUSD_PATH, "token", "issue", "--signing-key-path", key,
                                             "--user", "alice", "--scope", "gpu-read", "--expires", "1h"});
  ASSERT_EQ(token.exit_code, 0) << token.err;
  std::string jwt = token.out;
  while (!jwt.empty() && (jwt.back() == '\n' || jwt.back() == ' ')) jwt.pop_back();
  StartDaemon({"--signing-key-path", key});
  ProcessResult r = testing::RunProcess(TrainArgs({}), TrainEnv(/*with_daemon=*/true, jwt));
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("lacks the 'gpu-control' scope"));
  EXPECT_THAT(r.err, HasSubstr("gpu-read"));  // the scopes it has
  EXPECT_EQ(LimitsW(), std::vector<double>{250});

  // No token at all: the message says to set ZEUSD_TOKEN.
  ProcessResult none = testing::RunProcess(TrainArgs({}), TrainEnv(/*with_daemon=*/true));
  EXPECT_NE(none.exit_code, 0) << none.err;
  EXPECT_THAT(none.err, HasSubstr("ZEUSD_TOKEN"));
}

TEST_F(ZeusdClientTest, WithoutTheDaemonNobodyIsRefusedToldHowAndTrainsOn) {
  // Create the emulator's state as root, then open it to nobody.
  (void)LimitsW();
  chmod(tmp_.File("state").c_str(), 0666);
  ProcessResult r = testing::RunProcess(TrainArgs({}), TrainEnv(/*with_daemon=*/false));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["state"], "disabled");
  EXPECT_THAT(r.err, HasSubstr("no permission to change GPU power limits"));
  EXPECT_THAT(r.err, HasSubstr("run zeusd (as root) and set ZEUSD_SOCK_PATH"));
  EXPECT_THAT(r.err, HasSubstr("training continues at the original power limits, unoptimized"));
  EXPECT_EQ(out["steps"], 80);
  EXPECT_EQ(LimitsW(), std::vector<double>{250});
}

TEST_F(ZeusdClientTest, ZeusInfoShowsTheDaemonItsGroupsAndOurScopes) {
  StartDaemon();
  auto env = EmulatorEnv();
  env["ZEUSD_SOCK_PATH"] = socket_;
  ProcessResult r = testing::RunProcess({ZEUS_TEST_CLI_PATH, "info", "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json z = json::parse(r.out)["zeusd"];
  EXPECT_EQ(z["endpoint"], socket_);
  EXPECT_TRUE(z["error"].is_null()) << z.dump();
  EXPECT_EQ(z["enabled_api_groups"], json({"gpu-control", "gpu-read"}));
  EXPECT_EQ(z["auth_required"], false);
  EXPECT_EQ(z["can_control_gpu"], true);
  EXPECT_EQ(z["can_read_cpu"], false);
  ASSERT_EQ(z["gpus"].size(), 1u);
  EXPECT_EQ(z["gpus"][0]["name"], "Tesla V100-SXM2-32GB");

  ProcessResult text = testing::RunProcess({ZEUS_TEST_CLI_PATH, "info"}, env);
  EXPECT_THAT(text.out, HasSubstr("zeusd at " + socket_ + ": 1 GPU, 0 CPUs; groups gpu-control, gpu-read; auth off"));

  daemon_->Signal(SIGTERM);
  daemon_->Wait();
  ProcessResult gone = testing::RunProcess({ZEUS_TEST_CLI_PATH, "info", "--json"}, env);
  ASSERT_EQ(gone.exit_code, 0) << gone.err;
  EXPECT_THAT(json::parse(gone.out)["zeusd"]["error"].get<std::string>(), HasSubstr("cannot reach zeusd"));
}

// A fake powercap tree whose counters only root may read (as on Linux >=
// 5.10), at `root`: package 0 with DRAM.
void RootOnlyRaplTree(const std::string& root, std::uint64_t package_uj, std::uint64_t dram_uj) {
  testing::RaplTree tree(root);
  tree.AddPackage(0, /*dram=*/true);
  tree.SetEnergy(0, false, package_uj);
  tree.SetEnergy(0, true, dram_uj);
  for (bool dram : {false, true}) ASSERT_EQ(chmod(tree.EnergyPath(0, dram).c_str(), 0400), 0);
}

std::vector<std::string> AsNobody(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  return argv;
}

TEST_F(ZeusdClientTest, NobodyMeasuresCpuEnergyThroughTheDaemonWhereRaplIsRootOnly) {
  const std::string root = tmp_.File("powercap");
  RootOnlyRaplTree(root, 1'000'000, 500'000);
  StartDaemon({"--powercap-root", root}, "gpu-read,cpu-read");
  auto env = TrainEnv(/*with_daemon=*/true);
  env["ZEUS_POWERCAP_ROOT"] = root;
  // The command says it started (the window is open by then) and waits for
  // the test to advance the counters.
  const std::string started = tmp_.File("started");
  const std::string go = tmp_.File("go");
  const std::string script = fmt::format("touch {}; while [ ! -e {} ]; do sleep 0.02; done", started, go);
  testing::BackgroundProcess monitor(AsNobody({ZEUS_TEST_CLI_PATH, "monitor", "--cpus", "--json", "--", "/bin/sh",
                                               "-c", script}),
                                     tmp_.File("monitor.out"), tmp_.File("monitor.err"), env);
  ASSERT_TRUE(testing::WaitUntil([&] { return !monitor.Running() || access(started.c_str(), F_OK) == 0; }))
      << "the command did not start within 60 s";
  ASSERT_TRUE(monitor.Running()) << ReadFile(tmp_.File("monitor.err"));
  testing::RaplTree tree(root);
  tree.SetEnergy(0, false, 4'500'000);
  tree.SetEnergy(0, true, 750'000);
  ASSERT_TRUE(tmp_.Write("go", "").size() > 0);
  ASSERT_EQ(monitor.Wait(), 0) << ReadFile(tmp_.File("monitor.err"));
  const json report = json::parse(ReadFile(tmp_.File("monitor.out")));
  ASSERT_EQ(report["cpus"].size(), 1u) << report.dump();
  EXPECT_EQ(report["cpus"][0]["name"], "package-0");
  EXPECT_TRUE(report["cpus"][0]["error"].is_null()) << report.dump();
  EXPECT_DOUBLE_EQ(report["cpus"][0]["energy_j"].get<double>(), 3.5);        // (4.5e6 - 1e6) µJ
  EXPECT_DOUBLE_EQ(report["cpus"][0]["dram_energy_j"].get<double>(), 0.25);  // (0.75e6 - 0.5e6) µJ
  EXPECT_THAT(ReadFile(tmp_.File("monitor.err")), HasSubstr("CPU energy is read through zeusd at " + socket_));

  // Without the daemon, nobody cannot read these counters: the daemon was needed.
  auto local_env = env;
  local_env["ZEUSD_SOCK_PATH"] = std::nullopt;
  ProcessResult local = testing::RunProcess(AsNobody({ZEUS_TEST_CLI_PATH, "monitor", "--cpus", "--json", "--", "true"}),
                                            local_env);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_THAT(json::parse(local.out)["cpus"][0]["error"].get<std::string>(), HasSubstr("permission denied"));

  // zeus info says where CPU energy comes from.
  ProcessResult info = testing::RunProcess(AsNobody({ZEUS_TEST_CLI_PATH, "info", "--json"}), env);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(json::parse(info.out)["zeusd"]["cpu_energy_source"], "zeusd") << info.out;
  ProcessResult text = testing::RunProcess(AsNobody({ZEUS_TEST_CLI_PATH, "info"}), env);
  EXPECT_THAT(text.out, HasSubstr("CPUs are read through zeusd at " + socket_));
  EXPECT_THAT(text.out, HasSubstr("Read CPU/DRAM energy: no for 1 of 1 package (the reason is under each above) "
                                  "locally; through zeusd instead (below)"));
}

TEST_F(ZeusdClientTest, AnAbsentDaemonOrATokenWithoutCpuReadIsAnErrorForCpus) {
  const std::string root = tmp_.File("powercap");
  RootOnlyRaplTree(root, 0, 0);
  auto env = TrainEnv(/*with_daemon=*/true);
  env["ZEUS_POWERCAP_ROOT"] = root;
  // ZEUSD_SOCK_PATH names a socket where nothing listens.
  ProcessResult absent =
      testing::RunProcess(AsNobody({ZEUS_TEST_CLI_PATH, "monitor", "--cpus", "--", "true"}), env);
  EXPECT_EQ(absent.exit_code, 4) << absent.err;  // unavailable
  EXPECT_THAT(absent.err, HasSubstr("cannot reach zeusd at " + socket_));
  EXPECT_THAT(absent.err, HasSubstr("local RAPL is not usable"));

  const std::string key = tmp_.Write("key", "a signing key for the test only");
  chmod(key.c_str(), 0600);
  ProcessResult token = testing::RunProcess({ZEUS_TEST_ZEUSD_PATH, "token", "issue", "--signing-key-path", key,
                                             "--user", "alice", "--scope", "gpu-read", "--expires", "1h"});
  ASSERT_EQ(token.exit_code, 0) << token.err;
  std::string jwt = token.out;
  while (!jwt.empty() && (jwt.back() == '\n' || jwt.back() == ' ')) jwt.pop_back();
  StartDaemon({"--powercap-root", root, "--signing-key-path", key}, "gpu-read,cpu-read");
  env["ZEUSD_TOKEN"] = jwt;
  ProcessResult scope = testing::RunProcess(AsNobody({ZEUS_TEST_CLI_PATH, "monitor", "--cpus", "--", "true"}), env);
  EXPECT_NE(scope.exit_code, 0) << scope.err;
  EXPECT_THAT(scope.err, HasSubstr("lacks the 'cpu-read' scope"));
  EXPECT_THAT(scope.err, HasSubstr(socket_));
}

}  // namespace
}  // namespace zeus
