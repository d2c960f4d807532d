// Copyright 2026 The Zeus C++ Authors.
//
// PowerStreamingClient against real `zeusd` processes on the NVML emulator:
// two daemons (a Unix socket and a TCP port) with different GPUs followed by
// one client (powers, timelines, energy); a daemon killed and restarted on
// the same socket is reconnected to; a client that never reads its stream
// does not hold up the daemon; a token the restarted daemon no longer accepts
// ends that stream with a permission error instead of a retry loop; the
// /time offset is near 0 against a wall clock and applied to every sample;
// CPU power follows the daemon's RAPL counters (a fake powercap tree).

#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "emulator/control/control.h"
#include "http/http.h"
#include "testing/rapl_tree.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "zeus/device/discovery.h"
#include "zeus/zeusd_client/power_streaming.h"

namespace zeus::zeusd {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

json Gpu(const std::string& name, const std::string& architecture) {
  return {{"name", name},
          {"architecture", architecture},
          {"min_power_limit_w", 100},
          {"max_power_limit_w", 300},
          {"default_power_limit_w", 300},
          {"energy_counter", true}};
}

// A Clock that is the machine's wall clock (ns since 1970), so that client
// times are comparable with the daemon's Unix stamps.
class WallClock final : public Clock {
 public:
  nanoseconds Now() const override { return std::chrono::system_clock::now().time_since_epoch(); }
  void SleepFor(nanoseconds) const override {}
};

// One zeusd process (gpu-read only, so no root needed) on a scenario.
class Daemon {
 public:
  Daemon(testing::TempDir* dir, std::string name, const json& scenario, bool tcp, std::string poll_hz = "50",
         std::string groups = "gpu-read")
      : dir_(dir), name_(std::move(name)), tcp_(tcp), poll_hz_(std::move(poll_hz)), groups_(std::move(groups)) {
    scenario_ = dir_->Write(name_ + ".json", scenario.dump());
    if (!tcp_) config_.socket_path = dir_->File(name_ + ".sock");
  }
  ~Daemon() { Kill(); }

  // Starts it and waits until it listens (its "listening on" line); false
  // with the log when it does not.
  bool Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {ZEUS_TEST_ZEUSD_PATH, "serve", "--nvml-library", ZEUS_TEST_EMULATOR_PATH,
                                     "--enable", groups_, "--gpu-power-poll-hz", poll_hz_};
    if (tcp_) {
      args.insert(args.end(), {"--mode", "tcp", "--tcp-bind-address", "127.0.0.1:0"});
    } else {
      args.insert(args.end(), {"--mode", "uds", "--socket-path", config_.socket_path});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string log = dir_->File(name_ + "." + std::to_string(++starts_) + ".err");
    process_ = std::make_unique<testing::BackgroundProcess>(
        args, dir_->File(name_ + ".out"), log,
        std::map<std::string, std::optional<std::string>>{{"ZEUS_EMULATOR_CONFIG", scenario_},
                                                           {"CUDA_VISIBLE_DEVICES", std::nullopt}});
    const std::regex listening("zeusd: listening on (\\S+) \\(");
    std::smatch match;
    const bool up = testing::WaitUntil([&] {
      log_ = ReadAll(log);
      return !process_->Running() || std::regex_search(log_, match, listening);
    });
    if (!up || !process_->Running()) return false;
    if (tcp_) config_.host_port = match[1];
    return true;
  }

  void Kill() {
    if (!process_) return;
    process_->Signal(SIGKILL);
    process_->Wait();
    process_.reset();
  }

  const ZeusdConfig& config() const { return config_; }
  std::string endpoint() const { return config_.endpoint(); }
  const std::string& scenario() const { return scenario_; }
  const std::string& log() const { return log_; }

  std::unique_ptr<http::HttpClient> Http() const {
    http::HttpClientOptions options;
    options.unix_socket_path = config_.socket_path;
    return http::HttpClient::Create(tcp_ ? "http://" + config_.host_port : "http://localhost", options).value();
  }

