// Copyright 2026 The Zeus C++ Authors.
//
// The real `zeusd` binary on the NVML emulator over a Unix socket: the API
// with a token from `zeusd token issue`, a power stream read off the socket,
// /metrics (open with auth on, accepted by promtool), the start-up checks (a
// live socket is never taken over, a non-socket file is left alone, a stale
// socket is replaced, root is needed), and usage errors.

#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "http/http.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"

namespace zeus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

class ZeusdTest : public ::testing::Test {
 protected:
  ZeusdTest() {
    ::chmod(dir_.path().c_str(), 0755);
    json gpu = {{"name", "Tesla V100-SXM2-32GB"}, {"architecture", "volta"}, {"min_power_limit_w", 100},
                {"max_power_limit_w", 300},      {"default_power_limit_w", 300}, {"energy_counter", true},
                {"power_w", 250.0}};
    json trained = gpu;  // GPU 0 runs zeus-emulated-train's workload
    trained.erase("power_w");
    trained["workload"] = {{"power_limits_w", {100, 200, 300}},
                           {"power_w", {99, 190, 236}},
                           {"iteration_time_s", {0.9, 0.5, 0.42}}};
    scenario_ = dir_.Write("scenario.json",
                           json{{"state_file", dir_.File("state")},
                                {"state_file_shared", true},  // the trainer runs as nobody, zeusd as root
                                {"gpus", {trained, gpu}}}
                               .dump());
    socket_ = dir_.File("zeusd.sock");
    key_ = dir_.Write("key", "integration-test-key");
  }

