// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/server_batch_size_source.h"

#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "zeus/bso/client.h"
#include "zeus/bso/models.h"

namespace zeus::cli {
namespace {

class ServerSource : public simulator::BatchSizeSource {
 public:
  ServerSource(std::unique_ptr<bso::BsoClient> client, bso::JobSpec job)
      : client_(std::move(client)), job_(std::move(job)) {}
  ~ServerSource() override { (void)client_->DeleteJob(*job_.job_id); }

  Result<int> Next() override {
    Result<bso::TrialId> trial = client_->GetBatchSize(*job_.job_id);
    if (!trial) return Fail(trial.error());
    trial_ = *trial;
    stage_ = trial->type == bso::TrialType::kMab ? "ts" : "pruning";
    return trial->batch_size;
  }

  std::string_view stage() const override { return stage_; }

  Status Observe(int batch_size, double energy_j, double time_s, double cost, bool reached, double epochs) override {
    if (!trial_ || trial_->batch_size != batch_size) {
      return Fail(ErrorCode::kFailedPrecondition, "observation without a matching trial from the service");
    }
    bso::TrainingResult result;
    result.job_id = *job_.job_id;
    result.batch_size = batch_size;
    result.trial_number = trial_->trial_number;
    result.time = time_s;
    result.energy = energy_j;
    if (energy_j == 0.0 && time_s == 0.0 && cost > 0.0) {
      // A run that could not start: report its penalty cost as energy
      // (never happens on the published traces).
      if (job_.eta_knob > 0.0) {
        result.energy = cost / job_.eta_knob;
      } else {
        result.time = cost / job_.max_power;
      }
    }
    result.metric = reached ? 1.0 : 0.0;
    result.current_epoch = static_cast<int>(std::ceil(epochs));
    result.finished = true;
    Result<bso::ReportResponse> response = client_->Report(result);
    if (!response) return Fail(response.error());
    if (!response->stop_train) {
      return Fail(ErrorCode::kInternal, fmt::format("the service did not end trial {}: {}", trial_->trial_number,
                                                    response->message));
    }
    trial_.reset();
    return OkStatus();
  }

 private:
  std::unique_ptr<bso::BsoClient> client_;
  bso::JobSpec job_;
  std::optional<bso::TrialId> trial_;
  std::string_view stage_ = "pruning";
};

}  // namespace

simulator::BatchSizeSourceFactory ServerBatchSizeSource(std::string server_url) {
  return [server_url](const simulator::JobTrace& trace,
                      const simulator::SimulationOptions& options) -> Result<std::unique_ptr<simulator::BatchSizeSource>> {
    Result<std::unique_ptr<bso::BsoClient>> client = bso::BsoClient::Create(server_url);
    if (!client) return Fail(client.error());
    bso::JobSpec spec;
    spec.job_id_prefix = "zeus-simulate";
    spec.batch_sizes = trace.batch_sizes;
    spec.default_batch_size = trace.default_batch_size;
    spec.eta_knob = options.eta;
    spec.beta_knob.reset();
    spec.target_metric = 1.0;
    spec.higher_is_better_metric = true;
    spec.max_epochs = trace.workload.max_epochs;
    spec.num_pruning_rounds = 2;
    spec.window_size = options.bandit.window_size;
    spec.mab_prior_mean = options.bandit.prior_mean;
    spec.mab_prior_precision = options.bandit.prior_precision;
    spec.mab_num_explorations = options.bandit.num_explorations;
    spec.mab_seed = static_cast<std::int64_t>(options.seed);
    spec.max_power = trace.max_power_w;
    spec.number_of_gpus = 1;
    spec.gpu_model = trace.gpu;
    spec.policy = std::string(optimizer::BatchSizePolicyName(simulator::BatchSizePolicyOf(options.policy)));
    Result<bso::JobSpec> job = (*client)->RegisterJob(spec);
    if (!job) return Fail(job.error().WithContext(fmt::format("registering the simulated job with {}", server_url)));
    return std::unique_ptr<simulator::BatchSizeSource>(new ServerSource(std::move(*client), std::move(*job)));
  };
}

}  // namespace zeus::cli
