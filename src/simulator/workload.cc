// Copyright 2026 The Zeus C++ Authors.

#include "zeus/simulator/workload.h"

#include <array>
#include <vector>

#include <fmt/format.h>

namespace zeus::simulator {
namespace {

// Facts from the Zeus NSDI '23 evaluation (simulator-spec.md, "Workload defaults").
const std::array<WorkloadSpec, 6> kBuiltin = {{
    {"librispeech", "deepspeech2", "adamw", 40.0, 16, 192},
    {"squad", "bert_base_uncased", "adamw", 84.0, 6, 32},
    {"sentiment140", "bert_base_uncased", "adamw", 0.84, 10, 128},
    {"imagenet", "resnet50", "adadelta", 0.65, 100, 256},
    {"cifar100", "shufflenetv2", "adadelta", 0.6, 100, 1024},
    {"movielens-1m", "ncf", "adam", 0.41, 100, 1024},
}};

}  // namespace

std::span<const WorkloadSpec> BuiltinWorkloads() { return kBuiltin; }

Result<WorkloadSpec> ResolveWorkload(std::string_view name, const WorkloadOverrides& overrides) {
  std::string dataset(name);
  std::optional<std::string> network = overrides.network;
  if (const std::size_t slash = name.find('/'); slash != std::string_view::npos) {
    dataset = std::string(name.substr(0, slash));
    network = std::string(name.substr(slash + 1));
  }
  if (dataset.empty()) return Fail(ErrorCode::kInvalidArgument, "the workload name is empty");

  WorkloadSpec spec;
  bool builtin = false;
  for (const WorkloadSpec& w : kBuiltin) {
    if (w.dataset == dataset && (!network || *network == w.network)) {
      spec = w;
      builtin = true;
      break;
    }
  }
  if (!builtin) {
    std::vector<std::string> missing;
    if (!network) missing.emplace_back("network (write the workload as dataset/network)");
    if (!overrides.optimizer) missing.emplace_back("optimizer");
    if (!overrides.target_metric) missing.emplace_back("target metric");
    if (!overrides.max_epochs) missing.emplace_back("max epochs");
    if (!overrides.default_batch_size) missing.emplace_back("default batch size");
    if (!missing.empty()) {
      std::string known;
      for (const WorkloadSpec& w : kBuiltin) known += (known.empty() ? "" : ", ") + w.name();
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' is not a built-in workload ({}); for another workload give its {}", name, known,
                              fmt::join(missing, ", ")));
    }
    spec.dataset = dataset;
    spec.network = *network;
  }
  if (overrides.optimizer) spec.optimizer = *overrides.optimizer;
  if (overrides.target_metric) spec.target_metric = *overrides.target_metric;
  if (overrides.max_epochs) spec.max_epochs = *overrides.max_epochs;
  if (overrides.default_batch_size) spec.default_batch_size = *overrides.default_batch_size;
  if (spec.max_epochs < 1) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("max epochs must be >= 1, got {}", spec.max_epochs));
  }
  if (spec.default_batch_size < 1) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the default batch size must be >= 1, got {}", spec.default_batch_size));
  }
  return spec;
}

}  // namespace zeus::simulator