  std::vector<std::string> ServeArgs(std::vector<std::string> extra = {},
                                     const std::string& enable = "gpu-control,gpu-read") const {
    std::vector<std::string> args = {ZEUS_TEST_ZEUSD_PATH, "serve", "--socket-path", socket_, "--nvml-library",
                                     ZEUS_TEST_EMULATOR_PATH, "--enable", enable,
                                     "--gpu-power-poll-hz", "50"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::map<std::string, std::optional<std::string>> Env() const {
    return {{"ZEUS_EMULATOR_CONFIG", scenario_}, {"ZEUS_NVML_LIBRARY", "/nonexistent/ignored.so"},
            {"CUDA_VISIBLE_DEVICES", "1"}};
  }

  std::unique_ptr<testing::BackgroundProcess> Start(std::vector<std::string> extra = {},
                                                    const std::string& enable = "gpu-control,gpu-read") {
    auto daemon = std::make_unique<testing::BackgroundProcess>(ServeArgs(std::move(extra), enable), dir_.File("out"),
                                                                dir_.File("err"), Env());
    EXPECT_TRUE(testing::WaitUntil([&] { return !daemon->Running() || Client()->Send("GET", "/time").has_value(); }));
    EXPECT_TRUE(daemon->Running()) << Log();
    return daemon;
  }

  std::unique_ptr<http::HttpClient> Client(const std::string& token = "") const {
    http::HttpClientOptions options;
    options.unix_socket_path = socket_;
    if (!token.empty()) options.headers = {{"Authorization", "Bearer " + token}};
    return http::HttpClient::Create("http://localhost", options).value();
  }

  std::string Log() const {
    std::ifstream in(dir_.File("err"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  testing::TempDir dir_;
  std::string scenario_;
  std::string socket_;
  std::string key_;
};

TEST_F(ZeusdTest, ServesTheApiWithTokensOverAUnixSocket) {
  auto daemon = Start({"--signing-key-path", key_});
  // Every GPU, whatever CUDA_VISIBLE_DEVICES says, and NVML from the flag.
  auto discover = Client()->Send("GET", "/discover");
  ASSERT_TRUE(discover);
  const json d = json::parse(discover->body);
  EXPECT_EQ(d["gpus"].size(), 2u);
  EXPECT_EQ(d["auth_required"], true);

  auto issued = testing::RunProcess({ZEUS_TEST_ZEUSD_PATH, "token", "issue", "--signing-key-path", key_, "--user",
                                     "alice", "--scope", "gpu-control,gpu-read", "--expires", "1h"});
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  std::string token = issued.out;
  while (!token.empty() && token.back() == '\n') token.pop_back();

  EXPECT_EQ(Client()->Send("POST", "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=150000&block=true")->status, 401);
  auto set = Client(token)->Send("POST", "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=150000&block=true");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->status, 200) << set->body;
  auto limits = Client(token)->Send("GET", "/gpu/get_power_limit");
  EXPECT_EQ(json::parse(limits->body),
            json::parse(R"({"0": {"power_limit_mw": 300000}, "1": {"power_limit_mw": 150000}})"));
  auto whoami = Client(token)->Send("GET", "/auth/whoami");
  EXPECT_EQ(json::parse(whoami->body)["sub"], "alice");

  daemon->Signal(SIGTERM);
  EXPECT_EQ(daemon->Wait(), 0);
  struct stat st {};
  EXPECT_NE(::lstat(socket_.c_str(), &st), 0) << "the socket is removed on exit";
}

// `--enable gpu-read,metrics` without root: the exporter's series of the
// emulated GPUs, with no token although tokens are required elsewhere.
TEST_F(ZeusdTest, ServesPrometheusMetricsThatPromtoolAccepts) {
  if (!std::filesystem::exists("/usr/bin/promtool")) GTEST_SKIP() << "/usr/bin/promtool missing";
  auto daemon = Start({"--signing-key-path", key_}, "gpu-read,metrics");
  EXPECT_EQ(Client()->Send("GET", "/gpu/get_power_limit")->status, 401);
  // GPU 1 draws the scenario's constant 250 W.
  const std::string power1 =
      R"(zeus_gpu_power_watts\{gpu="1",hostname="[^"]+",model="Tesla V100-SXM2-32GB",uuid="[^"]+"\} 250)";
  std::optional<http::HttpResponse> metrics;
  EXPECT_TRUE(testing::WaitUntil([&] {
    auto sent = Client()->Send("GET", "/metrics");
    if (!sent) return false;
    metrics = std::move(*sent);
    return (metrics->status != 200 || ::testing::Matches(::testing::ContainsRegex(power1))(metrics->body));
  }));
  ASSERT_TRUE(metrics);
  ASSERT_EQ(metrics->status, 200) << metrics->body;
  EXPECT_EQ(metrics->content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(metrics->body, ::testing::ContainsRegex(power1));
  EXPECT_THAT(metrics->body, HasSubstr("zeus_gpu_energy_joules_total{gpu=\"0\","));
  const std::string path = dir_.Write("exposition.txt", metrics->body);
  const auto promtool = testing::RunProcess({"/bin/sh", "-c", "/usr/bin/promtool check metrics < " + path});
  EXPECT_EQ(promtool.exit_code, 0) << promtool.out << promtool.err;
  EXPECT_EQ(promtool.out + promtool.err, "");
}

// Reads a stream off the socket by hand: headers, then SSE frames.
TEST_F(ZeusdTest, StreamsPowerOverTheSocket) {
  auto daemon = Start();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  const std::string request = "GET /gpu/stream_power?gpu_ids=1 HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ASSERT_EQ(::write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  std::string got;
  ASSERT_TRUE(testing::WaitUntil([&] {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char buffer[4096];
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) got.append(buffer, static_cast<std::size_t>(n));
    }
    return got.find("\"gpu_id\":1,\"power_mw\":250000") != std::string::npos;
  })) << got;
  EXPECT_THAT(got, HasSubstr("Content-Type: text/event-stream"));
  EXPECT_THAT(got, HasSubstr("data: {\"gpu_id\":1,\"power_mw\":250000,\"timestamp_ms\":"));
  EXPECT_EQ(got.find("\"gpu_id\":0"), std::string::npos);
  ::close(fd);
}

TEST_F(ZeusdTest, LiveSocketIsNeverTakenOverAndStaleOneIsReplaced) {
  auto first = Start();
  auto second = testing::RunProcess(ServeArgs(), Env());
  EXPECT_NE(second.exit_code, 0);
  EXPECT_THAT(second.err, HasSubstr("in use"));
  EXPECT_TRUE(Client()->Send("GET", "/time").has_value()) << "the first daemon still serves";
  first->Signal(SIGKILL);
  first->Wait();
  struct stat st {};
  ASSERT_EQ(::lstat(socket_.c_str(), &st), 0) << "SIGKILL leaves a stale socket";
  auto third = Start();
  EXPECT_TRUE(Client()->Send("GET", "/discover").has_value());
}

// Issue 20: the socket was bound at its path under the umask (0777 with umask
// 000) and chmod-ed afterwards; a process running as nobody connected in
// between. Now it only ever appears at its path by a rename, with its mode.
TEST_F(ZeusdTest, SocketAppearsAtItsPathOnlyWithItsModeWhateverTheUmask) {
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, dir_.path().c_str(), IN_CREATE | IN_ATTRIB | IN_MOVED_TO), 0);
  const mode_t old_umask = ::umask(0);
  auto daemon = Start({"--socket-permissions", "600"});
  ::umask(old_umask);
  std::vector<std::string> events;  // what happened to zeusd.sock
  alignas(inotify_event) char buffer[8192];
  for (ssize_t n; (n = ::read(watch, buffer, sizeof(buffer))) > 0;) {
    for (char* p = buffer; p < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(p);
      if (event->len > 0 && std::string(event->name) == "zeusd.sock") {
        events.push_back(event->mask & IN_CREATE ? "create" : event->mask & IN_ATTRIB ? "attrib" : "moved_to");
      }
      p += sizeof(inotify_event) + event->len;
    }
  }
  ::close(watch);
  EXPECT_THAT(events, ::testing::ElementsAre("moved_to"));
  struct stat st {};
  ASSERT_EQ(::lstat(socket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(".zeusd-")) << "staging left: " << entry.path();
  }
}

// Grace Hopper (GH200): /discover names each GPU's PCI address as Linux does
// and its counter; /gpu/get_power is the GPU-scope reading (600 W), not the
// whole module's 720 W, and the module's only where the driver offers no GPU
// scope.
TEST_F(ZeusdTest, DiscoverAndPowerOnGraceHopper) {
  json gh200 = {{"name", "NVIDIA GH200 480GB"}, {"architecture", "hopper"}, {"min_power_limit_w", 100},
                {"max_power_limit_w", 900},      {"default_power_limit_w", 900}, {"energy_counter", true},
                {"power_w", 600.0},              {"pci_bus_id", "00000009:01:00.0"},
                {"module", {{"cpu_power_w", 100.0}, {"cpu_memory_power_w", 20.0}}}};
  json module_only = gh200;
  module_only["pci_bus_id"] = "00010019:C1:00.0";
  module_only["unsupported"] = {"gpu_scope_power"};
  dir_.Write("scenario.json", json{{"state_file", dir_.File("state")}, {"gpus", {gh200, module_only}}}.dump());
  auto daemon = Start({}, "gpu-read");
  auto discover = Client()->Send("GET", "/discover");
  ASSERT_TRUE(discover.has_value()) << discover.error().message();
  const json gpus = json::parse(discover->body)["gpus"];
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]["pci_address"], "0009:01:00.0");
  EXPECT_EQ(gpus[1]["pci_address"], "10019:c1:00.0");
  EXPECT_EQ(gpus[0]["cumulative_energy_available"], true);
  EXPECT_EQ(gpus[1]["cumulative_energy_available"], true);
  auto power = Client()->Send("GET", "/gpu/get_power");
  ASSERT_TRUE(power.has_value()) << power.error().message();
  ASSERT_EQ(power->status, 200) << power->body;
  const json answer = json::parse(power->body);
  EXPECT_EQ(answer["power_mw"]["0"], 600000) << power->body;
  EXPECT_EQ(answer["power_mw"]["1"], 720000) << power->body;
  EXPECT_THAT(Log(), HasSubstr("GPU scope not supported"));
}