 private:
  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  testing::TempDir* dir_;
  std::string name_;
  bool tcp_;
  std::string poll_hz_;
  std::string groups_;
  std::string scenario_;
  ZeusdConfig config_;
  std::unique_ptr<testing::BackgroundProcess> process_;
  int starts_ = 0;
  std::string log_;
};

// Waits on the client's sequence number until `ready` holds (60 s at most).
bool WaitFor(const PowerStreamingClient& client, const std::function<bool()>& ready) {
  const auto give_up = std::chrono::steady_clock::now() + seconds(60);
  std::uint64_t seen = 0;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > give_up) return ready();
    seen = client.WaitForUpdate(seen, seconds(1));
  }
  return true;
}

std::optional<StreamStatus> StreamOf(const PowerStreamingClient& client, const std::string& endpoint,
                                     DeviceKind kind) {
  for (const StreamStatus& s : client.Streams()) {
    if (s.endpoint == endpoint && s.kind == kind) return s;
  }
  return std::nullopt;
}

std::vector<PowerSample> Samples(const PowerStreamingClient& client, const std::string& endpoint, int id) {
  auto timeline = client.Timeline(endpoint, DeviceKind::kGpu, id);
  return timeline ? *timeline : std::vector<PowerSample>{};
}

class ZeusdStreamingTest : public ::testing::Test {
 protected:
  ZeusdStreamingTest() { ::chmod(dir_.path().c_str(), 0755); }

  // Daemon A: two V100s drawing a constant 250 W and 100 W (a constant
  // demand reads the same whatever the averaging window).
  json ScenarioA() const {
    json g0 = Gpu("Tesla V100-SXM2-32GB", "volta");
    g0["power_w"] = 250;
    json g1 = Gpu("Tesla V100-SXM2-32GB", "volta");
    g1["power_w"] = 100;
    return {{"state_file", dir_.File("a.state")}, {"gpus", {g0, g1}}};
  }

  testing::TempDir dir_;
};

