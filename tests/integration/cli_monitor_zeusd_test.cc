// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor --zeusd`: the energy of a command on the devices of two real
// zeusd daemons (build/bin/zeusd as root on emulated GPUs of constant power,
// one with a fake powercap tree), and the usage errors of the flag.

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testing/rapl_tree.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"

namespace zeus {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::RunProcess;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Accepts(const std::string& socket_path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  socket_path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

json Gpu(double power_w) {
  return {{"name", "NVIDIA A40"},         {"architecture", "ampere"},      {"min_power_limit_w", 100},
          {"max_power_limit_w", 300},     {"default_power_limit_w", 300}, {"energy_counter", true},
          {"power_w", power_w}};
}

// The environment of `zeus monitor`: no daemon from the environment, and a
// local emulated GPU that --zeusd must leave out (no --gpus).
std::map<std::string, std::optional<std::string>> MonitorEnv(const std::string& local_scenario) {
  return {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH}, {"ZEUS_EMULATOR_CONFIG", local_scenario},
          {"CUDA_VISIBLE_DEVICES", std::nullopt},        {"ZEUSD_SOCK_PATH", std::nullopt},
          {"ZEUSD_HOST_PORT", std::nullopt},             {"ZEUSD_TOKEN", std::nullopt}};
}

// One line on stderr, `error: ...`, exit 2, and the command never ran.
void ExpectUsageError(const ProcessResult& r, const std::string& expected, const std::string& marker) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "error: " + expected + "\n");
  EXPECT_EQ(r.out, "");
  struct stat st {};
  EXPECT_NE(::stat(marker.c_str(), &st), 0) << "the command ran";
}

TEST(CliMonitorZeusdTest, BadAddressesAreUsageErrorsNamingTheWord) {
  testing::TempDir dir;
  const std::string local = dir.Write("local.json", json{{"state_file", dir.File("state")}, {"gpus", {Gpu(80)}}}.dump());
  const std::string marker = dir.File("ran");
  auto zeus = [&](std::vector<std::string> flags) {
    std::vector<std::string> argv = {ZEUS_TEST_CLI_PATH, "monitor"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "/usr/bin/touch", marker});
    return RunProcess(argv, MonitorEnv(local));
  };
  // One message per problem (http::ParseUrl's), naming the address and the accepted forms.
  auto bad = [](const std::string& url, const std::string& problem) {
    return "--zeusd: zeusd address '" + url + "' " + problem +
           "; expected unix:///path/to/zeusd.sock or http://HOST:PORT";
  };
  ExpectUsageError(zeus({"--zeusd", "ftp://node1"}), bad("ftp://node1", "has the unsupported scheme 'ftp'"), marker);
  ExpectUsageError(zeus({"--zeusd", "node1:4938"}), bad("node1:4938", "has no scheme"), marker);
  ExpectUsageError(zeus({"--zeusd", "unix://run/zeusd.sock"}),
                   bad("unix://run/zeusd.sock",
                       "needs an absolute socket path after unix:// (three slashes: unix:///path/to.sock)"),
                   marker);
  ExpectUsageError(zeus({"--zeusd", "http://node1:4938,http://node2:99999"}),
                   bad("http://node2:99999", "has a port that is not a number from 1 to 65535"), marker);
  ExpectUsageError(zeus({"--zeusd", "http://node1:4938/gpu"}),
                   bad("http://node1:4938/gpu", "has a path ('/gpu'), which is not allowed here"), marker);
  ExpectUsageError(zeus({"--zeusd", "https://node1:4938"}),
                   bad("https://node1:4938", "has the unsupported scheme 'https'"), marker);
  ExpectUsageError(zeus({"--zeusd", "http://:4938"}), bad("http://:4938", "has no host"), marker);
  ExpectUsageError(zeus({"--zeusd", "unix:///a.sock,,unix:///b.sock"}),
                   "--zeusd must be zeusd addresses (unix:///path/to/zeusd.sock or http://HOST:PORT) separated by "
                   "commas (got 'unix:///a.sock,,unix:///b.sock')",
                   marker);
  ExpectUsageError(zeus({"--zeusd-token-file", dir.File("none")}),
                   "--zeusd-token-file is for --zeusd daemons: give --zeusd URL too", marker);
  ExpectUsageError(zeus({"--zeusd", "unix:///nowhere.sock", "--zeusd-token-file", dir.File("none")}),
                   "--zeusd-token-file " + dir.File("none") + ": cannot read: No such file or directory", marker);
  dir.Write("empty-token", "\n");
  ExpectUsageError(zeus({"--zeusd", "unix:///nowhere.sock", "--zeusd-token-file", dir.File("empty-token")}),
                   "--zeusd-token-file " + dir.File("empty-token") +
                       ": the file is empty; put the token (zeusd token issue) on its first line",
                   marker);

  // A well-formed address where no daemon listens: an error before the command (W13b), naming the socket.
  const ProcessResult r = zeus({"--zeusd", "unix://" + dir.File("none.sock")});
  EXPECT_EQ(r.exit_code, 4) << r.err;  // kUnavailable
  EXPECT_THAT(r.err, HasSubstr(dir.File("none.sock")));
  struct stat st {};
  EXPECT_NE(::stat(marker.c_str(), &st), 0) << "the command ran";
}

class CliMonitorZeusdDaemonsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: zeusd's cpu-read group";
    rapl_.AddPackage(0, /*dram=*/true);
    rapl_.SetEnergy(0, false, 5'000'000);
    rapl_.SetEnergy(0, true, 7'000'000);
    local_ = dir_.Write("local.json", json{{"state_file", dir_.File("local-state")}, {"gpus", {Gpu(80)}}}.dump());
    a_ = Start("a", {Gpu(100), Gpu(150)}, "gpu-read", {});
    b_ = Start("b", {Gpu(200)}, "gpu-read,cpu-read", {"--powercap-root", rapl_.root()});
  }

  std::unique_ptr<testing::BackgroundProcess> Start(const std::string& name, const std::vector<json>& gpus,
                                                    const std::string& enable, std::vector<std::string> extra) {
    const std::string scenario =
        dir_.Write(name + ".json", json{{"state_file", dir_.File(name + "-state")}, {"gpus", gpus}}.dump());
    const std::string socket = dir_.File(name + ".sock");
    std::vector<std::string> argv = {ZEUS_TEST_ZEUSD_PATH, "serve", "--socket-path", socket, "--nvml-library",
                                     ZEUS_TEST_EMULATOR_PATH, "--enable", enable};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto daemon = std::make_unique<testing::BackgroundProcess>(
        argv, dir_.File(name + ".out"), dir_.File(name + ".err"),
        std::map<std::string, std::optional<std::string>>{{"ZEUS_EMULATOR_CONFIG", scenario}});
    EXPECT_TRUE(testing::WaitUntil([&] { return Accepts(socket) || !daemon->Running(); }))
        << "zeusd did not listen within 60 s";
    EXPECT_TRUE(daemon->Running()) << Slurp(dir_.File(name + ".err"));
    return daemon;
  }

  std::string Url(const std::string& name) const { return "unix://" + dir_.File(name + ".sock"); }

  testing::TempDir dir_;
  testing::RaplTree rapl_{dir_.File("powercap")};
  std::string local_;
  std::unique_ptr<testing::BackgroundProcess> a_;
  std::unique_ptr<testing::BackgroundProcess> b_;
};

