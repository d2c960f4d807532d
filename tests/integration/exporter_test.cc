// Copyright 2026 The Zeus C++ Authors.
//
// `zeus exporter` and the push helpers against the real servers: Debian's
// Prometheus scrapes the exporter (over emulated GPUs and a fake powercap
// tree) and a Pushgateway that the C++ helpers push to; every check goes
// through Prometheus's query API. Expected values come from the scenarios:
// constant power, so energy is power x emulated time, exactly on the manual
// clock.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "emulator/control/control.h"
#include "testing/prometheus_servers.h"
#include "testing/rapl_tree.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "zeus/device/discovery.h"
#include "zeus/exporter/push.h"
#include "zeus/monitor/monitor.h"

namespace zeus {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

json Gpu(const char* name, const char* arch, bool counter, double power_w, int limit_w, int temperature_c) {
  return {{"name", name},
          {"architecture", arch},
          {"min_power_limit_w", 100},
          {"max_power_limit_w", 400},
          {"default_power_limit_w", limit_w},
          {"energy_counter", counter},
          {"counter_update_period_ms", 0},
          {"power_average_window_ms", 0},
          {"power_w", power_w},
          {"temperature_c", temperature_c}};
}

class ExporterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::PrometheusInstalled()) return;
    tmp_ = new testing::TempDir();
    // The exporter's host: three GPUs (one without an energy counter, one
    // lost after its first 250 driver calls) and one RAPL package with DRAM.
    json scenario = {{"state_file", tmp_->File("exporter.state")},
                     {"gpus",
                      {Gpu("Tesla V100-SXM2-32GB", "volta", true, 200, 250, 55),
                       Gpu("Tesla P100-PCIE-16GB", "pascal", false, 120, 250, 61),
                       Gpu("NVIDIA A40", "ampere", true, 300, 300, 70)}},
                     {"faults", {{{"function", "*"}, {"gpu", 2}, {"return", "GPU_IS_LOST"}, {"after_calls", 250}}}}};
    const std::string config = tmp_->Write("exporter.json", scenario.dump());
    rapl_ = new testing::RaplTree(tmp_->File("powercap"));
    rapl_->AddPackage(0, /*dram=*/true);
    rapl_->SetEnergy(0, false, 1'000'000);
    rapl_->SetEnergy(0, true, 500'000);

    pushgateway_ = new testing::Pushgateway();
    const int exporter_port = testing::FreeLoopbackPort();
    exporter_address_ = fmt::format("127.0.0.1:{}", exporter_port);
    // Prometheus first, so that it sees every state of the exporter's devices.
    prometheus_ = new testing::Prometheus({exporter_address_}, {pushgateway_->address()});
    exporter_ = new testing::BackgroundProcess(
        {ZEUS_TEST_CLI_PATH, "exporter", "--listen", exporter_address_, "--interval-ms", "50", "--hostname",
         "testhost", "--ready-file", tmp_->File("ready")},
        tmp_->File("exporter.out"), tmp_->File("exporter.err"),
        {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
         {"ZEUS_EMULATOR_CONFIG", config},
         {"ZEUS_POWERCAP_ROOT", rapl_->root()},
         // The start-up counter check polls GPU 2 hundreds of times and would
         // use up its 250 calls before the first scrape; ExporterAmdTest covers it.
         {"ZEUS_ENERGY_COUNTER_CHECK", "0"},
         {"CUDA_VISIBLE_DEVICES", std::nullopt}});
    ASSERT_TRUE(testing::WaitUntil([] {
      std::ifstream in(tmp_->File("ready"));
      std::string url;
      return static_cast<bool>(std::getline(in, url)) && !url.empty();
    })) << "zeus exporter did not start; see its stderr";

    // The pushing side: this process's own emulated GPU (200 W) on a manual clock.
    json push_scenario = {{"clock", "manual"},
                          {"state_file", tmp_->File("push.state")},
                          {"gpus", {Gpu("Tesla V100-SXM2-32GB", "volta", true, 200, 250, 40)}}};
    no_visible_ = new testing::ScopedEnv("CUDA_VISIBLE_DEVICES", std::nullopt);
    push_config_ = new testing::ScopedEnv("ZEUS_EMULATOR_CONFIG", tmp_->Write("push.json", push_scenario.dump()));
    device::GpuOptions options;
    options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
    auto gpus = device::OpenGpus(options);
    ASSERT_TRUE(gpus) << gpus.error().message();
    gpus_ = gpus->release();
    auto control = emulator::EmulatorControl::Open(ZEUS_TEST_EMULATOR_PATH);
    ASSERT_TRUE(control) << control.error().message();
    control_ = control->release();
    clock_ = new emulator::EmulatorClock(*control_);
    monitor::MonitorOptions mo;
    mo.clock = clock_;
    auto m = monitor::Monitor::Create(gpus_, nullptr, mo);
    ASSERT_TRUE(m) << m.error().message();
    monitor_ = m->release();
  }

  static void TearDownTestSuite() {
    delete monitor_;
    delete clock_;
    delete control_;
    delete gpus_;
    delete push_config_;
    delete no_visible_;
    if (exporter_ != nullptr) {
      exporter_->Signal(SIGTERM);
      exporter_->Wait();
    }
    delete exporter_;
    delete prometheus_;
    delete pushgateway_;
    delete rapl_;
    delete tmp_;
  }

  void SetUp() override {
    if (!testing::PrometheusInstalled()) GTEST_SKIP() << "prometheus, promtool or prometheus-pushgateway missing";
  }

  // Waits until `promql`'s first value satisfies `ok`; returns the last value read.
  template <class Predicate>
  static std::optional<double> WaitForValue(const std::string& promql, Predicate ok) {
    std::optional<double> value;
    testing::WaitUntil([&] {
      value = prometheus_->Value(promql);
      return value.has_value() && ok(*value);
    });
    return value;
  }
  static std::optional<double> WaitForValue(const std::string& promql) {
    return WaitForValue(promql, [](double) { return true; });
  }

  exporter::PushTarget Target(const std::string& job) const { return {pushgateway_->url(), job, nullptr}; }

  static inline testing::TempDir* tmp_ = nullptr;
  static inline testing::RaplTree* rapl_ = nullptr;
  static inline testing::Pushgateway* pushgateway_ = nullptr;
  static inline testing::Prometheus* prometheus_ = nullptr;
  static inline testing::BackgroundProcess* exporter_ = nullptr;
  static inline std::string exporter_address_;
  static inline testing::ScopedEnv* push_config_ = nullptr;
  static inline testing::ScopedEnv* no_visible_ = nullptr;
  static inline device::GpuSet* gpus_ = nullptr;
  static inline emulator::EmulatorControl* control_ = nullptr;
  static inline emulator::EmulatorClock* clock_ = nullptr;
  static inline monitor::Monitor* monitor_ = nullptr;
};

