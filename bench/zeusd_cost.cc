// Copyright 2026 The Zeus C++ Authors.
//
// What zeusd costs (issue 12, section 5), on the NVML emulator:
//   1. a power-limit change and a power read through the daemon over its
//      Unix socket against the same call made directly (p50/p99 latency and
//      the p99 the daemon adds; goal < 200 us);
//   2. the daemon's CPU while two clients stream 8 GPUs at 10 Hz (goal < 1 %
//      of a core), from /proc/<pid>/stat over a 10 s window;
//   3. this process's CPU while a PowerStreamingClient follows the 8 GPUs
//      (getrusage over a 10 s window; nothing else runs in it then).
// Run as root (gpu-control needs it): build/bin/zeusd_cost [calls]

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "http/http.h"
#include "zeus/device/discovery.h"
#include "zeus/zeusd_client/power_streaming.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
  double p50_us = 0;
  double p99_us = 0;
};

Stats Percentiles(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100]};
}

template <class Fn>
Stats Time(int calls, Fn fn) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(calls));
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    if (!fn(i)) {
      std::fprintf(stderr, "zeusd_cost: a call failed\n");
      std::exit(1);
    }
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return Percentiles(std::move(us));
}

// utime + stime of `pid`, in clock ticks.
long CpuTicks(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) {
      stime = std::stol(field);
      break;
    }
  }
  return utime + stime;
}

int ConnectUnix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) return -1;
  return fd;
}

// A scenario of 8 A40s drawing 200-207 W in a new temporary directory,
// named by $ZEUS_EMULATOR_CONFIG. Returns the directory ("" on failure).
std::string WriteScenario() {
  char dir_template[] = "/tmp/zeusd-cost-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) return "";
  const std::string dir = dir_template;
  std::string gpus;
  for (int i = 0; i < 8; ++i) {
    gpus += fmt::format("{}{{\"name\": \"NVIDIA A40\", \"architecture\": \"ampere\", \"min_power_limit_w\": 100, "
                        "\"max_power_limit_w\": 300, \"default_power_limit_w\": 300, \"energy_counter\": true, "
                        "\"power_w\": {}}}",
                        i == 0 ? "" : ", ", 200 + i);
  }
  const std::string scenario = dir + "/scenario.json";
  std::ofstream(scenario) << fmt::format(R"({{"state_file": "{}/state", "gpus": [{}]}})", dir, gpus);
  ::setenv("ZEUS_EMULATOR_CONFIG", scenario.c_str(), 1);
  return dir;
}

