// Copyright 2026 The Zeus C++ Authors.
//
// The `zeus` command line. Exit codes follow zeus::ExitCodeFor: 0 ok,
// 1 runtime failure, 2 usage error, 3 permission denied, 4 unavailable,
// 5 not supported. Every parse error is one line, `error: ...`, naming the
// bad word (apps/zeus/cli_flags.h).

#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "apps/zeus/cli_flags.h"
#include "apps/zeus/info_command.h"
#include "apps/zeus/monitor_command.h"
#include "apps/zeus/reproduce_command.h"
#include "apps/zeus/simulate_command.h"
#include "apps/zeus/top_command.h"
#include "apps/zeus/what_if_command.h"
#include "zeus/base/error.h"
#include "zeus/base/version.h"

#if ZEUS_HAVE_BSO_SERVER
#include "apps/zeus/bso_server_command.h"
#endif
#if ZEUS_HAVE_EXPORTER
#include "apps/zeus/exporter_command.h"
#endif

namespace {

// A command of a component this build leaves out: it is listed, and running
// it says what is missing instead of "unknown command" (exit code 5).
[[maybe_unused]] void RegisterMissingCommand(CLI::App& app, const std::string& name, const std::string& what,
                            const std::string& component, int* exit_code) {
  CLI::App* cmd = app.add_subcommand(name, what + " (not in this build)");
  cmd->allow_extras();
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->callback([name, component, exit_code] {
    std::fprintf(stderr,
                 "error: zeus %s is not in this build of zeus (built without the %s component); install the "
                 "zeus Debian package, or build from source with -DZEUS_BUILD_%s=ON\n",
                 name.c_str(), component.c_str(), component.c_str());
    *exit_code = zeus::ExitCodeFor(zeus::ErrorCode::kNotSupported);
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zeus: measure and optimize the energy of GPU training"};
  app.set_version_flag("--version", std::string("zeus ") + std::string(zeus::Version()));
  app.require_subcommand(1);
  app.footer(
      "Environment:\n"
      "  ZEUS_NVML_LIBRARY     NVML library to load (default: the driver's libnvidia-ml.so.1)\n"
      "  ZEUS_EMULATOR_CONFIG  scenario JSON for libzeus-nvml-emulator.so\n"
      "  ZEUS_POWERCAP_ROOT    powercap root for RAPL (default: /sys/class/powercap)\n"
      "  CUDA_VISIBLE_DEVICES  which GPUs, in which order (indices or UUIDs)\n"
      "  ZEUS_BSO_*            bso-server settings (see `zeus bso-server --help`)\n"
      "\nRun `zeus COMMAND --help` for a command's options.");

  int exit_code = 0;
  zeus::cli::RegisterInfoCommand(app, &exit_code);
  zeus::cli::RegisterSimulateCommand(app, &exit_code);
  zeus::cli::RegisterReproduceCommand(app, &exit_code);
  zeus::cli::RegisterMonitorCommand(app, &exit_code);
#if ZEUS_HAVE_BSO_SERVER
  zeus::cli::RegisterBsoServerCommand(app, &exit_code);
#else
  RegisterMissingCommand(app, "bso-server", "Run the batch-size optimizer service", "BSO_SERVER", &exit_code);
#endif
#if ZEUS_HAVE_EXPORTER
  zeus::cli::RegisterExporterCommand(app, &exit_code);
#else
  RegisterMissingCommand(app, "exporter", "Serve Prometheus metrics of this host's devices", "EXPORTER", &exit_code);
#endif
  zeus::cli::RegisterWhatIfCommand(app, &exit_code);
  zeus::cli::RegisterTopCommand(app, &exit_code);

  zeus::cli::RejectFlagValues(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and exit 0; usage errors print one line and exit 2.
    return zeus::cli::HandleParseError(app, e);
  } catch (const std::exception& e) {
    // A command's bug or a third-party throw that escaped its wrapper (the
    // error convention wraps them where they are called): one line and the
    // code of kInternal, never an abort that loses what was already printed.
    std::fprintf(stderr, "error: internal error: %s; please report it\n", e.what());
    return zeus::ExitCodeFor(zeus::ErrorCode::kInternal);
  }
  return exit_code;
}