TEST_F(ExporterTest, PromtoolAcceptsTheExposition) {
  const auto body = testing::HttpGet(fmt::format("http://{}/metrics", exporter_address_));
  ASSERT_TRUE(body.has_value());
  EXPECT_NE(body->find("zeus_gpu_energy_joules_total{"), std::string::npos);
  const std::string path = tmp_->Write("exposition.txt", *body);
  const auto result = testing::RunProcess({"/bin/sh", "-c", "/usr/bin/promtool check metrics < " + path});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(result.out + result.err, "");
}

// Issue 20: one idle TCP connection (a port scanner, a load balancer's check)
// held civetweb's only thread for 30 s, and every scrape waited behind it.
TEST_F(ExporterTest, IdleConnectionsDoNotDelayAScrape) {
  const int port = std::stoi(exporter_address_.substr(exporter_address_.rfind(':') + 1));
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
    idle.push_back(fd);
  }
  // Within HttpGet's 5 s, far below the 30 s an idle connection used to hold.
  const auto body = testing::HttpGet(fmt::format("http://{}/metrics", exporter_address_));
  for (int fd : idle) ::close(fd);
  ASSERT_TRUE(body.has_value());
  EXPECT_NE(body->find("zeus_device_up{"), std::string::npos);
  const auto missing = testing::HttpGet(fmt::format("http://{}/other", exporter_address_));
  EXPECT_FALSE(missing.has_value()) << "404 is not a body";
}

