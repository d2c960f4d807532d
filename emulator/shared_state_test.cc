// Copyright 2026 The Zeus C++ Authors.
//
// Tests of SharedState's reads below the C API: a reading copies only the
// part of a GPU's limit history it needs (ReadGpu's look-back), whatever the
// length of the history, and computes exactly what the whole history gives.

#include "shared_state.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "physics.h"
#include "scenario.h"

namespace zeus::emulator {
namespace {

constexpr std::int64_t kMs = kNsPerMs;
// A look-back that reaches the whole history.
constexpr std::int64_t kEverything = kMaxEmulatedNs;

class SharedStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "zeus-shared-state-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    state_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Opens the state of a manual-clock scenario with one GPU that demands
  // 300 W (above every limit: it draws the limit) and has `extra` keys.
  void Open(const std::string& extra = "") {
    const std::string text = R"({"clock": "manual", "gpus": [{"name": "Tesla V100-SXM2-32GB", "architecture": "volta",
        "min_power_limit_w": 100, "max_power_limit_w": 300, "default_power_limit_w": 250, "energy_counter": true,
        "power_w": 300, "power_settle_ms": 0, "counter_update_period_ms": 0)" +
                             extra + "}]}";
    std::string error;
    ASSERT_TRUE(ParseScenario(text, &scenario_, &error)) << error;
    scenario_.state_file = (dir_ / "state").string();
    state_ = SharedState::Open(scenario_, &error);
    ASSERT_NE(state_, nullptr) << error;
  }

  const PowerModel& model() const { return scenario_.gpus[0].power; }

  // Moves the clock on 1 ms and records a limit change then, `count` times,
  // alternating 150 W and 250 W. Nothing is forgotten (unlike the setter):
  // the history fills up to its capacity.
  void ChangeLimitsEveryMs(int count) {
    for (int k = 0; k < count; ++k) {
      ASSERT_EQ(state_->AdvanceManualClock(kMs), SharedState::AdvanceResult::kOk);
      const std::uint32_t limit = k % 2 == 0 ? 150'000 : 250'000;
      ASSERT_TRUE(state_->UpdateGpu(0, [&](GpuState& gpu, std::int64_t now_ns) {
        RecordLimitChange(&gpu.limits, model(), scenario_.gpus[0].counter_reset_ns, now_ns, limit);
      }));
    }
  }

  struct Reading {
    GpuState gpu;
    std::int64_t now_ns = 0;
  };
  Reading Read(std::int64_t lookback_ns) {
    Reading reading;
    EXPECT_TRUE(state_->ReadGpu(0, lookback_ns, &reading.gpu, &reading.now_ns));
    return reading;
  }

  std::filesystem::path dir_;
  Scenario scenario_;
  std::unique_ptr<SharedState> state_;
};

// The kept part of two histories is the same, entry for entry.
void ExpectSameHistory(const LimitHistory& a, const LimitHistory& b) {
  ASSERT_EQ(a.count, b.count);
  EXPECT_EQ(std::memcmp(&a.base, &b.base, sizeof(a.base)), 0);
  EXPECT_EQ(std::memcmp(a.changes.data(), b.changes.data(), a.count * sizeof(LimitChange)), 0);
  EXPECT_EQ(a.reset_captured, b.reset_captured);
}

TEST_F(SharedStateTest, ReadingsCopyOnlyTheHistoryTheyNeedHoweverLongItIs) {
  Open();
  const auto size = std::filesystem::file_size(dir_ / "state");
  EXPECT_EQ(size, StateFileSize(1));
  ChangeLimitsEveryMs(100'000);
  EXPECT_EQ(std::filesystem::file_size(dir_ / "state"), size);

  const Reading all = Read(kEverything);
  EXPECT_EQ(all.gpu.limits.count, kLimitHistoryCapacity);  // full: the setter's forgetting is not used here
  EXPECT_EQ(all.now_ns, 100'000 * kMs);
  for (const std::int64_t lookback_ns : {std::int64_t{0}, 5 * kMs, 100 * kMs}) {
    const Reading cut = Read(lookback_ns);
    // One change a ms: the one in force at the cut is the base, the later
    // ones are copied.
    EXPECT_EQ(cut.gpu.limits.count, static_cast<std::uint32_t>(lookback_ns / kMs)) << lookback_ns;
    LimitHistory expected = all.gpu.limits;
    ForgetLimitChangesBefore(&expected, model(), std::nullopt, cut.now_ns - lookback_ns);
    ExpectSameHistory(cut.gpu.limits, expected);
    EXPECT_EQ(TotalEnergyAt(cut.gpu.limits, model(), cut.now_ns), TotalEnergyAt(all.gpu.limits, model(), cut.now_ns));
    EXPECT_EQ(CurrentLimitMw(cut.gpu.limits), CurrentLimitMw(all.gpu.limits));
    const std::int64_t from_ns = cut.now_ns - lookback_ns;
    EXPECT_EQ(AveragePowerMw(model(), TimelineOf(cut.gpu.limits), from_ns, cut.now_ns),
              AveragePowerMw(model(), TimelineOf(all.gpu.limits), from_ns, cut.now_ns));
  }
}

TEST_F(SharedStateTest, ReadingsReachBackToACounterResetNotYetCaptured) {
  Open(R"(, "counter_reset_at_s": 0.0505)");
  const std::optional<std::int64_t> reset_ns = scenario_.gpus[0].counter_reset_ns;
  ChangeLimitsEveryMs(100);  // fewer than the capacity: nothing folded, the reset not captured
  const Reading all = Read(kEverything);
  ASSERT_EQ(all.gpu.limits.reset_captured, 0u);
  const Reading cut = Read(0);
  // From the change in force at 50.5 ms (made at 50 ms) on.
  EXPECT_EQ(cut.gpu.limits.base.time_ns, 50 * kMs);
  EXPECT_EQ(cut.gpu.limits.count, 50u);
  EXPECT_EQ(CounterEnergyAt(cut.gpu.limits, model(), reset_ns, cut.now_ns),
            CounterEnergyAt(all.gpu.limits, model(), reset_ns, cut.now_ns));

  // Once folding has captured the energy at the reset, readings need only
  // their own look-back again.
  ChangeLimitsEveryMs(static_cast<int>(kLimitHistoryCapacity));
  ASSERT_EQ(Read(kEverything).gpu.limits.reset_captured, 1u);
  const Reading later = Read(0);
  EXPECT_EQ(later.gpu.limits.count, 0u);
  const Reading later_all = Read(kEverything);
  EXPECT_EQ(CounterEnergyAt(later.gpu.limits, model(), reset_ns, later.now_ns),
            CounterEnergyAt(later_all.gpu.limits, model(), reset_ns, later.now_ns));
}

}  // namespace
}  // namespace zeus::emulator