// Issue 20: with as many requests for a GPU whose driver hangs as HTTP
// workers, every route timed out, and SIGTERM did not stop the daemon.
TEST_F(ZeusdTest, AHungGpuCostsOnlyThatGpuAndShutdownCompletes) {
  json scenario = json::parse(std::ifstream(scenario_));
  // /gpu/get_power reads the power field (the GPU-scope reading).
  scenario["faults"] = {{{"function", "nvmlDeviceGetFieldValues"}, {"gpu", 1}, {"hang", true}}};
  dir_.Write("scenario.json", scenario.dump());
  // Without the counter check, whose own hung call would have the GPU answered
  // at once from the first request on (next test).
  auto daemon = Start({"--num-workers", "2", "--gpu-timeout-ms", "1500", "--no-counter-check"}, "gpu-read");
  std::atomic<int> finished{0};
  std::vector<std::thread> hung;
  for (int i = 0; i < 2; ++i) {
    hung.emplace_back([&] {
      auto answer = Client()->Send("GET", "/gpu/get_power?gpu_ids=1");
      EXPECT_TRUE(answer.has_value() && answer->status == 503) << (answer ? answer->body : answer.error().message());
      ++finished;
    });
  }
  // For as long as those wait, the rest of the API answers.
  int answered = 0;
  while (finished < 2) {
    auto discover = Client()->Send("GET", "/discover");
    ASSERT_TRUE(discover.has_value()) << discover.error().message();
    EXPECT_EQ(discover->status, 200);
    auto power = Client()->Send("GET", "/gpu/get_power?gpu_ids=0");
    ASSERT_TRUE(power.has_value()) << power.error().message();
    EXPECT_EQ(power->status, 200) << power->body;
    ++answered;
  }
  for (auto& thread : hung) thread.join();
  EXPECT_GT(answered, 0);
  // Once the reader has been inside the call past the deadline (counted from
  // when it began the call, a little after the requests began to wait), the
  // GPU is answered at once.
  std::string again_body;
  EXPECT_TRUE(testing::WaitUntil([&] {
    auto again = Client()->Send("GET", "/gpu/get_power?gpu_ids=1");
    if (!again.has_value()) return false;
    EXPECT_EQ(again->status, 503);
    again_body = again->body;
    return again_body.find("has not answered a driver call") != std::string::npos;
  })) << again_body;

  daemon->Signal(SIGTERM);
  EXPECT_TRUE(testing::WaitUntil([&] { return !daemon->Running(); })) << Log();
  EXPECT_EQ(daemon->Wait(), 0) << Log();
  EXPECT_THAT(Log(), HasSubstr("exiting with a driver call still hung"));
}

