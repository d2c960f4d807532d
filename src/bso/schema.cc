// Copyright 2026 The Zeus C++ Authors.

#include "bso/schema.h"

#include "bso/arm_statistics.h"

#include <array>
#include <string_view>

#include <fmt/format.h>

namespace zeus::bso {
namespace {

// Migration i (1-based) takes the schema from version i - 1 to i: its SQL,
// then its data step (when it has one), in the migration's transaction.
// Append only; never edit a released step.
struct Migration {
  std::string_view sql;
  Status (*data)(SqlConnection&) = nullptr;
};

constexpr std::array<Migration, kSchemaVersion> kMigrations = {
    Migration{R"sql(
CREATE TABLE bso_job (
  job_id                VARCHAR(300) PRIMARY KEY,
  job_id_prefix         VARCHAR(300) NOT NULL,
  default_batch_size    INTEGER NOT NULL,
  batch_sizes           TEXT NOT NULL,
  higher_is_better_metric INTEGER NOT NULL CHECK (higher_is_better_metric IN (0, 1)),
  eta_knob              DOUBLE PRECISION NOT NULL,
  beta_knob             DOUBLE PRECISION,
  target_metric         DOUBLE PRECISION NOT NULL,
  max_epochs            INTEGER NOT NULL,
  num_pruning_rounds    INTEGER NOT NULL,
  window_size           INTEGER NOT NULL,
  max_power             DOUBLE PRECISION NOT NULL,
  number_of_gpus        INTEGER NOT NULL,
  gpu_model             VARCHAR(300) NOT NULL,
  mab_prior_mean        DOUBLE PRECISION NOT NULL,
  mab_prior_precision   DOUBLE PRECISION NOT NULL,
  mab_num_explorations  INTEGER NOT NULL,
  mab_seed              BIGINT,
  rng_state             TEXT NOT NULL,
  stage                 VARCHAR(16) NOT NULL CHECK (stage IN ('Pruning', 'MAB')),
  min_cost              DOUBLE PRECISION,
  min_cost_batch_size   INTEGER NOT NULL,
  next_trial_number     INTEGER NOT NULL,
  created_us            BIGINT NOT NULL
);
CREATE TABLE bso_batch_size (
  job_id      VARCHAR(300) NOT NULL REFERENCES bso_job (job_id) ON DELETE CASCADE,
  batch_size  INTEGER NOT NULL,
  PRIMARY KEY (job_id, batch_size)
);
CREATE TABLE bso_arm (
  job_id            VARCHAR(300) NOT NULL,
  batch_size        INTEGER NOT NULL,
  mean              DOUBLE PRECISION NOT NULL,
  precision_        DOUBLE PRECISION NOT NULL,
  num_observations  INTEGER NOT NULL,
  PRIMARY KEY (job_id, batch_size),
  FOREIGN KEY (job_id, batch_size) REFERENCES bso_batch_size (job_id, batch_size) ON DELETE CASCADE
);
CREATE TABLE bso_trial (
  job_id        VARCHAR(300) NOT NULL,
  trial_number  INTEGER NOT NULL,
  batch_size    INTEGER NOT NULL,
  type          VARCHAR(16) NOT NULL CHECK (type IN ('Exploration', 'Concurrent', 'MAB')),
  status        VARCHAR(16) NOT NULL CHECK (status IN ('Dispatched', 'Succeeded', 'Failed')),
  start_us      BIGINT NOT NULL,
  end_us        BIGINT,
  time          DOUBLE PRECISION,
  energy        DOUBLE PRECISION,
  converged     INTEGER CHECK (converged IN (0, 1)),
  PRIMARY KEY (job_id, trial_number),
  FOREIGN KEY (job_id, batch_size) REFERENCES bso_batch_size (job_id, batch_size) ON DELETE CASCADE
);
CREATE INDEX bso_trial_by_batch_size ON bso_trial (job_id, batch_size, status, trial_number, time, energy);
)sql"},
    // 2: the exploration timeout counts from a trial's last report.
    Migration{R"sql(
ALTER TABLE bso_trial ADD COLUMN last_report_us BIGINT;
)sql"},
    // 3: Welford's moments of each arm's rewards, so that a report updates
    // its arm without reading every trial; backfilled (and the posteriors
    // refitted under the long-history rule) from the stored trials.
    Migration{R"sql(
ALTER TABLE bso_arm ADD COLUMN reward_mean DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE bso_arm ADD COLUMN reward_m2 DOUBLE PRECISION NOT NULL DEFAULT 0;
)sql",
              &BackfillArmStatistics},
    // 4: the batch-size policy of a job (JobSpec.policy); older jobs ran the
    // original.
    Migration{R"sql(
ALTER TABLE bso_job ADD COLUMN policy TEXT NOT NULL DEFAULT 'zeus';
)sql"},
};

// An arbitrary constant naming the migration lock (PostgreSQL advisory lock).
constexpr std::int64_t kMigrationLockId = 0x7a657573'62736f;  // "zeusbso"

}  // namespace

