// Copyright 2026 The Zeus C++ Authors.
//
// The cost of `zeus exporter` (issue 13's goals: under 0.5% of a core, under
// 20 MiB resident, p99 scrape under 5 ms): it runs the real binary over 8
// emulated GPUs sampled at 10 Hz, scrapes /metrics once a second as
// Prometheus would, and prints the exporter's CPU share over the run (from
// /proc/<pid>/stat), its resident memory at the end (VmRSS) and the scrape
// latency percentiles (client side, whole HTTP GET).
//
//   build/bin/zeus_exporter_cost [SECONDS=60]

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "testing/prometheus_servers.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"

namespace {

// utime + stime of `pid`, seconds.
double CpuSeconds(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::vector<std::string> f(3);
  std::string word;
  while (fields >> word) f.push_back(word);
  return (std::stod(f[14]) + std::stod(f[15])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double RssMiB(int pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 60;
  zeus::testing::TempDir tmp;
  std::string gpus;
  for (int i = 0; i < 8; ++i) {
    gpus += fmt::format(R"({}{{"name": "NVIDIA H100 80GB HBM3", "architecture": "hopper", "min_power_limit_w": 200,
      "max_power_limit_w": 700, "default_power_limit_w": 700, "energy_counter": true, "power_w": {}}})",
                        i == 0 ? "" : ",", 300 + 10 * i);
  }
  const std::string scenario =
      tmp.Write("gpus.json", fmt::format(R"({{"state_file": "{}", "gpus": [{}]}})", tmp.File("state"), gpus));
  const std::string address = fmt::format("127.0.0.1:{}", zeus::testing::FreeLoopbackPort());
  zeus::testing::BackgroundProcess exporter(
      {ZEUS_BENCH_CLI_PATH, "exporter", "--listen", address, "--interval-ms", "100", "--no-cpus"},
      tmp.File("out"), tmp.File("err"),
      {{"ZEUS_NVML_LIBRARY", ZEUS_BENCH_EMULATOR_PATH},
       {"ZEUS_EMULATOR_CONFIG", scenario},
       {"CUDA_VISIBLE_DEVICES", std::nullopt}});
  const std::string url = fmt::format("http://{}/metrics", address);
  if (!zeus::testing::WaitUntil([&] { return zeus::testing::HttpGet(url, 1000).has_value(); })) {
    std::fprintf(stderr, "zeus exporter did not start\n");
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = CpuSeconds(exporter.pid());
  std::vector<double> latencies_ms;
  std::size_t bytes = 0;
  for (int i = 0; i < seconds; ++i) {
    std::this_thread::sleep_until(start + std::chrono::seconds(i + 1));
    const auto t0 = std::chrono::steady_clock::now();
    const auto body = zeus::testing::HttpGet(url);
    const auto t1 = std::chrono::steady_clock::now();
    if (!body) {
      std::fprintf(stderr, "scrape %d failed\n", i);
      return 1;
    }
    bytes = body->size();
    latencies_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_s = CpuSeconds(exporter.pid()) - cpu_start;
  const double rss_mib = RssMiB(exporter.pid());
  std::sort(latencies_ms.begin(), latencies_ms.end());
  const auto pct = [&](double p) {
    return latencies_ms[std::min(latencies_ms.size() - 1, static_cast<std::size_t>(p * latencies_ms.size()))];
  };
  fmt::print("zeus exporter, 8 emulated GPUs sampled at 10 Hz, scraped every 1 s for {:.0f} s ({} bytes/scrape)\n",
             wall_s, bytes);
  fmt::print("  CPU: {:.3f}% of one core (goal < 0.5%)\n", 100.0 * cpu_s / wall_s);
  fmt::print("  resident memory: {:.1f} MiB (goal < 20 MiB)\n", rss_mib);
  fmt::print("  scrape latency: p50 {:.2f} ms, p99 {:.2f} ms, max {:.2f} ms (goal p99 < 5 ms)\n", pct(0.5),
             pct(0.99), latencies_ms.back());
  return 0;
}
