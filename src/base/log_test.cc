// Copyright 2026 The Zeus C++ Authors.

#include "zeus/base/log.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zeus {
namespace {

struct Captured {
  LogLevel level;
  std::string component;
  std::string message;
  bool user_warning;
};

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ResetLogOnceKeysForTesting();
    previous_ = SetLogSink([this](const LogRecord& r) {
      std::lock_guard lock(mutex_);
      records_.push_back({r.level, std::string(r.component), std::string(r.message), r.user_warning});
    });
  }
  void TearDown() override {
    SetLogSink(previous_);
    ResetLogOnceKeysForTesting();
  }
  std::mutex mutex_;
  std::vector<Captured> records_;
  LogSink previous_;
};

TEST_F(LogTest, RecordsReachTheInstalledSinkWithTheirFields) {
  LogWarning("monitor", "a window shorter than the counter's update period");
  LogInfo("bso-client", "registered job abc");
  Log({.level = LogLevel::kWarning, .component = "metric", .message = "above the buckets", .user_warning = true});
  ASSERT_EQ(records_.size(), 3u);
  EXPECT_EQ(records_[0].level, LogLevel::kWarning);
  EXPECT_EQ(records_[0].component, "monitor");
  EXPECT_FALSE(records_[0].user_warning);
  EXPECT_EQ(records_[1].level, LogLevel::kInfo);
  EXPECT_EQ(records_[1].message, "registered job abc");
  EXPECT_TRUE(records_[2].user_warning);
}

TEST_F(LogTest, LogOnceDropsRepeatsOfOneKeyOnly) {
  const LogRecord record{.level = LogLevel::kWarning, .component = "device", .message = "module scope"};
  EXPECT_TRUE(LogOnce("gpu0-module-scope", record));
  EXPECT_FALSE(LogOnce("gpu0-module-scope", record));
  EXPECT_TRUE(LogOnce("gpu1-module-scope", record));
  EXPECT_EQ(records_.size(), 2u);
  ResetLogOnceKeysForTesting();
  EXPECT_TRUE(LogOnce("gpu0-module-scope", record));
}

TEST_F(LogTest, SetLogSinkReturnsThePreviousSinkAndEmptyRestoresTheDefault) {
  int other = 0;
  LogSink mine = SetLogSink([&other](const LogRecord&) { ++other; });
  ASSERT_TRUE(mine);
  LogInfo("x", "to other");
  EXPECT_EQ(other, 1);
  LogSink back = SetLogSink(mine);
  ASSERT_TRUE(back);
  LogInfo("x", "to mine");
  EXPECT_EQ(other, 1);
  EXPECT_EQ(records_.size(), 1u);
  // The default (stderr) is reported as an empty sink.
  LogSink current = SetLogSink(LogSink());
  EXPECT_TRUE(current);
  ::testing::internal::CaptureStderr();
  LogWarning("device", "a line on stderr");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "zeus: device: warning: a line on stderr\n");
  EXPECT_FALSE(SetLogSink(current));
}

TEST_F(LogTest, ConcurrentRecordsAreAllDeliveredAndOnceHoldsAcrossThreads) {
  std::vector<std::thread> threads;
  int once_logged = 0;
  std::mutex once_mutex;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) LogInfo("t", "line");
      if (LogOnce("shared", {.component = "t", .message = "once"})) {
        std::lock_guard lock(once_mutex);
        ++once_logged;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(once_logged, 1);
  EXPECT_EQ(records_.size(), 401u);
}

}  // namespace
}  // namespace zeus
