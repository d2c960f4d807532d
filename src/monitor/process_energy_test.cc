// Copyright 2026 The Zeus C++ Authors.
//
// ProcessEnergyTracker over FakeGpus on a FakeClock, with processes named by
// a fake /proc tree.

#include "zeus/monitor/process_energy.h"

#include <memory>
#include <numeric>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/fake_clock.h"
#include "testing/fake_gpu.h"
#include "testing/proc_tree.h"
#include "testing/result.h"
#include "testing/temp_dir.h"

namespace zeus::monitor {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using zeus::testing::FakeClock;
using zeus::testing::FakeGpu;
using zeus::testing::FakeGpuConfig;
using zeus::testing::FakeProcess;
using zeus::testing::ProcTree;
using zeus::testing::TempDir;
using zeus::testing::Unwrap;

constexpr std::uint32_t kIdleMw = 40'000;

class ProcessEnergyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::unique_ptr<device::Gpu>> gpus;
    FakeGpuConfig config;
    config.power_w = 100.0;
    gpu_ = new FakeGpu(config, clock_, 0);
    gpus.emplace_back(gpu_);
    FakeGpuConfig second = config;
    second.energy_counter = false;  // integrated power
    second.name = "Fake T4";
    second_ = new FakeGpu(second, clock_, 1);
    gpus.emplace_back(second_);
    set_ = std::make_unique<device::GpuSet>("fake", std::move(gpus));
    procs_.Add({.pid = 101, .comm = "train", .uid = 0, .start_time_ticks = 5000,
                .cgroup = zeus::testing::kSlurmJob4242Cgroup});
    procs_.Add({.pid = 102, .comm = "serve", .uid = 0, .start_time_ticks = 6000,
                .cgroup = zeus::testing::kK8sContainerdCgroup});
  }

  ProcessEnergyOptions Options() {
    ProcessEnergyOptions options;
    options.clock = &clock_;
    options.identity.proc_root = dir_.path();
    options.idle.idle_power_mw_by_model = {{"Fake V100", kIdleMw}, {"Fake T4", kIdleMw}};
    return options;
  }

  std::unique_ptr<ProcessEnergyTracker> Tracker(ProcessEnergyOptions options) {
    return Unwrap(ProcessEnergyTracker::Create(*set_, std::move(options)));
  }

  // The energy of `pid` on GPU `gpu` in the ledger (0 when absent).
  static std::int64_t EnergyOf(const AttributionSnapshot& snapshot, std::size_t gpu, std::uint32_t pid) {
    std::int64_t total = 0;
    for (const auto& entry : snapshot.processes) {
      if (entry.gpu_index == gpu && entry.process.pid == pid) total += entry.energy_mj;
    }
    return total;
  }

  static void ExpectConserved(const AttributionSnapshot& snapshot) {
    for (const GpuEnergyTotals& totals : snapshot.gpus) {
      std::int64_t parts = totals.idle_energy_mj + totals.unattributed_energy_mj + totals.other_energy_mj +
                           totals.ended_energy_mj;
      for (const auto& entry : snapshot.processes) {
        if (entry.gpu_index == totals.gpu_index) parts += entry.energy_mj;
      }
      EXPECT_EQ(parts, totals.measured_energy_mj) << "GPU " << totals.gpu_index;
    }
  }

  FakeClock clock_;
  TempDir dir_;
  ProcTree procs_{dir_.path()};
  FakeGpu* gpu_ = nullptr;
  FakeGpu* second_ = nullptr;
  std::unique_ptr<device::GpuSet> set_;
};