// zeusd on the emulator, serving `socket_path`; its pid.
pid_t StartDaemon(const std::string& socket_path) {
  const pid_t daemon = ::fork();
  if (daemon == 0) {
    ::execl(ZEUS_BENCH_ZEUSD_PATH, "zeusd", "serve", "--socket-path", socket_path.c_str(), "--nvml-library",
            ZEUS_BENCH_EMULATOR_PATH, "--enable", "gpu-control,gpu-read", "--gpu-power-poll-hz", "10",
            "--num-workers", "2", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return daemon;
}

// Waits up to 60 s for the daemon to answer /time.
bool WaitForDaemon(zeus::http::HttpClient& client) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!client.Send("GET", "/time")) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Part 1: p50/p99 of a power-limit change and a power read, directly and
// through the daemon.
void MeasureCallLatency(int calls, zeus::http::HttpClient& client) {
  zeus::device::GpuOptions gpu_options;
  gpu_options.nvml_library = ZEUS_BENCH_EMULATOR_PATH;
  gpu_options.cuda_visible_devices = "0,1,2,3,4,5,6,7";
  auto gpu_set = zeus::device::OpenGpus(gpu_options).value();
  zeus::device::Gpu& gpu = gpu_set->gpu(0);

  auto limit_mw = [](int i) { return static_cast<std::uint32_t>(i % 2 == 0 ? 150'000 : 160'000); };
  const Stats direct_set = Time(calls, [&](int i) { return gpu.SetPowerLimitMw(limit_mw(i)).has_value(); });
  const Stats direct_read = Time(calls, [&](int) { return gpu.PowerUsageMw().has_value(); });
  const Stats daemon_set = Time(calls, [&](int i) {
    auto r = client.Send("POST", fmt::format("/gpu/set_power_limit?gpu_ids=0&power_limit_mw={}&block=true", limit_mw(i)));
    return r && r->status == 200;
  });
  const Stats daemon_read = Time(calls, [&](int) {
    auto r = client.Send("GET", "/gpu/get_power?gpu_ids=0");
    return r && r->status == 200;
  });
  std::printf("zeusd cost over a Unix socket, %d calls each (emulated GPUs), microseconds\n", calls);
  std::printf("  %-18s %10s %10s %10s %10s %14s\n", "call", "direct p50", "direct p99", "zeusd p50", "zeusd p99",
              "added at p99");
  std::printf("  %-18s %10.1f %10.1f %10.1f %10.1f %14.1f\n", "set_power_limit", direct_set.p50_us, direct_set.p99_us,
              daemon_set.p50_us, daemon_set.p99_us, daemon_set.p99_us - direct_set.p99_us);
  std::printf("  %-18s %10.1f %10.1f %10.1f %10.1f %14.1f\n", "get_power", direct_read.p50_us, direct_read.p99_us,
              daemon_read.p50_us, daemon_read.p99_us, daemon_read.p99_us - direct_read.p99_us);
}

// Part 2: the daemon's CPU over 10 s while two raw clients stream all 8
// GPUs at 10 Hz.
void MeasureDaemonStreamingCpu(const std::string& socket_path, pid_t daemon) {
  std::atomic<bool> stop{false};
  std::atomic<long> bytes{0};
  std::vector<std::thread> readers;
  for (int c = 0; c < 2; ++c) {
    readers.emplace_back([&] {
      const int fd = ConnectUnix(socket_path);
      const std::string request = "GET /gpu/stream_power HTTP/1.1\r\nHost: localhost\r\n\r\n";
      if (fd < 0 || ::write(fd, request.data(), request.size()) < 0) return;
      char buffer[8192];
      while (!stop.load()) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) > 0) {
          const ssize_t n = ::read(fd, buffer, sizeof buffer);
          if (n <= 0) break;
          bytes += n;
        }
      }
      ::close(fd);
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // subscribed and polling
  const long ticks_before = CpuTicks(daemon);
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(10));
  const long ticks = CpuTicks(daemon) - ticks_before;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  stop = true;
  for (auto& t : readers) t.join();
  const double share = 100.0 * static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK)) / seconds;
  std::printf("zeusd CPU while 2 clients stream 8 GPUs at 10 Hz: %.2f %% of a core (%ld ticks in %.1f s; %ld bytes "
              "streamed)\n",
              share, ticks, seconds, bytes.load());
}

double ProcessCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Part 3: this process's CPU over 10 s while a PowerStreamingClient follows
// the 8 GPUs (after its first 8 events, waited for up to 120 s).
bool MeasureClientStreamingCpu(const std::string& socket_path) {
  zeus::zeusd::ZeusdConfig config;
  config.socket_path = socket_path;
  auto streaming = zeus::zeusd::PowerStreamingClient::Start({{config, std::nullopt, std::vector<int>{}}});
  if (!streaming) {
    std::fprintf(stderr, "zeusd_cost: %s\n", streaming.error().message().c_str());
    return false;
  }
  auto events = [&] {
    std::uint64_t n = 0;
    for (const auto& s : (*streaming)->Streams()) n += s.events;
    return n;
  };
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  std::uint64_t seen = 0;
  while (events() < 8 && Clock::now() < deadline) seen = (*streaming)->WaitForUpdate(seen, std::chrono::seconds(1));
  const std::uint64_t events_before = events();
  const double cpu_before = ProcessCpuSeconds();
  const auto window_start = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(10));
  const double cpu = ProcessCpuSeconds() - cpu_before;
  const double window_s = std::chrono::duration<double>(Clock::now() - window_start).count();
  std::printf("PowerStreamingClient CPU following 8 GPUs: %.3f %% of a core (%llu events in %.1f s)\n",
              100.0 * cpu / window_s, static_cast<unsigned long long>(events() - events_before), window_s);
  (*streaming)->Stop();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 2000;
  const std::string dir = WriteScenario();
  if (dir.empty()) return 1;
  const std::string socket_path = dir + "/zeusd.sock";
  const pid_t daemon = StartDaemon(socket_path);
  zeus::http::HttpClientOptions options;
  options.unix_socket_path = socket_path;
  auto client = zeus::http::HttpClient::Create("http://localhost", options).value();
  if (!WaitForDaemon(*client)) {
    std::fprintf(stderr, "zeusd_cost: zeusd did not start\n");
    return 1;
  }
  MeasureCallLatency(calls, *client);
  MeasureDaemonStreamingCpu(socket_path, daemon);
  if (!MeasureClientStreamingCpu(socket_path)) return 1;
  ::kill(daemon, SIGTERM);
  ::waitpid(daemon, nullptr, 0);
  std::filesystem::remove_all(dir);
  return 0;
}
