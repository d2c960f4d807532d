// Copyright 2026 The Zeus C++ Authors.
//
// What defines a recurring training job in the traces: the workload
// (dataset, network), its optimizer, the target metric it must reach, the
// epoch cap and the user's default batch size. The six workloads of the Zeus
// NSDI '23 traces are built in (../shared/docs/simulator-spec.md); any field
// can be overridden, and any other workload can be given in full.
//
// Pure values and functions; thread-safe.

#ifndef ZEUS_SIMULATOR_WORKLOAD_H_
#define ZEUS_SIMULATOR_WORKLOAD_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "zeus/base/error.h"

namespace zeus::simulator {

struct WorkloadSpec {
  std::string dataset;
  std::string network;
  std::string optimizer;
  double target_metric = 0;
  int max_epochs = 0;
  int default_batch_size = 0;  // before capping to the GPU's largest batch size

  // "dataset/network", the name used in reports.
  std::string name() const { return dataset + "/" + network; }
};

// The built-in workloads, in the paper's order (librispeech, squad,
// sentiment140, imagenet, cifar100, movielens-1m).
std::span<const WorkloadSpec> BuiltinWorkloads();

// Fields to override; unset ones keep the built-in value.
struct WorkloadOverrides {
  std::optional<std::string> network = std::nullopt;
  std::optional<std::string> optimizer = std::nullopt;
  std::optional<double> target_metric = std::nullopt;
  std::optional<int> max_epochs = std::nullopt;
  std::optional<int> default_batch_size = std::nullopt;
};

// Resolves a workload named "dataset" or "dataset/network". A built-in name
// takes its defaults, then `overrides`. Any other name needs a network (in the
// name or overrides) and every override field; otherwise kInvalidArgument
// says which are missing. Also kInvalidArgument for max_epochs < 1 or
// default_batch_size < 1.
Result<WorkloadSpec> ResolveWorkload(std::string_view name, const WorkloadOverrides& overrides = {});

}  // namespace zeus::simulator

#endif  // ZEUS_SIMULATOR_WORKLOAD_H_
