// Copyright 2026 The Zeus C++ Authors.
//
// BsoService on SQLite and on PostgreSQL (when ZEUS_TEST_POSTGRES_URL is
// set): registration, the policy replayed through the database against the
// in-process optimizer, concurrency rules, failures and the W8 fixes.

#include "bso/service.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ostream>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bso/db_param_test_util.h"
#include "bso/job_spec_test_util.h"
#include "bso/schema.h"
#include "bso/sql/sql_connection.h"
#include "http/http_status.h"
#include "testing/postgres.h"
#include "testing/temp_dir.h"
#include "testing/result.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/cost.h"
#include "zeus/optimizer/policy.h"

namespace zeus::bso {
namespace {

using ::testing::HasSubstr;

using zeus::bso::testing::Db;
using zeus::bso::testing::DbName;

// Readable parameters: test names .../Sqlite, and "GetParam() = Sqlite".

class ServiceTest : public ::testing::TestWithParam<Db> {
 protected:
  void SetUp() override {
    Result<std::optional<std::string>> url = zeus::testing::TestDatabaseUrl(GetParam() == Db::kPostgres, dir_, &pg_);
    ASSERT_TRUE(url) << url.error().message();
    if (!*url) GTEST_SKIP() << "ZEUS_TEST_POSTGRES_URL is not set (make test starts a PostgreSQL server)";
    url_ = **url;
    Result<std::unique_ptr<BsoService>> service = BsoService::Open(url_);
    ASSERT_TRUE(service) << service.error().message();
    service_ = std::move(*service);
  }

  static JobSpec Spec(std::string job_id = "job-1") {
    JobSpec s;
    s.job_id = job_id;
    s.job_id_prefix = "job";
    s.batch_sizes = {8, 16, 32, 64, 128};
    s.default_batch_size = 32;
    s.beta_knob.reset();
    s.target_metric = 0.9;
    s.max_epochs = 10;
    s.mab_seed = 7;
    s.max_power = 300;
    s.number_of_gpus = 1;
    s.gpu_model = "NVIDIA A40";
    return s;
  }

  TrialId Next(const std::string& job_id) {
    Result<TrialId> t = service_->NextBatchSize(job_id);
    EXPECT_TRUE(t) << t.error().message();
    return t ? *t : TrialId{};
  }

  ReportResponse Finish(const TrialId& t, double time, double energy, bool reached, int epoch = 1) {
    TrainingResult r{t.job_id, t.batch_size, t.trial_number, time, energy, reached ? 1.0 : 0.0, epoch, true};
    Result<ReportResponse> response = service_->Report(r);
    EXPECT_TRUE(response) << response.error().message();
    return response ? *response : ReportResponse{};
  }

  zeus::testing::TempDir dir_;
  std::unique_ptr<zeus::testing::ScopedPostgresDatabase> pg_;
  std::string url_;
  std::unique_ptr<BsoService> service_;
};

TEST_P(ServiceTest, RegisterIsIdempotentAndRejectsAChangedSpec) {
  Result<RegisterResult> first = service_->RegisterJob(Spec());
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_TRUE(first->created);
  Result<RegisterResult> again = service_->RegisterJob(Spec());
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job, first->job);
  JobSpec changed = Spec();
  changed.eta_knob = 0.3;
  Result<RegisterResult> conflict = service_->RegisterJob(changed);
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(http::HttpStatusFor(http::kBsoErrorStatuses, conflict.error().code()), 409);
}

// The bso_job columns are made from the field list: every field is stored
// and read back (registering again compares the stored spec with the new
// one).
TEST_P(ServiceTest, EveryFieldOfTheSpecIsStored) {
  const JobSpec spec = testing::EveryFieldSet();
  ASSERT_TRUE(service_->RegisterJob(spec));
  Result<RegisterResult> again = service_->RegisterJob(spec);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job, spec);
}

// Every pooled connection to an in-memory SQLite database would see its own.
TEST(ServiceOpenTest, RefusesAnInMemoryDatabase) {
  for (const char* url : {"sqlite://", "sqlite:///:memory:", "SQLite+aiosqlite:///:memory:"}) {
    Result<std::unique_ptr<BsoService>> service = BsoService::Open(url);
    ASSERT_FALSE(service) << url;
    EXPECT_EQ(service.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(service.error().message(), HasSubstr("needs a database file"));
  }
  Result<std::unique_ptr<BsoService>> unknown = BsoService::Open("mysql://db/zeus");
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message(), HasSubstr("unsupported scheme 'mysql'"));
}

