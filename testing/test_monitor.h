// Copyright 2026 The Zeus C++ Authors.
//
// A zeus::monitor::Monitor over test GPUs (FakeGpu) and a test clock.

#ifndef ZEUS_TESTING_TEST_MONITOR_H_
#define ZEUS_TESTING_TEST_MONITOR_H_

#include <memory>

#include "zeus/base/clock.h"
#include "zeus/device/gpu.h"
#include "zeus/monitor/monitor.h"

namespace zeus::testing {

// A Monitor of every GPU in `gpus` (no CPUs) on `clock`. Aborts the test
// binary if it cannot be created. REQUIRES: gpus and clock outlive it.
std::unique_ptr<monitor::Monitor> MakeTestMonitor(const device::GpuSet* gpus, const Clock* clock);

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_TEST_MONITOR_H_
