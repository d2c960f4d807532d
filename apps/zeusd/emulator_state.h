// Copyright 2026 The Zeus C++ Authors.
//
// zeusd on the Zeus emulators (libzeus-nvml-emulator.so,
// libzeus-amdsmi-emulator.so): the emulated GPUs live in a state file, and by
// default each user has their own (README "Shared state"). A zeusd running as
// root and a client running as a user then emulate two different sets of
// GPUs, silently: a limit set through zeusd never reaches the GPUs the client
// reads. zeusd says so at start.

#ifndef ZEUS_APPS_ZEUSD_EMULATOR_STATE_H_
#define ZEUS_APPS_ZEUSD_EMULATOR_STATE_H_

#include <optional>
#include <string>

#include "zeus/device/gpu.h"

namespace zeus::zeusd_cli {

// The warning to print when `gpus` are emulated (a driver clock: only the
// emulators have one) and the emulator's state file is private to this
// process's user: not writable by other users, as a scenario's
// "state_file_shared": true makes it (0666). The state file is what
// zeusEmulatorStatePath answers in the library at `library_path`, which must
// already be loaded (dlopen RTLD_NOLOAD: nothing is loaded here). nullopt for
// real GPUs, a shared state file, or a library without that function. The
// text names the state file, this user's uid and the fix; one line, no
// trailing newline.
std::optional<std::string> PrivateEmulatorStateWarning(const device::GpuSet& gpus, const std::string& library_path);

}  // namespace zeus::zeusd_cli

#endif  // ZEUS_APPS_ZEUSD_EMULATOR_STATE_H_
