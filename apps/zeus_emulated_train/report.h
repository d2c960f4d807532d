// Copyright 2026 The Zeus C++ Authors.
//
// zeus-emulated-train's report of a run, as one JSON object (--json) or as
// lines for people: the power-limit optimizer's outcome and measurements,
// this rank's and the job's totals, observer mode's what-if report, and with
// --bso-server the batch-size service's decision.

#ifndef ZEUS_APPS_ZEUS_EMULATED_TRAIN_REPORT_H_
#define ZEUS_APPS_ZEUS_EMULATED_TRAIN_REPORT_H_

#include <optional>
#include <string>

#include "zeus/base/error.h"
#include "zeus/runtime/batch_size_optimizer.h"
#include "zeus/runtime/power_limit_optimizer.h"
#include "zeus/runtime/power_limit_what_if.h"

namespace zeus::emulated_train {

struct RunReport {
  const runtime::PowerLimitOptimizer* optimizer = nullptr;  // never null
  std::string selector;                                     // the selector's description
  bool observe = false;  // observer mode: the report adds the what-if report or why there is none
  int rank = 0;
  int world_size = 1;
  long steps = 0;
  int epochs = 0;  // epochs run
  double rank_time_s = 0;
  double rank_energy_j = 0;
  double job_time_s = 0;    // the slowest rank's
  double job_energy_j = 0;  // summed over the ranks
  std::optional<runtime::PowerLimitWhatIfReport> what_if{};
  std::optional<Error> what_if_error{};
  // With --bso-server: this run's optimizer (else null), the service's
  // decision after the last epoch, and the job's id.
  const BatchSizeOptimizer* bso = nullptr;
  runtime::EpochDecision decision{};
  std::string bso_job_id{};
};

// One JSON object, indented, with a final newline.
std::string JsonReport(const RunReport& report);
// Lines for people.
std::string TextReport(const RunReport& report);

}  // namespace zeus::emulated_train

#endif  // ZEUS_APPS_ZEUS_EMULATED_TRAIN_REPORT_H_
