// Copyright 2026 The Zeus C++ Authors.
//
// The same suite runs on SQLite (a temporary file) and PostgreSQL (a fresh
// database per test on $ZEUS_TEST_POSTGRES_URL; skipped when it is unset:
// `export ZEUS_TEST_POSTGRES_URL=$(scripts/postgres-test-server start)`).

#include "bso/sql/sql_connection.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "bso/sql/sql_drivers.h"
#include "testing/ports.h"
#include "testing/postgres.h"
#include "testing/temp_dir.h"
#include "testing/result.h"

// libpqxx 6.4 leaks libpq's PGresult when a statement meets a connection
// that the server has closed (PostgresReconnectsAfterTheConnectionIsLost):
// the leak is inside exec_prepared, before pqxx wraps the result. Read by
// LeakSanitizer only; harmless in other builds.
extern "C" const char* __lsan_default_suppressions() { return "leak:libpqxx\n"; }

namespace zeus::bso {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

enum class Backend { kSqlite, kPostgres };

// True when thread `tid` of this process is in nanosleep or
// clock_nanosleep (from /proc/self/task/TID/syscall).
bool ThreadIsSleeping(pid_t tid) {
  std::ifstream in(fmt::format("/proc/self/task/{}/syscall", tid));
  long number = -1;
  if (!(in >> number)) return false;
#ifdef SYS_nanosleep
  if (number == SYS_nanosleep) return true;
#endif
  return number == SYS_clock_nanosleep;
}

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}
// "GetParam() = Sqlite" rather than raw bytes in gtest's listings.
void PrintTo(Backend backend, std::ostream* os) { *os << (backend == Backend::kSqlite ? "Sqlite" : "Postgres"); }

constexpr char kSkipMessage[] =
    "PostgreSQL tests need ZEUS_TEST_POSTGRES_URL (export ZEUS_TEST_POSTGRES_URL=$(scripts/postgres-test-server "
    "start))";

class SqlConnectionTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kSqlite) {
      url_ = "sqlite:///" + temp_.File("test.db");  // absolute path: sqlite:////tmp/...
    } else {
      const auto admin = testing::TestPostgresUrl();
      if (!admin) GTEST_SKIP() << kSkipMessage;
      auto database = testing::ScopedPostgresDatabase::Create(*admin);
      ASSERT_TRUE(database) << database.error().message();
      database_ = std::move(*database);
      url_ = database_->url();
    }
    db_ = Open();
    ASSERT_NE(db_, nullptr);
    ASSERT_TRUE(db_->ExecuteScript("CREATE TABLE t (id BIGINT PRIMARY KEY, i BIGINT, d DOUBLE PRECISION, s TEXT)"));
  }

  bool IsPostgres() const { return GetParam() == Backend::kPostgres; }

  std::unique_ptr<SqlConnection> Open(int busy_timeout_ms = 10000) {
    auto connection = OpenSqlConnection(url_, {.busy_timeout_ms = busy_timeout_ms});
    return zeus::testing::Unwrap(std::move(connection));
  }

  // The rows of `sql` on `db`; an empty vector (and a test failure) on error.
  static std::vector<SqlRow> Rows(SqlConnection& db, std::string_view sql, std::vector<SqlValue> params = {}) {
    auto rows = db.Query(sql, params);
    EXPECT_TRUE(rows) << rows.error().message();
    return rows ? std::move(*rows) : std::vector<SqlRow>();
  }

  std::int64_t CountRows(SqlConnection& db) {
    const auto rows = Rows(db, "SELECT COUNT(*) FROM t");
    if (rows.size() != 1) return -1;
    return rows[0].Int(0).value_or(-1);
  }

  testing::TempDir temp_;
  std::unique_ptr<testing::ScopedPostgresDatabase> database_;
  std::string url_;
  std::unique_ptr<SqlConnection> db_;
};

TEST_P(SqlConnectionTest, ReportsItsDialect) {
  EXPECT_EQ(db_->dialect(), IsPostgres() ? SqlDialect::kPostgres : SqlDialect::kSqlite);
}

TEST_P(SqlConnectionTest, IntegersRoundTripIncludingExtremes) {
  const std::vector<std::int64_t> values = {
      0, 1, -1, 42, std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  for (std::size_t k = 0; k < values.size(); ++k) {
    auto changed = db_->Execute("INSERT INTO t (id, i) VALUES ($1, $2)",
                                std::vector<SqlValue>{static_cast<std::int64_t>(k), values[k]});
    ASSERT_TRUE(changed) << changed.error().message();
    EXPECT_EQ(*changed, 1);
  }
  for (std::size_t k = 0; k < values.size(); ++k) {
    const auto rows = Rows(*db_, "SELECT i FROM t WHERE id = $1", {static_cast<std::int64_t>(k)});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].Int(0).value_or(0), values[k]) << k;
  }
  // Integers as parameters in a WHERE clause, and the cell's text form.
  const auto max_rows = Rows(*db_, "SELECT i, id FROM t WHERE i = $1", {std::numeric_limits<std::int64_t>::max()});
  ASSERT_EQ(max_rows.size(), 1u);
  EXPECT_EQ(max_rows[0].Text(0).value_or(""), "9223372036854775807");
  EXPECT_EQ(max_rows[0].Int(1).value_or(-1), 4);
}