TEST_P(ServiceTest, GeneratesJobIdsFromThePrefix) {
  JobSpec spec = Spec();
  spec.job_id.reset();
  std::set<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    Result<RegisterResult> r = service_->RegisterJob(spec);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(r->job.job_id);
    EXPECT_THAT(*r->job.job_id, ::testing::MatchesRegex("job-[0-9a-f]{8}"));
    ids.insert(*r->job.job_id);
  }
  EXPECT_EQ(ids.size(), 5u);
}

// The service's decisions equal the in-process optimizer's for the same
// observations and seed: both run the one policy in zeus::optimizer.
TEST_P(ServiceTest, MakesTheSameDecisionsAsTheInProcessOptimizer) {
  JobSpec spec = Spec();
  spec.window_size = 0;
  ASSERT_TRUE(service_->RegisterJob(spec));
  optimizer::BatchSizeOptimizerOptions options;
  options.num_pruning_rounds = spec.num_pruning_rounds;
  options.seed = static_cast<std::uint64_t>(*spec.mab_seed);
  Result<optimizer::BatchSizeOptimizer> local =
      optimizer::BatchSizeOptimizer::Create(spec.batch_sizes, spec.default_batch_size, options);
  ASSERT_TRUE(local);
  std::mt19937_64 noise(3);
  std::uniform_real_distribution<double> jitter(0.9, 1.1);
  int bandit_trials = 0;
  for (int i = 0; i < 40; ++i) {
    Result<int> expected = local->Predict();
    ASSERT_TRUE(expected) << expected.error().message();
    TrialId trial = Next(*spec.job_id);
    ASSERT_EQ(trial.batch_size, *expected) << "recurrence " << i;
    // Batch size 8 never reaches the target; the others cost more the
    // further they are from 64.
    const bool reached = trial.batch_size != 8;
    const double time = (1.0 + std::abs(std::log2(trial.batch_size / 64.0))) * jitter(noise);
    const double energy = 200.0 * time * jitter(noise);
    Finish(trial, time, energy, reached);
    ASSERT_TRUE(local->Observe(trial.batch_size, optimizer::ZeusCost(energy, time, spec.eta_knob, spec.max_power),
                               reached));
    if (trial.type == TrialType::kMab) ++bandit_trials;
  }
  EXPECT_GT(bandit_trials, 20);
  Result<std::vector<ArmRecord>> arms = service_->Arms(*spec.job_id);
  ASSERT_TRUE(arms);
  ASSERT_NE(local->bandit(), nullptr);
  const std::vector<optimizer::ArmPosterior> posteriors = local->bandit()->Posteriors();
  ASSERT_EQ(arms->size(), posteriors.size());
  for (std::size_t i = 0; i < arms->size(); ++i) {
    EXPECT_EQ((*arms)[i].batch_size, posteriors[i].arm);
    EXPECT_EQ((*arms)[i].mean, posteriors[i].mean);  // bit-identical
    EXPECT_EQ((*arms)[i].precision, posteriors[i].precision);
    EXPECT_EQ((*arms)[i].num_observations, posteriors[i].num_observations);
  }
}

TEST_P(ServiceTest, ExplorationsAreSerialisedAndOthersGetTheBestKnownSize) {
  ASSERT_TRUE(service_->RegisterJob(Spec()));
  TrialId first = Next("job-1");
  EXPECT_EQ(first.batch_size, 32);
  EXPECT_EQ(first.type, TrialType::kExploration);
  TrialId second = Next("job-1");
  EXPECT_EQ(second.type, TrialType::kConcurrent);
  EXPECT_EQ(second.batch_size, 32);  // min_cost_batch_size starts at the default
  EXPECT_EQ(second.trial_number, 2);
  Finish(first, 1.0, 100.0, true);
  TrialId third = Next("job-1");
  EXPECT_EQ(third.type, TrialType::kExploration);
  EXPECT_EQ(third.batch_size, 16);  // pruning goes down first
}

TEST_P(ServiceTest, AFailedExplorationIsExploredAgain) {
  ASSERT_TRUE(service_->RegisterJob(Spec()));
  TrialId first = Next("job-1");
  ASSERT_TRUE(service_->EndTrial(first));
  TrialId retry = Next("job-1");
  EXPECT_EQ(retry.type, TrialType::kExploration);
  EXPECT_EQ(retry.batch_size, first.batch_size);
  Result<std::vector<TrialRecord>> trials = service_->Trials("job-1");
  ASSERT_TRUE(trials);
  ASSERT_EQ(trials->size(), 2u);
  EXPECT_EQ((*trials)[0].status, TrialStatus::kFailed);
  EXPECT_TRUE((*trials)[0].end_us.has_value());
  // Reporting a failed trial is refused; ending it again is a no-op.
  TrainingResult late{"job-1", first.batch_size, first.trial_number, 1, 1, 1, 1, true};
  Result<ReportResponse> r = service_->Report(late);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(r.error().message(), HasSubstr("marked failed"));
  EXPECT_TRUE(service_->EndTrial(first));
  Status missing = service_->EndTrial(TrialId{"job-1", 32, 99, std::nullopt});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

// A client killed during an exploration never reports; with an exploration
// timeout the job's next request fails that exploration and pruning goes on.
// A wall clock that moves only when told to.
class FakeWallClock final : public WallClock {
 public:
  // 2026-01-01T00:00:00Z.
  static constexpr std::int64_t kStartUs = 1767225600LL * 1000000;
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::time_point(std::chrono::microseconds(now_us_.load()));
  }
  void Advance(std::chrono::microseconds by) { now_us_ += by.count(); }
  std::int64_t now_us() const { return now_us_.load(); }

 private:
  std::atomic<std::int64_t> now_us_{kStartUs};
};

