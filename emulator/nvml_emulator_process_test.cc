// Copyright 2026 The Zeus C++ Authors.
//
// Tests of libzeus-nvml-emulator.so's processes through its C API: the
// scenario's processes and their samples (period, timestamps, lastSeen,
// NOT_FOUND, INSUFFICIENT_SIZE, the bounded history), a GPU without
// per-process calls, attached real processes (an exited child disappears,
// another process sees an attachment), faults, power following the
// processes' load, and scenario errors naming the key.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"
#include "nvml_emulator_test_fixture.h"

namespace zeus::emulator::test {
namespace {

std::vector<nvmlProcessInfo_t> Running(nvmlDevice_t device) {
  unsigned int count = 0;
  nvmlReturn_t rc = nvmlDeviceGetComputeRunningProcesses_v3(device, &count, nullptr);
  if (rc == NVML_SUCCESS) return {};
  EXPECT_EQ(rc, NVML_ERROR_INSUFFICIENT_SIZE);
  std::vector<nvmlProcessInfo_t> infos(count);
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(device, &count, infos.data()), NVML_SUCCESS);
  infos.resize(count);
  return infos;
}

std::vector<unsigned int> RunningPids(nvmlDevice_t device) {
  std::vector<unsigned int> pids;
  for (const nvmlProcessInfo_t& info : Running(device)) pids.push_back(info.pid);
  return pids;
}

// The samples after `last_seen_us`; empty on NOT_FOUND.
std::vector<nvmlProcessUtilizationSample_t> Samples(nvmlDevice_t device, unsigned long long last_seen_us) {
  unsigned int count = 0;
  const nvmlReturn_t rc = nvmlDeviceGetProcessUtilization(device, nullptr, &count, last_seen_us);
  if (rc == NVML_ERROR_NOT_FOUND) return {};
  EXPECT_EQ(rc, NVML_ERROR_INSUFFICIENT_SIZE);
  std::vector<nvmlProcessUtilizationSample_t> samples(count);
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device, samples.data(), &count, last_seen_us), NVML_SUCCESS);
  samples.resize(count);
  return samples;
}

const std::string kTwoProcesses = R"(, "process_sample_period_ms": 100, "processes": [
    {"pid": 4242, "sm_util_percent": 30, "mem_util_percent": 10, "used_memory_mib": 512},
    {"pid": 4343, "sm_util_steps": [[0, 0], [0.5, 60]], "end_s": 2}])";

TEST_F(NvmlEmulatorTest, ScenarioProcessesAreRunningWithTheirMemory) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", kTwoProcesses)));
  Init();
  const std::vector<nvmlProcessInfo_t> running = Running(Handle(0));
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].pid, 4242u);
  EXPECT_EQ(running[0].usedGpuMemory, 512ull << 20);
  EXPECT_EQ(running[1].pid, 4343u);
  EXPECT_EQ(running[1].usedGpuMemory, NVML_VALUE_NOT_AVAILABLE);
  // A short buffer: INSUFFICIENT_SIZE with the count needed.
  unsigned int count = 1;
  nvmlProcessInfo_t one{};
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(Handle(0), &count, &one), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 2u);
  Advance(2 * kS);  // 4343 ends at 2 s
  EXPECT_EQ(RunningPids(Handle(0)), std::vector<unsigned int>{4242});
}

TEST_F(NvmlEmulatorTest, SamplesAreTakenEachPeriodWithTimestampsOnTheEmulatorClock) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", kTwoProcesses)));
  Init();
  nvmlDevice_t device = Handle(0);
  unsigned int count = 0;
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device, nullptr, &count, 0), NVML_ERROR_NOT_FOUND);  // none yet
  Advance(1 * kS);
  // 100 ms .. 1 s: 4242 at every instant (10); 4343 at those whose period
  // ends after 0.5 s (5; 0 % before, and a 0 % process has no sample).
  const std::vector<nvmlProcessUtilizationSample_t> all = Samples(device, 0);
  ASSERT_EQ(all.size(), 15u);
  EXPECT_EQ(all[0].pid, 4242u);
  EXPECT_EQ(all[0].timeStamp, 100'000u);
  EXPECT_EQ(all[0].smUtil, 30u);
  EXPECT_EQ(all[0].memUtil, 10u);
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LE(all[i - 1].timeStamp, all[i].timeStamp) << i;
  EXPECT_EQ(all.back().timeStamp, 1'000'000u);
  EXPECT_EQ(all.back().pid, 4343u);
  EXPECT_EQ(all.back().smUtil, 60u);
  // Only samples newer than lastSeen.
  const std::vector<nvmlProcessUtilizationSample_t> newer = Samples(device, 900'000);
  ASSERT_EQ(newer.size(), 2u);
  EXPECT_EQ(newer[0].timeStamp, 1'000'000u);
  EXPECT_EQ(newer[1].timeStamp, 1'000'000u);
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device, nullptr, &count, 1'000'000), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(count, 0u);
  // A buffer too short: INSUFFICIENT_SIZE and the count needed.
  nvmlProcessUtilizationSample_t one{};
  count = 1;
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device, &one, &count, 0), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 15u);
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device, &one, nullptr, 0), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(NvmlEmulatorTest, SampleHistoryIsBounded) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "process_sample_period_ms": 100,
                                                  "processes": [{"pid": 7, "sm_util_percent": 50}])")));
  Init();
  Advance(60 * kS);
  const std::vector<nvmlProcessUtilizationSample_t> all = Samples(Handle(0), 0);
  ASSERT_EQ(all.size(), 50u);  // the last 5 s
  EXPECT_EQ(all.front().timeStamp, 55'100'000u);
  EXPECT_EQ(all.back().timeStamp, 60'000'000u);
}

