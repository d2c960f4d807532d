// Copyright 2026 The Zeus C++ Authors.
//
// The NVML backend end to end: loader, NvmlGpu and discovery, driven through
// the same dlopen path as production against the project's NVML emulator.

#include <unistd.h>

#include <chrono>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "device/nvml/nvml_library.h"
#include "emulator/control/control.h"
#include "testing/temp_dir.h"
#include "testing/result.h"
#include "zeus/base/log.h"
#include "zeus/device/discovery.h"

namespace zeus::device {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using zeus::testing::ScopedEnv;
using zeus::testing::TempDir;
using json = nlohmann::json;

json V100(double power_w = 180.0) {
  return {{"name", "Tesla V100-SXM2-32GB"}, {"architecture", "volta"}, {"min_power_limit_w", 100},
          {"max_power_limit_w", 250},       {"default_power_limit_w", 250}, {"energy_counter", true},
          {"power_w", power_w}};
}

class NvmlGpuTest : public ::testing::Test {
 protected:
  // Writes the scenario (with a private state file and a manual clock unless
  // given) and points the emulator at it.
  void UseScenario(json scenario) {
    if (!scenario.contains("state_file")) scenario["state_file"] = tmp_.File("emulator.state");
    if (!scenario.contains("clock")) scenario["clock"] = "manual";
    config_ = std::make_unique<ScopedEnv>("ZEUS_EMULATOR_CONFIG", tmp_.Write("scenario.json", scenario.dump(2)));
  }

  GpuOptions Options() const {
    GpuOptions options;
    options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
    return options;
  }

  std::unique_ptr<GpuSet> Open(GpuOptions options) {
    auto gpus = OpenGpus(options);
    return zeus::testing::Unwrap(std::move(gpus));
  }

  // Advances the emulator's manual clock.
  static void AdvanceEmulatorMs(std::int64_t ms) {
    auto control = emulator::EmulatorControl::Open(ZEUS_TEST_EMULATOR_PATH);
    ASSERT_TRUE(control) << control.error().message();
    Status advanced = (*control)->Advance(std::chrono::milliseconds(ms));
    ASSERT_TRUE(advanced) << advanced.error().message();
  }

  TempDir tmp_;
  ScopedEnv no_visible_{"CUDA_VISIBLE_DEVICES", std::nullopt};
  std::unique_ptr<ScopedEnv> config_;
};

TEST_F(NvmlGpuTest, DriverClockIsTheEmulatorsClock) {
  UseScenario({{"gpus", {V100()}}});
  auto gpus = Open(Options());
  ASSERT_NE(gpus, nullptr);
  const Clock* clock = gpus->driver_clock();
  ASSERT_NE(clock, nullptr);
  const std::chrono::nanoseconds before = clock->Now();
  AdvanceEmulatorMs(1500);
  EXPECT_EQ(clock->Now() - before, std::chrono::milliseconds(1500));
  // SleepFor never moves a manual clock: it gives up after the same wall time.
  clock->SleepFor(std::chrono::milliseconds(5));
  EXPECT_EQ(clock->Now() - before, std::chrono::milliseconds(1500));
}

TEST(GpuSetTest, NoDriverClockByDefault) {
  GpuSet empty("", {});
  EXPECT_EQ(empty.driver_clock(), nullptr);
}

TEST_F(NvmlGpuTest, QueriesMatchTheScenario) {
  json gpu = V100();
  gpu["power_limit_w"] = 200;
  gpu["uuid"] = "GPU-12345678-1234-1234-1234-123456789abc";
  gpu["pci_bus_id"] = "00000000:1A:00.0";
  gpu["temperature_c"] = 47;
  gpu["persistence_mode"] = true;
  UseScenario({{"driver_version", "550.54.15"}, {"gpus", {gpu}}});
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus);
  EXPECT_EQ(gpus->driver_version(), "550.54.15");
  ASSERT_EQ(gpus->size(), 1u);
  Gpu& g = gpus->gpu(0);
  EXPECT_EQ(g.nvml_index(), 0u);
  EXPECT_EQ(*g.Name(), "Tesla V100-SXM2-32GB");
  EXPECT_EQ(*g.Uuid(), "GPU-12345678-1234-1234-1234-123456789abc");
  EXPECT_EQ(*g.PciBusId(), "00000000:1A:00.0");
  EXPECT_EQ(*g.Architecture(), GpuArchitecture::kVolta);
  EXPECT_FALSE(*g.MigEnabled());
  EXPECT_EQ(*g.PowerLimitMw(), 200000u);
  EXPECT_EQ(*g.EnforcedPowerLimitMw(), 200000u);
  EXPECT_EQ(*g.DefaultPowerLimitMw(), 250000u);
  EXPECT_EQ(g.PowerLimitConstraintsMw()->min_mw, 100000u);
  EXPECT_EQ(g.PowerLimitConstraintsMw()->max_mw, 250000u);
  EXPECT_EQ(*g.TemperatureC(), 47u);
  EXPECT_TRUE(*g.PersistenceMode());
  EXPECT_TRUE(g.SupportsEnergyCounter());
}

