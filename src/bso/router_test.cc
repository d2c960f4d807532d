// Copyright 2026 The Zeus C++ Authors.
//
// The REST routes on an SQLite service, without sockets: the table of bad
// requests and their statuses and messages, and the happy paths.

#include "bso/router.h"

#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/temp_dir.h"

namespace zeus::bso {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

constexpr char kJob[] = R"({"job_id": "mnist-1", "job_id_prefix": "mnist", "batch_sizes": [64, 32, 128],
  "default_batch_size": 64, "max_power": 300, "number_of_gpus": 1, "gpu_model": "NVIDIA A40", "mab_seed": 1})";

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<BsoService>> s = BsoService::Open("sqlite:///" + dir_.File("bso.db"));
    ASSERT_TRUE(s) << s.error().message();
    service_ = std::move(*s);
  }
  HttpResponse Send(std::string method, std::string target, std::string body = "") {
    return HandleBsoRequest(*service_, HttpRequest{std::move(method), std::move(target), std::move(body), ""});
  }
  zeus::testing::TempDir dir_;
  std::unique_ptr<BsoService> service_;
};

TEST_F(RouterTest, HappyPath) {
  HttpResponse created = Send("POST", "/jobs", kJob);
  ASSERT_EQ(created.status, 201) << created.body;
  const json job = json::parse(created.body);
  EXPECT_EQ(job["job_id"], "mnist-1");
  EXPECT_EQ(job["batch_sizes"], json({32, 64, 128}));  // sorted
  EXPECT_EQ(job["eta_knob"], 0.5);                     // defaults filled in
  EXPECT_EQ(job["beta_knob"], 2.0);
  EXPECT_EQ(job["max_epochs"], 100);
  EXPECT_EQ(Send("POST", "/jobs", kJob).status, 200);  // identical: 200

  HttpResponse trial = Send("GET", "/jobs/batch_size?job_id=mnist-1");
  ASSERT_EQ(trial.status, 200) << trial.body;
  const json t = json::parse(trial.body);
  EXPECT_EQ(t["job_id"], "mnist-1");
  EXPECT_EQ(t["batch_size"], 64);
  EXPECT_EQ(t["trial_number"], 1);
  EXPECT_EQ(t["type"], "Exploration");

  HttpResponse report = Send("POST", "/report",
                             R"({"job_id": "mnist-1", "batch_size": 64, "trial_number": 1, "time": 10.5,
                                 "energy": 3000, "metric": 0.7, "current_epoch": 3})");
  ASSERT_EQ(report.status, 200) << report.body;
  EXPECT_EQ(json::parse(report.body), json({{"stop_train", true}, {"converged", true}, {"message", "Train succeeded"}}));

  HttpResponse end = Send("PATCH", "/trials", R"({"job_id": "mnist-1", "batch_size": 64, "trial_number": 1})");
  EXPECT_EQ(end.status, 200);
  EXPECT_EQ(end.body, "null");
  HttpResponse deleted = Send("DELETE", "/jobs?job_id=mnist-1");
  EXPECT_EQ(deleted.status, 200);
  EXPECT_EQ(deleted.body, "null");
  EXPECT_EQ(Send("GET", "/healthz").status, 200);
}

TEST_F(RouterTest, QueryParametersArePercentDecoded) {
  EXPECT_EQ(QueryParam("/x?a=1&job_id=a%2Fb+c", "job_id"), "a/b c");
  EXPECT_EQ(QueryParam("/x?job_id=", "job_id"), "");
  EXPECT_EQ(QueryParam("/x?other=1", "job_id"), std::nullopt);
  EXPECT_EQ(QueryParam("/x", "job_id"), std::nullopt);
  EXPECT_EQ(QueryParam("/x?job_id=%zz", "job_id"), "%zz");
}

// Issue 20: the last of duplicated parameters wins, as in the original server.
TEST_F(RouterTest, TheLastOfDuplicatedQueryParametersWins) {
  EXPECT_EQ(QueryParam("/x?job_id=a&job_id=b", "job_id"), "b");
  EXPECT_EQ(QueryParam("/x?job_id=a&other=1&job_id=", "job_id"), "");
  EXPECT_EQ(QueryParam("/x?job_id=a&job_id", "job_id"), "");
  EXPECT_EQ(QueryParam("/x?job%5Fid=a&job_id=b&job%5fid=c", "job_id"), "c");
  ASSERT_EQ(Send("POST", "/jobs", kJob).status, 201);
  HttpResponse trial = Send("GET", "/jobs/batch_size?job_id=ghost&job_id=mnist-1");
  ASSERT_EQ(trial.status, 200) << trial.body;
  EXPECT_EQ(json::parse(trial.body)["job_id"], "mnist-1");
  EXPECT_EQ(Send("GET", "/jobs/batch_size?job_id=mnist-1&job_id=ghost").status, 400);
  EXPECT_EQ(Send("DELETE", "/jobs?job_id=mnist-1&job_id=ghost").status, 404);
  EXPECT_EQ(Send("DELETE", "/jobs?job_id=ghost&job_id=mnist-1").status, 200);
}

