// Copyright 2026 The Zeus C++ Authors.

#include "testing/postgres.h"

#include "testing/temp_dir.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>
#include <pqxx/pqxx>

namespace zeus::testing {
namespace {

// libpq takes the URL as is; a SQLAlchemy "+driver" suffix is dropped.
std::string LibpqUrl(const std::string& url) {
  const std::size_t sep = url.find("://");
  if (sep == std::string::npos) return url;
  return "postgresql" + url.substr(sep);
}

// `url` with its path (the database name) replaced by `database`.
std::string WithDatabase(const std::string& url, const std::string& database) {
  const std::size_t sep = url.find("://");
  const std::size_t authority = sep == std::string::npos ? 0 : sep + 3;
  const std::size_t query = url.find_first_of("?#", authority);
  const std::size_t path = url.find('/', authority);
  const std::size_t path_begin = path != std::string::npos && (query == std::string::npos || path < query)
                                     ? path
                                     : (query == std::string::npos ? url.size() : query);
  const std::size_t path_end = query == std::string::npos ? url.size() : query;
  return url.substr(0, path_begin) + "/" + database + url.substr(path_end);
}

void RunAdmin(const std::string& admin_url, const std::string& sql) {
  pqxx::connection connection(LibpqUrl(admin_url));
  pqxx::nontransaction tx(connection);  // CREATE/DROP DATABASE cannot run in a transaction
  tx.exec(sql);
  tx.commit();
}

}  // namespace

std::optional<std::string> TestPostgresUrl() {
  const char* url = std::getenv("ZEUS_TEST_POSTGRES_URL");
  if (url == nullptr || *url == '\0') return std::nullopt;
  return std::string(url);
}

Result<std::unique_ptr<ScopedPostgresDatabase>> ScopedPostgresDatabase::Create(const std::string& admin_url) {
  static std::atomic<int> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  const std::string name = fmt::format("zeus_t{}_{}_{}", ::getpid(), counter++,
                                       std::chrono::duration_cast<std::chrono::microseconds>(now).count() % 1000000);
  try {
    RunAdmin(admin_url, fmt::format("CREATE DATABASE \"{}\"", name));
  } catch (const pqxx::broken_connection& e) {
    return Fail(ErrorCode::kUnavailable, fmt::format("cannot reach the test PostgreSQL server: {}", e.what()));
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kInternal, fmt::format("cannot create test database {}: {}", name, e.what()));
  }
  return std::unique_ptr<ScopedPostgresDatabase>(
      new ScopedPostgresDatabase(admin_url, name, WithDatabase(admin_url, name)));
}

ScopedPostgresDatabase::~ScopedPostgresDatabase() {
  try {
    RunAdmin(admin_url_, fmt::format("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", name_));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warning: cannot drop test database %s: %s\n", name_.c_str(), e.what());
  }
}

Result<std::optional<std::string>> TestDatabaseUrl(bool postgres, const TempDir& dir,
                                                   std::unique_ptr<ScopedPostgresDatabase>* holder) {
  if (!postgres) return std::optional<std::string>("sqlite:///" + dir.File("test.db"));
  std::optional<std::string> admin = TestPostgresUrl();
  if (!admin) return std::optional<std::string>();
  Result<std::unique_ptr<ScopedPostgresDatabase>> db = ScopedPostgresDatabase::Create(*admin);
  if (!db) return Fail(db.error());
  *holder = std::move(*db);
  return std::optional<std::string>((*holder)->url());
}

}  // namespace zeus::testing
