// Copyright 2026 The Zeus C++ Authors.

#include "zeus/monitor/power_monitor.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "monitor/ring_buffer.h"
#include "testing/fake_gpu.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "testing/result.h"

namespace zeus::monitor {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using zeus::testing::FakeClock;
using zeus::testing::FakeGpu;
using zeus::testing::FakeGpuConfig;

TEST(RingBufferTest, DropsOldestWhenFull) {
  RingBuffer<int> ring(3);
  for (int i = 1; i <= 5; ++i) ring.Push(i);
  ASSERT_EQ(ring.size(), 3u);
  EXPECT_EQ(ring[0], 3);
  EXPECT_EQ(ring[2], 5);
  EXPECT_EQ(ring.back(), 5);
}

class PowerMonitorTest : public ::testing::Test {
 protected:
  PowerMonitorTest() {
    std::vector<std::unique_ptr<device::Gpu>> gpus;
    FakeGpuConfig a;
    a.power_w = 150.0;
    FakeGpuConfig b;
    b.power_w = 90.0;
    b.energy_counter = false;
    fakes_.push_back(new FakeGpu(a, clock_, 0));
    fakes_.push_back(new FakeGpu(b, clock_, 1));
    for (FakeGpu* f : fakes_) gpus.emplace_back(f);
    set_ = std::make_unique<device::GpuSet>("fake", std::move(gpus));
  }

  std::unique_ptr<PowerMonitor> Make(PowerMonitorOptions options = {}) {
    options.clock = &clock_;
    options.start_thread = false;
    return zeus::testing::Unwrap(PowerMonitor::Create(*set_, {}, options));
  }

  // Advances time in steps, sampling after each.
  void Run(PowerMonitor& pm, milliseconds total, milliseconds step) {
    for (milliseconds t(0); t < total; t += step) {
      clock_.Advance(step);
      pm.SampleOnce();
    }
  }

  FakeClock clock_;
  std::vector<FakeGpu*> fakes_;
  std::unique_ptr<device::GpuSet> set_;
};

TEST_F(PowerMonitorTest, ConstantPowerGivesPowerTimesDuration) {
  auto pm = Make();
  const auto t0 = clock_.Now();
  Run(*pm, milliseconds(2000), milliseconds(100));
  auto e = pm->Energy(1, t0, clock_.Now());
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->energy_j, 180.0);
  EXPECT_FALSE(e->extrapolated);
  // A window strictly between samples is clipped at both edges, not zero.
  auto inner = pm->Energy(1, t0 + milliseconds(130), t0 + milliseconds(170));
  ASSERT_TRUE(inner);
  EXPECT_NEAR(inner->energy_j, 90.0 * 0.04, 1e-9);
}

TEST_F(PowerMonitorTest, StepChangeIsIntegratedExactlyAtSampleTimes) {
  auto pm = Make();
  const auto t0 = clock_.Now();
  Run(*pm, milliseconds(1000), milliseconds(100));
  fakes_[1]->SetPowerW(200.0);  // but the limit is 250: draws 200
  pm->SampleOnce();
  Run(*pm, milliseconds(1000), milliseconds(100));
  auto e = pm->Energy(1, t0, clock_.Now());
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->energy_j, 90.0 + 200.0);
  auto cumulative = pm->CumulativeEnergyJ(1, clock_.Now());
  ASSERT_TRUE(cumulative);
  EXPECT_DOUBLE_EQ(*cumulative, 290.0);
  auto stats = pm->Stats(1, t0, clock_.Now());
  ASSERT_TRUE(stats);
  EXPECT_DOUBLE_EQ(stats->peak_power_w, 200.0);
  EXPECT_DOUBLE_EQ(stats->average_power_w, 145.0);
}

