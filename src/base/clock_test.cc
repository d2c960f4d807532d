// Copyright 2026 The Zeus C++ Authors.
//
// What zeus::Clock promises (clock.h) and the two clocks tests and
// production use: SteadyClock() is one process-wide monotonic clock whose
// readings never go back, within a thread or across threads; FakeClock moves
// only when told, by exactly what it is told, never back, from any thread.

#include "zeus/base/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "testing/fake_clock.h"

namespace zeus {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(SteadyClockTest, IsOneProcessWideObject) {
  const Clock* first = &SteadyClock();
  const Clock* from_a_thread = nullptr;
  std::thread([&] { from_a_thread = &SteadyClock(); }).join();
  EXPECT_EQ(first, &SteadyClock());
  EXPECT_EQ(first, from_a_thread);
}

TEST(SteadyClockTest, ReadingsNeverGoBackWithinAThread) {
  const Clock& clock = SteadyClock();
  nanoseconds previous = clock.Now();
  for (int i = 0; i < 200'000; ++i) {
    const nanoseconds now = clock.Now();
    ASSERT_GE(now, previous) << "reading " << i;
    previous = now;
  }
}

// A reading published by one thread (release) and seen by another
// (acquire) happened before the second thread's next reading, so that
// reading is not earlier: the contract the power sampler and the training
// thread rely on when they compare timestamps.
TEST(SteadyClockTest, ReadingsNeverGoBackAcrossThreads) {
  const Clock& clock = SteadyClock();
  std::atomic<std::int64_t> published{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        const std::int64_t now = clock.Now().count();
        std::int64_t seen = published.load(std::memory_order_relaxed);
        while (seen < now && !published.compare_exchange_weak(seen, now, std::memory_order_release,
                                                              std::memory_order_relaxed)) {
        }
      }
    });
  }
  int violations = 0;
  for (int i = 0; i < 100'000; ++i) {
    const std::int64_t seen = published.load(std::memory_order_acquire);
    if (clock.Now().count() < seen) ++violations;
  }
  stop = true;
  for (auto& t : writers) t.join();
  EXPECT_EQ(violations, 0);
}

TEST(SteadyClockTest, SleepForWaitsAtLeastTheDuration) {
  // A lower bound only: a loaded machine may wake the thread much later.
  const Clock& clock = SteadyClock();
  const nanoseconds before = clock.Now();
  clock.SleepFor(milliseconds(3));
  EXPECT_GE(clock.Now() - before, milliseconds(3));
}

TEST(FakeClockTest, StartsAtItsStartAndMovesOnlyWhenTold) {
  testing::FakeClock clock(seconds(5));
  EXPECT_EQ(clock.Now(), seconds(5));
  std::this_thread::sleep_for(milliseconds(2));  // real time passes; fake time does not
  EXPECT_EQ(clock.Now(), seconds(5));
  clock.Advance(milliseconds(250));
  EXPECT_EQ(clock.Now(), milliseconds(5250));
  EXPECT_EQ(clock.Now(), milliseconds(5250));
}

TEST(FakeClockTest, DefaultStartIsNotZero) {
  // Code that takes a zero time stamp for "never" must not pass by accident.
  EXPECT_EQ(testing::FakeClock().Now(), seconds(1000));
}

TEST(FakeClockTest, SleepForAdvancesAtOnceByExactlyTheDuration) {
  testing::FakeClock clock(seconds(5));
  clock.SleepFor(seconds(1));
  EXPECT_EQ(clock.Now(), seconds(6));
  clock.SleepFor(nanoseconds(1));
  EXPECT_EQ(clock.Now(), seconds(6) + nanoseconds(1));
}

TEST(FakeClockTest, ANonPositiveSleepDoesNotTurnTimeBack) {
  // As with a real clock, sleeping for a negative time returns at once;
  // the Clock contract says Now() never decreases.
  testing::FakeClock clock(seconds(5));
  clock.SleepFor(nanoseconds(0));
  EXPECT_EQ(clock.Now(), seconds(5));
  clock.SleepFor(-milliseconds(1500));
  EXPECT_EQ(clock.Now(), seconds(5));
}

TEST(FakeClockDeathTest, AdvancingBackwardsIsAProgrammingError) {
  testing::FakeClock clock(seconds(5));
  EXPECT_DEATH(clock.Advance(-nanoseconds(1)), "a clock never goes back");
}

TEST(FakeClockTest, ConcurrentAdvancesAllCount) {
  testing::FakeClock clock(seconds(0));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&clock, t] {
      for (int i = 0; i < 10'000; ++i) {
        if (t % 2 == 0) {
          clock.Advance(nanoseconds(1));
        } else {
          clock.SleepFor(nanoseconds(1));
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(clock.Now(), nanoseconds(40'000));  // 4 threads x 10,000 x 1 ns
}

}  // namespace
}  // namespace zeus
