// Copyright 2026 The Zeus C++ Authors.

#include "bso/transaction_runner.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace zeus::bso {
namespace {

bool Retryable(const Error& error) {
  return error.code() == ErrorCode::kAborted || error.code() == ErrorCode::kUnavailable;
}

// Bodies must not throw; one that does anyway fails alone, and the leader
// lives on to hand over its lead.
Status RunBody(TransactionOp& op, SqlConnection& c) {
  try {
    return op.body(c);
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kInternal, fmt::format("operation failed: {}", e.what()));
  } catch (...) {
    return Fail(ErrorCode::kInternal, "operation failed with an unknown exception");
  }
}

}  // namespace

TransactionRunner::TransactionRunner(std::string url, TransactionRunnerOptions options,
                                     std::unique_ptr<SqlConnection> first)
    : url_(std::move(url)), options_(options) {
  if (first != nullptr) idle_.push_back(std::move(first));
}

Result<std::unique_ptr<SqlConnection>> TransactionRunner::Acquire() {
  {
    std::lock_guard lock(pool_mu_);
    if (!idle_.empty()) {
      std::unique_ptr<SqlConnection> c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  return OpenSqlConnection(url_, options_.connection);
}

void TransactionRunner::Release(std::unique_ptr<SqlConnection> connection) {
  std::lock_guard lock(pool_mu_);
  idle_.push_back(std::move(connection));
}

TransactionStats TransactionRunner::stats() const {
  std::lock_guard lock(pool_mu_);
  return stats_;
}

std::size_t TransactionRunner::queued() const {
  std::lock_guard lock(queue_mu_);
  return queue_.size();
}

Status TransactionRunner::Attempt(std::span<TransactionOp* const> ops, TransactionOp** failed) {
  *failed = nullptr;
  Result<std::unique_ptr<SqlConnection>> connection = Acquire();
  if (!connection) return Fail(connection.error());
  SqlConnection& c = **connection;
  if (Status s = c.Begin(); !s) {
    // A connection that cannot begin is dropped unless the database was only
    // busy.
    if (s.error().code() == ErrorCode::kAborted) Release(std::move(*connection));
    return s;
  }
  for (TransactionOp* op : ops) {
    Status s = RunBody(*op, c);
    if (!s) {
      c.Rollback();
      if (s.error().code() != ErrorCode::kUnavailable) Release(std::move(*connection));
      *failed = op;
      return s;
    }
  }
  if (Status s = c.Commit(); !s) {
    if (s.error().code() != ErrorCode::kUnavailable) Release(std::move(*connection));
    return s;
  }
  Release(std::move(*connection));
  return OkStatus();
}

void TransactionRunner::RunGroup(std::vector<TransactionOp*> ops) {
  std::vector<TransactionOp*> alone;
  int attempt = 0;
  while (!ops.empty()) {
    if (attempt > 0) {
      {
        std::lock_guard lock(pool_mu_);
        ++stats_.retries;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1 << attempt, 100)));
    }
    TransactionOp* failed = nullptr;
    Status s = Attempt(ops, &failed);
    if (s) {
      std::lock_guard lock(pool_mu_);
      ++stats_.transactions;
      stats_.operations += ops.size();
      for (TransactionOp* op : ops) op->outcome = OkStatus();
      break;
    }
    if (Retryable(s.error())) {
      if (++attempt < options_.max_attempts) continue;
      const Error gave_up = s.error().WithContext(fmt::format("gave up after {} attempts", options_.max_attempts));
      std::lock_guard lock(pool_mu_);
      stats_.operations += ops.size();
      for (TransactionOp* op : ops) op->outcome = Fail(gave_up);
      break;
    }
    if (failed != nullptr && ops.size() > 1) {
      // Its error may depend on its group's writes: run the others without
      // it, then it alone.
      ops.erase(std::find(ops.begin(), ops.end(), failed));
      alone.push_back(failed);
      continue;
    }
    std::lock_guard lock(pool_mu_);
    stats_.operations += ops.size();
    for (TransactionOp* op : ops) op->outcome = s;
    break;
  }
  for (TransactionOp* op : alone) RunGroup({op});
}

Status TransactionRunner::Run(std::function<Status(SqlConnection&)> body) {
  TransactionOp op{std::move(body), OkStatus(), false};
  if (!options_.group_commit) {
    RunGroup({&op});
    return op.outcome;
  }
  Waiter self;
  self.op = &op;
  std::unique_lock lock(queue_mu_);
  queue_.push_back(&self);
  if (leader_active_) {
    self.wake.wait(lock, [&] { return op.done || self.lead; });
  } else {
    leader_active_ = true;
  }
  // Here op is done, or this thread leads: it runs queued groups until its
  // own op is done (it is in the first group unless more than max_group
  // were queued ahead of it), then hands the lead to the oldest waiter.
  while (!op.done) {
    std::vector<Waiter*> taken;
    std::vector<TransactionOp*> group;
    while (!queue_.empty() && group.size() < options_.max_group) {
      taken.push_back(queue_.front());
      group.push_back(queue_.front()->op);
      queue_.pop_front();
    }
    lock.unlock();
    RunGroup(group);
    lock.lock();
    for (Waiter* w : taken) {
      w->op->done = true;
      if (w != &self) w->wake.notify_one();
    }
    if (!op.done) continue;
    if (queue_.empty()) {
      leader_active_ = false;
    } else {
      queue_.front()->lead = true;
      queue_.front()->wake.notify_one();
    }
  }
  return op.outcome;
}

}  // namespace zeus::bso