TEST_P(SqlConnectionTest, DoublesRoundTripBitExact) {
  const std::vector<double> values = {
      0.0,
      0.1,
      1.0 / 3.0,
      -2.5,
      1e-300,
      1e300,
      std::numeric_limits<double>::denorm_min(),
      2.2250738585072009e-308,  // the largest subnormal
      std::numeric_limits<double>::min(),
      std::numeric_limits<double>::max(),
      -std::numeric_limits<double>::max(),
      123456789.12345678,
      std::numeric_limits<double>::infinity(),
      -std::numeric_limits<double>::infinity(),
  };
  for (std::size_t k = 0; k < values.size(); ++k) {
    ASSERT_TRUE(db_->Execute("INSERT INTO t (id, d) VALUES ($1, $2)",
                             std::vector<SqlValue>{static_cast<std::int64_t>(k), values[k]}))
        << values[k];
  }
  const auto rows = Rows(*db_, "SELECT id, d FROM t ORDER BY id");
  ASSERT_EQ(rows.size(), values.size());
  for (std::size_t k = 0; k < values.size(); ++k) {
    auto value = rows[k].Double(1);
    ASSERT_TRUE(value) << value.error().message();
    EXPECT_EQ(std::bit_cast<std::uint64_t>(*value), std::bit_cast<std::uint64_t>(values[k]))
        << "wrote " << values[k] << ", read '" << rows[k].Text(1).value_or("?") << "'";
  }
  // The text forms the file comment promises.
  EXPECT_EQ(rows[1].Text(1).value_or(""), "0.1");
  EXPECT_EQ(rows[12].Text(1).value_or(""), IsPostgres() ? "Infinity" : "inf");
  EXPECT_EQ(rows[13].Text(1).value_or(""), IsPostgres() ? "-Infinity" : "-inf");
  // A double parameter compares equal to the stored value.
  const auto found = Rows(*db_, "SELECT id FROM t WHERE d = $1", {0.1});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].Int(0).value_or(-1), 1);
}

TEST_P(SqlConnectionTest, TextRoundTripsExactly) {
  const std::vector<std::string> values = {
      "",
      "plain",
      "it's \"quoted\"; DROP TABLE t; --",
      "back\\slash and $1 and ?",
      "h\xC3\xA9llo \xE2\x98\x83 \xF0\x9D\x84\x9E",  // é, snowman, G clef (4-byte UTF-8)
      std::string(20000, 'x'),
      "line\nbreak\ttab",
  };
  for (std::size_t k = 0; k < values.size(); ++k) {
    ASSERT_TRUE(db_->Execute("INSERT INTO t (id, s) VALUES ($1, $2)",
                             std::vector<SqlValue>{static_cast<std::int64_t>(k), values[k]}));
  }
  for (std::size_t k = 0; k < values.size(); ++k) {
    const auto rows = Rows(*db_, "SELECT id, s FROM t WHERE s = $1", {values[k]});
    ASSERT_EQ(rows.size(), 1u) << k;
    EXPECT_EQ(rows[0].Int(0).value_or(-1), static_cast<std::int64_t>(k));
    EXPECT_EQ(rows[0].Text(1).value_or("<error>"), values[k]);
  }
}

TEST_P(SqlConnectionTest, NullsRoundTrip) {
  ASSERT_TRUE(
      db_->Execute("INSERT INTO t (id, i, d, s) VALUES ($1, $2, $3, $4)",
                   std::vector<SqlValue>{std::int64_t{1}, std::monostate{}, std::monostate{}, std::monostate{}}));
  ASSERT_TRUE(db_->Execute("INSERT INTO t (id, i, d, s) VALUES ($1, $2, $3, $4)",
                           std::vector<SqlValue>{std::int64_t{2}, std::int64_t{7}, 0.5, std::string("x")}));
  const auto rows = Rows(*db_, "SELECT i, d, s FROM t ORDER BY id");
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(rows[0].size(), 3u);
  for (std::size_t c = 0; c < 3; ++c) {
    EXPECT_TRUE(rows[0].IsNull(c)) << c;
    EXPECT_FALSE(rows[1].IsNull(c)) << c;
  }
  EXPECT_EQ(rows[0].OptionalInt(0).value_or(std::optional<std::int64_t>(-1)), std::nullopt);
  EXPECT_EQ(rows[0].OptionalDouble(1).value_or(std::optional<double>(-1)), std::nullopt);
  EXPECT_EQ(rows[1].OptionalInt(0).value_or(std::nullopt), std::optional<std::int64_t>(7));
  EXPECT_EQ(rows[1].OptionalDouble(1).value_or(std::nullopt), std::optional<double>(0.5));
  const auto null_int = rows[0].Int(0);
  ASSERT_FALSE(null_int);
  EXPECT_EQ(null_int.error().code(), ErrorCode::kInternal);
  EXPECT_THAT(null_int.error().message(), HasSubstr("column 0"));
  EXPECT_FALSE(rows[0].Text(2));
  // A null parameter matches IS NULL.
  const auto matched = Rows(*db_, "SELECT id FROM t WHERE s IS NOT DISTINCT FROM $1", {std::monostate{}});
  ASSERT_EQ(matched.size(), 1u);
  EXPECT_EQ(matched[0].Int(0).value_or(-1), 1);
}

TEST_P(SqlConnectionTest, ExecuteCountsChangedRowsAndStatementsAreReused) {
  for (std::int64_t k = 0; k < 200; ++k) {
    ASSERT_TRUE(db_->Execute("INSERT INTO t (id, i) VALUES ($1, $2)", std::vector<SqlValue>{k, k % 3}));
  }
  auto changed =
      db_->Execute("UPDATE t SET s = $1 WHERE i = $2", std::vector<SqlValue>{std::string("zero"), std::int64_t{0}});
  ASSERT_TRUE(changed) << changed.error().message();
  EXPECT_EQ(*changed, 67);
  auto none = db_->Execute("DELETE FROM t WHERE id < $1", std::vector<SqlValue>{std::int64_t{-5}});
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0);
  EXPECT_EQ(CountRows(*db_), 200);
}

TEST_P(SqlConnectionTest, ExecuteScriptRunsSeveralStatements) {
  ASSERT_TRUE(
      db_->ExecuteScript("CREATE TABLE a (x BIGINT);\n"
                         "INSERT INTO a VALUES (1);\n"
                         "INSERT INTO a VALUES (2);"));
  const auto rows = Rows(*db_, "SELECT SUM(x) FROM a");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].Int(0).value_or(0), 3);
  const auto bad = db_->ExecuteScript("CREATE TABLE b (x BIGINT); THIS IS NOT SQL;");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInternal);
}

