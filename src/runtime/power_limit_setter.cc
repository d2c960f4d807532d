// Copyright 2026 The Zeus C++ Authors.

#include "zeus/runtime/power_limit_setter.h"

namespace zeus::runtime {

Status NvmlPowerLimitSetter::SetPowerLimitMw(device::Gpu& gpu, std::uint32_t limit_mw) {
  return gpu.SetPowerLimitMw(limit_mw);
}

}  // namespace zeus::runtime
