// Copyright 2026 The Zeus C++ Authors.
//
// Prints (1) the CPU cost of the PowerMonitor's sampling thread on 8 GPUs of
// the NVML emulator (loaded through the normal dlopen path) at 100 Hz and
// 1 kHz, as a share of one core, and (2) the sample buffer's memory after one
// simulated hour at 1 kHz.
//
// Usage: zeus_sampler_cost [seconds per rate, default 3]

#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "testing/fake_gpu.h"
#include "testing/temp_dir.h"
#include "zeus/device/discovery.h"
#include "zeus/monitor/power_monitor.h"

namespace {

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto tv = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return tv(usage.ru_utime) + tv(usage.ru_stime);
}

long RssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  zeus::testing::TempDir tmp;
  std::string gpus;
  for (int i = 0; i < 8; ++i) {
    gpus += fmt::format(
        "{}{{\"name\":\"Emulated V100\",\"architecture\":\"volta\",\"min_power_limit_w\":100,"
        "\"max_power_limit_w\":250,\"default_power_limit_w\":250,\"energy_counter\":true,\"power_w\":{}}}",
        i == 0 ? "" : ",", 100 + 10 * i);
  }
  const std::string scenario = tmp.Write("scenario.json", fmt::format("{{\"state_file\":\"{}\",\"gpus\":[{}]}}",
                                                                     tmp.File("state"), gpus));
  setenv("ZEUS_EMULATOR_CONFIG", scenario.c_str(), 1);
  zeus::device::GpuOptions gpu_options;
  gpu_options.nvml_library = ZEUS_BENCH_EMULATOR_PATH;
  auto set = zeus::device::OpenGpus(gpu_options);
  if (!set) {
    fmt::print(stderr, "error: {}\n", set.error().message());
    return 1;
  }

  fmt::print("PowerMonitor sampling thread, 8 emulated GPUs, {:.0f} s per rate\n", seconds);
  fmt::print("{:>8} {:>10} {:>14} {:>14}\n", "rate", "samples", "cpu (s)", "share of core");
  for (int hz : {100, 1000}) {
    zeus::monitor::PowerMonitorOptions options;
    options.interval = std::chrono::nanoseconds(1'000'000'000 / hz);
    auto pm = zeus::monitor::PowerMonitor::Create(**set, {}, options);
    if (!pm) {
      fmt::print(stderr, "error: {}\n", pm.error().message());
      return 1;
    }
    const double cpu0 = CpuSeconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    const double cpu = CpuSeconds() - cpu0;
    const std::size_t samples = (*pm)->Timeline(0).size();
    pm->reset();
    fmt::print("{:>6}Hz {:>10} {:>14.4f} {:>13.2f}%\n", hz, samples, cpu, 100.0 * cpu / seconds);
  }

  {
    // The floor: a thread that only wakes at 1 kHz and does nothing.
    const double cpu0 = CpuSeconds();
    std::jthread idle([seconds] {
      auto next = std::chrono::steady_clock::now();
      const auto end =
          next + std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
      while (next < end) {
        next += std::chrono::milliseconds(1);
        std::this_thread::sleep_until(next);
      }
    });
    idle.join();
    const double cpu = CpuSeconds() - cpu0;
    fmt::print("{:>6}Hz {:>10} {:>14.4f} {:>13.2f}%   (a thread that only wakes: this machine's floor)\n", 1000,
               "-", cpu, 100.0 * cpu / seconds);
  }

  // The same thread over 8 in-process fake GPUs: the sampler's own cost,
  // apart from NVML.
  zeus::testing::FakeClock clock;
  std::vector<std::unique_ptr<zeus::device::Gpu>> fakes;
  for (unsigned i = 0; i < 8; ++i) fakes.push_back(std::make_unique<zeus::testing::FakeGpu>(zeus::testing::FakeGpuConfig{}, clock, i));
  zeus::device::GpuSet fake_set("fake", std::move(fakes));
  {
    zeus::monitor::PowerMonitorOptions real_time;
    real_time.interval = std::chrono::milliseconds(1);
    auto pm = zeus::monitor::PowerMonitor::Create(fake_set, {}, real_time).value();
    const double cpu0 = CpuSeconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    const double cpu = CpuSeconds() - cpu0;
    fmt::print("{:>6}Hz {:>10} {:>14.4f} {:>13.2f}%   (8 in-process fake GPUs: the sampler without NVML)\n", 1000,
               pm->Timeline(0).size(), cpu, 100.0 * cpu / seconds);
  }
  zeus::monitor::PowerMonitorOptions options;
  options.interval = std::chrono::milliseconds(1);
  options.clock = &clock;
  options.start_thread = false;
  const long rss_before = RssKb();
  auto pm = zeus::monitor::PowerMonitor::Create(fake_set, {}, options).value();
  const std::size_t bytes = pm->buffer_bytes();
  for (int i = 0; i < 3'600'000; ++i) {
    clock.Advance(std::chrono::milliseconds(1));
    pm->SampleOnce();
  }
  fmt::print("\nOne simulated hour at 1 kHz on 8 GPUs (capacity {} samples per GPU):\n", pm->capacity());
  fmt::print("  sample buffers (bound): {:.1f} MiB at start, {:.1f} MiB after 3.6 M ticks\n", bytes / 1048576.0,
             pm->buffer_bytes() / 1048576.0);
  fmt::print("  process RSS: {:.1f} MiB before the monitor, {:.1f} MiB after the hour\n",
             rss_before / 1024.0, RssKb() / 1024.0);
  return 0;
}