TEST_P(SqlConnectionTest, CommitIsVisibleToOtherConnections) {
  auto other = Open();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(db_->Begin());
  ASSERT_TRUE(db_->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{1}}));
  EXPECT_EQ(CountRows(*db_), 1);    // own writes are visible
  EXPECT_EQ(CountRows(*other), 0);  // uncommitted ones are not
  const Status committed = db_->Commit();
  ASSERT_TRUE(committed) << committed.error().message();
  EXPECT_EQ(CountRows(*other), 1);
  // Autocommit again after the transaction.
  ASSERT_TRUE(db_->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{2}}));
  EXPECT_EQ(CountRows(*other), 2);
}

TEST_P(SqlConnectionTest, RollbackDiscardsAndIsHarmlessWithoutTransaction) {
  db_->Rollback();  // no transaction: nothing happens
  ASSERT_TRUE(db_->Begin());
  ASSERT_TRUE(db_->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{1}}));
  db_->Rollback();
  db_->Rollback();
  EXPECT_EQ(CountRows(*db_), 0);
  // The connection is usable for a new transaction.
  ASSERT_TRUE(db_->Begin());
  ASSERT_TRUE(db_->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{2}}));
  ASSERT_TRUE(db_->Commit());
  EXPECT_EQ(CountRows(*db_), 1);
}

TEST_P(SqlConnectionTest, TransactionMisuseFailsPrecondition) {
  const Status commit = db_->Commit();
  ASSERT_FALSE(commit);
  EXPECT_EQ(commit.error().code(), ErrorCode::kFailedPrecondition);
  ASSERT_TRUE(db_->Begin());
  const Status again = db_->Begin();
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(db_->Commit());
}

TEST_P(SqlConnectionTest, DestroyingAConnectionRollsBack) {
  {
    auto doomed = Open();
    ASSERT_NE(doomed, nullptr);
    ASSERT_TRUE(doomed->Begin());
    ASSERT_TRUE(doomed->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{1}}));
  }
  EXPECT_EQ(CountRows(*db_), 0);
}

TEST_P(SqlConnectionTest, UniqueViolationIsAlreadyExists) {
  ASSERT_TRUE(db_->ExecuteScript("CREATE TABLE u (id BIGINT PRIMARY KEY, name TEXT UNIQUE)"));
  ASSERT_TRUE(db_->Execute("INSERT INTO u VALUES ($1, $2)", std::vector<SqlValue>{std::int64_t{1}, std::string("a")}));
  const auto primary =
      db_->Execute("INSERT INTO u VALUES ($1, $2)", std::vector<SqlValue>{std::int64_t{1}, std::string("b")});
  ASSERT_FALSE(primary);
  EXPECT_EQ(primary.error().code(), ErrorCode::kAlreadyExists) << primary.error().message();
  EXPECT_THAT(primary.error().message(), HasSubstr(IsPostgres() ? "PostgreSQL" : "SQLite"));
  const auto unique =
      db_->Execute("INSERT INTO u VALUES ($1, $2)", std::vector<SqlValue>{std::int64_t{2}, std::string("a")});
  ASSERT_FALSE(unique);
  EXPECT_EQ(unique.error().code(), ErrorCode::kAlreadyExists) << unique.error().message();
}

TEST_P(SqlConnectionTest, OtherConstraintViolationsAreInvalidArgument) {
  ASSERT_TRUE(
      db_->ExecuteScript("CREATE TABLE parent (id BIGINT PRIMARY KEY);"
                         "CREATE TABLE child (id BIGINT PRIMARY KEY, parent BIGINT NOT NULL REFERENCES parent(id), "
                         "  n BIGINT CHECK (n >= 0));"
                         "INSERT INTO parent VALUES (1);"));
  const auto foreign = db_->Execute("INSERT INTO child (id, parent, n) VALUES ($1, $2, $3)",
                                    std::vector<SqlValue>{std::int64_t{1}, std::int64_t{99}, std::int64_t{0}});
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code(), ErrorCode::kInvalidArgument) << foreign.error().message();
  const auto check = db_->Execute("INSERT INTO child (id, parent, n) VALUES ($1, $2, $3)",
                                  std::vector<SqlValue>{std::int64_t{1}, std::int64_t{1}, std::int64_t{-1}});
  ASSERT_FALSE(check);
  EXPECT_EQ(check.error().code(), ErrorCode::kInvalidArgument) << check.error().message();
  const auto not_null = db_->Execute("INSERT INTO child (id, parent, n) VALUES ($1, $2, $3)",
                                     std::vector<SqlValue>{std::int64_t{1}, std::monostate{}, std::int64_t{1}});
  ASSERT_FALSE(not_null);
  EXPECT_EQ(not_null.error().code(), ErrorCode::kInvalidArgument) << not_null.error().message();
  EXPECT_TRUE(db_->Execute("INSERT INTO child (id, parent, n) VALUES ($1, $2, $3)",
                           std::vector<SqlValue>{std::int64_t{1}, std::int64_t{1}, std::int64_t{1}}));
}

TEST_P(SqlConnectionTest, BadStatementsAreInternal) {
  const auto syntax = db_->Query("SELEC nonsense");
  ASSERT_FALSE(syntax);
  EXPECT_EQ(syntax.error().code(), ErrorCode::kInternal);
  EXPECT_THAT(syntax.error().message(), HasSubstr("SELEC nonsense"));
  const auto missing = db_->Query("SELECT * FROM no_such_table");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kInternal);
  // A wrong parameter count is the caller's bug on both databases.
  const auto count = db_->Execute("INSERT INTO t (id, i) VALUES ($1, $2)", std::vector<SqlValue>{std::int64_t{1}});
  ASSERT_FALSE(count);
  EXPECT_EQ(count.error().code(), ErrorCode::kInternal) << count.error().message();
  // The connection still works afterwards.
  EXPECT_EQ(CountRows(*db_), 0);
}

TEST_P(SqlConnectionTest, FailedStatementDoomsTheTransaction) {
  ASSERT_TRUE(db_->Begin());
  ASSERT_TRUE(db_->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{1}}));
  const auto duplicate = db_->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{1}});
  ASSERT_FALSE(duplicate);
  const Status commit = db_->Commit();
  ASSERT_FALSE(commit);
  EXPECT_EQ(commit.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_THAT(commit.error().message(), HasSubstr("rolled back"));
  EXPECT_EQ(CountRows(*db_), 0);
  // A new transaction works.
  ASSERT_TRUE(db_->Begin());
  ASSERT_TRUE(db_->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{1}}));
  ASSERT_TRUE(db_->Commit());
  EXPECT_EQ(CountRows(*db_), 1);
}