TEST_F(ExporterTest, PrometheusReadsTheEmulatorsPowerLimitsAndTemperatures) {
  struct Expected {
    const char* gpu;
    double power_w, limit_w, temperature_c;
  };
  for (const Expected& e : {Expected{"0", 200, 250, 55}, Expected{"1", 120, 250, 61}}) {
    const std::string sel = fmt::format("{{gpu=\"{}\",hostname=\"testhost\"}}", e.gpu);
    EXPECT_EQ(WaitForValue("zeus_gpu_power_watts" + sel), e.power_w) << e.gpu;
    EXPECT_EQ(WaitForValue("zeus_gpu_power_limit_watts" + sel), e.limit_w) << e.gpu;
    EXPECT_EQ(WaitForValue("zeus_gpu_temperature_celsius" + sel), e.temperature_c) << e.gpu;
  }
  const auto labels = prometheus_->Query("zeus_gpu_power_watts{gpu=\"0\"}");
  ASSERT_TRUE(labels && !labels->empty());
  EXPECT_EQ((*labels)[0]["metric"]["model"], "Tesla V100-SXM2-32GB");
  EXPECT_TRUE(std::regex_match((*labels)[0]["metric"]["uuid"].get<std::string>(), std::regex("GPU-[0-9a-f-]{36}")));
}

TEST_F(ExporterTest, EnergyRateAgreesWithThePowerWithin2Percent) {
  // GPU 0 from its energy counter, GPU 1 (no counter) from integrated samples.
  for (const auto& [gpu, power_w] : {std::pair{"0", 200.0}, std::pair{"1", 120.0}}) {
    const std::string series = fmt::format("zeus_gpu_energy_joules_total{{gpu=\"{}\"}}", gpu);
    // rate() divides by the whole range: wait until the series is older than it
    // (36 scrapes at 200 ms: 7 s).
    ASSERT_TRUE(WaitForValue(fmt::format("count_over_time({}[8s])", series), [](double n) { return n >= 36; }));
    const auto rate = prometheus_->Value(fmt::format("rate({}[5s])", series));
    ASSERT_TRUE(rate.has_value());
    EXPECT_NEAR(*rate, power_w, 0.02 * power_w) << "GPU " << gpu;
  }
}

TEST_F(ExporterTest, ALostGpuIsDownWhileTheOthersContinue) {
  // GPU 2 was up (seen at least once), then lost.
  EXPECT_EQ(WaitForValue("max_over_time(zeus_device_up{gpu=\"2\"}[1h])", [](double v) { return v == 1; }), 1);
  EXPECT_EQ(WaitForValue("zeus_device_up{device=\"gpu\",gpu=\"2\"}", [](double v) { return v == 0; }), 0);
  // Its value series stop; GPU 0's keep coming.
  EXPECT_TRUE(testing::WaitUntil([] { return !prometheus_->Value("zeus_gpu_power_watts{gpu=\"2\"}").has_value(); }));
  const auto before = prometheus_->Value("count_over_time(zeus_gpu_energy_joules_total{gpu=\"0\"}[1h])");
  ASSERT_TRUE(before.has_value());
  EXPECT_TRUE(WaitForValue("count_over_time(zeus_gpu_energy_joules_total{gpu=\"0\"}[1h])",
                           [&](double n) { return n > *before; }));
  EXPECT_EQ(prometheus_->Value("zeus_device_up{gpu=\"0\"}"), 1);
  EXPECT_EQ(prometheus_->Value("zeus_gpu_power_watts{gpu=\"0\"}"), 200);
}

TEST_F(ExporterTest, RaplEnergyIsExportedPerPackage) {
  EXPECT_EQ(WaitForValue("zeus_device_up{device=\"cpu\",package=\"0\"}"), 1);
  ASSERT_EQ(WaitForValue("zeus_cpu_energy_joules_total{package=\"0\"}"), 0);
  rapl_->SetEnergy(0, false, 3'000'000);  // +2 J
  rapl_->SetEnergy(0, true, 1'500'000);   // +1 J
  EXPECT_EQ(WaitForValue("zeus_cpu_energy_joules_total{package=\"0\",hostname=\"testhost\"}",
                         [](double v) { return v == 2; }), 2);
  EXPECT_EQ(WaitForValue("zeus_dram_energy_joules_total{package=\"0\"}", [](double v) { return v == 1; }), 1);
}

