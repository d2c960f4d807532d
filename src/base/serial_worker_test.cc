// Copyright 2026 The Zeus C++ Authors.

#include "base/serial_worker.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::base {
namespace {

TEST(SerialWorkerTest, RunsTasksInOrderAndFinishesTheQueueOnStop) {
  std::vector<int> order;
  {
    SerialWorker worker("test-worker");
    for (int i = 0; i < 100; ++i) worker.Post([&order, i] { order.push_back(i); });
  }  // the destructor runs what is queued
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

// A task that blocks until released: a hung driver call.
struct Latch {
  std::mutex mutex;
  std::condition_variable released;
  bool open = false;
  bool entered = false;
  void Wait() {
    std::unique_lock lock(mutex);
    entered = true;
    released.notify_all();
    released.wait(lock, [this] { return open; });
  }
  void WaitEntered() {
    std::unique_lock lock(mutex);
    released.wait(lock, [this] { return entered; });
  }
  void Open() {
    {
      std::lock_guard lock(mutex);
      open = true;
    }
    released.notify_all();
  }
};

TEST(SerialWorkerTest, AHungTaskIsAbandonedAtStopAndTheRestIsDropped) {
  auto latch = std::make_shared<Latch>();
  auto ran_after = std::make_shared<std::atomic<bool>>(false);
  auto worker = std::make_unique<SerialWorker>("test-hung");
  EXPECT_EQ(worker->busy_for(), std::chrono::steady_clock::duration::zero());
  auto finished = std::make_shared<std::promise<void>>();
  std::future<void> done = finished->get_future();
  worker->Post([latch, finished] {
    latch->Wait();
    finished->set_value();
  });
  worker->Post([ran_after] { *ran_after = true; });
  latch->WaitEntered();
  EXPECT_GT(worker->busy_for(), std::chrono::steady_clock::duration::zero());
  EXPECT_FALSE(worker->StopWithin(std::chrono::milliseconds(50)));
  worker.reset();  // safe: the thread shares only its own state
  latch->Open();
  done.wait();
  EXPECT_FALSE(*ran_after) << "queued tasks are dropped once the worker was abandoned";
}

TEST(SerialWorkerTest, PostAfterStopIsDropped) {
  SerialWorker worker("test-stopped");
  EXPECT_TRUE(worker.StopWithin(std::chrono::seconds(60)));
  bool ran = false;
  worker.Post([&ran] { ran = true; });
  EXPECT_TRUE(worker.StopWithin(std::chrono::seconds(60)));
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace zeus::base