// PostgreSQL: SELECT ... FOR UPDATE holds the row; SQLite: BEGIN IMMEDIATE
// holds the database. Either way a second writer waits for the first commit
// and then sees its write.
TEST_P(SqlConnectionTest, SecondWriterWaitsForTheFirstCommit) {
  ASSERT_TRUE(
      db_->Execute("INSERT INTO t (id, i) VALUES ($1, $2)", std::vector<SqlValue>{std::int64_t{1}, std::int64_t{1}}));
  const std::string lock_sql =
      IsPostgres() ? "SELECT i FROM t WHERE id = $1 FOR UPDATE" : "SELECT i FROM t WHERE id = $1";
  auto second = Open(/*busy_timeout_ms=*/60000);
  ASSERT_NE(second, nullptr);
  auto observer = Open();
  ASSERT_NE(observer, nullptr);

  ASSERT_TRUE(db_->Begin());
  ASSERT_EQ(Rows(*db_, lock_sql, {std::int64_t{1}}).size(), 1u);

  std::atomic<bool> second_done{false};
  std::atomic<pid_t> worker_tid{0};
  std::int64_t second_read = -1;
  std::string second_error;
  std::thread worker([&] {
    worker_tid = static_cast<pid_t>(::syscall(SYS_gettid));
    if (Status begun = second->Begin(); !begun) {
      second_error = begun.error().message();
    } else if (auto rows = second->Query(lock_sql, std::vector<SqlValue>{std::int64_t{1}}); !rows) {
      second_error = rows.error().message();
    } else if (rows->size() == 1) {
      second_read = (*rows)[0].Int(0).value_or(-2);
    }
    second->Rollback();
    second_done = true;
  });
  // Wait until the second transaction provably waits for the lock:
  // PostgreSQL lists its backend as waiting on a lock; SQLite's busy
  // handler sleeps (the worker thread sleeps nowhere else).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool waiting = false;
  while (!waiting && !second_done.load() && std::chrono::steady_clock::now() < deadline) {
    if (IsPostgres()) {
      const auto rows = Rows(*observer,
                             "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND "
                             "wait_event_type = 'Lock'");
      waiting = rows.size() == 1 && rows[0].Int(0).value_or(0) == 1;
    } else if (worker_tid.load() != 0) {
      waiting = ThreadIsSleeping(worker_tid.load());
    }
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const bool finished_early = second_done.load();
  EXPECT_TRUE(waiting || finished_early) << "the second transaction never started waiting";
  EXPECT_TRUE(
      db_->Execute("UPDATE t SET i = $1 WHERE id = $2", std::vector<SqlValue>{std::int64_t{2}, std::int64_t{1}}));
  EXPECT_TRUE(db_->Commit());
  worker.join();
  EXPECT_FALSE(finished_early) << "the second transaction did not wait for the first";
  EXPECT_EQ(second_error, "");
  EXPECT_EQ(second_read, 2);
}

// 57014 query_canceled, here from statement_timeout: a timeout, not an
// internal error, and the connection stays usable.
TEST_P(SqlConnectionTest, PostgresCancelledStatementIsATimeout) {
  if (!IsPostgres()) GTEST_SKIP() << "PostgreSQL's statement_timeout";
  ASSERT_TRUE(db_->ExecuteScript("SET statement_timeout = '100ms'"));
  // The server cancels it after 100 ms of the 60 s it would sleep.
  auto rows = db_->Query("SELECT pg_sleep(60)");
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.error().code(), ErrorCode::kTimeout) << rows.error().message();
  EXPECT_THAT(rows.error().message(), HasSubstr("SQLSTATE 57014"));
  ASSERT_TRUE(db_->ExecuteScript("SET statement_timeout = 0"));
  EXPECT_EQ(CountRows(*db_), 0);
}

// 53300 too_many_connections, here from a role's CONNECTION LIMIT
// (superusers are exempt, so a plain role): kUnavailable, which the
// transaction runner and the client retry with backoff.
TEST_P(SqlConnectionTest, PostgresTooManyConnectionsIsUnavailable) {
  if (!IsPostgres()) GTEST_SKIP() << "PostgreSQL's connection limits";
  const std::string role = database_->name() + "_limited";
  ASSERT_TRUE(db_->ExecuteScript(fmt::format("CREATE ROLE {} LOGIN CONNECTION LIMIT 1", role)));
  // postgresql://USER@host:port/db -> postgresql://ROLE@host:port/db
  const std::size_t scheme_end = url_.find("://") + 3;
  const std::string role_url = url_.substr(0, scheme_end) + role + url_.substr(url_.find('@', scheme_end));
  {
    auto first = OpenSqlConnection(role_url);
    ASSERT_TRUE(first) << first.error().message();
    auto second = OpenSqlConnection(role_url);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code(), ErrorCode::kUnavailable) << second.error().message();
    EXPECT_THAT(second.error().message(), HasSubstr("too many connections"));
  }
  EXPECT_TRUE(db_->ExecuteScript(fmt::format("DROP ROLE {}", role)));
}

TEST_P(SqlConnectionTest, SqliteBusyAfterTimeoutIsAborted) {
  if (IsPostgres()) GTEST_SKIP() << "SQLite's database lock; PostgreSQL locks rows (see SecondWriterWaits...)";
  auto impatient = Open(/*busy_timeout_ms=*/50);
  ASSERT_NE(impatient, nullptr);
  ASSERT_TRUE(db_->Begin());
  const auto start = std::chrono::steady_clock::now();
  const Status begun = impatient->Begin();
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(begun);
  EXPECT_EQ(begun.error().code(), ErrorCode::kAborted) << begun.error().message();
  EXPECT_GE(waited, std::chrono::milliseconds(40));  // it did wait (a lower bound cannot flake)
  ASSERT_TRUE(db_->Commit());
  EXPECT_TRUE(impatient->Begin());
  EXPECT_TRUE(impatient->Commit());
}

