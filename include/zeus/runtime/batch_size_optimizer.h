// Copyright 2026 The Zeus C++ Authors.
//
// zeus::BatchSizeOptimizer: the training-loop side of the batch-size
// optimizer service (`zeus bso-server`). Each run of a recurring job asks the
// service for a batch size, measures its time and energy with zeus::Monitor,
// reports after every evaluation, and stops when the service says so: when
// the target metric is reached, max_epochs pass, or the cost exceeds
// beta_knob x the least cost of a converged run (early stopping).
//
//   auto bso = zeus::BatchSizeOptimizer::Create(gpus, *monitor, "http://bso:8000", job);
//   int batch_size = *(*bso)->GetBatchSize();
//   (*bso)->OnTrainBegin();
//   for (int epoch = 0;; ++epoch) {
//     train_one_epoch(batch_size);
//     (*bso)->OnEpochEnd();                 // optional: leaves evaluation out of the cost
//     auto decision = (*bso)->OnEvaluate(evaluate());
//     if (!decision || decision->stop_train) break;
//   }
//
// Compared with the original Python client: OnEpochEnd() pauses the
// measurement so evaluation is not charged (the original charged it);
// not converging is a value (decision.converged), not an exception. If the
// process ends (SIGINT, SIGTERM, std::exit, std::terminate, or the object is
// destroyed) before the run's final report, the trial is marked failed on the
// server (PATCH /trials) so that it is explored again.
//
// The batch-size policy is the job's: JobSpec.policy ("zeus", the default, or
// "zeus-robust"; zeus/optimizer/policy.h), decided by the service from the
// same zeus::optimizer code as `zeus simulate --policy`.
//
// Distributed jobs: only rank 0 asks for a batch size; copy its job id,
// batch_size() and trial_number() to the other ranks yourself and give them
// to AdoptTrial there, after which those ranks measure and report as rank 0
// does (the service answers a report of a trial that has already ended with
// its recorded outcome, as the original does).
//
// Thread-safety: hooks run on the training thread.

#ifndef ZEUS_RUNTIME_BATCH_SIZE_OPTIMIZER_H_
#define ZEUS_RUNTIME_BATCH_SIZE_OPTIMIZER_H_

#include <memory>
#include <optional>
#include <string>

#include "zeus/base/error.h"
#include "zeus/bso/client.h"
#include "zeus/bso/models.h"
#include "zeus/device/gpu.h"
#include "zeus/monitor/monitor.h"

namespace zeus::runtime {

struct BatchSizeOptimizerOptions {
  bso::ClientOptions client;
  // Mark the trial failed on SIGINT, SIGTERM, std::terminate and std::exit.
  bool end_trial_on_exit = true;
};

// The service's answer to one report.
struct EpochDecision {
  bool stop_train = false;
  bool converged = false;
  std::string message;
};

class BatchSizeOptimizer {
 public:
  // Registers `job` with the service at server_url. The GPU configuration is
  // filled in from the GPUs `monitor` measures unless the job sets it:
  // max_power = (largest power limit in W, floored) x GPUs, number_of_gpus,
  // gpu_model = GPU 0's name. Errors: kInvalidArgument for a bad job or URL,
  // no GPUs (and no GPU configuration in the job) or GPUs of different
  // models; kUnavailable when the service cannot be reached; the service's
  // answer otherwise (kAlreadyExists: the job id exists with another spec).
  // REQUIRES: gpus and monitor outlive the optimizer.
  static Result<std::unique_ptr<BatchSizeOptimizer>> Create(const device::GpuSet& gpus, monitor::Monitor& monitor,
                                                            std::string_view server_url, bso::JobSpec job,
                                                            int rank = 0, BatchSizeOptimizerOptions options = {});
  ~BatchSizeOptimizer();
  BatchSizeOptimizer(const BatchSizeOptimizer&) = delete;
  BatchSizeOptimizer& operator=(const BatchSizeOptimizer&) = delete;

  // The batch size for this run (asked once, then cached). kFailedPrecondition
  // on ranks other than 0; kIoError when the service answers a batch size the
  // job does not have.
  Result<int> GetBatchSize();
  // Ranks other than 0: takes rank 0's trial (job id, batch size, trial
  // number) as this rank's. kFailedPrecondition on rank 0 or after this
  // run's final decision; kInvalidArgument for an empty job id, a batch size
  // the job does not have, or a trial number below 1.
  Status AdoptTrial(const bso::TrialId& trial);
  // Starts measuring the run. kFailedPrecondition before GetBatchSize (or
  // AdoptTrial).
  Status OnTrainBegin();
  // Pauses measuring until OnEvaluate (optional).
  Status OnEpochEnd();
  // Reports the metric after an epoch, with the run's cumulative time and
  // energy, and returns the service's decision. After a final decision it
  // returns that decision again without contacting the service.
  Result<EpochDecision> OnEvaluate(double metric);
  // Ends the run now and reports its result as final (training stopped for
  // a reason of the caller's own).
  Result<EpochDecision> Finish(double metric);

  const bso::JobSpec& job() const { return job_; }
  std::optional<int> batch_size() const { return batch_size_; }
  int trial_number() const { return trial_number_; }
  int current_epoch() const { return epoch_; }
  bool training_finished() const { return finished_; }
  double time_s() const { return time_s_; }
  double energy_j() const { return energy_j_; }

 private:
  class ExitHook;
  BatchSizeOptimizer(monitor::Monitor& monitor, std::unique_ptr<bso::BsoClient> client, bso::JobSpec job, int rank,
                     BatchSizeOptimizerOptions options);
  Status CloseWindow();
  Result<EpochDecision> ReportNow(double metric, bool final);

  monitor::Monitor& monitor_;
  std::unique_ptr<bso::BsoClient> client_;
  bso::JobSpec job_;
  int rank_;
  BatchSizeOptimizerOptions options_;
  std::optional<int> batch_size_;
  int trial_number_ = 0;
  int epoch_ = 0;
  bool window_open_ = false;
  bool finished_ = false;
  double time_s_ = 0;
  double energy_j_ = 0;
  std::optional<EpochDecision> final_decision_;
  std::unique_ptr<ExitHook> exit_hook_;
};

}  // namespace zeus::runtime

namespace zeus {
using BatchSizeOptimizer = runtime::BatchSizeOptimizer;
}  // namespace zeus

#endif  // ZEUS_RUNTIME_BATCH_SIZE_OPTIMIZER_H_
