// Copyright 2026 The Zeus C++ Authors.

#include "zeus/monitor/monitor.h"

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/fake_gpu.h"
#include "testing/rapl_tree.h"
#include "testing/temp_dir.h"
#include "testing/result.h"
#include "zeus/device/discovery.h"

namespace zeus::monitor {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using zeus::testing::FakeClock;
using zeus::testing::FakeGpu;
using zeus::testing::FakeGpuConfig;

class MonitorTest : public ::testing::Test {
 protected:
  MonitorTest() {
    FakeGpuConfig with_counter;
    with_counter.power_w = 150.0;
    FakeGpuConfig without_counter;
    without_counter.power_w = 90.0;
    without_counter.energy_counter = false;
    without_counter.architecture = device::GpuArchitecture::kPascal;
    std::vector<std::unique_ptr<device::Gpu>> gpus;
    fakes_.push_back(new FakeGpu(with_counter, clock_, 0));
    fakes_.push_back(new FakeGpu(without_counter, clock_, 1));
    for (FakeGpu* f : fakes_) gpus.emplace_back(f);
    gpus_ = std::make_unique<device::GpuSet>("fake", std::move(gpus));
  }

  MonitorOptions Options() {
    MonitorOptions options;
    options.clock = &clock_;
    options.power_monitor.start_thread = false;
    return options;
  }

  std::unique_ptr<Monitor> Make(MonitorOptions options, const device::CpuSet* cpus = nullptr) {
    auto m = Monitor::Create(gpus_.get(), cpus, std::move(options));
    return zeus::testing::Unwrap(std::move(m));
  }

  // Moves time forward, letting the power monitor sample every 100 ms.
  void Advance(Monitor& monitor, milliseconds total) {
    for (milliseconds t(0); t < total; t += milliseconds(100)) {
      clock_.Advance(std::min(milliseconds(100), total - t));
      monitor.power_monitor()->SampleOnce();
    }
  }

  FakeClock clock_;
  std::vector<FakeGpu*> fakes_;
  std::unique_ptr<device::GpuSet> gpus_;
};

TEST_F(MonitorTest, MeasuresTimeAndEnergyPerGpu) {
  auto monitor = Make(Options());
  ASSERT_TRUE(monitor);
  ASSERT_TRUE(monitor->BeginWindow("train"));
  Advance(*monitor, milliseconds(2000));
  auto m = monitor->EndWindow("train");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->name, "train");
  EXPECT_DOUBLE_EQ(m->time_s, 2.0);
  ASSERT_EQ(m->gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(m->gpus[0].energy_j, 300.0);
  EXPECT_EQ(m->gpus[0].source, EnergySource::kCounter);
  EXPECT_DOUBLE_EQ(m->gpus[1].energy_j, 180.0);
  EXPECT_EQ(m->gpus[1].source, EnergySource::kIntegratedPower);
  EXPECT_FALSE(m->gpus[0].uncertain);
  EXPECT_FALSE(m->gpus[1].uncertain);
  EXPECT_DOUBLE_EQ(m->total_energy_j, 480.0);
}

TEST_F(MonitorTest, WindowsOverlapAndNest) {
  auto monitor = Make(Options());
  ASSERT_TRUE(monitor->BeginWindow("outer"));
  Advance(*monitor, milliseconds(1000));
  ASSERT_TRUE(monitor->BeginWindow("inner"));
  Advance(*monitor, milliseconds(500));
  ASSERT_TRUE(monitor->BeginWindow("overlap"));
  EXPECT_THAT(monitor->OpenWindows(), ElementsAre("inner", "outer", "overlap"));
  auto inner = monitor->EndWindow("inner");
  Advance(*monitor, milliseconds(500));
  auto outer = monitor->EndWindow("outer");
  auto overlap = monitor->EndWindow("overlap");
  ASSERT_TRUE(inner && outer && overlap);
  EXPECT_DOUBLE_EQ(inner->time_s, 0.5);
  EXPECT_DOUBLE_EQ(outer->time_s, 2.0);
  EXPECT_DOUBLE_EQ(overlap->time_s, 0.5);
  EXPECT_DOUBLE_EQ(outer->gpus[0].energy_j, 300.0);
  EXPECT_DOUBLE_EQ(inner->gpus[1].energy_j, 45.0);
}

TEST_F(MonitorTest, DuplicateBeginAndUnknownEndAreErrors) {
  auto monitor = Make(Options());
  ASSERT_TRUE(monitor->BeginWindow("a"));
  Status again = monitor->BeginWindow("a");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_THAT(again.error().message(), HasSubstr("\"a\" is already open"));
  auto unknown = monitor->EndWindow("b");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kNotFound);
  ASSERT_TRUE(monitor->EndWindow("a"));
  EXPECT_FALSE(monitor->EndWindow("a"));  // ended already
}

