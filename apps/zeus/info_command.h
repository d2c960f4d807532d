// Copyright 2026 The Zeus C++ Authors.
//
// `zeus info`: what this machine can measure and control.

#ifndef ZEUS_APPS_ZEUS_INFO_COMMAND_H_
#define ZEUS_APPS_ZEUS_INFO_COMMAND_H_

#include <CLI/CLI.hpp>

namespace zeus::cli {

// Registers the `info` subcommand on `app`. When it runs, it sets *exit_code.
void RegisterInfoCommand(CLI::App& app, int* exit_code);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_INFO_COMMAND_H_
