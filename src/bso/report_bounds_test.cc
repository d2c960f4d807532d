// Copyright 2026 The Zeus C++ Authors.
//
// Issue 20 on SQLite and on PostgreSQL (when ZEUS_TEST_POSTGRES_URL is set):
// no report can make a job unusable (a cost outside CheckTrialCost's range is
// refused before anything is written, a non-finite arm fit is never stored,
// the extremes of what is accepted keep every arm finite), and, through a
// real BsoServer on a socket, HEAD has no side effects, a report of
// `time: 1e308` is a 422 naming the field, and the last of duplicated query
// parameters wins.

#include <cmath>
#include <ostream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bso/arm_statistics.h"
#include "bso/db_param_test_util.h"
#include "bso/router.h"
#include "bso/service.h"
#include "bso/sql/sql_connection.h"
#include "http/http_status.h"
#include "testing/postgres.h"
#include "testing/temp_dir.h"
#include "zeus/bso/server.h"

namespace zeus::bso {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

using zeus::bso::testing::Db;
using zeus::bso::testing::DbName;


// Three batch sizes, one pruning round: the bandit starts after three runs.
JobSpec Spec(const std::string& job_id) {
  JobSpec s;
  s.job_id = job_id;
  s.job_id_prefix = "bounds";
  s.batch_sizes = {16, 32, 64};
  s.default_batch_size = 32;
  s.beta_knob.reset();
  s.target_metric = 0.5;
  s.max_epochs = 10;
  s.num_pruning_rounds = 1;
  s.mab_seed = 3;
  s.max_power = 300;
  s.number_of_gpus = 1;
  s.gpu_model = "NVIDIA A40";
  return s;
}

class ReportBoundsTest : public ::testing::TestWithParam<Db> {
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

  TrialId Next(const std::string& job_id) {
    Result<TrialId> t = service_->NextBatchSize(job_id);
    EXPECT_TRUE(t) << t.error().message();
    return t ? *t : TrialId{};
  }

  Result<ReportResponse> Report(const TrialId& t, double time, double energy) {
    return service_->Report(TrainingResult{t.job_id, t.batch_size, t.trial_number, time, energy, 1.0, 1, true});
  }

  // Runs converging trials of time_of(trial) seconds and 0 J until the job
  // is in the bandit stage. The GET that builds the bandit dispatches a
  // trial, which this reports too.
  template <class TimeOf>
  void PruneToBandit(const std::string& job_id, TimeOf time_of) {
    for (int i = 0; i < 10; ++i) {
      const TrialId t = Next(job_id);
      Result<ReportResponse> r = Report(t, time_of(t), 0);
      ASSERT_TRUE(r) << r.error().message();
      if (t.type == TrialType::kMab) return;
    }
    FAIL() << job_id << " did not reach the bandit stage";
  }

  std::vector<ArmRecord> Arms(const std::string& job_id) {
    Result<std::vector<ArmRecord>> arms = service_->Arms(job_id);
    EXPECT_TRUE(arms) << arms.error().message();
    return arms ? *arms : std::vector<ArmRecord>{};
  }

  // Writes to the database behind the service's back: a job stored before
  // reports and priors were bounded.
  void Sql(const std::string& statement) {
    Result<std::unique_ptr<SqlConnection>> c = OpenSqlConnection(url_);
    ASSERT_TRUE(c) << c.error().message();
    Result<std::int64_t> changed = (*c)->Execute(statement);
    ASSERT_TRUE(changed) << statement << ": " << changed.error().message();
    ASSERT_GT(*changed, 0) << statement;
  }

