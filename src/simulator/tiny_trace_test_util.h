// Copyright 2026 The Zeus C++ Authors.
//
// Hand-written traces for the simulator's tests: the two CSV headers and a
// JobTrace built from rows given as text. Test-only.

#ifndef ZEUS_SIMULATOR_TINY_TRACE_TEST_UTIL_H_
#define ZEUS_SIMULATOR_TINY_TRACE_TEST_UTIL_H_

#include <string>

#include "testing/result.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/trace.h"

namespace zeus::simulator::tiny_trace {

inline constexpr char kTrainHeader[] =
    "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n";
inline constexpr char kPowerHeader[] =
    "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n";

// The job ("w", "n", "sgd", target 0.9) of `train_rows` and `power_rows`
// (CSV rows without their headers); a bad row fails the test.
inline JobTrace Build(const std::string& train_rows, const std::string& power_rows, int default_bs,
                      int max_epochs = 5) {
  const TrainTrace t = zeus::testing::Unwrap(ParseTrainTrace(kTrainHeader + train_rows, "train.csv"));
  const PowerTrace p = zeus::testing::Unwrap(ParsePowerTrace(kPowerHeader + power_rows, "power.csv", "g"));
  return zeus::testing::Unwrap(BuildJobTrace(t, p, {"w", "n", "sgd", 0.9, max_epochs, default_bs}));
}

}  // namespace zeus::simulator::tiny_trace

#endif  // ZEUS_SIMULATOR_TINY_TRACE_TEST_UTIL_H_