// Trust, but check, in the daemon: each GPU's counter against its power on
// the GPU's own reader at start. A counter that disagrees is not served (400,
// as Zeus's daemon does) and /discover says so; a GPU that hangs in the check
// keeps neither the start nor the other GPUs waiting past the check's limit.
TEST_F(ZeusdTest, TheCounterCheckRunsOnEachGpusThreadAtStart) {
  json scenario = json::parse(std::ifstream(scenario_));
  scenario["gpus"][1]["energy_counter_rate"] = 2.0;
  dir_.Write("scenario.json", scenario.dump());
  {
    auto daemon = Start({}, "gpu-read");
    auto discover = Client()->Send("GET", "/discover");
    ASSERT_TRUE(discover.has_value()) << discover.error().message();
    const json gpus = json::parse(discover->body)["gpus"];
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_EQ(gpus[0]["cumulative_energy_available"], true);
    EXPECT_EQ(gpus[1]["cumulative_energy_available"], false);
    auto energy = Client()->Send("GET", "/gpu/get_cumulative_energy?gpu_ids=1");
    ASSERT_TRUE(energy.has_value()) << energy.error().message();
    EXPECT_EQ(energy->status, 400) << energy->body;
    EXPECT_THAT(energy->body, HasSubstr("disagreed with the GPU's power"));
    EXPECT_EQ(Client()->Send("GET", "/gpu/get_cumulative_energy?gpu_ids=0")->status, 200);
    EXPECT_THAT(Log(), HasSubstr("GPU 1: the energy counter disagrees with the GPU's power"));
    daemon->Signal(SIGTERM);
    EXPECT_EQ(daemon->Wait(), 0) << Log();
  }
  {
    // --no-counter-check trusts it.
    auto daemon = Start({"--no-counter-check"}, "gpu-read");
    const json gpus = json::parse(Client()->Send("GET", "/discover")->body)["gpus"];
    EXPECT_EQ(gpus[1]["cumulative_energy_available"], true);
    daemon->Signal(SIGTERM);
    EXPECT_EQ(daemon->Wait(), 0) << Log();
  }
  // A GPU whose power read hangs: the daemon still starts, and GPU 0 answers.
  scenario["gpus"][1].erase("energy_counter_rate");
  scenario["faults"] = {{{"function", "nvmlDeviceGetFieldValues"}, {"gpu", 1}, {"hang", true}}};
  dir_.Write("scenario.json", scenario.dump());
  auto daemon = Start({"--gpu-timeout-ms", "1500"}, "gpu-read");
  EXPECT_THAT(Log(), HasSubstr("the check did not finish within"));
  auto power = Client()->Send("GET", "/gpu/get_power?gpu_ids=0");
  ASSERT_TRUE(power.has_value()) << power.error().message();
  EXPECT_EQ(power->status, 200) << power->body;
  const json gpus = json::parse(Client()->Send("GET", "/discover")->body)["gpus"];
  EXPECT_EQ(gpus[0]["cumulative_energy_available"], true);
  daemon->Signal(SIGTERM);
  EXPECT_TRUE(testing::WaitUntil([&] { return !daemon->Running(); })) << Log();
  EXPECT_EQ(daemon->Wait(), 0) << Log();
}

TEST_F(ZeusdTest, NonSocketFileIsLeftAlone) {
  dir_.Write("zeusd.sock", "not a socket");
  auto r = testing::RunProcess(ServeArgs(), Env());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("not a socket"));
  std::ifstream in(socket_);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "not a socket");
}

