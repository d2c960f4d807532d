// Copyright 2026 The Zeus C++ Authors.
//
// NVIDIA Jetson's rails on fake sysfs trees laid out as on real boards.
//
// Where the layouts and names come from:
//   * hwmon ina3221 (L4T 34+, Orin): the kernel's Documentation/hwmon/ina3221.rst
//     (in[123]_label, in[123]_input bus voltage in mV, curr[123]_input in mA;
//     in7_label "sum of shunt voltage"), found under
//     /sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon<N>. Jetson AGX Orin's
//     channels at 0x40 are VDD_GPU_SOC, VDD_CPU_CV, VIN_SYS_5V0 and at 0x41
//     NC, VDDQ_VDD2_1V8AO, NC; Orin NX/Nano's are VDD_IN, VDD_CPU_GPU_CV,
//     VDD_SOC (NVIDIA Jetson Linux Developer Guide r35.6, "Jetson Orin Nano
//     Series, Jetson Orin NX Series and Jetson AGX Orin Series", Software-Based
//     Power Consumption Modeling; docs.nvidia.com/jetson/archives/r35.6.0/...).
//   * IIO ina3221x (L4T 32, Nano/TX2/Xavier): rail_name_<i>, in_power<i>_input
//     (mW), in_voltage<i>_input (mV), in_current<i>_input (mA) under
//     /sys/bus/i2c/drivers/ina3221x/6-0040/iio:device0; Jetson Nano's rails
//     are POM_5V_IN, POM_5V_GPU, POM_5V_CPU (L4T 32.x Developer Guide, Jetson
//     Nano power monitor); Jetson AGX Xavier's are GPU, CPU, SOC at 0x40 and
//     CV, VDDRQ, SYS5V at 0x41 (Jetson AGX Xavier Series Product Design
//     Guide DG-09840-001, 5.6.2 Power Monitor).

#include <chrono>
#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/jetson/ina3221_rails.h"
#include "device/jetson/jetson_soc.h"
#include "testing/fake_clock.h"
#include "testing/result.h"
#include "testing/temp_dir.h"
#include "zeus/device/discovery.h"
#include "zeus/device/environment.h"

