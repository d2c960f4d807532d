// Copyright 2026 The Zeus C++ Authors.
//
// TransactionRunner on SQLite (group commit) and PostgreSQL (one transaction
// per operation, when ZEUS_TEST_POSTGRES_URL is set).

#include "bso/transaction_runner.h"

#include <atomic>
#include <chrono>
#include <latch>
#include <ostream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bso/db_param_test_util.h"
#include "testing/postgres.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "testing/result.h"

namespace zeus::bso {
namespace {

using ::testing::HasSubstr;

// A body that inserts row k (and fails with the insert's error).
std::function<Status(SqlConnection&)> Insert(int k) {
  return [k](SqlConnection& c) -> Status {
    const std::vector<SqlValue> params = {SqlValue(static_cast<std::int64_t>(k))};
    Result<std::int64_t> n = c.Execute("INSERT INTO t (k) VALUES ($1)", params);
    if (!n) return Fail(n.error());
    return OkStatus();
  };
}

using zeus::bso::testing::Db;
using zeus::bso::testing::DbName;
// "GetParam() = Sqlite" in gtest's listings.

class TransactionRunnerTest : public ::testing::TestWithParam<Db> {
 protected:
  void SetUp() override {
    Result<std::optional<std::string>> url = zeus::testing::TestDatabaseUrl(GetParam() == Db::kPostgres, dir_, &pg_);
    ASSERT_TRUE(url) << url.error().message();
    if (!*url) GTEST_SKIP() << "ZEUS_TEST_POSTGRES_URL is not set (make test starts a PostgreSQL server)";
    url_ = **url;
    Result<std::unique_ptr<SqlConnection>> c = OpenSqlConnection(url_);
    ASSERT_TRUE(c) << c.error().message();
    ASSERT_TRUE((*c)->ExecuteScript("CREATE TABLE t (k INTEGER PRIMARY KEY)"));
    ASSERT_TRUE((*c)->ExecuteScript("CREATE TABLE counter (n INTEGER NOT NULL)"));
    ASSERT_TRUE((*c)->ExecuteScript("INSERT INTO counter (n) VALUES (0)"));
    check_ = std::move(*c);
  }

  std::unique_ptr<TransactionRunner> Runner(bool group_commit, int max_attempts = 8) {
    TransactionRunnerOptions options;
    options.group_commit = group_commit;
    options.max_attempts = max_attempts;
    return std::make_unique<TransactionRunner>(url_, options, nullptr);
  }

  std::vector<std::int64_t> Keys() {
    const std::vector<SqlRow> rows = zeus::testing::Unwrap(check_->Query("SELECT k FROM t ORDER BY k"));
    std::vector<std::int64_t> keys;
    for (const SqlRow& r : rows) keys.push_back(zeus::testing::Unwrap(r.Int(0)));
    return keys;
  }