TEST_P(SqlConnectionTest, PostgresReconnectsAfterTheConnectionIsLost) {
  if (!IsPostgres()) GTEST_SKIP() << "PostgreSQL only";
  const std::string probe = "SELECT pg_backend_pid(), COUNT(*) FROM t WHERE id >= $1";
  const auto before = Rows(*db_, probe, {std::int64_t{0}});  // prepares `probe`
  ASSERT_EQ(before.size(), 1u);
  const std::int64_t pid = before[0].Int(0).value_or(0);
  auto killer = Open();
  ASSERT_NE(killer, nullptr);
  const auto killed = Rows(*killer, "SELECT pg_terminate_backend($1::integer, 5000)", {pid});
  ASSERT_EQ(killed.size(), 1u);
  ASSERT_EQ(killed[0].Text(0).value_or(""), "t");

  // The first statement learns that the connection is gone...
  const auto lost = db_->Query(probe, std::vector<SqlValue>{std::int64_t{0}});
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code(), ErrorCode::kUnavailable) << lost.error().message();
  // ...the next one reconnects and prepares the statement again.
  const auto after = Rows(*db_, probe, {std::int64_t{0}});
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0].Int(0).value_or(pid), pid);

  // Begin() reconnects at once when the connection died while idle.
  const std::int64_t pid2 = after[0].Int(0).value_or(0);
  ASSERT_EQ(Rows(*killer, "SELECT pg_terminate_backend($1::integer, 5000)", {pid2}).size(), 1u);
  const Status begun = db_->Begin();
  ASSERT_TRUE(begun) << begun.error().message();
  ASSERT_TRUE(db_->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{1}}));
  ASSERT_TRUE(db_->Commit());
  EXPECT_EQ(CountRows(*killer), 1);

  // Lost inside a transaction: the transaction fails, nothing reconnects
  // behind the caller's back, and the next transaction works.
  const std::int64_t pid3 = Rows(*db_, probe, {std::int64_t{0}})[0].Int(0).value_or(0);
  ASSERT_TRUE(db_->Begin());
  ASSERT_EQ(Rows(*killer, "SELECT pg_terminate_backend($1::integer, 5000)", {pid3}).size(), 1u);
  const auto in_transaction = db_->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{2}});
  ASSERT_FALSE(in_transaction);
  EXPECT_EQ(in_transaction.error().code(), ErrorCode::kUnavailable);
  const auto still_lost = db_->Execute("INSERT INTO t (id) VALUES ($1)", std::vector<SqlValue>{std::int64_t{3}});
  ASSERT_FALSE(still_lost);
  EXPECT_EQ(still_lost.error().code(), ErrorCode::kUnavailable);
  const Status commit = db_->Commit();
  ASSERT_FALSE(commit);
  EXPECT_EQ(commit.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(CountRows(*db_), 1);
}

INSTANTIATE_TEST_SUITE_P(BothDatabases, SqlConnectionTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

// --- URLs ------------------------------------------------------------------

TEST(OpenSqlConnectionTest, RejectsUnknownSchemesListingAcceptedOnes) {
  for (const char* url : {"mysql://root:pw@localhost/db", "no-scheme-at-all", "sqlite+other:///x.db", ""}) {
    auto db = OpenSqlConnection(url);
    ASSERT_FALSE(db) << url;
    EXPECT_EQ(db.error().code(), ErrorCode::kInvalidArgument) << url;
    EXPECT_THAT(db.error().message(), HasSubstr("sqlite://")) << url;
    EXPECT_THAT(db.error().message(), HasSubstr("postgresql://")) << url;
    EXPECT_THAT(db.error().message(), Not(HasSubstr(":pw@"))) << url;
  }
}

TEST(OpenSqlConnectionTest, RejectsMalformedSqliteUrls) {
  for (const char* url : {"sqlite://host/x.db", "sqlite:///x.db?mode=ro", "sqlite:///"}) {
    auto db = OpenSqlConnection(url);
    ASSERT_FALSE(db) << url;
    EXPECT_EQ(db.error().code(), ErrorCode::kInvalidArgument) << url;
  }
}

// What a URL names, without connecting (nothing listens at db.invalid).
TEST(InspectDatabaseUrlTest, NamesTheDialectAndAnInMemoryDatabase) {
  struct Case {
    const char* url;
    SqlDialect dialect;
    bool in_memory;
  };
  for (const Case& c : {Case{"sqlite://", SqlDialect::kSqlite, true},
                        Case{"sqlite:///:memory:", SqlDialect::kSqlite, true},
                        Case{"SQLite+aiosqlite:///:memory:", SqlDialect::kSqlite, true},
                        Case{"sqlite:///zeus_bso.db", SqlDialect::kSqlite, false},
                        Case{"sqlite:////tmp/x:memory:", SqlDialect::kSqlite, false},
                        Case{"postgresql://u:pw@db.invalid/zeus", SqlDialect::kPostgres, false},
                        Case{"Postgres+asyncpg://db.invalid/zeus", SqlDialect::kPostgres, false}}) {
    Result<DatabaseUrlInfo> info = InspectDatabaseUrl(c.url);
    ASSERT_TRUE(info) << c.url << ": " << info.error().message();
    EXPECT_EQ(info->dialect, c.dialect) << c.url;
    EXPECT_EQ(info->in_memory, c.in_memory) << c.url;
  }
  // Refused as OpenSqlConnection refuses them, the password redacted.
  for (const char* url : {"mysql://root:pw@localhost/db", "sqlite://host/x.db", "no-scheme-at-all"}) {
    Result<DatabaseUrlInfo> info = InspectDatabaseUrl(url);
    ASSERT_FALSE(info) << url;
    EXPECT_EQ(info.error().code(), ErrorCode::kInvalidArgument) << url;
    EXPECT_EQ(info.error().message(), OpenSqlConnection(url).error().message()) << url;
    EXPECT_THAT(info.error().message(), Not(HasSubstr(":pw@"))) << url;
  }
}

TEST(OpenSqlConnectionTest, SqliteFileInMissingDirectoryIsIoError) {
  testing::TempDir temp;
  const std::string path = temp.File("missing/dir/test.db");
  auto db = OpenSqlConnection("sqlite:///" + path);
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code(), ErrorCode::kIoError) << db.error().message();
  EXPECT_THAT(db.error().message(), HasSubstr(path));
}

