// Copyright 2026 The Zeus C++ Authors.
//
// SqlRow's accessors, URL dispatch and redaction. The drivers live in
// sqlite_connection.cc and postgres_connection.cc.

#include "bso/sql/sql_connection.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "bso/sql/sql_drivers.h"

namespace zeus::bso {
namespace {

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ParseInt64(std::string_view text, std::int64_t& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && !text.empty();
}

// Accepts what both databases print: decimal and exponent forms, "inf",
// "-inf", "Infinity", "-Infinity", "NaN". std::from_chars takes no leading
// '+', so one is skipped here.
bool ParseDouble(std::string_view text, double& out) {
  if (text.empty()) return false;
  if (text.front() == '+') text.remove_prefix(1);
  if (text.empty() || text.front() == '+') return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out, std::chars_format::general);
  // ERANGE is reported for subnormal results too; those parse correctly and
  // are accepted, a true overflow is not.
  if (ec == std::errc::result_out_of_range && ptr == end) {
    const std::string copy(text);
    char* strtod_end = nullptr;
    out = std::strtod(copy.c_str(), &strtod_end);
    return strtod_end == copy.c_str() + copy.size() && !std::isinf(out);
  }
  return ec == std::errc() && ptr == end;
}

Error CellError(std::size_t column, std::string_view what, const std::optional<std::string>& cell) {
  if (!cell.has_value()) {
    return Error(ErrorCode::kInternal, fmt::format("column {}: expected {}, got NULL", column, what));
  }
  return Error(ErrorCode::kInternal, fmt::format("column {}: expected {}, got '{}'", column, what, *cell));
}

}  // namespace

Result<std::int64_t> SqlRow::Int(std::size_t column) const {
  const auto& cell = cells_[column];
  std::int64_t value = 0;
  if (!cell.has_value() || !ParseInt64(*cell, value)) return Fail(CellError(column, "an integer", cell));
  return value;
}

Result<double> SqlRow::Double(std::size_t column) const {
  const auto& cell = cells_[column];
  double value = 0;
  if (!cell.has_value() || !ParseDouble(*cell, value)) return Fail(CellError(column, "a number", cell));
  return value;
}

Result<std::string> SqlRow::Text(std::size_t column) const {
  const auto& cell = cells_[column];
  if (!cell.has_value()) return Fail(CellError(column, "text", cell));
  return *cell;
}

Result<std::optional<std::int64_t>> SqlRow::OptionalInt(std::size_t column) const {
  if (IsNull(column)) return std::optional<std::int64_t>();
  auto value = Int(column);
  if (!value) return Fail(value.error());
  return std::optional<std::int64_t>(*value);
}

Result<std::optional<double>> SqlRow::OptionalDouble(std::size_t column) const {
  if (IsNull(column)) return std::optional<double>();
  auto value = Double(column);
  if (!value) return Fail(value.error());
  return std::optional<double>(*value);
}

namespace {

// The scheme of a URL, lower case ("" when there is none), and the rest.
std::pair<std::string, std::string_view> SplitScheme(std::string_view url) {
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) return {std::string(), std::string_view()};
  return {ToLower(url.substr(0, sep)), url.substr(sep + 3)};
}

bool IsSqliteScheme(const std::string& scheme) {
  return scheme == "sqlite" || scheme == "sqlite+aiosqlite" || scheme == "sqlite+pysqlite";
}

// SQLAlchemy: sqlite:// and sqlite:///:memory: are in memory;
// sqlite:///rel.db is relative, sqlite:////abs.db absolute.
Result<std::string> SqlitePath(std::string_view rest, const std::string& shown) {
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("database URL '{}': SQLite URLs take no query parameters", shown));
  }
  if (rest.empty() || rest == "/:memory:") return std::string(":memory:");
  if (rest.front() == '/' && rest.size() > 1) return std::string(rest.substr(1));
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("database URL '{}': expected sqlite:///relative/path.db, sqlite:////absolute/path.db "
                          "or sqlite:// (in memory)",
                          shown));
}

// A URL that OpenSqlConnection accepts: its dialect, and the SQLite path
// (":memory:" for a private in-memory database) or libpq's URI.
struct ParsedUrl {
  SqlDialect dialect = SqlDialect::kSqlite;
  std::string target;
};

