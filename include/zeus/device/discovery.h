// Copyright 2026 The Zeus C++ Authors.
//
// Opening real (or emulated) devices. Only composition roots (the CLI, service
// mains, bindings) include this header; library code receives a GpuSet or
// CpuSet from them.

#ifndef ZEUS_DEVICE_DISCOVERY_H_
#define ZEUS_DEVICE_DISCOVERY_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"

namespace zeus::device {

struct GpuOptions {
  // The NVML library to dlopen. Unset: $ZEUS_NVML_LIBRARY, else the system's
  // libnvidia-ml.so.1.
  std::optional<std::string> nvml_library;
  // Which GPUs, in which order. Unset: $CUDA_VISIBLE_DEVICES; when that is
  // unset too, every GPU in NVML order. Entries are NVML indices or GPU UUIDs
  // (a unique prefix suffices, as in CUDA). "-1" alone is no GPU, and a
  // trailing -1 ends the list, as in CUDA; entries after a -1 are an error.
  // MIG UUIDs are kNotSupported.
  std::optional<std::string> cuda_visible_devices;
  // Whether a GPU in MIG mode may be opened (for read-only listing). Measuring
  // such a GPU measures the whole device, not the caller's MIG instance.
  bool allow_mig = false;
};

// Loads NVML and opens the visible GPUs.
// Errors:
//   kUnavailable - no library at the default path ("no NVIDIA driver found"),
//                  or NVML failed to initialise;
//   kNotFound    - the explicitly named library does not exist or cannot load;
//   kInvalidArgument - a malformed CUDA_VISIBLE_DEVICES;
//   kNotSupported - a MIG instance or MIG-mode GPU (unless allow_mig).
Result<std::unique_ptr<GpuSet>> OpenGpus(const GpuOptions& options = {});

struct CpuOptions {
  // The powercap root. Unset: $ZEUS_POWERCAP_ROOT, else /sys/class/powercap.
  std::optional<std::string> powercap_root;
  // The highest power a RAPL zone is assumed to draw, which bounds how far
  // apart two reads may be before a wrap can be missed.
  double assumed_max_zone_power_w = 1000.0;
  // Run a background thread that reads every counter at half the safe read
  // interval, so wraps are never missed however rarely the caller reads.
  bool wrap_guard = true;
  // Time source for the safe-interval checks and the guard thread. Must
  // outlive the CpuSet. Null: SteadyClock().
  const Clock* clock = nullptr;
};

// Opens the RAPL packages under the powercap root. No RAPL at all is an empty
// set, not an error; a root that cannot be listed is. Per-package failures
// are data: a package that cannot be opened (an unreadable name, a missing or
// non-numeric max_energy_range_uj, also of its DRAM subzone) or whose counter
// cannot be read (root-only since Linux 5.10, garbage content) is still
// listed, and its TotalEnergy() returns the error naming the file and the
// fix; the other packages are served as usual.
Result<std::unique_ptr<CpuSet>> OpenCpus(const CpuOptions& options = {});

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_DISCOVERY_H_