TEST_F(ZeusdTest, ControlAndCpuReadNeedRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run zeusd as another user";
  auto r = testing::RunProcess({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ZEUS_TEST_ZEUSD_PATH,
                                "serve", "--socket-path", dir_.File("nobody.sock"), "--enable", "gpu-control"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("gpu-control need root"));
}

// Without the daemon, an unprivileged training run is refused the limit
// change by the (emulated) driver, says how to fix it, and trains on; the
// daemon, as root, may change the same GPU, whose state file the unprivileged
// run created (nvml_emulator_permissions_test checks that such a change is
// what an unprivileged reader then sees).
TEST_F(ZeusdTest, UnprivilegedTrainingIsRefusedAndTheDaemonIsNot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run as another user";
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0777), 0);
  ::chmod(scenario_.c_str(), 0644);
  auto train = testing::RunProcess({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                    "/usr/bin/env", "ZEUS_NVML_LIBRARY=" ZEUS_TEST_EMULATOR_PATH,
                                    "ZEUS_EMULATOR_CONFIG=" + scenario_, "CUDA_VISIBLE_DEVICES=0",
                                    ZEUS_TEST_TRAIN_PATH, "--epochs", "1", "--steps-per-epoch", "10",
                                    "--wait-steps", "1", "--warmup-steps", "1", "--profile-steps", "1",
                                    "--stride-w", "100", "--time-scale", "1000"});
  EXPECT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.err, HasSubstr("no permission to change GPU power limits"));
  EXPECT_THAT(train.err, HasSubstr("CAP_SYS_ADMIN"));
  EXPECT_THAT(train.err, HasSubstr("training continues"));

  auto daemon = Start();
  auto set = Client()->Send("POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=200000&block=true");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->status, 200) << set->body;
  auto limits = Client()->Send("GET", "/gpu/get_power_limit?gpu_ids=0");
  EXPECT_EQ(json::parse(limits->body), json::parse(R"({"0": {"power_limit_mw": 200000}})"));
}

// On the emulator each user has their own emulated GPUs unless the scenario
// shares its state: zeusd says so at start, before it listens.
TEST_F(ZeusdTest, WarnsWhenTheEmulatedGpusArePrivateToItsUser) {
  {
    auto shared = Start();  // the fixture's scenario: "state_file_shared": true
    EXPECT_THAT(Log(), Not(HasSubstr("are emulated"))) << Log();
  }
  scenario_ = dir_.Write("private.json", json{{"state_file", dir_.File("private-state")},
                                              {"gpus", {{{"name", "Tesla V100-SXM2-32GB"},
                                                         {"architecture", "volta"},
                                                         {"power_w", 150},
                                                         {"energy_counter", true},
                                                         {"min_power_limit_w", 100},
                                                         {"max_power_limit_w", 300},
                                                         {"default_power_limit_w", 300}}}}}
                                             .dump());
  auto daemon = Start();
  const std::string log = Log();
  EXPECT_THAT(log, HasSubstr("zeusd: warning: the GPUs are emulated, and their state (" + dir_.File("private-state") +
                             ") is private to uid " + std::to_string(::getuid())));
  EXPECT_THAT(log, HasSubstr("\"state_file_shared\": true"));
}

TEST_F(ZeusdTest, UsageErrorsAreOneLineNamingTheWord) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"serve", "--enable", "gpu-write"}, "gpu-write"},
      {{"serve", "--mode", "pipe"}, "--mode"},
      {{"serve", "--socket-permissions", "9"}, "--socket-permissions"},
      {{"serve", "--bogus"}, "--bogus"},
      {{"token", "issue", "--signing-key-path", "k", "--user", "u", "--scope", "gpu-read", "--expires", "1y"},
       "--expires"},
      {{"token", "issue", "--signing-key-path", "k", "--user", "u", "--scope", "all", "--expires", "1h"}, "--scope"},
      // --help after an unknown command is that error, not the parent's help with exit 0.
      {{"bogus", "--help"}, "unknown command 'bogus'"},
      {{"token", "bogus", "--help"}, "unknown command 'bogus'"},
  };
  for (const auto& [args, word] : cases) {
    std::vector<std::string> argv = {ZEUS_TEST_ZEUSD_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = testing::RunProcess(argv);
    EXPECT_EQ(r.exit_code, 2) << word << r.err;
    EXPECT_THAT(r.err, HasSubstr(word));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  auto missing_key = testing::RunProcess({ZEUS_TEST_ZEUSD_PATH, "token", "issue", "--signing-key-path",
                                          dir_.File("none"), "--user", "u", "--scope", "gpu-read", "--expires", "1h"});
  EXPECT_NE(missing_key.exit_code, 0);
  EXPECT_THAT(missing_key.err, HasSubstr(dir_.File("none")));
}

}  // namespace
}  // namespace zeus