class ExplorationTimeoutTest : public ServiceTest {
 protected:
  // A service on the fixture's database whose time is clock_.
  std::unique_ptr<BsoService> OpenTimed(std::chrono::milliseconds timeout) {
    ServiceOptions options;
    options.exploration_timeout = timeout;
    options.wall_clock = &clock_;
    Result<std::unique_ptr<BsoService>> s = BsoService::Open(url_, options);
    return zeus::testing::Unwrap(std::move(s));
  }
  static TrialId NextOf(BsoService& service) {
    Result<TrialId> t = service.NextBatchSize("job-1");
    EXPECT_TRUE(t) << t.error().message();
    return t ? *t : TrialId{};
  }
  FakeWallClock clock_;
};

TEST_P(ExplorationTimeoutTest, AnExplorationPastTheTimeoutIsFailedAndExploredAgain) {
  std::unique_ptr<BsoService> timed = OpenTimed(std::chrono::hours(1));
  ASSERT_NE(timed, nullptr);
  ASSERT_TRUE(timed->RegisterJob(Spec()));
  const TrialId orphan = NextOf(*timed);
  ASSERT_EQ(orphan.type, TrialType::kExploration);
  // At exactly the timeout, the exploration still counts as running.
  clock_.Advance(std::chrono::hours(1));
  const TrialId meanwhile = NextOf(*timed);
  EXPECT_EQ(meanwhile.type, TrialType::kConcurrent);
  clock_.Advance(std::chrono::microseconds(1));
  const std::int64_t failed_at_us = clock_.now_us();
  const TrialId retry = NextOf(*timed);
  EXPECT_EQ(retry.type, TrialType::kExploration);
  EXPECT_EQ(retry.batch_size, orphan.batch_size);
  Result<std::vector<TrialRecord>> trials = timed->Trials("job-1");
  ASSERT_TRUE(trials);
  ASSERT_EQ(trials->size(), 3u);
  // Every timestamp is the injected clock's.
  EXPECT_EQ((*trials)[0].status, TrialStatus::kFailed);
  EXPECT_EQ((*trials)[0].start_us, FakeWallClock::kStartUs);
  EXPECT_EQ((*trials)[0].end_us, failed_at_us);
  EXPECT_EQ((*trials)[1].status, TrialStatus::kDispatched);  // a Concurrent trial is left alone
  EXPECT_EQ((*trials)[1].start_us, FakeWallClock::kStartUs + 3600LL * 1000000);
  EXPECT_EQ((*trials)[2].start_us, failed_at_us);
  // The dead client's report, should it come after all, is refused.
  TrainingResult late{"job-1", orphan.batch_size, orphan.trial_number, 1, 1, 1, 1, true};
  Result<ReportResponse> r = timed->Report(late);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("marked failed"));
}

// A client that reports every epoch is alive: the timeout counts from its
// last report, so a run longer than the timeout is not failed.
TEST_P(ExplorationTimeoutTest, APerEpochReportRestartsTheTimeout) {
  std::unique_ptr<BsoService> timed = OpenTimed(std::chrono::hours(1));
  ASSERT_NE(timed, nullptr);
  ASSERT_TRUE(timed->RegisterJob(Spec()));
  const TrialId running = NextOf(*timed);
  ASSERT_EQ(running.type, TrialType::kExploration);
  clock_.Advance(std::chrono::minutes(50));
  TrainingResult epoch1{"job-1", running.batch_size, running.trial_number, 3000, 1e5, 0.1, 1, false};
  Result<ReportResponse> kept = timed->Report(epoch1);
  ASSERT_TRUE(kept) << kept.error().message();
  EXPECT_FALSE(kept->stop_train);
  clock_.Advance(std::chrono::minutes(50));  // 100 min since dispatch, 50 since the report
  EXPECT_EQ(NextOf(*timed).type, TrialType::kConcurrent);
  clock_.Advance(std::chrono::minutes(11));  // 61 min since the report
  const TrialId retry = NextOf(*timed);
  EXPECT_EQ(retry.type, TrialType::kExploration);
  EXPECT_EQ(retry.batch_size, running.batch_size);
}

