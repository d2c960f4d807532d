// Copyright 2026 The Zeus C++ Authors.
//
// zeus::runtime::PowerLimitSetter: how an optimizer changes a GPU's power
// limit. Changing a limit needs root or CAP_SYS_ADMIN on real hardware, so
// the way it is done is a seam: NvmlPowerLimitSetter (here) asks NVML
// directly through the Gpu seam; a setter that asks a privileged daemon
// (zeusd) can replace it without touching the optimizer.
//
// Reading limits needs no privilege and stays on zeus::device::Gpu.
//
// Contract for every implementation:
//   * SetPowerLimitMw sets `gpu`'s limit to `limit_mw` (milliwatts) or fails:
//       kPermissionDenied - the caller may not change limits (the message
//                           says so);
//       kInvalidArgument  - the driver rejected the value;
//       kDeviceLost, kUnavailable, ... - as the device layer reports them.
//   * It may be called from any thread, including the optimizer's
//     exit-restore thread (signals), concurrently for different GPUs.

#ifndef ZEUS_RUNTIME_POWER_LIMIT_SETTER_H_
#define ZEUS_RUNTIME_POWER_LIMIT_SETTER_H_

#include <cstdint>
#include <string_view>

#include "zeus/base/error.h"
#include "zeus/device/gpu.h"

namespace zeus::runtime {

class PowerLimitSetter {
 public:
  virtual ~PowerLimitSetter() = default;
  virtual Status SetPowerLimitMw(device::Gpu& gpu, std::uint32_t limit_mw) = 0;
  // For messages, e.g. "NVML (in this process)".
  virtual std::string_view name() const = 0;
};

// Sets limits through NVML in this process (Gpu::SetPowerLimitMw). Needs
// root or CAP_SYS_ADMIN on real GPUs. Stateless; thread-safe.
class NvmlPowerLimitSetter final : public PowerLimitSetter {
 public:
  Status SetPowerLimitMw(device::Gpu& gpu, std::uint32_t limit_mw) override;
  std::string_view name() const override { return "NVML (in this process)"; }
};

}  // namespace zeus::runtime

#endif  // ZEUS_RUNTIME_POWER_LIMIT_SETTER_H_