Result<ParsedUrl> ParseDatabaseUrl(std::string_view url, const std::string& shown) {
  const auto [scheme, rest] = SplitScheme(url);
  const std::string base_scheme = scheme.substr(0, scheme.find('+'));
  if (IsSqliteScheme(scheme)) {
    Result<std::string> path = SqlitePath(rest, shown);
    if (!path) return Fail(path.error());
    return ParsedUrl{SqlDialect::kSqlite, std::move(*path)};
  }
  if (base_scheme == "postgresql" || base_scheme == "postgres") {
    // libpq accepts postgresql:// and postgres://; a "+driver" suffix is
    // SQLAlchemy's and means nothing here.
    return ParsedUrl{SqlDialect::kPostgres, "postgresql://" + std::string(rest)};
  }
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("database URL '{}': unsupported scheme '{}'; accepted: sqlite://, sqlite+aiosqlite://, "
                          "postgresql://, postgres:// (a '+driver' suffix such as postgresql+asyncpg:// is ignored)",
                          shown, scheme));
}

}  // namespace

Result<DatabaseUrlInfo> InspectDatabaseUrl(std::string_view url) {
  Result<ParsedUrl> parsed = ParseDatabaseUrl(url, RedactDatabaseUrl(url));
  if (!parsed) return Fail(parsed.error());
  return DatabaseUrlInfo{parsed->dialect, parsed->dialect == SqlDialect::kSqlite && parsed->target == ":memory:"};
}

Result<std::unique_ptr<SqlConnection>> OpenSqlConnection(std::string_view url, const SqlConnectionOptions& options) {
  const std::string shown = RedactDatabaseUrl(url);
  Result<ParsedUrl> parsed = ParseDatabaseUrl(url, shown);
  if (!parsed) return Fail(parsed.error());
  if (parsed->dialect == SqlDialect::kSqlite) return internal::OpenSqliteConnection(parsed->target, options);
  return internal::OpenPostgresConnection(parsed->target, shown);
}

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(std::string_view sqlite_url,
                                                                std::chrono::milliseconds interval) {
  const std::string shown = RedactDatabaseUrl(sqlite_url);
  const auto [scheme, rest] = SplitScheme(sqlite_url);
  if (!IsSqliteScheme(scheme)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("database URL '{}': only SQLite databases have a write-ahead log to checkpoint", shown));
  }
  Result<std::string> path = SqlitePath(rest, shown);
  if (!path) return Fail(path.error());
  if (*path == ":memory:") {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("database URL '{}': an in-memory database has no write-ahead log", shown));
  }
  return internal::StartSqliteWalCheckpointer(*path, interval);
}

std::string RedactDatabaseUrl(std::string_view url) {
  std::string out(url);
  const std::size_t sep = out.find("://");
  // SQLite URLs hold a path and no credentials; an '@' there is a file name.
  if (sep != std::string::npos && ToLower(out.substr(0, sep)).starts_with("sqlite")) return out;
  if (sep != std::string::npos) {
    // The user info ends at the last '@' before the query; a password with a
    // stray '/' or '@' is therefore redacted whole too.
    const std::size_t query = out.find_first_of("?#", sep + 3);
    const std::size_t at = out.rfind('@', query == std::string::npos ? std::string::npos : query);
    if (at != std::string::npos && at > sep + 3 && (query == std::string::npos || at < query)) {
      const std::size_t colon = out.find(':', sep + 3);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // libpq also takes the password as a query parameter.
  const std::size_t query = out.find('?');
  if (query != std::string::npos) {
    std::size_t pos = query + 1;
    while (pos < out.size()) {
      std::size_t end = out.find('&', pos);
      if (end == std::string::npos) end = out.size();
      const std::size_t eq = out.find('=', pos);
      if (eq != std::string::npos && eq < end && ToLower(std::string_view(out).substr(pos, eq - pos)) == "password") {
        out.replace(eq + 1, end - eq - 1, "***");
        end = eq + 4;
      }
      pos = end + 1;
    }
  }
  return out;
}

namespace internal {

std::string AbbreviateSql(std::string_view sql) {
  std::string out;
  for (char c : sql) {
    if (out.size() >= 80) {
      out += "...";
      break;
    }
    out += (c == '\n' || c == '\t') ? ' ' : c;
  }
  return out;
}

std::string FormatDouble(double value) {
  std::array<char, 64> buffer{};
  auto [ptr, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  if (ec != std::errc()) return "nan";  // cannot happen: 64 bytes hold any double
  return std::string(buffer.data(), ptr);
}

}  // namespace internal
}  // namespace zeus::bso
