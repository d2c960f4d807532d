// Copyright 2026 The Zeus C++ Authors.
//
// Soak (issue 20): zeusd and `zeus exporter` on the NVML emulator with GPU 1
// hung (its power and power-limit reads never return), under 200 concurrent
// clients for a while (default 300 s): 150 on zeusd's Unix socket (/discover,
// GPU 0's power, and now and then the hung GPU), 50 scraping the exporter.
// Prints p50/p99 latency of the healthy routes, how many of their answers
// were not 200 (must be 0), the hung GPU's answers, and each server's
// resident memory and open file descriptors at the start and the end, then
// how long SIGTERM took to stop each. Not a test: it measures.
//
//   build/bin/zeus_hung_gpu_soak [seconds] [clients]

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "http/http.h"
#include "testing/prometheus_servers.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Usage {
  long rss_kb = 0;
  long fds = 0;
};

Usage UsageOf(pid_t pid) {
  Usage usage;
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) usage.rss_kb = std::atol(line.c_str() + 6);
  }
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(fmt::format("/proc/{}/fd", pid), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++usage.fds;
  }
  return usage;
}

pid_t Spawn(std::vector<std::string> argv, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* out = std::freopen(log.c_str(), "w", stderr);
    (void)out;
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

// Seconds from SIGTERM to exit; -1 if it did not exit within 30 s (then SIGKILL).
double StopSeconds(pid_t pid) {
  const auto start = Clock::now();
  ::kill(pid, SIGTERM);
  while (Clock::now() - start < std::chrono::seconds(30)) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return std::chrono::duration<double>(Clock::now() - start).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

struct Route {
  std::mutex mutex;
  std::vector<double> us;
  std::map<int, long> statuses;  // status (0: transport error) -> count
  void Add(double latency_us, int status) {
    std::lock_guard lock(mutex);
    us.push_back(latency_us);
    ++statuses[status];
  }
};

std::unique_ptr<zeus::http::HttpClient> Client(const std::string& base, const std::string& socket) {
  zeus::http::HttpClientOptions options;
  options.unix_socket_path = socket;
  options.request_timeout = std::chrono::seconds(30);
  auto client = zeus::http::HttpClient::Create(base, options);
  return client ? std::move(*client) : nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 300;
  const int clients = argc > 2 ? std::atoi(argv[2]) : 200;
  char dir_template[] = "/tmp/zeus-soak-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) return 1;
  const std::string dir = dir_template;
  std::string gpus;
  for (int i = 0; i < 4; ++i) {
    gpus += fmt::format("{}{{\"name\": \"NVIDIA A40\", \"architecture\": \"ampere\", \"min_power_limit_w\": 100, "
                        "\"max_power_limit_w\": 300, \"default_power_limit_w\": 300, \"energy_counter\": true, "
                        "\"power_w\": {}}}",
                        i == 0 ? "" : ", ", 200 + i);
  }
  const std::string scenario = dir + "/scenario.json";
  std::ofstream(scenario) << fmt::format(
      R"({{"state_file": "{}/state", "gpus": [{}], "faults": [)"
      R"({{"function": "nvmlDeviceGetFieldValues", "gpu": 1, "hang": true}},)"
      R"({{"function": "nvmlDeviceGetPowerManagementLimit", "gpu": 1, "hang": true}}]}})",
      dir, gpus);
  ::setenv("ZEUS_EMULATOR_CONFIG", scenario.c_str(), 1);
  ::setenv("ZEUS_NVML_LIBRARY", ZEUS_BENCH_EMULATOR_PATH, 1);
  const std::string socket = dir + "/zeusd.sock";
  const int port = zeus::testing::FreeLoopbackPort();
  const pid_t zeusd = Spawn({ZEUS_BENCH_ZEUSD_PATH, "serve", "--socket-path", socket, "--nvml-library",
                             ZEUS_BENCH_EMULATOR_PATH, "--enable", "gpu-read", "--num-workers", "2"},
                            dir + "/zeusd.log");
  const pid_t exporter = Spawn({ZEUS_BENCH_CLI_PATH, "exporter", "--listen", fmt::format("127.0.0.1:{}", port),
                                "--no-cpus"},
                               dir + "/exporter.log");
  const std::string exporter_url = fmt::format("http://127.0.0.1:{}", port);
  const auto ready_by = Clock::now() + std::chrono::seconds(60);
  for (bool up = false; !up;) {
    auto z = Client("http://localhost", socket);
    auto e = Client(exporter_url, "");
    auto zr = z ? z->Send("GET", "/time") : zeus::Result<zeus::http::HttpResponse>(zeus::Fail(zeus::ErrorCode::kIoError, ""));
    auto er = e ? e->Send("GET", "/metrics") : zeus::Result<zeus::http::HttpResponse>(zeus::Fail(zeus::ErrorCode::kIoError, ""));
    up = zr && er;
    if (!up && Clock::now() > ready_by) {
      std::fprintf(stderr, "hung_gpu_soak: the servers did not start; logs in %s\n", dir.c_str());
      return 1;
    }
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const Usage zeusd_start = UsageOf(zeusd);
  const Usage exporter_start = UsageOf(exporter);

  Route discover, power0, hung, metrics;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const int exporter_clients = clients / 4;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      const bool scrape = c < exporter_clients;
      auto client = scrape ? Client(exporter_url, "") : Client("http://localhost", socket);
      for (long n = 0; client && !stop.load(); ++n) {
        Route* route = scrape ? &metrics : n % 20 == 19 ? &hung : n % 2 == 0 ? &discover : &power0;
        const char* target = scrape                ? "/metrics"
                             : route == &hung      ? "/gpu/get_power?gpu_ids=1"
                             : route == &discover ? "/discover"
                                                   : "/gpu/get_power?gpu_ids=0";
        const auto start = Clock::now();
        auto answer = client->Send("GET", target);
        route->Add(std::chrono::duration<double, std::micro>(Clock::now() - start).count(), answer ? answer->status : 0);
      }
    });
  }
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::seconds(30), end - Clock::now()));
    std::fprintf(stderr, "hung_gpu_soak: %.0f s left\n", std::chrono::duration<double>(end - Clock::now()).count());
  }
  stop = true;
  for (auto& t : threads) t.join();
  const Usage zeusd_end = UsageOf(zeusd);
  const Usage exporter_end = UsageOf(exporter);

  std::printf("Soak: %d clients (%d on zeusd, %d on the exporter) for %d s, GPU 1 hung (emulator)\n", clients,
              clients - exporter_clients, exporter_clients, seconds);
  std::printf("  %-34s %10s %10s %10s  %s\n", "route", "requests", "p50 ms", "p99 ms", "statuses");
  for (auto [name, route] : {std::pair<const char*, Route*>{"zeusd /discover", &discover},
                             {"zeusd /gpu/get_power?gpu_ids=0", &power0},
                             {"zeusd /gpu/get_power?gpu_ids=1 (hung)", &hung},
                             {"exporter /metrics", &metrics}}) {
    std::sort(route->us.begin(), route->us.end());
    const auto at = [&](double q) {
      return route->us.empty() ? 0.0 : route->us[static_cast<std::size_t>(q * (route->us.size() - 1))] / 1000.0;
    };
    std::string statuses;
    for (auto [status, count] : route->statuses) statuses += fmt::format("{}{}: {}", statuses.empty() ? "" : ", ", status, count);
    std::printf("  %-34s %10zu %10.2f %10.2f  %s\n", name, route->us.size(), at(0.5), at(0.99), statuses.c_str());
  }
  std::printf("  %-10s %14s %14s %10s %10s\n", "server", "RSS start kB", "RSS end kB", "fds start", "fds end");
  std::printf("  %-10s %14ld %14ld %10ld %10ld\n", "zeusd", zeusd_start.rss_kb, zeusd_end.rss_kb, zeusd_start.fds,
              zeusd_end.fds);
  std::printf("  %-10s %14ld %14ld %10ld %10ld\n", "exporter", exporter_start.rss_kb, exporter_end.rss_kb,
              exporter_start.fds, exporter_end.fds);
  std::printf("  SIGTERM to exit: zeusd %.2f s, exporter %.2f s (-1: did not stop within 30 s)\n", StopSeconds(zeusd),
              StopSeconds(exporter));
  std::filesystem::remove_all(dir);
  return 0;
}
