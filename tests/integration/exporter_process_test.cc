// Copyright 2026 The Zeus C++ Authors.
//
// `zeus exporter --per-process` against Debian's Prometheus: the emulator
// puts processes on a GPU (the scenario's "processes", fake PIDs), a fake
// /proc tree (--proc-root) says which Slurm job or Kubernetes pod each
// belongs to, and every check goes through Prometheus's query API, including
// the dashboard's per-job and per-pod panels.
//
// Skipped where Prometheus is missing, or where the emulator does not answer
// the per-process calls (a build before the emulator had them).

#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <optional>
#include <fstream>
#include <memory>
#include <regex>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "testing/proc_tree.h"
#include "testing/prometheus_servers.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "zeus/device/discovery.h"

namespace zeus {
namespace {

using json = nlohmann::json;

constexpr char kPodUid[] = "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0";
constexpr char kContainer[] = "3b5c2e6f9a1d4c8b7e0f2a4d6c8e1b3f5a7c9e2d4b6f8a1c3e5d7b9f2a4c6e8d";

std::string SlurmCgroup(int job) {
  return fmt::format("0::/system.slice/slurmstepd.scope/job_{}/step_0/user/task_0\n", job);
}

std::string PodCgroup() {
  std::string uid = kPodUid;
  for (char& c : uid) c = c == '-' ? '_' : c;
  return std::string("0::/kubepods.slice/kubepods-pod") + uid + ".slice/cri-containerd-" + kContainer + ".scope\n";
}

class ExporterProcessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::PrometheusInstalled()) return;
    tmp_ = new testing::TempDir();
    // One GPU: job 123's process at 60 % SM utilization, job 456's at 20 %,
    // a pod's at 20 %; a second GPU with nothing on it.
    const json processes = json::array({{{"pid", 4242}, {"sm_util_percent", 60}},
                                        {{"pid", 4343}, {"sm_util_percent", 20}},
                                        {{"pid", 5151}, {"sm_util_percent", 20}}});
    json gpu = {{"name", "NVIDIA A100-SXM4-40GB"},
                {"architecture", "ampere"},
                {"min_power_limit_w", 100},
                {"max_power_limit_w", 400},
                {"default_power_limit_w", 400},
                {"temperature_c", 50},
                {"power_average_window_ms", 0},
                {"energy_counter", true},
                {"counter_update_period_ms", 0},
                {"power_w", 300},
                {"processes", processes}};
    json idle = gpu;
    idle.erase("processes");
    const json scenario = {{"state_file", tmp_->File("emulator.state")}, {"gpus", {gpu, idle}}};
    config_ = tmp_->Write("scenario.json", scenario.dump());
    const testing::ProcTree procs(tmp_->path() + "/proc");
    procs.Add({.pid = 4242, .comm = "python3", .uid = 0, .start_time_ticks = 5242, .cgroup = SlurmCgroup(123)});
    procs.Add({.pid = 4343, .comm = "python3", .uid = 0, .start_time_ticks = 5343, .cgroup = SlurmCgroup(456)});
    procs.Add({.pid = 5151, .comm = "trainer", .uid = 0, .start_time_ticks = 6151, .cgroup = PodCgroup()});

    supported_ = EmulatorAnswersPerProcessCalls();
    if (!supported_) return;
    const std::string address = fmt::format("127.0.0.1:{}", testing::FreeLoopbackPort());
    prometheus_ = new testing::Prometheus({address}, {});
    exporter_ = new testing::BackgroundProcess(
        {ZEUS_TEST_CLI_PATH, "exporter", "--listen", address, "--interval-ms", "50", "--hostname", "testhost",
         "--no-cpus", "--per-process", "--idle-power", "NVIDIA A100-SXM4-40GB=60", "--proc-root",
         tmp_->File("proc"), "--ready-file", tmp_->File("ready")},
        tmp_->File("exporter.out"), tmp_->File("exporter.err"),
        {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
         {"ZEUS_EMULATOR_CONFIG", config_},
         {"CUDA_VISIBLE_DEVICES", std::nullopt}});
  }

  // Whether this build's emulator lists the scenario's processes.
  static bool EmulatorAnswersPerProcessCalls() {
    testing::ScopedEnv config("ZEUS_EMULATOR_CONFIG", tmp_->Write("probe.json", [] {
      json probe = json::parse(std::ifstream(config_));
      probe["state_file"] = tmp_->File("probe.state");
      return probe.dump();
    }()));
    testing::ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::nullopt);
    device::GpuOptions options;
    options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
    auto gpus = device::OpenGpus(options);
    if (!gpus) {
      setup_error_ = gpus.error().message();
      return false;
    }
    auto listed = (*gpus)->gpu(0).RunningProcesses();
    if (!listed && listed.error().code() == ErrorCode::kNotSupported) return false;
    if (!listed) setup_error_ = listed.error().message();
    return listed.has_value();
  }

  static void TearDownTestSuite() {
    if (exporter_ != nullptr) {
      exporter_->Signal(SIGTERM);
      exporter_->Wait();
    }
    delete exporter_;
    delete prometheus_;
    delete tmp_;
  }

  void SetUp() override {
    if (!testing::PrometheusInstalled()) GTEST_SKIP() << "prometheus or promtool missing";
    ASSERT_EQ(setup_error_, "") << "the emulator with this test's scenario";
    if (!supported_) GTEST_SKIP() << "this emulator does not answer the per-process calls (scenario \"processes\")";
  }

  // Whether `promql`'s first value comes to satisfy `ok`.
  template <class Predicate>
  static bool Reaches(const std::string& promql, Predicate ok) {
    return testing::WaitUntil([&] {
      const std::optional<double> value = prometheus_->Value(promql);
      return value.has_value() && ok(*value);
    });
  }

  static inline testing::TempDir* tmp_ = nullptr;
  static inline std::string config_;
  static inline bool supported_ = false;
  static inline std::string setup_error_;  // the probe's unexpected error
  static inline testing::Prometheus* prometheus_ = nullptr;
  static inline testing::BackgroundProcess* exporter_ = nullptr;
};

