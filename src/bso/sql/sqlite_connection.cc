// Copyright 2026 The Zeus C++ Authors.
//
// SqlConnection over the sqlite3 C API.

#include <pthread.h>
#include <sqlite3.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bso/sql/sql_connection.h"
#include "bso/sql/sql_drivers.h"

namespace zeus::bso::internal {

ErrorCode SqliteErrorCode(int extended_result_code) {
  switch (extended_result_code) {
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_UNIQUE:
      return ErrorCode::kAlreadyExists;
    default:
      break;
  }
  switch (extended_result_code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return ErrorCode::kAborted;
    case SQLITE_CONSTRAINT:
      return ErrorCode::kInvalidArgument;
    case SQLITE_CANTOPEN:
      return ErrorCode::kIoError;
    default:
      return ErrorCode::kInternal;
  }
}

Error SqliteError(int extended_result_code, std::string_view context, std::string_view sqlite_message) {
  return Error(SqliteErrorCode(extended_result_code),
               fmt::format("SQLite: {}: {} ({})", context, sqlite_message, sqlite3_errstr(extended_result_code)));
}

namespace {

struct StatementDeleter {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

// A prepared statement and, for each of its parameters $1..$n, the index
// SQLite gave it.
struct CachedStatement {
  Statement statement;
  std::vector<int> parameter_indexes;
};

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
};

class SqliteConnection final : public SqlConnection {
 public:
  SqliteConnection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteConnection() override {
    Rollback();
    statements_.clear();
    sqlite3_close_v2(db_);
  }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  SqlDialect dialect() const override { return SqlDialect::kSqlite; }

  Status Begin() override {
    if (InTransaction()) return Fail(ErrorCode::kFailedPrecondition, "SQLite: Begin: a transaction is already open");
    first_failure_.reset();
    return RunUnchecked("BEGIN IMMEDIATE", {}, nullptr);
  }

  Status Commit() override {
    if (!InTransaction()) return Fail(ErrorCode::kFailedPrecondition, "SQLite: Commit: no transaction is open");
    if (first_failure_.has_value()) {
      // As on PostgreSQL, a failed statement dooms its transaction.
      Error failure = first_failure_->WithContext("SQLite: Commit: rolled back because a statement failed");
      Rollback();
      return Fail(std::move(failure));
    }
    Status status = RunUnchecked("COMMIT", {}, nullptr);
    if (!status) Rollback();
    return status;
  }

  void Rollback() noexcept override {
    first_failure_.reset();
    if (InTransaction()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }

  Result<std::vector<SqlRow>> Query(std::string_view sql, std::span<const SqlValue> params) override {
    std::vector<SqlRow> rows;
    Status status = Run(sql, params, &rows);
    if (!status) return Fail(status.error());
    return rows;
  }

  Result<std::int64_t> Execute(std::string_view sql, std::span<const SqlValue> params) override {
    Status status = Run(sql, params, nullptr);
    if (!status) return Fail(status.error());
    return static_cast<std::int64_t>(sqlite3_changes64(db_));
  }

  Status ExecuteScript(std::string_view sql) override { return Exec(std::string(sql), AbbreviateSql(sql)); }

  // Runs the connection pragmas; a failure here means the file is unusable.
  Status Configure(const SqlConnectionOptions& options) {
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, options.busy_timeout_ms);
    if (!options.sqlite_auto_checkpoint) sqlite3_wal_autocheckpoint(db_, 0);
    if (Status s = Exec("PRAGMA journal_mode=WAL", "PRAGMA journal_mode=WAL"); !s) return s;
    if (Status s = Exec("PRAGMA synchronous=NORMAL", "PRAGMA synchronous=NORMAL"); !s) return s;
    return Exec("PRAGMA foreign_keys=ON", "PRAGMA foreign_keys=ON");
  }

 private:
  bool InTransaction() const noexcept { return sqlite3_get_autocommit(db_) == 0; }

  Error LastError(std::string_view context) const {
    return SqliteError(sqlite3_extended_errcode(db_), fmt::format("{}: '{}'", path_, context), sqlite3_errmsg(db_));
  }

  Status Exec(const std::string& sql, std::string_view context) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    if (rc == SQLITE_OK) return OkStatus();
    const std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    Error error = SqliteError(sqlite3_extended_errcode(db_), fmt::format("{}: '{}'", path_, context), text);
    NoteFailure(error);
    return Fail(std::move(error));
  }

  void NoteFailure(const Error& error) {
    if (InTransaction() && !first_failure_.has_value()) first_failure_ = error;
  }

