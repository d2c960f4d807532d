// Copyright 2026 The Zeus C++ Authors.
//
// Private to zeus_bso_sql: the two drivers behind OpenSqlConnection and their
// error translation tables (one function per database, tested in full in
// sql_connection_test.cc).

#ifndef ZEUS_SRC_BSO_SQL_SQL_DRIVERS_H_
#define ZEUS_SRC_BSO_SQL_SQL_DRIVERS_H_

#include <memory>
#include <string>
#include <string_view>

#include "bso/sql/sql_connection.h"
#include "zeus/base/error.h"

namespace zeus::bso::internal {

// Opens (creating if missing) the SQLite database at `path`, or a private
// in-memory database when `path` is ":memory:", and applies the pragmas of
// OpenSqlConnection. Fails with kIoError naming the path when the file cannot
// be opened.
Result<std::unique_ptr<SqlConnection>> OpenSqliteConnection(const std::string& path,
                                                            const SqlConnectionOptions& options);

// WalCheckpointer::Start for the database file at `path`.
Result<std::unique_ptr<WalCheckpointer>> StartSqliteWalCheckpointer(const std::string& path,
                                                                    std::chrono::milliseconds interval);

// Connects to PostgreSQL. `libpq_url` is a postgresql:// URI that libpq
// accepts (no "+driver" suffix); `display_url` is what messages show (the
// password redacted). Fails with kUnavailable when the server cannot be
// reached.
Result<std::unique_ptr<SqlConnection>> OpenPostgresConnection(const std::string& libpq_url,
                                                              const std::string& display_url);

// The SQLite table: an extended result code -> ErrorCode.
//   SQLITE_CONSTRAINT_PRIMARYKEY, SQLITE_CONSTRAINT_UNIQUE -> kAlreadyExists
//   SQLITE_BUSY*, SQLITE_LOCKED*                           -> kAborted
//   other SQLITE_CONSTRAINT*                               -> kInvalidArgument
//   SQLITE_CANTOPEN*                                       -> kIoError
//   anything else                                          -> kInternal
ErrorCode SqliteErrorCode(int extended_result_code);
// The Error for a failed SQLite call: "SQLite: <context>: <sqlite message>".
Error SqliteError(int extended_result_code, std::string_view context, std::string_view sqlite_message);

// The PostgreSQL table: a SQLSTATE (empty when libpq gave none) -> ErrorCode.
//   connection_broken (pqxx::broken_connection)   -> kUnavailable
//   23505 unique_violation                        -> kAlreadyExists
//   40001 serialization_failure, 40P01 deadlock   -> kAborted
//   other 23xxx (integrity constraint violations) -> kInvalidArgument
//   08xxx except 08P01, 57P01/57P02/57P03
//       (connection failure, server shutting down),
//   53300 too_many_connections (max_connections or
//       a role's CONNECTION LIMIT; transient)      -> kUnavailable (retried)
//   57014 query_canceled (statement_timeout,
//       pg_cancel_backend): the transaction is
//       rolled back; retrying could only time out
//       again inside the same request              -> kTimeout (not retried
//       by TransactionRunner; HTTP 504, which the client retries)
//   anything else (08P01 protocol violation, e.g. a wrong parameter count,
//       is a bug in the caller)                    -> kInternal
ErrorCode PostgresErrorCode(std::string_view sqlstate, bool connection_broken);
// The Error for a failed PostgreSQL call: "PostgreSQL: <context>: <message>"
// (with " (SQLSTATE xxxxx)" when there is one).
Error PostgresError(std::string_view sqlstate, bool connection_broken, std::string_view context,
                    std::string_view server_message);

// Formats a double in shortest round-trip form ("0.1", "1e-300", "inf",
// "-inf", "nan").
std::string FormatDouble(double value);

// SQL for error messages: tabs and newlines as spaces, cut at 80 characters
// with "...".
std::string AbbreviateSql(std::string_view sql);

}  // namespace zeus::bso::internal

#endif  // ZEUS_SRC_BSO_SQL_SQL_DRIVERS_H_
