// Copyright 2026 The Zeus C++ Authors.
//
// `zeus bso-server`: the batch-size optimizer service.

#ifndef ZEUS_APPS_ZEUS_BSO_SERVER_COMMAND_H_
#define ZEUS_APPS_ZEUS_BSO_SERVER_COMMAND_H_

#include <CLI/CLI.hpp>

namespace zeus::cli {

// Registers the `bso-server` subcommand on `app`. When it runs, it sets
// *exit_code.
void RegisterBsoServerCommand(CLI::App& app, int* exit_code);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_BSO_SERVER_COMMAND_H_