// The default cannot stall a job for ever: 6 h without a word.
TEST_P(ExplorationTimeoutTest, TheDefaultTimeoutEndsAnExplorationAfterSixHours) {
  EXPECT_EQ(ServiceOptions{}.exploration_timeout, std::chrono::hours(6));
  ServiceOptions options;
  options.wall_clock = &clock_;
  Result<std::unique_ptr<BsoService>> by_default = BsoService::Open(url_, options);
  ASSERT_TRUE(by_default) << by_default.error().message();
  ASSERT_TRUE((*by_default)->RegisterJob(Spec()));
  const TrialId orphan = NextOf(**by_default);
  ASSERT_EQ(orphan.type, TrialType::kExploration);
  clock_.Advance(std::chrono::hours(6));
  EXPECT_EQ(NextOf(**by_default).type, TrialType::kConcurrent);
  clock_.Advance(std::chrono::seconds(1));
  const TrialId retry = NextOf(**by_default);
  EXPECT_EQ(retry.type, TrialType::kExploration);
  EXPECT_EQ(retry.batch_size, orphan.batch_size);
}

TEST_P(ExplorationTimeoutTest, ZeroMeansNeverAndAnUnreportedExplorationBlocksPruning) {
  std::unique_ptr<BsoService> never = OpenTimed(std::chrono::milliseconds(0));
  ASSERT_NE(never, nullptr);
  ASSERT_TRUE(never->RegisterJob(Spec()));
  const TrialId orphan = NextOf(*never);
  ASSERT_EQ(orphan.type, TrialType::kExploration);
  clock_.Advance(std::chrono::hours(24 * 365));
  EXPECT_EQ(NextOf(*never).type, TrialType::kConcurrent);
  Result<std::vector<TrialRecord>> trials = never->Trials("job-1");
  ASSERT_TRUE(trials);
  EXPECT_EQ((*trials)[0].status, TrialStatus::kDispatched);
}

TEST_P(ServiceTest, ReportKeepsTrainingUntilAStopCondition) {
  JobSpec spec = Spec();
  spec.beta_knob = 2.0;
  ASSERT_TRUE(service_->RegisterJob(spec));
  TrialId t = Next("job-1");
  Result<ReportResponse> keep = service_->Report({"job-1", t.batch_size, t.trial_number, 1.0, 10.0, 0.5, 1});
  ASSERT_TRUE(keep);
  EXPECT_FALSE(keep->stop_train);
  EXPECT_EQ(keep->message, "Stop condition not met, keep training");
  Result<ReportResponse> done = service_->Report({"job-1", t.batch_size, t.trial_number, 2.0, 20.0, 0.95, 2});
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->stop_train);
  EXPECT_TRUE(done->converged);
  EXPECT_EQ(done->message, "Train succeeded");
  Result<ReportResponse> again = service_->Report({"job-1", t.batch_size, t.trial_number, 3.0, 30.0, 0.95, 3});
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->stop_train);
  EXPECT_TRUE(again->converged);
  EXPECT_EQ(again->message, fmt::format("Result for this trial({}) is already reported.", t.trial_number));
  // min_cost = 0.5*20 + 0.5*300*2 = 310. The next run exceeds 2 x 310.
  Result<JobState> state = service_->State("job-1");
  ASSERT_TRUE(state);
  ASSERT_TRUE(state->min_cost);
  EXPECT_DOUBLE_EQ(*state->min_cost, 310.0);
  TrialId next = Next("job-1");
  Result<ReportResponse> over = service_->Report({"job-1", next.batch_size, next.trial_number, 5.0, 50.0, 0.1, 1});
  ASSERT_TRUE(over);
  EXPECT_TRUE(over->stop_train);
  EXPECT_FALSE(over->converged);
  EXPECT_THAT(over->message, HasSubstr("exceeded the cost upper bound"));
  // Max epochs without converging ends the trial too.
  TrialId third = Next("job-1");
  Result<ReportResponse> max = service_->Report({"job-1", third.batch_size, third.trial_number, 0.1, 0.1, 0.1, 10});
  ASSERT_TRUE(max);
  EXPECT_TRUE(max->stop_train);
  EXPECT_EQ(max->message, "Train failed to converge within max_epoch(10)");
}