TEST_F(ExporterTest, HistogramWindowReachesPrometheus) {
  auto histogram = exporter::EnergyHistogram::Create(*monitor_, Target("cxx_histogram"));
  ASSERT_TRUE(histogram) << histogram.error().message();
  ASSERT_TRUE((*histogram)->BeginWindow("epoch"));
  clock_->SleepFor(seconds(2));  // 200 W x 2 s
  auto m = (*histogram)->EndWindow("epoch");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->gpus[0].energy_j, 400);
  const std::string sel = "{job=\"cxx_histogram\",window=\"epoch\",index=\"0\"";
  EXPECT_EQ(WaitForValue("energy_monitor_gpu_energy_joules_sum" + sel + "}"), 400);
  EXPECT_EQ(prometheus_->Value("energy_monitor_gpu_energy_joules_count" + sel + "}"), 1);
  EXPECT_EQ(prometheus_->Value("energy_monitor_gpu_energy_joules_bucket" + sel + ",le=\"500\"}"), 1);
  EXPECT_EQ(prometheus_->Value("energy_monitor_gpu_energy_joules_bucket" + sel + ",le=\"200\"}"), 0);
}

TEST_F(ExporterTest, CumulativeCounterLosesNoEnergyBetweenSubWindows) {
  // Every reading of this monitor first lets 10 ms of emulated time pass (its
  // sync hook), so time also passes at each sub-window boundary: energy drawn
  // there is lost unless consecutive sub-windows share their boundary reading.
  std::atomic<int> syncs{0};
  monitor::MonitorOptions mo;
  mo.clock = clock_;
  mo.sync = [&] {
    clock_->SleepFor(milliseconds(10));
    ++syncs;
  };
  auto monitor = monitor::Monitor::Create(gpus_, nullptr, mo);
  ASSERT_TRUE(monitor);
  auto counter = exporter::EnergyCumulativeCounter::Create(**monitor, milliseconds(10), Target("cxx_counter"));
  ASSERT_TRUE(counter) << counter.error().message();
  ASSERT_TRUE((*counter)->BeginWindow("train"));
  // Five emulated seconds, in steps separated by at least one sub-window
  // boundary each (a push follows every update).
  for (int step = 0; step < 5; ++step) {
    const auto pushes = (*counter)->pushes_attempted();
    clock_->SleepFor(seconds(1));
    ASSERT_TRUE(testing::WaitUntil([&] { return (*counter)->pushes_attempted() >= pushes + 2; }));
  }
  ASSERT_TRUE((*counter)->EndWindow("train"));
  // 200 W over 5 s and the 10 ms of every sync after the first (which
  // precedes the window's begin reading).
  ASSERT_GE(syncs.load(), 6);
  const double expected_j = 200.0 * (5.0 + 0.010 * (syncs.load() - 1));
  const auto total_j =
      WaitForValue("energy_monitor_gpu_energy_joules_total{job=\"cxx_counter\",window=\"train\",index=\"0\"}",
                   [&](double v) { return std::abs(v - expected_j) < 1e-6; });
  ASSERT_TRUE(total_j.has_value());
  EXPECT_DOUBLE_EQ(*total_j, expected_j);
  EXPECT_FALSE((*counter)->EndWindow("train"));
}

TEST_F(ExporterTest, PowerGaugeReachesPrometheus) {
  auto gauge = exporter::PowerGauge::Create(*gpus_, {0}, milliseconds(10), Target("cxx_gauge"));
  ASSERT_TRUE(gauge) << gauge.error().message();
  ASSERT_TRUE((*gauge)->BeginWindow("run"));
  EXPECT_FALSE((*gauge)->BeginWindow("run"));
  ASSERT_TRUE(testing::WaitUntil([&] { return (*gauge)->pushes_attempted() >= 2; }));
  ASSERT_TRUE((*gauge)->EndWindow("run"));
  EXPECT_EQ(WaitForValue("power_monitor_gpu_power_watts{job=\"cxx_gauge\",window=\"run\",index=\"0\"}"), 200);
}

