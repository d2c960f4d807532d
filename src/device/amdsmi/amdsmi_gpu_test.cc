// Copyright 2026 The Zeus C++ Authors.
//
// The AMD SMI backend end to end: loader, AmdSmiGpu and discovery, driven
// through the same dlopen path as production against the emulator's AMD SMI
// face (libzeus-amdsmi-emulator.so).

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "emulator/control/control.h"
#include "testing/result.h"
#include "testing/temp_dir.h"
#include "zeus/base/log.h"
#include "zeus/device/discovery.h"

namespace zeus::device {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using zeus::testing::ScopedEnv;
using zeus::testing::TempDir;
using json = nlohmann::json;

// An MI300X: 750 W board power; AMD SMI reports its current power only.
json Mi300x(int node_id, const std::string& uuid, double power_w = 300.0) {
  return {{"name", "AMD Instinct MI300X"},
          {"uuid", uuid},
          {"min_power_limit_w", 200},
          {"max_power_limit_w", 750},
          {"default_power_limit_w", 750},
          {"energy_counter", true},
          {"power_w", power_w},
          {"kfd_node_id", node_id},
          {"unsupported", {"average_power"}}};
}

class AmdSmiGpuTest : public ::testing::Test {
 protected:
  void UseScenario(json scenario) {
    scenario["vendor"] = "amd";
    if (!scenario.contains("state_file")) scenario["state_file"] = tmp_.File("emulator.state");
    if (!scenario.contains("clock")) scenario["clock"] = "manual";
    config_ = std::make_unique<ScopedEnv>("ZEUS_AMDSMI_EMULATOR_CONFIG",
                                          tmp_.Write("scenario.json", scenario.dump(2)));
  }

  static GpuOptions Options() {
    GpuOptions options;
    options.vendor = GpuVendor::kAmd;
    options.amdsmi_library = ZEUS_TEST_AMDSMI_EMULATOR_PATH;
    return options;
  }

  static std::unique_ptr<GpuSet> Open(const GpuOptions& options) { return zeus::testing::Unwrap(OpenGpus(options)); }

  static void AdvanceMs(std::int64_t ms) {
    auto control = emulator::EmulatorControl::Open(ZEUS_TEST_AMDSMI_EMULATOR_PATH);
    ASSERT_TRUE(control) << control.error().message();
    Status advanced = (*control)->Advance(std::chrono::milliseconds(ms));
    ASSERT_TRUE(advanced) << advanced.error().message();
  }

