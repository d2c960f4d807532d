// Copyright 2026 The Zeus C++ Authors.
//
// The batch-size optimizer service's messages, shared by the server
// (`zeus bso-server`) and the C++ client. Field names, defaults and
// validation rules follow the original Zeus REST API
// (../shared/docs/zeus-reference.md section 3.1), so an existing Zeus client
// works against our server and ours against it:
//
//   POST   /jobs              JobSpec (job_id optional)  -> 201/200 JobSpec with job_id
//   GET    /jobs/batch_size   ?job_id=                   -> TrialId
//   POST   /report            TrainingResult             -> ReportResponse
//   PATCH  /trials            TrialId                    -> null (trial marked failed)
//   DELETE /jobs              ?job_id=                   -> null
//
// Differences, all additive or stricter where the original misbehaved (W8):
// num_pruning_rounds must be >= 1 (0 was accepted and then broke), window_size
// and the prior precision must be >= 0, batch sizes must be positive and
// distinct, time and energy must be finite and >= 0 and at most 1e12 s and
// 1e18 J, max_power at most 1e12 W, the prior's mean and precision at most
// 1e30 in magnitude (so that no accepted input can overflow an arm's
// statistics; see src/bso/arm_statistics.h). TrialId responses carry
// an extra "type" field; JobSpec an optional "policy" (absent: "zeus");
// TrainingResult accepts an optional "finished": true
// (the client stopped training on its own: record this result now).
// Unknown fields are ignored, as pydantic v1 does.

#ifndef ZEUS_BSO_MODELS_H_
#define ZEUS_BSO_MODELS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::bso {

// A job's parameters (JobParams) and GPU configuration (GpuConfig): the
// original's JobSpecFromClient, and CreatedJob once job_id is set. The
// defaults are here; names, meanings and which fields a request must carry
// are in job_spec_fields.h, the list every other layer is made from.
struct JobSpec {
  std::optional<std::string> job_id;  // null: the server makes "<prefix>-<8 hex>"
  std::string job_id_prefix;
  std::vector<int> batch_sizes;  // kept sorted ascending
  int default_batch_size = 0;
  double eta_knob = 0.5;
  std::optional<double> beta_knob = 2.0;  // null: no early stopping
  double target_metric = 0.5;
  bool higher_is_better_metric = true;
  int max_epochs = 100;
  int num_pruning_rounds = 2;
  int window_size = 0;  // newest rewards kept per arm; 0 = all
  double mab_prior_mean = 0.0;
  double mab_prior_precision = 0.0;
  int mab_num_explorations = 2;
  std::optional<std::int64_t> mab_seed;
  // Extension: the batch-size policy (zeus/optimizer/policy.h), "zeus" (the
  // original, the default when absent) or "zeus-robust", which overrides
  // num_pruning_rounds and mab_num_explorations with its own settings.
  std::string policy = "zeus";
  // GpuConfig.
  double max_power = 0.0;  // W, summed over the job's GPUs
  int number_of_gpus = 0;
  std::string gpu_model;

  bool operator==(const JobSpec&) const = default;
};

enum class TrialType { kExploration, kConcurrent, kMab };
std::string_view TrialTypeName(TrialType type);  // "Exploration", "Concurrent", "MAB"

struct TrialId {
  std::string job_id;
  int batch_size = 0;
  int trial_number = 0;
  std::optional<TrialType> type;  // set in server responses (extension)
};

struct TrainingResult {
  std::string job_id;
  int batch_size = 0;
  int trial_number = 0;
  double time = 0;    // s, cumulative since training began
  double energy = 0;  // J, cumulative since training began
  double metric = 0;  // the validation metric after current_epoch
  int current_epoch = 0;
  bool finished = false;  // extension, see the file comment
};

struct ReportResponse {
  bool stop_train = false;
  bool converged = false;
  std::string message;
};

// One validation problem, reported like FastAPI's 422 "detail" entries.
struct FieldError {
  std::vector<std::string> loc;  // e.g. {"body", "batch_sizes"}
  std::string msg;
};

// Validation failed: the request is well-formed JSON of the wrong shape or
// values (HTTP 422), or not JSON at all (also 422, as FastAPI).
struct ValidationError {
  std::vector<FieldError> errors;
  // "batch_sizes: must not be empty; ..." for messages and logs.
  std::string Summary() const;
};

template <class T>
using Parsed = tl::expected<T, ValidationError>;

// Parsers: strict types (an integer field takes an integral JSON number, a
// float field any number; no strings for numbers), defaults for absent
// optional fields, the rules of the original plus those in the file comment.
// JobSpec's batch_sizes come back sorted.
Parsed<JobSpec> ParseJobSpec(std::string_view json);
Parsed<TrialId> ParseTrialId(std::string_view json);
Parsed<TrainingResult> ParseTrainingResult(std::string_view json);
Parsed<ReportResponse> ParseReportResponse(std::string_view json);

// Checks a JobSpec built in code (the same rules as ParseJobSpec).
Parsed<JobSpec> ValidateJobSpec(JobSpec spec);

std::string ToJson(const JobSpec& spec);
std::string ToJson(const TrialId& trial);
std::string ToJson(const TrainingResult& result);
std::string ToJson(const ReportResponse& response);
// {"detail": [{"loc": [...], "msg": ..., "type": "value_error"}], "message": Summary()}
std::string ToJson(const ValidationError& error);

// {"message": message}
std::string MessageJson(std::string_view message);

}  // namespace zeus::bso

#endif  // ZEUS_BSO_MODELS_H_