// GPU 1's average power is read every 500 ms (at 0, 0.5, 1.0, 1.5, 2.0 s):
// 90 W, then 200 W from the read at 1.5 s, though the draw changed at 1.0 s.
TEST_F(PowerMonitorTest, SlowDomainsIntegrateTheirOwnReadings) {
  auto pm = Make({.slow_interval = milliseconds(500)});
  const auto t0 = clock_.Now();
  Run(*pm, milliseconds(1000), milliseconds(100));
  fakes_[1]->SetPowerW(200.0);
  Run(*pm, milliseconds(1000), milliseconds(100));
  auto whole = pm->Energy(1, t0, t0 + seconds(2), PowerDomain::kAverage);
  ASSERT_TRUE(whole);
  EXPECT_NEAR(whole->energy_j, 90.0 * 1.5 + 200.0 * 0.5, 1e-9);
  EXPECT_FALSE(whole->extrapolated);
  // The instant reading changed at the tick after 1.0 s.
  EXPECT_NEAR(pm->Energy(1, t0, t0 + seconds(2), PowerDomain::kInstant)->energy_j, 90.0 * 1.1 + 200.0 * 0.9, 1e-9);
  // Clipped at both edges, between readings.
  EXPECT_NEAR(pm->Energy(1, t0 + milliseconds(1200), t0 + milliseconds(1700), PowerDomain::kAverage)->energy_j,
              90.0 * 0.3 + 200.0 * 0.2, 1e-9);
  // The first reading held backwards, the last forwards.
  auto before = pm->Energy(1, t0 - seconds(1), t0 + milliseconds(250), PowerDomain::kAverage);
  ASSERT_TRUE(before);
  EXPECT_NEAR(before->energy_j, 90.0 * 1.25, 1e-9);
  EXPECT_TRUE(before->extrapolated);
  EXPECT_NEAR(pm->Energy(1, t0 + seconds(2), t0 + seconds(3), PowerDomain::kAverage)->energy_j, 200.0, 1e-9);
  EXPECT_EQ(pm->Energy(1, t0, t0, PowerDomain::kAverage)->energy_j, 0.0);
  // The fake GPU has no memory power: nothing read, nothing integrated.
  auto memory = pm->Energy(1, t0, t0 + seconds(2), PowerDomain::kMemory);
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->energy_j, 0.0);
  EXPECT_TRUE(memory->extrapolated);
  EXPECT_EQ(pm->Energy(1, t0 + seconds(1), t0, PowerDomain::kAverage).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(pm->Energy(7, t0, t0, PowerDomain::kAverage).error().code(), ErrorCode::kNotFound);
}

TEST_F(PowerMonitorTest, CumulativeHoldsLastValueBeyondTheLastSample) {
  auto pm = Make();
  const auto t0 = clock_.Now();
  EXPECT_DOUBLE_EQ(*pm->CumulativeEnergyJ(0, t0 + seconds(3)), 450.0);
}

TEST_F(PowerMonitorTest, MemoryIsBoundedByCapacity) {
  PowerMonitorOptions options;
  options.capacity = 1000;
  options.interval = milliseconds(1);
  auto pm = Make(options);
  const std::size_t bytes = pm->buffer_bytes();
  // Ten simulated minutes at 1 kHz (bench/ runs the full hour).
  const auto t0 = clock_.Now();
  for (int i = 0; i < 600'000; ++i) {
    clock_.Advance(milliseconds(1));
    pm->SampleOnce();
  }
  EXPECT_EQ(pm->buffer_bytes(), bytes);
  EXPECT_EQ(pm->Timeline(0).size(), 1000u);
  // The running integral does not depend on the buffer.
  EXPECT_NEAR(*pm->CumulativeEnergyJ(0, clock_.Now()), 150.0 * 600.0, 150.0 * 600.0 * 1e-9);
  // A window older than the buffer is extrapolated, and says so.
  auto old = pm->Energy(0, t0, t0 + seconds(1));
  ASSERT_TRUE(old);
  EXPECT_TRUE(old->extrapolated);
}

TEST_F(PowerMonitorTest, FailedReadsAreCountedAndReported) {
  auto pm = Make();
  fakes_[1]->FailWith("InstantPowerMw", Error(ErrorCode::kDeviceLost, "GPU 1 lost"));
  fakes_[1]->FailWith("PowerUsageMw", Error(ErrorCode::kDeviceLost, "GPU 1 lost"));
  clock_.Advance(milliseconds(100));
  pm->SampleOnce();
  EXPECT_EQ(pm->ReadFailures(1), 1u);
  EXPECT_EQ(pm->ReadFailures(0), 0u);
  auto e = pm->CumulativeEnergyJ(1, clock_.Now());
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code(), ErrorCode::kDeviceLost);
  EXPECT_TRUE(pm->CumulativeEnergyJ(0, clock_.Now()));
}