namespace zeus::device::jetson {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using zeus::testing::FakeClock;
using zeus::testing::ScopedEnv;
using zeus::testing::TempDir;

constexpr char kOrinHwmon[] = "sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3/";
constexpr char kOrinHwmon41[] = "sys/bus/i2c/drivers/ina3221/1-0041/hwmon/hwmon4/";
constexpr char kNanoIio[] = "sys/bus/i2c/drivers/ina3221x/6-0040/iio:device0/";

void MarkJetson(const TempDir& root) { root.Write("etc/nv_tegra_release", "# R35 (release), REVISION: 4.1\n"); }

// Jetson AGX Orin: GPU 5000 mV x 1200 mA = 6000 mW, CPU 5000 x 400 = 2000 mW,
// VIN_SYS_5V0 5000 x 600 = 3000 mW (not a kind Zeus measures).
void WriteAgxOrin(const TempDir& root) {
  MarkJetson(root);
  const std::string d = kOrinHwmon;
  root.Write(d + "name", "ina3221\n");
  root.Write(d + "in1_label", "VDD_GPU_SOC\n");
  root.Write(d + "in1_input", "5000\n");
  root.Write(d + "curr1_input", "1200\n");
  root.Write(d + "in2_label", "VDD_CPU_CV\n");
  root.Write(d + "in2_input", "5000\n");
  root.Write(d + "curr2_input", "400\n");
  root.Write(d + "in3_label", "VIN_SYS_5V0\n");
  root.Write(d + "in3_input", "5000\n");
  root.Write(d + "curr3_input", "600\n");
  root.Write(d + "in7_label", "sum of shunt voltage\n");
  root.Write(d + "in7_input", "120\n");
  const std::string e = kOrinHwmon41;
  root.Write(e + "in1_label", "NC\n");
  root.Write(e + "in2_label", "VDDQ_VDD2_1V8AO\n");
  root.Write(e + "in2_input", "5000\n");
  root.Write(e + "curr2_input", "100\n");
  root.Write(e + "in3_label", "NC\n");
}

// Jetson Nano: POM_5V_IN 4000 mW, POM_5V_GPU 1500 mW (power files),
// POM_5V_CPU 5000 mV x 300 mA = 1500 mW.
void WriteNano(const TempDir& root) {
  root.Write("usr/lib/aarch64-linux-gnu/tegra/libnvll.so", "");
  const std::string d = kNanoIio;
  root.Write(d + "rail_name_0", "POM_5V_IN\n");
  root.Write(d + "in_power0_input", "4000\n");
  root.Write(d + "rail_name_1", "POM_5V_GPU\n");
  root.Write(d + "in_power1_input", "1500\n");
  root.Write(d + "rail_name_2", "POM_5V_CPU\n");
  root.Write(d + "in_voltage2_input", "5000\n");
  root.Write(d + "in_current2_input", "300\n");
}

std::unique_ptr<Soc> Open(const TempDir& root, const Clock& clock, std::chrono::nanoseconds period = {}) {
  return zeus::testing::Unwrap(OpenJetson(root.path(), period, clock));
}

TEST(RailKindTest, ZeusNamingRule) {
  EXPECT_EQ(RailKindOf("VDD_GPU_SOC"), SocRailKind::kGpu);
  EXPECT_EQ(RailKindOf("VDD_CPU_CV"), SocRailKind::kCpu);
  EXPECT_EQ(RailKindOf("VDD_CPU_GPU_CV"), SocRailKind::kCpu);  // "cpu" is looked for first
  EXPECT_EQ(RailKindOf("POM_5V_IN"), SocRailKind::kTotal);
  EXPECT_EQ(RailKindOf("VDD_IN"), SocRailKind::kTotal);
  EXPECT_EQ(RailKindOf("system total"), SocRailKind::kTotal);
  EXPECT_EQ(RailKindOf("pom_5v_gpu"), SocRailKind::kGpu);
  EXPECT_EQ(RailKindOf("VIN_SYS_5V0"), std::nullopt);  // no "_in": Zeus does not measure it either
  EXPECT_EQ(RailKindOf("VDD_SOC"), std::nullopt);
  EXPECT_EQ(RailKindOf("sum of shunt voltage"), std::nullopt);
  EXPECT_EQ(RailKindOf("NC"), std::nullopt);
}

TEST(JetsonTest, AgxOrinHwmonRailsIntegrateVoltageTimesCurrent) {
  TempDir root;
  WriteAgxOrin(root);
  FakeClock clock;
  auto soc = Open(root, clock);
  ASSERT_EQ(soc->rails().size(), 2u);
  EXPECT_EQ(soc->rails()[0].name, "VDD_GPU_SOC");
  EXPECT_EQ(soc->rails()[0].kind, SocRailKind::kGpu);
  EXPECT_THAT(soc->rails()[0].sources, HasSubstr("hwmon3/in1_input x "));
  EXPECT_EQ(soc->rails()[1].name, "VDD_CPU_CV");
  EXPECT_TRUE(soc->problems().empty());

  clock.Advance(seconds(2));
  SocEnergy e = soc->TotalEnergy();
  ASSERT_TRUE(e.gpu && e.cpu);
  EXPECT_FALSE(e.total);
  EXPECT_DOUBLE_EQ(e.gpu->energy_mj, 6000.0 * 2);  // mW x s = mJ
  EXPECT_DOUBLE_EQ(e.cpu->energy_mj, 2000.0 * 2);
  clock.Advance(milliseconds(500));
  e = soc->TotalEnergy();
  EXPECT_DOUBLE_EQ(e.gpu->energy_mj, 6000.0 * 2.5);
  EXPECT_EQ(e.gpu->failed_reads, 0u);
}

TEST(JetsonTest, OrinNxVddInIsTheTotal) {
  TempDir root;
  MarkJetson(root);
  const std::string d = kOrinHwmon;
  root.Write(d + "in1_label", "VDD_IN\n");
  root.Write(d + "in1_input", "5000\n");
  root.Write(d + "curr1_input", "1000\n");
  root.Write(d + "in2_label", "VDD_CPU_GPU_CV\n");
  root.Write(d + "in2_input", "5000\n");
  root.Write(d + "curr2_input", "200\n");
  root.Write(d + "in3_label", "VDD_SOC\n");
  root.Write(d + "in3_input", "5000\n");
  root.Write(d + "curr3_input", "300\n");
  FakeClock clock;
  auto soc = Open(root, clock);
  clock.Advance(seconds(1));
  SocEnergy e = soc->TotalEnergy();
  ASSERT_TRUE(e.total && e.cpu);
  EXPECT_FALSE(e.gpu);
  EXPECT_DOUBLE_EQ(e.total->energy_mj, 5000.0);
  EXPECT_DOUBLE_EQ(e.cpu->energy_mj, 1000.0);
}

TEST(JetsonTest, NanoIioRailsReadPowerOrVoltageTimesCurrent) {
  TempDir root;
  WriteNano(root);
  FakeClock clock;
  auto soc = Open(root, clock);
  ASSERT_EQ(soc->rails().size(), 3u);
  EXPECT_EQ(soc->rails()[0].name, "POM_5V_IN");
  EXPECT_THAT(soc->rails()[0].sources, HasSubstr("iio:device0/in_power0_input"));
  clock.Advance(milliseconds(1500));
  SocEnergy e = soc->TotalEnergy();
  ASSERT_TRUE(e.total && e.gpu && e.cpu);
  EXPECT_DOUBLE_EQ(e.total->energy_mj, 4000.0 * 1.5);
  EXPECT_DOUBLE_EQ(e.gpu->energy_mj, 1500.0 * 1.5);
  EXPECT_DOUBLE_EQ(e.cpu->energy_mj, 5000.0 * 300 / 1000 * 1.5);
}

TEST(JetsonTest, PowerReadAtTheEndIsHeldOverTheInterval) {
  TempDir root;
  WriteNano(root);
  FakeClock clock;
  auto soc = Open(root, clock);
  clock.Advance(seconds(1));
  root.Write(std::string(kNanoIio) + "in_power0_input", "7000\n");
  SocEnergy e = soc->TotalEnergy();
  EXPECT_DOUBLE_EQ(e.total->energy_mj, 7000.0);  // A-Jetson: E += P_now x dt
  clock.Advance(seconds(1));
  e = soc->TotalEnergy();
  EXPECT_DOUBLE_EQ(e.total->energy_mj, 14000.0);
}

TEST(JetsonTest, GarbageValueNamesTheFileAndOtherRailsAreStillMeasured) {
  TempDir root;
  WriteNano(root);
  FakeClock clock;
  auto soc = Open(root, clock);
  const std::string gpu_file = root.File(std::string(kNanoIio) + "in_power1_input");
  root.Write(std::string(kNanoIio) + "in_power1_input", "N/A\n");
  clock.Advance(seconds(1));
  SocEnergy e = soc->TotalEnergy();
  EXPECT_EQ(e.gpu->failed_reads, 1u);
  ASSERT_TRUE(e.gpu->last_error);
  EXPECT_THAT(e.gpu->last_error->message(), HasSubstr(gpu_file));
  EXPECT_THAT(e.gpu->last_error->message(), HasSubstr("'N/A'"));
  EXPECT_DOUBLE_EQ(e.gpu->energy_mj, 0.0);  // the failed interval is not integrated
  EXPECT_DOUBLE_EQ(e.total->energy_mj, 4000.0);
  EXPECT_DOUBLE_EQ(e.cpu->energy_mj, 1500.0);
  EXPECT_EQ(e.total->failed_reads, 0u);

  // The file recovers: the rail is measured again from the next interval.
  root.Write(std::string(kNanoIio) + "in_power1_input", "1500\n");
  clock.Advance(seconds(1));
  e = soc->TotalEnergy();
  EXPECT_DOUBLE_EQ(e.gpu->energy_mj, 1500.0);
  EXPECT_EQ(e.gpu->failed_reads, 1u);
}

TEST(JetsonTest, VanishedFileIsAnErrorNamingIt) {
  TempDir root;
  WriteAgxOrin(root);
  FakeClock clock;
  auto soc = Open(root, clock);
  const std::string cpu_current = root.File(std::string(kOrinHwmon) + "curr2_input");
  ASSERT_EQ(std::remove(cpu_current.c_str()), 0);
  clock.Advance(seconds(1));
  SocEnergy e = soc->TotalEnergy();
  EXPECT_EQ(e.cpu->failed_reads, 1u);
  EXPECT_THAT(e.cpu->last_error->message(), HasSubstr(cpu_current));
  EXPECT_DOUBLE_EQ(e.gpu->energy_mj, 6000.0);
}

TEST(JetsonTest, RailUnreadableAtOpenIsAProblemAndNotMeasured) {
  TempDir root;
  WriteNano(root);
  root.Write(std::string(kNanoIio) + "in_power1_input", "garbage\n");
  root.Write(std::string(kNanoIio) + "rail_name_3", "VDD_SYS_GPU_EXTRA\n");  // no power files at all
  FakeClock clock;
  auto soc = Open(root, clock);
  ASSERT_EQ(soc->rails().size(), 2u);
  EXPECT_EQ(soc->rails()[0].name, "POM_5V_IN");
  EXPECT_EQ(soc->rails()[1].name, "POM_5V_CPU");
  ASSERT_EQ(soc->problems().size(), 2u);
  EXPECT_THAT(soc->problems()[0].message(), HasSubstr("rail_name_3"));
  EXPECT_THAT(soc->problems()[0].message(), HasSubstr("in_power3_input"));
  EXPECT_THAT(soc->problems()[1].message(), HasSubstr(root.File(std::string(kNanoIio) + "in_power1_input")));
  clock.Advance(seconds(1));
  SocEnergy e = soc->TotalEnergy();
  EXPECT_FALSE(e.gpu);
  EXPECT_DOUBLE_EQ(e.total->energy_mj, 4000.0);
}

TEST(JetsonTest, NotAJetsonSaysWhy) {
  TempDir root;
  auto soc = OpenJetson(root.path(), {}, SteadyClock());
  ASSERT_FALSE(soc);
  EXPECT_EQ(soc.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(soc.error().message(), HasSubstr("not an NVIDIA Jetson"));
  EXPECT_THAT(soc.error().message(), HasSubstr(root.File("etc/nv_tegra_release")));
}

TEST(JetsonTest, JetsonWithoutRailsSaysWhereItLooked) {
  TempDir root;
  MarkJetson(root);
  root.Write(std::string(kOrinHwmon) + "in1_label", "VDD_GPU_SOC\n");  // no input files
  auto soc = OpenJetson(root.path(), {}, SteadyClock());
  ASSERT_FALSE(soc);
  EXPECT_EQ(soc.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(soc.error().message(), HasSubstr("ina3221x"));
  EXPECT_THAT(soc.error().message(), HasSubstr("curr1_input"));
}

TEST(JetsonTest, SamplerIntegratesWithoutReaders) {
  TempDir root;
  WriteNano(root);
  FakeClock clock;
  auto opened = Open(root, clock, milliseconds(1));
  auto* soc = dynamic_cast<JetsonSoc*>(opened.get());
  ASSERT_NE(soc, nullptr);
  ASSERT_TRUE(soc->WaitForSamplerSteps(1, seconds(30)));
  clock.Advance(seconds(1));
  // The sampler's next step integrates the second at 4000 mW ...
  ASSERT_TRUE(soc->WaitForSamplerSteps(soc->sampler_steps() + 1, seconds(30)));
  // ... so a power change now, with the clock still, changes nothing read.
  root.Write(std::string(kNanoIio) + "in_power0_input", "9000\n");
  EXPECT_DOUBLE_EQ(soc->TotalEnergy().total->energy_mj, 4000.0);
}

TEST(OpenSocTest, RootFromTheEnvironment) {
  TempDir root;
  WriteNano(root);
  ScopedEnv env(kSocRootVariable, root.path());
  FakeClock clock;
  SocOptions options;
  options.sample_period = {};
  options.clock = &clock;
  auto soc = zeus::testing::Unwrap(OpenSoc(options));
  EXPECT_EQ(soc->name(), "NVIDIA Jetson");
  EXPECT_EQ(soc->rails().size(), 3u);
}

}  // namespace
}  // namespace zeus::device::jetson