// W8: a run that did not converge must not lower the early-stop threshold.
TEST_P(ServiceTest, MinCostOnlyCountsConvergedRuns) {
  ASSERT_TRUE(service_->RegisterJob(Spec()));
  TrialId t = Next("job-1");
  Finish(t, 0.001, 0.001, /*reached=*/false);
  Result<JobState> state = service_->State("job-1");
  ASSERT_TRUE(state);
  EXPECT_FALSE(state->min_cost.has_value());
  TrialId u = Next("job-1");
  Finish(u, 1.0, 10.0, true);
  state = service_->State("job-1");
  ASSERT_TRUE(state && state->min_cost);
  EXPECT_EQ(state->min_cost_batch_size, u.batch_size);
}

TEST_P(ServiceTest, ReportErrorsNameTheProblem) {
  ASSERT_TRUE(service_->RegisterJob(Spec()));
  TrialId t = Next("job-1");
  struct Case {
    TrainingResult result;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"nope", 32, 1, 1, 1, 1, 1}, "unknown job_id 'nope'"},
           {{"job-1", 32, 5, 1, 1, 1, 1}, "has no trial 5"},
           {{"job-1", 64, t.trial_number, 1, 1, 1, 1}, "runs batch size 32, not 64"},
       }) {
    Result<ReportResponse> r = service_->Report(c.result);
    ASSERT_FALSE(r) << c.message;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(r.error().message(), HasSubstr(c.message));
  }
  Result<TrialId> unknown = service_->NextBatchSize("nope");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kInvalidArgument);
}

TEST_P(ServiceTest, PruningWithNoConvergedSizeIsAClearError) {
  JobSpec spec = Spec();
  spec.batch_sizes = {16, 32};
  ASSERT_TRUE(service_->RegisterJob(spec));
  // 32 fails: the downward direction ends, and there is nothing above it.
  Finish(Next("job-1"), 1, 1, false);
  Result<TrialId> r = service_->NextBatchSize("job-1");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(r.error().message(), HasSubstr("no batch size reached the target"));
}

// W8: a Concurrent trial handed out during pruning and reported after the
// bandit started is kept (the original answered 400 and lost it).
TEST_P(ServiceTest, ALateConcurrentReportIsKept) {
  JobSpec spec = Spec();
  spec.batch_sizes = {32};
  spec.num_pruning_rounds = 1;
  ASSERT_TRUE(service_->RegisterJob(spec));
  TrialId exploration = Next("job-1");
  TrialId concurrent = Next("job-1");
  ASSERT_EQ(concurrent.type, TrialType::kConcurrent);
  Finish(exploration, 1, 10, true);
  TrialId bandit = Next("job-1");
  EXPECT_EQ(bandit.type, TrialType::kMab);
  ReportResponse late = Finish(concurrent, 1.5, 12, true);
  EXPECT_TRUE(late.stop_train);
  Result<std::vector<ArmRecord>> arms = service_->Arms("job-1");
  ASSERT_TRUE(arms);
  ASSERT_EQ(arms->size(), 1u);
  EXPECT_EQ((*arms)[0].num_observations, 2);
}

TEST_P(ServiceTest, SeededJobsReplayIdentically) {
  auto run = [&](const std::string& id) {
    EXPECT_TRUE(service_->RegisterJob(Spec(id)));
    std::vector<int> sizes;
    for (int i = 0; i < 25; ++i) {
      TrialId t = Next(id);
      sizes.push_back(t.batch_size);
      Finish(t, 1.0 + 0.01 * (t.batch_size % 7) + 0.001 * i, 100.0 + t.batch_size, t.batch_size != 8);
    }
    return sizes;
  };
  EXPECT_EQ(run("job-a"), run("job-b"));
}

TEST_P(ServiceTest, DeleteRemovesTheJobAndItsTrials) {
  ASSERT_TRUE(service_->RegisterJob(Spec()));
  Next("job-1");
  ASSERT_TRUE(service_->DeleteJob("job-1"));
  Status again = service_->DeleteJob("job-1");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(again.error().message(), "No job was deleted.");
  Result<std::vector<TrialRecord>> trials = service_->Trials("job-1");
  ASSERT_TRUE(trials);
  EXPECT_TRUE(trials->empty());
  // The id is free again.
  EXPECT_TRUE(service_->RegisterJob(Spec()));
}

TEST_P(ServiceTest, ConcurrentRequestsGetDistinctTrialNumbers) {
  ASSERT_TRUE(service_->RegisterJob(Spec()));
  constexpr int kThreads = 4;
  constexpr int kEach = 10;
  std::vector<std::vector<int>> numbers(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < kEach; ++j) {
        Result<TrialId> t = service_->NextBatchSize("job-1");
        if (t) numbers[static_cast<std::size_t>(i)].push_back(t->trial_number);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<int> all;
  for (const auto& v : numbers) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kEach));
  EXPECT_EQ(*all.rbegin(), kThreads * kEach);
}

