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

// The trace directory to use: `flag` when non-empty, else $ZEUS_TRACE_DIR,
// else ../shared/traces/zeus-nsdi23 when it exists (a run from the project
// root). Fails with kNotFound, saying how to name one, otherwise.
Result<std::string> ResolveTraceDir(const std::string& flag);

}  // namespace zeus::simulator

#endif  // ZEUS_SIMULATOR_OUTPUT_H_