TEST(OpenSqlConnectionTest, SqliteAbsoluteRelativeAndDriverUrls) {
  testing::TempDir temp;
  // sqlite:////abs.db (and the aiosqlite spelling) creates the file.
  {
    auto db = OpenSqlConnection("sqlite+aiosqlite:///" + temp.File("abs.db"));
    ASSERT_TRUE(db) << db.error().message();
    ASSERT_TRUE((*db)->ExecuteScript("CREATE TABLE x (a BIGINT)"));
    EXPECT_TRUE(std::filesystem::exists(temp.File("abs.db")));
    // WAL journal and foreign keys are on.
    auto mode = (*db)->Query("PRAGMA journal_mode");
    ASSERT_TRUE(mode);
    ASSERT_EQ(mode->size(), 1u);
    EXPECT_EQ((*mode)[0].Text(0).value_or(""), "wal");
    auto fk = (*db)->Query("PRAGMA foreign_keys");
    ASSERT_TRUE(fk);
    ASSERT_EQ(fk->size(), 1u);
    EXPECT_EQ((*fk)[0].Int(0).value_or(0), 1);
    auto sync = (*db)->Query("PRAGMA synchronous");
    ASSERT_TRUE(sync);
    ASSERT_EQ(sync->size(), 1u);
    EXPECT_EQ((*sync)[0].Int(0).value_or(0), 1);  // NORMAL
  }
  // sqlite:///rel.db is relative to the working directory.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(temp.path());
  auto relative = OpenSqlConnection("sqlite:///rel.db");
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(relative) << relative.error().message();
  EXPECT_TRUE(std::filesystem::exists(temp.File("rel.db")));
}

// --- WalCheckpointer ---------------------------------------------------------

// Writes `rows` rows of 2 KiB, each in its own transaction.
void FillLog(SqlConnection& db, int first, int rows) {
  for (int i = first; i < first + rows; ++i) {
    const std::vector<SqlValue> params = {SqlValue(static_cast<std::int64_t>(i)), SqlValue(std::string(2048, 'x'))};
    ASSERT_TRUE(db.Execute("INSERT INTO log (k, payload) VALUES ($1, $2)", params));
  }
}

TEST(WalCheckpointerTest, CheckpointsWhatWritersWithoutAutoCheckpointLeave) {
  testing::TempDir temp;
  const std::string url = "sqlite:///" + temp.File("wal.db");
  auto db = OpenSqlConnection(url, {.sqlite_auto_checkpoint = false});
  ASSERT_TRUE(db) << db.error().message();
  ASSERT_TRUE((*db)->ExecuteScript("CREATE TABLE log (k INTEGER PRIMARY KEY, payload TEXT)"));
  // The thread does not run within this test.
  auto checkpointer = WalCheckpointer::Start(url, std::chrono::hours(1));
  ASSERT_TRUE(checkpointer) << checkpointer.error().message();
  FillLog(**db, 0, 1500);
  // No commit checkpointed: the log holds well over SQLite's 1000 pages.
  Result<WalCheckpointer::Progress> first = (*checkpointer)->CheckpointNow();
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_GT(first->wal_frames, 1500);
  EXPECT_EQ(first->checkpointed_frames, first->wal_frames);
  // Fully checkpointed, the log restarts with the next write.
  FillLog(**db, 1500, 1);
  Result<WalCheckpointer::Progress> second = (*checkpointer)->CheckpointNow();
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_LT(second->wal_frames, 10);
  EXPECT_EQ((*checkpointer)->checkpoints(), 2u);
  // The rows are in the database file.
  auto count = (*db)->Query("SELECT COUNT(*) FROM log");
  ASSERT_TRUE(count);
  EXPECT_EQ((*count)[0].Int(0).value_or(0), 1501);
}

TEST(WalCheckpointerTest, WithAutoCheckpointTheLogRestartsByItself) {
  testing::TempDir temp;
  const std::string url = "sqlite:///" + temp.File("wal.db");
  auto db = OpenSqlConnection(url);
  ASSERT_TRUE(db) << db.error().message();
  ASSERT_TRUE((*db)->ExecuteScript("CREATE TABLE log (k INTEGER PRIMARY KEY, payload TEXT)"));
  auto checkpointer = WalCheckpointer::Start(url, std::chrono::hours(1));
  ASSERT_TRUE(checkpointer) << checkpointer.error().message();
  FillLog(**db, 0, 1500);
  Result<WalCheckpointer::Progress> progress = (*checkpointer)->CheckpointNow();
  ASSERT_TRUE(progress) << progress.error().message();
  EXPECT_LT(progress->wal_frames, 1500);
}

TEST(WalCheckpointerTest, TheThreadCheckpointsEveryInterval) {
  testing::TempDir temp;
  const std::string url = "sqlite:///" + temp.File("wal.db");
  auto db = OpenSqlConnection(url, {.sqlite_auto_checkpoint = false});
  ASSERT_TRUE(db) << db.error().message();
  ASSERT_TRUE((*db)->ExecuteScript("CREATE TABLE log (k INTEGER PRIMARY KEY, payload TEXT)"));
  auto checkpointer = WalCheckpointer::Start(url, std::chrono::milliseconds(5));
  ASSERT_TRUE(checkpointer) << checkpointer.error().message();
  FillLog(**db, 0, 10);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((*checkpointer)->checkpoints() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE((*checkpointer)->checkpoints(), 3u);
  checkpointer->reset();  // joins the thread, checkpoints once more
}

TEST(WalCheckpointerTest, RejectsWhatHasNoLog) {
  for (const char* url : {"postgresql://localhost/x", "sqlite://", "sqlite:///:memory:", "mysql://x"}) {
    auto checkpointer = WalCheckpointer::Start(url, std::chrono::seconds(1));
    ASSERT_FALSE(checkpointer) << url;
    EXPECT_EQ(checkpointer.error().code(), ErrorCode::kInvalidArgument) << url;
  }
  testing::TempDir temp;
  auto missing = WalCheckpointer::Start("sqlite:///" + temp.File("missing/dir/x.db"), std::chrono::seconds(1));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kIoError) << missing.error().message();
}