TEST_P(ServiceTest, RefusesANewerSchema) {
  Result<std::unique_ptr<SqlConnection>> c = OpenSqlConnection(url_);
  ASSERT_TRUE(c);
  ASSERT_TRUE((*c)->Execute("UPDATE zeus_schema SET version = 99"));
  Result<std::unique_ptr<BsoService>> newer = BsoService::Open(url_);
  ASSERT_FALSE(newer);
  EXPECT_EQ(newer.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(newer.error().message(), HasSubstr("schema version 99"));
  ASSERT_TRUE((*c)->Execute("UPDATE zeus_schema SET version = $1", std::vector<SqlValue>{std::int64_t{kSchemaVersion}}));
  EXPECT_TRUE(BsoService::Open(url_));  // reopening a current schema is a no-op
}

// A database of schema version 1 (no bso_trial.last_report_us) is migrated,
// its trials kept.
TEST_P(ServiceTest, MigratesAVersion1Database) {
  ASSERT_TRUE(service_->RegisterJob(Spec()));
  const TrialId running = Next("job-1");
  service_.reset();
  {
    Result<std::unique_ptr<SqlConnection>> c = OpenSqlConnection(url_);
    ASSERT_TRUE(c);
    ASSERT_TRUE((*c)->ExecuteScript(
        "ALTER TABLE bso_trial DROP COLUMN last_report_us; ALTER TABLE bso_arm DROP COLUMN reward_mean; "
        "ALTER TABLE bso_arm DROP COLUMN reward_m2; ALTER TABLE bso_job DROP COLUMN policy; "
        "UPDATE zeus_schema SET version = 1"));
  }
  Result<std::unique_ptr<BsoService>> migrated = BsoService::Open(url_);
  ASSERT_TRUE(migrated) << migrated.error().message();
  Result<std::vector<TrialRecord>> trials = (*migrated)->Trials("job-1");
  ASSERT_TRUE(trials) << trials.error().message();
  ASSERT_EQ(trials->size(), 1u);
  EXPECT_EQ((*trials)[0].trial_number, running.trial_number);
  EXPECT_FALSE((*trials)[0].last_report_us.has_value());
  Result<std::unique_ptr<SqlConnection>> c = OpenSqlConnection(url_);
  ASSERT_TRUE(c);
  Result<std::vector<SqlRow>> version = (*c)->Query("SELECT version FROM zeus_schema");
  ASSERT_TRUE(version);
  EXPECT_EQ(version->at(0).Int(0).value_or(0), 4);
  // The job from before the policy column runs the original policy.
  Result<RegisterResult> again = (*migrated)->RegisterJob(Spec());
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.policy, "zeus");
}

// Drives a job (the cost model of MakesTheSameDecisionsAsTheInProcessOptimizer:
// 64 is the cheapest batch size) through `recurrences` runs, each reported
// as finished, mirrored into an in-process optimizer.
class LongHistoryTest : public ServiceTest {
 protected:
  void Drive(const JobSpec& spec, int recurrences, optimizer::BatchSizeOptimizer& local) {
    std::mt19937_64 noise(3);
    std::uniform_real_distribution<double> jitter(0.9, 1.1);
    for (int i = 0; i < recurrences; ++i) {
      Result<int> expected = local.Predict();
      ASSERT_TRUE(expected) << expected.error().message();
      TrialId trial = Next(*spec.job_id);
      ASSERT_EQ(trial.batch_size, *expected) << "recurrence " << i;
      const bool reached = trial.batch_size != 8;
      const double time = (1.0 + std::abs(std::log2(trial.batch_size / 64.0))) * jitter(noise);
      const double energy = 200.0 * time * jitter(noise);
      Finish(trial, time, energy, reached);
      ASSERT_TRUE(local.Observe(trial.batch_size, optimizer::ZeusCost(energy, time, spec.eta_knob, spec.max_power),
                                reached));
    }
  }

  static optimizer::BatchSizeOptimizer Local(const JobSpec& spec) {
    optimizer::BatchSizeOptimizerOptions options;
    options.num_pruning_rounds = spec.num_pruning_rounds;
    options.bandit.window_size = spec.window_size;
    options.seed = static_cast<std::uint64_t>(*spec.mab_seed);
    return optimizer::BatchSizeOptimizer::Create(spec.batch_sizes, spec.default_batch_size, options).value();
  }

