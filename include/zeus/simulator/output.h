// Copyright 2026 The Zeus C++ Authors.
//
// Text forms of simulation results that tools and tests share. Numbers are
// written in the shortest form that reads back to the same double, so files
// are exact and byte-identical for identical results.
//
// Pure functions; thread-safe.

#ifndef ZEUS_SIMULATOR_OUTPUT_H_
#define ZEUS_SIMULATOR_OUTPUT_H_

#include <string>

#include "zeus/base/error.h"
#include "zeus/simulator/simulator.h"

namespace zeus::simulator {

// The tries CSV: header `recurrence,try,batch_size,power_limit,epochs,energy,
// time,cost,reached` (energy in J, time in s, power limit in W, reached
// true/false), then one row per try, in order.
std::string TriesCsv(const SimulationResult& result);

// The trace directory to use: `flag` when non-empty, else $ZEUS_TRACE_DIR
// (neither checked here), else FindShippedTraceDir().
Result<std::string> ResolveTraceDir(const std::string& flag);

// The Zeus NSDI '23 traces that zeus ships (data/traces/zeus-nsdi23/), first
// found holding summary_train.csv: <exe dir>/../share/zeus/traces/zeus-nsdi23
// (an installed zeus, the wheel's bundled zeus, the build tree); the install
// prefix's share/zeus/traces/zeus-nsdi23; the source tree's
// data/traces/zeus-nsdi23. Independent of the working directory. kNotFound
// listing the places and naming --trace-dir and ZEUS_TRACE_DIR otherwise.
Result<std::string> FindShippedTraceDir();

}  // namespace zeus::simulator

#endif  // ZEUS_SIMULATOR_OUTPUT_H_