// GPU 0 draws 150 W (300 J in 2 s, above): a restarted window measures from
// the restart, 1 s x 150 W, not from the first begin.
TEST_F(MonitorTest, RestartReplacesAnOpenWindow) {
  auto monitor = Make(Options());
  ASSERT_TRUE(monitor->BeginWindow("a", /*restart=*/true));  // not open yet: a plain begin
  Advance(*monitor, milliseconds(1000));
  ASSERT_TRUE(monitor->BeginWindow("a", /*restart=*/true));
  EXPECT_THAT(monitor->OpenWindows(), ElementsAre("a"));
  Advance(*monitor, milliseconds(1000));
  auto m = monitor->EndWindow("a");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_DOUBLE_EQ(m->time_s, 1.0);
  EXPECT_DOUBLE_EQ(m->gpus[0].energy_j, 150.0);
}

// Restarts of one name from many threads at once never fail (a restart that
// ended and began again in two steps could find the window reopened by
// another thread in between).
TEST_F(MonitorTest, ConcurrentRestartsOfOneNameNeverFail) {
  auto monitor = Make(Options());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        if (!monitor->BeginWindow("shared", /*restart=*/true)) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_THAT(monitor->OpenWindows(), ElementsAre("shared"));
}

TEST_F(MonitorTest, CancelledWindowIsZeroAndNotLogged) {
  zeus::testing::TempDir tmp;
  MonitorOptions options = Options();
  options.log_csv_path = tmp.File("windows.csv");
  auto monitor = Make(options);
  ASSERT_TRUE(monitor->BeginWindow("dropped"));
  Advance(*monitor, milliseconds(300));
  auto m = monitor->EndWindow("dropped", /*cancel=*/true);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->cancelled);
  EXPECT_EQ(m->total_energy_j, 0.0);
  std::ifstream in(tmp.File("windows.csv"));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "window,time_s,gpu0_energy_j,gpu1_energy_j,total_energy_j\n");
}

TEST_F(MonitorTest, CsvLogEscapesNames) {
  zeus::testing::TempDir tmp;
  MonitorOptions options = Options();
  options.log_csv_path = tmp.File("windows.csv");
  auto monitor = Make(options);
  const std::string name = "epoch 1, \"warm\"";
  ASSERT_TRUE(monitor->BeginWindow(name));
  Advance(*monitor, milliseconds(1000));
  ASSERT_TRUE(monitor->EndWindow(name));
  std::ifstream in(tmp.File("windows.csv"));
  std::string header;
  std::string row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_EQ(row, "\"epoch 1, \"\"warm\"\"\",1.000000,150.000000,90.000000,240.000000");
  EXPECT_EQ(CsvEscape("plain"), "plain");
  EXPECT_EQ(CsvEscape("line\nbreak"), "\"line\nbreak\"");
}

TEST_F(MonitorTest, ShortWindowIsMarkedUncertainNeverSilentZero) {
  auto monitor = Make(Options());
  // Simulate a counter that has not ticked: with the fake counter exact, a
  // 0 ms window has zero delta.
  ASSERT_TRUE(monitor->BeginWindow("tiny"));
  clock_.Advance(milliseconds(5));
  auto m = monitor->EndWindow("tiny");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->gpus[0].uncertain);
  EXPECT_NEAR(m->gpus[0].energy_j, 150.0 * 0.005, 1e-3);
  EXPECT_TRUE(m->gpus[1].uncertain);
  EXPECT_NEAR(m->gpus[1].energy_j, 90.0 * 0.005, 1e-9);
  ASSERT_TRUE(monitor->BeginWindow("zero"));
  auto zero = monitor->EndWindow("zero");
  ASSERT_TRUE(zero);
  EXPECT_TRUE(zero->gpus[0].uncertain);
}

TEST_F(MonitorTest, CounterResetIsAnErrorForThatGpuOnly) {
  auto monitor = Make(Options());
  Advance(*monitor, milliseconds(5000));  // the counter is well above zero
  ASSERT_TRUE(monitor->BeginWindow("w"));
  Advance(*monitor, milliseconds(1000));
  fakes_[0]->ResetEnergyCounter();
  Advance(*monitor, milliseconds(100));
  auto m = monitor->EndWindow("w");
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->gpus[0].error.has_value());
  EXPECT_THAT(m->gpus[0].error->message(), HasSubstr("went backwards"));
  EXPECT_THAT(m->gpus[0].error->message(), HasSubstr("window \"w\""));
  EXPECT_FALSE(m->gpus[1].error.has_value());
  EXPECT_DOUBLE_EQ(m->gpus[1].energy_j, 99.0);
  EXPECT_DOUBLE_EQ(m->total_energy_j, 99.0);
}

