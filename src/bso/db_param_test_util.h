// Copyright 2026 The Zeus C++ Authors.
//
// Test helper: the two databases that the service's parameterised tests run
// on (SQLite always; PostgreSQL when testing/postgres.h finds a server), with
// their names for GoogleTest.

#ifndef ZEUS_SRC_BSO_DB_PARAM_TEST_UTIL_H_
#define ZEUS_SRC_BSO_DB_PARAM_TEST_UTIL_H_

#include <ostream>
#include <string>

#include <gtest/gtest.h>

namespace zeus::bso::testing {

enum class Db { kSqlite, kPostgres };

inline const char* DbLabel(Db db) { return db == Db::kSqlite ? "Sqlite" : "Postgres"; }
// INSTANTIATE_TEST_SUITE_P's name generator.
inline std::string DbName(const ::testing::TestParamInfo<Db>& param) { return DbLabel(param.param); }
// How GoogleTest prints a parameter (found by argument-dependent lookup).
inline void PrintTo(Db db, std::ostream* os) { *os << DbLabel(db); }

}  // namespace zeus::bso::testing

#endif  // ZEUS_SRC_BSO_DB_PARAM_TEST_UTIL_H_
