// Copyright 2026 The Zeus C++ Authors.
//
// zeusd's subcommands. Each registers itself on the app and, when it runs,
// stores its exit code (zeus::ExitCodeFor) in *exit_code.

#ifndef ZEUS_APPS_ZEUSD_COMMANDS_H_
#define ZEUS_APPS_ZEUSD_COMMANDS_H_

#include <CLI/CLI.hpp>

#include "zeus/base/error.h"

namespace zeus::zeusd_cli {

// A command's failure: prints `error: <message>` on stderr and returns the
// exit code of the error's code (ExitCodeFor).
int ExitWith(const Error& error);

// `zeusd serve`: the daemon.
void RegisterServeCommand(CLI::App& app, int* exit_code);
// `zeusd token issue`: prints a signed token.
void RegisterTokenCommand(CLI::App& app, int* exit_code);

}  // namespace zeus::zeusd_cli

#endif  // ZEUS_APPS_ZEUSD_COMMANDS_H_
