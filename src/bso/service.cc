// Copyright 2026 The Zeus C++ Authors.

#include "bso/service.h"

#include <chrono>
#include <random>

#include <fmt/format.h>

#include "bso/arm_statistics.h"
#include "bso/bso_try.h"
#include "bso/job_store.h"
#include "bso/policy_replay.h"
#include "bso/schema.h"
#include "zeus/optimizer/numpy_random.h"

namespace zeus::bso {
namespace {

class SystemWallClockImpl final : public WallClock {
 public:
  std::chrono::system_clock::time_point Now() const override { return std::chrono::system_clock::now(); }
};

std::int64_t MicrosSinceEpoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace

const WallClock& SystemWallClock() {
  static const SystemWallClockImpl clock;
  return clock;
}

// ---- BsoService -----------------------------------------------------------

Result<std::unique_ptr<BsoService>> BsoService::Open(const std::string& database_url, const ServiceOptions& service) {
  BSO_TRY(url, InspectDatabaseUrl(database_url));
  // Each pooled connection to an in-memory SQLite database would see a
  // different, empty database.
  if (url.in_memory) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: the batch-size service needs a database file, e.g. sqlite:///zeus_bso.db",
                            database_url));
  }
  const bool sqlite = url.dialect == SqlDialect::kSqlite;
  TransactionRunnerOptions options;
  options.group_commit = sqlite;
  // Checkpoints run on their own thread, not inside a commit that every
  // grouped request waits for.
  options.connection.sqlite_auto_checkpoint = !sqlite;
  BSO_TRY(connection, OpenSqlConnection(database_url, options.connection));
  BSO_CHECK(MigrateSchema(*connection));
  std::unique_ptr<WalCheckpointer> checkpointer;
  if (sqlite) {
    BSO_TRY(started, WalCheckpointer::Start(database_url, std::chrono::milliseconds(100)));
    checkpointer = std::move(started);
  }
  ServiceOptions checked = service;
  if (checked.wall_clock == nullptr) checked.wall_clock = &SystemWallClock();
  return std::unique_ptr<BsoService>(
      new BsoService(url.dialect, checked,
                     std::make_unique<TransactionRunner>(database_url, options, std::move(connection)),
                     std::move(checkpointer)));
}

std::int64_t BsoService::NowUs() const { return MicrosSinceEpoch(options_.wall_clock->Now()); }

TransactionStats BsoService::stats() const { return runner_->stats(); }

std::uint64_t BsoService::retries() const { return runner_->stats().retries; }

template <class T, class Fn>
Result<T> BsoService::Transact(Fn&& fn) {
  std::optional<Result<T>> result;
  Status outcome = runner_->Run([&](SqlConnection& c) -> Status {
    result.emplace(fn(c));
    if (*result) return OkStatus();
    return Fail(result->error());
  });
  if (!outcome) return Fail(outcome.error());
  return std::move(*result);
}

Result<RegisterResult> BsoService::RegisterJob(JobSpec spec) {
  // A job without mab_seed gets a random one, kept only in its generator
  // state (the job's spec keeps mab_seed null).
  std::random_device entropy;
  const std::uint64_t seed = spec.mab_seed ? static_cast<std::uint64_t>(*spec.mab_seed)
                                           : (static_cast<std::uint64_t>(entropy()) << 31) ^ entropy();
  const std::string rng_state = RngStateJson(optimizer::NumpyRandom(seed).full_state());
  const bool generate = !spec.job_id.has_value();
  for (int attempt = 0; attempt < 16; ++attempt) {
    if (generate) spec.job_id = fmt::format("{}-{:08x}", spec.job_id_prefix, entropy());
    Result<RegisterResult> result = Transact<RegisterResult>([&](SqlConnection& c) -> Result<RegisterResult> {
      BSO_TRY(existing, LoadJob(c, *spec.job_id, /*lock=*/false));
      if (existing) {
        if (generate) return Fail(ErrorCode::kAlreadyExists, "generated job id collided");
        if (existing->spec == spec) return RegisterResult{existing->spec, false};
        return Fail(ErrorCode::kAlreadyExists,
                    fmt::format("job {} exists with a different configuration; register under another job_id, or "
                                "DELETE /jobs?job_id={} first",
                                *spec.job_id, *spec.job_id));
      }
      BSO_CHECK(InsertJob(c, spec, rng_state, NowUs()));
      return RegisterResult{spec, true};
    });
    if (result) return result;
    if (result.error().code() != ErrorCode::kAlreadyExists) return result;
    if (!generate) {
      // The id exists (perhaps a concurrent registration won the insert):
      // compare with what is stored.
      return Transact<RegisterResult>([&](SqlConnection& c) -> Result<RegisterResult> {
        BSO_TRY(existing, LoadJob(c, *spec.job_id, false));
        if (existing && existing->spec == spec) return RegisterResult{existing->spec, false};
        return Fail(ErrorCode::kAlreadyExists,
                    fmt::format("job {} exists with a different configuration", *spec.job_id));
      });
    }
  }
  return Fail(ErrorCode::kInternal, "could not generate an unused job id");
}

Result<TrialId> BsoService::NextBatchSize(const std::string& job_id) {
  return Transact<TrialId>([&](SqlConnection& c) -> Result<TrialId> {
    BSO_TRY(job, LoadJob(c, job_id, /*lock=*/true));
    if (!job) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("unknown job_id '{}'; register it with POST /jobs", job_id));
    }
    job->now_us = NowUs();
    std::optional<std::int64_t> stale_before_us;
    if (options_.exploration_timeout.count() > 0) {
      stale_before_us =
          job->now_us - std::chrono::duration_cast<std::chrono::microseconds>(options_.exploration_timeout).count();
    }
    return NextTrial(c, *job, stale_before_us);
  });
}

