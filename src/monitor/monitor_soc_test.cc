// Copyright 2026 The Zeus C++ Authors.
//
// Monitor windows over an SoC: a Jetson Nano's rails (see
// src/device/jetson/jetson_test.cc for the layout's sources) on a fake tree,
// integrated on the Monitor's fake clock.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/fake_clock.h"
#include "testing/result.h"
#include "testing/temp_dir.h"
#include "zeus/device/discovery.h"
#include "zeus/monitor/monitor.h"

namespace zeus::monitor {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using zeus::testing::FakeClock;
using zeus::testing::TempDir;

constexpr char kIio[] = "sys/bus/i2c/drivers/ina3221x/6-0040/iio:device0/";

class MonitorSocTest : public ::testing::Test {
 protected:
  MonitorSocTest() {
    root_.Write("etc/nv_tegra_release", "# R32 (release), REVISION: 7.1\n");
    const std::string d = kIio;
    root_.Write(d + "rail_name_0", "POM_5V_IN\n");
    root_.Write(d + "in_power0_input", "4000\n");
    root_.Write(d + "rail_name_1", "POM_5V_GPU\n");
    root_.Write(d + "in_power1_input", "1500\n");
    root_.Write(d + "rail_name_2", "POM_5V_CPU\n");
    root_.Write(d + "in_power2_input", "1200\n");
    device::SocOptions options;
    options.root = root_.path();
    options.sample_period = {};
    options.clock = &clock_;
    soc_ = zeus::testing::Unwrap(device::OpenSoc(options));
    MonitorOptions monitor_options;
    monitor_options.clock = &clock_;
    monitor_options.soc = soc_.get();
    monitor_ = zeus::testing::Unwrap(Monitor::Create(nullptr, nullptr, std::move(monitor_options)));
  }

  TempDir root_;
  FakeClock clock_;
  std::unique_ptr<device::Soc> soc_;
  std::unique_ptr<Monitor> monitor_;
};

TEST_F(MonitorSocTest, WindowsHoldTheRailsEnergyInMillijoules) {
  clock_.Advance(seconds(3));  // before the window: not counted
  ASSERT_TRUE(monitor_->BeginWindow("outer"));
  clock_.Advance(seconds(1));
  ASSERT_TRUE(monitor_->BeginWindow("inner"));
  clock_.Advance(milliseconds(500));
  Measurement inner = zeus::testing::Unwrap(monitor_->EndWindow("inner"));
  clock_.Advance(milliseconds(500));
  Measurement outer = zeus::testing::Unwrap(monitor_->EndWindow("outer"));

  ASSERT_TRUE(inner.soc && outer.soc);
  EXPECT_DOUBLE_EQ(inner.soc->total_energy_mj.value(), 4000.0 * 0.5);
  EXPECT_DOUBLE_EQ(inner.soc->gpu_energy_mj.value(), 1500.0 * 0.5);
  EXPECT_DOUBLE_EQ(inner.soc->cpu_energy_mj.value(), 1200.0 * 0.5);
  EXPECT_DOUBLE_EQ(outer.time_s, 2.0);
  EXPECT_DOUBLE_EQ(outer.soc->total_energy_mj.value(), 4000.0 * 2);
  EXPECT_TRUE(outer.soc->errors.empty());
  EXPECT_DOUBLE_EQ(outer.total_energy_j, 0.0);  // the SoC is not in the devices' sum
}

TEST_F(MonitorSocTest, FailedRailReadIsUnknownForTheWindowAndNamesTheFile) {
  ASSERT_TRUE(monitor_->BeginWindow("w"));
  ASSERT_TRUE(monitor_->BeginWindow("after"));
  clock_.Advance(seconds(1));
  root_.Write(std::string(kIio) + "in_power1_input", "\n");
  (void)soc_->TotalEnergy();  // a sampler step sees the empty file
  root_.Write(std::string(kIio) + "in_power1_input", "1500\n");
  clock_.Advance(seconds(1));
  Measurement m = zeus::testing::Unwrap(monitor_->EndWindow("w"));
  ASSERT_TRUE(m.soc);
  EXPECT_FALSE(m.soc->gpu_energy_mj);
  ASSERT_EQ(m.soc->errors.size(), 1u);
  EXPECT_THAT(m.soc->errors[0].message(), HasSubstr(root_.File(std::string(kIio) + "in_power1_input")));
  EXPECT_THAT(m.soc->errors[0].message(), HasSubstr("failed during the window"));
  EXPECT_THAT(m.soc->errors[0].message(), HasSubstr("'POM_5V_GPU'"));
  EXPECT_DOUBLE_EQ(m.soc->total_energy_mj.value(), 8000.0);
  EXPECT_DOUBLE_EQ(m.soc->cpu_energy_mj.value(), 2400.0);

  // A window begun after the failure measures the rail again.
  ASSERT_TRUE(monitor_->BeginWindow("later"));
  clock_.Advance(seconds(1));
  Measurement later = zeus::testing::Unwrap(monitor_->EndWindow("later"));
  EXPECT_DOUBLE_EQ(later.soc->gpu_energy_mj.value(), 1500.0);
  EXPECT_TRUE(later.soc->errors.empty());
}

TEST_F(MonitorSocTest, CancelledWindowHasZerosForTheKindsMeasured) {
  ASSERT_TRUE(monitor_->BeginWindow("w"));
  clock_.Advance(seconds(1));
  Measurement m = zeus::testing::Unwrap(monitor_->EndWindow("w", /*cancel=*/true));
  ASSERT_TRUE(m.soc);
  EXPECT_EQ(m.soc->total_energy_mj, 0.0);
  EXPECT_EQ(m.soc->gpu_energy_mj, 0.0);
  EXPECT_EQ(m.soc->cpu_energy_mj, 0.0);
}

TEST(MonitorWithoutSocTest, MeasurementHasNoSoc) {
  auto monitor = zeus::testing::Unwrap(Monitor::Create(nullptr, nullptr, {}));
  ASSERT_TRUE(monitor->BeginWindow("w"));
  EXPECT_FALSE(zeus::testing::Unwrap(monitor->EndWindow("w")).soc);
}

}  // namespace
}  // namespace zeus::monitor