  // Each stored arm against FitArm and MomentsOf over its rewards refitted
  // from every stored trial (trial order; the newest window_size).
  void ExpectArmsMatchARefit(const JobSpec& spec) {
    Result<std::vector<TrialRecord>> trials = service_->Trials(*spec.job_id);
    ASSERT_TRUE(trials);
    Result<std::vector<ArmRecord>> arms = service_->Arms(*spec.job_id);
    ASSERT_TRUE(arms);
    ASSERT_FALSE(arms->empty());
    optimizer::GaussianTsOptions options;
    options.window_size = spec.window_size;
    for (const ArmRecord& arm : *arms) {
      std::vector<double> rewards;
      for (const TrialRecord& t : *trials) {
        if (t.batch_size != arm.batch_size || t.status != TrialStatus::kSucceeded) continue;
        rewards.push_back(-optimizer::ZeusCost(*t.energy, *t.time, spec.eta_knob, spec.max_power));
      }
      if (spec.window_size > 0 && rewards.size() > static_cast<std::size_t>(spec.window_size)) {
        rewards.erase(rewards.begin(), rewards.end() - spec.window_size);
      }
      const optimizer::ArmPosterior fit = optimizer::FitArm(arm.batch_size, rewards, options);
      const optimizer::RewardMoments moments = optimizer::MomentsOf(rewards);
      SCOPED_TRACE(::testing::Message() << "arm " << arm.batch_size);
      EXPECT_EQ(arm.num_observations, static_cast<int>(rewards.size()));
      EXPECT_EQ(arm.mean, fit.mean);
      EXPECT_EQ(arm.precision, fit.precision);
      EXPECT_EQ(arm.reward_mean, moments.mean);
      EXPECT_EQ(arm.reward_m2, moments.m2);
    }
  }
};

// Past kExactFitMaxRewards rewards an arm is updated from its stored moments
// alone: the service still makes the in-process optimizer's decisions bit for
// bit, its arms equal a refit from every trial, and a change to an old trial
// no longer reaches the arm (it is not read again).
TEST_P(LongHistoryTest, ArmsPastTheExactLimitAreUpdatedFromTheirMoments) {
  JobSpec spec = Spec();
  ASSERT_TRUE(service_->RegisterJob(spec));
  optimizer::BatchSizeOptimizer local = Local(spec);
  const int runs = static_cast<int>(optimizer::kExactFitMaxRewards) + 80;
  Drive(spec, runs, local);
  Result<std::vector<ArmRecord>> arms = service_->Arms(*spec.job_id);
  ASSERT_TRUE(arms);
  const std::vector<optimizer::ArmPosterior> expected = local.bandit()->Posteriors();
  ASSERT_EQ(arms->size(), expected.size());
  int longest = 0;
  for (std::size_t i = 0; i < arms->size(); ++i) {
    EXPECT_EQ((*arms)[i].mean, expected[i].mean);
    EXPECT_EQ((*arms)[i].precision, expected[i].precision);
    EXPECT_EQ((*arms)[i].num_observations, expected[i].num_observations);
    longest = std::max(longest, (*arms)[i].num_observations);
  }
  ASSERT_GT(longest, optimizer::kExactFitMaxRewards);
  ExpectArmsMatchARefit(spec);

  // Double the energy of the arm's first trial behind the service's back.
  const auto it = std::max_element(arms->begin(), arms->end(),
                                   [](const ArmRecord& a, const ArmRecord& b) { return a.num_observations < b.num_observations; });
  const ArmRecord before = *it;
  Result<std::unique_ptr<SqlConnection>> c = OpenSqlConnection(url_);
  ASSERT_TRUE(c);
  const std::vector<SqlValue> params = {*spec.job_id, std::int64_t{before.batch_size}};
  ASSERT_TRUE((*c)->Execute("UPDATE bso_trial SET energy = 2 * energy WHERE job_id = $1 AND batch_size = $2 AND "
                            "trial_number = (SELECT MIN(trial_number) FROM bso_trial WHERE job_id = $1 AND "
                            "batch_size = $2 AND status = 'Succeeded')",
                            params));
  for (;;) {
    TrialId t = Next(*spec.job_id);
    Finish(t, 1.0, 200.0, true);
    if (t.batch_size == before.batch_size) break;
  }
  Result<std::vector<ArmRecord>> after = service_->Arms(*spec.job_id);
  ASSERT_TRUE(after);
  const auto updated = std::find_if(after->begin(), after->end(),
                                    [&](const ArmRecord& a) { return a.batch_size == before.batch_size; });
  ASSERT_NE(updated, after->end());
  const double reward = -optimizer::ZeusCost(200.0, 1.0, spec.eta_knob, spec.max_power);
  const optimizer::RewardMoments moments =
      optimizer::AddReward({before.num_observations, before.reward_mean, before.reward_m2}, reward);
  EXPECT_EQ(updated->num_observations, before.num_observations + 1);
  EXPECT_EQ(updated->reward_mean, moments.mean);
  EXPECT_EQ(updated->reward_m2, moments.m2);
  EXPECT_EQ(updated->mean, optimizer::FitArmFromMoments(before.batch_size, moments, {}).mean);
}