TEST_F(NvmlGpuTest, EnergyAndPowerFollowTheLimit) {
  UseScenario({{"power_settle_ms", 0}, {"gpus", {V100(180.0)}}});  // a new limit applies at once
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus);
  Gpu& g = gpus->gpu(0);
  const std::uint64_t e0 = *g.TotalEnergyMj();
  AdvanceEmulatorMs(2000);
  EXPECT_EQ(*g.TotalEnergyMj() - e0, 360000u);  // 180 W for 2 s
  EXPECT_EQ(*g.PowerUsageMw(), 180000u);

  ASSERT_TRUE(g.SetPowerLimitMw(150000));
  EXPECT_EQ(*g.PowerLimitMw(), 150000u);
  AdvanceEmulatorMs(1000);
  EXPECT_EQ(*g.TotalEnergyMj() - e0, 360000u + 150000u);  // capped at 150 W
  EXPECT_EQ(*g.InstantPowerMw(), 150000u);

  ASSERT_TRUE(g.ResetPowerLimit());
  EXPECT_EQ(*g.PowerLimitMw(), 250000u);
}

TEST_F(NvmlGpuTest, LimitOutsideConstraintsIsInvalidArgumentWithTheRange) {
  UseScenario({{"gpus", {V100()}}});
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus);
  Status s = gpus->gpu(0).SetPowerLimitMw(300000);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message(), HasSubstr("allowed: 100-250 W"));
  EXPECT_EQ(*gpus->gpu(0).PowerLimitMw(), 250000u);
}

TEST_F(NvmlGpuTest, SettersAndClocks) {
  json gpu = V100();
  gpu["supported_memory_clocks_mhz"] = {877};
  gpu["supported_graphics_clocks_mhz"] = {1530, 1380, 1200, 135};
  UseScenario({{"gpus", {gpu}}});
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus);
  Gpu& g = gpus->gpu(0);
  EXPECT_THAT(*g.SupportedMemoryClocksMhz(), ElementsAre(877));
  EXPECT_THAT(*g.SupportedGraphicsClocksMhz(877), ElementsAre(1530, 1380, 1200, 135));
  EXPECT_EQ(*g.SmClockMhz(), 1530u);
  ASSERT_TRUE(g.SetGpuLockedClocks(1200, 1380));
  EXPECT_EQ(*g.SmClockMhz(), 1380u);
  ASSERT_TRUE(g.ResetGpuLockedClocks());
  EXPECT_EQ(*g.SmClockMhz(), 1530u);
  ASSERT_TRUE(g.SetMemoryLockedClocks(877, 877));
  EXPECT_EQ(*g.MemoryClockMhz(), 877u);
  ASSERT_TRUE(g.ResetMemoryLockedClocks());
  Status bad = g.SetGpuLockedClocks(1380, 1200);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(g.SetPersistenceMode(true));
  EXPECT_TRUE(*g.PersistenceMode());
  ASSERT_TRUE(g.SetPersistenceMode(false));
  EXPECT_FALSE(*g.PersistenceMode());
}

