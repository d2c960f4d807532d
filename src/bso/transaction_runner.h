// Copyright 2026 The Zeus C++ Authors.
//
// Runs the service's operations as database transactions over a pool of
// connections, retrying conflicts, and (for SQLite) group-committing
// operations that arrive together.
//
// SQLite has one writer at a time, and each commit costs a WAL append of
// every page it touched plus file-lock system calls. When several threads
// submit operations at once, the first becomes the leader: it takes every
// queued operation (up to max_group), runs them one after another in one
// transaction and commits once; the others wait for their outcome. The
// result is the same as running them one by one in some order, because
// each operation sees the writes of those before it in the group. An
// operation is acknowledged (Run returns) only after its transaction
// committed.
//
// An operation whose body fails is not allowed to spoil its group: the
// group is rolled back, re-run without it, and the failed operation then
// runs alone, so its caller sees exactly its own error and none of its
// writes. Conflicts (kAborted) and a lost connection (kUnavailable) roll
// back and retry the whole group with backoff, up to max_attempts.
//
// PostgreSQL serialises per job with row locks, so its operations run
// concurrently, each in its own transaction (grouping would serialise
// unrelated jobs).
//
// Thread-safety: Run may be called concurrently.

#ifndef ZEUS_SRC_BSO_TRANSACTION_RUNNER_H_
#define ZEUS_SRC_BSO_TRANSACTION_RUNNER_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "bso/sql/sql_connection.h"
#include "zeus/base/error.h"

namespace zeus::bso {

// One operation. `body` may run more than once (retries, re-runs of its
// group) and on another thread than the submitter's, and should not throw
// (an exception becomes its kInternal error); everything it does outside the
// database must be overwritten by its next run.
struct TransactionOp {
  std::function<Status(SqlConnection&)> body;
  Status outcome;  // set when done
  bool done = false;
};

struct TransactionRunnerOptions {
  bool group_commit = false;   // see the file comment; true for SQLite
  std::size_t max_group = 64;  // operations per group commit
  int max_attempts = 8;        // per group, counting the first
  SqlConnectionOptions connection;  // for the connections the pool opens
};

struct TransactionStats {
  std::uint64_t operations = 0;    // operations that ran to an outcome
  std::uint64_t transactions = 0;  // transactions committed
  std::uint64_t retries = 0;       // attempts after a conflict or lost connection
};

class TransactionRunner {
 public:
  // Connections come from OpenSqlConnection(url) on demand and are pooled.
  // `first` (may be null) is put in the pool.
  TransactionRunner(std::string url, TransactionRunnerOptions options, std::unique_ptr<SqlConnection> first);
  TransactionRunner(const TransactionRunner&) = delete;
  TransactionRunner& operator=(const TransactionRunner&) = delete;

  // Runs body in a transaction (grouped with concurrent submissions when
  // group_commit is set) and returns its outcome: body's error after a
  // rollback, a commit error, or OK once committed. Blocks until then.
  Status Run(std::function<Status(SqlConnection&)> body);

  // Runs `ops` as one group on the calling thread and sets each outcome
  // (what Run's leader does; public for tests).
  void RunGroup(std::vector<TransactionOp*> ops);

  TransactionStats stats() const;
  // Operations submitted to Run and not yet taken by a leader.
  std::size_t queued() const;

 private:
  // One attempt: BEGIN, every body in order, COMMIT. When a body fails the
  // transaction is rolled back and *failed names its op.
  Status Attempt(std::span<TransactionOp* const> ops, TransactionOp** failed);
  Result<std::unique_ptr<SqlConnection>> Acquire();
  void Release(std::unique_ptr<SqlConnection> connection);

  const std::string url_;
  const TransactionRunnerOptions options_;

  mutable std::mutex pool_mu_;  // guards idle_ and stats_
  std::vector<std::unique_ptr<SqlConnection>> idle_;
  TransactionStats stats_;

  // A thread blocked in Run, woken when its op is done or when it is handed
  // the lead.
  struct Waiter {
    TransactionOp* op = nullptr;
    std::condition_variable wake;
    bool lead = false;
  };
  mutable std::mutex queue_mu_;  // guards queue_, leader_active_, Waiter and op.done
  std::deque<Waiter*> queue_;
  bool leader_active_ = false;
};

}  // namespace zeus::bso

#endif  // ZEUS_SRC_BSO_TRANSACTION_RUNNER_H_