  zeus::testing::TempDir dir_;
  std::unique_ptr<zeus::testing::ScopedPostgresDatabase> pg_;
  std::string url_;
  std::unique_ptr<BsoService> service_;
};

void ExpectFinite(const std::vector<ArmRecord>& arms) {
  ASSERT_FALSE(arms.empty());
  for (const ArmRecord& a : arms) {
    EXPECT_TRUE(std::isfinite(a.mean)) << "arm " << a.batch_size << " mean " << a.mean;
    EXPECT_GE(a.precision, 0) << "arm " << a.batch_size;  // +inf: zero variance
    EXPECT_TRUE(std::isfinite(a.reward_mean) && std::isfinite(a.reward_m2)) << "arm " << a.batch_size;
  }
}

// The report of the issue reached the service through the parser; here the
// service itself refuses it (and a cost too small to fit), writing nothing.
TEST_P(ReportBoundsTest, ACostOutOfRangeIsRefusedAndTheJobGoesOn) {
  ASSERT_TRUE(service_->RegisterJob(Spec("bounds-1")));
  const TrialId first = Next("bounds-1");
  for (const auto& [time, energy] : {std::pair{1e308, 1.0}, std::pair{1e200, 0.0}, std::pair{0.0, 2e-155}}) {
    Result<ReportResponse> r = Report(first, time, energy);
    ASSERT_FALSE(r) << time << " s, " << energy << " J was accepted";
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(http::HttpStatusFor(http::kBsoErrorStatuses, r.error().code()), 400);
    EXPECT_THAT(r.error().message(), HasSubstr("report of trial 1 of job bounds-1"));
    EXPECT_THAT(r.error().message(), HasSubstr("outside what the service can fit (0, or 1e-30 to 1e+30 J)"));
  }
  Result<std::vector<TrialRecord>> trials = service_->Trials("bounds-1");
  ASSERT_TRUE(trials);
  ASSERT_EQ(trials->size(), 1u);
  EXPECT_EQ(trials->front().status, TrialStatus::kDispatched);  // nothing was recorded

  ASSERT_TRUE(Report(first, 10, 3000));
  PruneToBandit("bounds-1", [](const TrialId& t) { return 5.0 + t.batch_size; });
  for (int i = 0; i < 6; ++i) {
    const TrialId t = Next("bounds-1");
    ASSERT_EQ(t.type, TrialType::kMab);
    ASSERT_TRUE(Report(t, 20 + i, 4000));
  }
  ExpectFinite(Arms("bounds-1"));
}

// Before the cost floor, rewards 0 and -1e-155 gave a variance of 2.5e-311,
// whose inverse overflows: the arm's mean became NaN (SQLite: "NOT NULL
// constraint failed: bso_arm.mean" on every later report).
TEST_P(ReportBoundsTest, ATinyCostCannotMakeAnArmNaN) {
  ASSERT_TRUE(service_->RegisterJob(Spec("bounds-2")));
  PruneToBandit("bounds-2", [](const TrialId&) { return 0.0; });  // every cost 0
  const TrialId t = Next("bounds-2");
  ASSERT_EQ(t.type, TrialType::kMab);
  Result<ReportResponse> r = Report(t, 0, 2e-155);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  ExpectFinite(Arms("bounds-2"));
  ASSERT_TRUE(Report(t, 0, 0));
  EXPECT_EQ(Next("bounds-2").type, TrialType::kMab);
}

// The extremes of what is accepted (the largest time, energy and max_power,
// the smallest non-zero cost, and 0) keep every arm finite.
TEST_P(ReportBoundsTest, TheExtremesOfWhatIsAcceptedKeepEveryArmFinite) {
  JobSpec spec = Spec("bounds-3");
  spec.max_power = 1e12;
  ASSERT_TRUE(ValidateJobSpec(spec));
  ASSERT_TRUE(service_->RegisterJob(spec));
  int n = 0;
  PruneToBandit("bounds-3", [&](const TrialId&) { return n++ % 2 == 0 ? 1e12 : 0.0; });
  const std::vector<std::pair<double, double>> runs = {{1e12, 1e18}, {0, 2e-30}, {0, 0}, {1e12, 0}, {0, 1e18},
                                                       {0, 2.0000000000000004e-30}, {1e12, 1e18}, {1e-9, 0}};
  for (const auto& [time, energy] : runs) {
    const TrialId t = Next("bounds-3");
    Result<ReportResponse> r = Report(t, time, energy);
    ASSERT_TRUE(r) << time << " s, " << energy << " J: " << r.error().message();
    ExpectFinite(Arms("bounds-3"));
  }
  EXPECT_EQ(Next("bounds-3").type, TrialType::kMab);
}

// The last guard: a job stored before the prior was bounded (set here behind
// the service's back) would fit to -inf; its report is refused with a 409
// saying what to do, and the job stays as it was and usable.
TEST_P(ReportBoundsTest, ANonFiniteFitIsNeverStored) {
  ASSERT_TRUE(service_->RegisterJob(Spec("bounds-4")));
  PruneToBandit("bounds-4", [](const TrialId& t) { return 5.0 + t.batch_size; });
  Sql("UPDATE bso_job SET mab_prior_mean = -1e200, mab_prior_precision = 1e200 WHERE job_id = 'bounds-4'");
  const std::vector<ArmRecord> before = Arms("bounds-4");
  const TrialId t = Next("bounds-4");
  Result<ReportResponse> r = Report(t, 99, 12345);
  ASSERT_FALSE(r) << "a non-finite fit was stored";
  EXPECT_EQ(r.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(http::HttpStatusFor(http::kBsoErrorStatuses, r.error().code()), 409);
  EXPECT_THAT(r.error().message(), HasSubstr("non-finite statistics"));
  EXPECT_THAT(r.error().message(), HasSubstr("DELETE /jobs?job_id=bounds-4 and register it again"));
  const std::vector<ArmRecord> after = Arms("bounds-4");
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].mean, before[i].mean);
    EXPECT_EQ(after[i].num_observations, before[i].num_observations);
  }
  Result<std::vector<TrialRecord>> trials = service_->Trials("bounds-4");
  ASSERT_TRUE(trials);
  EXPECT_EQ(trials->back().status, TrialStatus::kDispatched);
  EXPECT_EQ(Next("bounds-4").type, TrialType::kMab);  // GET still works
}