TEST_F(NvmlGpuTest, PreVoltaHasNoEnergyCounter) {
  json gpu = {{"name", "Tesla P100"},     {"architecture", "pascal"},       {"min_power_limit_w", 125},
              {"max_power_limit_w", 250}, {"default_power_limit_w", 250}, {"energy_counter", false},
              {"power_w", 100}};
  UseScenario({{"gpus", {gpu}}});
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus);
  EXPECT_FALSE(gpus->gpu(0).SupportsEnergyCounter());
  auto energy = gpus->gpu(0).TotalEnergyMj();
  ASSERT_FALSE(energy);
  EXPECT_EQ(energy.error().code(), ErrorCode::kNotSupported);
}

TEST_F(NvmlGpuTest, PermissionFaultOnSetterExplainsTheFix) {
  UseScenario({{"gpus", {V100()}},
               {"faults", {{{"function", "nvmlDeviceSetPowerManagementLimit"}, {"return", "NO_PERMISSION"}}}}});
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus);
  Status s = gpus->gpu(0).SetPowerLimitMw(200000);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(s.error().native_code(), NVML_ERROR_NO_PERMISSION);
  EXPECT_THAT(s.error().message(), HasSubstr("changing the power limit of GPU 0"));
  EXPECT_THAT(s.error().message(), HasSubstr("needs root or CAP_SYS_ADMIN"));
}

TEST_F(NvmlGpuTest, LostGpuAfterSomeCalls) {
  UseScenario({{"gpus", {V100(), V100()}},
               {"faults", {{{"function", "nvmlDeviceGetFieldValues"}, {"gpu", 1}, {"return", "GPU_IS_LOST"},
                            {"after_calls", 2}}}}});
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus);
  EXPECT_TRUE(gpus->gpu(1).PowerUsageMw());
  EXPECT_TRUE(gpus->gpu(1).PowerUsageMw());
  auto lost = gpus->gpu(1).PowerUsageMw();
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code(), ErrorCode::kDeviceLost);
  EXPECT_THAT(lost.error().message(), HasSubstr("GPU 1"));
  EXPECT_TRUE(gpus->gpu(0).PowerUsageMw());  // the other GPU is unaffected
}

