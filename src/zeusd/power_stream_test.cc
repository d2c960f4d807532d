// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/power_stream.h"

#include <atomic>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/wait.h"

namespace zeus::zeusd {
namespace {

using ::testing::StartsWith;

std::shared_ptr<Poller> CountingPoller(std::atomic<int>* counter) {
  return std::make_shared<Poller>("test-poll", std::chrono::microseconds(1000), [counter](bool) {
    return std::optional<std::string>(std::to_string(counter->fetch_add(1)));
  });
}

// idles() counts the thread's pauses (the start included): it goes up once the
// thread waits for a subscriber, where it cannot poll, so a paused thread is
// the proof that nothing polls, with no sleep to wait for a poll that does not
// come.
TEST(PollerTest, PollsOnlyWithSubscribers) {
  std::atomic<int> n{0};
  auto poller = CountingPoller(&n);
  ASSERT_TRUE(zeus::testing::WaitUntil([&] { return poller->idles() >= 1; }));
  EXPECT_EQ(poller->polls(), 0u);
  EXPECT_EQ(n.load(), 0);
  {
    Subscription s({poller});
    ASSERT_TRUE(zeus::testing::WaitUntil([&] { return poller->polls() >= 5; }));
    EXPECT_EQ(poller->idles(), 1u);
  }
  // The subscription has left the poller's list under its lock: the poll
  // count is final from here on, and the thread pauses again.
  const std::uint64_t last = poller->polls();
  ASSERT_TRUE(zeus::testing::WaitUntil([&] { return poller->idles() >= 2; }));
  EXPECT_EQ(poller->polls(), last);
  EXPECT_EQ(n.load(), static_cast<int>(last));
  poller->Stop();
  EXPECT_EQ(poller->polls(), last);
}

TEST(PollerTest, ResumedIsTrueOnTheFirstPollAfterAPause) {
  std::atomic<int> resumed{0};
  std::atomic<int> polls{0};
  auto poller = std::make_shared<Poller>("test-poll", std::chrono::microseconds(1000), [&](bool r) {
    if (r) ++resumed;
    ++polls;
    return std::optional<std::string>();
  });
  std::uint64_t idles_while_polling = 0;
  {
    Subscription s({poller});
    ASSERT_TRUE(zeus::testing::WaitUntil([&] { return polls.load() >= 3; }));
    idles_while_polling = poller->idles();
  }
  // The thread has noticed that nobody listens: the next subscription resumes it.
  ASSERT_TRUE(zeus::testing::WaitUntil([&] { return poller->idles() > idles_while_polling; }));
  {
    Subscription s({poller});
    const int before = polls.load();
    ASSERT_TRUE(zeus::testing::WaitUntil([&] { return polls.load() >= before + 3; }));
  }
  poller->Stop();
  EXPECT_EQ(resumed.load(), 2);
}

TEST(SubscriptionTest, FramesAndWakeups) {
  std::atomic<int> n{0};
  auto poller = CountingPoller(&n);
  Subscription s({poller});
  std::atomic<int> wakeups{0};
  s.SetWakeup([&] { ++wakeups; });
  ASSERT_TRUE(zeus::testing::WaitUntil([&] { return wakeups.load() > 0; }));
  const std::string frames = s.Next();
  EXPECT_THAT(frames, StartsWith("data: 0\n\n"));
  poller->Stop();
}

// A client that never reads: the poller goes on at its pace, the queue stays
// bounded, and the oldest events are the ones dropped.
TEST(SubscriptionTest, ASlowConsumerNeverHoldsThePollerOrGrowsWithoutBound) {
  std::atomic<int> n{0};
  auto poller = CountingPoller(&n);
  Subscription slow({poller});
  slow.SetWakeup([] {});
  const int wanted = static_cast<int>(Subscription::kMaxQueuedEvents) + 500;
  ASSERT_TRUE(zeus::testing::WaitUntil([&] { return n.load() > wanted; }));
  poller->Stop();
  const int produced = n.load();
  EXPECT_EQ(slow.dropped(), static_cast<std::uint64_t>(produced) - Subscription::kMaxQueuedEvents);
  const std::string frames = slow.Next();
  const std::string first = "data: " + std::to_string(produced - static_cast<int>(Subscription::kMaxQueuedEvents)) + "\n\n";
  EXPECT_THAT(frames, StartsWith(first));
  EXPECT_EQ(slow.Next(), "");
}

TEST(SubscriptionTest, NoDevicesNeverSends) {
  Subscription none({});
  none.SetWakeup([] { FAIL() << "woken"; });
  EXPECT_EQ(none.Next(), "");
}

}  // namespace
}  // namespace zeus::zeusd
