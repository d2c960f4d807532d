// Copyright 2026 The Zeus C++ Authors.
//
// `zeus simulate`: replay one recurring training job on the Zeus traces with
// the Zeus policy (or a baseline policy) and compare it with the Default and
// Oracle configurations.

#ifndef ZEUS_APPS_ZEUS_SIMULATE_COMMAND_H_
#define ZEUS_APPS_ZEUS_SIMULATE_COMMAND_H_

#include <CLI/CLI.hpp>

#include <string>

namespace zeus::cli {

// The most recurrences `zeus simulate --recurrences` accepts (README says it
// too). Each observation costs O(1) once an arm has more than
// optimizer::kExactFitMaxRewards rewards, so time grows linearly (about 2 us
// per recurrence); what grows is the output: 80 bytes kept per recurrence,
// one table line (or ~250 bytes of --json) printed, and with --output one
// kept try and one CSV row per try. 10^7 recurrences print about a gigabyte
// of table. The traces' defaults are 2 x |batch sizes| x |power limits|, a
// few hundred.
inline constexpr int kMaxRecurrences = 10'000'000;

// Where the trace directory came from, for messages: "--trace-dir",
// "$ZEUS_TRACE_DIR" or "the default trace directory" (`flag` is the
// --trace-dir value, empty when not given).
std::string TraceDirSource(const std::string& flag);

// Registers the `simulate` subcommand on `app`. When it runs, it sets *exit_code.
void RegisterSimulateCommand(CLI::App& app, int* exit_code);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_SIMULATE_COMMAND_H_