TEST_F(MonitorTest, LostGpuMidWindowKeepsTheOthers) {
  auto monitor = Make(Options());
  ASSERT_TRUE(monitor->BeginWindow("w"));
  Advance(*monitor, milliseconds(500));
  fakes_[1]->FailWith("InstantPowerMw", Error(ErrorCode::kDeviceLost, "GPU 1 has fallen off the bus"));
  fakes_[1]->FailWith("PowerUsageMw", Error(ErrorCode::kDeviceLost, "GPU 1 has fallen off the bus"));
  Advance(*monitor, milliseconds(200));
  fakes_[1]->ClearFailures();
  Advance(*monitor, milliseconds(300));
  auto m = monitor->EndWindow("w");
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->gpus[0].error.has_value());
  EXPECT_DOUBLE_EQ(m->gpus[0].energy_j, 150.0);
  ASSERT_TRUE(m->gpus[1].error.has_value());
  EXPECT_EQ(m->gpus[1].error->code(), ErrorCode::kDeviceLost);

  fakes_[0]->FailWith("TotalEnergyMj", Error(ErrorCode::kDeviceLost, "GPU 0 has fallen off the bus"));
  ASSERT_TRUE(monitor->BeginWindow("w2"));
  auto m2 = monitor->EndWindow("w2");
  ASSERT_TRUE(m2);
  EXPECT_THAT(m2->gpus[0].error->message(), HasSubstr("fallen off the bus"));
}

TEST_F(MonitorTest, SyncHookRunsAtBeginAndEnd) {
  int syncs = 0;
  MonitorOptions options = Options();
  options.sync = [&] { ++syncs; };
  auto monitor = Make(options);
  ASSERT_TRUE(monitor->BeginWindow("a"));
  ASSERT_TRUE(monitor->EndWindow("a"));
  EXPECT_EQ(syncs, 2);
}

TEST_F(MonitorTest, ChosenDevicesOnly) {
  MonitorOptions options = Options();
  options.gpu_indices = std::vector<std::size_t>{1};
  auto monitor = Make(options);
  EXPECT_THAT(monitor->gpu_indices(), ElementsAre(1));
  ASSERT_TRUE(monitor->BeginWindow("a"));
  Advance(*monitor, milliseconds(1000));
  auto m = monitor->EndWindow("a");
  ASSERT_EQ(m->gpus.size(), 1u);
  EXPECT_EQ(m->gpus[0].index, 1u);
  MonitorOptions bad = Options();
  bad.gpu_indices = std::vector<std::size_t>{4};
  auto error = Monitor::Create(gpus_.get(), nullptr, bad);
  ASSERT_FALSE(error);
  EXPECT_THAT(error.error().message(), HasSubstr("GPU 4 does not exist"));
}

