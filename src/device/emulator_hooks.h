// Copyright 2026 The Zeus C++ Authors.
//
// The extra symbols Zeus's GPU emulators export beside a driver's C API
// (libzeus-nvml-emulator.so, libzeus-amdsmi-emulator.so; a real driver has
// none of them). The loaders use them to explain a failed init and to time
// readings on the emulated clock. Private to the device layer.

#ifndef ZEUS_DEVICE_EMULATOR_HOOKS_H_
#define ZEUS_DEVICE_EMULATOR_HOOKS_H_

#include <memory>
#include <string>

#include "zeus/base/clock.h"

namespace zeus::device {

// The emulator's clock (zeusEmulatorNowNs) in the dlopened library `handle`,
// or null when the library is not an emulator. Now() is the emulated time;
// SleepFor() waits until that time has moved `duration` or the same wall
// duration has passed, whichever is first (it never advances a manual clock).
// Valid while the library stays loaded.
std::unique_ptr<const Clock> OpenEmulatorClock(void* handle);

// The emulator's explanation of its last failed init (zeusEmulatorLastError),
// or "" for a real driver or when it has none.
std::string EmulatorLastError(void* handle);

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_EMULATOR_HOOKS_H_
