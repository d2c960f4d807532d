// Copyright 2026 The Zeus C++ Authors.
//
// `zeus exporter`: serves the host's GPU and CPU metrics to Prometheus
// (zeus::exporter::Collector behind prometheus-cpp's civetweb Exposer).

#ifndef ZEUS_APPS_ZEUS_EXPORTER_COMMAND_H_
#define ZEUS_APPS_ZEUS_EXPORTER_COMMAND_H_

#include <CLI/CLI.hpp>

namespace zeus::cli {

void RegisterExporterCommand(CLI::App& app, int* exit_code);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_EXPORTER_COMMAND_H_