TEST(OpenSqlConnectionTest, SqliteInMemoryDatabasesArePrivate) {
  for (const char* url : {"sqlite://", "sqlite:///:memory:"}) {
    auto a = OpenSqlConnection(url);
    auto b = OpenSqlConnection(url);
    ASSERT_TRUE(a) << url;
    ASSERT_TRUE(b) << url;
    EXPECT_EQ((*a)->dialect(), SqlDialect::kSqlite);
    ASSERT_TRUE((*a)->ExecuteScript("CREATE TABLE x (a BIGINT); INSERT INTO x VALUES (5);"));
    auto rows = (*a)->Query("SELECT a FROM x");
    ASSERT_TRUE(rows);
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ((*rows)[0].Int(0).value_or(0), 5);
    EXPECT_FALSE((*b)->Query("SELECT a FROM x")) << "in-memory databases must not be shared";
  }
  EXPECT_FALSE(std::filesystem::exists(":memory:"));
}

TEST(OpenSqlConnectionTest, UnreachablePostgresIsUnavailable) {
  zeus::testing::RefusingPort refusing;
  ASSERT_NE(refusing.port(), 0);
  const std::string at = refusing.address();
  for (const std::string& url :
       {"postgresql://zeus:s3cret@" + at + "/zeus", "postgres://zeus:s3cret@" + at + "/zeus",
        "postgresql+asyncpg://zeus:s3cret@" + at + "/zeus?sslmode=disable"}) {
    auto db = OpenSqlConnection(url);
    ASSERT_FALSE(db) << url;
    EXPECT_EQ(db.error().code(), ErrorCode::kUnavailable) << db.error().message();
    EXPECT_THAT(db.error().message(), HasSubstr("PostgreSQL"));
    EXPECT_THAT(db.error().message(), HasSubstr("@" + at + "/zeus"));
    EXPECT_THAT(db.error().message(), Not(HasSubstr("s3cret")));
  }
}

TEST(RedactDatabaseUrlTest, ReplacesPasswordsOnly) {
  EXPECT_EQ(RedactDatabaseUrl("postgresql://zeus:secret@db:5432/bso"), "postgresql://zeus:***@db:5432/bso");
  EXPECT_EQ(RedactDatabaseUrl("postgresql+asyncpg://u:p%40ss@h/d?sslmode=require"),
            "postgresql+asyncpg://u:***@h/d?sslmode=require");
  EXPECT_EQ(RedactDatabaseUrl("postgresql://u:pa@ss/w@rd@h/d"), "postgresql://u:***@h/d");
  EXPECT_EQ(RedactDatabaseUrl("postgresql://zeus@db/bso"), "postgresql://zeus@db/bso");
  EXPECT_EQ(RedactDatabaseUrl("postgresql://db/bso"), "postgresql://db/bso");
  EXPECT_EQ(RedactDatabaseUrl("postgresql://db/bso?user=u&password=pw&sslmode=require"),
            "postgresql://db/bso?user=u&password=***&sslmode=require");
  EXPECT_EQ(RedactDatabaseUrl("postgresql://db/bso?PASSWORD=pw"), "postgresql://db/bso?PASSWORD=***");
  EXPECT_EQ(RedactDatabaseUrl("sqlite:////var/lib/zeus/bso.db"), "sqlite:////var/lib/zeus/bso.db");
  EXPECT_EQ(RedactDatabaseUrl("sqlite:///data/a:b@c.db"), "sqlite:///data/a:b@c.db");
  EXPECT_EQ(RedactDatabaseUrl(""), "");
}

// --- The translation tables ---------------------------------------------------

TEST(SqliteErrorTableTest, TranslatesExtendedResultCodes) {
  using internal::SqliteErrorCode;
  EXPECT_EQ(SqliteErrorCode(SQLITE_CONSTRAINT_PRIMARYKEY), ErrorCode::kAlreadyExists);
  EXPECT_EQ(SqliteErrorCode(SQLITE_CONSTRAINT_UNIQUE), ErrorCode::kAlreadyExists);
  EXPECT_EQ(SqliteErrorCode(SQLITE_BUSY), ErrorCode::kAborted);
  EXPECT_EQ(SqliteErrorCode(SQLITE_BUSY_SNAPSHOT), ErrorCode::kAborted);
  EXPECT_EQ(SqliteErrorCode(SQLITE_BUSY_RECOVERY), ErrorCode::kAborted);
  EXPECT_EQ(SqliteErrorCode(SQLITE_LOCKED), ErrorCode::kAborted);
  EXPECT_EQ(SqliteErrorCode(SQLITE_LOCKED_SHAREDCACHE), ErrorCode::kAborted);
  EXPECT_EQ(SqliteErrorCode(SQLITE_CONSTRAINT), ErrorCode::kInvalidArgument);
  EXPECT_EQ(SqliteErrorCode(SQLITE_CONSTRAINT_FOREIGNKEY), ErrorCode::kInvalidArgument);
  EXPECT_EQ(SqliteErrorCode(SQLITE_CONSTRAINT_CHECK), ErrorCode::kInvalidArgument);
  EXPECT_EQ(SqliteErrorCode(SQLITE_CONSTRAINT_NOTNULL), ErrorCode::kInvalidArgument);
  EXPECT_EQ(SqliteErrorCode(SQLITE_CONSTRAINT_TRIGGER), ErrorCode::kInvalidArgument);
  EXPECT_EQ(SqliteErrorCode(SQLITE_CANTOPEN), ErrorCode::kIoError);
  EXPECT_EQ(SqliteErrorCode(SQLITE_CANTOPEN_ISDIR), ErrorCode::kIoError);
  for (int code : {SQLITE_ERROR, SQLITE_INTERNAL, SQLITE_NOMEM, SQLITE_IOERR, SQLITE_IOERR_WRITE, SQLITE_CORRUPT,
                   SQLITE_FULL, SQLITE_MISMATCH, SQLITE_MISUSE, SQLITE_RANGE, SQLITE_READONLY}) {
    EXPECT_EQ(SqliteErrorCode(code), ErrorCode::kInternal) << code;
  }
  const Error error = internal::SqliteError(SQLITE_CONSTRAINT_UNIQUE, "INSERT", "UNIQUE constraint failed: u.name");
  EXPECT_EQ(error.code(), ErrorCode::kAlreadyExists);
  EXPECT_THAT(error.message(), HasSubstr("SQLite"));
  EXPECT_THAT(error.message(), HasSubstr("INSERT"));
  EXPECT_THAT(error.message(), HasSubstr("UNIQUE constraint failed: u.name"));
}