TEST_F(ExporterProcessTest, PrometheusSumsTheProcessesPerSlurmJob) {
  const std::string per_job =
      "sum by (slurm_job_id) (zeus_gpu_process_energy_joules_total{{slurm_job_id=\"{}\"}})";
  ASSERT_TRUE(Reaches(fmt::format(fmt::runtime(per_job), "456"), [](double j) { return j > 50; }))
      << "no energy for job 456; see the exporter's stderr in " << tmp_->path();
  // Both jobs' counters come from one scrape: 60 % and 20 % of the same
  // active energy, 3:1 up to a millijoule per interval.
  const auto jobs = prometheus_->Query(
      "sum by (slurm_job_id) (zeus_gpu_process_energy_joules_total{slurm_job_id!=\"\"})");
  ASSERT_TRUE(jobs.has_value());
  std::map<std::string, double> by_job;
  for (const json& series : *jobs) {
    by_job[series["metric"].value("slurm_job_id", "")] = std::stod(series["value"][1].get<std::string>());
  }
  ASSERT_EQ(by_job.size(), 2u) << jobs->dump();
  EXPECT_NEAR(by_job["123"] / by_job["456"], 3.0, 0.03) << jobs->dump();
}

TEST_F(ExporterProcessTest, PodProcessCarriesItsPodAndContainer) {
  const std::string query = fmt::format(
      "zeus_gpu_process_energy_joules_total{{pid=\"5151\",pod=\"{}\",container=\"{}\",comm=\"trainer\",user=\"root\","
      "gpu=\"0\"}}",
      kPodUid, kContainer);
  EXPECT_TRUE(Reaches(query, [](double j) { return j > 0; })) << query;
}

TEST_F(ExporterProcessTest, PartsAddUpPerGpuInAQuery) {
  ASSERT_TRUE(Reaches("zeus_gpu_attributed_energy_joules_total{gpu=\"1\"}", [](double j) { return j > 0; }));
  const std::string difference =
      "abs(sum by (gpu) ({__name__=~\"zeus_gpu_(process|idle|unlisted)_energy_joules_total\"}) - on (gpu) "
      "sum by (gpu) (zeus_gpu_attributed_energy_joules_total))";
  const auto rows = prometheus_->Query(difference);
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), 2u) << rows->dump();
  for (const json& row : *rows) EXPECT_LT(std::stod(row["value"][1].get<std::string>()), 1e-6) << row.dump();
}

TEST_F(ExporterProcessTest, DashboardPerJobAndPerPodPanelsReturnData) {
  ASSERT_TRUE(Reaches("count_over_time(zeus_gpu_process_energy_joules_total{pid=\"4242\"}[5s])",
                           [](double n) { return n >= 10; }));
  std::ifstream in(std::string(ZEUS_TEST_SOURCE_DIR) + "/deploy/grafana/zeus-dashboard.json");
  const json dashboard = json::parse(in);
  int queries = 0;
  for (const json& panel : dashboard.at("panels")) {
    if (!panel.contains("targets")) continue;
    for (const json& target : panel["targets"]) {
      std::string expr = target.at("expr");
      if (expr.find("zeus_gpu_process_") == std::string::npos) continue;
      expr = std::regex_replace(expr, std::regex(R"(\$__rate_interval|\$__interval|\$__range)"), "5s");
      expr = std::regex_replace(expr, std::regex(R"(\$\{?(hostname|job|gpu|window)\}?)"), ".*");
      ++queries;
      EXPECT_TRUE(Reaches(expr, [](double j) { return j > 0; }))
          << "panel \"" << panel.value("title", "") << "\": " << expr << " returned no data";
    }
  }
  EXPECT_EQ(queries, 2);
}

}  // namespace
}  // namespace zeus