// Per-process calls: the list and samples through NVML's size protocol.
TEST_F(NvmlGpuTest, RunningProcessesAndTheirUtilization) {
  json gpu = V100();
  gpu["process_sample_period_ms"] = 500;
  // More processes than the loader's headroom, so the buffer is sized from the count.
  for (int i = 0; i < 20; ++i) gpu["processes"].push_back({{"pid", 1000 + i}, {"sm_util_percent", 1 + i}});
  gpu["processes"][0]["used_memory_mib"] = 1;
  UseScenario({{"gpus", {gpu}}});
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus);
  Gpu& g = gpus->gpu(0);
  auto running = g.RunningProcesses();
  ASSERT_TRUE(running) << running.error().message();
  ASSERT_EQ(running->size(), 20u);
  EXPECT_EQ((*running)[0].pid, 1000u);
  EXPECT_EQ((*running)[0].used_memory_bytes, std::optional<std::uint64_t>(1u << 20));
  EXPECT_EQ((*running)[19].pid, 1019u);
  EXPECT_EQ((*running)[19].used_memory_bytes, std::nullopt);  // NVML_VALUE_NOT_AVAILABLE

  auto none = g.ProcessUtilization(0);  // NOT_FOUND: no sample yet
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_TRUE(none->empty());
  AdvanceEmulatorMs(1000);
  auto samples = g.ProcessUtilization(0);
  ASSERT_TRUE(samples) << samples.error().message();
  ASSERT_EQ(samples->size(), 40u);  // at 0.5 s and 1 s
  EXPECT_EQ(samples->front().timestamp_us, 500'000u);
  EXPECT_EQ(samples->front().pid, 1000u);
  EXPECT_EQ(samples->front().sm_util_percent, 1u);
  EXPECT_EQ(samples->back().timestamp_us, 1'000'000u);
  auto newer = g.ProcessUtilization(500'000);
  ASSERT_TRUE(newer);
  EXPECT_EQ(newer->size(), 20u);
  auto nothing_new = g.ProcessUtilization(1'000'000);
  ASSERT_TRUE(nothing_new);
  EXPECT_TRUE(nothing_new->empty());
}

TEST_F(NvmlGpuTest, PerProcessCallsNotSupportedOrFailing) {
  json refusing = V100();
  refusing["unsupported"] = {"processes"};
  UseScenario({{"gpus", {refusing, V100()}},
               {"faults", {{{"function", "nvmlDeviceGetProcessUtilization"}, {"gpu", 1}, {"return", "GPU_IS_LOST"}}}}});
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus);
  auto running = gpus->gpu(0).RunningProcesses();
  ASSERT_FALSE(running);
  EXPECT_EQ(running.error().code(), ErrorCode::kNotSupported);
  auto samples = gpus->gpu(0).ProcessUtilization(0);
  ASSERT_FALSE(samples);
  EXPECT_EQ(samples.error().code(), ErrorCode::kNotSupported);
  auto lost = gpus->gpu(1).ProcessUtilization(0);
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code(), ErrorCode::kDeviceLost);
  EXPECT_THAT(lost.error().message(), HasSubstr("per-process utilization of GPU 1"));
  auto empty = gpus->gpu(1).RunningProcesses();  // no process: an empty list
  ASSERT_TRUE(empty) << empty.error().message();
  EXPECT_TRUE(empty->empty());
}

// An attached real process, through the C++ control.
TEST_F(NvmlGpuTest, AttachedProcessIsListed) {
  UseScenario({{"gpus", {V100()}}});
  auto gpus = Open(Options());
  ASSERT_TRUE(gpus);
  auto control = emulator::EmulatorControl::Open(ZEUS_TEST_EMULATOR_PATH);
  ASSERT_TRUE(control) << control.error().message();
  const auto self = static_cast<unsigned int>(::getpid());
  ASSERT_TRUE((*control)->AttachProcess(0, self, 30));
  Status again = (*control)->AttachProcess(0, self, 30);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kInvalidArgument);
  auto running = gpus->gpu(0).RunningProcesses();
  ASSERT_TRUE(running);
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].pid, self);
  ASSERT_TRUE((*control)->SetProcessUtilization(0, self, 60));
  AdvanceEmulatorMs(1000);
  auto samples = gpus->gpu(0).ProcessUtilization(0);
  ASSERT_TRUE(samples);
  ASSERT_FALSE(samples->empty());
  EXPECT_EQ(samples->back().sm_util_percent, 60u);
  ASSERT_TRUE((*control)->DetachProcess(0, self));
  running = gpus->gpu(0).RunningProcesses();
  ASSERT_TRUE(running);
  EXPECT_TRUE(running->empty());
}

TEST_F(NvmlGpuTest, CudaVisibleDevicesReordersAndFilters) {
  json a = V100();
  a["uuid"] = "GPU-aaaaaaaa-0000-0000-0000-000000000000";
  json b = V100();
  b["uuid"] = "GPU-bbbbbbbb-0000-0000-0000-000000000000";
  json c = V100();
  c["uuid"] = "GPU-cccccccc-0000-0000-0000-000000000000";
  UseScenario({{"gpus", {a, b, c}}});
  GpuOptions options = Options();
  options.cuda_visible_devices = "2,GPU-aaaa";
  auto gpus = Open(options);
  ASSERT_TRUE(gpus);
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ(gpus->gpu(0).nvml_index(), 2u);
  EXPECT_EQ(gpus->gpu(1).nvml_index(), 0u);

  ScopedEnv env("CUDA_VISIBLE_DEVICES", "1");
  auto from_env = Open(Options());
  ASSERT_TRUE(from_env);
  ASSERT_EQ(from_env->size(), 1u);
  EXPECT_EQ(*from_env->gpu(0).Uuid(), "GPU-bbbbbbbb-0000-0000-0000-000000000000");

  GpuOptions bad = Options();
  bad.cuda_visible_devices = "5";
  auto error = OpenGpus(bad);
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().code(), ErrorCode::kInvalidArgument);
}

