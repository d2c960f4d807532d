// Copyright 2026 The Zeus C++ Authors.
//
// `zeus what-if PROFILE`: what the power-limit optimizer would save, from a
// saved profile file (the optimizer's profile_path): for each selector the
// limit it would choose and the energy and time saved per epoch and over the
// run (zeus/runtime/power_limit_what_if.h), as text, --json, and --svg (energy
// against time per limit, the Pareto front marked).

#ifndef ZEUS_APPS_ZEUS_WHAT_IF_COMMAND_H_
#define ZEUS_APPS_ZEUS_WHAT_IF_COMMAND_H_

#include <string>

#include <CLI/CLI.hpp>

#include "zeus/runtime/power_limit_what_if.h"

namespace zeus::cli {

// Registers the `what-if` subcommand on `app`. When it runs, it sets *exit_code.
void RegisterWhatIfCommand(CLI::App& app, int* exit_code);

// The chart: per-step energy (J) against per-step time (s), every profiled
// limit labelled, the Pareto front joined, the baseline and each selector's
// choice marked.
std::string WhatIfSvg(const runtime::PowerLimitWhatIfReport& report, const std::string& title);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_WHAT_IF_COMMAND_H_
