// Copyright 2026 The Zeus C++ Authors.
//
// The batch-size service's one seam to its database: a connection that runs
// parameterised SQL inside explicit transactions, with the same contract on
// SQLite (embedded) and PostgreSQL (a cluster).
//
//   * SQL text uses $1, $2, ... placeholders on both databases.
//   * Prepared statements are cached per connection, keyed by SQL text.
//   * Every cell comes back as text (or null): integers in decimal, floats in
//     shortest round-trip form (so a double read back is bit-identical), and
//     +/-infinity as "inf"/"-inf" (SQLite) or "Infinity"/"-Infinity"
//     (PostgreSQL); SqlRow's accessors read both.
//   * Errors are translated once, here (the table is tested in
//     sql_connection_test.cc):
//       unique or primary-key violation        -> kAlreadyExists
//       serialization failure, deadlock,
//       SQLite busy after its timeout          -> kAborted (retry the transaction)
//       connection refused or lost             -> kUnavailable
//       other constraint violations            -> kInvalidArgument
//       anything else                          -> kInternal
//     The message names the database and quotes its own message.
//
// Thread-safety: a connection is used by one thread at a time; open one per
// thread.

#ifndef ZEUS_SRC_BSO_SQL_SQL_CONNECTION_H_
#define ZEUS_SRC_BSO_SQL_SQL_CONNECTION_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::bso {

// A bound parameter: null, integer, float or text.
using SqlValue = std::variant<std::monostate, std::int64_t, double, std::string>;
// An integer parameter from any integer type (an int alone would be ambiguous
// between the int64 and double alternatives).
inline SqlValue SqlInt(std::int64_t v) { return SqlValue(v); }

// One result row; cells are text or null (see the file comment).
class SqlRow {
 public:
  explicit SqlRow(std::vector<std::optional<std::string>> cells) : cells_(std::move(cells)) {}

  std::size_t size() const { return cells_.size(); }
  // REQUIRES: column < size() for all accessors.
  bool IsNull(std::size_t column) const { return !cells_[column].has_value(); }
  // Fail with kInternal, naming the column index, when the cell is null or
  // does not parse.
  Result<std::int64_t> Int(std::size_t column) const;
  Result<double> Double(std::size_t column) const;
  Result<std::string> Text(std::size_t column) const;
  // nullopt for a null cell; kInternal when a non-null cell does not parse.
  Result<std::optional<std::int64_t>> OptionalInt(std::size_t column) const;
  Result<std::optional<double>> OptionalDouble(std::size_t column) const;

 private:
  std::vector<std::optional<std::string>> cells_;
};

enum class SqlDialect { kSqlite, kPostgres };

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;

  virtual SqlDialect dialect() const = 0;

  // Starts a read-write transaction. SQLite: BEGIN IMMEDIATE (takes the
  // database write lock, waiting up to the busy timeout). PostgreSQL: BEGIN
  // at READ COMMITTED; callers serialise per row with SELECT ... FOR UPDATE.
  // REQUIRES: no transaction is open.
  virtual Status Begin() = 0;
  // Commits the open transaction. On failure the transaction is rolled back.
  // A statement that failed inside the transaction dooms it (PostgreSQL
  // aborts such a transaction; SQLite is made to match): Commit then rolls
  // back and returns that statement's error, code unchanged.
  virtual Status Commit() = 0;
  // Rolls back the open transaction, if any. Never fails.
  virtual void Rollback() noexcept = 0;

  // Runs a statement that returns rows. Outside a transaction it runs in
  // autocommit mode.
  virtual Result<std::vector<SqlRow>> Query(std::string_view sql, std::span<const SqlValue> params = {}) = 0;
  // Runs a statement and returns the number of rows it changed.
  virtual Result<std::int64_t> Execute(std::string_view sql, std::span<const SqlValue> params = {}) = 0;
  // Runs one or more statements without parameters or results (DDL).
  virtual Status ExecuteScript(std::string_view sql) = 0;
};

struct SqlConnectionOptions {
  // How long a statement waits for another connection's lock (SQLite) before
  // failing with kAborted.
  int busy_timeout_ms = 10000;
  // SQLite: whether the commit that grows the write-ahead log past 1000
  // pages also checkpoints it (SQLite's default). Turn it off only where a
  // WalCheckpointer does that work on a thread of its own.
  bool sqlite_auto_checkpoint = true;
};

// Opens a connection from a URL:
//   sqlite:///relative/path.db, sqlite:////absolute/path.db  (SQLAlchemy's
//       convention; "sqlite+aiosqlite://" is accepted too), sqlite:// or
//       sqlite:///:memory: for a private in-memory database. The file is
//       created if missing; WAL journal, synchronous=NORMAL (a committed
//       transaction survives a process crash), foreign keys on, busy timeout
//       and checkpointing as in `options`.
//   postgresql://... or postgres://... (libpq's URI syntax; a "+driver"
//       suffix such as postgresql+asyncpg:// is accepted and ignored).
// Fails with kInvalidArgument for any other scheme (the message lists the
// accepted ones), kUnavailable when the server cannot be reached, kIoError
// when the SQLite file cannot be opened.
Result<std::unique_ptr<SqlConnection>> OpenSqlConnection(std::string_view url,
                                                         const SqlConnectionOptions& options = {});

// What a database URL names, read without connecting.
struct DatabaseUrlInfo {
  SqlDialect dialect = SqlDialect::kSqlite;
  bool in_memory = false;  // a private in-memory SQLite database
};
// The dialect and kind of a URL that OpenSqlConnection accepts; fails as
// OpenSqlConnection does (kInvalidArgument naming the URL, password
// redacted) for one it refuses.
Result<DatabaseUrlInfo> InspectDatabaseUrl(std::string_view url);

// Checkpoints a SQLite database's write-ahead log (copies its pages into
// the database file, then lets the log restart) from a thread of its own,
// every `interval`, in PASSIVE mode: it never blocks readers or writers, and
// writers whose connections have sqlite_auto_checkpoint off never pay for a
// checkpoint and its fsync inside a commit.
// Thread-safety: CheckpointNow and checkpoints may be called from any thread.
class WalCheckpointer {
 public:
  struct Progress {
    int wal_frames = 0;           // frames in the log
    int checkpointed_frames = 0;  // of those, now in the database file
  };
  // sqlite_url as for OpenSqlConnection (a file, not in memory). Fails with
  // kInvalidArgument for another URL and kIoError when the file cannot be
  // opened.
  static Result<std::unique_ptr<WalCheckpointer>> Start(std::string_view sqlite_url,
                                                        std::chrono::milliseconds interval);
  // Stops the thread, then checkpoints once more.
  virtual ~WalCheckpointer() = default;

  // One checkpoint now, on the calling thread. kAborted when another
  // connection's checkpoint is running.
  virtual Result<Progress> CheckpointNow() = 0;
  // Checkpoints completed so far (by the thread and by CheckpointNow).
  virtual std::uint64_t checkpoints() const = 0;
};

// The URL with any password replaced by "***", for logs and messages.
std::string RedactDatabaseUrl(std::string_view url);

}  // namespace zeus::bso

#endif  // ZEUS_SRC_BSO_SQL_SQL_CONNECTION_H_
