// Copyright 2026 The Zeus C++ Authors.
//
// A client for the batch-size optimizer service's REST API (models.h), with
// timeouts and retries. Training loops use zeus::BatchSizeOptimizer
// (zeus/runtime/batch_size_optimizer.h), which is built on this.
//
// Retries: a request is retried, with exponential backoff, when the server
// cannot be reached, or answers 503 or 504 (it committed nothing). After a timeout
// only idempotent requests are retried (registering a job under a given id,
// reporting, ending a trial, deleting); GET /jobs/batch_size is not, since
// the server may already have dispatched a trial for it.
//
// Errors: an error answer is translated with the HTTP layer's one table
// (src/http/http_status.h, ErrorCodeForHttpStatus): 400, 422 and other 4xx
// kInvalidArgument, 401 and 403 kPermissionDenied, 404 kNotFound, 409
// kFailedPrecondition (RegisterJob turns its 409 into kAlreadyExists, the
// only meaning it has there), 503 kUnavailable, 504 kTimeout, anything else
// kInternal. The message is the server's "message", prefixed with the
// request ("POST /report: "), and the error's native code is the status.
//
// Thread-safety: not for concurrent use; one client per thread.

#ifndef ZEUS_BSO_CLIENT_H_
#define ZEUS_BSO_CLIENT_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "zeus/base/error.h"
#include "zeus/bso/models.h"

namespace zeus::bso {

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds request_timeout{10000};
  int max_attempts = 5;  // >= 1
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{2000};
};

class BsoClient {
 public:
  // server_url: "http://host:port". kInvalidArgument for anything else.
  static Result<std::unique_ptr<BsoClient>> Create(std::string_view server_url, const ClientOptions& options = {});
  virtual ~BsoClient() = default;

  // POST /jobs; the job as stored, with its job_id. The spec is validated
  // locally first (kInvalidArgument with every problem listed).
  virtual Result<JobSpec> RegisterJob(const JobSpec& spec) = 0;
  // GET /jobs/batch_size.
  virtual Result<TrialId> GetBatchSize(std::string_view job_id) = 0;
  // POST /report.
  virtual Result<ReportResponse> Report(const TrainingResult& result) = 0;
  // PATCH /trials: marks the trial failed if it is still running.
  virtual Status EndTrial(const TrialId& trial) = 0;
  // DELETE /jobs.
  virtual Status DeleteJob(std::string_view job_id) = 0;
  // GET /healthz.
  virtual Status Health() = 0;

  virtual const std::string& server_url() const = 0;
};

}  // namespace zeus::bso

#endif  // ZEUS_BSO_CLIENT_H_