// (a) Two daemons, one client. A: 250 W and 100 W. B (TCP, manual emulator
// clock): one A40 whose demand is 80 W until emulated 10 s, then 160 W, read
// without averaging (window 0), so the reading is exactly the step's power;
// the test moves B's clock past 10 s once 80 W has been seen.
TEST_F(ZeusdStreamingTest, OneClientFollowsTwoDaemonsWithDifferentGpus) {
  Daemon a(&dir_, "a", ScenarioA(), false);
  json b_gpu = Gpu("NVIDIA A40", "ampere");
  b_gpu["power_schedule"] = {{{"at_s", 0}, {"power_w", 80}}, {{"at_s", 10}, {"power_w", 160}}};
  b_gpu["power_average_window_ms"] = 0;
  Daemon b(&dir_, "b", json{{"clock", "manual"}, {"state_file", dir_.File("b.state")}, {"gpus", {b_gpu}}}, true);
  ASSERT_TRUE(a.Start()) << a.log();
  ASSERT_TRUE(b.Start()) << b.log();

  PowerStreamingOptions options;
  // The daemons repeat unchanged values every second; 30 s of hold keeps a
  // loaded test machine from turning a late repeat into a gap.
  options.max_sample_hold = seconds(30);
  auto started = PowerStreamingClient::Start({{a.config(), std::nullopt, std::nullopt},
                                              {b.config(), std::nullopt, std::nullopt}},
                                             options);
  ASSERT_TRUE(started) << started.error().message();
  PowerStreamingClient& client = **started;
  EXPECT_EQ(client.Endpoints(), (std::vector<std::string>{a.endpoint(), b.endpoint()}));
  // gpu-read only: no CPU streams, silently (cpu_ids was nullopt).
  ASSERT_EQ(client.Streams().size(), 2u);
  EXPECT_EQ(client.Streams()[0].ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(client.Streams()[1].ids, (std::vector<int>{0}));

  ASSERT_TRUE(WaitFor(client, [&] {
    auto latest = client.Latest();
    return latest[a.endpoint()].gpu_power_w.size() == 2 && latest[b.endpoint()].gpu_power_w.size() == 1;
  }));
  auto latest = client.Latest();
  EXPECT_EQ(latest[a.endpoint()].gpu_power_w, (std::map<int, double>{{0, 250.0}, {1, 100.0}}));
  EXPECT_EQ(latest[b.endpoint()].gpu_power_w, (std::map<int, double>{{0, 80.0}}));
  EXPECT_TRUE(latest[a.endpoint()].cpu_power_w.empty());

  // Timelines grow (the daemon repeats a constant value every second).
  ASSERT_TRUE(WaitFor(client, [&] { return Samples(client, a.endpoint(), 0).size() >= 3; }));
  for (const PowerSample& s : Samples(client, a.endpoint(), 0)) EXPECT_EQ(s.power_mw, 250000u);
  for (const PowerSample& s : Samples(client, a.endpoint(), 1)) EXPECT_EQ(s.power_mw, 100000u);

  // Energy of A's GPU 0 between its first and latest sample: 250 W over
  // that time, every bit of it covered.
  const auto a0 = Samples(client, a.endpoint(), 0);
  const nanoseconds t0 = a0.front().time;
  const nanoseconds t1 = a0.back().time;
  auto energy = client.EnergyMj(a.endpoint(), DeviceKind::kGpu, 0, t0, t1);
  ASSERT_TRUE(energy) << energy.error().message();
  EXPECT_TRUE(energy->complete()) << energy->gaps;
  EXPECT_NEAR(energy->energy_mj, 250000.0 * std::chrono::duration<double>(t1 - t0).count(), 1e-6);
  EXPECT_GT(t1 - t0, seconds(1));  // three samples, at least a second apart

  // B steps to 160 W when its emulated clock passes 10 s.
  {
    testing::ScopedEnv config("ZEUS_EMULATOR_CONFIG", b.scenario());
    testing::ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::nullopt);
    device::GpuOptions gpu_options;
    gpu_options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
    auto gpus = device::OpenGpus(gpu_options);
    ASSERT_TRUE(gpus) << gpus.error().message();
    auto control = emulator::EmulatorControl::Open(ZEUS_TEST_EMULATOR_PATH);
    ASSERT_TRUE(control) << control.error().message();
    ASSERT_TRUE((*control)->Advance(seconds(11)));
  }
  ASSERT_TRUE(WaitFor(client, [&] { return client.Latest()[b.endpoint()].gpu_power_w[0] == 160.0; }));
  const auto b0 = Samples(client, b.endpoint(), 0);
  ASSERT_GE(b0.size(), 2u);
  EXPECT_EQ(b0.front().power_mw, 80000u);
  EXPECT_EQ(b0.back().power_mw, 160000u);
  // 80 W until the first 160 W sample, 160 W up to the last sample: between
  // 80 W and 160 W times the interval, and exactly the step sum.
  nanoseconds step{0};
  for (const PowerSample& s : b0) {
    if (s.power_mw == 160000u) {
      step = s.time;
      break;
    }
  }
  auto b_energy = client.EnergyMj(b.endpoint(), DeviceKind::kGpu, 0, b0.front().time, b0.back().time);
  ASSERT_TRUE(b_energy);
  const double before_s = std::chrono::duration<double>(step - b0.front().time).count();
  const double after_s = std::chrono::duration<double>(b0.back().time - step).count();
  EXPECT_NEAR(b_energy->energy_mj, 80000.0 * before_s + 160000.0 * after_s, 1e-6);
  EXPECT_TRUE(b_energy->complete());

  // Unknown endpoints and devices are errors, not zeros.
  EXPECT_EQ(client.Timeline("nowhere", DeviceKind::kGpu, 0).error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(client.EnergyMj(a.endpoint(), DeviceKind::kGpu, 7, t0, t1).error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(client.EnergyMj(a.endpoint(), DeviceKind::kGpu, 0, t1, t0).error().code(),
            ErrorCode::kInvalidArgument);
  client.Stop();
  client.Stop();  // idempotent
  EXPECT_TRUE(client.stopped());
}

// CPU streams: a daemon (root, cpu-read) on a fake powercap tree. Static
// counters read 0 W; a jump of 2 J (package) and 0.5 J (DRAM) shows as one
// burst of power whose energy in the client's step function is the jump
// scaled by the ratio of two of the daemon's poll intervals (it divides by
// the interval it measured; the client holds the value for the next one).
TEST_F(ZeusdStreamingTest, CpuPowerFollowsTheDaemonsRaplCounters) {
  if (::geteuid() != 0) GTEST_SKIP() << "zeusd's cpu-read needs root";
  testing::RaplTree tree(dir_.File("powercap"));
  tree.AddPackage(0, /*dram=*/true);
  tree.SetEnergy(0, false, 1'000'000);
  tree.SetEnergy(0, true, 500'000);
  Daemon daemon(&dir_, "cpu", ScenarioA(), false, "50", "gpu-read,cpu-read");
  ASSERT_TRUE(daemon.Start({"--cpu-power-poll-hz", "20", "--powercap-root", tree.root()})) << daemon.log();

  PowerStreamingOptions options;
  options.max_sample_hold = seconds(30);
  auto started = PowerStreamingClient::Start({{daemon.config(), std::vector<int>{}, std::nullopt}}, options);
  ASSERT_TRUE(started) << started.error().message();
  PowerStreamingClient& client = **started;
  ASSERT_EQ(client.Streams().size(), 1u);
  EXPECT_EQ(client.Streams()[0].kind, DeviceKind::kCpu);
  auto cpu_samples = [&] {
    auto timeline = client.Timeline(daemon.endpoint(), DeviceKind::kCpu, 0);
    return timeline ? *timeline : std::vector<PowerSample>{};
  };

  ASSERT_TRUE(WaitFor(client, [&] { return !cpu_samples().empty(); }));
  const PowerSample idle = cpu_samples().front();
  EXPECT_EQ(idle.power_mw, 0u);
  EXPECT_EQ(idle.dram_mw, std::optional<std::uint64_t>(0));

  tree.SetEnergy(0, true, 1'000'000);
  tree.SetEnergy(0, false, 3'000'000);
  // The burst, then 0 W again once both counters stand still.
  auto burst_over = [&] {
    const auto samples = cpu_samples();
    bool cpu_seen = false;
    bool dram_seen = false;
    for (const PowerSample& s : samples) {
      cpu_seen = cpu_seen || s.power_mw > 0;
      dram_seen = dram_seen || s.dram_mw.value_or(0) > 0;
      if (cpu_seen && dram_seen && s.power_mw == 0 && s.dram_mw == std::optional<std::uint64_t>(0)) return true;
    }
    return false;
  };
  ASSERT_TRUE(WaitFor(client, burst_over));
  const auto samples = cpu_samples();
  const nanoseconds end = samples.back().time;
  auto energy = client.EnergyMj(daemon.endpoint(), DeviceKind::kCpu, 0, idle.time, end);
  ASSERT_TRUE(energy) << energy.error().message();
  EXPECT_TRUE(energy->complete()) << energy->gaps;
  // 2,000 mJ times a ratio of poll intervals: nominally 1, and within a
  // factor of 4 on a loaded machine (a unit slip would be 1000x).
  EXPECT_GT(energy->energy_mj, 2000.0 / 4) << "got " << energy->energy_mj;
  RecordProperty("package_energy_mj", std::to_string(energy->energy_mj));
  EXPECT_LT(energy->energy_mj, 2000.0 * 4);
  ASSERT_TRUE(energy->dram_energy_mj.has_value());
  EXPECT_GT(*energy->dram_energy_mj, 500.0 / 4);
  EXPECT_LT(*energy->dram_energy_mj, 500.0 * 4);
  // Where one poll saw both jumps, package and DRAM power are in their ratio.
  for (const PowerSample& s : samples) {
    if (s.power_mw > 0 && s.dram_mw.value_or(0) > 0) {
      EXPECT_NEAR(static_cast<double>(s.power_mw) / static_cast<double>(*s.dram_mw), 4.0, 0.01);
    }
  }
  client.Stop();
}

TEST_F(ZeusdStreamingTest, StartErrorsNameTheProblem) {
  Daemon a(&dir_, "a", ScenarioA(), false);
  ASSERT_TRUE(a.Start()) << a.log();
  // The same endpoint twice.
  auto twice = PowerStreamingClient::Start({{a.config(), {}, {}}, {a.config(), {}, {}}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(twice.error().message(), HasSubstr(a.endpoint()));
  // A GPU the daemon does not have.
  auto missing = PowerStreamingClient::Start({{a.config(), std::vector<int>{0, 5}, std::nullopt}});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(missing.error().message(), HasSubstr("GPU 5"));
  // CPUs asked for explicitly from a daemon without cpu-read.
  auto cpus = PowerStreamingClient::Start({{a.config(), std::nullopt, std::vector<int>{0}}});
  ASSERT_FALSE(cpus);
  EXPECT_THAT(cpus.error().message(), ::testing::AnyOf(HasSubstr("cpu-read"), HasSubstr("CPU 0")));
  // An unreachable daemon is an error naming it (W13b), not a silent skip.
  ZeusdConfig gone;
  gone.socket_path = dir_.File("nobody.sock");
  auto unreachable = PowerStreamingClient::Start({{a.config(), {}, {}}, {gone, {}, {}}});
  ASSERT_FALSE(unreachable);
  EXPECT_EQ(unreachable.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(unreachable.error().message(), HasSubstr(gone.socket_path));
  // Empty lists stream nothing.
  auto nothing = PowerStreamingClient::Start({{a.config(), std::vector<int>{}, std::vector<int>{}}});
  ASSERT_TRUE(nothing);
  EXPECT_TRUE((*nothing)->Streams().empty());
}

// (b) The daemon killed (SIGKILL) and started again on the same socket: the
// stream is lost (a gap in the energy), reconnected, and data resumes.
TEST_F(ZeusdStreamingTest, ReconnectsToARestartedDaemon) {
  Daemon a(&dir_, "a", ScenarioA(), false);
  ASSERT_TRUE(a.Start()) << a.log();
  PowerStreamingOptions options;
  options.reconnect_delay = milliseconds(100);
  options.max_sample_hold = seconds(30);
  auto started = PowerStreamingClient::Start({{a.config(), std::vector<int>{0}, std::nullopt}}, options);
  ASSERT_TRUE(started) << started.error().message();
  PowerStreamingClient& client = **started;
  ASSERT_TRUE(WaitFor(client, [&] { return Samples(client, a.endpoint(), 0).size() >= 1; }));
  const nanoseconds first = Samples(client, a.endpoint(), 0).front().time;

  a.Kill();
  ASSERT_TRUE(WaitFor(client, [&] { return !StreamOf(client, a.endpoint(), DeviceKind::kGpu)->connected; }));
  EXPECT_EQ(StreamOf(client, a.endpoint(), DeviceKind::kGpu)->reconnects, 0u);
  // Retried while the daemon is down (the socket is stale: refused).
  ASSERT_TRUE(WaitFor(client, [&] { return StreamOf(client, a.endpoint(), DeviceKind::kGpu)->failures >= 2; }));
  const std::size_t before = Samples(client, a.endpoint(), 0).size();

  ASSERT_TRUE(a.Start()) << a.log();
  ASSERT_TRUE(WaitFor(client, [&] {
    auto s = StreamOf(client, a.endpoint(), DeviceKind::kGpu);
    return s->reconnects >= 1 && s->connected && Samples(client, a.endpoint(), 0).size() > before;
  }));
  const auto samples = Samples(client, a.endpoint(), 0);
  EXPECT_EQ(samples.back().power_mw, 250000u);
  const StreamStatus status = *StreamOf(client, a.endpoint(), DeviceKind::kGpu);
  EXPECT_FALSE(status.given_up);
  ASSERT_TRUE(status.last_error);
  EXPECT_THAT(status.last_error->message(), HasSubstr(a.endpoint()));
  // The time the stream was down is unknown energy, not 250 W.
  auto energy = client.EnergyMj(a.endpoint(), DeviceKind::kGpu, 0, first, samples.back().time);
  ASSERT_TRUE(energy);
  EXPECT_GE(energy->gaps, 1);
  EXPECT_GT(energy->uncovered, nanoseconds(0));
  const double span_s = std::chrono::duration<double>(samples.back().time - first).count();
  EXPECT_LT(energy->energy_mj, 250000.0 * span_s);
}

// (c) A client that connects to the stream and never reads does not hold up
// the daemon: another client keeps receiving and /gpu/get_power answers. The
// GPU's power changes every emulated second at time_scale 1000 (every real
// millisecond) and the daemon polls at 1000 Hz, so the unread connection
// takes ~1000 events/s until the socket's buffers are full (a Unix socket
// holds some tens of KB of such small writes); the test starts the other
// client once 16 KB (over 200 events) sit unread, and lets it take 2000.
TEST_F(ZeusdStreamingTest, AClientThatNeverReadsDoesNotStallTheDaemon) {
  json gpu = Gpu("Tesla V100-SXM2-32GB", "volta");
  json schedule = json::array();
  for (int i = 0; i < 60000; ++i) schedule.push_back({{"at_s", i}, {"power_w", i % 2 == 0 ? 120 : 180}});
  gpu["power_schedule"] = schedule;
  gpu["power_average_window_ms"] = 0;
  gpu["power_update_period_ms"] = 100;
  Daemon a(&dir_, "fast", json{{"time_scale", 1000}, {"state_file", dir_.File("fast.state")}, {"gpus", {gpu}}},
           false, "1000");
  ASSERT_TRUE(a.Start()) << a.log();

  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, a.config().socket_path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  const std::string request = "GET /gpu/stream_power HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ASSERT_EQ(::write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  int unread = 0;
  ASSERT_TRUE(testing::WaitUntil([&] { return ::ioctl(fd, FIONREAD, &unread) == 0 && unread > 16000; }))
      << unread << " bytes unread";

  PowerStreamingOptions options;
  auto started = PowerStreamingClient::Start({{a.config(), std::nullopt, std::nullopt}}, options);
  ASSERT_TRUE(started) << started.error().message();
  PowerStreamingClient& client = **started;
  ASSERT_TRUE(WaitFor(client, [&] { return StreamOf(client, a.endpoint(), DeviceKind::kGpu)->events >= 2000; }));
  for (const PowerSample& s : Samples(client, a.endpoint(), 0)) {
    EXPECT_TRUE(s.power_mw == 120000u || s.power_mw == 180000u) << s.power_mw;
  }
  // For the record: how much the never-reading connection holds by now.
  RecordProperty("unread_bytes_at_start", unread);
  ASSERT_EQ(::ioctl(fd, FIONREAD, &unread), 0);
  RecordProperty("unread_bytes_at_end", unread);
  // The 2000 events the other client took are over 100 KB of frames (each
  // over 50 bytes); the unread connection holds less: it was full (about
  // 20 KB here) while the daemon went on serving.
  EXPECT_LT(unread, 2000 * 50);
  auto power = a.Http()->Send("GET", "/gpu/get_power");
  ASSERT_TRUE(power) << power.error().message();
  EXPECT_EQ(power->status, 200) << power->body;
  ::close(fd);
}

// (d) A token that the restarted daemon (new signing key) rejects: the
// stream gives up with a permission error after one try, no retry loop.
TEST_F(ZeusdStreamingTest, RejectedTokenEndsTheStreamWithoutRetrying) {
  Daemon a(&dir_, "a", ScenarioA(), false);
  const std::string key = dir_.Write("key", "first-signing-key");
  ASSERT_TRUE(a.Start({"--signing-key-path", key})) << a.log();
  auto issued = testing::RunProcess({ZEUS_TEST_ZEUSD_PATH, "token", "issue", "--signing-key-path", key, "--user",
                                     "alice", "--scope", "gpu-read", "--expires", "1h"});
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  ZeusdConfig config = a.config();
  config.token = issued.out.substr(0, issued.out.find('\n'));

  // A token without gpu-read asked for GPUs explicitly: refused at Start().
  auto control = testing::RunProcess({ZEUS_TEST_ZEUSD_PATH, "token", "issue", "--signing-key-path", key, "--user",
                                      "bob", "--scope", "cpu-read", "--expires", "1h"});
  ASSERT_EQ(control.exit_code, 0) << control.err;
  ZeusdConfig bob = a.config();
  bob.token = control.out.substr(0, control.out.find('\n'));
  auto refused = PowerStreamingClient::Start({{bob, std::vector<int>{0}, std::vector<int>{}}});
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr("gpu-read"));
  // ... and skipped silently when not asked for explicitly.
  auto skipped = PowerStreamingClient::Start({{bob, std::nullopt, std::vector<int>{}}});
  ASSERT_TRUE(skipped) << skipped.error().message();
  EXPECT_TRUE((*skipped)->Streams().empty());

  PowerStreamingOptions options;
  options.reconnect_delay = milliseconds(50);
  auto started = PowerStreamingClient::Start({{config, std::vector<int>{0, 1}, std::vector<int>{}}}, options);
  ASSERT_TRUE(started) << started.error().message();
  PowerStreamingClient& client = **started;
  ASSERT_TRUE(WaitFor(client, [&] { return StreamOf(client, a.endpoint(), DeviceKind::kGpu)->events >= 2; }));

  a.Kill();
  dir_.Write("key", "another-signing-key");
  ASSERT_TRUE(a.Start({"--signing-key-path", key})) << a.log();
  ASSERT_TRUE(WaitFor(client, [&] { return StreamOf(client, a.endpoint(), DeviceKind::kGpu)->given_up; }));
  const StreamStatus status = *StreamOf(client, a.endpoint(), DeviceKind::kGpu);
  ASSERT_TRUE(status.last_error);
  EXPECT_EQ(status.last_error->code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(status.last_error->message(), HasSubstr("401"));
  EXPECT_FALSE(status.connected);
  // No further tries: 20 reconnect delays pass without another failure.
  const std::uint64_t failures = status.failures;
  client.WaitForUpdate(client.sequence(), seconds(1));
  EXPECT_EQ(StreamOf(client, a.endpoint(), DeviceKind::kGpu)->failures, failures);
}

// (e) Against a wall clock, a local daemon's offset is near 0: the daemon
// stamps with the same clock, so the offset is at most half the slowest of
// the 5 round trips off (1 s allows for a loaded machine); and every sample
// is the daemon's stamp plus exactly that offset.
TEST_F(ZeusdStreamingTest, ClockOffsetIsNearZeroAndApplied) {
  Daemon a(&dir_, "a", ScenarioA(), false);
  ASSERT_TRUE(a.Start()) << a.log();
  WallClock wall;
  PowerStreamingOptions options;
  options.clock = &wall;
  auto started = PowerStreamingClient::Start({{a.config(), std::vector<int>{0}, std::nullopt}}, options);
  ASSERT_TRUE(started) << started.error().message();
  PowerStreamingClient& client = **started;
  auto offset = client.ClockOffset(a.endpoint());
  ASSERT_TRUE(offset);
  EXPECT_LT(std::chrono::abs(*offset), seconds(1)) << offset->count() << " ns";
  EXPECT_EQ(client.ClockOffset("elsewhere").error().code(), ErrorCode::kNotFound);
  ASSERT_TRUE(WaitFor(client, [&] { return Samples(client, a.endpoint(), 0).size() >= 2; }));
  for (const PowerSample& s : Samples(client, a.endpoint(), 0)) {
    EXPECT_EQ(s.time, milliseconds(s.daemon_timestamp_ms) + *offset);
  }
  // And with the default (steady) clock the offset is steady - wall time.
  // This client keeps 2 samples per device: older ones are dropped, and an
  // energy interval reaching back before them is refused.
  PowerStreamingOptions small;
  small.timeline_capacity = 2;
  auto steady = PowerStreamingClient::Start({{a.config(), std::vector<int>{0}, std::nullopt}}, small);
  ASSERT_TRUE(steady);
  const nanoseconds expected =
      SteadyClock().Now() - std::chrono::system_clock::now().time_since_epoch();
  EXPECT_LT(std::chrono::abs(*(*steady)->ClockOffset(a.endpoint()) - expected), seconds(1));
  ASSERT_TRUE(WaitFor(**steady, [&] { return StreamOf(**steady, a.endpoint(), DeviceKind::kGpu)->events >= 3; }));
  const auto kept = Samples(**steady, a.endpoint(), 0);
  ASSERT_EQ(kept.size(), 2u);
  auto too_early = (*steady)->EnergyMj(a.endpoint(), DeviceKind::kGpu, 0, kept.front().time - seconds(1),
                                       kept.back().time);
  ASSERT_FALSE(too_early);
  EXPECT_EQ(too_early.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(too_early.error().message(), HasSubstr("timeline_capacity"));
  EXPECT_TRUE((*steady)->EnergyMj(a.endpoint(), DeviceKind::kGpu, 0, kept.front().time, kept.back().time));
}

}  // namespace
}  // namespace zeus::zeusd
