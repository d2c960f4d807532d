// Copyright 2026 The Zeus C++ Authors.

#include "simulator/policies.h"

#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/policy.h"
#include "zeus/optimizer/power_limit.h"

namespace zeus::simulator::internal {
namespace {

using optimizer::BatchSizeOptimizer;
using optimizer::BatchSizeStage;

// JIT power-limit profiling: the first time a batch size runs, its first
// epoch profiles every limit and the cheapest is kept for good.
class JitPowerLimits {
 public:
  explicit JitPowerLimits(double eta) : eta_(eta) {}
  Result<JobPolicy::Limit> Get(const BatchSizeTrace& bs) {
    if (auto it = chosen_.find(bs.batch_size); it != chosen_.end()) return JobPolicy::Limit{it->second, false};
    Result<optimizer::PowerLimitChoice> choice = optimizer::ChoosePowerLimit(bs.profiles, eta_);
    if (!choice) return Fail(choice.error());
    chosen_.emplace(bs.batch_size, choice->power_limit_w);
    return JobPolicy::Limit{choice->power_limit_w, true};
  }

 private:
  double eta_;
  std::map<int, double> chosen_;
};

optimizer::BatchSizeOptimizerOptions BsoOptions(const SimulationOptions& options) {
  optimizer::BatchSizeOptimizerOptions o;
  o.bandit = options.bandit;
  o.seed = options.seed;
  return optimizer::ApplyBatchSizePolicy(BatchSizePolicyOf(options.policy), o);
}

// The in-process batch-size optimizer as a BatchSizeSource.
class LocalBatchSizeSource : public BatchSizeSource {
 public:
  explicit LocalBatchSizeSource(BatchSizeOptimizer bso) : bso_(std::move(bso)) {}
  Result<int> Next() override { return bso_.Predict(); }
  std::string_view stage() const override {
    return bso_.stage() == BatchSizeStage::kPruning ? "pruning" : "ts";
  }
  Status Observe(int batch_size, double, double, double cost, bool reached, double) override {
    return bso_.Observe(batch_size, cost, reached);
  }
  const optimizer::GaussianTs* bandit() const { return bso_.bandit(); }

 private:
  BatchSizeOptimizer bso_;
};

// Zeus: batch size by pruning + Thompson sampling (in process, or from a
// BatchSizeSource such as the service), power limit by JIT profiling unless
// `fixed_max_limit` (Zeus's batch-size optimizer alone, each batch size at its
// maximum limit).
class ZeusPolicy : public JobPolicy {
 public:
  ZeusPolicy(std::unique_ptr<BatchSizeSource> source, const LocalBatchSizeSource* local, double eta,
             bool fixed_max_limit)
      : source_(std::move(source)), local_(local), limits_(eta), fixed_max_limit_(fixed_max_limit) {}
  Result<int> NextBatchSize() override { return source_->Next(); }
  std::string_view stage() const override { return source_->stage(); }
  Result<Limit> PowerLimit(const BatchSizeTrace& bs) override {
    if (fixed_max_limit_) return Limit{bs.max_power_limit_w, false};
    return limits_.Get(bs);
  }
  Status Observe(const TryRecord& run, double cost) override {
    return source_->Observe(run.batch_size, run.ran ? run.energy_j : 0.0, run.ran ? run.time_s : 0.0, cost,
                            run.reached, run.epochs);
  }
  const optimizer::GaussianTs* bandit() const override { return local_ != nullptr ? local_->bandit() : nullptr; }

 private:
  std::unique_ptr<BatchSizeSource> source_;
  const LocalBatchSizeSource* local_;  // source_ when it is in process
  JitPowerLimits limits_;
  bool fixed_max_limit_;
};

// Zeus's power-limit optimizer alone, at the default batch size.
class PowerLimitOnlyPolicy : public JobPolicy {
 public:
  PowerLimitOnlyPolicy(int batch_size, double eta) : batch_size_(batch_size), limits_(eta) {}
  Result<int> NextBatchSize() override { return batch_size_; }
  std::string_view stage() const override { return "fixed"; }
  Result<Limit> PowerLimit(const BatchSizeTrace& bs) override { return limits_.Get(bs); }
  Status Observe(const TryRecord&, double) override { return OkStatus(); }