TEST_F(PowerMonitorTest, InfersTheUpdatePeriod) {
  auto pm = Make(PowerMonitorOptions{.interval = milliseconds(10)});
  EXPECT_FALSE(pm->UpdatePeriod(0).has_value());
  // The "driver" changes its reading every 50 ms; we sample every 10 ms.
  for (int tick = 1; tick <= 100; ++tick) {
    clock_.Advance(milliseconds(10));
    if (tick % 5 == 0) fakes_[0]->SetPowerW(tick % 10 == 0 ? 150.0 : 140.0);
    pm->SampleOnce();
  }
  auto period = pm->UpdatePeriod(0);
  ASSERT_TRUE(period);
  EXPECT_EQ(*period, milliseconds(50));
}

TEST_F(PowerMonitorTest, SlowDomainsAreReadAtTheSlowInterval) {
  PowerMonitorOptions options;
  options.interval = milliseconds(10);
  options.slow_interval = milliseconds(100);
  auto pm = Make(options);
  Run(*pm, milliseconds(1000), milliseconds(10));
  int with_temperature = 0;
  for (const PowerSample& s : pm->Timeline(0)) with_temperature += s.temperature_c.has_value();
  EXPECT_EQ(pm->Timeline(0).size(), 101u);
  EXPECT_EQ(with_temperature, 11);
}

TEST_F(PowerMonitorTest, TimelineExports) {
  auto pm = Make();
  Run(*pm, milliseconds(300), milliseconds(100));
  zeus::testing::TempDir tmp;
  ASSERT_TRUE(pm->WriteTimelineCsv(tmp.File("t.csv")));
  std::ifstream csv(tmp.File("t.csv"));
  std::stringstream text;
  text << csv.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("gpu,time_s,instant_power_w,average_power_w,memory_power_w,temperature_c\n"));
  EXPECT_THAT(text.str(), HasSubstr("1,0.300000,90.000,"));
  ASSERT_TRUE(pm->WriteTimelineJson(tmp.File("t.json")));
  std::ifstream js(tmp.File("t.json"));
  auto doc = nlohmann::json::parse(js);
  ASSERT_EQ(doc["gpus"].size(), 2u);
  EXPECT_EQ(doc["gpus"][0]["samples"].size(), 4u);
  EXPECT_DOUBLE_EQ(doc["gpus"][0]["samples"][3]["instant_power_w"].get<double>(), 150.0);
  EXPECT_FALSE(pm->WriteTimelineCsv(tmp.File("no/such/dir/t.csv")));
}

TEST_F(PowerMonitorTest, BadOptionsAreRejected) {
  EXPECT_FALSE(PowerMonitor::Create(*set_, {5}, {}));
  EXPECT_FALSE(PowerMonitor::Create(*set_, {0, 0}, {}));
  EXPECT_FALSE(PowerMonitor::Create(*set_, {}, PowerMonitorOptions{.interval = milliseconds(0)}));
  EXPECT_FALSE(PowerMonitor::Create(*set_, {}, PowerMonitorOptions{.late_read_after = milliseconds(-1)}));
}

// The late-read threshold: 4 intervals, at least 100 ms, unless given.
TEST_F(PowerMonitorTest, LateReadThresholdDefaults) {
  auto threshold = [&](PowerMonitorOptions options) {
    options.start_thread = false;
    auto pm = PowerMonitor::Create(*set_, {0}, options);
    return pm ? (*pm)->late_read_after() : milliseconds(-1);
  };
  EXPECT_EQ(threshold({.interval = milliseconds(100)}), milliseconds(400));
  EXPECT_EQ(threshold({.interval = milliseconds(10)}), milliseconds(100));
  EXPECT_EQ(threshold({.interval = milliseconds(1)}), milliseconds(100));
  EXPECT_EQ(threshold({.interval = milliseconds(10), .late_read_after = milliseconds(30)}), milliseconds(30));
}

TEST_F(PowerMonitorTest, ThreadSamplesOnItsOwn) {
  PowerMonitorOptions options;
  options.interval = milliseconds(1);
  auto pm = PowerMonitor::Create(*set_, {0}, options);  // real clock, real thread
  ASSERT_TRUE(pm);
  // Readiness, not a time budget: wait (up to a generous deadline) for the
  // thread's samples, however slowly a loaded machine schedules it.
  EXPECT_TRUE(zeus::testing::WaitUntil([&] { return (*pm)->Timeline(0).size() >= 20; }, seconds(60)))
      << "the sampling thread took no samples";
}

}  // namespace
}  // namespace zeus::monitor