// Two daemons, three GPUs of constant power and a CPU package standing still.
// zeusd repeats an unchanged reading every second and the monitor waits for a
// first reading of every device before the command and for one past its end
// after it, so each GPU's power is known over the whole run: its energy is its
// power times the run's duration, to rounding (the readings are exact mW).
TEST_F(CliMonitorZeusdDaemonsTest, MeasuresEveryDaemonsDevicesOverTheCommand) {
  const ProcessResult r = RunProcess(
      {ZEUS_TEST_CLI_PATH, "monitor", "--json", "--zeusd", Url("a") + "," + Url("b"), "--", "sleep", "1"},
      MonitorEnv(local_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(r.out);
  EXPECT_EQ(report["gpus"], json::array()) << "local GPUs are left out with --zeusd unless --gpus names them";
  ASSERT_EQ(report["zeusd"].size(), 2u) << report.dump(2);
  const json& a = report["zeusd"][0];
  const json& b = report["zeusd"][1];
  EXPECT_EQ(a["url"], Url("a"));
  EXPECT_EQ(a["endpoint"], dir_.File("a.sock"));
  EXPECT_EQ(b["url"], Url("b"));
  const double time_s = report["zeusd_time_s"].get<double>();
  EXPECT_GE(time_s, 1.0);  // sleep 1
  // Same machine, same clock: each offset is within a round trip of zero.
  EXPECT_LT(std::abs(a["clock_offset_s"].get<double>()), 5.0);
  const std::vector<std::pair<const json*, std::vector<double>>> expected = {{&a, {100, 150}}, {&b, {200}}};
  double sum_j = 0;
  for (const auto& [node, powers_w] : expected) {
    ASSERT_EQ((*node)["gpus"].size(), powers_w.size()) << node->dump(2);
    for (std::size_t i = 0; i < powers_w.size(); ++i) {
      const json& gpu = (*node)["gpus"][i];
      EXPECT_EQ(gpu["id"], i);
      EXPECT_FALSE(gpu["uncertain"].get<bool>()) << gpu.dump();
      EXPECT_EQ(gpu["gaps"], 0);
      EXPECT_NEAR(gpu["energy_j"].get<double>(), powers_w[i] * time_s, 1e-6 * powers_w[i] * time_s) << gpu.dump();
      EXPECT_NEAR(gpu["avg_power_w"].get<double>(), powers_w[i], 1e-6 * powers_w[i]);
      sum_j += gpu["energy_j"].get<double>();
    }
  }
  EXPECT_EQ(a["cpus"], json::array());  // cpu-read is not enabled on a: not streamed, silently
  ASSERT_EQ(b["cpus"].size(), 1u) << b.dump(2);
  EXPECT_EQ(b["cpus"][0]["energy_j"], 0.0);  // the counters stand still
  EXPECT_EQ(b["cpus"][0]["dram_energy_j"], 0.0);
  EXPECT_NEAR(report["zeusd_energy_j"].get<double>(), sum_j, 1e-9 * sum_j);
  EXPECT_NEAR(report["total_energy_j"].get<double>(), sum_j, 1e-9 * sum_j);
}

TEST_F(CliMonitorZeusdDaemonsTest, HumanReportListsEachDaemon) {
  const ProcessResult r = RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "--zeusd", Url("a"), "--zeusd", Url("b"), "--",
                                      "true"},
                                     MonitorEnv(local_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  zeusd " + Url("a") + " (clock offset "));
  EXPECT_THAT(r.out, HasSubstr("  zeusd " + Url("b") + " (clock offset "));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\n    GPU 1 +[0-9.]+ +150\\.00 +- +stream\n")) << r.err;
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\n    CPU 0 +0\\.00 +0\\.00 +- +stream\n      dram +0\\.00")) << r.err;
  EXPECT_THAT(r.out, HasSubstr("    subtotal"));
}

// A daemon lost during the run: the rest of the run has no readings, so its
// GPUs are reported uncertain, with the uncovered time, and their energy
// counts only the covered part; the command's exit code still passes through.
TEST_F(CliMonitorZeusdDaemonsTest, AStreamLostDuringTheRunIsReportedUncertain) {
  // sleep 8: longer than zeus monitor's 5 s sample hold plus zeusd's 1 s
  // repeat, so the run ends with a gap even if the loss is noticed late.
  const std::string kill_a = "kill -KILL " + std::to_string(a_->pid()) + " && sleep 8";
  const ProcessResult r = RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "--json", "--zeusd", Url("a") + "," + Url("b"),
                                      "--", "/bin/sh", "-c", kill_a},
                                     MonitorEnv(local_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(r.out);
  const double time_s = report["zeusd_time_s"].get<double>();
  const json& a = report["zeusd"][0];
  ASSERT_EQ(a["gpus"].size(), 2u) << a.dump(2);
  // The client holds the last reading until it notices the loss (at most
  // the 5 s hold), which on a loaded machine may come well after the kill,
  // so the uncovered time is some part of the run (about the sleep 8 when
  // the machine is idle). The energy is exactly the power over the covered
  // part.
  const std::vector<double> powers_w = {100, 150};
  for (std::size_t i = 0; i < a["gpus"].size(); ++i) {
    const json& gpu = a["gpus"][i];
    EXPECT_TRUE(gpu["uncertain"].get<bool>()) << gpu.dump();
    EXPECT_GE(gpu["gaps"].get<int>(), 1);
    const double uncovered_s = gpu["uncovered_s"].get<double>();
    EXPECT_GT(uncovered_s, 0.0) << gpu.dump();
    EXPECT_LE(uncovered_s, time_s) << gpu.dump();
    EXPECT_NEAR(gpu["energy_j"].get<double>(), powers_w[i] * (time_s - uncovered_s), 1e-6 * powers_w[i] * time_s)
        << gpu.dump() << " over " << time_s << " s";
  }
  EXPECT_THAT(r.err, HasSubstr(Url("a") + ": gpu 0: "));
  EXPECT_THAT(r.err, HasSubstr("had no power reading"));
  // b was not touched: complete.
  EXPECT_FALSE(report["zeusd"][1]["gpus"][0]["uncertain"].get<bool>());
  a_->Wait();
}

// A daemon that streams nothing to us (no read group enabled) is an error
// before the command, naming the address and why, never a silent loss.
TEST_F(CliMonitorZeusdDaemonsTest, ADaemonWithNothingToStreamIsAnError) {
  auto c = Start("c", {Gpu(100)}, "gpu-control", {});
  const std::string marker = dir_.File("ran");
  const ProcessResult r = RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "--zeusd", Url("a") + "," + Url("c"), "--",
                                      "/usr/bin/touch", marker},
                                     MonitorEnv(local_));
  EXPECT_EQ(r.exit_code, 1) << r.err;  // kFailedPrecondition
  EXPECT_THAT(r.err, HasSubstr("error: --zeusd " + Url("c") +
                               ": nothing to measure: 'gpu-read' is not enabled (zeusd serve --enable); 'cpu-read' is "
                               "not enabled (zeusd serve --enable)"));
  struct stat st {};
  EXPECT_NE(::stat(marker.c_str(), &st), 0) << "the command ran";
}

// A daemon that requires tokens: without one, an error naming the address
// (exit 3); with --zeusd-token-file holding a token of `zeusd token issue`,
// its GPU is measured.
TEST_F(CliMonitorZeusdDaemonsTest, TokensComeFromTheTokenFile) {
  const std::string key = dir_.Write("key", "a signing key for the test only");
  ::chmod(key.c_str(), 0600);
  auto d = Start("d", {Gpu(120)}, "gpu-read", {"--signing-key-path", key});
  const std::string marker = dir_.File("ran");
  const ProcessResult refused = RunProcess(
      {ZEUS_TEST_CLI_PATH, "monitor", "--zeusd", Url("d"), "--", "/usr/bin/touch", marker}, MonitorEnv(local_));
  EXPECT_EQ(refused.exit_code, 3) << refused.err;  // kPermissionDenied
  EXPECT_THAT(refused.err, HasSubstr("error: --zeusd " + Url("d") + ": nothing to measure: "));
  EXPECT_THAT(refused.err, HasSubstr("no token was provided"));
  struct stat st {};
  EXPECT_NE(::stat(marker.c_str(), &st), 0) << "the command ran";

  const ProcessResult issued = RunProcess({ZEUS_TEST_ZEUSD_PATH, "token", "issue", "--signing-key-path", key,
                                           "--user", "monitor", "--scope", "gpu-read", "--expires", "1h"});
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  const std::string token_file = dir_.Write("token", issued.out);
  const ProcessResult r = RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "--json", "--zeusd", Url("d"),
                                      "--zeusd-token-file", token_file, "--", "true"},
                                     MonitorEnv(local_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json gpu = json::parse(r.out)["zeusd"][0]["gpus"][0];
  EXPECT_FALSE(gpu["uncertain"].get<bool>()) << gpu.dump();
  EXPECT_NEAR(gpu["avg_power_w"].get<double>(), 120.0, 120e-6);
}

}  // namespace
}  // namespace zeus
