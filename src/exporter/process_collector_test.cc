// Copyright 2026 The Zeus C++ Authors.
//
// The exporter's per-process metrics (ProcessCollector, and the Collector
// with per_process) over scripted GPUs, a FakeClock and fake /proc trees.

#include "exporter/process_collector.h"

#include <prometheus/text_serializer.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "testing/fake_clock.h"
#include "testing/proc_tree.h"
#include "testing/process_scripted_gpu.h"
#include "testing/result.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "zeus/exporter/collector.h"

namespace zeus::exporter {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using zeus::testing::ProcessScriptedGpu;
using zeus::testing::ScriptedProcess;
using zeus::testing::TempDir;
using zeus::testing::Unwrap;

constexpr std::uint32_t kSlurmPid = 4242;
constexpr std::uint32_t kPodPid = 5151;
constexpr char kSlurmCgroup[] = "0::/system.slice/slurmstepd.scope/job_123/step_0/user/task_0\n";
constexpr char kPodUid[] = "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0";
constexpr char kContainer[] = "3b5c2e6f9a1d4c8b7e0f2a4d6c8e1b3f5a7c9e2d4b6f8a1c3e5d7b9f2a4c6e8d";

std::string PodCgroup() {
  std::string uid = kPodUid;
  for (char& c : uid) c = c == '-' ? '_' : c;
  return std::string("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod") + uid +
         ".slice/cri-containerd-" + kContainer + ".scope\n";
}

// One exposition line: name, labels (as written) and value.
struct Sample {
  std::string name, labels;
  double value = 0;
};

std::vector<Sample> Parse(const std::string& text) {
  std::vector<Sample> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    const auto brace = line.find('{');
    const auto space = line.rfind(' ');
    s.name = line.substr(0, std::min(brace, space));
    if (brace != std::string::npos) s.labels = line.substr(brace, line.rfind('}') - brace + 1);
    s.value = std::stod(line.substr(space + 1));
    out.push_back(s);
  }
  return out;
}

std::string Label(const Sample& s, const std::string& name) {
  const std::string key = name + "=\"";
  const auto at = s.labels.find(key);
  if (at == std::string::npos) return "";
  const auto start = at + key.size();
  return s.labels.substr(start, s.labels.find('"', start) - start);
}

// Per GPU: the sum of the process, idle and unlisted counters, and the
// attributed counter.
std::map<std::string, std::pair<double, double>> PartsAndTotal(const std::vector<Sample>& samples) {
  std::map<std::string, std::pair<double, double>> by_gpu;
  for (const Sample& s : samples) {
    if (s.name == "zeus_gpu_process_energy_joules_total" || s.name == "zeus_gpu_idle_energy_joules_total" ||
        s.name == "zeus_gpu_unlisted_energy_joules_total") {
      by_gpu[Label(s, "gpu")].first += s.value;
    } else if (s.name == "zeus_gpu_attributed_energy_joules_total") {
      by_gpu[Label(s, "gpu")].second += s.value;
    }
  }
  return by_gpu;
}

double Value(const std::vector<Sample>& samples, const std::string& name, const std::string& labels_part = "") {
  for (const Sample& s : samples) {
    if (s.name == name && s.labels.find(labels_part) != std::string::npos) return s.value;
  }
  return NAN;
}

int Count(const std::vector<Sample>& samples, const std::string& name) {
  int n = 0;
  for (const Sample& s : samples) n += s.name == name ? 1 : 0;
  return n;
}

class ProcessCollectorTest : public ::testing::Test {
 protected:
  ProcessCollectorTest() {
    std::vector<std::unique_ptr<device::Gpu>> list;
    for (unsigned int i = 0; i < 2; ++i) {
      testing::FakeGpuConfig config;
      config.uuid = "GPU-" + std::to_string(i);
      config.power_w = 100;
      auto gpu = std::make_unique<ProcessScriptedGpu>(config, clock_, i);
      gpu_[i] = gpu.get();
      list.push_back(std::move(gpu));
    }
    gpus_ = std::make_unique<device::GpuSet>("1.0", std::move(list));
    const testing::ProcTree tree(proc_.path());
    tree.Add({.pid = kSlurmPid, .comm = "python3", .uid = 0, .start_time_ticks = 777, .cgroup = kSlurmCgroup});
    tree.Add({.pid = kPodPid, .comm = "trainer", .uid = 4000000, .start_time_ticks = 888, .cgroup = PodCgroup()});
    options_.idle.idle_power_mw_by_model["Fake V100"] = 40'000;  // 60 W of the 100 W is active
    options_.identity.proc_root = proc_.path();
    options_.clock = &clock_;
  }

