// Copyright 2026 The Zeus C++ Authors.

#include "zeus/simulator/trace.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "base/files.h"
#include "simulator/csv_reader.h"

namespace zeus::simulator {
namespace {

using internal::CsvTable;

Error NotRegular(const std::string& path, mode_t mode) {
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("{} is {}, not a CSV file; a trace must be a regular file", path, base::FileKind(mode)));
}

// Reads a whole file (base::ReadRegularFileAt). A path that is not a regular
// file (a directory, a FIFO, a device) is kInvalidArgument, found without
// reading, so a FIFO without a writer never blocks the caller; one that cannot
// be opened or read is ErrorFromErrno's code (kNotFound, kPermissionDenied,
// kIoError). Each names the path and what is wrong with it.
Result<std::string> ReadFile(const std::string& path) {
  auto text = base::ReadRegularFileAt(AT_FDCWD, path.c_str(), std::numeric_limits<std::size_t>::max());
  if (text) return std::move(*text);
  switch (text.error().kind) {
    case base::FileReadFailure::Kind::kNotRegular:
      return Fail(NotRegular(path, text.error().mode));
    case base::FileReadFailure::Kind::kTooLarge:
      return Fail(ErrorFromErrno(EFBIG, fmt::format("cannot read {}", path)));
    case base::FileReadFailure::Kind::kErrno:
      break;
  }
  return Fail(ErrorFromErrno(text.error().errno_value, fmt::format("cannot open {}", path)));
}

Result<CsvTable> Table(std::string_view text, std::string_view file_name, const std::vector<std::string_view>& columns) {
  Result<std::vector<internal::CsvRecord>> records = internal::ReadCsv(text, file_name);
  if (!records) return Fail(records.error());
  return CsvTable::Create(std::move(*records), file_name, columns);
}

// Assigns `result`'s value to `out` or returns its error from the caller.
#define ZEUS_ASSIGN_CELL(out, expr)          \
  do {                                       \
    auto zeus_cell = (expr);                 \
    if (!zeus_cell) return Fail(zeus_cell.error()); \
    (out) = std::move(*zeus_cell);           \
  } while (false)

}  // namespace

Result<TrainTrace> ParseTrainTrace(std::string_view text, std::string_view file_name) {
  Result<CsvTable> table = Table(text, file_name,
                                 {"dataset", "network", "batch_size", "optimizer", "learning_rate", "run",
                                  "target_metric", "target_epoch"});
  if (!table) return Fail(table.error());
  TrainTrace trace;
  trace.path = std::string(file_name);
  trace.rows.reserve(table->num_rows());
  for (std::size_t i = 0; i < table->num_rows(); ++i) {
    if (Status s = table->CheckWidth(i); !s) return Fail(s.error());
    TrainRow r;
    ZEUS_ASSIGN_CELL(r.dataset, table->NonEmpty(i, "dataset"));
    ZEUS_ASSIGN_CELL(r.network, table->NonEmpty(i, "network"));
    ZEUS_ASSIGN_CELL(r.batch_size, table->PositiveInt(i, "batch_size"));
    ZEUS_ASSIGN_CELL(r.optimizer, table->NonEmpty(i, "optimizer"));
    r.learning_rate = table->Text(i, "learning_rate");
    ZEUS_ASSIGN_CELL(r.run, table->Count(i, "run"));
    ZEUS_ASSIGN_CELL(r.target_metric, table->Number(i, "target_metric"));
    ZEUS_ASSIGN_CELL(r.target_epoch, table->NumberOrNan(i, "target_epoch"));
    if (!std::isnan(r.target_epoch) && !(r.target_epoch > 0)) {
      return Fail(table->CellError(i, "target_epoch",
                                   fmt::format("{} must be a positive epoch count, or empty/nan for never",
                                               table->Text(i, "target_epoch"))));
    }
    trace.rows.push_back(std::move(r));
  }
  return trace;
}

Result<PowerTrace> ParsePowerTrace(std::string_view text, std::string_view file_name, std::string gpu) {
  Result<CsvTable> table = Table(text, file_name,
                                 {"dataset", "network", "batch_size", "optimizer", "power_limit", "time_per_epoch",
                                  "average_power"});
  if (!table) return Fail(table.error());
  PowerTrace trace;
  trace.path = std::string(file_name);
  trace.gpu = std::move(gpu);
  trace.rows.reserve(table->num_rows());
  for (std::size_t i = 0; i < table->num_rows(); ++i) {
    if (Status s = table->CheckWidth(i); !s) return Fail(s.error());
    PowerRow r;
    ZEUS_ASSIGN_CELL(r.dataset, table->NonEmpty(i, "dataset"));
    ZEUS_ASSIGN_CELL(r.network, table->NonEmpty(i, "network"));
    ZEUS_ASSIGN_CELL(r.batch_size, table->PositiveInt(i, "batch_size"));
    ZEUS_ASSIGN_CELL(r.optimizer, table->NonEmpty(i, "optimizer"));
    ZEUS_ASSIGN_CELL(r.power_limit_w, table->Number(i, "power_limit"));
    ZEUS_ASSIGN_CELL(r.time_per_epoch_s, table->Number(i, "time_per_epoch"));
    ZEUS_ASSIGN_CELL(r.average_power_w, table->Number(i, "average_power"));
    if (!(r.power_limit_w > 0)) {
      return Fail(table->CellError(i, "power_limit", fmt::format("{} W must be positive", r.power_limit_w)));
    }
    if (!(r.time_per_epoch_s > 0)) {
      return Fail(table->CellError(i, "time_per_epoch", fmt::format("{} s must be positive", r.time_per_epoch_s)));
    }
    if (!(r.average_power_w >= 0)) {
      return Fail(table->CellError(i, "average_power", fmt::format("{} W must not be negative", r.average_power_w)));
    }
    trace.rows.push_back(std::move(r));
  }
  return trace;
}

#undef ZEUS_ASSIGN_CELL

Result<TrainTrace> LoadTrainTrace(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text) return Fail(text.error());
  return ParseTrainTrace(*text, path);
}

Result<PowerTrace> LoadPowerTrace(const std::string& path, std::string gpu) {
  Result<std::string> text = ReadFile(path);
  if (!text) return Fail(text.error());
  return ParsePowerTrace(*text, path, std::move(gpu));
}

std::string TrainTracePath(const std::string& dir) { return dir + "/summary_train.csv"; }

std::string PowerTracePath(const std::string& dir, std::string_view gpu) {
  return fmt::format("{}/summary_power_{}.csv", dir, gpu);
}

Result<std::vector<std::string>> ListTraceGpus(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return Fail(ErrorFromErrno(errno, dir));
  std::vector<std::string> gpus;
  constexpr std::string_view kPrefix = "summary_power_";
  constexpr std::string_view kSuffix = ".csv";
  while (const dirent* e = readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.size() > kPrefix.size() + kSuffix.size() && name.substr(0, kPrefix.size()) == kPrefix &&
        name.substr(name.size() - kSuffix.size()) == kSuffix) {
      gpus.emplace_back(name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size()));
    }
  }
  closedir(d);
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

}  // namespace zeus::simulator
