// Copyright 2026 The Zeus C++ Authors.
//
// BsoClient against an in-process server. Its HTTP status table is the HTTP
// layer's (src/http/http_status_test.cc).

#include "zeus/bso/client.h"

#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/ports.h"
#include "testing/temp_dir.h"
#include "zeus/bso/server.h"

namespace zeus::bso {
namespace {

using ::testing::HasSubstr;

TEST(ClientTest, TalksToTheServer) {
  zeus::testing::TempDir dir;
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.database_url = "sqlite:///" + dir.File("bso.db");
  options.threads = 1;
  options.log_level = "off";
  auto server = BsoServer::Start(options);
  ASSERT_TRUE(server) << server.error().message();
  auto client = std::move(*BsoClient::Create((*server)->url() + "/"));
  EXPECT_EQ(client->server_url(), (*server)->url());
  ASSERT_TRUE(client->Health());

  JobSpec spec;
  spec.job_id_prefix = "c";
  spec.batch_sizes = {8, 16};
  spec.default_batch_size = 16;
  spec.max_power = 100;
  spec.number_of_gpus = 1;
  spec.gpu_model = "x";
  Result<JobSpec> job = client->RegisterJob(spec);
  ASSERT_TRUE(job) << job.error().message();
  ASSERT_TRUE(job->job_id);
  Result<TrialId> trial = client->GetBatchSize(*job->job_id);
  ASSERT_TRUE(trial);
  EXPECT_EQ(trial->batch_size, 16);
  Result<ReportResponse> r = client->Report({*job->job_id, 16, trial->trial_number, 1, 1, 0.9, 1});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->converged);
  ASSERT_TRUE(client->EndTrial(*trial));  // already reported: a no-op

  // The service's 409 reads back as kFailedPrecondition; RegisterJob's only
  // 409, a taken job id, as kAlreadyExists.
  JobSpec taken = *job;
  taken.default_batch_size = 8;
  Result<JobSpec> conflict = client->RegisterJob(taken);
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(conflict.error().native_code(), 409);

  Result<TrialId> unknown = client->GetBatchSize("c-does-not-exist");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(unknown.error().message(), HasSubstr("GET /jobs/batch_size: unknown job_id 'c-does-not-exist'"));
  EXPECT_EQ(unknown.error().native_code(), 400);

  ASSERT_TRUE(client->DeleteJob(*job->job_id));
  Status gone = client->DeleteJob(*job->job_id);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), ErrorCode::kNotFound);

  JobSpec invalid = spec;
  invalid.batch_sizes.clear();
  Result<JobSpec> rejected = client->RegisterJob(invalid);
  ASSERT_FALSE(rejected);
  EXPECT_THAT(rejected.error().message(), HasSubstr("batch_sizes: must not be empty"));
}

TEST(ClientTest, UnreachableServerIsUnavailableAfterRetries) {
  ClientOptions options;
  options.max_attempts = 3;
  options.initial_backoff = std::chrono::milliseconds(1);
  zeus::testing::RefusingPort refusing;
  ASSERT_NE(refusing.port(), 0);
  const std::string url = "http://" + refusing.address();
  auto client = std::move(*BsoClient::Create(url, options));
  Status s = client->Health();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(s.error().message(), HasSubstr("gave up after 3 attempts"));
  EXPECT_THAT(s.error().message(), HasSubstr("cannot connect to " + url + ": "));
  Result<std::unique_ptr<BsoClient>> bad = BsoClient::Create("https://example.com");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace zeus::bso