  void Create() {
    collector_ = Unwrap(ProcessCollector::Create(*gpus_, {"0", "1"}, {"GPU-0", "GPU-1"}, "h1", options_));
  }
  // One tick `step` after the previous one.
  void Tick(std::chrono::nanoseconds step = std::chrono::seconds(1)) {
    clock_.Advance(step);
    collector_->Sample();
  }
  std::string Text() const {
    std::vector<prometheus::MetricFamily> families;
    collector_->Append(families);
    return prometheus::TextSerializer().Serialize(families);
  }
  void ExpectConservation(const std::vector<Sample>& samples) const {
    for (const auto& [gpu, parts] : PartsAndTotal(samples)) {
      EXPECT_NEAR(parts.first, parts.second, 1e-6) << "GPU " << gpu;
    }
  }

  testing::FakeClock clock_;
  ProcessScriptedGpu* gpu_[2] = {};
  std::unique_ptr<device::GpuSet> gpus_;
  TempDir proc_;
  monitor::ProcessEnergyOptions options_;
  std::unique_ptr<ProcessCollector> collector_;
};

TEST_F(ProcessCollectorTest, ProcessSeriesCarryTheirIdentity) {
  Create();
  gpu_[0]->SetProcesses({{kSlurmPid, 60}, {kPodPid, 20}});
  collector_->Sample();  // the baseline
  Tick();                // 100 J: 40 J idle, 60 J split 3:1
  const std::string text = Text();
  EXPECT_THAT(text, HasSubstr(R"(zeus_gpu_process_energy_joules_total{comm="python3",container="",gpu="0",)"
                              R"(hostname="h1",pid="4242",pod="",slurm_job_id="123",user="root",uuid="GPU-0"} 45)"
                              "\n"));
  EXPECT_THAT(text, HasSubstr(std::string(R"(zeus_gpu_process_energy_joules_total{comm="trainer",container=")") +
                              kContainer + R"(",gpu="0",hostname="h1",pid="5151",pod=")" + kPodUid +
                              R"(",slurm_job_id="",user="4000000",uuid="GPU-0"} 15)" "\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE zeus_gpu_process_energy_joules_total counter\n"));
  EXPECT_THAT(text, HasSubstr(R"(zeus_gpu_idle_energy_joules_total{gpu="0",hostname="h1",uuid="GPU-0"} 40)" "\n"));
  // GPU 1 ran no process: its active energy is unattributed.
  EXPECT_THAT(text, HasSubstr(R"(zeus_gpu_unlisted_energy_joules_total{gpu="1",hostname="h1",kind="unattributed",)"
                              R"(uuid="GPU-1"} 60)" "\n"));
  EXPECT_THAT(text, HasSubstr(R"(zeus_gpu_attributed_energy_joules_total{gpu="1",hostname="h1",uuid="GPU-1"} 100)"
                              "\n"));
  EXPECT_THAT(text, HasSubstr("zeus_exporter_process_series{hostname=\"h1\"} 2\n"));
}

TEST_F(ProcessCollectorTest, PartsAddUpToTheMeasuredEnergyAtEveryScrape) {
  Create();
  gpu_[0]->SetProcesses({{kSlurmPid, 30}, {kPodPid, 10}});
  gpu_[1]->SetProcesses({{kSlurmPid, 0}});
  collector_->Sample();
  const std::uint64_t start_mj[2] = {Unwrap(gpu_[0]->TotalEnergyMj()), Unwrap(gpu_[1]->TotalEnergyMj())};
  for (int i = 0; i < 20; ++i) {
    gpu_[i % 2]->fake().SetPowerW(60 + 17 * i % 90);
    if (i == 10) gpu_[0]->SetProcesses({{kPodPid, 50}});
    Tick(std::chrono::milliseconds(100 + 37 * i));
    const std::vector<Sample> samples = Parse(Text());
    ASSERT_EQ(PartsAndTotal(samples).size(), 2u);
    ExpectConservation(samples);
  }
  // The attributed energy is each GPU's counter since the first tick.
  const auto samples = Parse(Text());
  for (unsigned int i = 0; i < 2; ++i) {
    const std::uint64_t counted_mj = Unwrap(gpu_[i]->TotalEnergyMj()) - start_mj[i];
    EXPECT_NEAR(Value(samples, "zeus_gpu_attributed_energy_joules_total", "gpu=\"" + std::to_string(i) + "\""),
                static_cast<double>(counted_mj) / 1000.0, 1e-9);
  }
}

