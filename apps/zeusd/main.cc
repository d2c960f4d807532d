// Copyright 2026 The Zeus C++ Authors.
//
// zeusd: the privileged daemon that changes GPU settings and reads RAPL on
// behalf of unprivileged processes, over HTTP on a Unix socket or TCP, with
// Zeus's zeusd API. Exit codes follow zeus::ExitCodeFor: 0 ok, 1 runtime
// failure, 2 usage error, 3 permission denied, 4 unavailable. Parse errors
// are one line naming the bad word (apps/zeus/cli_flags.h).

#include <string>

#include <CLI/CLI.hpp>

#include "apps/zeus/cli_flags.h"
#include "apps/zeusd/commands.h"
#include "zeus/base/version.h"

int main(int argc, char** argv) {
  CLI::App app{"zeusd: changes GPU settings and reads CPU energy for unprivileged processes"};
  app.set_version_flag("--version", std::string("zeusd ") + std::string(zeus::Version()));
  app.require_subcommand(1);
  app.footer("Run `zeusd COMMAND --help` for a command's options.");
  int exit_code = 0;
  zeus::zeusd_cli::RegisterServeCommand(app, &exit_code);
  zeus::zeusd_cli::RegisterTokenCommand(app, &exit_code);
  zeus::cli::RejectFlagValues(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return zeus::cli::HandleParseError(app, e);
  }
  return exit_code;
}
