// Copyright 2026 The Zeus C++ Authors.
//
// `zeus top`: a live view of each GPU's power and the processes using it
// (zeus::monitor::ProcessEnergyTracker), refreshed in place in a terminal,
// or printed frame after frame (--plain, or stdout not a terminal), or one
// JSON object per refresh (--json). Frames are made by top_render.h.

#ifndef ZEUS_APPS_ZEUS_TOP_COMMAND_H_
#define ZEUS_APPS_ZEUS_TOP_COMMAND_H_

#include <CLI/CLI.hpp>

namespace zeus::cli {

// Registers the `top` subcommand on `app`. When it runs, it sets *exit_code.
void RegisterTopCommand(CLI::App& app, int* exit_code);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_TOP_COMMAND_H_