TEST_F(NvmlGpuTest, MigModeIsRefusedUnlessAllowed) {
  json gpu = V100();
  gpu["mig"] = true;
  UseScenario({{"gpus", {gpu}}});
  auto refused = OpenGpus(Options());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kNotSupported);
  EXPECT_THAT(refused.error().message(), HasSubstr("MIG mode"));
  GpuOptions options = Options();
  options.allow_mig = true;
  auto allowed = Open(options);
  ASSERT_TRUE(allowed);
  EXPECT_TRUE(*allowed->gpu(0).MigEnabled());
}

TEST_F(NvmlGpuTest, MissingExplicitLibraryIsNotFound) {
  GpuOptions options;
  options.nvml_library = tmp_.File("libnothere.so");
  auto gpus = OpenGpus(options);
  ASSERT_FALSE(gpus);
  EXPECT_EQ(gpus.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(gpus.error().message(), HasSubstr("libnothere.so"));
}

TEST_F(NvmlGpuTest, EnvironmentNamesTheLibrary) {
  UseScenario({{"gpus", {V100()}}});
  ScopedEnv lib("ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH);
  auto gpus = OpenGpus(GpuOptions{});
  ASSERT_TRUE(gpus) << gpus.error().message();
  EXPECT_EQ((*gpus)->size(), 1u);
}

TEST_F(NvmlGpuTest, NotAnNvmlLibraryIsRejected) {
  GpuOptions options;
  options.nvml_library = "libm.so.6";
  auto gpus = OpenGpus(options);
  ASSERT_FALSE(gpus);
  EXPECT_EQ(gpus.error().code(), ErrorCode::kInternal);
  EXPECT_THAT(gpus.error().message(), HasSubstr("nvmlInit_v2"));
}

TEST_F(NvmlGpuTest, MalformedScenarioSurfacesTheEmulatorsMessage) {
  config_ = std::make_unique<ScopedEnv>("ZEUS_EMULATOR_CONFIG", tmp_.Write("bad.json", "{\"gpus\": [ {,] }"));
  auto gpus = OpenGpus(Options());
  ASSERT_FALSE(gpus);
  EXPECT_THAT(gpus.error().message(), HasSubstr("bad.json"));
}

}  // namespace
}  // namespace zeus::device