TEST_F(NvmlEmulatorTest, GpuWithoutPerProcessCallsRefusesThem) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "unsupported": ["processes"])") + "," + Gpu()));
  Init();
  unsigned int count = 0;
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(Handle(0), &count, nullptr), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(Handle(0), nullptr, &count, 0), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(zeusEmulatorAttachProcess(0, static_cast<unsigned int>(::getpid()), 10), ZEUS_EMULATOR_ERROR_WRONG_MODE);
  // The other GPU answers: no process.
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(Handle(1), &count, nullptr), NVML_SUCCESS);
  EXPECT_EQ(count, 0u);
}

TEST_F(NvmlEmulatorTest, AttachedChildThatExitsDisappears) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "process_sample_period_ms": 100)")));
  Init();
  const pid_t child = ::fork();
  if (child == 0) {
    for (;;) ::pause();
  }
  ASSERT_GT(child, 0);
  const auto pid = static_cast<unsigned int>(child);
  ASSERT_EQ(zeusEmulatorAttachProcess(0, pid, 40), ZEUS_EMULATOR_OK);
  EXPECT_EQ(zeusEmulatorAttachProcess(0, pid, 40), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT);  // already attached
  EXPECT_EQ(RunningPids(Handle(0)), std::vector<unsigned int>{pid});
  Advance(200 * kMs);
  std::vector<nvmlProcessUtilizationSample_t> samples = Samples(Handle(0), 0);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].pid, pid);
  EXPECT_EQ(samples[1].smUtil, 40u);
  const unsigned long long last_seen = samples[1].timeStamp;

  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(RunningPids(Handle(0)).empty());
  Advance(500 * kMs);
  EXPECT_TRUE(Samples(Handle(0), last_seen).empty());  // NOT_FOUND: no new sample
  EXPECT_EQ(Samples(Handle(0), 0).size(), 2u);          // the old ones stay in the history
  EXPECT_EQ(zeusEmulatorAttachProcess(0, pid, 40), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT);  // no such process
}

TEST_F(NvmlEmulatorTest, SetAndDetachChangeTheSamples) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", R"(, "process_sample_period_ms": 100)")));
  Init();
  const auto self = static_cast<unsigned int>(::getpid());
  EXPECT_EQ(zeusEmulatorSetProcessUtilization(0, self, 10), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT);  // not attached
  EXPECT_EQ(zeusEmulatorAttachProcess(0, self, 101), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeusEmulatorAttachProcess(5, self, 10), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(zeusEmulatorAttachProcess(0, self, 10), ZEUS_EMULATOR_OK);
  Advance(100 * kMs);
  ASSERT_EQ(zeusEmulatorSetProcessUtilization(0, self, 70), ZEUS_EMULATOR_OK);
  Advance(100 * kMs);
  ASSERT_EQ(zeusEmulatorDetachProcess(0, self), ZEUS_EMULATOR_OK);
  Advance(100 * kMs);
  const std::vector<nvmlProcessUtilizationSample_t> samples = Samples(Handle(0), 0);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].smUtil, 10u);
  EXPECT_EQ(samples[1].smUtil, 70u);
  EXPECT_TRUE(RunningPids(Handle(0)).empty());
  EXPECT_EQ(zeusEmulatorDetachProcess(0, self), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT);
}