  zeus::testing::TempDir dir_;
  std::unique_ptr<zeus::testing::ScopedPostgresDatabase> pg_;
  std::string url_;
  std::unique_ptr<SqlConnection> check_;
};

TEST_P(TransactionRunnerTest, AGroupCommitsOnce) {
  auto runner = Runner(true);
  std::vector<TransactionOp> ops;
  for (int k = 1; k <= 5; ++k) ops.push_back({Insert(k), OkStatus(), false});
  std::vector<TransactionOp*> group;
  for (TransactionOp& op : ops) group.push_back(&op);
  runner->RunGroup(group);
  for (const TransactionOp& op : ops) EXPECT_TRUE(op.outcome) << op.outcome.error().message();
  EXPECT_THAT(Keys(), ::testing::ElementsAre(1, 2, 3, 4, 5));
  EXPECT_EQ(runner->stats().transactions, 1u);
  EXPECT_EQ(runner->stats().operations, 5u);
}

TEST_P(TransactionRunnerTest, OpsSeeTheWritesOfEarlierOpsInTheirGroup) {
  auto runner = Runner(true);
  std::int64_t seen = -1;
  TransactionOp insert{Insert(1), OkStatus(), false};
  TransactionOp count{[&](SqlConnection& c) -> Status {
                        Result<std::vector<SqlRow>> rows = c.Query("SELECT COUNT(*) FROM t");
                        if (!rows) return Fail(rows.error());
                        seen = *rows->front().Int(0);
                        return OkStatus();
                      },
                      OkStatus(), false};
  runner->RunGroup({&insert, &count});
  EXPECT_TRUE(count.outcome);
  EXPECT_EQ(seen, 1);
}

TEST_P(TransactionRunnerTest, AFailedBodyRunsAloneAndLeavesNoWrites) {
  auto runner = Runner(true);
  int failing_runs = 0;
  TransactionOp first{Insert(1), OkStatus(), false};
  TransactionOp failing{[&](SqlConnection& c) -> Status {
                          ++failing_runs;
                          if (Status s = Insert(2)(c); !s) return s;
                          return Fail(ErrorCode::kInvalidArgument, "no such trial");
                        },
                        OkStatus(), false};
  TransactionOp last{Insert(3), OkStatus(), false};
  runner->RunGroup({&first, &failing, &last});
  EXPECT_TRUE(first.outcome);
  EXPECT_TRUE(last.outcome);
  ASSERT_FALSE(failing.outcome);
  EXPECT_EQ(failing.outcome.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(failing.outcome.error().message(), "no such trial");
  EXPECT_EQ(failing_runs, 2);  // in the group, then alone
  EXPECT_THAT(Keys(), ::testing::ElementsAre(1, 3));
  EXPECT_EQ(runner->stats().transactions, 1u);
  EXPECT_EQ(runner->stats().operations, 3u);
}

TEST_P(TransactionRunnerTest, AFailedStatementDoesNotDoomItsGroup) {
  auto runner = Runner(true);
  ASSERT_TRUE(check_->Execute("INSERT INTO t (k) VALUES (7)"));
  TransactionOp first{Insert(1), OkStatus(), false};
  TransactionOp duplicate{Insert(7), OkStatus(), false};
  TransactionOp last{Insert(3), OkStatus(), false};
  runner->RunGroup({&first, &duplicate, &last});
  EXPECT_TRUE(first.outcome) << first.outcome.error().message();
  EXPECT_TRUE(last.outcome) << last.outcome.error().message();
  ASSERT_FALSE(duplicate.outcome);
  EXPECT_EQ(duplicate.outcome.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_THAT(Keys(), ::testing::ElementsAre(1, 3, 7));
}

TEST_P(TransactionRunnerTest, AThrowingBodyFailsAloneAndTheRunnerLivesOn) {
  auto runner = Runner(true);
  Status thrown = runner->Run([](SqlConnection& c) -> Status {
    if (Status s = Insert(5)(c); !s) return s;
    throw std::runtime_error("boom");
  });
  ASSERT_FALSE(thrown);
  EXPECT_EQ(thrown.error().code(), ErrorCode::kInternal);
  EXPECT_THAT(thrown.error().message(), HasSubstr("boom"));
  EXPECT_TRUE(runner->Run(Insert(6)));
  EXPECT_THAT(Keys(), ::testing::ElementsAre(6));
}

TEST_P(TransactionRunnerTest, AConflictRetriesTheWholeGroup) {
  auto runner = Runner(true);
  int runs = 0;
  TransactionOp first{Insert(1), OkStatus(), false};
  TransactionOp conflicting{[&](SqlConnection& c) -> Status {
                              if (Status s = Insert(2)(c); !s) return s;
                              if (++runs == 1) return Fail(ErrorCode::kAborted, "could not serialize access");
                              return OkStatus();
                            },
                            OkStatus(), false};
  runner->RunGroup({&first, &conflicting});
  EXPECT_TRUE(first.outcome);
  EXPECT_TRUE(conflicting.outcome);
  EXPECT_EQ(runs, 2);
  EXPECT_THAT(Keys(), ::testing::ElementsAre(1, 2));  // the first attempt left nothing
  EXPECT_EQ(runner->stats().retries, 1u);
  EXPECT_EQ(runner->stats().transactions, 1u);
}

TEST_P(TransactionRunnerTest, GivesUpAfterMaxAttempts) {
  auto runner = Runner(true, /*max_attempts=*/3);
  int runs = 0;
  Status s = runner->Run([&](SqlConnection& c) -> Status {
    ++runs;
    if (Status inserted = Insert(1)(c); !inserted) return inserted;
    return Fail(ErrorCode::kAborted, "database is locked");
  });
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kAborted);
  EXPECT_THAT(s.error().message(), HasSubstr("gave up after 3 attempts"));
  EXPECT_THAT(s.error().message(), HasSubstr("database is locked"));
  EXPECT_EQ(runs, 3);
  EXPECT_TRUE(Keys().empty());
}

TEST_P(TransactionRunnerTest, ConcurrentRunsAllCommitExactlyOnce) {
  const bool group = GetParam() == Db::kSqlite;  // SQLite groups; PostgreSQL does not
  auto runner = Runner(group);
  constexpr int kThreads = 8;
  constexpr int kEach = 40;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Status s = runner->Run([&, t, i](SqlConnection& c) -> Status {
          if (Status inserted = Insert(t * kEach + i)(c); !inserted) return inserted;
          // PostgreSQL: the row lock serialises the increments.
          Result<std::int64_t> n = c.Execute("UPDATE counter SET n = n + 1");
          if (!n) return Fail(n.error());
          return OkStatus();
        });
        if (!s) {
          ADD_FAILURE() << s.error().message();
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(Keys().size(), static_cast<std::size_t>(kThreads * kEach));
  Result<std::vector<SqlRow>> n = check_->Query("SELECT n FROM counter");
  ASSERT_TRUE(n);
  EXPECT_EQ(*n->front().Int(0), kThreads * kEach);
  const TransactionStats stats = runner->stats();
  EXPECT_EQ(stats.operations, static_cast<std::uint64_t>(kThreads * kEach));
  if (group) {
    EXPECT_LE(stats.transactions, stats.operations);
  } else {
    EXPECT_EQ(stats.transactions, stats.operations);
  }
}

// While a leader's group runs, later submissions queue, and the next leader
// commits all of them at once.
TEST_P(TransactionRunnerTest, SubmissionsDuringACommitShareTheNextOne) {
  if (GetParam() == Db::kPostgres) GTEST_SKIP() << "group commit is for SQLite";
  auto runner = Runner(true);
  std::latch release(1);
  std::atomic<bool> blocked_once{false};
  std::thread leader([&] {
    Status s = runner->Run([&](SqlConnection& c) -> Status {
      if (!blocked_once.exchange(true)) release.wait();
      return Insert(100)(c);
    });
    EXPECT_TRUE(s) << s.error().message();
  });
  // On a failed wait, the latch is still released below, so every thread ends
  // and the test fails instead of hanging.
  EXPECT_TRUE(zeus::testing::WaitUntil([&] { return blocked_once.load(); }))
      << "the leader never started its transaction";
  std::vector<std::thread> followers;
  for (int k = 1; k <= 3; ++k) {
    followers.emplace_back([&, k] {
      Status s = runner->Run(Insert(k));
      EXPECT_TRUE(s) << s.error().message();
    });
  }
  EXPECT_TRUE(zeus::testing::WaitUntil([&] { return runner->queued() >= 3; }))
      << "only " << runner->queued() << " of 3 followers queued behind the blocked leader";
  release.count_down();
  leader.join();
  for (std::thread& t : followers) t.join();
  EXPECT_THAT(Keys(), ::testing::ElementsAre(1, 2, 3, 100));
  EXPECT_EQ(runner->stats().operations, 4u);
  EXPECT_EQ(runner->stats().transactions, 2u);
}

INSTANTIATE_TEST_SUITE_P(BothDatabases, TransactionRunnerTest, ::testing::Values(Db::kSqlite, Db::kPostgres),
                         DbName);

}  // namespace
}  // namespace zeus::bso
