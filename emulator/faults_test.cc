// Copyright 2026 The Zeus C++ Authors.

#include "faults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "return_codes.h"

namespace zeus::emulator {
namespace {

constexpr ApiFunction kSetLimit = ApiFunction::nvmlDeviceSetPowerManagementLimit;
constexpr ApiFunction kGetPower = ApiFunction::nvmlDeviceGetPowerUsage;
constexpr ApiFunction kGetCount = ApiFunction::nvmlDeviceGetCount_v2;
constexpr ApiFunction kDriverVersion = ApiFunction::nvmlSystemGetDriverVersion;

FaultSpec Rule(std::optional<ApiFunction> function, std::optional<int> gpu, nvmlReturn_t code) {
  FaultSpec spec;
  spec.function = function;
  spec.gpu = gpu;
  spec.return_code = code;
  return spec;
}

// A latency rule that fires stops the search (first firing rule wins), and a
// hang rule's action blocks in Perform until released; later hangs return.
TEST(EmulatorFaultInjectorTest, LatencyAndHangActions) {
  FaultSpec slow = Rule(kGetPower, 0, NVML_SUCCESS);
  slow.latency_ns = 2'000'000;
  slow.max_failures = 1;
  FaultSpec hang = Rule(kGetPower, std::nullopt, NVML_ERROR_TIMEOUT);
  hang.hang = true;
  FaultInjector faults({slow, hang}, 2);
  const FaultAction first = faults.Decide(kGetPower, 0);
  EXPECT_EQ(first.latency_ns, 2'000'000);
  EXPECT_FALSE(first.hang);
  EXPECT_EQ(faults.Perform(first), NVML_SUCCESS);  // slow, then the call works
  const FaultAction second = faults.Decide(kGetPower, 0);  // the latency rule is used up
  EXPECT_TRUE(second.hang);
  EXPECT_EQ(second.code, NVML_ERROR_TIMEOUT);
  std::atomic<nvmlReturn_t> result{NVML_SUCCESS};
  std::thread caller([&] { result = faults.Perform(second); });
  // Readiness: the call is blocked (the deadline only stops a broken test).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (faults.HungCalls() < 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  EXPECT_EQ(faults.HungCalls(), 1u);
  faults.ReleaseHungCalls();
  caller.join();
  EXPECT_EQ(result, NVML_ERROR_TIMEOUT);
  EXPECT_EQ(faults.HungCalls(), 0u);
  EXPECT_EQ(faults.Perform(faults.Decide(kGetPower, 1)), NVML_ERROR_TIMEOUT);  // released for good
  EXPECT_EQ(faults.CallCount(kGetPower, -1), 3u);
}

TEST(EmulatorFaultInjectorTest, NoRulesNeverFailsAndCounts) {
  FaultInjector faults({}, 2);
  EXPECT_EQ(faults.OnCall(kGetPower, 0), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kGetPower, 1), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kGetPower, 1), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kGetCount, kNoDevice), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kGetPower, kUnknownDevice), NVML_SUCCESS);
  EXPECT_EQ(faults.CallCount(kGetPower, 0), 1u);
  EXPECT_EQ(faults.CallCount(kGetPower, 1), 2u);
  EXPECT_EQ(faults.CallCount(kGetPower, -1), 4u);  // includes the unknown handle
  EXPECT_EQ(faults.CallCount(kGetPower, 2), 0u);
  EXPECT_EQ(faults.CallCount(kGetCount, -1), 1u);
  EXPECT_EQ(faults.CallCount(std::nullopt, -1), 5u);
  EXPECT_EQ(faults.CallCount(std::nullopt, 1), 2u);
}

TEST(EmulatorFaultInjectorTest, AlwaysFailsOnTheNamedGpuOnly) {
  FaultInjector faults({Rule(kSetLimit, 0, NVML_ERROR_NO_PERMISSION)}, 2);
  EXPECT_EQ(faults.OnCall(kSetLimit, 0), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(faults.OnCall(kSetLimit, 0), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(faults.OnCall(kSetLimit, 1), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kSetLimit, kUnknownDevice), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kGetPower, 0), NVML_SUCCESS);
  EXPECT_EQ(faults.CallCount(kSetLimit, 0), 2u);  // failed calls count too
}