TEST_F(MonitorTest, CpuAndDramEnergy) {
  zeus::testing::TempDir tmp;
  zeus::testing::RaplTree tree(tmp.path());
  tree.AddPackage(0, true, 1'000'000'000);
  tree.AddPackage(1, false, 1'000'000'000);
  device::CpuOptions cpu_options;
  cpu_options.powercap_root = tmp.path();
  cpu_options.wrap_guard = false;
  cpu_options.clock = &clock_;
  auto cpus = device::OpenCpus(cpu_options);
  ASSERT_TRUE(cpus);
  MonitorOptions options = Options();
  options.gpu_indices = std::vector<std::size_t>{};
  auto monitor = Make(options, cpus->get());
  ASSERT_TRUE(monitor->BeginWindow("cpu"));
  tree.SetEnergy(0, false, 5'000'000);
  tree.SetEnergy(0, true, 1'000'000);
  tree.SetEnergy(1, false, 2'500'000);
  auto m = monitor->EndWindow("cpu");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->cpus.size(), 2u);
  EXPECT_DOUBLE_EQ(m->cpus[0].package_energy_j, 5.0);
  EXPECT_DOUBLE_EQ(*m->cpus[0].dram_energy_j, 1.0);
  EXPECT_DOUBLE_EQ(m->cpus[1].package_energy_j, 2.5);
  EXPECT_FALSE(m->cpus[1].dram_energy_j.has_value());
  EXPECT_DOUBLE_EQ(m->total_energy_j, 8.5);
}

// A late read of a RAPL counter (here the begin of window "c") may hide a
// missed wrap: every window that spans it is uncertain, not only the first
// to end. Counter resets likewise fail every window that spans them.
TEST_F(MonitorTest, EveryWindowSpanningALateCpuReadOrAResetIsFlagged) {
  zeus::testing::TempDir tmp;
  zeus::testing::RaplTree tree(tmp.path());
  tree.AddPackage(0, false, 1'000'000'000);  // 1 kJ at the assumed 1000 W: safe interval 1 s
  device::CpuOptions cpu_options;
  cpu_options.powercap_root = tmp.path();
  cpu_options.wrap_guard = false;
  cpu_options.clock = &clock_;
  auto cpus = device::OpenCpus(cpu_options);
  ASSERT_TRUE(cpus);
  MonitorOptions options = Options();
  options.gpu_indices = std::vector<std::size_t>{};
  auto monitor = Make(options, cpus->get());

  ASSERT_TRUE(monitor->BeginWindow("a"));
  ASSERT_TRUE(monitor->BeginWindow("b"));
  clock_.Advance(seconds(2));
  ASSERT_TRUE(monitor->BeginWindow("c"));  // 2 s after the previous read: late
  auto a = monitor->EndWindow("a");
  auto b = monitor->EndWindow("b");
  auto c = monitor->EndWindow("c");
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE(a->cpus[0].uncertain);
  EXPECT_TRUE(b->cpus[0].uncertain);
  EXPECT_FALSE(c->cpus[0].uncertain);

  // 100 J -> 1 µJ in 100 ms as a wrap would be 900 J in 110 ms (the update
  // slack included), more than 1000 W allows: a reset.
  tree.SetEnergy(0, false, 100'000'000);
  clock_.Advance(seconds(1));
  ASSERT_TRUE(monitor->BeginWindow("d"));
  clock_.Advance(milliseconds(100));
  tree.SetEnergy(0, false, 1);
  ASSERT_TRUE(monitor->BeginWindow("e"));  // this read finds the reset
  tree.SetEnergy(0, false, 2'000'001);
  clock_.Advance(milliseconds(100));
  auto d = monitor->EndWindow("d");
  auto e = monitor->EndWindow("e");
  ASSERT_TRUE(d && e);
  ASSERT_TRUE(d->cpus[0].error.has_value()) << "read as " << d->cpus[0].package_energy_j << " J";
  EXPECT_THAT(d->cpus[0].error->message(), HasSubstr("reset"));
  ASSERT_TRUE(e->cpus[0].error.has_value());
  EXPECT_THAT(e->cpus[0].error->message(), HasSubstr("reset"));
}

TEST_F(MonitorTest, ThreadSafeUnderConcurrentWindows) {
  auto monitor = Make(Options());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string name = "t" + std::to_string(t) + "_" + std::to_string(i);
        if (!monitor->BeginWindow(name)) ++failures;
        if (!monitor->EndWindow(name)) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(monitor->OpenWindows().empty());
}

// A clock over `fake` that lets 1 ms pass right after its second reading: a
// window's end snapshot that, on a busy machine, reads its devices late.
class SlowAfterSecondReadClock final : public Clock {
 public:
  explicit SlowAfterSecondReadClock(FakeClock& fake) : fake_(fake) {}
  std::chrono::nanoseconds Now() const override {
    const std::chrono::nanoseconds now = fake_.Now();
    if (++reads_ == 2) fake_.Advance(milliseconds(1));
    return now;
  }
  void SleepFor(std::chrono::nanoseconds duration) const override { fake_.Advance(duration); }

 private:
  FakeClock& fake_;
  mutable std::atomic<int> reads_{0};
};

// The window's duration encloses the counter reads, so energy / duration
// never exceeds the power drawn (avg above peak in `zeus monitor`).
TEST_F(MonitorTest, WindowDurationEnclosesTheCounterReads) {
  SlowAfterSecondReadClock slow(clock_);
  MonitorOptions options = Options();
  options.clock = &slow;
  options.gpu_indices = std::vector<std::size_t>{0};  // the counter GPU only: nothing else reads the clock
  auto monitor = Make(options);
  ASSERT_TRUE(monitor);
  ASSERT_TRUE(monitor->BeginWindow("w"));
  clock_.Advance(seconds(1));
  auto m = monitor->EndWindow("w");
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_FALSE(m->gpus[0].error);
  EXPECT_LE(m->gpus[0].energy_j, 150.0 * m->time_s + 1e-9) << "time " << m->time_s << " s";
}

}  // namespace
}  // namespace zeus::monitor