  Result<CachedStatement*> Prepare(std::string_view sql) {
    if (auto it = statements_.find(sql); it != statements_.end()) return &it->second;
    const std::string key(sql);
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    const int rc =
        sqlite3_prepare_v3(db_, key.c_str(), static_cast<int>(key.size() + 1), SQLITE_PREPARE_PERSISTENT, &raw, &tail);
    Statement stmt(raw);
    if (rc != SQLITE_OK) return Fail(LastError(AbbreviateSql(sql)));
    if (stmt == nullptr) {
      return Fail(ErrorCode::kInternal, fmt::format("SQLite: {}: '{}' holds no statement", path_, AbbreviateSql(sql)));
    }
    for (; tail != nullptr && *tail != '\0'; ++tail) {
      if (*tail != ' ' && *tail != '\n' && *tail != '\t' && *tail != '\r' && *tail != ';') {
        return Fail(ErrorCode::kInternal, fmt::format("SQLite: {}: '{}' holds more than one statement; use "
                                                      "ExecuteScript",
                                                      path_, AbbreviateSql(sql)));
      }
    }
    CachedStatement cached{std::move(stmt), {}};
    const int count = sqlite3_bind_parameter_count(cached.statement.get());
    for (int i = 1; i <= count; ++i) {
      const std::string name = fmt::format("${}", i);
      const int index = sqlite3_bind_parameter_index(cached.statement.get(), name.c_str());
      if (index == 0) {
        return Fail(ErrorCode::kInternal,
                    fmt::format("SQLite: {}: '{}' does not use parameter {}", path_, AbbreviateSql(sql), name));
      }
      cached.parameter_indexes.push_back(index);
    }
    return &statements_.emplace(key, std::move(cached)).first->second;
  }

  Status Bind(const CachedStatement& cached, std::string_view sql, std::span<const SqlValue> params) {
    if (cached.parameter_indexes.size() != params.size()) {
      return Fail(ErrorCode::kInternal, fmt::format("SQLite: {}: '{}' takes {} parameters, got {}", path_,
                                                    AbbreviateSql(sql), cached.parameter_indexes.size(),
                                                    params.size()));
    }
    sqlite3_stmt* stmt = cached.statement.get();
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int index = cached.parameter_indexes[i];
      const SqlValue& value = params[i];
      int rc = SQLITE_OK;
      if (std::holds_alternative<std::monostate>(value)) {
        rc = sqlite3_bind_null(stmt, index);
      } else if (const auto* integer = std::get_if<std::int64_t>(&value)) {
        rc = sqlite3_bind_int64(stmt, index, *integer);
      } else if (const auto* real = std::get_if<double>(&value)) {
        rc = sqlite3_bind_double(stmt, index, *real);
      } else {
        const std::string& text = std::get<std::string>(value);
        rc = sqlite3_bind_text64(stmt, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      }
      if (rc != SQLITE_OK) return Fail(LastError(AbbreviateSql(sql)));
    }
    return OkStatus();
  }

  static std::optional<std::string> Cell(sqlite3_stmt* stmt, int column) {
    switch (sqlite3_column_type(stmt, column)) {
      case SQLITE_NULL:
        return std::nullopt;
      case SQLITE_INTEGER: {
        char buffer[32];
        auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), sqlite3_column_int64(stmt, column));
        return std::string(buffer, ptr);
      }
      case SQLITE_FLOAT:
        // Never sqlite3_column_text here: it prints 15 significant digits.
        return FormatDouble(sqlite3_column_double(stmt, column));
      default: {  // SQLITE_TEXT, SQLITE_BLOB
        const void* data = sqlite3_column_blob(stmt, column);
        const int size = sqlite3_column_bytes(stmt, column);
        if (data == nullptr) return std::string();
        return std::string(static_cast<const char*>(data), static_cast<std::size_t>(size));
      }
    }
  }

  // Prepares (or reuses), binds, steps to completion; collects rows when
  // `rows` is set.
  Status Run(std::string_view sql, std::span<const SqlValue> params, std::vector<SqlRow>* rows) {
    Status status = RunUnchecked(sql, params, rows);
    if (!status) NoteFailure(status.error());
    return status;
  }

  Status RunUnchecked(std::string_view sql, std::span<const SqlValue> params, std::vector<SqlRow>* rows) {
    auto cached = Prepare(sql);
    if (!cached) return Fail(cached.error());
    sqlite3_stmt* s = (*cached)->statement.get();
    struct Resetter {
      sqlite3_stmt* s;
      ~Resetter() {
        sqlite3_reset(s);
      }
    } resetter{s};
    if (Status bound = Bind(**cached, sql, params); !bound) return bound;
    const int columns = sqlite3_column_count(s);
    while (true) {
      const int rc = sqlite3_step(s);
      if (rc == SQLITE_DONE) return OkStatus();
      if (rc != SQLITE_ROW) return Fail(LastError(AbbreviateSql(sql)));
      if (rows == nullptr) continue;
      std::vector<std::optional<std::string>> cells;
      cells.reserve(static_cast<std::size_t>(columns));
      for (int c = 0; c < columns; ++c) cells.push_back(Cell(s, c));
      rows->emplace_back(std::move(cells));
    }
  }

  sqlite3* db_;
  std::string path_;
  std::unordered_map<std::string, CachedStatement, StringHash, std::equal_to<>> statements_;
  // The first failure inside the open transaction: Commit rolls back and
  // returns it, as PostgreSQL does.
  std::optional<Error> first_failure_;
};

}  // namespace

