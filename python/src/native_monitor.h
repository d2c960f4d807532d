// Copyright 2026 The Zeus C++ Authors.
//
// The native state behind one zeus.monitor.ZeusMonitor: the devices it opened,
// the clock its readings are on, and the zeus::monitor::Monitor over them.
// Python holds it as zeus._native.monitor.Monitor (a pybind11 class with
// std::shared_ptr<NativeMonitor> as its holder); the power-limit and
// batch-size optimizers' bindings take that same shared_ptr and keep it, so
// the devices and the Monitor outlive every optimizer built over them.
//
// Fork: a forked child does not inherit the threads of a native object (a
// PowerMonitor's samplers, RAPL's wrap guard), so every object registered with
// RegisterForForkCheck is marked `forked` in the child (by an
// os.register_at_fork hook) and kept alive there for good (its destructor
// would join threads that exist only in the parent). Its bindings call
// CheckNotForked first, which raises RuntimeError in the child.
//
// Indices: `gpus` is opened with CUDA_VISIBLE_DEVICES applied, so a GpuSet
// index is the framework's (torch's) GPU index; monitor->gpu_indices() are
// the ZeusMonitor's gpu_indices.

#ifndef ZEUS_PYTHON_SRC_NATIVE_MONITOR_H_
#define ZEUS_PYTHON_SRC_NATIVE_MONITOR_H_

#include <atomic>
#include <memory>

#include "zeus/base/clock.h"
#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/device/soc.h"
#include "zeus/monitor/monitor.h"

namespace zeus::python {

// A native object that a forked child must not use (see above).
struct ForkAware {
  virtual ~ForkAware() = default;
  // Set in a forked child; never cleared.
  std::atomic<bool> forked{false};
};

// Needs the GIL. Marks `object` forked in every child forked after this call
// and keeps it alive there.
void RegisterForForkCheck(const std::shared_ptr<ForkAware>& object);
// Raises RuntimeError (needs the GIL) when `object` was inherited through
// fork; `what` names the Python class, e.g. "ZeusMonitor".
void CheckNotForked(const ForkAware& object, const char* what);

struct NativeMonitor : ForkAware {
  // Never null; empty when there are no GPUs (no driver, CUDA_VISIBLE_DEVICES="").
  std::unique_ptr<device::GpuSet> gpus;
  // Null when no CPU is measured.
  std::unique_ptr<device::CpuSet> cpus;
  // The clock of the readings; must outlive `monitor`. Declared before it.
  const Clock* clock = nullptr;
  // The SoC (NVIDIA Jetson) measured in every window, on `clock`; null when
  // there is none (OpenSoc's kUnavailable: not a Jetson, as Zeus's get_soc()).
  std::unique_ptr<device::Soc> soc;
  std::unique_ptr<monitor::Monitor> monitor;

  ~NativeMonitor() { monitor.reset(); }  // the Monitor goes before the devices it reads
};

}  // namespace zeus::python

#endif  // ZEUS_PYTHON_SRC_NATIVE_MONITOR_H_
