// Copyright 2026 The Zeus C++ Authors.
//
// Tests of libzeus-nvml-emulator.so through its C API: the shared state file
// across processes and threads (paths, reuse, corruption, reboots, forks,
// concurrent writers) and its lock-free reads (consistent snapshots while
// another thread or process writes, readings that never go back).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"
#include "nvml_emulator_test_fixture.h"
#include "shared_state.h"  // the file layout only (the test links the library, not its internals)

namespace zeus::emulator::test {
namespace {

using ::testing::MatchesRegex;

// ---- Shared state across processes and threads ---------------------------------------------

TEST_F(NvmlEmulatorTest, StatePathAndReuse) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", kIdeal)));
  Init();
  EXPECT_EQ(std::string(zeusEmulatorStatePath()), state_path());
  EXPECT_TRUE(std::filesystem::exists(state_path()));
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(0), 150'000), NVML_SUCCESS);
  Advance(1 * kS);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  // Same scenario: the state is reused.
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 150'000u);
  EXPECT_EQ(EnergyMj(Handle(0)), 150'000u);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  // Edited scenario: the state starts over.
  UseScenario(Manual(Gpu(R"("power_w": 200)", kIdeal)) + "\n// edited\n");
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
  EXPECT_EQ(EnergyMj(Handle(0)), 0u);
}

TEST_F(NvmlEmulatorTest, CorruptStateFileIsReinitialised) {
  UseScenario(Manual(Gpu()));
  std::ofstream(state_path()) << "garbage that is not a state file";
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(Handle(0)), 200'000u);
}

TEST_F(NvmlEmulatorTest, DefaultStatePathIsDerivedFromTheScenarioPath) {
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir != nullptr ? old_tmpdir : "";
  ::setenv("TMPDIR", dir_.c_str(), 1);
  UseScenario(R"({"clock": "manual", "gpus": [)" + Gpu() + "]}");
  Init();
  const std::string path = zeusEmulatorStatePath();
  if (old_tmpdir != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_THAT(path, MatchesRegex(dir_.string() + "/zeus-nvml-emulator-[0-9a-f]{16}\\.state"));
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST_F(NvmlEmulatorTest, HandlesStayTheSameAcrossReinitialisation) {
  UseScenario(Manual(Gpu() + "," + Gpu()));
  Init();
  nvmlDevice_t second = Handle(1);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  unsigned int index = 9;
  EXPECT_EQ(nvmlDeviceGetIndex(second, &index), NVML_ERROR_UNINITIALIZED);
  Init();
  EXPECT_EQ(Handle(1), second);
  ASSERT_EQ(nvmlDeviceGetIndex(second, &index), NVML_SUCCESS);
  EXPECT_EQ(index, 1u);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  UseScenario(Manual(Gpu()), "one.json");
  Init();
  EXPECT_EQ(nvmlDeviceGetIndex(second, &index), NVML_ERROR_INVALID_ARGUMENT);  // no GPU 1 any more
}

TEST_F(NvmlEmulatorTest, StateFromBeforeARebootIsReinitialised) {
  UseScenario(R"({"state_file": "@STATE@", "gpus": [)" + Gpu() + "]}");
  Init();
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(0), 150'000), NVML_SUCCESS);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 150'000u);  // reused
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  {
    // Move the epoch (after magic, version, GPU count, hash and size) into the
    // future, as if the file had been written before a reboot.
    std::fstream file(state_path(), std::ios::in | std::ios::out | std::ios::binary);
    const std::int64_t future_ns = std::numeric_limits<std::int64_t>::max() / 4;
    file.seekp(32);
    file.write(reinterpret_cast<const char*>(&future_ns), sizeof(future_ns));
  }
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
}

// Runs `child` in a forked process; returns its exit status (0 = success).
template <class Child>
int RunInChild(Child child) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(child());
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

TEST_F(NvmlEmulatorTest, LimitSetInAnotherProcessIsSharedAndEnergyFollowsIt) {
  UseScenario(Manual(Gpu(R"("power_w": 200)", kIdeal)));
  Init();
  Advance(1 * kS);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);  // the child loads the scenario itself

  const int status = RunInChild([] {
    if (nvmlInit_v2() != NVML_SUCCESS) return 10;
    nvmlDevice_t device = nullptr;
    if (nvmlDeviceGetHandleByIndex_v2(0, &device) != NVML_SUCCESS) return 11;
    if (zeusEmulatorAdvanceTimeNs(kS) != 0) return 12;
    if (nvmlDeviceSetPowerManagementLimit(device, 120'000) != NVML_SUCCESS) return 13;
    if (zeusEmulatorAdvanceTimeNs(kS) != 0) return 14;
    if (nvmlShutdown() != NVML_SUCCESS) return 15;
    return 0;
  });
  ASSERT_EQ(status, 0);

  Init();
  nvmlDevice_t device = Handle(0);
  EXPECT_EQ(LimitMw(device), 120'000u);
  unsigned long long now = 0;
  ASSERT_EQ(zeusEmulatorNowNs(&now), ZEUS_EMULATOR_OK);
  EXPECT_EQ(now, 3 * kS);
  EXPECT_EQ(EnergyMj(device), 200'000u + 200'000u + 120'000u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(device), 640'000u);
}

TEST_F(NvmlEmulatorTest, ForkedChildOfAnInitialisedProcessSharesState) {
  UseScenario(Manual(Gpu(R"("power_w": 100)")));
  Init();
  nvmlDevice_t device = Handle(0);
  // Two children (inheriting our initialisation) and this process advance the
  // clock concurrently; no update may be lost.
  auto advance_many = [] {
    for (int i = 0; i < 500; ++i) {
      if (zeusEmulatorAdvanceTimeNs(kMs) != 0) return 1;
    }
    return 0;
  };
  const pid_t a = ::fork();
  if (a == 0) ::_exit(advance_many());
  const pid_t b = ::fork();
  if (b == 0) {
    const int result = advance_many();
    ::_exit(result != 0 ? result : (nvmlDeviceSetPowerManagementLimit(device, 100'000) == NVML_SUCCESS ? 0 : 3));
  }
  EXPECT_EQ(advance_many(), 0);
  for (pid_t pid : {a, b}) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  unsigned long long now = 0;
  ASSERT_EQ(zeusEmulatorNowNs(&now), ZEUS_EMULATOR_OK);
  EXPECT_EQ(now, 1'500 * kMs);
  EXPECT_EQ(EnergyMj(device), 150'000u);  // 100 W throughout, whatever the limit
  EXPECT_EQ(LimitMw(device), 100'000u);   // set by child b
}

TEST_F(NvmlEmulatorTest, ConcurrentThreads) {
  UseScenario(Manual(Gpu(R"("power_w": 100)", R"(, "power_average_window_ms": 0)")));
  Init();
  nvmlDevice_t device = Handle(0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (zeusEmulatorAdvanceTimeNs(kMs) != 0) ++failures;
        if (nvmlDeviceSetPowerManagementLimit(device, (i + t) % 2 == 0 ? 150'000 : 250'000) != NVML_SUCCESS) {
          ++failures;
        }
        unsigned long long energy = 0;
        unsigned int power = 0;
        if (nvmlDeviceGetTotalEnergyConsumption(device, &energy) != NVML_SUCCESS) ++failures;
        if (nvmlDeviceGetPowerUsage(device, &power) != NVML_SUCCESS || power != 100'000) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(EnergyMj(device), 160'000u);  // 100 W x 1.6 s
  EXPECT_EQ(zeusEmulatorCallCount("nvmlDeviceSetPowerManagementLimit", 0), 1'600u);
}

// ---- Lock-free reads (the seqlock) ------------------------------------------------------------

// The snapshot tests' GPU: it demands 300 W, above every limit they set (so it
// draws exactly its limit), and its sensor reports the power at every 1 ms
// update, without averaging.
std::string SnapshotGpu() {
  return Gpu(R"("power_w": 300)", R"(, "power_update_period_ms": 1, "power_average_window_ms": 0)" + kIdeal);
}

// The limit set at step `k` of AlternateLimits, in mW.
constexpr unsigned int AlternatingLimitMw(int k) { return k % 2 == 0 ? 150'000 : 250'000; }

// The snapshot tests' writer: `steps` times, moves the manual clock on by 1 ms
// and then sets the limit to AlternatingLimitMw(step). Returns 0, or which call
// failed.
int AlternateLimits(nvmlDevice_t device, int steps) {
  for (int k = 0; k < steps; ++k) {
    if (zeusEmulatorAdvanceTimeNs(kMs) != ZEUS_EMULATOR_OK) return 1;
    if (nvmlDeviceSetPowerManagementLimit(device, AlternatingLimitMw(k)) != NVML_SUCCESS) return 2;
  }
  return 0;
}

// The energy counter (mJ) at n ms under AlternateLimits, for n in [0, steps]:
// 250 W (the default limit) during the first ms, then during ms j the limit
// set at step j - 1.
std::vector<unsigned long long> AlternatingEnergiesMj(int steps) {
  std::vector<unsigned long long> energies{0};
  for (int n = 1; n <= steps; ++n) {
    energies.push_back(energies.back() + (n == 1 ? 250 : AlternatingLimitMw(n - 2) / 1000));
  }
  return energies;
}

// Reads everything the writer changes, once, and checks that each call saw
// one consistent state: the limit and power are ones the writer sets, and the
// energy is the exact counter at an instant (a whole ms) between the times
// read before and after it, never less than `last_energy_mj`'s. Returns an
// empty string or what was wrong.
std::string CheckSnapshot(nvmlDevice_t device, const std::vector<unsigned long long>& energies,
                          unsigned long long* last_energy_mj) {
  auto valid_power = [](unsigned int mw) { return mw == 150'000 || mw == 250'000; };
  unsigned long long before_ns = 0;
  unsigned long long after_ns = 0;
  unsigned long long energy = 0;
  unsigned int limit = 0;
  std::array<nvmlFieldValue_t, 2> values{};
  values[0].fieldId = NVML_FI_DEV_POWER_INSTANT;
  values[1].fieldId = NVML_FI_DEV_POWER_AVERAGE;
  if (zeusEmulatorNowNs(&before_ns) != ZEUS_EMULATOR_OK) return "NowNs failed";
  if (nvmlDeviceGetTotalEnergyConsumption(device, &energy) != NVML_SUCCESS) return "energy failed";
  if (nvmlDeviceGetFieldValues(device, 2, values.data()) != NVML_SUCCESS) return "field values failed";
  if (nvmlDeviceGetPowerManagementLimit(device, &limit) != NVML_SUCCESS) return "limit failed";
  if (zeusEmulatorNowNs(&after_ns) != ZEUS_EMULATOR_OK) return "NowNs failed";
  if (before_ns % kMs != 0 || after_ns < before_ns || after_ns / kMs >= energies.size()) {
    return "time " + std::to_string(before_ns) + " .. " + std::to_string(after_ns);
  }
  bool energy_ok = false;
  for (unsigned long long n = before_ns / kMs; n <= after_ns / kMs; ++n) energy_ok = energy_ok || energies[n] == energy;
  if (!energy_ok || energy < *last_energy_mj) {
    return "energy " + std::to_string(energy) + " mJ between " + std::to_string(before_ns) + " and " +
           std::to_string(after_ns) + " ns (previous " + std::to_string(*last_energy_mj) + ")";
  }
  *last_energy_mj = energy;
  for (const nvmlFieldValue_t& value : values) {
    if (value.nvmlReturn != NVML_SUCCESS || !valid_power(value.value.uiVal) ||
        value.value.uiVal != values[0].value.uiVal || value.timestamp != values[0].timestamp ||
        static_cast<unsigned long long>(value.timestamp) % 1000 != 0) {
      return "field value " + std::to_string(value.value.uiVal) + " mW at " + std::to_string(value.timestamp);
    }
  }
  if (!valid_power(limit)) return "limit " + std::to_string(limit);
  return "";
}

// Reads with CheckSnapshot until `done`, and then once more. Returns the first
// problem, or "" (and counts the reads).
std::string CheckSnapshotsUntil(nvmlDevice_t device, const std::vector<unsigned long long>& energies,
                                const std::atomic<bool>& done, long* reads) {
  unsigned long long last_energy = 0;
  for (bool last = false; !last;) {
    last = done.load();
    if (std::string problem = CheckSnapshot(device, energies, &last_energy); !problem.empty()) return problem;
    ++*reads;
  }
  return "";
}

constexpr int kAlternatingSteps = 1'500;  // more than the 256 changes kept, so the history folds too

TEST_F(NvmlEmulatorTest, ReadersSeeConsistentSnapshotsWhileAnotherThreadWrites) {
  UseScenario(Manual(SnapshotGpu()));
  Init();
  nvmlDevice_t device = Handle(0);
  const std::vector<unsigned long long> energies = AlternatingEnergiesMj(kAlternatingSteps);
  std::atomic<bool> done{false};
  std::array<std::string, 2> problems;
  std::array<long, 2> reads{};
  std::vector<std::thread> readers;
  for (std::size_t r = 0; r < problems.size(); ++r) {
    readers.emplace_back([&, r] { problems[r] = CheckSnapshotsUntil(device, energies, done, &reads[r]); });
  }
  const int written = AlternateLimits(device, kAlternatingSteps);
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(written, 0);
  for (std::size_t r = 0; r < problems.size(); ++r) {
    EXPECT_EQ(problems[r], "") << "reader " << r;
    EXPECT_GT(reads[r], 0) << "reader " << r;
  }
  EXPECT_EQ(EnergyMj(device), energies.back());
  EXPECT_EQ(LimitMw(device), AlternatingLimitMw(kAlternatingSteps - 1));
}

TEST_F(NvmlEmulatorTest, ReadersSeeConsistentSnapshotsWhileAnotherProcessWrites) {
  UseScenario(Manual(SnapshotGpu()));
  Init();
  nvmlDevice_t device = Handle(0);
  const std::vector<unsigned long long> energies = AlternatingEnergiesMj(kAlternatingSteps);
  // The child inherits our initialisation, so its first write reopens the
  // state file while its own reader thread is reading it lock-free.
  const pid_t child = ::fork();
  if (child == 0) {
    std::atomic<bool> done{false};
    std::string problem;
    long reads = 0;
    std::thread reader([&] { problem = CheckSnapshotsUntil(device, energies, done, &reads); });
    const int written = AlternateLimits(device, kAlternatingSteps);
    done = true;
    reader.join();
    ::_exit(written != 0 ? 10 + written : (!problem.empty() ? 20 : 0));
  }
  ASSERT_GT(child, 0);
  unsigned long long last_energy = 0;
  std::string problem;
  long reads = 0;
  int status = 0;
  for (bool exited = false; !exited; ++reads) {
    exited = ::waitpid(child, &status, WNOHANG) == child;
    if (problem.empty()) problem = CheckSnapshot(device, energies, &last_energy);
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(problem, "");
  EXPECT_GT(reads, 0);
  unsigned long long now = 0;
  ASSERT_EQ(zeusEmulatorNowNs(&now), ZEUS_EMULATOR_OK);
  EXPECT_EQ(now, kAlternatingSteps * kMs);
  EXPECT_EQ(EnergyMj(device), energies.back());
  EXPECT_EQ(LimitMw(device), AlternatingLimitMw(kAlternatingSteps - 1));
}

TEST_F(NvmlEmulatorTest, WallClockReadingsNeverGoBackWhileLimitsChange) {
  UseScenario(R"({"state_file": "@STATE@", "time_scale": 3, "gpus": [)" + SnapshotGpu() + "]}");
  Init();
  nvmlDevice_t device = Handle(0);
  std::atomic<bool> done{false};
  std::array<std::string, 2> problems;
  std::vector<std::thread> readers;
  for (std::size_t r = 0; r < problems.size(); ++r) {
    readers.emplace_back([&, r] {
      unsigned long long last_energy = 0;
      unsigned long long last_now = 0;
      unsigned long long last_timestamp = 0;
      for (bool last = false; !last && problems[r].empty();) {
        last = done.load();
        unsigned long long now = 0;
        unsigned long long energy = 0;
        nvmlFieldValue_t value{};
        value.fieldId = NVML_FI_DEV_POWER_INSTANT;
        if (zeusEmulatorNowNs(&now) != ZEUS_EMULATOR_OK || now < last_now) problems[r] = "time went back";
        if (nvmlDeviceGetTotalEnergyConsumption(device, &energy) != NVML_SUCCESS || energy < last_energy) {
          problems[r] = "energy went back: " + std::to_string(last_energy) + " -> " + std::to_string(energy);
        }
        if (nvmlDeviceGetFieldValues(device, 1, &value) != NVML_SUCCESS || value.nvmlReturn != NVML_SUCCESS ||
            (value.value.uiVal != 150'000 && value.value.uiVal != 250'000) ||
            static_cast<unsigned long long>(value.timestamp) < last_timestamp) {
          problems[r] = "power " + std::to_string(value.value.uiVal) + " at " + std::to_string(value.timestamp);
        }
        last_now = now;
        last_energy = energy;
        last_timestamp = static_cast<unsigned long long>(value.timestamp);
      }
    });
  }
  int failures = 0;
  for (int k = 0; k < 3'000; ++k) {
    if (nvmlDeviceSetPowerManagementLimit(device, AlternatingLimitMw(k)) != NVML_SUCCESS) ++failures;
  }
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(failures, 0);
  for (const std::string& problem : problems) EXPECT_EQ(problem, "");
}

TEST_F(NvmlEmulatorTest, StateLeftHalfUpdatedIsReinitialised) {
  UseScenario(Manual(Gpu()));
  Init();
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(0), 150'000), NVML_SUCCESS);
  Advance(1 * kS);
  EXPECT_EQ(LimitMw(Handle(0)), 150'000u);
  {
    // An odd sequence number (at offset 48): a writer died mid-update.
    std::fstream file(state_path(), std::ios::in | std::ios::out | std::ios::binary);
    const std::uint64_t odd = 7;
    file.seekp(48);
    file.write(reinterpret_cast<const char*>(&odd), sizeof(odd));
  }
  // Readers wait for the writer in vain, then take the lock, which finds the
  // file half-written and starts it afresh.
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
  EXPECT_EQ(EnergyMj(Handle(0)), 0u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(Handle(0)), 200'000u);
}

// How many limit changes GPU `index`'s history keeps, read from the state file
// (the layout of shared_state.h).
std::uint32_t KeptChanges(const std::string& state_path, std::size_t index) {
  std::ifstream file(state_path, std::ios::binary);
  file.seekg(static_cast<std::streamoff>(sizeof(StateHeader) + index * sizeof(GpuState) + offsetof(GpuState, limits) +
                                         offsetof(LimitHistory, count)));
  std::uint32_t count = 0;
  file.read(reinterpret_cast<char*>(&count), sizeof(count));
  return file ? count : std::numeric_limits<std::uint32_t>::max();
}

// A long emulated run: the state file and each GPU's history (and with it
// what a reading copies and integrates over) stay the same size however many
// limits are set, and energy stays exact.
TEST_F(NvmlEmulatorTest, StateStaysTheSameSizeAfter100000LimitChanges) {
  constexpr int kChanges = 100'000;
  UseScenario(Manual(SnapshotGpu()));  // readings look back 1 ms (the sensor's update period)
  Init();
  nvmlDevice_t device = Handle(0);
  ASSERT_EQ(AlternateLimits(device, 10), 0);
  const auto size = std::filesystem::file_size(state_path());
  EXPECT_EQ(size, sizeof(StateHeader) + sizeof(GpuState) + sizeof(ProcessTable));
  std::uint32_t most_kept = 0;
  unsigned long long energy_mj = AlternatingEnergiesMj(10).back();
  for (int k = 10; k < kChanges; ++k) {
    ASSERT_EQ(zeusEmulatorAdvanceTimeNs(kMs), ZEUS_EMULATOR_OK);
    ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, AlternatingLimitMw(k)), NVML_SUCCESS);
    energy_mj += AlternatingLimitMw(k - 1) / 1000;  // the ms just passed, at the previous limit
    if (k % 1'000 == 0) {
      most_kept = std::max(most_kept, KeptChanges(state_path(), 0));
      ASSERT_EQ(EnergyMj(device), energy_mj) << "after " << k << " changes";
    }
  }
  EXPECT_EQ(std::filesystem::file_size(state_path()), size);
  EXPECT_LE(most_kept, 1u);  // the latest; the one in force 1 ms before it is the base
  EXPECT_EQ(EnergyMj(device), AlternatingEnergiesMj(kChanges).back());
}

TEST_F(NvmlEmulatorTest, StateFileNeverShrinks) {
  UseScenario(Manual(Gpu() + "," + Gpu()));
  Init();
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  const auto two_gpus = std::filesystem::file_size(state_path());
  // A scenario with fewer GPUs re-initialises the file but leaves its size (a
  // process of the other scenario may still be reading the end of it).
  UseScenario(Manual(Gpu()), "one.json");
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
  Advance(1 * kS);
  EXPECT_EQ(EnergyMj(Handle(0)), 200'000u);
  EXPECT_EQ(std::filesystem::file_size(state_path()), two_gpus);
}

}  // namespace
}  // namespace zeus::emulator::test
