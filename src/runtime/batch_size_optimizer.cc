// Copyright 2026 The Zeus C++ Authors.

#include "zeus/runtime/batch_size_optimizer.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include <fmt/format.h>

#include "runtime/exit_restore.h"
#include "zeus/base/log.h"

namespace zeus::runtime {
namespace {

constexpr std::string_view kWindow = "zeus_batch_size_optimizer";

}  // namespace

// Marks the dispatched trial failed if the process ends before its final
// report. Uses its own short-lived client: the exit paths may run on another
// thread than the training loop's.
class BatchSizeOptimizer::ExitHook final : public internal::ExitRestorable {
 public:
  ExitHook(std::string server_url, bso::TrialId trial) : server_url_(std::move(server_url)), trial_(std::move(trial)) {
    internal::RegisterForExit(this);
  }
  virtual ~ExitHook() { internal::UnregisterForExit(this); }

  void RestoreForExit(std::string_view why) noexcept override {
    if (done_.exchange(true)) return;
    bso::ClientOptions options;
    options.connect_timeout = std::chrono::milliseconds(1000);
    options.request_timeout = std::chrono::milliseconds(2000);
    options.max_attempts = 1;
    Result<std::unique_ptr<bso::BsoClient>> client = bso::BsoClient::Create(server_url_, options);
    Status s = client ? (*client)->EndTrial(trial_) : Status(Fail(client.error()));
    const std::string outcome =
        s ? std::string("marked it failed on the server") : "could not mark it failed: " + s.error().message();
    const std::string message =
        fmt::format("{} before trial {} of job {} finished; {}", why, trial_.trial_number, trial_.job_id, outcome);
    zeus::Log({.level = LogLevel::kWarning, .component = "batch-size-optimizer", .message = message});
  }

  // The run ended normally: nothing to do at exit.
  void Disarm() { done_.store(true); }

 private:
  std::string server_url_;
  bso::TrialId trial_;
  std::atomic<bool> done_{false};
};

Result<std::unique_ptr<BatchSizeOptimizer>> BatchSizeOptimizer::Create(const device::GpuSet& gpus,
                                                                       monitor::Monitor& monitor,
                                                                       std::string_view server_url, bso::JobSpec job,
                                                                       int rank, BatchSizeOptimizerOptions options) {
  const std::vector<std::size_t>& indices = monitor.gpu_indices();
  if (job.number_of_gpus == 0 || job.max_power == 0.0 || job.gpu_model.empty()) {
    if (indices.empty()) {
      return Fail(ErrorCode::kInvalidArgument,
                  "the batch-size optimizer needs the GPUs it optimizes: the monitor measures none (or set "
                  "max_power, number_of_gpus and gpu_model in the job)");
    }
    std::string model;
    std::uint32_t max_limit_mw = 0;
    for (std::size_t i : indices) {
      device::Gpu& gpu = gpus.gpu(i);
      Result<std::string> name = gpu.Name();
      if (!name) return Fail(name.error().WithContext(fmt::format("GPU {}", i)));
      if (!model.empty() && *name != model) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("the batch-size optimizer needs GPUs of one model, got {} and {}", model, *name));
      }
      model = *name;
      Result<device::PowerLimitConstraints> constraints = gpu.PowerLimitConstraintsMw();
      if (!constraints) return Fail(constraints.error().WithContext(fmt::format("GPU {}", i)));
      max_limit_mw = std::max(max_limit_mw, constraints->max_mw);
    }
    if (job.gpu_model.empty()) job.gpu_model = model;
    if (job.number_of_gpus == 0) job.number_of_gpus = static_cast<int>(indices.size());
    if (job.max_power == 0.0) job.max_power = static_cast<double>(max_limit_mw / 1000) * static_cast<double>(indices.size());
  }
  Result<std::unique_ptr<bso::BsoClient>> client = bso::BsoClient::Create(server_url, options.client);
  if (!client) return Fail(client.error());
  std::unique_ptr<BatchSizeOptimizer> bso(
      new BatchSizeOptimizer(monitor, std::move(*client), std::move(job), rank, options));
  if (rank == 0) {
    Result<bso::JobSpec> created = bso->client_->RegisterJob(bso->job_);
    if (!created) return Fail(created.error());
    bso->job_ = std::move(*created);
  }
  return bso;
}

BatchSizeOptimizer::BatchSizeOptimizer(monitor::Monitor& monitor, std::unique_ptr<bso::BsoClient> client,
                                       bso::JobSpec job, int rank, BatchSizeOptimizerOptions options)
    : monitor_(monitor), client_(std::move(client)), job_(std::move(job)), rank_(rank), options_(options) {}

