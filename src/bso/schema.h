// Copyright 2026 The Zeus C++ Authors.
//
// The batch-size service's database schema, the same on SQLite and
// PostgreSQL, versioned and migrated by the server itself.
//
//   zeus_schema      (version)                     one row: the applied version
//   bso_job          one row per job: its spec (batch_sizes also as a JSON
//                    list, read with the row), stage, min_cost,
//                    min_cost_batch_size, next_trial_number, rng_state
//                    (the numpy generator state, JSON)
//   bso_batch_size   (job_id, batch_size)          the job's batch sizes
//   bso_arm          (job_id, batch_size, mean, precision, num_observations,
//                     reward_mean, reward_m2): the posterior and Welford's
//                     moments of the arm's rewards (arm_statistics.h)
//   bso_trial        (job_id, trial_number, batch_size, type, status,
//                     start_us, end_us, time, energy, converged)
//
// Children cascade on job deletion. Booleans are INTEGER 0/1, enums TEXT with
// CHECK constraints, timestamps BIGINT microseconds since the Unix epoch, so
// that both databases read the same values back.

#ifndef ZEUS_SRC_BSO_SCHEMA_H_
#define ZEUS_SRC_BSO_SCHEMA_H_

#include "bso/sql/sql_connection.h"
#include "zeus/base/error.h"

namespace zeus::bso {

// The schema version this build writes.
// 1: the tables; 2: bso_trial.last_report_us; 3: bso_arm.reward_mean and
// reward_m2, backfilled from the trials.
inline constexpr int kSchemaVersion = 4;

// Creates the schema or migrates an older one to kSchemaVersion, in one
// transaction. Safe to run from several processes at once (PostgreSQL: an
// advisory lock; SQLite: the database write lock). Fails with
// kFailedPrecondition when the database is newer than this build.
Status MigrateSchema(SqlConnection& connection);

// The version stored in the database; 0 when it has no schema yet.
Result<int> SchemaVersion(SqlConnection& connection);

}  // namespace zeus::bso

#endif  // ZEUS_SRC_BSO_SCHEMA_H_
