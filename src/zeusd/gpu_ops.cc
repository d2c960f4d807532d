// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/gpu_ops.h"

namespace zeus::zeusd {

std::string_view GpuOpName(GpuOp op) {
  switch (op) {
    case GpuOp::kSetPowerLimit: return "set_power_limit";
    case GpuOp::kSetPersistenceMode: return "set_persistence_mode";
    case GpuOp::kSetGpuLockedClocks: return "set_gpu_locked_clocks";
    case GpuOp::kResetGpuLockedClocks: return "reset_gpu_locked_clocks";
    case GpuOp::kSetMemLockedClocks: return "set_mem_locked_clocks";
    case GpuOp::kResetMemLockedClocks: return "reset_mem_locked_clocks";
    case GpuOp::kResetLockedClocks: return "reset_locked_clocks";
  }
  return "unknown";
}

std::optional<GpuOp> GpuOpFromName(std::string_view name) {
  for (GpuOp op : kAllGpuOps) {
    if (GpuOpName(op) == name) return op;
  }
  return std::nullopt;
}

Status ApplyGpuOp(device::Gpu& gpu, GpuOp op, const GpuOpArgs& args) {
  switch (op) {
    case GpuOp::kSetPowerLimit: return gpu.SetPowerLimitMw(args.power_limit_mw);
    case GpuOp::kSetPersistenceMode: return gpu.SetPersistenceMode(args.enabled);
    case GpuOp::kSetGpuLockedClocks: return gpu.SetGpuLockedClocks(args.min_clock_mhz, args.max_clock_mhz);
    case GpuOp::kResetGpuLockedClocks: return gpu.ResetGpuLockedClocks();
    case GpuOp::kSetMemLockedClocks: return gpu.SetMemoryLockedClocks(args.min_clock_mhz, args.max_clock_mhz);
    case GpuOp::kResetMemLockedClocks: return gpu.ResetMemoryLockedClocks();
    case GpuOp::kResetLockedClocks: {
      Status gpu_clocks = gpu.ResetGpuLockedClocks();
      Status mem_clocks = gpu.ResetMemoryLockedClocks();
      return gpu_clocks ? mem_clocks : gpu_clocks;
    }
  }
  return Fail(ErrorCode::kInternal, "unknown GPU operation");
}

}  // namespace zeus::zeusd