TEST_F(NvmlEmulatorTest, AnotherProcessSeesAnAttachment) {
  UseScenario(Manual(Gpu()));
  Init();
  const auto self = static_cast<unsigned int>(::getpid());
  ASSERT_EQ(zeusEmulatorAttachProcess(0, self, 25), ZEUS_EMULATOR_OK);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);  // the child loads the scenario itself
  const pid_t child = ::fork();
  if (child == 0) {
    if (nvmlInit_v2() != NVML_SUCCESS) ::_exit(2);
    nvmlDevice_t device = nullptr;
    if (nvmlDeviceGetHandleByIndex_v2(0, &device) != NVML_SUCCESS) ::_exit(3);
    nvmlProcessInfo_t info{};
    unsigned int count = 1;
    if (nvmlDeviceGetComputeRunningProcesses_v3(device, &count, &info) != NVML_SUCCESS) ::_exit(4);
    ::_exit(count == 1 && info.pid == self ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(NvmlEmulatorTest, FaultsApplyToPerProcessCalls) {
  UseScenario(Manual(Gpu(), R"("faults": [{"function": "nvmlDeviceGetProcessUtilization", "return": "GPU_IS_LOST"},
                                          {"function": "nvmlDeviceGetComputeRunningProcesses_v3",
                                           "return": "UNKNOWN", "after_calls": 1}], )"));
  Init();
  unsigned int count = 0;
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(Handle(0), nullptr, &count, 0), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(Handle(0), &count, nullptr), NVML_SUCCESS);
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(Handle(0), &count, nullptr), NVML_ERROR_UNKNOWN);
}

// Power: idle 50 W + (200 W - 50 W) x load, without processes the demand.
TEST_F(NvmlEmulatorTest, PowerFollowsTheProcessesLoad) {
  UseScenario(Manual(Gpu(R"("power_w": 200, "idle_power_w": 50)",
                         kIdeal + R"(, "processes": [{"pid": 9, "sm_util_percent": 20, "start_s": 1, "end_s": 2}])")));
  Init();
  nvmlDevice_t device = Handle(0);
  const auto self = static_cast<unsigned int>(::getpid());
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 200'000u);  // no process: the demand
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 280'000u);  // 20 %: 50 + 30 W
  ASSERT_EQ(zeusEmulatorAttachProcess(0, self, 50), ZEUS_EMULATOR_OK);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 405'000u);  // 50 %: 125 W
  ASSERT_EQ(zeusEmulatorSetProcessUtilization(0, self, 100), ZEUS_EMULATOR_OK);
  ASSERT_EQ(zeusEmulatorSetIdle(0, 1), ZEUS_EMULATOR_OK);  // explicit idle wins
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 455'000u);
  ASSERT_EQ(zeusEmulatorSetIdle(0, 0), ZEUS_EMULATOR_OK);
  ASSERT_EQ(zeusEmulatorSetProcessUtilization(0, self, 0), ZEUS_EMULATOR_OK);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 505'000u);  // attached but 0 %: idle power
  ASSERT_EQ(zeusEmulatorDetachProcess(0, self), ZEUS_EMULATOR_OK);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 705'000u);  // none again: the demand
}

TEST_F(NvmlEmulatorTest, BadProcessesNameTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"(, "processes": [{"pid": 1, "sm_util_percent": 120}])", "gpus[0].processes[0].sm_util_percent"},
      {R"(, "processes": [{"pid": 1}])", "gpus[0].processes[0]: needs exactly one of"},
      {R"(, "processes": [{"pid": 1, "sm_util_percent": 5, "cpu": 1}])", "gpus[0].processes[0]: unknown key \"cpu\""},
      {R"(, "processes": [{"pid": 1, "sm_util_steps": [[1, 5], [0.5, 6]]}])",
       "gpus[0].processes[0].sm_util_steps[1][0]"},
      {R"(, "processes": [{"pid": 1, "sm_util_percent": 5, "start_s": 2, "end_s": 1}])",
       "gpus[0].processes[0].end_s"},
      {R"(, "processes": [{"pid": 3, "sm_util_percent": 5}, {"pid": 3, "sm_util_percent": 5}])",
       "gpus[0].processes[1].pid"},
      {R"(, "process_sample_period_ms": 1)", "gpus[0].process_sample_period_ms"},
  };
  for (const auto& [extra, expected] : cases) {
    UseScenario(Manual(Gpu(R"("power_w": 200)", extra)));
    EXPECT_EQ(nvmlInit_v2(), NVML_ERROR_UNKNOWN) << extra;
    EXPECT_NE(std::string(zeusEmulatorLastError()).find(expected), std::string::npos)
        << extra << " -> " << zeusEmulatorLastError();
  }
}

}  // namespace
}  // namespace zeus::emulator::test
