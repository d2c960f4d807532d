// Copyright 2026 The Zeus C++ Authors.
//
// SqlConnection over libpqxx 6.4 (Debian 12). Every pqxx call runs inside
// Guard(), which turns any exception into an Error; none escapes.
//
// Transactions are plain SQL: Begin() sends BEGIN and Commit() COMMIT through
// short-lived pqxx::nontransaction objects, the same way every statement is
// sent, so Query/Execute work alike inside and outside a transaction.
// pqxx's automatic reconnection is switched off: a lost connection is
// replaced (and its prepared statements forgotten) by the next Begin() or
// Query()/Execute() outside a transaction, never silently in the middle of
// one.

#include <cmath>
#include <exception>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pqxx/pqxx>

#include "bso/sql/sql_connection.h"
#include "bso/sql/sql_drivers.h"

namespace zeus::bso::internal {

ErrorCode PostgresErrorCode(std::string_view sqlstate, bool connection_broken) {
  if (connection_broken) return ErrorCode::kUnavailable;
  if (sqlstate == "23505") return ErrorCode::kAlreadyExists;
  if (sqlstate == "40001" || sqlstate == "40P01") return ErrorCode::kAborted;
  if (sqlstate.size() == 5 && sqlstate.substr(0, 2) == "23") return ErrorCode::kInvalidArgument;
  if (sqlstate == "08P01") return ErrorCode::kInternal;  // protocol violation: a caller bug
  if (sqlstate.size() == 5 && sqlstate.substr(0, 2) == "08") return ErrorCode::kUnavailable;
  if (sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03") return ErrorCode::kUnavailable;
  if (sqlstate == "53300") return ErrorCode::kUnavailable;
  if (sqlstate == "57014") return ErrorCode::kTimeout;
  return ErrorCode::kInternal;
}

Error PostgresError(std::string_view sqlstate, bool connection_broken, std::string_view context,
                    std::string_view server_message) {
  // libpq's messages end with a newline and sometimes hold several lines.
  std::string message(server_message);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  std::string text = fmt::format("PostgreSQL: {}: {}", context, message);
  if (!sqlstate.empty()) text += fmt::format(" (SQLSTATE {})", sqlstate);
  return Error(PostgresErrorCode(sqlstate, connection_broken), std::move(text));
}

namespace {

// Server notices ("NOTICE: table ... does not exist, skipping") are not
// written to stderr by a library.
class QuietNotices final : public pqxx::errorhandler {
 public:
  explicit QuietNotices(pqxx::connection_base& connection) : pqxx::errorhandler(connection) {}
  bool operator()(const char[]) noexcept override { return false; }
};

// Adds connect_timeout=10 unless the URL sets one, so that an unreachable
// host fails in seconds rather than after the kernel's TCP timeout.
std::string WithConnectTimeout(const std::string& url) {
  if (url.find("connect_timeout=") != std::string::npos) return url;
  return url + (url.find('?') == std::string::npos ? "?" : "&") + "connect_timeout=10";
}

class PostgresConnection final : public SqlConnection {
 public:
  PostgresConnection(std::string url, std::string display_url)
      : url_(WithConnectTimeout(url)), display_url_(std::move(display_url)) {}
  ~PostgresConnection() override {
    Rollback();
    Disconnect();
  }
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  SqlDialect dialect() const override { return SqlDialect::kPostgres; }

  Status Connect() {
    Disconnect();
    return Guard("connect", [&] {
      connection_ = std::make_unique<pqxx::connection>(url_);
      notices_ = std::make_unique<QuietNotices>(*connection_);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      connection_->inhibit_reactivation(true);
#pragma GCC diagnostic pop
      connection_->set_client_encoding("UTF8");
      pqxx::nontransaction tx(*connection_);
      // Any value above 0 selects shortest round-trip output for floats
      // (PostgreSQL 12+), whatever the server's default.
      tx.exec("SET extra_float_digits = 3");
      tx.commit();
    });
  }

  Status Begin() override {
    if (in_transaction_)
      return Fail(ErrorCode::kFailedPrecondition, "PostgreSQL: Begin: a transaction is already open");
    if (Status connected = EnsureConnected(); !connected) return connected;
    Status status = Guard("BEGIN", [&] { Send("BEGIN ISOLATION LEVEL READ COMMITTED"); });
    if (!status && broken_) {
      // The connection died while idle (a server restart, an idle timeout);
      // BEGIN changed nothing, so one fresh connection is tried at once.
      if (Status connected = EnsureConnected(); !connected) return connected;
      status = Guard("BEGIN", [&] { Send("BEGIN ISOLATION LEVEL READ COMMITTED"); });
    }
    if (status) {
      in_transaction_ = true;
      first_failure_.reset();
    }
    return status;
  }

  Status Commit() override {
    if (!in_transaction_) return Fail(ErrorCode::kFailedPrecondition, "PostgreSQL: Commit: no transaction is open");
    if (first_failure_.has_value()) {
      // The server has aborted the transaction; COMMIT would only roll back.
      Error failure = first_failure_->WithContext("PostgreSQL: Commit: rolled back because a statement failed");
      Rollback();
      return Fail(std::move(failure));
    }
    Status status = Guard("COMMIT", [&] { Send("COMMIT"); });
    if (!status) {
      Rollback();
      return status;
    }
    in_transaction_ = false;
    return OkStatus();
  }

  void Rollback() noexcept override {
    if (!in_transaction_) return;
    in_transaction_ = false;
    first_failure_.reset();
    if (broken_ || connection_ == nullptr) return;  // the server rolled back when the connection went
    Status ignored = Guard("ROLLBACK", [&] { Send("ROLLBACK"); });
    (void)ignored;
  }

  Result<std::vector<SqlRow>> Query(std::string_view sql, std::span<const SqlValue> params) override {
    std::vector<SqlRow> rows;
    Status status = Run(sql, params, [&](const pqxx::result& result) {
      rows.reserve(result.size());
      const auto columns = static_cast<std::size_t>(result.columns());
      for (const auto& row : result) {
        std::vector<std::optional<std::string>> cells;
        cells.reserve(columns);
        for (const auto& field : row) {
          if (field.is_null()) {
            cells.emplace_back(std::nullopt);
          } else {
            cells.emplace_back(std::string(field.c_str(), field.size()));
          }
        }
        rows.emplace_back(std::move(cells));
      }
    });
    if (!status) return Fail(status.error());
    return rows;
  }

  Result<std::int64_t> Execute(std::string_view sql, std::span<const SqlValue> params) override {
    std::int64_t changed = 0;
    Status status = Run(
        sql, params, [&](const pqxx::result& result) { changed = static_cast<std::int64_t>(result.affected_rows()); });
    if (!status) return Fail(status.error());
    return changed;
  }

  Status ExecuteScript(std::string_view sql) override {
    if (Status connected = EnsureConnected(); !connected) return connected;
    return Guard(AbbreviateSql(sql), [&] { Send(std::string(sql)); });
  }

 private:
  void Disconnect() noexcept {
    notices_.reset();
    connection_.reset();
    prepared_.clear();
    broken_ = false;
  }

  // A usable connection: the current one, or (outside a transaction) a new
  // one when it was lost.
  Status EnsureConnected() {
    if (connection_ != nullptr && !broken_ && connection_->is_open()) return OkStatus();
    if (in_transaction_) {
      Error error(ErrorCode::kUnavailable,
                  fmt::format("PostgreSQL: the connection to {} was lost during the transaction; roll back and retry",
                              display_url_));
      if (!first_failure_.has_value()) first_failure_ = error;
      return Fail(std::move(error));
    }
    return Connect();
  }

  // Sends SQL without parameters or results.
  void Send(const std::string& sql) {
    pqxx::nontransaction tx(*connection_);
    tx.exec(sql);
    tx.commit();
  }

  template <class F>
  Status Run(std::string_view sql, std::span<const SqlValue> params, F&& consume) {
    if (Status connected = EnsureConnected(); !connected) return connected;
    std::vector<std::optional<std::string>> values;
    values.reserve(params.size());
    for (const SqlValue& value : params) {
      if (std::holds_alternative<std::monostate>(value)) {
        values.emplace_back(std::nullopt);
      } else if (const auto* integer = std::get_if<std::int64_t>(&value)) {
        values.emplace_back(std::to_string(*integer));
      } else if (const auto* real = std::get_if<double>(&value)) {
        values.emplace_back(FormatPostgresDouble(*real));
      } else {
        const std::string& text = std::get<std::string>(value);
        if (text.find('\0') != std::string::npos) {
          return Fail(ErrorCode::kInvalidArgument,
                      fmt::format("PostgreSQL: '{}': parameter ${} holds a NUL byte, which text cannot store",
                                  AbbreviateSql(sql), values.size() + 1));
        }
        values.emplace_back(text);
      }
    }
    return Guard(AbbreviateSql(sql), [&] {
      const std::string& name = PreparedName(sql);
      pqxx::nontransaction tx(*connection_);
      pqxx::result result = tx.exec_prepared(name, pqxx::prepare::make_dynamic_params(values));
      tx.commit();
      consume(result);
    });
  }

  static std::string FormatPostgresDouble(double value) {
    if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
    if (std::isnan(value)) return "NaN";
    return FormatDouble(value);
  }

  // The name of the prepared statement for `sql`, defining it on first use
  // (pqxx sends PREPARE with the first execution).
  const std::string& PreparedName(std::string_view sql) {
    std::string key(sql);
    if (auto it = prepared_.find(key); it != prepared_.end()) return it->second;
    std::string name = fmt::format("zeus_s{}", next_statement_++);
    connection_->prepare(name, key);
    return prepared_.emplace(std::move(key), std::move(name)).first->second;
  }

  // Runs `body`, translating every exception. Marks the connection broken
  // when it was lost, and the transaction failed when one is open.
  template <class F>
  Status Guard(std::string_view context, F&& body) noexcept {
    std::optional<Error> error;
    try {
      body();
      return OkStatus();
    } catch (const pqxx::broken_connection& e) {
      // pqxx also throws this for any SQLSTATE of class 08, such as 08P01
      // (a wrong parameter count), on a connection that is still open.
      const bool lost = connection_ == nullptr || !connection_->is_open();
      error = PostgresError("", lost, Context(context), e.what());
    } catch (const pqxx::sql_error& e) {
      const bool lost = connection_ == nullptr || !connection_->is_open();
      error = PostgresError(e.sqlstate(), lost, Context(context), e.what());
    } catch (const pqxx::in_doubt_error& e) {
      error = PostgresError("", true, Context(context), e.what());
    } catch (const std::exception& e) {
      const bool lost = connection_ == nullptr || !connection_->is_open();
      error = PostgresError("", lost, Context(context), e.what());
    } catch (...) {
      error = Error(ErrorCode::kInternal, fmt::format("PostgreSQL: {}: unknown exception", context));
    }
    if (error->code() == ErrorCode::kUnavailable) broken_ = true;
    if (in_transaction_ && !first_failure_.has_value()) first_failure_ = error;
    return Fail(std::move(*error));
  }

  std::string Context(std::string_view what) const { return fmt::format("{}: '{}'", display_url_, what); }

  std::string url_;
  std::string display_url_;
  std::unique_ptr<pqxx::connection> connection_;
  std::unique_ptr<QuietNotices> notices_;                  // registered with connection_; reset first
  std::unordered_map<std::string, std::string> prepared_;  // SQL text -> statement name
  int next_statement_ = 0;
  bool in_transaction_ = false;
  // The first failure inside the open transaction: the server has aborted
  // it, so Commit rolls back and returns this error.
  std::optional<Error> first_failure_;
  bool broken_ = false;
};

}  // namespace

Result<std::unique_ptr<SqlConnection>> OpenPostgresConnection(const std::string& libpq_url,
                                                              const std::string& display_url) {
  try {
    auto connection = std::make_unique<PostgresConnection>(libpq_url, display_url);
    if (Status connected = connection->Connect(); !connected) return Fail(connected.error());
    return std::unique_ptr<SqlConnection>(std::move(connection));
  } catch (const std::exception& e) {  // std::bad_alloc
    return Fail(ErrorCode::kInternal, fmt::format("PostgreSQL: {}: {}", display_url, e.what()));
  }
}

}  // namespace zeus::bso::internal