 private:
  int batch_size_;
  JitPowerLimits limits_;
};

// Grid search: every (batch size ascending, limit descending) once, failures
// included, then always the configuration with the least mean observed cost
// among those that reached the target at least once.
class GridSearchPolicy : public JobPolicy {
 public:
  explicit GridSearchPolicy(const JobTrace& job) {
    for (const BatchSizeTrace& bs : job.per_batch_size) {
      for (double pl : bs.power_limits_w) configs_.push_back({bs.batch_size, pl});
    }
  }
  Result<int> NextBatchSize() override {
    if (next_ < configs_.size()) {
      current_ = next_;
      return configs_[current_].batch_size;
    }
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < configs_.size(); ++i) {
      const Config& c = configs_[i];
      if (c.successes == 0) continue;
      if (!best || c.cost_sum / c.runs < configs_[*best].cost_sum / configs_[*best].runs) best = i;
    }
    if (!best) return Fail(ErrorCode::kFailedPrecondition, "grid search: no configuration reached the target");
    current_ = *best;
    return configs_[current_].batch_size;
  }
  std::string_view stage() const override { return next_ < configs_.size() ? "grid" : "exploit"; }
  Result<Limit> PowerLimit(const BatchSizeTrace&) override { return Limit{configs_[current_].power_limit_w, false}; }
  Status Observe(const TryRecord& run, double cost) override {
    const bool reached = run.reached;
    Config& c = configs_[current_];
    c.cost_sum += cost;
    c.runs += 1;
    c.successes += reached ? 1 : 0;
    if (current_ == next_) ++next_;
    return OkStatus();
  }
  bool RequiresFirstSuccess() const override { return false; }
  int ExtraTries() const override { return static_cast<int>(configs_.size()); }

 private:
  struct Config {
    int batch_size;
    double power_limit_w;
    double cost_sum = 0;
    double runs = 0;
    int successes = 0;
  };
  std::vector<Config> configs_;
  std::size_t next_ = 0;
  std::size_t current_ = 0;
};

}  // namespace

Result<std::unique_ptr<JobPolicy>> MakePolicy(const JobTrace& job, const SimulationOptions& options) {
  auto make_zeus = [&](bool fixed_max_limit) -> Result<std::unique_ptr<JobPolicy>> {
    if (options.batch_size_source) {
      Result<std::unique_ptr<BatchSizeSource>> source = options.batch_size_source(job, options);
      if (!source) return Fail(source.error());
      return std::unique_ptr<JobPolicy>(new ZeusPolicy(std::move(*source), nullptr, options.eta, fixed_max_limit));
    }
    Result<BatchSizeOptimizer> bso =
        BatchSizeOptimizer::Create(job.batch_sizes, job.default_batch_size, BsoOptions(options));
    if (!bso) return Fail(bso.error());
    auto local = std::make_unique<LocalBatchSizeSource>(std::move(*bso));
    const LocalBatchSizeSource* view = local.get();
    return std::unique_ptr<JobPolicy>(new ZeusPolicy(std::move(local), view, options.eta, fixed_max_limit));
  };
  switch (options.policy) {
    case Policy::kZeus:
    case Policy::kZeusRobust:
      return make_zeus(false);
    case Policy::kBatchSizeOnly:
      return make_zeus(true);
    case Policy::kPowerLimitOnly:
      return std::unique_ptr<JobPolicy>(new PowerLimitOnlyPolicy(job.default_batch_size, options.eta));
    case Policy::kGridSearch:
      return std::unique_ptr<JobPolicy>(new GridSearchPolicy(job));
  }
  return Fail(ErrorCode::kInvalidArgument, "unknown policy");
}

}  // namespace zeus::simulator::internal
