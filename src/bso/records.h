// Copyright 2026 The Zeus C++ Authors.
//
// The batch-size service's stored rows as values (schema.h's tables): what
// the service's inspection methods return and job_store.h reads.

#ifndef ZEUS_SRC_BSO_RECORDS_H_
#define ZEUS_SRC_BSO_RECORDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "zeus/bso/models.h"

namespace zeus::bso {

enum class TrialStatus { kDispatched, kSucceeded, kFailed };

// "Dispatched", "Succeeded", "Failed": the bso_trial.status values.
inline std::string_view TrialStatusName(TrialStatus status) {
  switch (status) {
    case TrialStatus::kDispatched: return "Dispatched";
    case TrialStatus::kSucceeded: return "Succeeded";
    case TrialStatus::kFailed: return "Failed";
  }
  return "Failed";
}

// A stored trial, for inspection and tests.
struct TrialRecord {
  std::string job_id;
  int trial_number = 0;
  int batch_size = 0;
  TrialType type = TrialType::kExploration;
  TrialStatus status = TrialStatus::kDispatched;
  std::int64_t start_us = 0;  // wall clock, microseconds since the Unix epoch
  std::optional<std::int64_t> end_us;
  // The last report that said "keep training" (the client was alive then).
  std::optional<std::int64_t> last_report_us;
  std::optional<double> time;
  std::optional<double> energy;
  std::optional<bool> converged;
};

// A stored Thompson-sampling arm: its posterior, and Welford's moments of
// its rewards (count = num_observations; see arm_statistics.h).
struct ArmRecord {
  int batch_size = 0;
  double mean = 0;
  double precision = 0;
  int num_observations = 0;
  double reward_mean = 0;
  double reward_m2 = 0;
};

// A job's mutable state.
struct JobState {
  bool bandit_stage = false;  // false: pruning
  std::optional<double> min_cost;
  int min_cost_batch_size = 0;
  int next_trial_number = 1;
};

}  // namespace zeus::bso

#endif  // ZEUS_SRC_BSO_RECORDS_H_
