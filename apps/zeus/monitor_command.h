// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor -- CMD ARGS...`: measure a command's time and energy.
// `zeus monitor power`: print live power per device until Ctrl-C.

#ifndef ZEUS_APPS_ZEUS_MONITOR_COMMAND_H_
#define ZEUS_APPS_ZEUS_MONITOR_COMMAND_H_

#include <CLI/CLI.hpp>

namespace zeus::cli {

// Registers `monitor` (and `monitor power`) on `app`; sets *exit_code.
void RegisterMonitorCommand(CLI::App& app, int* exit_code);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_MONITOR_COMMAND_H_
