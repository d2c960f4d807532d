// Copyright 2026 The Zeus C++ Authors.
//
// zeus::runtime::PowerLimitSetter: how an optimizer changes a GPU's power
// limit. Changing a limit needs root or CAP_SYS_ADMIN on real hardware, so
// the way it is done is a seam: NvmlPowerLimitSetter asks NVML directly
// through the Gpu seam; ZeusdPowerLimitSetter asks the privileged daemon
// (zeusd), without touching the optimizer.
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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/device/gpu.h"
#include "zeus/zeusd_client/client.h"

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

// Sets limits through zeusd (POST /gpu/set_power_limit?block=true). Our GPUs
// are matched to the daemon's ids by PCI address (the daemon sees every GPU;
// CUDA_VISIBLE_DEVICES does not apply to it). Thread-safe.
class ZeusdPowerLimitSetter final : public PowerLimitSetter {
 public:
  // Connects and checks that the daemon can do it: fails when the daemon is
  // unreachable (kUnavailable), a token is missing or rejected
  // (kPermissionDenied), the token lacks the gpu-control scope or the group
  // is not enabled (kFailedPrecondition), or a GPU of `gpus` at `indices` is
  // not the daemon's (kNotFound). Each message names the daemon and what to do.
  static Result<std::unique_ptr<ZeusdPowerLimitSetter>> Create(zeusd::ZeusdConfig config,
                                                                const device::GpuSet& gpus,
                                                                std::span<const std::size_t> indices);
  // Sets the limit through the daemon. On emulated GPUs (a GpuSet with a
  // driver clock) it then reads the limit back from `gpu`: one that differs
  // means zeusd emulates other GPUs than this process (each user has their own
  // emulator state unless the scenario shares it), and one warning per
  // daemon (LogOnce, component "runtime") says so; the status is still OK.
  Status SetPowerLimitMw(device::Gpu& gpu, std::uint32_t limit_mw) override;
  std::string_view name() const override { return name_; }

 private:
  ZeusdPowerLimitSetter() = default;
  std::unique_ptr<zeusd::ZeusdClient> client_;
  std::vector<std::pair<const device::Gpu*, int>> daemon_ids_;  // our Gpu -> the daemon's id
  std::string name_;
  bool emulated_ = false;  // the GPUs are the emulator's: check that zeusd's limit reaches them
};

// The setter an optimizer uses when given none: ZeusdPowerLimitSetter when
// ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT is set (its errors returned, never a
// silent fallback), else NvmlPowerLimitSetter.
Result<std::unique_ptr<PowerLimitSetter>> MakeDefaultPowerLimitSetter(const device::GpuSet& gpus,
                                                                      std::span<const std::size_t> indices);

}  // namespace zeus::runtime

#endif  // ZEUS_RUNTIME_POWER_LIMIT_SETTER_H_