TEST(EmulatorFaultInjectorTest, RuleWithoutGpuHitsEveryCall) {
  FaultInjector faults({Rule(kGetPower, std::nullopt, NVML_ERROR_UNKNOWN)}, 2);
  EXPECT_EQ(faults.OnCall(kGetPower, 0), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(faults.OnCall(kGetPower, 1), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(faults.OnCall(kGetPower, kUnknownDevice), NVML_ERROR_UNKNOWN);
}

TEST(EmulatorFaultInjectorTest, NamedDevicelessFunctionIgnoresTheGpu) {
  FaultInjector faults({Rule(kGetCount, 1, NVML_ERROR_DRIVER_NOT_LOADED)}, 2);
  EXPECT_EQ(faults.OnCall(kGetCount, kNoDevice), NVML_ERROR_DRIVER_NOT_LOADED);
}

TEST(EmulatorFaultInjectorTest, StarMatchesDeviceFunctionsOnly) {
  FaultInjector faults({Rule(std::nullopt, 1, NVML_ERROR_GPU_IS_LOST)}, 2);
  EXPECT_EQ(faults.OnCall(kGetPower, 1), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(faults.OnCall(kSetLimit, 1), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(faults.OnCall(kGetPower, 0), NVML_SUCCESS);
  // "GPU 1 is lost" leaves enumeration and system queries working.
  EXPECT_EQ(faults.OnCall(kGetCount, kNoDevice), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kDriverVersion, kNoDevice), NVML_SUCCESS);

  FaultInjector everything({Rule(std::nullopt, std::nullopt, NVML_ERROR_UNKNOWN)}, 1);
  EXPECT_EQ(everything.OnCall(kGetCount, kNoDevice), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(everything.OnCall(kDriverVersion, kNoDevice), NVML_SUCCESS);
}

TEST(EmulatorFaultInjectorTest, AfterCallsLetsTheFirstCallsThrough) {
  FaultSpec spec = Rule(kSetLimit, std::nullopt, NVML_ERROR_NO_PERMISSION);
  spec.after_calls = 3;
  FaultInjector faults({spec}, 2);
  EXPECT_EQ(faults.OnCall(kSetLimit, 0), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kSetLimit, 1), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kGetPower, 0), NVML_SUCCESS);  // not a matching call
  EXPECT_EQ(faults.OnCall(kSetLimit, 0), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kSetLimit, 0), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(faults.OnCall(kSetLimit, 1), NVML_ERROR_NO_PERMISSION);
}

TEST(EmulatorFaultInjectorTest, MaxFailuresStopsTheRule) {
  FaultSpec spec = Rule(kSetLimit, std::nullopt, NVML_ERROR_INVALID_ARGUMENT);
  spec.after_calls = 2;
  spec.max_failures = 1;
  FaultInjector faults({spec}, 1);
  EXPECT_EQ(faults.OnCall(kSetLimit, 0), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kSetLimit, 0), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kSetLimit, 0), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(faults.OnCall(kSetLimit, 0), NVML_SUCCESS);
  EXPECT_EQ(faults.OnCall(kSetLimit, 0), NVML_SUCCESS);
}

std::vector<bool> FailurePattern(std::uint64_t seed, double probability, int calls) {
  FaultSpec spec = Rule(kGetPower, std::nullopt, NVML_ERROR_TIMEOUT);
  spec.probability = probability;
  spec.seed = seed;
  FaultInjector faults({spec}, 1);
  std::vector<bool> failed;
  for (int i = 0; i < calls; ++i) failed.push_back(faults.OnCall(kGetPower, 0) != NVML_SUCCESS);
  return failed;
}

TEST(EmulatorFaultInjectorTest, ProbabilityIsDeterministicPerSeed) {
  const std::vector<bool> a = FailurePattern(7, 0.3, 10'000);
  EXPECT_EQ(a, FailurePattern(7, 0.3, 10'000));
  EXPECT_NE(a, FailurePattern(8, 0.3, 10'000));
  const auto failures = std::count(a.begin(), a.end(), true);
  EXPECT_GT(failures, 2'700);
  EXPECT_LT(failures, 3'300);
  // The n-th decision is U(seed, n) < p.
  for (std::size_t n = 0; n < 100; ++n) EXPECT_EQ(a[n], FaultInjector::Uniform(7, n) < 0.3) << n;
  const std::vector<bool> never = FailurePattern(7, 0.0, 1'000);
  EXPECT_EQ(std::count(never.begin(), never.end(), true), 0);
}

TEST(EmulatorFaultInjectorTest, FirstFiringRuleWins) {
  FaultSpec later = Rule(kGetPower, std::nullopt, NVML_ERROR_UNKNOWN);
  FaultSpec first = Rule(kGetPower, std::nullopt, NVML_ERROR_TIMEOUT);
  first.after_calls = 1;
  FaultInjector faults({first, later}, 1);
  EXPECT_EQ(faults.OnCall(kGetPower, 0), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(faults.OnCall(kGetPower, 0), NVML_ERROR_TIMEOUT);
}

TEST(EmulatorFaultInjectorTest, CountsAreExactUnderConcurrency) {
  FaultSpec spec = Rule(kGetPower, std::nullopt, NVML_ERROR_TIMEOUT);
  spec.after_calls = 1'000;
  FaultInjector faults({spec}, 2);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        if (faults.OnCall(kGetPower, t % 2) != NVML_SUCCESS) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(faults.CallCount(kGetPower, -1), 4'000u);
  EXPECT_EQ(faults.CallCount(kGetPower, 0), 2'000u);
  EXPECT_EQ(failures.load(), 3'000);
}

TEST(EmulatorReturnCodesTest, NamesAndTexts) {
  EXPECT_EQ(ReturnCodeFromName("NO_PERMISSION"), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(ReturnCodeFromName("NVML_ERROR_GPU_IS_LOST"), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(ReturnCodeFromName("not_supported"), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(ReturnCodeFromName("SUCCESS"), NVML_SUCCESS);
  EXPECT_EQ(ReturnCodeFromName("NOPE"), std::nullopt);
  EXPECT_STREQ(ReturnCodeText(NVML_ERROR_INSUFFICIENT_SIZE), "Insufficient Size");
  EXPECT_STREQ(ReturnCodeText(12345), "Unknown Error");
}

TEST(EmulatorApiFunctionsTest, NamesRoundTrip) {
  for (int i = 0; i < kApiFunctionCount; ++i) {
    const auto function = static_cast<ApiFunction>(i);
    EXPECT_EQ(ApiFunctionFromName(ApiFunctionName(function)), function);
  }
  EXPECT_EQ(ApiFunctionName(ApiFunction::nvmlDeviceGetPowerUsage), "nvmlDeviceGetPowerUsage");
  EXPECT_TRUE(IsDeviceFunction(ApiFunction::nvmlDeviceGetCount_v2));
  EXPECT_FALSE(IsDeviceFunction(ApiFunction::nvmlSystemGetDriverVersion));
  EXPECT_FALSE(IsFaultable(ApiFunction::nvmlShutdown));
  EXPECT_TRUE(IsFaultable(ApiFunction::nvmlSystemGetNVMLVersion));
}

TEST(EmulatorApiFunctionsTest, AmdSmiFunctionsFollowTheNvmlOnes) {
  EXPECT_EQ(ApiFunctionName(ApiFunction::amdsmi_get_power_info), "amdsmi_get_power_info");
  EXPECT_EQ(ApiFunctionFromName("amdsmi_set_power_cap"), ApiFunction::amdsmi_set_power_cap);
  EXPECT_EQ(ApiOf(ApiFunction::nvmlDeviceGetPowerUsage), Api::kNvml);
  EXPECT_EQ(ApiOf(ApiFunction::amdsmi_init), Api::kAmdSmi);
  // "*" matches the calls on a processor handle.
  EXPECT_TRUE(IsDeviceFunction(ApiFunction::amdsmi_get_power_info));
  EXPECT_TRUE(IsDeviceFunction(ApiFunction::amdsmi_get_processor_type));
  EXPECT_FALSE(IsDeviceFunction(ApiFunction::amdsmi_get_socket_handles));
  EXPECT_FALSE(IsDeviceFunction(ApiFunction::amdsmi_get_processor_handles));
  EXPECT_FALSE(IsDeviceFunction(ApiFunction::amdsmi_get_lib_version));
  EXPECT_FALSE(IsFaultable(ApiFunction::amdsmi_init));
  EXPECT_FALSE(IsFaultable(ApiFunction::amdsmi_shut_down));
  EXPECT_FALSE(IsFaultable(ApiFunction::amdsmi_status_code_to_string));
  EXPECT_TRUE(IsFaultable(ApiFunction::amdsmi_get_lib_version));
}

TEST(EmulatorReturnCodesTest, AmdSmiNamesAndTexts) {
  EXPECT_EQ(AmdSmiStatusFromName("AMDSMI_STATUS_NOT_FOUND"), AMDSMI_STATUS_NOT_FOUND);
  EXPECT_EQ(AmdSmiStatusFromName("no_perm"), AMDSMI_STATUS_NO_PERM);
  EXPECT_EQ(AmdSmiStatusFromName("GPU_IS_LOST"), std::nullopt);
  EXPECT_EQ(ApiCodeFromName(Api::kAmdSmi, "UNKNOWN_ERROR"), -1);  // 0xFFFFFFFF's bits
  EXPECT_EQ(ApiCodeFromName(Api::kNvml, "UNKNOWN"), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(ApiOfCodeName("amdsmi_status_busy"), Api::kAmdSmi);
  EXPECT_EQ(ApiOfCodeName("NVML_ERROR_UNKNOWN"), Api::kNvml);
  EXPECT_EQ(ApiOfCodeName("BUSY"), std::nullopt);
  EXPECT_STREQ(AmdSmiStatusText(AMDSMI_STATUS_BUSY), "BUSY: the device is busy");
  EXPECT_EQ(AmdSmiStatusText(4242), nullptr);
}

}  // namespace
}  // namespace zeus::emulator