  TempDir tmp_;
  ScopedEnv no_cuda_{"CUDA_VISIBLE_DEVICES", std::nullopt};
  ScopedEnv no_hip_{"HIP_VISIBLE_DEVICES", std::nullopt};
  ScopedEnv no_rocr_{"ROCR_VISIBLE_DEVICES", std::nullopt};
  ScopedEnv no_vendor_{"ZEUS_GPU_VENDOR", std::nullopt};
  ScopedEnv no_amd_library_{"ZEUS_AMDSMI_LIBRARY", std::nullopt};
  std::unique_ptr<ScopedEnv> config_;
};

TEST_F(AmdSmiGpuTest, IdentityLimitsAndUnitsOfAnMi300x) {
  UseScenario({{"gpus", {Mi300x(2, "a1b2c3d4-0000-1000-8000-000000000001")}}});
  auto gpus = Open(Options());
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ(gpus->vendor(), GpuVendor::kAmd);
  EXPECT_EQ(gpus->driver_version(), "24.7.0");
  EXPECT_NE(gpus->driver_clock(), nullptr);
  Gpu& gpu = gpus->gpu(0);
  EXPECT_EQ(*gpu.Name(), "AMD Instinct MI300X");
  EXPECT_EQ(*gpu.Uuid(), "a1b2c3d4-0000-1000-8000-000000000001");
  EXPECT_THAT(*gpu.PciBusId(), ::testing::MatchesRegex("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]"));
  EXPECT_EQ(*gpu.Architecture(), GpuArchitecture::kCdna3);
  EXPECT_EQ(GpuArchitectureName(*gpu.Architecture()), "cdna3");
  EXPECT_FALSE(*gpu.MigEnabled());
  // µW caps read as mW.
  EXPECT_EQ(*gpu.PowerLimitMw(), 750000u);
  EXPECT_EQ(*gpu.DefaultPowerLimitMw(), 750000u);
  EXPECT_EQ(gpu.PowerLimitConstraintsMw()->min_mw, 200000u);
  EXPECT_EQ(gpu.PowerLimitConstraintsMw()->max_mw, 750000u);
  EXPECT_EQ(*gpu.EnforcedPowerLimitMw(), 750000u);
  // Whole watts read as mW; an MI300X has no average power.
  EXPECT_EQ(*gpu.InstantPowerMw(), 300000u);
  auto average = gpu.AveragePowerMw();
  ASSERT_FALSE(average);
  EXPECT_EQ(average.error().code(), ErrorCode::kNotSupported);
  EXPECT_THAT(average.error().message(), HasSubstr("N/A"));
  EXPECT_EQ(*gpu.PowerUsageMw(), 300000u);  // the current power stands in
  EXPECT_EQ(*gpu.PowerReadingScope(), PowerScope::kGpu);
  EXPECT_EQ(gpu.MemoryPowerMw().error().code(), ErrorCode::kNotSupported);
  EXPECT_EQ(gpu.PersistenceMode().error().code(), ErrorCode::kNotSupported);
  EXPECT_EQ(gpu.SetPersistenceMode(true).error().code(), ErrorCode::kNotSupported);
  EXPECT_EQ(gpu.ResetGpuLockedClocks().error().code(), ErrorCode::kNotSupported);
  auto temperature = gpu.TemperatureC();
  ASSERT_TRUE(temperature) << temperature.error().message();
  EXPECT_GT(*temperature, 0u);
  EXPECT_LT(*temperature, 150u);  // °C from millidegrees
}

TEST_F(AmdSmiGpuTest, EnergyIsTheAccumulatorTimesItsResolution) {
  json gpu = Mi300x(1, "e0000000-0000-0000-0000-000000000001", 400.0);
  gpu["energy_counter_resolution_uj"] = 15.3;
  UseScenario({{"gpus", {gpu}}});
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus->gpu(0).SupportsEnergyCounter());
  const std::uint64_t before_mj = *gpus->gpu(0).TotalEnergyMj();
  AdvanceMs(10'000);
  const std::uint64_t after_mj = *gpus->gpu(0).TotalEnergyMj();
  // 400 W for 10 s = 4000 J, within 0.1%.
  EXPECT_NEAR(static_cast<double>(after_mj - before_mj), 4'000'000.0, 4'000.0);
}

TEST_F(AmdSmiGpuTest, PowerCapRoundTripsAndRefusesOutOfRange) {
  UseScenario({{"gpus", {Mi300x(1, "c0000000-0000-0000-0000-000000000001")}}});
  auto gpus = Open(Options());
  Gpu& gpu = gpus->gpu(0);
  if (::geteuid() != 0) GTEST_SKIP() << "the emulator, like the driver, lets only root set a power cap";
  ASSERT_TRUE(gpu.SetPowerLimitMw(450000));
  EXPECT_EQ(*gpu.PowerLimitMw(), 450000u);
  Status too_high = gpu.SetPowerLimitMw(900000);
  ASSERT_FALSE(too_high);
  EXPECT_EQ(too_high.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(too_high.error().message(), HasSubstr("allowed: 200-750 W"));
  ASSERT_TRUE(gpu.ResetPowerLimit());
  EXPECT_EQ(*gpu.PowerLimitMw(), 750000u);
}

TEST_F(AmdSmiGpuTest, HipOrderFollowsKfdNodesAndRocmVisibility) {
  UseScenario({{"gpus",
                {Mi300x(4, "dddd0000-0000-0000-0000-000000000000"), Mi300x(2, "bbbb0000-0000-0000-0000-000000000000"),
                 Mi300x(3, "cccc0000-0000-0000-0000-000000000000")}}});
  auto uuids = [](const GpuSet& set) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < set.size(); ++i) out.push_back(*set.gpu(i).Uuid());
    return out;
  };
  auto all = Open(Options());
  EXPECT_THAT(uuids(*all), ElementsAre(HasSubstr("bbbb"), HasSubstr("cccc"), HasSubstr("dddd")));
  EXPECT_EQ(all->gpu(2).nvml_index(), 2u);
  {
    ScopedEnv rocr("ROCR_VISIBLE_DEVICES", "2,0");
    ScopedEnv hip("HIP_VISIBLE_DEVICES", "1");
    auto one = Open(Options());
    EXPECT_THAT(uuids(*one), ElementsAre(HasSubstr("bbbb")));
    EXPECT_EQ(one->gpu(0).nvml_index(), 0u);
  }
  {
    ScopedEnv cuda("CUDA_VISIBLE_DEVICES", "GPU-cccc");
    EXPECT_THAT(uuids(*Open(Options())), ElementsAre(HasSubstr("cccc")));
  }
  ScopedEnv hip("HIP_VISIBLE_DEVICES", "3");
  auto bad = OpenGpus(Options());
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(bad.error().message(), HasSubstr("HIP_VISIBLE_DEVICES=3"));
}

TEST_F(AmdSmiGpuTest, Mi250DiesOneReportsTheBoardTheOtherNothing) {
  json primary = {{"name", "AMD Instinct MI250"},   {"uuid", "25000000-0000-0000-0000-000000000000"},
                  {"min_power_limit_w", 100},       {"max_power_limit_w", 500},
                  {"default_power_limit_w", 500},   {"energy_counter", true},
                  {"power_w", 320},                 {"kfd_node_id", 1},
                  {"unsupported", {"instant_power"}}};
  json secondary = primary;
  secondary["uuid"] = "25000001-0000-0000-0000-000000000000";
  secondary["kfd_node_id"] = 2;
  secondary["reports_power"] = false;
  UseScenario({{"gpus", {primary, secondary}}});
  std::vector<std::string> records;  // a record's message is a view: keep a copy
  LogSink previous = SetLogSink([&](const LogRecord& r) { records.emplace_back(r.message); });
  ResetLogOnceKeysForTesting();
  auto gpus = Open(Options());
  SetLogSink(previous);

  Gpu& board = gpus->gpu(0);
  EXPECT_EQ(*board.Architecture(), GpuArchitecture::kCdna2);
  EXPECT_EQ(*board.PowerUsageMw(), 320000u);  // the average: MI250 has no current power
  EXPECT_EQ(board.InstantPowerMw().error().code(), ErrorCode::kNotSupported);
  EXPECT_TRUE(board.SupportsEnergyCounter());
  Gpu& silent = gpus->gpu(1);
  auto power = silent.PowerUsageMw();
  ASSERT_FALSE(power);
  EXPECT_EQ(power.error().code(), ErrorCode::kNotSupported);
  EXPECT_THAT(power.error().message(), HasSubstr("dual-die MI250 reports no power of its own"));
  EXPECT_FALSE(silent.SupportsEnergyCounter());
  EXPECT_EQ(silent.TotalEnergyMj().error().code(), ErrorCode::kNotSupported);
  EXPECT_EQ(*silent.Name(), "AMD Instinct MI250");  // the rest still works
  ASSERT_EQ(records.size(), 1u);
  EXPECT_THAT(records[0], HasSubstr("cover both dies of its board"));
}

TEST_F(AmdSmiGpuTest, ALibraryOlderThanRocm63IsAClearError) {
  UseScenario({{"amdsmi_version", "24.6.0"}, {"gpus", {Mi300x(1, "f0000000-0000-0000-0000-000000000001")}}});
  auto opened = OpenGpus(Options());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(opened.error().message(), HasSubstr("AMD SMI 24.6.0, which is too old"));
  EXPECT_THAT(opened.error().message(), HasSubstr("ROCm 6.3 or newer"));
  EXPECT_THAT(opened.error().message(), HasSubstr(ZEUS_TEST_AMDSMI_EMULATOR_PATH));
}

TEST_F(AmdSmiGpuTest, AMissingLibraryNamesIt) {
  GpuOptions options = Options();
  options.amdsmi_library = tmp_.File("no-such-libamd_smi.so");
  auto opened = OpenGpus(options);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(opened.error().message(), HasSubstr("cannot load the AMD SMI library"));
  EXPECT_THAT(opened.error().message(), HasSubstr("no-such-libamd_smi.so"));
}

TEST_F(AmdSmiGpuTest, AMachineWithBothPicksNvidiaUnlessAmdIsNamed) {
  UseScenario({{"gpus", {Mi300x(1, "a0000000-0000-0000-0000-000000000001")}}});
  json nvidia = {{"clock", "manual"},
                 {"state_file", tmp_.File("nvidia.state")},
                 {"gpus",
                  {{{"name", "NVIDIA H100 80GB HBM3"}, {"architecture", "hopper"}, {"min_power_limit_w", 200},
                    {"max_power_limit_w", 700}, {"default_power_limit_w", 700}, {"energy_counter", true},
                    {"power_w", 250}}}}};
  ScopedEnv nvml_config("ZEUS_EMULATOR_CONFIG", tmp_.Write("nvidia.json", nvidia.dump()));
  GpuOptions options = Options();
  options.vendor = std::nullopt;  // auto
  options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
  auto both = Open(options);
  EXPECT_EQ(both->vendor(), GpuVendor::kNvidia);
  EXPECT_EQ(*both->gpu(0).Name(), "NVIDIA H100 80GB HBM3");
  ScopedEnv vendor("ZEUS_GPU_VENDOR", "amd");
  auto amd = Open(options);
  EXPECT_EQ(amd->vendor(), GpuVendor::kAmd);
  EXPECT_EQ(*amd->gpu(0).Name(), "AMD Instinct MI300X");
}

TEST_F(AmdSmiGpuTest, AutoFallsBackToAmdWithoutAnNvidiaDriver) {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (nvml != nullptr) {
    dlclose(nvml);
    GTEST_SKIP() << "this machine has an NVIDIA driver";
  }
  UseScenario({{"gpus", {Mi300x(1, "a0000000-0000-0000-0000-000000000001")}}});
  ScopedEnv no_nvml("ZEUS_NVML_LIBRARY", std::nullopt);
  GpuOptions options = Options();
  options.vendor = std::nullopt;
  auto gpus = Open(options);
  EXPECT_EQ(gpus->vendor(), GpuVendor::kAmd);
  // Neither driver: one error naming both.
  options.amdsmi_library = std::nullopt;
  ScopedEnv no_amd("ZEUS_AMDSMI_LIBRARY", std::nullopt);
  if (void* amd = dlopen("libamd_smi.so", RTLD_NOW | RTLD_LOCAL); amd != nullptr) {
    dlclose(amd);
    GTEST_SKIP() << "this machine has AMD SMI";
  }
  auto none = OpenGpus(options);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(none.error().message(), HasSubstr("no NVIDIA driver found"));
  EXPECT_THAT(none.error().message(), HasSubstr("no AMD GPU driver found"));
  EXPECT_THAT(none.error().message(), HasSubstr("ROCm 6.3"));
}

// Opening makes no counter check (zeus/monitor/counter_check.h runs it where
// it is wanted): a wrong-rate counter is still offered after OpenGpus, and
// DistrustEnergyCounter, the check's verdict applied, takes it away.
TEST_F(AmdSmiGpuTest, OpeningChecksNoCounterAndADistrustedOneAnswersNotSupported) {
  json wrong = Mi300x(2, "b0000000-0000-0000-0000-000000000002");
  wrong["energy_counter_rate"] = 2.0;
  UseScenario({{"clock", "wall"}, {"gpus", {Mi300x(1, "b0000000-0000-0000-0000-000000000001"), wrong}}});
  std::vector<std::string> records;  // a record's message is a view: keep a copy
  LogSink previous = SetLogSink([&](const LogRecord& r) { records.emplace_back(r.message); });
  auto gpus = Open(Options());
  SetLogSink(previous);
  EXPECT_TRUE(records.empty());
  EXPECT_TRUE(gpus->gpu(1).SupportsEnergyCounter());
  gpus->gpu(1).DistrustEnergyCounter("it disagreed with the GPU's power (ratio 2.000)");
  EXPECT_TRUE(gpus->gpu(0).SupportsEnergyCounter());
  EXPECT_FALSE(gpus->gpu(1).SupportsEnergyCounter());
  EXPECT_THAT(gpus->gpu(1).TotalEnergyMj().error().message(), HasSubstr("disagreed with the GPU's power"));
}

}  // namespace
}  // namespace zeus::device
