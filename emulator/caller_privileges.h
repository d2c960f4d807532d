// Copyright 2026 The Zeus C++ Authors.
//
// Whether the calling process may change GPU settings, as the NVIDIA driver
// decides it: effective uid 0, or CAP_SYS_ADMIN in the effective capability
// set. The emulator's setters (power limit, persistence mode, locked clocks)
// answer NVML_ERROR_NO_PERMISSION otherwise; reads stay open to everyone.

#ifndef ZEUS_EMULATOR_CALLER_PRIVILEGES_H_
#define ZEUS_EMULATOR_CALLER_PRIVILEGES_H_

namespace zeus::emulator {

// Asked afresh on every call (a process may drop privileges at any time).
bool CallerMayChangeGpuSettings();

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_CALLER_PRIVILEGES_H_
