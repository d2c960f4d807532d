// Copyright 2026 The Zeus C++ Authors.
//
// PostgreSQL fixtures for tests. A test server comes from
// scripts/postgres-test-server; its URL is passed in ZEUS_TEST_POSTGRES_URL:
//
//   export ZEUS_TEST_POSTGRES_URL=$(scripts/postgres-test-server start)
//
// Tests that need PostgreSQL skip (GTEST_SKIP) when the variable is unset.

#ifndef ZEUS_TESTING_POSTGRES_H_
#define ZEUS_TESTING_POSTGRES_H_

#include <memory>
#include <optional>
#include <string>

#include "zeus/base/error.h"

namespace zeus::testing {

// $ZEUS_TEST_POSTGRES_URL, or nullopt when it is unset or empty.
std::optional<std::string> TestPostgresUrl();

// A fresh, uniquely named database on the server of `admin_url` (a
// postgresql:// URL of a user allowed to CREATE DATABASE), dropped WITH
// (FORCE) on destruction, so each test gets an isolated database.
class ScopedPostgresDatabase {
 public:
  // Fails with kUnavailable when the server cannot be reached, kInternal when
  // the database cannot be created.
  static Result<std::unique_ptr<ScopedPostgresDatabase>> Create(const std::string& admin_url);
  ~ScopedPostgresDatabase();
  ScopedPostgresDatabase(const ScopedPostgresDatabase&) = delete;
  ScopedPostgresDatabase& operator=(const ScopedPostgresDatabase&) = delete;

  const std::string& name() const { return name_; }
  // admin_url with its database replaced by name().
  const std::string& url() const { return url_; }

 private:
  ScopedPostgresDatabase(std::string admin_url, std::string name, std::string url)
      : admin_url_(std::move(admin_url)), name_(std::move(name)), url_(std::move(url)) {}

  std::string admin_url_;
  std::string name_;
  std::string url_;
};

class TempDir;

// The database of a test that runs on both SQLite and PostgreSQL: with
// postgres false, "sqlite:///" + a file in `dir`; with postgres true, a
// fresh database on $ZEUS_TEST_POSTGRES_URL, kept alive by *holder. nullopt
// when PostgreSQL is asked for and the variable is unset (skip the test);
// the database's error when it cannot be created.
Result<std::optional<std::string>> TestDatabaseUrl(bool postgres, const TempDir& dir,
                                                   std::unique_ptr<ScopedPostgresDatabase>* holder);

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_POSTGRES_H_
