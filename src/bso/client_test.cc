// Copyright 2026 The Zeus C++ Authors.
//
// BsoClient against an in-process server, and its HTTP status table.

#include "zeus/bso/client.h"

#include <chrono>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bso/service.h"
#include "testing/ports.h"
#include "testing/temp_dir.h"
#include "zeus/bso/server.h"

namespace zeus::bso {
namespace {

using ::testing::HasSubstr;

TEST(ClientStatusTableTest, Table) {
  const std::vector<std::pair<int, ErrorCode>> table = {
      {200, ErrorCode::kOk},          {201, ErrorCode::kOk},          {400, ErrorCode::kInvalidArgument},
      {403, ErrorCode::kPermissionDenied}, {404, ErrorCode::kNotFound}, {405, ErrorCode::kInvalidArgument},
      {409, ErrorCode::kFailedPrecondition}, {413, ErrorCode::kInvalidArgument}, {422, ErrorCode::kInvalidArgument},
      {500, ErrorCode::kInternal},    {502, ErrorCode::kInternal},    {503, ErrorCode::kUnavailable},
      {504, ErrorCode::kTimeout},
  };
  for (const auto& [status, code] : table) EXPECT_EQ(ErrorCodeForHttpStatus(status), code) << status;
}

// The server's table (HttpStatusFor) and the client's are inverse wherever
// the server's is one-to-one. The lossy entries, each listed with what the
// client gets back:
//   kAlreadyExists and kFailedPrecondition share 409 (the original server's
//     status for both); the client reads kFailedPrecondition, and
//     RegisterJob, whose only 409 is a taken job id, kAlreadyExists;
//   kAborted and kUnavailable share 503 (retry later): kUnavailable;
//   kNotSupported, kDeviceLost, kIoError and kInternal share 500: kInternal.
TEST(ClientStatusTableTest, RoundTripsTheServersTable) {
  const std::map<ErrorCode, ErrorCode> lossy = {
      {ErrorCode::kAlreadyExists, ErrorCode::kFailedPrecondition},
      {ErrorCode::kAborted, ErrorCode::kUnavailable},
      {ErrorCode::kNotSupported, ErrorCode::kInternal},
      {ErrorCode::kDeviceLost, ErrorCode::kInternal},
      {ErrorCode::kIoError, ErrorCode::kInternal},
  };
  for (int i = 0; i <= static_cast<int>(ErrorCode::kInternal); ++i) {
    const auto code = static_cast<ErrorCode>(i);
    const int status = HttpStatusFor(code);
    const auto it = lossy.find(code);
    const ErrorCode expected = it == lossy.end() ? code : it->second;
    EXPECT_EQ(ErrorCodeForHttpStatus(status), expected) << ErrorCodeName(code) << " -> HTTP " << status;
  }
}

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