TEST(PostgresErrorTableTest, TranslatesSqlstates) {
  using internal::PostgresErrorCode;
  EXPECT_EQ(PostgresErrorCode("23505", false), ErrorCode::kAlreadyExists);
  EXPECT_EQ(PostgresErrorCode("40001", false), ErrorCode::kAborted);
  EXPECT_EQ(PostgresErrorCode("40P01", false), ErrorCode::kAborted);
  EXPECT_EQ(PostgresErrorCode("40002", false), ErrorCode::kInternal);
  for (const char* state : {"23000", "23001", "23502", "23503", "23514", "23P01"}) {
    EXPECT_EQ(PostgresErrorCode(state, false), ErrorCode::kInvalidArgument) << state;
  }
  for (const char* state : {"08000", "08001", "08003", "08004", "08006", "57P01", "57P02", "57P03", "53300"}) {
    EXPECT_EQ(PostgresErrorCode(state, false), ErrorCode::kUnavailable) << state;
  }
  EXPECT_EQ(PostgresErrorCode("57014", false), ErrorCode::kTimeout);
  EXPECT_EQ(PostgresErrorCode("08P01", false), ErrorCode::kInternal);
  for (const char* state : {"", "42601", "42P01", "22P02", "25P02", "XX000", "2350", "235050"}) {
    EXPECT_EQ(PostgresErrorCode(state, false), ErrorCode::kInternal) << state;
  }
  // A broken connection wins over any SQLSTATE.
  EXPECT_EQ(PostgresErrorCode("", true), ErrorCode::kUnavailable);
  EXPECT_EQ(PostgresErrorCode("23505", true), ErrorCode::kUnavailable);

  const Error error = internal::PostgresError("23505", false, "INSERT",
                                              "ERROR:  duplicate key value violates unique constraint \"u_pkey\"\n"
                                              "DETAIL:  Key (id)=(1) already exists.\n");
  EXPECT_EQ(error.code(), ErrorCode::kAlreadyExists);
  EXPECT_THAT(error.message(), HasSubstr("PostgreSQL: INSERT: ERROR:  duplicate key"));
  EXPECT_THAT(error.message(), HasSubstr("(SQLSTATE 23505)"));
  EXPECT_THAT(error.message(), Not(HasSubstr("\n")));
}

// --- SqlRow -------------------------------------------------------------------

TEST(SqlRowTest, DoubleReadsBothDatabasesSpellings) {
  const double inf = std::numeric_limits<double>::infinity();
  SqlRow row({"inf", "-inf", "Infinity", "-Infinity", "0.1", "1e-300", "5e-324", "-0", "42", "1.7976931348623157e+308",
              "NaN"});
  EXPECT_EQ(row.Double(0).value_or(0), inf);
  EXPECT_EQ(row.Double(1).value_or(0), -inf);
  EXPECT_EQ(row.Double(2).value_or(0), inf);
  EXPECT_EQ(row.Double(3).value_or(0), -inf);
  EXPECT_EQ(row.Double(4).value_or(0), 0.1);
  EXPECT_EQ(row.Double(5).value_or(0), 1e-300);
  EXPECT_EQ(row.Double(6).value_or(0), std::numeric_limits<double>::denorm_min());
  EXPECT_TRUE(std::signbit(row.Double(7).value_or(1)));
  EXPECT_EQ(row.Double(8).value_or(0), 42.0);
  EXPECT_EQ(row.Double(9).value_or(0), std::numeric_limits<double>::max());
  EXPECT_TRUE(std::isnan(row.Double(10).value_or(0)));
}

TEST(SqlRowTest, RejectsWhatDoesNotParse) {
  SqlRow row({"abc", "1.5x", "", "1.5", "9223372036854775808", std::nullopt, " 1", "1e999", "-9223372036854775808"});
  for (std::size_t c : {0u, 1u, 2u, 6u, 7u}) {
    const auto value = row.Double(c);
    ASSERT_FALSE(value) << c;
    EXPECT_EQ(value.error().code(), ErrorCode::kInternal);
    EXPECT_THAT(value.error().message(), HasSubstr("column " + std::to_string(c)));
  }
  for (std::size_t c : {0u, 1u, 2u, 3u, 4u, 5u, 6u}) {
    EXPECT_FALSE(row.Int(c)) << c;
  }
  EXPECT_EQ(row.Int(8).value_or(0), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(row.OptionalInt(3));
  EXPECT_FALSE(row.OptionalDouble(0));
  EXPECT_EQ(row.OptionalDouble(5).value_or(std::optional<double>(1.0)), std::nullopt);
  EXPECT_FALSE(row.Text(5));
  EXPECT_EQ(row.Text(2).value_or("x"), "");
}

TEST(FormatDoubleTest, ShortestRoundTrip) {
  EXPECT_EQ(internal::FormatDouble(0.1), "0.1");
  EXPECT_EQ(internal::FormatDouble(1e-300), "1e-300");
  EXPECT_EQ(internal::FormatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(internal::FormatDouble(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(internal::FormatDouble(3.0), "3");
}

}  // namespace
}  // namespace zeus::bso
