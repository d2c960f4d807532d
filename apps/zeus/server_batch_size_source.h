// Copyright 2026 The Zeus C++ Authors.
//
// `zeus simulate --via-server URL`: the simulator's batch-size decisions made
// by a live batch-size service instead of the in-process optimizer.

#ifndef ZEUS_APPS_ZEUS_SERVER_BATCH_SIZE_SOURCE_H_
#define ZEUS_APPS_ZEUS_SERVER_BATCH_SIZE_SOURCE_H_

#include <string>

#include "zeus/simulator/simulator.h"

namespace zeus::cli {

// Each simulated job is registered with the service as a new job (prefix
// "zeus-simulate") whose policy settings mirror the simulator's: eta, the
// trace's GPU max power, mab_seed = the seed, the bandit options, target
// metric 1 (a run reports 1 if it reached the target, else 0) and no
// server-side early stopping (beta_knob null: the simulator applies its own
// epoch budget and reports each run as finished). The job is deleted when the
// source is destroyed.
simulator::BatchSizeSourceFactory ServerBatchSizeSource(std::string server_url);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_SERVER_BATCH_SIZE_SOURCE_H_
