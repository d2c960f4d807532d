// Copyright 2026 The Zeus C++ Authors.
//
// The native state behind one zeus.monitor.ZeusMonitor: the devices it opened,
// the clock its readings are on, and the zeus::monitor::Monitor over them.
// Python holds it as zeus._native.monitor.Monitor (a pybind11 class with
// std::shared_ptr<NativeMonitor> as its holder); the power-limit and
// batch-size optimizers' bindings take that same shared_ptr and keep it, so
// the devices and the Monitor outlive every optimizer built over them.
//
// Indices: `gpus` is opened with CUDA_VISIBLE_DEVICES applied, so a GpuSet
// index is the framework's (torch's) GPU index; monitor->gpu_indices() are
// the ZeusMonitor's gpu_indices.

#ifndef ZEUS_PYTHON_SRC_NATIVE_MONITOR_H_
#define ZEUS_PYTHON_SRC_NATIVE_MONITOR_H_

#include <memory>

#include "zeus/base/clock.h"
#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/monitor/monitor.h"

namespace zeus::python {

struct NativeMonitor {
  // Never null; empty when there are no GPUs (no driver, CUDA_VISIBLE_DEVICES="").
  std::unique_ptr<device::GpuSet> gpus;
  // Null when no CPU is measured.
  std::unique_ptr<device::CpuSet> cpus;
  // The clock of the readings; must outlive `monitor`. Declared before it.
  const Clock* clock = nullptr;
  std::unique_ptr<monitor::Monitor> monitor;

  ~NativeMonitor() { monitor.reset(); }  // the Monitor goes before the devices it reads
};

}  // namespace zeus::python

#endif  // ZEUS_PYTHON_SRC_NATIVE_MONITOR_H_
