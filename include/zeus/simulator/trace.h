// Copyright 2026 The Zeus C++ Authors.
//
// The Zeus trace format (../shared/traces/zeus-nsdi23/README.md), loaded and
// validated.
//
//   summary_train.csv        dataset, network, batch_size, optimizer,
//                            learning_rate, run, target_metric, target_epoch
//                            (empty or "nan": the run never reached it)
//   summary_power_<gpu>.csv  dataset, network, batch_size, optimizer,
//                            power_limit, time_per_epoch, average_power
//
// Columns are found by name in the header (any order; extra columns are
// ignored). Numbers are parsed with correct rounding (std::from_chars).
// Every failure is an ErrorCode::kInvalidArgument (kNotFound / kIoError for a
// missing or unreadable file) whose message starts with "<file>:<line>:" and
// names the column, e.g.
//   summary_power_v100.csv:12:6: column 'time_per_epoch': "abc" is not a number
//
// Thread-safety: the loaded traces are immutable values.

#ifndef ZEUS_SIMULATOR_TRACE_H_
#define ZEUS_SIMULATOR_TRACE_H_

#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::simulator {

// One row of the train trace: a training run of a configuration and the epoch
// at which it first reached target_metric.
struct TrainRow {
  std::string dataset;
  std::string network;
  int batch_size = 0;
  std::string optimizer;
  std::string learning_rate;  // kept as written; not used by the simulator
  int run = 0;
  double target_metric = 0;
  double target_epoch = 0;  // NaN when the run never reached target_metric
};

// One row of a power trace: one epoch at a power limit.
struct PowerRow {
  std::string dataset;
  std::string network;
  int batch_size = 0;
  std::string optimizer;
  double power_limit_w = 0;
  double time_per_epoch_s = 0;
  double average_power_w = 0;
};

struct TrainTrace {
  std::string path;  // the file it came from
  std::vector<TrainRow> rows;
};

struct PowerTrace {
  std::string path;
  std::string gpu;  // from the file name: summary_power_<gpu>.csv
  std::vector<PowerRow> rows;
};

// Parse CSV text; `file_name` is used in error messages.
Result<TrainTrace> ParseTrainTrace(std::string_view text, std::string_view file_name);
Result<PowerTrace> ParsePowerTrace(std::string_view text, std::string_view file_name, std::string gpu);

// Read and parse a file.
Result<TrainTrace> LoadTrainTrace(const std::string& path);
Result<PowerTrace> LoadPowerTrace(const std::string& path, std::string gpu);

// <dir>/summary_train.csv and <dir>/summary_power_<gpu>.csv.
std::string TrainTracePath(const std::string& dir);
std::string PowerTracePath(const std::string& dir, std::string_view gpu);

// The GPUs with a power trace in `dir` (summary_power_<gpu>.csv), sorted.
// Fails with kNotFound when `dir` is not a readable directory.
Result<std::vector<std::string>> ListTraceGpus(const std::string& dir);

}  // namespace zeus::simulator

#endif  // ZEUS_SIMULATOR_TRACE_H_