// With a window the arm is refitted from its newest window_size trials.
TEST_P(LongHistoryTest, WindowedArmsAreFittedFromTheirNewestTrials) {
  JobSpec spec = Spec();
  spec.window_size = 5;
  ASSERT_TRUE(service_->RegisterJob(spec));
  optimizer::BatchSizeOptimizer local = Local(spec);
  Drive(spec, 60, local);
  const std::vector<optimizer::ArmPosterior> expected = local.bandit()->Posteriors();
  Result<std::vector<ArmRecord>> arms = service_->Arms(*spec.job_id);
  ASSERT_TRUE(arms);
  ASSERT_EQ(arms->size(), expected.size());
  for (std::size_t i = 0; i < arms->size(); ++i) {
    EXPECT_EQ((*arms)[i].mean, expected[i].mean);
    EXPECT_EQ((*arms)[i].precision, expected[i].precision);
    EXPECT_LE((*arms)[i].num_observations, 5);
  }
  ExpectArmsMatchARefit(spec);
}

// Schema 2 had no moments: migration 3 adds them and refits every arm from
// its trials (a stale posterior included).
TEST_P(LongHistoryTest, MigratingAVersion2DatabaseBackfillsTheArms) {
  JobSpec spec = Spec();
  ASSERT_TRUE(service_->RegisterJob(spec));
  optimizer::BatchSizeOptimizer local = Local(spec);
  Drive(spec, 40, local);
  service_.reset();
  {
    Result<std::unique_ptr<SqlConnection>> c = OpenSqlConnection(url_);
    ASSERT_TRUE(c);
    ASSERT_TRUE((*c)->ExecuteScript("ALTER TABLE bso_arm DROP COLUMN reward_mean; ALTER TABLE bso_arm DROP COLUMN "
                                    "reward_m2; ALTER TABLE bso_job DROP COLUMN policy; UPDATE bso_arm SET mean = 0; "
                                    "UPDATE zeus_schema SET version = 2"));
  }
  Result<std::unique_ptr<BsoService>> migrated = BsoService::Open(url_);
  ASSERT_TRUE(migrated) << migrated.error().message();
  service_ = std::move(*migrated);
  ExpectArmsMatchARefit(spec);
  const std::vector<optimizer::ArmPosterior> expected = local.bandit()->Posteriors();
  Result<std::vector<ArmRecord>> arms = service_->Arms(*spec.job_id);
  ASSERT_TRUE(arms);
  for (std::size_t i = 0; i < arms->size(); ++i) EXPECT_EQ((*arms)[i].mean, expected[i].mean);
  Drive(spec, 5, local);  // and the job goes on
}

// A job registered with policy "zeus-robust" gets the decisions of the
// in-process optimizer under that policy (one pruning round that ends a
// direction at a size costing more than 1.5x the best, then pooled-variance
// Thompson sampling), and the policy is stored with the job.
TEST_P(LongHistoryTest, HonoursTheJobSpecsPolicy) {
  JobSpec spec = Spec();
  spec.policy = "zeus-robust";
  ASSERT_TRUE(service_->RegisterJob(spec));
  optimizer::BatchSizeOptimizerOptions options;
  options.num_pruning_rounds = spec.num_pruning_rounds;
  options.seed = static_cast<std::uint64_t>(*spec.mab_seed);
  options = optimizer::ApplyBatchSizePolicy(optimizer::BatchSizePolicy::kZeusRobust, options);
  optimizer::BatchSizeOptimizer local =
      optimizer::BatchSizeOptimizer::Create(spec.batch_sizes, spec.default_batch_size, options).value();
  Drive(spec, 40, local);
  Result<std::vector<TrialRecord>> trials = service_->Trials(*spec.job_id);
  ASSERT_TRUE(trials);
  // One round over {8, ..., 128} from 32 explores at most 5 sizes (the
  // original's two rounds explore 8 here: 32 16 8 64 128, then 64 32 16).
  int explorations = 0;
  for (const TrialRecord& t : *trials) explorations += t.type == TrialType::kExploration ? 1 : 0;
  EXPECT_LE(explorations, 5);
  EXPECT_GE(explorations, 3);
  Result<RegisterResult> again = service_->RegisterJob(spec);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.policy, "zeus-robust");
}

INSTANTIATE_TEST_SUITE_P(Databases, ServiceTest, ::testing::Values(Db::kSqlite, Db::kPostgres), DbName);
INSTANTIATE_TEST_SUITE_P(Databases, LongHistoryTest, ::testing::Values(Db::kSqlite, Db::kPostgres), DbName);
INSTANTIATE_TEST_SUITE_P(Databases, ExplorationTimeoutTest, ::testing::Values(Db::kSqlite, Db::kPostgres), DbName);

}  // namespace
}  // namespace zeus::bso