Result<int> SchemaVersion(SqlConnection& connection) {
  const std::string_view exists_sql =
      connection.dialect() == SqlDialect::kPostgres
          ? "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'zeus_schema'"
          : "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'zeus_schema'";
  Result<std::vector<SqlRow>> exists = connection.Query(exists_sql);
  if (!exists) return Fail(exists.error());
  Result<std::int64_t> count = exists->at(0).Int(0);
  if (!count) return Fail(count.error());
  if (*count == 0) return 0;
  Result<std::vector<SqlRow>> rows = connection.Query("SELECT version FROM zeus_schema");
  if (!rows) return Fail(rows.error());
  if (rows->empty()) return 0;
  Result<std::int64_t> version = rows->front().Int(0);
  if (!version) return Fail(version.error());
  return static_cast<int>(*version);
}

Status MigrateSchema(SqlConnection& connection) {
  if (Status s = connection.Begin(); !s) return s;
  auto fail = [&](const Error& e) -> Status {
    connection.Rollback();
    return Fail(e.WithContext("creating the batch-size service's database schema"));
  };
  if (connection.dialect() == SqlDialect::kPostgres) {
    const std::vector<SqlValue> params = {kMigrationLockId};
    if (auto r = connection.Query("SELECT pg_advisory_xact_lock($1)", params); !r) return fail(r.error());
  }
  if (Status s = connection.ExecuteScript("CREATE TABLE IF NOT EXISTS zeus_schema (version INTEGER NOT NULL)"); !s) {
    return fail(s.error());
  }
  Result<int> version = SchemaVersion(connection);
  if (!version) return fail(version.error());
  if (*version > kSchemaVersion) {
    connection.Rollback();
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("the database has schema version {}, newer than this build of zeus understands ({}); "
                            "run a newer zeus bso-server against it",
                            *version, kSchemaVersion));
  }
  for (int v = *version; v < kSchemaVersion; ++v) {
    const Migration& step = kMigrations[static_cast<std::size_t>(v)];
    if (Status s = connection.ExecuteScript(step.sql); !s) return fail(s.error());
    if (step.data != nullptr) {
      if (Status s = step.data(connection); !s) return fail(s.error());
    }
  }
  if (*version < kSchemaVersion) {
    const std::vector<SqlValue> params = {std::int64_t{kSchemaVersion}};
    if (auto r = connection.Execute("DELETE FROM zeus_schema"); !r) return fail(r.error());
    if (auto r = connection.Execute("INSERT INTO zeus_schema (version) VALUES ($1)", params); !r) {
      return fail(r.error());
    }
  }
  if (Status s = connection.Commit(); !s) return Fail(s.error().WithContext("creating the database schema"));
  return OkStatus();
}

}  // namespace zeus::bso
