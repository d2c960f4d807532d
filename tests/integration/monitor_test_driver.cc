// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor` for the integration tests that deliver a signal at a chosen
// point (cli_monitor_test.cc, cli_monitor_tree_test.cc): the real command,
// from the library `zeus` links (RegisterMonitorCommand; the signals held
// before main by monitor_child.cc's constructor), with two holds that `zeus`
// does not have. Test-only; never installed.
//
//   ZEUS_MONITOR_TEST_EARLY_HOLD_FILE=F  at the start of main (the signals
//                                        held, the command line not parsed)
//   ZEUS_MONITOR_TEST_HOLD_FILE=F        just before the command starts (the
//                                        devices open, sampling started:
//                                        MonitorHooks::before_command)
//
// At each, the driver creates F and waits until the test removes it (at most
// 60 s), so the test can signal it there. Usage, as zeus's:
// zeus_monitor_test_driver monitor [FLAGS] -- CMD ARGS...

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <utility>

#include <CLI/CLI.hpp>

#include "apps/zeus/cli_flags.h"
#include "apps/zeus/monitor_command.h"
#include "testing/wait.h"

namespace {

// Creates the file named by `env_name` and returns once it is gone again.
void HoldWhileFileExists(const char* env_name) {
  const char* path = std::getenv(env_name);
  if (path == nullptr || *path == '\0') return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ::close(fd);
  zeus::testing::WaitUntil([path] {
    struct stat st {};
    return ::stat(path, &st) != 0;
  });
}

}  // namespace

int main(int argc, char** argv) {
  HoldWhileFileExists("ZEUS_MONITOR_TEST_EARLY_HOLD_FILE");
  CLI::App app{"zeus monitor with test holds"};
  app.require_subcommand(1);
  int exit_code = 0;
  zeus::cli::MonitorHooks hooks;
  hooks.before_command = [] { HoldWhileFileExists("ZEUS_MONITOR_TEST_HOLD_FILE"); };
  zeus::cli::RegisterMonitorCommand(app, &exit_code, std::move(hooks));
  zeus::cli::RejectFlagValues(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return zeus::cli::HandleParseError(app, e);
  }
  return exit_code;
}