TEST_F(ExporterTest, ZeusMonitorPushesTheCommandsWindow) {
  const std::string scenario =
      tmp_->Write("cli.json", json({{"state_file", tmp_->File("cli.state")},
                                    {"gpus", {Gpu("Tesla V100-SXM2-32GB", "volta", true, 150, 250, 40)}}})
                                  .dump());
  const std::map<std::string, std::optional<std::string>> env = {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
                                                                  {"ZEUS_EMULATOR_CONFIG", scenario},
                                                                  {"CUDA_VISIBLE_DEVICES", std::nullopt}};
  const auto result = testing::RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "--json", "--pushgateway",
                                           pushgateway_->url(), "--job", "cli_job", "--", "sleep", "0.2"},
                                          env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const double energy_j = json::parse(result.out)["gpus"][0]["energy_j"].get<double>();
  EXPECT_GT(energy_j, 0);
  const std::string sel = "{job=\"cli_job\",window=\"command\",index=\"0\"}";
  EXPECT_EQ(WaitForValue("energy_monitor_gpu_energy_joules_count" + sel), 1);
  const auto pushed_j = prometheus_->Value("energy_monitor_gpu_energy_joules_sum" + sel);
  ASSERT_TRUE(pushed_j.has_value());
  EXPECT_NEAR(*pushed_j, energy_j, 1e-6 * energy_j);  // the report prints the same double, rounded

  // Usage errors: exit 2 before the command runs.
  const auto no_job = testing::RunProcess(
      {ZEUS_TEST_CLI_PATH, "monitor", "--pushgateway", pushgateway_->url(), "--", "true"}, env);
  EXPECT_EQ(no_job.exit_code, 2);
  EXPECT_NE(no_job.err.find("--pushgateway and --job go together"), std::string::npos) << no_job.err;
  const auto bad_url =
      testing::RunProcess({ZEUS_TEST_CLI_PATH, "monitor", "--pushgateway", "ftp://x", "--job", "j", "--", "true"}, env);
  EXPECT_EQ(bad_url.exit_code, 2);
  EXPECT_NE(bad_url.err.find("Pushgateway URL 'ftp://x' has the unsupported scheme 'ftp'"), std::string::npos)
      << bad_url.err;
}

TEST_F(ExporterTest, EveryDashboardQueryReturnsData) {
  // Pushed windows for the dashboard's job panels.
  auto histogram = exporter::EnergyHistogram::Create(*monitor_, Target("dashboard"));
  ASSERT_TRUE(histogram);
  ASSERT_TRUE((*histogram)->BeginWindow("step"));
  clock_->SleepFor(seconds(1));
  ASSERT_TRUE((*histogram)->EndWindow("step"));
  auto counter = exporter::EnergyCumulativeCounter::Create(*monitor_, milliseconds(10), Target("dashboard_counter"));
  ASSERT_TRUE(counter);
  ASSERT_TRUE((*counter)->BeginWindow("train"));
  clock_->SleepFor(seconds(1));
  ASSERT_TRUE((*counter)->EndWindow("train"));
  // Enough samples for the range queries.
  ASSERT_TRUE(WaitForValue("count_over_time(zeus_gpu_energy_joules_total{gpu=\"0\"}[5s])",
                           [](double n) { return n >= 10; }));

  std::ifstream in(std::string(ZEUS_TEST_SOURCE_DIR) + "/deploy/grafana/zeus-dashboard.json");
  const json dashboard = json::parse(in);
  int queries = 0;
  for (const json& panel : dashboard.at("panels")) {
    if (!panel.contains("targets")) continue;
    for (const json& target : panel["targets"]) {
      std::string expr = target.at("expr");
      // The per-process panels need `--per-process` and emulated processes:
      // exporter_process_test.cc checks them.
      if (expr.find("zeus_gpu_process_") != std::string::npos) continue;
      expr = std::regex_replace(expr, std::regex(R"(\$__rate_interval|\$__interval|\$__range)"), "5s");
      expr = std::regex_replace(expr, std::regex(R"(\$\{?(hostname|job|gpu|window)\}?)"), ".*");
      ++queries;
      EXPECT_TRUE(WaitForValue(expr).has_value())
          << "panel \"" << panel.value("title", "") << "\": " << expr << " returned no data";
    }
  }
  EXPECT_GE(queries, 8);
}

}  // namespace
}  // namespace zeus