// Every malformed request gets the right 4xx and a message naming the problem.
TEST_F(RouterTest, BadRequestTable) {
  ASSERT_EQ(Send("POST", "/jobs", kJob).status, 201);
  ASSERT_EQ(Send("GET", "/jobs/batch_size?job_id=mnist-1").status, 200);
  json base = json::parse(kJob);
  auto with = [&](const std::string& key, json value) {
    json j = base;
    j["job_id"] = "mnist-2";
    if (value.is_discarded()) {
      j.erase(key);
    } else {
      j[key] = value;
    }
    return j.dump();
  };
  const json erase(json::value_t::discarded);
  struct Case {
    std::string method, target, body;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"POST", "/jobs", "{not json", 422, "not valid JSON"},
      {"POST", "/jobs", "[1, 2]", 422, "must be a JSON object"},
      {"POST", "/jobs", "", 422, "not valid JSON"},
      {"POST", "/jobs", with("batch_sizes", erase), 422, "batch_sizes: field required"},
      {"POST", "/jobs", with("batch_sizes", json::array()), 422, "batch_sizes: must not be empty"},
      {"POST", "/jobs", with("batch_sizes", "64"), 422, "batch_sizes: value is not a valid list"},
      {"POST", "/jobs", with("batch_sizes", {32, 32, 64}), 422, "distinct"},
      {"POST", "/jobs", with("batch_sizes", {0, 64}), 422, "positive"},
      {"POST", "/jobs", with("default_batch_size", 48), 422, "default_batch_size 48 is not in batch_sizes"},
      {"POST", "/jobs", with("default_batch_size", "64"), 422, "default_batch_size: value is not a valid integer"},
      {"POST", "/jobs", with("eta_knob", 1.5), 422, "eta_knob must be in [0, 1]"},
      {"POST", "/jobs", with("beta_knob", 0), 422, "beta_knob must be positive"},
      {"POST", "/jobs", with("max_epochs", 0), 422, "max_epochs must be positive"},
      {"POST", "/jobs", with("num_pruning_rounds", 0), 422, "num_pruning_rounds must be at least 1"},
      {"POST", "/jobs", with("window_size", -1), 422, "window_size must be >= 0"},
      {"POST", "/jobs", with("mab_prior_precision", -1), 422, "mab_prior_precision must be >= 0"},
      {"POST", "/jobs", with("mab_num_explorations", -1), 422, "mab_num_explorations must be >= 0"},
      {"POST", "/jobs", with("max_power", -300), 422, "max_power must be positive"},
      {"POST", "/jobs", with("number_of_gpus", 0), 422, "number_of_gpus must be positive"},
      {"POST", "/jobs", with("gpu_model", ""), 422, "gpu_model must not be empty"},
      {"POST", "/jobs", with("higher_is_better_metric", "yes"), 422, "could not be parsed to a boolean"},
      {"POST", "/jobs", with("job_id", "other-1"), 422, "must start with job_id_prefix 'mnist'"},
      {"POST", "/jobs", with("job_id", std::string(400, 'm')), 422, "longer than 300"},
      {"POST", "/jobs", [&] { json j = base; j["eta_knob"] = 0.9; return j.dump(); }(), 409,
       "exists with a different configuration"},
      {"GET", "/jobs/batch_size", "", 422, "job_id: field required"},
      {"GET", "/jobs/batch_size?job_id=ghost", "", 400, "unknown job_id 'ghost'"},
      {"POST", "/report", R"({"job_id": "mnist-1"})", 422, "batch_size: field required"},
      {"POST", "/report", R"({"job_id": "mnist-1", "batch_size": 64, "trial_number": 1, "time": -1, "energy": 1,
                              "metric": 1, "current_epoch": 1})", 422, "time must be finite and >= 0"},
      // Issue 20: a time of 1e308 was accepted and broke the job for ever.
      {"POST", "/report", R"({"job_id": "mnist-1", "batch_size": 64, "trial_number": 1, "time": 1e308, "energy": 1,
                              "metric": 1, "current_epoch": 1})", 422,
       "time: time must be finite and >= 0, at most 1e+12 seconds since training began (got 1e+308)"},
      {"POST", "/report", R"({"job_id": "mnist-1", "batch_size": 64, "trial_number": 1, "time": 1, "energy": 2e18,
                              "metric": 1, "current_epoch": 1})", 422,
       "energy: energy must be finite and >= 0, at most 1e+18 joules since training began (got 2e+18)"},
      {"POST", "/jobs", with("max_power", 1e300), 422, "max_power must be positive and at most 1e+12 W"},
      {"POST", "/jobs", with("mab_prior_mean", -1e200), 422, "between -1e+30 and 1e+30 (got -1e+200)"},
      {"POST", "/jobs", with("mab_prior_precision", 1e200), 422, "at most 1e+30 (got 1e+200)"},
      {"POST", "/report", R"({"job_id": "mnist-1", "batch_size": 64, "trial_number": 1, "time": 1, "energy": 1,
                              "metric": 1, "current_epoch": -1})", 422, "current_epoch must be >= 0"},
      {"POST", "/report", R"({"job_id": "mnist-1", "batch_size": 64, "trial_number": 7, "time": 1, "energy": 1,
                              "metric": 1, "current_epoch": 1})", 400, "has no trial 7"},
      {"POST", "/report", R"({"job_id": "ghost", "batch_size": 64, "trial_number": 1, "time": 1, "energy": 1,
                              "metric": 1, "current_epoch": 1})", 400, "unknown job_id 'ghost'"},
      {"PATCH", "/trials", R"({"job_id": "mnist-1", "batch_size": 64, "trial_number": 9})", 404, "has no trial 9"},
      {"PATCH", "/trials", R"({"job_id": "mnist-1"})", 422, "trial_number: field required"},
      {"DELETE", "/jobs?job_id=ghost", "", 404, "No job was deleted."},
      {"DELETE", "/jobs", "", 422, "job_id: field required"},
      {"GET", "/nowhere", "", 404, "Not Found"},
      {"PUT", "/jobs", "{}", 405, "Method Not Allowed"},
      {"GET", "/report", "", 405, "Method Not Allowed"},
  };
  for (const Case& c : cases) {
    HttpResponse r = Send(c.method, c.target, c.body);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.target << " " << c.body << " -> " << r.body;
    const json body = json::parse(r.body, nullptr, false);
    ASSERT_FALSE(body.is_discarded()) << r.body;
    ASSERT_TRUE(body.contains("message")) << r.body;
    EXPECT_THAT(body["message"].get<std::string>(), HasSubstr(c.message)) << c.method << " " << c.target;
    if (c.status == 422) {
      EXPECT_TRUE(body["detail"].is_array()) << r.body;
    }
  }
}

