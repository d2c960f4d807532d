// Copyright 2026 The Zeus C++ Authors.
//
// `zeus exporter` on an emulated AMD MI250 machine (data/emulator/mi250.json:
// four boards, eight dies; the even die of each board reports the board's
// power and energy, the odd one none), scraped over HTTP as Prometheus does.

#include <signal.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/prometheus_servers.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"

namespace zeus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

// The value of the first sample of `metric` for GPU `gpu`, or -1.
double Sample(const std::string& body, const std::string& metric, int gpu) {
  const std::regex line(metric + R"(\{[^}]*gpu=")" + std::to_string(gpu) + R"("[^}]*\} ([0-9.e+-]+))");
  std::smatch match;
  return std::regex_search(body, match, line) ? std::stod(match[1]) : -1.0;
}

TEST(ExporterAmdTest, AnMi250MachineIsExportedDieByDie) {
  testing::TempDir tmp;
  std::ifstream in(std::string(ZEUS_TEST_SOURCE_DIR) + "/data/emulator/mi250.json");
  json scenario = json::parse(in);
  scenario["state_file"] = tmp.File("mi250.state");
  const std::string config = tmp.Write("mi250.json", scenario.dump());
  const std::string address = fmt::format("127.0.0.1:{}", testing::FreeLoopbackPort());
  testing::BackgroundProcess exporter(
      {ZEUS_TEST_CLI_PATH, "exporter", "--listen", address, "--interval-ms", "50", "--hostname", "amdhost",
       "--ready-file", tmp.File("ready")},
      tmp.File("exporter.out"), tmp.File("exporter.err"),
      {{"ZEUS_GPU_VENDOR", "amd"},
       {"ZEUS_AMDSMI_LIBRARY", ZEUS_TEST_AMDSMI_EMULATOR_PATH},
       {"ZEUS_AMDSMI_EMULATOR_CONFIG", config},
       {"ZEUS_NVML_LIBRARY", std::nullopt},
       {"ZEUS_POWERCAP_ROOT", tmp.File("no-powercap")},
       {"CUDA_VISIBLE_DEVICES", std::nullopt},
       {"HIP_VISIBLE_DEVICES", std::nullopt},
       {"ROCR_VISIBLE_DEVICES", std::nullopt}});
  ASSERT_TRUE(testing::WaitUntil([&] { return std::ifstream(tmp.File("ready")).good() || !exporter.Running(); }));
  ASSERT_TRUE(exporter.Running()) << std::ifstream(tmp.File("exporter.err")).rdbuf();

  std::string body;
  // Energy moves between scrapes on the dies that report it.
  double first = -1;
  ASSERT_TRUE(testing::WaitUntil([&] {
    auto got = testing::HttpGet(fmt::format("http://{}/metrics", address));
    if (!got) return false;
    body = *got;
    const double energy = Sample(body, "zeus_gpu_energy_joules_total", 0);
    if (first < 0) first = energy;
    return first >= 0 && energy > first;
  })) << body;
  EXPECT_THAT(body, HasSubstr(R"(model="AMD Instinct MI250")"));
  for (int die = 0; die < 8; die += 2) {
    EXPECT_DOUBLE_EQ(Sample(body, "zeus_gpu_power_watts", die), 450.0) << die;
    EXPECT_GT(Sample(body, "zeus_gpu_energy_joules_total", die), 0.0) << die;
    EXPECT_DOUBLE_EQ(Sample(body, "zeus_gpu_power_limit_watts", die), 500.0) << die;
  }
  for (int die = 1; die < 8; die += 2) {
    // No power of its own: not exported as zero, which would read as idle.
    EXPECT_LT(Sample(body, "zeus_gpu_power_watts", die), 0.0) << die;
    EXPECT_DOUBLE_EQ(Sample(body, "zeus_gpu_power_limit_watts", die), 500.0) << die;
  }
  exporter.Signal(SIGTERM);
  exporter.Wait();
}

// Trust, but check, in the exporter: at start, on each GPU's own scrape
// thread. A counter at twice the rate is not used: the exported energy is
// integrated power, which grows at the GPU's 500 W, not 1000 W.
TEST(ExporterAmdTest, AWrongRateCounterIsCaughtAtStart) {
  testing::TempDir tmp;
  json gpu = {{"name", "AMD Instinct MI300X"}, {"min_power_limit_w", 200}, {"max_power_limit_w", 750},
              {"default_power_limit_w", 750},  {"power_w", 500},           {"energy_counter_rate", 2.0},
              {"unsupported", {"average_power"}}};
  const std::string config =
      tmp.Write("wrong.json", json({{"vendor", "amd"}, {"state_file", tmp.File("wrong.state")}, {"gpus", {gpu}}}).dump());
  const std::string address = fmt::format("127.0.0.1:{}", testing::FreeLoopbackPort());
  testing::BackgroundProcess exporter(
      {ZEUS_TEST_CLI_PATH, "exporter", "--listen", address, "--interval-ms", "20", "--ready-file", tmp.File("ready")},
      tmp.File("exporter.out"), tmp.File("exporter.err"),
      {{"ZEUS_GPU_VENDOR", "amd"},
       {"ZEUS_AMDSMI_LIBRARY", ZEUS_TEST_AMDSMI_EMULATOR_PATH},
       {"ZEUS_AMDSMI_EMULATOR_CONFIG", config},
       {"ZEUS_NVML_LIBRARY", std::nullopt},
       {"ZEUS_POWERCAP_ROOT", tmp.File("no-powercap")},
       {"CUDA_VISIBLE_DEVICES", std::nullopt},
       {"HIP_VISIBLE_DEVICES", std::nullopt},
       {"ROCR_VISIBLE_DEVICES", std::nullopt}});
  ASSERT_TRUE(testing::WaitUntil([&] {
    std::ifstream in(tmp.File("ready"));
    std::string url;
    return static_cast<bool>(std::getline(in, url)) || !exporter.Running();
  }));
  const auto err = [&] {
    std::ifstream in(tmp.File("exporter.err"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  ASSERT_TRUE(exporter.Running()) << err();
  EXPECT_THAT(err(), HasSubstr("GPU 0: the energy counter disagrees with the GPU's power"));
  // Two scrapes at least 1 s apart: the energy grew by about 500 W x the time
  // between them (sampled power, so loosely), far from the counter's 1000 W.
  auto scrape = [&] {
    auto body = testing::HttpGet(fmt::format("http://{}/metrics", address));
    return body ? Sample(*body, "zeus_gpu_energy_joules_total", 0) : -1.0;
  };
  double first = -1;
  ASSERT_TRUE(testing::WaitUntil([&] { return (first = scrape()) > 0; }));
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double second = scrape();
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double watts = (second - first) / elapsed_s;
  EXPECT_GT(watts, 300.0) << second << " - " << first;
  EXPECT_LT(watts, 700.0) << second << " - " << first;
  exporter.Signal(SIGTERM);
  exporter.Wait();
}

}  // namespace
}  // namespace zeus
