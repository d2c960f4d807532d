// Copyright 2026 The Zeus C++ Authors.
//
// JobSpec's fields, listed once. Each entry gives a field's name (its JSON
// key, its bso_job column and its Python attribute), its member of JobSpec
// (whose type is the field's, and whose value in JobSpec{} its default),
// whether a request must carry it, which part of the message it belongs to,
// and what it means. Everything that spells the fields out is made from this
// list:
//   * the JSON parser and writer (src/bso/models.cc);
//   * the service's bso_job column list, parameter binding and row reading
//     (src/bso/job_store.cc);
//   * the Python module's attribute reading and its dict of a job, and the
//     list it exports (python/src/batch_size.cc), from which
//     zeus.optimizer.batch_size's JobSpec and CreatedJob dataclasses are made
//     (python/zeus/optimizer/batch_size/common.py).
// The rules a JobSpec must satisfy are ValidateJobSpec's (models.h), shared
// by every layer (several involve two fields).
//
// A member's type is one of those the generic code knows: std::string, int,
// double, bool, std::vector<int>, std::optional<std::string>,
// std::optional<double>, std::optional<std::int64_t>. A field added here is
// a new bso_job column: it needs a schema migration (src/bso/schema.cc).
// The order is that of the JSON parser's error list.

#ifndef ZEUS_BSO_JOB_SPEC_FIELDS_H_
#define ZEUS_BSO_JOB_SPEC_FIELDS_H_

#include <string_view>
#include <tuple>

#include "zeus/bso/models.h"

namespace zeus::bso {

// Where a field comes from (zeus-reference 3.1).
enum class JobSpecPart {
  kJob,  // JobParams / JobSpec: the user's
  kGpu,  // GpuConfig: filled in by the optimizer from its monitor's GPUs
};

template <class T>
struct JobSpecField {
  std::string_view name;
  T JobSpec::*member;
  bool required;  // a request without it (or with null) is invalid
  JobSpecPart part;
  // Not one of Zeus's fields: an object without it (Zeus's own JobSpec) has
  // the default.
  bool extension;
  std::string_view doc;
};

// Spelled out for clang before 17, which deduces no aggregate's template
// arguments (the fuzzers are built with clang).
template <class T>
JobSpecField(std::string_view, T JobSpec::*, bool, JobSpecPart, bool, std::string_view) -> JobSpecField<T>;

inline constexpr auto kJobSpecFields = std::tuple{
    JobSpecField{"job_id", &JobSpec::job_id, false, JobSpecPart::kJob, false,
                 "the job's id; None lets the service make one (<job_id_prefix>-<8 hex digits>). A job run by "
                 "several ranks of torch.distributed should set it (see BatchSizeOptimizer)."},
    JobSpecField{"job_id_prefix", &JobSpec::job_id_prefix, true, JobSpecPart::kJob, false,
                 "the prefix of the job id; a given job_id must start with it."},
    JobSpecField{"batch_sizes", &JobSpec::batch_sizes, true, JobSpecPart::kJob, false,
                 "the batch sizes to choose from (kept sorted ascending)."},
    JobSpecField{"default_batch_size", &JobSpec::default_batch_size, true, JobSpecPart::kJob, false,
                 "the batch size the job uses today; one of batch_sizes. Exploration starts there."},
    JobSpecField{"eta_knob", &JobSpec::eta_knob, false, JobSpecPart::kJob, false,
                 "the weight of energy against time in the cost, in [0, 1] (cost = eta x energy + (1 - eta) x "
                 "max_power x time)."},
    JobSpecField{"beta_knob", &JobSpec::beta_knob, false, JobSpecPart::kJob, false,
                 "early stopping: a run whose cost passes beta_knob x the cheapest converged run's cost is "
                 "stopped; None turns early stopping off."},
    JobSpecField{"target_metric", &JobSpec::target_metric, false, JobSpecPart::kJob, false,
                 "the validation metric at which a run has converged."},
    JobSpecField{"higher_is_better_metric", &JobSpec::higher_is_better_metric, false, JobSpecPart::kJob, false,
                 "True when the run converges at metric >= target_metric, False for metric <= target_metric."},
    JobSpecField{"max_epochs", &JobSpec::max_epochs, false, JobSpecPart::kJob, false,
                 "a run that has not converged after this many epochs has failed."},
    JobSpecField{"num_pruning_rounds", &JobSpec::num_pruning_rounds, false, JobSpecPart::kJob, false,
                 "rounds of pruning exploration before Thompson sampling (at least 1)."},
    JobSpecField{"window_size", &JobSpec::window_size, false, JobSpecPart::kJob, false,
                 "how many of each batch size's newest runs Thompson sampling keeps; 0 keeps all."},
    JobSpecField{"mab_prior_mean", &JobSpec::mab_prior_mean, false, JobSpecPart::kJob, false,
                 "the prior mean of the Gaussian Thompson sampling arms."},
    JobSpecField{"mab_prior_precision", &JobSpec::mab_prior_precision, false, JobSpecPart::kJob, false,
                 "the prior precision of the arms; 0 is uninformative."},
    JobSpecField{"mab_num_explorations", &JobSpec::mab_num_explorations, false, JobSpecPart::kJob, false,
                 "runs of each batch size before Thompson sampling draws."},
    JobSpecField{"mab_seed", &JobSpec::mab_seed, false, JobSpecPart::kJob, false,
                 "the service's random seed for this job; None lets the service pick one."},
    JobSpecField{"max_power", &JobSpec::max_power, true, JobSpecPart::kGpu, false,
                 "the largest power limit of the job's GPUs (W, floored) times their number."},
    JobSpecField{"number_of_gpus", &JobSpec::number_of_gpus, true, JobSpecPart::kGpu, false,
                 "how many GPUs the monitor measures."},
    JobSpecField{"gpu_model", &JobSpec::gpu_model, true, JobSpecPart::kGpu, false, "the GPUs' model name."},
    JobSpecField{"policy", &JobSpec::policy, false, JobSpecPart::kJob, true,
                 "extension: the batch-size policy, \"zeus\" (Zeus's exploration, the default) or "
                 "\"zeus-robust\"; Zeus's own server ignores it."},
};

inline constexpr std::size_t kJobSpecFieldCount = std::tuple_size_v<decltype(kJobSpecFields)>;

// Calls f(field) for each entry of kJobSpecFields, in order.
template <class F>
constexpr void ForEachJobSpecField(F&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, kJobSpecFields);
}

}  // namespace zeus::bso

#endif  // ZEUS_BSO_JOB_SPEC_FIELDS_H_
