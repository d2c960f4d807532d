// Copyright 2026 The Zeus C++ Authors.
//
// The batch-size optimizer service: the original Zeus server's operations
// (../shared/docs/zeus-reference.md A10), each run as one database
// transaction over the state in schema.h (rows: job_store.h, arms:
// arm_statistics.h), with the policy taken from zeus::optimizer
// (policy_replay.h: PruningExplorer replayed over the stored explorations,
// FitArm, ThompsonChoose, NumpyRandom with its state stored per job).
//
// Per-job serialisation lives in the database, so several server processes
// may share one PostgreSQL: every operation on a job first locks the job's
// row (SELECT ... FOR UPDATE; on SQLite the whole database is locked by
// BEGIN IMMEDIATE). A transaction that conflicts (kAborted) is retried.
//
// Behaviour differs from the original where it was wrong (W8):
//   * the early-stop threshold min_cost only counts trials that converged;
//   * a Concurrent trial reported after the switch to Thompson sampling is
//     stored (and updates its arm if the batch size survived pruning);
//   * arms are fitted from every succeeded trial of their batch size, in
//     trial order (newest window_size of them when window_size > 0), both
//     when the bandit is built and afterwards, at a cost per report that
//     does not grow with the history (arm_statistics.h: stored moments
//     updated in the report's transaction);
//   * arms are read in ascending batch size; the generator state is stored
//     for every job (a job without mab_seed gets a random seed once);
//   * generated job ids use 32 random bits, not the time;
//   * optionally (ServiceOptions::exploration_timeout), an exploration whose
//     client died unreported stops blocking pruning.
//
// Thread-safety: all methods may be called concurrently; transactions run
// through a TransactionRunner (a connection pool; group commit on SQLite).

#ifndef ZEUS_SRC_BSO_SERVICE_H_
#define ZEUS_SRC_BSO_SERVICE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bso/records.h"
#include "bso/sql/sql_connection.h"
#include "bso/transaction_runner.h"
#include "zeus/base/error.h"
#include "zeus/bso/models.h"

namespace zeus::bso {

struct RegisterResult {
  JobSpec job;   // with job_id set
  bool created;  // false: an identical job existed (HTTP 200 rather than 201)
};

// Wall time, the seam for the service's timestamps (stored in the database
// and compared across server processes, so not a monotonic Clock).
// Implementations must be thread-safe.
class WallClock {
 public:
  virtual ~WallClock() = default;
  virtual std::chrono::system_clock::time_point Now() const = 0;
};

// std::chrono::system_clock. A static object, never destroyed early.
const WallClock& SystemWallClock();

// The default of ServiceOptions::exploration_timeout.
inline constexpr std::chrono::seconds kDefaultExplorationTimeout{6 * 3600};

struct ServiceOptions {
  // A dispatched exploration not heard of for longer than this (no report
  // since it was dispatched, or since its last "keep training" report) is
  // marked failed when the job's next batch size is asked for, so that
  // pruning goes on without it: a client killed with SIGKILL or by the OOM
  // killer never reports, and until then every run of the job gets a
  // Concurrent trial. Clients report after every epoch, so the default (6 h)
  // only needs to exceed one epoch plus its evaluation. Zero: never (the
  // original's behaviour).
  std::chrono::milliseconds exploration_timeout = kDefaultExplorationTimeout;
  // Where timestamps come from; null: SystemWallClock(). Not owned; must
  // outlive the service.
  const WallClock* wall_clock = nullptr;
};

class BsoService {
 public:
  // Connects, then creates or migrates the schema. Fails with the
  // connection's errors, kInvalidArgument for an in-memory SQLite database
  // (every pooled connection would see its own), or kFailedPrecondition when
  // the database holds a newer schema than this build knows.
  static Result<std::unique_ptr<BsoService>> Open(const std::string& database_url,
                                                  const ServiceOptions& options = {});

  // POST /jobs. kAlreadyExists (HTTP 409) when job_id exists with a
  // different spec. REQUIRES: spec passed ValidateJobSpec.
  Result<RegisterResult> RegisterJob(JobSpec spec);
  // GET /jobs/batch_size. kInvalidArgument (400) for an unknown job;
  // kFailedPrecondition (409) when pruning ended with no converged batch size,
  // or when an arm's fit is not finite (only a job stored before reports were
  // bounded; the message says to register it again).
  // First marks failed the job's explorations older than
  // options.exploration_timeout.
  Result<TrialId> NextBatchSize(const std::string& job_id);
  // POST /report. kInvalidArgument (400) for an unknown job or trial, a
  // batch size that is not the trial's, a trial marked failed, or a cost
  // outside CheckTrialCost's range (arm_statistics.h); kFailedPrecondition
  // (409) when the arm's new statistics would not be finite (only a job
  // stored before reports were bounded). On any error nothing is recorded:
  // the trial stays dispatched and the job as it was.
  Result<ReportResponse> Report(const TrainingResult& result);
  // PATCH /trials: marks a dispatched trial failed; no-op otherwise.
  // kNotFound (404) when the trial does not exist.
  Status EndTrial(const TrialId& trial);
  // DELETE /jobs. kNotFound (404) when there is no such job.
  Status DeleteJob(const std::string& job_id);
  // GET /healthz: the database answers.
  Status Health();

  // Inspection (tests, tools): a job's trials in trial order, its arms in
  // batch-size order, its state. kNotFound for an unknown job (Trials and
  // Arms return empty lists for it).
  Result<std::vector<TrialRecord>> Trials(const std::string& job_id);
  Result<std::vector<ArmRecord>> Arms(const std::string& job_id);
  Result<JobState> State(const std::string& job_id);

  SqlDialect dialect() const { return dialect_; }
  // Counts of operations, committed transactions (fewer than operations
  // when SQLite group commit merged some) and retries after a conflict.
  TransactionStats stats() const;
  std::uint64_t retries() const;

 private:
  BsoService(SqlDialect dialect, const ServiceOptions& options, std::unique_ptr<TransactionRunner> runner,
             std::unique_ptr<WalCheckpointer> checkpointer)
      : dialect_(dialect), options_(options), checkpointer_(std::move(checkpointer)), runner_(std::move(runner)) {}

  // Runs fn(connection) in one transaction through runner_; fn's error
  // rolls back and is returned. fn may run more than once, on another
  // thread (see transaction_runner.h).
  template <class T, class Fn>
  Result<T> Transact(Fn&& fn);

  // The wall clock's now, microseconds since the Unix epoch.
  std::int64_t NowUs() const;

  SqlDialect dialect_;
  ServiceOptions options_;  // wall_clock is set
  // SQLite only. Declared before runner_, so destroyed after it: the last
  // checkpoint follows the last write.
  std::unique_ptr<WalCheckpointer> checkpointer_;
  std::unique_ptr<TransactionRunner> runner_;
};

}  // namespace zeus::bso

#endif  // ZEUS_SRC_BSO_SERVICE_H_