TEST_F(RouterTest, MethodNotAllowedNamesTheAllowedMethods) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"PUT", "/jobs", "POST, DELETE"},
      {"GET", "/jobs", "POST, DELETE"},
      {"POST", "/jobs/batch_size?job_id=x", "GET"},
      {"HEAD", "/jobs/batch_size?job_id=x", "GET"},
      {"HEAD", "/jobs", "POST, DELETE"},
      {"HEAD", "/report", "POST"},
      {"HEAD", "/trials", "PATCH"},
      {"GET", "/report", "POST"},
      {"GET", "/trials", "PATCH"},
      {"DELETE", "/healthz", "GET, HEAD"},
  };
  for (const auto& [method, target, allow] : cases) {
    HttpResponse r = Send(method, target);
    EXPECT_EQ(r.status, 405) << method << " " << target;
    ASSERT_EQ(r.headers.size(), 1u) << method << " " << target;
    EXPECT_EQ(r.headers[0].first, "Allow");
    EXPECT_EQ(r.headers[0].second, allow) << method << " " << target;
  }
  EXPECT_TRUE(Send("GET", "/nowhere").headers.empty());  // 404 has none
}

// Issue 20: HEAD /jobs/batch_size created a trial. HEAD is answered as GET
// (the HTTP layer drops the body, see http_test.cc) only where GET has no
// side effects; elsewhere 405 with Allow, as FastAPI answers.
TEST_F(RouterTest, HeadHasNoSideEffects) {
  HttpResponse health = Send("HEAD", "/healthz");
  EXPECT_EQ(health.status, 200) << health.body;
  ASSERT_EQ(Send("POST", "/jobs", kJob).status, 201);
  for (int i = 0; i < 3; ++i) {
    HttpResponse head = Send("HEAD", "/jobs/batch_size?job_id=mnist-1");
    EXPECT_EQ(head.status, 405) << head.body;
    const std::string* allow = FindHeader(head, "Allow");
    ASSERT_NE(allow, nullptr);
    EXPECT_EQ(*allow, "GET");
  }
  EXPECT_EQ(Send("HEAD", "/jobs/batch_size").status, 405);
  Result<std::vector<TrialRecord>> trials = service_->Trials("mnist-1");
  ASSERT_TRUE(trials) << trials.error().message();
  EXPECT_TRUE(trials->empty());
  HttpResponse first = Send("GET", "/jobs/batch_size?job_id=mnist-1");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(json::parse(first.body)["trial_number"], 1);  // no trial was made before
}

}  // namespace
}  // namespace zeus::bso
