// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor -- CMD ARGS...`: measure a command's time and energy.
// `zeus monitor power`: print live power per device until Ctrl-C.

#ifndef ZEUS_APPS_ZEUS_MONITOR_COMMAND_H_
#define ZEUS_APPS_ZEUS_MONITOR_COMMAND_H_

#include <functional>

#include <CLI/CLI.hpp>

namespace zeus::cli {

// Points where a test runs code of its own inside `zeus monitor`
// (tests/integration/monitor_test_driver.cc); `zeus` itself has none.
struct MonitorHooks {
  // Runs with the devices open and sampling started, just before zeus looks
  // for a signal that cancels the command (one that arrived since the
  // signals were held) and starts it.
  std::function<void()> before_command;
};

// Registers `monitor` (and `monitor power`) on `app`; sets *exit_code.
void RegisterMonitorCommand(CLI::App& app, int* exit_code, MonitorHooks hooks = {});

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_MONITOR_COMMAND_H_