Result<std::unique_ptr<SqlConnection>> OpenSqliteConnection(const std::string& path,
                                                            const SqlConnectionOptions& options) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const int code = db != nullptr ? sqlite3_extended_errcode(db) : rc;
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    Error error = SqliteError(code, fmt::format("cannot open database file '{}'", path), message);
    if (error.code() == ErrorCode::kIoError) return Fail(error);
    return Fail(Error(ErrorCode::kIoError, error.message()));
  }
  auto connection = std::make_unique<SqliteConnection>(db, path);
  if (Status configured = connection->Configure(options); !configured) {
    return Fail(configured.error().code() == ErrorCode::kAborted
                    ? configured.error()
                    : Error(ErrorCode::kIoError, configured.error().message()));
  }
  return std::unique_ptr<SqlConnection>(std::move(connection));
}

namespace {

class SqliteWalCheckpointer final : public WalCheckpointer {
 public:
  SqliteWalCheckpointer(sqlite3* db, std::string path, std::chrono::milliseconds interval)
      : db_(db), path_(std::move(path)), interval_(interval) {}
  ~SqliteWalCheckpointer() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    (void)CheckpointNow();
    sqlite3_close_v2(db_);
  }
  SqliteWalCheckpointer(const SqliteWalCheckpointer&) = delete;
  SqliteWalCheckpointer& operator=(const SqliteWalCheckpointer&) = delete;

  void StartThread() {
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "zeus-wal-ckpt");
      std::unique_lock lock(mu_);
      while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
        lock.unlock();
        // Errors (a checkpoint of another process running, a busy lock)
        // are transient; the next round tries again.
        (void)CheckpointNow();
        lock.lock();
      }
    });
  }

  Result<Progress> CheckpointNow() override {
    std::lock_guard lock(db_mu_);
    Progress progress;
    const int rc = sqlite3_wal_checkpoint_v2(db_, "main", SQLITE_CHECKPOINT_PASSIVE, &progress.wal_frames,
                                             &progress.checkpointed_frames);
    if (rc != SQLITE_OK) {
      return Fail(SqliteError(sqlite3_extended_errcode(db_), fmt::format("{}: checkpoint", path_),
                              sqlite3_errmsg(db_)));
    }
    checkpoints_.fetch_add(1, std::memory_order_relaxed);
    return progress;
  }

  std::uint64_t checkpoints() const override { return checkpoints_.load(std::memory_order_relaxed); }

 private:
  sqlite3* const db_;
  const std::string path_;
  const std::chrono::milliseconds interval_;
  std::mutex db_mu_;  // one checkpoint at a time on db_
  std::mutex mu_;     // guards stopping_
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> checkpoints_{0};
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<WalCheckpointer>> StartSqliteWalCheckpointer(const std::string& path,
                                                                    std::chrono::milliseconds interval) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const int code = db != nullptr ? sqlite3_extended_errcode(db) : rc;
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Fail(Error(ErrorCode::kIoError,
                      SqliteError(code, fmt::format("cannot open database file '{}'", path), message).message()));
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, 1000);
  // A connection learns the journal mode when it first reads; until then a
  // checkpoint finds no log.
  char* message = nullptr;
  if (sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, &message) != SQLITE_OK) {
    Error error = SqliteError(sqlite3_extended_errcode(db), fmt::format("{}: 'PRAGMA journal_mode=WAL'", path),
                              message != nullptr ? message : "");
    sqlite3_free(message);
    sqlite3_close_v2(db);
    return Fail(std::move(error));
  }
  auto checkpointer = std::make_unique<SqliteWalCheckpointer>(db, path, interval);
  checkpointer->StartThread();
  return std::unique_ptr<WalCheckpointer>(std::move(checkpointer));
}

}  // namespace zeus::bso::internal
