// Copyright 2026 The Zeus C++ Authors.
//
// The batch-size service's jobs and trials in the database: the SQL that
// reads and writes bso_job and bso_trial rows (schema.h), and how a row's
// cells map to JobSpec (the columns and their encoding come from the one
// field list, zeus/bso/job_spec_fields.h), to records.h's values and to the
// stored generator state. Arms are arm_statistics.h's.
//
// Every function runs in the caller's transaction (one connection, one
// thread); errors are the connection's, or kInternal for a row that does not
// decode. Internal to the service.

#ifndef ZEUS_SRC_BSO_JOB_STORE_H_
#define ZEUS_SRC_BSO_JOB_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bso/records.h"
#include "bso/sql/sql_connection.h"
#include "zeus/base/error.h"
#include "zeus/bso/models.h"
#include "zeus/optimizer/numpy_random.h"

namespace zeus::bso {

// One bso_job row.
struct JobRow {
  JobSpec spec;            // job_id set
  std::string rng_state;   // RngStateJson of the job's generator
  JobState state;
  // Not stored: the time of the operation that loaded the row (the
  // service's WallClock), for the timestamps it writes.
  std::int64_t now_us = 0;
};

// The generator state as stored: numpy's bit_generator.state dict in JSON
// ({"bit_generator": "PCG64", "state": {"state": "0x...", "inc": "0x..."},
// "has_uint32": 0|1, "uinteger": n}).
std::string RngStateJson(const optimizer::NumpyRandomState& state);
// kInternal when the text is not such a state.
Result<optimizer::NumpyRandomState> ParseRngState(const std::string& text);

// The job's row; nullopt when there is none. `lock`: on PostgreSQL, SELECT
// ... FOR UPDATE, serialising the job's operations (SQLite's transaction
// holds the database lock already).
Result<std::optional<JobRow>> LoadJob(SqlConnection& c, const std::string& job_id, bool lock);
// Inserts a new job, Pruning with no minimum cost and trial 1 next, and its
// batch sizes. kAlreadyExists when the id is taken. REQUIRES: spec.job_id.
Status InsertJob(SqlConnection& c, const JobSpec& spec, const std::string& rng_state, std::int64_t created_us);
// Writes the row's stage, min_cost, min_cost_batch_size, next_trial_number
// and rng_state.
Status SaveJobState(SqlConnection& c, const JobRow& job);
// Deletes the job and (cascading) its batch sizes, arms and trials; the
// number of jobs deleted (0 or 1).
Result<std::int64_t> DeleteJobRow(SqlConnection& c, const std::string& job_id);

// The job's trials in trial order, or only its explorations.
Result<std::vector<TrialRecord>> LoadTrials(SqlConnection& c, const std::string& job_id,
                                            bool explorations_only = false);
Result<std::optional<TrialRecord>> LoadTrial(SqlConnection& c, const std::string& job_id, int trial_number);
// Dispatches trial job.state.next_trial_number at job.now_us, then advances
// the counter and saves the job's state (SaveJobState).
Result<TrialId> CreateTrial(SqlConnection& c, JobRow& job, int batch_size, TrialType type);
// Marks the trial Failed, ended at end_us.
Status MarkTrialFailed(SqlConnection& c, const std::string& job_id, int trial_number, std::int64_t end_us);
// Records a "keep training" report at now_us (last_report_us).
Status TouchTrial(SqlConnection& c, const std::string& job_id, int trial_number, std::int64_t now_us);
// Marks the trial Succeeded, ended at end_us, with its result.
Status RecordTrialResult(SqlConnection& c, const std::string& job_id, int trial_number, std::int64_t end_us,
                         double time, double energy, bool converged);

// The job's arms in batch-size order.
Result<std::vector<ArmRecord>> LoadArms(SqlConnection& c, const std::string& job_id);

}  // namespace zeus::bso

#endif  // ZEUS_SRC_BSO_JOB_STORE_H_
