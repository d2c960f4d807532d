// Copyright 2026 The Zeus C++ Authors.
//
// The GPU writes zeusd offers, as values: what a request asks for, which a
// GPU (or a configured command override) carries out.

#ifndef ZEUS_SRC_ZEUSD_GPU_OPS_H_
#define ZEUS_SRC_ZEUSD_GPU_OPS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "zeus/base/error.h"
#include "zeus/device/gpu.h"

namespace zeus::zeusd {

enum class GpuOp : std::uint8_t {
  kSetPowerLimit,
  kSetPersistenceMode,
  kSetGpuLockedClocks,
  kResetGpuLockedClocks,
  kSetMemLockedClocks,
  kResetMemLockedClocks,
  kResetLockedClocks,
};
inline constexpr GpuOp kAllGpuOps[] = {GpuOp::kSetPowerLimit,        GpuOp::kSetPersistenceMode,
                                       GpuOp::kSetGpuLockedClocks,   GpuOp::kResetGpuLockedClocks,
                                       GpuOp::kSetMemLockedClocks,   GpuOp::kResetMemLockedClocks,
                                       GpuOp::kResetLockedClocks};

// The route and override-table name: "set_power_limit", ...
std::string_view GpuOpName(GpuOp op);
std::optional<GpuOp> GpuOpFromName(std::string_view name);

// The operation's parameters; those it does not use are ignored.
struct GpuOpArgs {
  std::uint32_t power_limit_mw = 0;
  bool enabled = false;
  unsigned int min_clock_mhz = 0;
  unsigned int max_clock_mhz = 0;
};

// Carries out `op` on `gpu` through the driver. kResetLockedClocks resets
// both domains, attempting both, and reports the first failure.
Status ApplyGpuOp(device::Gpu& gpu, GpuOp op, const GpuOpArgs& args);

// Carries out a GPU write for GPU `gpu_id` (the daemon's index): the driver,
// or a command override.
using GpuOpRunner = std::function<Status(device::Gpu& gpu, std::size_t gpu_id, GpuOp op, const GpuOpArgs& args)>;

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_GPU_OPS_H_