// The issue's broken job, stored before reports were bounded: building its
// bandit answers 409 with what to do (was 400 "NOT NULL constraint failed:
// bso_arm.mean" on SQLite, a NaN arm on PostgreSQL), and stores nothing.
TEST_P(ReportBoundsTest, AJobBrokenBeforeTheBoundsSaysWhatToDo) {
  ASSERT_TRUE(service_->RegisterJob(Spec("bounds-5")));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Report(Next("bounds-5"), 10 + i, 1000));
  Sql("UPDATE bso_trial SET time = 1e308 WHERE job_id = 'bounds-5' AND trial_number = 1");
  for (int i = 0; i < 2; ++i) {
    Result<TrialId> t = service_->NextBatchSize("bounds-5");
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::kFailedPrecondition);
    EXPECT_THAT(t.error().message(), HasSubstr("job bounds-5 cannot start Thompson sampling"));
    EXPECT_THAT(t.error().message(), HasSubstr("register it again"));
  }
  Result<JobState> state = service_->State("bounds-5");
  ASSERT_TRUE(state);
  EXPECT_FALSE(state->bandit_stage);
  EXPECT_TRUE(Arms("bounds-5").empty());
}

// Through a real server on a socket.
class ReportBoundsServerTest : public ReportBoundsTest {
 protected:
  void SetUp() override {
    ReportBoundsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    service_.reset();  // the server opens its own
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.database_url = url_;
    options.threads = 2;
    options.access_log = false;
    options.log_level = "error";
    Result<std::unique_ptr<BsoServer>> server = BsoServer::Start(options);
    ASSERT_TRUE(server) << server.error().message();
    server_ = std::move(*server);
    Result<std::unique_ptr<HttpClient>> client = HttpClient::Create(server_->url());
    ASSERT_TRUE(client) << client.error().message();
    client_ = std::move(*client);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  HttpResponse Send(std::string_view method, std::string_view target, std::string_view body = {}) {
    Result<HttpResponse> r = client_->Send(method, target, body);
    EXPECT_TRUE(r) << method << " " << target << ": " << r.error().message();
    return r ? *r : HttpResponse{};
  }
  static std::string ReportJson(const json& trial, double time) {
    return json{{"job_id", trial["job_id"]}, {"batch_size", trial["batch_size"]},
                {"trial_number", trial["trial_number"]}, {"time", time}, {"energy", 1000},
                {"metric", 1.0}, {"current_epoch", 1}, {"finished", true}}
        .dump();
  }

  std::unique_ptr<BsoServer> server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_P(ReportBoundsServerTest, HeadDuplicatedParametersAndAHugeTime) {
  ASSERT_EQ(Send("POST", "/jobs", ToJson(Spec("bounds-6"))).status, 201);
  for (int i = 0; i < 3; ++i) {
    HttpResponse head = Send("HEAD", "/jobs/batch_size?job_id=bounds-6");
    EXPECT_EQ(head.status, 405);
    EXPECT_TRUE(head.body.empty());
    const std::string* allow = FindHeader(head, "Allow");
    ASSERT_NE(allow, nullptr);
    EXPECT_EQ(*allow, "GET");
  }
  EXPECT_EQ(Send("HEAD", "/healthz").status, 200);

  HttpResponse got = Send("GET", "/jobs/batch_size?job_id=ghost&job_id=bounds-6");
  ASSERT_EQ(got.status, 200) << got.body;
  json trial = json::parse(got.body);
  EXPECT_EQ(trial["trial_number"], 1);  // HEAD made no trial

  HttpResponse huge = Send("POST", "/report", R"({"job_id": "bounds-6", "batch_size": )" +
                                                  trial["batch_size"].dump() +
                                                  R"(, "trial_number": 1, "time": 1e308, "energy": 1000,
                                                     "metric": 1.0, "current_epoch": 1})");
  EXPECT_EQ(huge.status, 422) << huge.body;
  EXPECT_THAT(json::parse(huge.body)["message"].get<std::string>(),
              HasSubstr("time: time must be finite and >= 0, at most 1e+12 seconds since training began "
                        "(got 1e+308)"));

  // The job goes on: pruning, the bandit, and every later GET.
  for (int i = 0; i < 10; ++i) {
    HttpResponse report = Send("POST", "/report", ReportJson(trial, 10.0 + i));
    ASSERT_EQ(report.status, 200) << report.body;
    HttpResponse next = Send("GET", "/jobs/batch_size?job_id=bounds-6");
    ASSERT_EQ(next.status, 200) << next.body;
    trial = json::parse(next.body);
  }
  EXPECT_EQ(trial["type"], "MAB");
}

INSTANTIATE_TEST_SUITE_P(Databases, ReportBoundsTest, ::testing::Values(Db::kSqlite, Db::kPostgres), DbName);
INSTANTIATE_TEST_SUITE_P(Databases, ReportBoundsServerTest, ::testing::Values(Db::kSqlite, Db::kPostgres), DbName);

}  // namespace
}  // namespace zeus::bso