TEST_F(ProcessCollectorTest, AnEndedProcessSeriesIsDroppedAfterTheRetention) {
  options_.ledger.retention = std::chrono::seconds(30);
  Create();
  gpu_[0]->SetProcesses({{kSlurmPid, 50}});
  collector_->Sample();
  Tick();
  gpu_[0]->SetProcesses({});  // it exits: last seen at the tick above
  Tick(std::chrono::seconds(10));
  Tick(std::chrono::seconds(19));  // 29 s after it was last seen
  auto samples = Parse(Text());
  const double energy_j = Value(samples, "zeus_gpu_process_energy_joules_total", "pid=\"4242\"");
  EXPECT_EQ(energy_j, 60);  // the whole active 60 W x 1 s
  EXPECT_EQ(Value(samples, "zeus_gpu_unlisted_energy_joules_total", "gpu=\"0\",hostname=\"h1\",kind=\"ended\""), 0);
  clock_.Advance(std::chrono::seconds(1));  // 30 s: dropped at the next scrape, sampled or not
  samples = Parse(Text());
  EXPECT_EQ(Count(samples, "zeus_gpu_process_energy_joules_total"), 0);
  EXPECT_EQ(Value(samples, "zeus_exporter_process_series"), 0);
  EXPECT_EQ(Value(samples, "zeus_gpu_unlisted_energy_joules_total", "gpu=\"0\",hostname=\"h1\",kind=\"ended\""),
            energy_j);
  ExpectConservation(samples);
}

TEST_F(ProcessCollectorTest, SeriesCapHoldsUnderFiveThousandShortProcesses) {
  options_.ledger.max_entries = 1000;  // the CLI's default
  Create();
  collector_->Sample();
  std::uint32_t next_pid = 100000;  // no /proc entries: unidentified, labelled by PID only
  for (int batch = 0; batch < 100; ++batch) {
    std::vector<ScriptedProcess> processes;
    for (int p = 0; p < 50; ++p) processes.push_back({next_pid++, 10});
    gpu_[batch % 2]->SetProcesses(processes);
    gpu_[1 - batch % 2]->SetProcesses({});
    Tick();
    const auto samples = Parse(Text());
    ASSERT_LE(Count(samples, "zeus_gpu_process_energy_joules_total"), 1000) << "batch " << batch;
    ASSERT_LE(Value(samples, "zeus_exporter_process_series"), 1000);
    ExpectConservation(samples);
  }
  auto samples = Parse(Text());
  EXPECT_EQ(Count(samples, "zeus_gpu_process_energy_joules_total"), 1000);
  EXPECT_GT(Value(samples, "zeus_gpu_unlisted_energy_joules_total", "gpu=\"0\",hostname=\"h1\",kind=\"other\""), 0);
  // After the retention every short process's series is gone.
  gpu_[0]->SetProcesses({});
  gpu_[1]->SetProcesses({});
  Tick(std::chrono::minutes(5));
  samples = Parse(Text());
  EXPECT_EQ(Count(samples, "zeus_gpu_process_energy_joules_total"), 0);
  EXPECT_GT(Value(samples, "zeus_gpu_unlisted_energy_joules_total", "gpu=\"0\",hostname=\"h1\",kind=\"ended\""), 0);
  ExpectConservation(samples);
}

TEST_F(ProcessCollectorTest, CollectorSamplesOnItsOwnAndScrapesTheProcesses) {
  gpu_[0]->SetProcesses({{kSlurmPid, 40}});
  CollectorOptions options;
  options.hostname = "h1";
  options.sample_interval = std::chrono::milliseconds(5);
  options.per_process = true;
  options.process_energy = options_;
  auto collector = Unwrap(Collector::Create(gpus_.get(), nullptr, options));
  // The sampling thread takes a baseline, then sees the clock move.
  ASSERT_TRUE(testing::WaitUntil([&] {
    clock_.Advance(std::chrono::milliseconds(100));
    const auto samples = Parse(collector->Scrape());
    return Value(samples, "zeus_gpu_process_energy_joules_total", "slurm_job_id=\"123\"") > 0;
  }));
  const auto samples = Parse(collector->Scrape());
  ExpectConservation(samples);
  EXPECT_EQ(Value(samples, "zeus_exporter_process_series"), 1);

  CollectorOptions plain;
  plain.hostname = "h1";
  auto without = Unwrap(Collector::Create(gpus_.get(), nullptr, plain));
  EXPECT_THAT(without->Scrape(), Not(HasSubstr("zeus_gpu_process_energy_joules_total")));
}

TEST_F(ProcessCollectorTest, BadOptionsAreTheCollectorsError) {
  options_.ledger.retention = std::chrono::seconds(0);
  CollectorOptions options;
  options.per_process = true;
  options.process_energy = options_;
  auto collector = Collector::Create(gpus_.get(), nullptr, options);
  ASSERT_FALSE(collector.has_value());
  EXPECT_EQ(collector.error().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace zeus::exporter
