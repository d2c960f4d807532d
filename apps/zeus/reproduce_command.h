// Copyright 2026 The Zeus C++ Authors.
//
// `zeus reproduce`: the Zeus paper's trace-driven evaluation, every workload x
// GPU x seed simulated in parallel, summarised in a table and an HTML report.

#ifndef ZEUS_APPS_ZEUS_REPRODUCE_COMMAND_H_
#define ZEUS_APPS_ZEUS_REPRODUCE_COMMAND_H_

#include <CLI/CLI.hpp>

namespace zeus::cli {

// Registers the `reproduce` subcommand on `app`. When it runs, it sets *exit_code.
void RegisterReproduceCommand(CLI::App& app, int* exit_code);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_REPRODUCE_COMMAND_H_
