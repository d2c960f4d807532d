// Copyright 2026 The Zeus C++ Authors.
//
// Tests of libzeus-amdsmi-emulator.so through its C API: every reading with
// its unit (socket power W, caps µW, energy as accumulator x resolution µJ,
// temperatures in whole °C as the real library, clocks in Hz), the N/A fields, a die that
// reports no power, energy against ground truth, power caps (range,
// rounding, privileges, shared between processes), the performance level,
// fault rules naming AMD SMI functions, and the core's controls (idle, the
// manual clock through EmulatorControl) on AMD GPUs.

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <memory>
#include <string>

#include "amdsmi_emulator_test_fixture.h"
#include "device/amdsmi/amdsmi_abi.h"
#include "emulator/control/control.h"
#include "emulator_control.h"

namespace zeus::emulator::test {
namespace {

// Runs `child` in a forked process; returns its exit status (0 = success).
template <class Child>
int RunInChild(Child child) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(child());
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

// ---- Readings and their units ----------------------------------------------------------------

TEST_F(AmdSmiEmulatorTest, ReadingsHaveAmdSmisUnits) {
  UseScenario(AmdManual(AmdGpu(R"("power_w": 299.6)", R"(, "temperature_c": 55,
      "supported_graphics_clocks_mhz": [500, 2100, 1300], "supported_memory_clocks_mhz": [1300, 900])")));
  Init();
  const amdsmi_processor_handle gpu = Processor(0);
  const amdsmi_power_info_t power = PowerInfo(gpu);
  EXPECT_EQ(power.current_socket_power, 300u);  // W, rounded
  EXPECT_EQ(power.average_socket_power, 300u);
  EXPECT_EQ(power.power_limit, 750u);
  EXPECT_EQ(power.gfx_voltage, AMDSMI_NOT_AVAILABLE_U32);
  EXPECT_EQ(amdsmi_get_power_info(gpu, nullptr), AMDSMI_STATUS_INVAL);

  amdsmi_power_cap_info_t cap{};
  ASSERT_EQ(amdsmi_get_power_cap_info(gpu, 0, &cap), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(cap.power_cap, 750'000'000u);  // µW
  EXPECT_EQ(cap.default_power_cap, 750'000'000u);
  EXPECT_EQ(cap.min_power_cap, 200'000'000u);
  EXPECT_EQ(cap.max_power_cap, 750'000'000u);
  EXPECT_EQ(cap.dpm_cap, 0u);
  EXPECT_EQ(amdsmi_get_power_cap_info(gpu, 1, &cap), AMDSMI_STATUS_INVAL);

  int64_t celsius = 0;
  ASSERT_EQ(amdsmi_get_temp_metric(gpu, AMDSMI_TEMPERATURE_TYPE_EDGE, AMDSMI_TEMP_CURRENT, &celsius),
            AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(celsius, 55);
  ASSERT_EQ(amdsmi_get_temp_metric(gpu, AMDSMI_TEMPERATURE_TYPE_HOTSPOT, AMDSMI_TEMP_CURRENT, &celsius),
            AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(celsius, 55);
  EXPECT_EQ(amdsmi_get_temp_metric(gpu, 2, AMDSMI_TEMP_CURRENT, &celsius), AMDSMI_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(amdsmi_get_temp_metric(gpu, AMDSMI_TEMPERATURE_TYPE_EDGE, 1, &celsius), AMDSMI_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(amdsmi_get_temp_metric(gpu, AMDSMI_TEMPERATURE_TYPE_EDGE, AMDSMI_TEMP_CURRENT, nullptr),
            AMDSMI_STATUS_INVAL);

  amdsmi_frequencies_t clocks{};
  ASSERT_EQ(amdsmi_get_clk_freq(gpu, AMDSMI_CLK_TYPE_GFX, &clocks), AMDSMI_STATUS_SUCCESS);
  ASSERT_EQ(clocks.num_supported, 3u);
  EXPECT_EQ(clocks.frequency[0], 500'000'000u);  // Hz, ascending
  EXPECT_EQ(clocks.frequency[1], 1'300'000'000u);
  EXPECT_EQ(clocks.frequency[2], 2'100'000'000u);
  EXPECT_EQ(clocks.current, 2u);  // the highest
  ASSERT_EQ(amdsmi_get_clk_freq(gpu, AMDSMI_CLK_TYPE_MEM, &clocks), AMDSMI_STATUS_SUCCESS);
  ASSERT_EQ(clocks.num_supported, 2u);
  EXPECT_EQ(clocks.frequency[0], 900'000'000u);
  EXPECT_EQ(clocks.current, 1u);
  EXPECT_EQ(amdsmi_get_clk_freq(gpu, 1, &clocks), AMDSMI_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(amdsmi_get_clk_freq(gpu, AMDSMI_CLK_TYPE_GFX, nullptr), AMDSMI_STATUS_INVAL);

  // AUTO (the default level) unlocks clocks; other levels are not modelled.
  EXPECT_EQ(amdsmi_set_gpu_perf_level(gpu, AMDSMI_DEV_PERF_LEVEL_AUTO), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(amdsmi_set_gpu_perf_level(gpu, 1), AMDSMI_STATUS_NOT_SUPPORTED);
}

TEST_F(AmdSmiEmulatorTest, UnsupportedReadingsAreNotAvailable) {
  UseScenario(AmdManual(AmdGpu(R"("power_w": 300)", R"(, "unsupported": ["instant_power", "temperature"])") + "," +
                        AmdGpu(R"("power_w": 300)", R"(, "unsupported": ["average_power"])")));
  Init();
  amdsmi_power_info_t power = PowerInfo(Processor(0));
  EXPECT_EQ(power.current_socket_power, AMDSMI_NOT_AVAILABLE_U32);  // MI250-style: no instant power
  EXPECT_EQ(power.average_socket_power, 300u);
  int64_t celsius = 0;
  EXPECT_EQ(amdsmi_get_temp_metric(Processor(0), AMDSMI_TEMPERATURE_TYPE_EDGE, AMDSMI_TEMP_CURRENT, &celsius),
            AMDSMI_STATUS_NOT_SUPPORTED);
  power = PowerInfo(Processor(1));
  EXPECT_EQ(power.current_socket_power, 300u);
  EXPECT_EQ(power.average_socket_power, AMDSMI_NOT_AVAILABLE_U32);
}

TEST_F(AmdSmiEmulatorTest, ADieThatReportsNoPowerIsListedButReadsZero) {
  UseScenario(AmdManual(AmdGpu(R"("power_w": 300)", kIdeal + R"(, "reports_power": false)")));
  Init();
  const amdsmi_processor_handle die = Processor(0);
  ASSERT_NE(die, nullptr);
  Advance(10 * kS);
  const amdsmi_power_info_t power = PowerInfo(die);
  EXPECT_EQ(power.current_socket_power, 0u);
  EXPECT_EQ(power.average_socket_power, 0u);
  EXPECT_EQ(power.power_limit, 750u);
  uint64_t accumulator = 9;
  float resolution = 0;
  uint64_t timestamp = 0;
  ASSERT_EQ(amdsmi_get_energy_count(die, &accumulator, &resolution, &timestamp), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(accumulator, 0u);
  EXPECT_EQ(timestamp, 10 * kS);
  amdsmi_asic_info_t asic{};
  EXPECT_EQ(amdsmi_get_gpu_asic_info(die, &asic), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(CapUw(die), 750'000'000u);
}

// ---- Energy -----------------------------------------------------------------------------------

TEST_F(AmdSmiEmulatorTest, EnergyIsAccumulatorTimesResolutionAndMatchesPowerTimesTime) {
  UseScenario(AmdManual(AmdGpu(R"("power_w": 300)", kIdeal + R"(, "energy_counter_resolution_uj": 1.5)") + "," +
                        AmdGpu(R"("power_w": 300)", kIdeal)));
  Init();
  const amdsmi_processor_handle gpu = Processor(0);
  Advance(10 * kS);
  uint64_t accumulator = 0;
  float resolution = 0;
  uint64_t timestamp = 0;
  ASSERT_EQ(amdsmi_get_energy_count(gpu, &accumulator, &resolution, &timestamp), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(resolution, 1.5f);
  EXPECT_EQ(accumulator, 2'000'000'000u);  // 3000 J = 3e9 µJ in 1.5 µJ units
  EXPECT_EQ(timestamp, 10 * kS);           // emulated ns
  EXPECT_EQ(amdsmi_get_energy_count(gpu, nullptr, &resolution, &timestamp), AMDSMI_STATUS_INVAL);

  // The default resolution, 15.259 µJ; ground truth within 0.1 %.
  ASSERT_EQ(amdsmi_get_energy_count(Processor(1), &accumulator, &resolution, &timestamp), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(resolution, 15.259f);
  EXPECT_NEAR(static_cast<double>(accumulator) * resolution, 3e9, 3e9 * 1e-3);

  // The physics is the core's: a cap binds at once (no settling here).
  ASSERT_EQ(amdsmi_set_power_cap(gpu, 0, 200'000'000), AMDSMI_STATUS_SUCCESS);
  Advance(10 * kS);
  EXPECT_NEAR(EnergyUj(gpu), 300.0 * 10e6 + 200.0 * 10e6, 5e9 * 1e-3);
  EXPECT_NEAR(EnergyUj(Processor(1)), 6e9, 6e9 * 1e-3);
  EXPECT_EQ(PowerInfo(gpu).current_socket_power, 200u);
}

TEST_F(AmdSmiEmulatorTest, EnergyCounterUpdatesAtItsPeriodAndMayRunAtAWrongRate) {
  UseScenario(AmdManual(AmdGpu(R"("power_w": 300)") + "," +
                        AmdGpu(R"("power_w": 300)", kIdeal + R"(, "energy_counter_rate": 2)") + "," +
                        AmdGpu(R"("power_w": 300)", R"(, "energy_counter": false)")));
  Init();
  Advance(50 * kMs);
  EXPECT_EQ(EnergyUj(Processor(0)), 0.0);  // the counter moves every 100 ms by default
  Advance(50 * kMs);
  EXPECT_NEAR(EnergyUj(Processor(0)), 30e6, 30e6 * 1e-3);
  Advance(900 * kMs);
  EXPECT_NEAR(EnergyUj(Processor(1)), 2 * 300e6, 600e6 * 1e-3);  // a counter at twice the rate
  uint64_t accumulator = 0;
  float resolution = 0;
  uint64_t timestamp = 0;
  EXPECT_EQ(amdsmi_get_energy_count(Processor(2), &accumulator, &resolution, &timestamp),
            AMDSMI_STATUS_NOT_SUPPORTED);
}

// ---- Power caps ------------------------------------------------------------------------------

TEST_F(AmdSmiEmulatorTest, SetPowerCapChecksItsRangeAndRoundsDownToAWholeMilliwatt) {
  if (::geteuid() != 0) GTEST_SKIP() << "setting a cap needs root or CAP_SYS_ADMIN";
  UseScenario(AmdManual(AmdGpu(R"("power_w": 600)")));
  Init();
  const amdsmi_processor_handle gpu = Processor(0);
  EXPECT_EQ(amdsmi_set_power_cap(gpu, 0, 199'999'999), AMDSMI_STATUS_INVAL);
  EXPECT_EQ(amdsmi_set_power_cap(gpu, 0, 750'000'001), AMDSMI_STATUS_INVAL);
  EXPECT_EQ(amdsmi_set_power_cap(gpu, 1, 500'000'000), AMDSMI_STATUS_INVAL);
  EXPECT_EQ(CapUw(gpu), 750'000'000u);
  ASSERT_EQ(amdsmi_set_power_cap(gpu, 0, 500'000'999), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(CapUw(gpu), 500'000'000u);
  EXPECT_EQ(PowerInfo(gpu).power_limit, 500u);
  // The drawn power settles to the new cap (default 100 ms) and the
  // sensor's 1 s average follows.
  Advance(2 * kS);
  EXPECT_EQ(PowerInfo(gpu).current_socket_power, 500u);
  EXPECT_EQ(PowerInfo(gpu).average_socket_power, 500u);
}

// Runs `body` in a child that is nobody; returns its exit code.
template <class Body>
int AsNobody(Body body) {
  return RunInChild([&] {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
        ::setresuid(65534, 65534, 65534) != 0) {
      return 100;
    }
    return body();
  });
}

TEST_F(AmdSmiEmulatorTest, SettersNeedPrivilegesAndACapIsSharedBetweenProcesses) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  const std::string path = UseScenario(AmdManual(AmdGpu(), R"("state_file_shared": true, )"));
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  Init();
  ASSERT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_SUCCESS);  // the children load the scenario themselves
  const int refused = AsNobody([] {
    if (amdsmi_init(AMDSMI_INIT_AMD_GPUS) != AMDSMI_STATUS_SUCCESS) return 99;
    const amdsmi_processor_handle gpu = Processor(0);
    int ok = 0;
    if (CapUw(gpu) == 750'000'000u) ok |= 1;
    if (amdsmi_set_power_cap(gpu, 0, 300'000'000) == AMDSMI_STATUS_NO_PERM) ok |= 2;
    if (amdsmi_set_gpu_perf_level(gpu, AMDSMI_DEV_PERF_LEVEL_AUTO) == AMDSMI_STATUS_NO_PERM) ok |= 4;
    return ok;
  });
  EXPECT_EQ(refused, 7);
  // Root may; another process reads the cap.
  const int set = RunInChild([] {
    if (amdsmi_init(AMDSMI_INIT_AMD_GPUS) != AMDSMI_STATUS_SUCCESS) return 99;
    return amdsmi_set_power_cap(Processor(0), 0, 300'000'000) == AMDSMI_STATUS_SUCCESS ? 0 : 1;
  });
  EXPECT_EQ(set, 0);
  Init();
  EXPECT_EQ(CapUw(Processor(0)), 300'000'000u);
}

// ---- Faults ---------------------------------------------------------------------------------

TEST_F(AmdSmiEmulatorTest, FaultRuleNamingAnAmdSmiFunctionHitsOnlyItsGpu) {
  UseScenario(AmdManual(AmdGpu() + "," + AmdGpu(), R"("faults": [
      {"function": "amdsmi_get_power_info", "gpu": 1, "return": "AMDSMI_STATUS_NOT_FOUND"},
      {"function": "amdsmi_get_energy_count", "gpu": 0, "return": 4294967295, "after_calls": 1}], )"));
  Init();
  amdsmi_power_info_t info{};
  EXPECT_EQ(amdsmi_get_power_info(Processor(0), &info), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(amdsmi_get_power_info(Processor(1), &info), AMDSMI_STATUS_NOT_FOUND);
  EXPECT_EQ(amdsmi_get_power_info(Processor(1), &info), AMDSMI_STATUS_NOT_FOUND);
  EXPECT_EQ(CapUw(Processor(1)), 750'000'000u);  // other functions work
  uint64_t accumulator = 0;
  float resolution = 0;
  uint64_t timestamp = 0;
  EXPECT_EQ(amdsmi_get_energy_count(Processor(0), &accumulator, &resolution, &timestamp), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(amdsmi_get_energy_count(Processor(0), &accumulator, &resolution, &timestamp),
            AMDSMI_STATUS_UNKNOWN_ERROR);
  EXPECT_EQ(amdsmi_get_energy_count(Processor(1), &accumulator, &resolution, &timestamp), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(zeusEmulatorCallCount("amdsmi_get_power_info", 1), 2u);
  EXPECT_EQ(zeusEmulatorCallCount("amdsmi_get_power_info", -1), 3u);
}

TEST_F(AmdSmiEmulatorTest, StarFaultLosesOneGpuButEnumerationWorks) {
  UseScenario(AmdManual(AmdGpu() + "," + AmdGpu(),
                        R"("faults": [{"function": "*", "gpu": 1, "return": "DRIVER_NOT_LOADED"}], )"));
  Init();
  ASSERT_EQ(Processors().size(), 2u);  // sockets and processor handles still enumerate
  processor_type_t type = 0;
  EXPECT_EQ(amdsmi_get_processor_type(Processor(1), &type), AMDSMI_STATUS_DRIVER_NOT_LOADED);
  EXPECT_EQ(amdsmi_get_power_info(Processor(1), nullptr), AMDSMI_STATUS_DRIVER_NOT_LOADED);
  EXPECT_EQ(amdsmi_get_processor_type(Processor(0), &type), AMDSMI_STATUS_SUCCESS);
}

// ---- The core's controls on AMD GPUs ----------------------------------------------------------

TEST_F(AmdSmiEmulatorTest, WallClockRunsAtTheTimeScale) {
  UseScenario(R"({"vendor": "amd", "time_scale": 1000, "state_file": "@STATE@", "gpus": [)" + AmdGpu() + "]}");
  Init();
  unsigned long long before = 0;
  unsigned long long after = 0;
  ASSERT_EQ(zeusEmulatorNowNs(&before), ZEUS_EMULATOR_OK);
  ::usleep(2'000);
  ASSERT_EQ(zeusEmulatorNowNs(&after), ZEUS_EMULATOR_OK);
  EXPECT_GE(after - before, 2 * kS);  // 2 ms of wall time, x 1000
  EXPECT_EQ(zeusEmulatorAdvanceTimeNs(kS), ZEUS_EMULATOR_ERROR_WRONG_MODE);
}

TEST_F(AmdSmiEmulatorTest, IdleAndTheControlLibraryWorkOnAmdGpus) {
  UseScenario(AmdManual(AmdGpu(R"("power_w": 600)", kIdeal + R"(, "idle_power_w": 90)")));
  Init();
  auto control = EmulatorControl::Open(ZEUS_AMDSMI_EMULATOR_PATH);
  ASSERT_TRUE(control) << control.error().message();
  EXPECT_TRUE((*control)->manual());
  EmulatorClock clock(**control);
  clock.SleepFor(std::chrono::seconds(1));
  EXPECT_EQ(clock.Now(), std::chrono::seconds(1));
  EXPECT_NEAR(EnergyUj(Processor(0)), 600e6, 600e6 * 1e-3);
  ASSERT_EQ(zeusEmulatorSetIdle(0, 1), ZEUS_EMULATOR_OK);
  clock.SleepFor(std::chrono::seconds(2));
  EXPECT_EQ(PowerInfo(Processor(0)).average_socket_power, 90u);
  EXPECT_NEAR(EnergyUj(Processor(0)), 600e6 + 180e6, 780e6 * 1e-3);
}

}  // namespace
}  // namespace zeus::emulator::test