namespace zeus::device {
namespace {

// A GH200-like GPU: 300 W drawn by the GPU, 100 W by the Grace CPU and 20 W
// by its memory, so the module draws 420 W.
json SuperchipGpu(bool gpu_scope = true) {
  json gpu = {{"name", "NVIDIA GH200 480GB"}, {"architecture", "hopper"}, {"min_power_limit_w", 100},
              {"max_power_limit_w", 900},      {"default_power_limit_w", 900}, {"energy_counter", true},
              {"power_w", 300.0},              {"module", {{"cpu_power_w", 100.0}, {"cpu_memory_power_w", 20.0}}}};
  if (!gpu_scope) gpu["unsupported"] = {"gpu_scope_power"};
  return gpu;
}

// Installs a sink that keeps every record, and forgets LogOnce's keys, for
// the test's lifetime.
class CapturedLog {
 public:
  CapturedLog() {
    ResetLogOnceKeysForTesting();
    previous_ = SetLogSink([this](const LogRecord& r) {
      std::lock_guard lock(mu_);
      records_.push_back({r.level, std::string(r.component), std::string(r.message)});
    });
  }
  ~CapturedLog() {
    SetLogSink(previous_);
    ResetLogOnceKeysForTesting();
  }
  struct Record {
    LogLevel level;
    std::string component;
    std::string message;
  };
  std::vector<Record> records() const {
    std::lock_guard lock(mu_);
    return records_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Record> records_;
  LogSink previous_;
};

using NvmlPowerScopeTest = NvmlGpuTest;

TEST_F(NvmlPowerScopeTest, GpuScopeReadsTheGpuAloneWithoutWarning) {
  CapturedLog log;
  UseScenario({{"gpus", {SuperchipGpu()}}});
  auto gpus = Open(Options());
  Gpu& g = gpus->gpu(0);
  EXPECT_EQ(*g.InstantPowerMw(), 300000u);
  EXPECT_EQ(*g.AveragePowerMw(), 300000u);
  EXPECT_EQ(*g.PowerUsageMw(), 300000u);  // not the plain call's 420 W module reading
  EXPECT_EQ(*g.PowerReadingScope(), PowerScope::kGpu);
  EXPECT_TRUE(log.records().empty());
}

TEST_F(NvmlPowerScopeTest, WithoutTheGpuScopeReadsTheModuleAndWarnsOncePerGpu) {
  CapturedLog log;
  UseScenario({{"gpus", {SuperchipGpu(false), SuperchipGpu(false), V100()}}});
  auto gpus = Open(Options());
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < 2; ++i) {
      Gpu& g = gpus->gpu(i);
      EXPECT_EQ(*g.InstantPowerMw(), 420000u);
      EXPECT_EQ(*g.AveragePowerMw(), 420000u);
      EXPECT_EQ(*g.PowerUsageMw(), 420000u);
      EXPECT_EQ(*g.PowerReadingScope(), PowerScope::kModule);
    }
    EXPECT_EQ(*gpus->gpu(2).PowerReadingScope(), PowerScope::kGpu);
  }
  auto records = log.records();
  ASSERT_EQ(records.size(), 2u);  // one per module GPU, however many reads
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(records[i].level, LogLevel::kWarning);
    EXPECT_EQ(records[i].component, "device");
    EXPECT_THAT(records[i].message, HasSubstr(fmt::format("GPU {}", i)));
    EXPECT_THAT(records[i].message, HasSubstr("module"));
  }
}

TEST_F(NvmlPowerScopeTest, WithoutPowerFieldsTheReadingIsUnscoped) {
  CapturedLog log;
  json gpu = V100(180.0);
  gpu["unsupported"] = {"instant_power", "average_power"};
  UseScenario({{"gpus", {gpu}}});
  auto gpus = Open(Options());
  Gpu& g = gpus->gpu(0);
  EXPECT_EQ(g.InstantPowerMw().error().code(), ErrorCode::kNotSupported);
  EXPECT_EQ(*g.PowerUsageMw(), 180000u);  // the plain call
  EXPECT_EQ(*g.PowerReadingScope(), PowerScope::kUnscoped);
  EXPECT_TRUE(log.records().empty());
}

TEST_F(NvmlPowerScopeTest, AFailedReadLeavesTheScopeUnresolved) {
  CapturedLog log;
  UseScenario({{"gpus", {SuperchipGpu(false)}},
               {"faults", {{{"function", "nvmlDeviceGetFieldValues"}, {"return", "GPU_IS_LOST"}, {"max_failures", 1}}}}});
  auto gpus = Open(Options());
  Gpu& g = gpus->gpu(0);
  auto lost = g.InstantPowerMw();
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code(), ErrorCode::kDeviceLost);
  EXPECT_TRUE(log.records().empty());
  EXPECT_EQ(*g.InstantPowerMw(), 420000u);  // resolved at the next read
  EXPECT_EQ(*g.PowerReadingScope(), PowerScope::kModule);
  EXPECT_EQ(log.records().size(), 1u);
}

TEST(PowerScopeNameTest, Names) {
  EXPECT_EQ(PowerScopeName(PowerScope::kGpu), "gpu");
  EXPECT_EQ(PowerScopeName(PowerScope::kModule), "module");
  EXPECT_EQ(PowerScopeName(PowerScope::kUnscoped), "unscoped");
}

}  // namespace
}  // namespace zeus::device