TEST_F(ProcessEnergyTest, ThreeToOneUtilizationGetsThreeToOneOfTheActiveEnergy) {
  gpu_->SetProcesses({{101, {}}, {102, {}}});
  auto tracker = Tracker(Options());
  tracker->Sample();  // baseline
  clock_.Advance(1s);
  gpu_->AddProcessSample(101, 75);
  gpu_->AddProcessSample(102, 25);
  tracker->Sample();
  const AttributionSnapshot snapshot = tracker->Snapshot();
  ASSERT_EQ(snapshot.gpus.size(), 2u);
  // 100 W for 1 s: 100 J, 40 J of it idle; 60 J active, split 3:1.
  EXPECT_EQ(snapshot.gpus[0].measured_energy_mj, 100'000);
  EXPECT_EQ(snapshot.gpus[0].idle_energy_mj, 40'000);
  EXPECT_EQ(EnergyOf(snapshot, 0, 101), 45'000);
  EXPECT_EQ(EnergyOf(snapshot, 0, 102), 15'000);
  ExpectConserved(snapshot);

  const auto views = tracker->LastIntervals();
  ASSERT_EQ(views.size(), 2u);
  EXPECT_EQ(views[0].duration, 1s);
  EXPECT_EQ(views[0].power_mw, 100'000u);
  EXPECT_EQ(views[0].idle_source, IdlePowerSource::kOperator);
  EXPECT_FALSE(views[0].error);
}

TEST_F(ProcessEnergyTest, LabelsComeFromTheProcessesCgroups) {
  gpu_->SetProcesses({{101, {}}, {102, {}}});
  auto tracker = Tracker(Options());
  tracker->Sample();
  const ProcessLabels slurm = tracker->Labels({101, 5000});
  EXPECT_EQ(slurm.comm, "train");
  EXPECT_EQ(slurm.slurm_job_id, "4242");
  EXPECT_EQ(slurm.slurm_step, "0");
  EXPECT_EQ(slurm.pod, "");
  const ProcessLabels pod = tracker->Labels({102, 6000});
  EXPECT_EQ(pod.comm, "serve");
  EXPECT_EQ(pod.pod, zeus::testing::kPodUid);
  EXPECT_EQ(pod.container, zeus::testing::kContainerId);
  EXPECT_EQ(pod.slurm_job_id, "");
  EXPECT_EQ(tracker->Labels({999, 0}).comm, "");
}

TEST_F(ProcessEnergyTest, AProcessAloneGetsAllTheActiveEnergy) {
  gpu_->SetProcesses({{101, {}}});
  auto tracker = Tracker(Options());
  tracker->Sample();
  clock_.Advance(2s);
  gpu_->AddProcessSample(101, 30);
  tracker->Sample();
  const auto snapshot = tracker->Snapshot();
  EXPECT_EQ(EnergyOf(snapshot, 0, 101), 200'000 - 80'000);
  EXPECT_EQ(snapshot.gpus[0].unattributed_energy_mj, 0);
  ExpectConserved(snapshot);
}

TEST_F(ProcessEnergyTest, SharesCarryForwardUntilTheSamplesAreTooOld) {
  gpu_->SetProcesses({{101, {}}, {102, {}}});
  ProcessEnergyOptions options = Options();
  options.max_sample_age = 1500ms;
  auto tracker = Tracker(options);
  tracker->Sample();
  clock_.Advance(1s);
  gpu_->AddProcessSample(101, 75);
  gpu_->AddProcessSample(102, 25);
  tracker->Sample();
  clock_.Advance(1s);  // no new sample; the last came 1 s ago
  tracker->Sample();
  auto snapshot = tracker->Snapshot();
  EXPECT_EQ(EnergyOf(snapshot, 0, 101), 90'000);
  EXPECT_EQ(EnergyOf(snapshot, 0, 102), 30'000);
  EXPECT_EQ(snapshot.gpus[0].unattributed_energy_mj, 0);
  clock_.Advance(1s);  // now 2 s old: too old
  tracker->Sample();
  snapshot = tracker->Snapshot();
  EXPECT_EQ(EnergyOf(snapshot, 0, 101), 90'000);
  EXPECT_EQ(snapshot.gpus[0].unattributed_energy_mj, 60'000);
  ExpectConserved(snapshot);
}

TEST_F(ProcessEnergyTest, ARunningProcessWithoutSamplesIsListedWithNothing) {
  gpu_->SetProcesses({{101, {}}, {102, {}}});
  auto tracker = Tracker(Options());
  tracker->Sample();
  clock_.Advance(1s);
  gpu_->AddProcessSample(101, 50);
  tracker->Sample();
  const auto views = tracker->LastIntervals();
  ASSERT_EQ(views[0].split.processes.size(), 2u);
  EXPECT_EQ(views[0].split.processes[1].process.pid, 102u);
  EXPECT_EQ(views[0].split.processes[1].energy_mj, 0);
  EXPECT_EQ(EnergyOf(tracker->Snapshot(), 0, 101), 60'000);
}

TEST_F(ProcessEnergyTest, AGpuWithoutPerProcessCallsKeepsItsTotal) {
  // gpu_ never had SetProcesses: its per-process calls answer kNotSupported.
  auto tracker = Tracker(Options());
  tracker->Sample();
  clock_.Advance(1s);
  tracker->Sample();
  const auto snapshot = tracker->Snapshot();
  EXPECT_EQ(snapshot.gpus[0].measured_energy_mj, 100'000);
  EXPECT_EQ(snapshot.gpus[0].unattributed_energy_mj, 60'000);
  EXPECT_TRUE(snapshot.processes.empty());
  const auto views = tracker->LastIntervals();
  ASSERT_TRUE(views[0].error);
  EXPECT_EQ(views[0].error->code(), ErrorCode::kNotSupported);
  ExpectConserved(snapshot);
}

TEST_F(ProcessEnergyTest, AFailedEnergyReadIsCountedInTheNextGoodInterval) {
  gpu_->SetProcesses({{101, {}}});
  auto tracker = Tracker(Options());
  tracker->Sample();
  clock_.Advance(1s);
  gpu_->FailWith("TotalEnergyMj", Error(ErrorCode::kIoError, "GPU is lost"));
  gpu_->AddProcessSample(101, 100);
  tracker->Sample();
  auto views = tracker->LastIntervals();
  ASSERT_TRUE(views[0].error);
  EXPECT_THAT(views[0].error->message(), HasSubstr("GPU is lost"));
  gpu_->ClearFailures();
  clock_.Advance(1s);
  tracker->Sample();
  const auto snapshot = tracker->Snapshot();
  EXPECT_EQ(snapshot.gpus[0].measured_energy_mj, 200'000);
  EXPECT_EQ(EnergyOf(snapshot, 0, 101), 120'000);
  views = tracker->LastIntervals();
  EXPECT_FALSE(views[0].error);
  EXPECT_EQ(views[0].duration, 2s);
  ExpectConserved(snapshot);
}

// A slow per-process call on one GPU delays the next GPU's counter read by
// a varying time. That GPU's interval ends at its own read, so an idle GPU
// still shows no activity.
TEST_F(ProcessEnergyTest, ASlowCallForAnotherGpuIsNotReadAsActivity) {
  FakeGpuConfig config;
  auto* busy = new FakeGpu(config, clock_, 0);
  config.power_w = kIdleMw / 1000.0;
  auto* idle = new FakeGpu(config, clock_, 1);
  std::vector<std::unique_ptr<device::Gpu>> gpus;
  gpus.emplace_back(busy);
  gpus.emplace_back(idle);
  device::GpuSet set("fake", std::move(gpus));
  busy->SetProcesses({{101, {}}});
  const std::vector<std::chrono::milliseconds> delays = {0ms, 7ms, 1ms, 9ms, 0ms, 3ms};
  std::size_t call = 0;
  busy->BeforeCall("RunningProcesses", [&] { clock_.Advance(delays[call++ % delays.size()]); });
  auto tracker = Unwrap(ProcessEnergyTracker::Create(set, Options()));
  for (int i = 0; i < 12; ++i) {
    tracker->Sample();
    clock_.Advance(1s);
  }
  const auto snapshot = tracker->Snapshot();
  EXPECT_GT(snapshot.gpus[1].measured_energy_mj, 0);
  EXPECT_EQ(snapshot.gpus[1].idle_energy_mj, snapshot.gpus[1].measured_energy_mj);
  EXPECT_EQ(snapshot.gpus[1].unattributed_energy_mj, 0);
  ExpectConserved(snapshot);
}

// A counter read off the interval's end (early, then late) on an idle GPU:
// the late read's excess repays the early read's shortfall.
TEST_F(ProcessEnergyTest, ACounterReadLateAfterEarlyIsStillIdle) {
  gpu_->SetPowerW(kIdleMw / 1000.0);
  const std::vector<std::chrono::milliseconds> delays = {5ms, 0ms, 4ms, 0ms, 5ms, 1ms};
  std::size_t call = 0;
  gpu_->BeforeCall("TotalEnergyMj", [&] { clock_.Advance(delays[call++ % delays.size()]); });
  auto tracker = Tracker(Options());
  for (int i = 0; i < 12; ++i) {
    tracker->Sample();
    clock_.Advance(1s);
  }
  const auto snapshot = tracker->Snapshot();
  EXPECT_EQ(snapshot.gpus[0].unattributed_energy_mj, 0);
  EXPECT_EQ(snapshot.gpus[0].idle_energy_mj, snapshot.gpus[0].measured_energy_mj);
  ExpectConserved(snapshot);
}

// Power below the operator's idle figure owes idle energy, but at most one
// second of idle power is carried into the activity that follows.
TEST_F(ProcessEnergyTest, TheIdleCarryIsBoundedToOneSecondOfIdlePower) {
  gpu_->SetProcesses({{101, {}}});
  gpu_->SetPowerW(30.0);  // 10 W under the 40 W idle figure, for 10 s
  auto tracker = Tracker(Options());
  tracker->Sample();
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(1s);
    tracker->Sample();
  }
  gpu_->SetPowerW(100.0);
  clock_.Advance(1s);
  gpu_->AddProcessSample(101, 100);
  tracker->Sample();
  const auto snapshot = tracker->Snapshot();
  // 100 J measured; 40 J idle plus the 40 J carried; the process gets 20 J.
  EXPECT_EQ(EnergyOf(snapshot, 0, 101), 20'000);
  EXPECT_EQ(snapshot.gpus[0].idle_energy_mj, 10 * 30'000 + 80'000);
  ExpectConserved(snapshot);
}

TEST_F(ProcessEnergyTest, WithoutACounterPowerIsIntegrated) {
  second_->SetProcesses({{101, {}}});
  auto tracker = Tracker(Options());
  tracker->Sample();
  clock_.Advance(500ms);
  second_->AddProcessSample(101, 10);
  tracker->Sample();
  second_->SetPowerW(40.0);  // idle from now on: nothing active
  clock_.Advance(500ms);
  tracker->Sample();  // hold-last-value: the 100 W read at the start holds over this interval
  clock_.Advance(500ms);
  tracker->Sample();  // the 40 W read at the start of this one: all idle
  const auto snapshot = tracker->Snapshot();
  EXPECT_EQ(snapshot.gpus[1].measured_energy_mj, 50'000 + 50'000 + 20'000);
  EXPECT_EQ(snapshot.gpus[1].idle_energy_mj, 20'000 + 20'000 + 20'000);
  EXPECT_EQ(EnergyOf(snapshot, 1, 101), 30'000 + 30'000);
  ExpectConserved(snapshot);
}

TEST_F(ProcessEnergyTest, AReusedPidIsANewProcess) {
  gpu_->SetProcesses({{101, {}}});
  std::vector<ProcessKey> new_keys;
  ProcessEnergyOptions options = Options();
  options.identity_refresh = 1s;
  options.on_new_process = [&](const ProcessKey& key, const device::ProcessIdentity& identity) {
    new_keys.push_back(key);
    EXPECT_EQ(identity.pid, key.pid);
  };
  auto tracker = Tracker(options);
  tracker->Sample();
  clock_.Advance(1s);
  gpu_->AddProcessSample(101, 100);
  tracker->Sample();
  // PID 101 exits and the kernel gives its number to a new process.
  procs_.Add({.pid = 101, .comm = "other", .start_time_ticks = 9000, .cgroup = zeus::testing::kSlurmJob77Cgroup});
  clock_.Advance(1s);
  gpu_->AddProcessSample(101, 100);
  tracker->Sample();
  ASSERT_EQ(new_keys.size(), 2u);
  EXPECT_EQ(new_keys[0], (ProcessKey{101, 5000}));
  EXPECT_EQ(new_keys[1], (ProcessKey{101, 9000}));
  const auto snapshot = tracker->Snapshot();
  ASSERT_EQ(snapshot.processes.size(), 2u);
  EXPECT_EQ(snapshot.processes[0].energy_mj, 60'000);
  EXPECT_EQ(snapshot.processes[1].energy_mj, 60'000);
  EXPECT_EQ(tracker->Labels({101, 9000}).slurm_job_id, "77");
  EXPECT_EQ(tracker->Labels({101, 5000}).slurm_job_id, "4242");
}

TEST_F(ProcessEnergyTest, AProcessThatCannotBeSeenKeepsItsEnergyUnderItsPid) {
  gpu_->SetProcesses({{555, {}}});  // no /proc entry: another namespace, or gone
  auto tracker = Tracker(Options());
  tracker->Sample();
  clock_.Advance(1s);
  gpu_->AddProcessSample(555, 100);
  tracker->Sample();
  const auto snapshot = tracker->Snapshot();
  ASSERT_EQ(snapshot.processes.size(), 1u);
  EXPECT_EQ(snapshot.processes[0].process, (ProcessKey{555, 0}));
  EXPECT_EQ(snapshot.processes[0].energy_mj, 60'000);
  EXPECT_EQ(tracker->Labels({555, 0}).comm, "");
}

TEST_F(ProcessEnergyTest, EndedProcessesAreForgottenAfterTheRetention) {
  gpu_->SetProcesses({{101, {}}});
  ProcessEnergyOptions options = Options();
  options.ledger.retention = 10s;
  auto tracker = Tracker(options);
  tracker->Sample();
  clock_.Advance(1s);
  gpu_->AddProcessSample(101, 100);
  tracker->Sample();
  gpu_->SetProcesses({});
  procs_.Remove(101);
  clock_.Advance(10s);
  tracker->Sample();
  const auto snapshot = tracker->Snapshot();
  EXPECT_TRUE(snapshot.processes.empty());
  EXPECT_EQ(snapshot.gpus[0].ended_energy_mj, 60'000);
  EXPECT_EQ(tracker->Labels({101, 5000}).comm, "");
  ExpectConserved(snapshot);
}

TEST_F(ProcessEnergyTest, APeriodicSamplerTakesALastSampleWhenStopped) {
  gpu_->SetProcesses({{101, {}}});
  auto tracker = Tracker(Options());
  monitor::PeriodicProcessSampler sampler(*tracker, std::chrono::hours(1));
  // The first sample (the baseline) is taken by the constructor.
  ASSERT_TRUE(tracker->LastIntervals()[0].power_mw.has_value());
  clock_.Advance(1s);
  gpu_->AddProcessSample(101, 100);
  sampler.Stop();  // long before the hour: the last sample covers the second
  EXPECT_EQ(EnergyOf(tracker->Snapshot(), 0, 101), 60'000);
  sampler.Stop();  // a second Stop() changes nothing
  EXPECT_EQ(EnergyOf(tracker->Snapshot(), 0, 101), 60'000);
}

TEST_F(ProcessEnergyTest, BadOptionsAreRejected) {
  ProcessEnergyOptions options = Options();
  options.max_sample_age = 0s;
  auto bad = ProcessEnergyTracker::Create(*set_, options);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(bad.error().message(), HasSubstr("max_sample_age"));
}

}  // namespace
}  // namespace zeus::monitor
