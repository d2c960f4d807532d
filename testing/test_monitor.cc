// Copyright 2026 The Zeus C++ Authors.

#include "testing/test_monitor.h"

#include <cstdlib>

namespace zeus::testing {

// GCC 12 with sanitizers warns that the disengaged std::optional<vector> in
// a moved MonitorOptions "may be used uninitialized" (a false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
std::unique_ptr<monitor::Monitor> MakeTestMonitor(const device::GpuSet* gpus, const Clock* clock) {
  monitor::MonitorOptions options;
  options.clock = clock;
  Result<std::unique_ptr<monitor::Monitor>> monitor = monitor::Monitor::Create(gpus, nullptr, std::move(options));
  if (!monitor) std::abort();
  return std::move(*monitor);
}
#pragma GCC diagnostic pop

}  // namespace zeus::testing