BatchSizeOptimizer::~BatchSizeOptimizer() {
  if (window_open_) (void)monitor_.EndWindow(kWindow, /*cancel=*/true);
  if (exit_hook_ && !finished_) exit_hook_->RestoreForExit("the batch-size optimizer was destroyed");
}

Result<int> BatchSizeOptimizer::GetBatchSize() {
  if (rank_ != 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                "only rank 0 asks the batch-size service; broadcast its batch size to the other ranks");
  }
  if (batch_size_) return *batch_size_;
  Result<bso::TrialId> trial = client_->GetBatchSize(*job_.job_id);
  if (!trial) return Fail(trial.error());
  if (!std::binary_search(job_.batch_sizes.begin(), job_.batch_sizes.end(), trial->batch_size)) {
    return Fail(ErrorCode::kIoError, fmt::format("the batch-size service answered batch size {}, which job {} does "
                                                 "not have",
                                                 trial->batch_size, *job_.job_id));
  }
  batch_size_ = trial->batch_size;
  trial_number_ = trial->trial_number;
  if (options_.end_trial_on_exit) exit_hook_ = std::make_unique<ExitHook>(client_->server_url(), *trial);
  return *batch_size_;
}

Status BatchSizeOptimizer::AdoptTrial(const bso::TrialId& trial) {
  if (rank_ == 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                "rank 0 gets its trial from the batch-size service, not from AdoptTrial");
  }
  if (final_decision_) {
    return Fail(ErrorCode::kFailedPrecondition, "this run already has its final decision; build a new optimizer");
  }
  if (trial.job_id.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "AdoptTrial needs rank 0's job id (set JobSpec.job_id, or copy it)");
  }
  if (std::find(job_.batch_sizes.begin(), job_.batch_sizes.end(), trial.batch_size) == job_.batch_sizes.end()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("batch size {} is not one of the job's batch sizes", trial.batch_size));
  }
  if (trial.trial_number < 1) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("trial number {} is not one the service gives (1, 2, ...)", trial.trial_number));
  }
  job_.job_id = trial.job_id;
  batch_size_ = trial.batch_size;
  trial_number_ = trial.trial_number;
  return OkStatus();
}

Status BatchSizeOptimizer::OnTrainBegin() {
  if (!batch_size_) return Fail(ErrorCode::kFailedPrecondition, "call GetBatchSize() before OnTrainBegin()");
  finished_ = false;
  if (window_open_) return OkStatus();
  if (Status s = monitor_.BeginWindow(kWindow); !s) return s;
  window_open_ = true;
  return OkStatus();
}

Status BatchSizeOptimizer::CloseWindow() {
  if (!window_open_) return OkStatus();
  window_open_ = false;
  Result<monitor::Measurement> m = monitor_.EndWindow(kWindow);
  if (!m) return Fail(m.error());
  time_s_ += m->time_s;
  energy_j_ += m->total_energy_j;
  return OkStatus();
}

Status BatchSizeOptimizer::OnEpochEnd() {
  if (!batch_size_ || finished_) return OkStatus();
  return CloseWindow();
}

Result<EpochDecision> BatchSizeOptimizer::ReportNow(double metric, bool final) {
  if (!batch_size_) return Fail(ErrorCode::kFailedPrecondition, "call GetBatchSize() before reporting");
  if (final_decision_) return *final_decision_;
  if (!final) ++epoch_;
  if (Status s = CloseWindow(); !s) return Fail(s.error());
  bso::TrainingResult result;
  result.job_id = *job_.job_id;
  result.batch_size = *batch_size_;
  result.trial_number = trial_number_;
  result.time = time_s_;
  result.energy = energy_j_;
  result.metric = metric;
  result.current_epoch = epoch_;
  result.finished = final;
  Result<bso::ReportResponse> response = client_->Report(result);
  if (!response) return Fail(response.error());
  EpochDecision decision{response->stop_train, response->converged, response->message};
  if (decision.stop_train) {
    finished_ = true;
    final_decision_ = decision;
    if (exit_hook_) exit_hook_->Disarm();
  } else {
    if (Status s = monitor_.BeginWindow(kWindow); !s) return Fail(s.error());
    window_open_ = true;
  }
  return decision;
}

Result<EpochDecision> BatchSizeOptimizer::OnEvaluate(double metric) { return ReportNow(metric, false); }

Result<EpochDecision> BatchSizeOptimizer::Finish(double metric) { return ReportNow(metric, true); }

}  // namespace zeus::runtime
