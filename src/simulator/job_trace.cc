// Copyright 2026 The Zeus C++ Authors.

#include "zeus/simulator/job_trace.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "zeus/optimizer/numpy_math.h"

namespace zeus::simulator {
namespace {

using optimizer::NumpyMean;

bool SameJob(const TrainRow& r, const WorkloadSpec& w) {
  return r.dataset == w.dataset && r.network == w.network && r.optimizer == w.optimizer;
}
bool SameJob(const PowerRow& r, const WorkloadSpec& w) {
  return r.dataset == w.dataset && r.network == w.network && r.optimizer == w.optimizer;
}

// "a/b (opt), c/d (opt), ..." for error messages.
template <class Rows>
std::string JobsIn(const Rows& rows) {
  std::set<std::string> jobs;
  for (const auto& r : rows) jobs.insert(fmt::format("{}/{} ({})", r.dataset, r.network, r.optimizer));
  return fmt::format("{}", fmt::join(jobs, ", "));
}

// The largest power limit over the rows of `power` that join a train row.
double GlobalMaxPower(const TrainTrace& train, const PowerTrace& power) {
  using Key = std::tuple<std::string_view, std::string_view, int, std::string_view>;
  std::set<Key> keys;
  const TrainRow* previous = nullptr;
  for (const TrainRow& r : train.rows) {
    // Runs of one configuration are usually adjacent: skip repeats cheaply.
    if (previous == nullptr || previous->batch_size != r.batch_size || previous->dataset != r.dataset ||
        previous->network != r.network || previous->optimizer != r.optimizer) {
      keys.emplace(r.dataset, r.network, r.batch_size, r.optimizer);
    }
    previous = &r;
  }
  double max_w = 0;
  for (const PowerRow& r : power.rows) {
    if (r.power_limit_w > max_w && keys.count({r.dataset, r.network, r.batch_size, r.optimizer}) != 0) {
      max_w = r.power_limit_w;
    }
  }
  return max_w;
}

BatchSizeTrace BuildBatchSize(int batch_size, const std::vector<const TrainRow*>& runs,
                              const std::vector<const PowerRow*>& limits) {
  BatchSizeTrace bs;
  bs.batch_size = batch_size;
  for (const PowerRow* p : limits) {
    bs.max_power_limit_w = std::max(bs.max_power_limit_w, p->power_limit_w);
    if (std::find(bs.power_limits_w.begin(), bs.power_limits_w.end(), p->power_limit_w) == bs.power_limits_w.end()) {
      bs.power_limits_w.push_back(p->power_limit_w);
    }
  }
  std::sort(bs.power_limits_w.begin(), bs.power_limits_w.end(), std::greater<>());
  bs.paths.resize(bs.power_limits_w.size());
  std::vector<std::vector<double>> times(bs.power_limits_w.size()), powers(bs.power_limits_w.size());
  std::vector<double> all_energy, all_time;
  for (const TrainRow* run : runs) {
    for (const PowerRow* p : limits) {
      const auto i = static_cast<std::size_t>(bs.LimitIndex(p->power_limit_w));
      const double energy_per_epoch_j = p->time_per_epoch_s * p->average_power_w;
      bs.paths[i].push_back({run->run, run->target_epoch, p->time_per_epoch_s, energy_per_epoch_j});
      times[i].push_back(p->time_per_epoch_s);
      powers[i].push_back(p->average_power_w);
      all_energy.push_back(energy_per_epoch_j);
      all_time.push_back(p->time_per_epoch_s);
    }
  }
  for (std::size_t i = 0; i < bs.power_limits_w.size(); ++i) {
    bs.profiles.push_back({bs.power_limits_w[i], NumpyMean(times[i]), NumpyMean(powers[i])});
  }
  bs.profiling_epoch_energy_j = NumpyMean(all_energy);
  bs.profiling_epoch_time_s = NumpyMean(all_time);
  return bs;
}

}  // namespace

int BatchSizeTrace::LimitIndex(double power_limit_w) const {
  for (std::size_t i = 0; i < power_limits_w.size(); ++i) {
    if (power_limits_w[i] == power_limit_w) return static_cast<int>(i);
  }
  return -1;
}

const BatchSizeTrace* JobTrace::Find(int batch_size) const {
  const auto it = std::lower_bound(per_batch_size.begin(), per_batch_size.end(), batch_size,
                                   [](const BatchSizeTrace& b, int v) { return b.batch_size < v; });
  return it != per_batch_size.end() && it->batch_size == batch_size ? &*it : nullptr;
}

Result<JobTrace> BuildJobTrace(const TrainTrace& train, const PowerTrace& power, const WorkloadSpec& workload) {
  const std::string job = fmt::format("{} with optimizer {}", workload.name(), workload.optimizer);
  std::vector<const TrainRow*> train_rows;
  for (const TrainRow& r : train.rows) {
    if (SameJob(r, workload)) train_rows.push_back(&r);
  }
  if (train_rows.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: no runs of workload {} (the file has: {})", train.path, job, JobsIn(train.rows)));
  }
  std::vector<const PowerRow*> power_rows;
  for (const PowerRow& r : power.rows) {
    if (SameJob(r, workload)) power_rows.push_back(&r);
  }
  if (power_rows.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: no measurements of workload {} (the file has: {})", power.path, job,
                            JobsIn(power.rows)));
  }

  JobTrace trace;
  trace.gpu = power.gpu;
  trace.workload = workload;
  trace.max_power_w = GlobalMaxPower(train, power);

  std::set<int> in_train, in_power;
  for (const TrainRow* r : train_rows) in_train.insert(r->batch_size);
  for (const PowerRow* r : power_rows) in_power.insert(r->batch_size);
  std::set_intersection(in_train.begin(), in_train.end(), in_power.begin(), in_power.end(),
                        std::back_inserter(trace.batch_sizes));
  if (trace.batch_sizes.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} and {}: no batch size of {} is in both files", train.path, power.path, job));
  }
  trace.default_batch_size = std::min(workload.default_batch_size, *in_power.rbegin());

  std::set<double> targets;
  bool any_at_target = false;
  for (const TrainRow* r : train_rows) {
    targets.insert(r->target_metric);
    any_at_target = any_at_target || r->target_metric == workload.target_metric;
  }
  if (!any_at_target) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: no runs of {} with target_metric {} (its targets: {})", train.path, job,
                            workload.target_metric, fmt::join(targets, ", ")));
  }

  std::set<double> limits;
  for (int bs : trace.batch_sizes) {
    std::vector<const TrainRow*> runs;
    for (const TrainRow* r : train_rows) {
      if (r->batch_size == bs && r->target_metric == workload.target_metric) runs.push_back(r);
    }
    std::vector<const PowerRow*> measured;
    for (const PowerRow* p : power_rows) {
      if (p->batch_size == bs) measured.push_back(p);
    }
    if (runs.empty()) continue;
    trace.per_batch_size.push_back(BuildBatchSize(bs, runs, measured));
    for (double pl : trace.per_batch_size.back().power_limits_w) limits.insert(pl);
  }
  trace.power_limits_w.assign(limits.begin(), limits.end());
  trace.default_recurrences =
      2 * static_cast<int>(trace.per_batch_size.size()) * static_cast<int>(trace.power_limits_w.size());
  if (trace.Find(trace.default_batch_size) == nullptr) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: the default batch size {} of {} has no runs with target_metric {} (batch sizes: {})",
                            train.path, trace.default_batch_size, job, workload.target_metric,
                            fmt::join(trace.batch_sizes, " ")));
  }
  return trace;
}

}  // namespace zeus::simulator