namespace {

// The trial a report is for, if it may be recorded: kInvalidArgument for an
// unknown job or trial, another batch size, or a trial marked failed.
Status CheckReportedTrial(const std::optional<JobRow>& job, const std::optional<TrialRecord>& trial,
                          const TrainingResult& result) {
  if (!job) return Fail(ErrorCode::kInvalidArgument, fmt::format("unknown job_id '{}'", result.job_id));
  if (!trial) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("job {} has no trial {}", result.job_id, result.trial_number));
  }
  if (trial->batch_size != result.batch_size) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("trial {} of job {} runs batch size {}, not {}", result.trial_number, result.job_id,
                            trial->batch_size, result.batch_size));
  }
  if (trial->status == TrialStatus::kFailed) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("trial {} of job {} was marked failed; get a new batch size",
                                                         result.trial_number, result.job_id));
  }
  return OkStatus();
}

}  // namespace

Result<ReportResponse> BsoService::Report(const TrainingResult& result) {
  return Transact<ReportResponse>([&](SqlConnection& c) -> Result<ReportResponse> {
    BSO_TRY(job, LoadJob(c, result.job_id, /*lock=*/true));
    std::optional<TrialRecord> trial;
    if (job) {
      BSO_TRY(stored, LoadTrial(c, result.job_id, result.trial_number));
      trial = std::move(stored);
    }
    BSO_CHECK(CheckReportedTrial(job, trial, result));
    if (trial->status == TrialStatus::kSucceeded) {
      return ReportResponse{true, trial->converged.value_or(false),
                            fmt::format("Result for this trial({}) is already reported.", result.trial_number)};
    }
    const JobSpec& s = job->spec;
    const double cost = TrialCost(*job, result.energy, result.time);
    // Before anything is written: a cost outside this range could make the
    // arm's statistics non-finite now or when the bandit is built.
    if (Status in_range = CheckTrialCost(cost); !in_range) {
      return Fail(in_range.error().WithContext(
          fmt::format("report of trial {} of job {} (time {} s, energy {} J, max_power {} W, eta_knob {}) not recorded",
                      result.trial_number, result.job_id, result.time, result.energy, s.max_power, s.eta_knob)));
    }
    const ReportDecision decision = DecideReport(*job, result, cost);
    if (!decision.stop) {
      // The client is alive: the exploration timeout counts from here.
      if (trial->type == TrialType::kExploration) BSO_CHECK(TouchTrial(c, result.job_id, result.trial_number, NowUs()));
      return ReportResponse{false, false, "Stop condition not met, keep training"};
    }
    BSO_CHECK(RecordTrialResult(c, result.job_id, result.trial_number, NowUs(), result.time, result.energy,
                                decision.converged));
    if (decision.converged && (!job->state.min_cost || cost < *job->state.min_cost)) {
      job->state.min_cost = cost;
      job->state.min_cost_batch_size = result.batch_size;
      BSO_CHECK(SaveJobState(c, *job));
    }
    if (job->state.bandit_stage) {
      // Update the arm in this transaction (nothing when the batch size was
      // pruned); bounded cost whatever the history (arm_statistics.h).
      if (Status observed = ObserveArmReward(c, ArmJobOf(*job), result.batch_size, -cost); !observed) {
        // Rolls back: the trial stays dispatched and the arm as it was.
        return Fail(observed.error().WithContext(
            fmt::format("report of trial {} of job {} (time {} s, energy {} J) not recorded", result.trial_number,
                        result.job_id, result.time, result.energy)));
      }
    }
    return ReportResponse{true, decision.converged, decision.message};
  });
}

Status BsoService::EndTrial(const TrialId& trial) {
  return Transact<void>([&](SqlConnection& c) -> Status {
    BSO_TRY(job, LoadJob(c, trial.job_id, /*lock=*/true));
    BSO_TRY(stored, LoadTrial(c, trial.job_id, trial.trial_number));
    if (!job || !stored) {
      return Fail(ErrorCode::kNotFound, fmt::format("job {} has no trial {}", trial.job_id, trial.trial_number));
    }
    if (stored->status != TrialStatus::kDispatched) return OkStatus();
    return MarkTrialFailed(c, trial.job_id, trial.trial_number, NowUs());
  });
}

Status BsoService::DeleteJob(const std::string& job_id) {
  return Transact<void>([&](SqlConnection& c) -> Status {
    BSO_TRY(deleted, DeleteJobRow(c, job_id));
    if (deleted == 0) return Fail(ErrorCode::kNotFound, "No job was deleted.");
    return OkStatus();
  });
}

Status BsoService::Health() {
  return Transact<void>([&](SqlConnection& c) -> Status {
    BSO_TRY(rows, c.Query("SELECT 1"));
    (void)rows;
    return OkStatus();
  });
}

Result<std::vector<TrialRecord>> BsoService::Trials(const std::string& job_id) {
  return Transact<std::vector<TrialRecord>>([&](SqlConnection& c) { return LoadTrials(c, job_id); });
}

Result<std::vector<ArmRecord>> BsoService::Arms(const std::string& job_id) {
  return Transact<std::vector<ArmRecord>>([&](SqlConnection& c) { return LoadArms(c, job_id); });
}

Result<JobState> BsoService::State(const std::string& job_id) {
  return Transact<JobState>([&](SqlConnection& c) -> Result<JobState> {
    BSO_TRY(job, LoadJob(c, job_id, false));
    if (!job) return Fail(ErrorCode::kNotFound, fmt::format("unknown job_id '{}'", job_id));
    return job->state;
  });
}

}  // namespace zeus::bso
