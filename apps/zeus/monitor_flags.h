// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor`'s flags and the checks made before anything runs: the
// --gpus lists, the flags that go together, and the output paths (-o,
// --timeline, --plot: writable, and no two naming one file).

#ifndef ZEUS_APPS_ZEUS_MONITOR_FLAGS_H_
#define ZEUS_APPS_ZEUS_MONITOR_FLAGS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "zeus/base/error.h"
#include "zeus/carbon/intensity.h"

namespace zeus::cli {

struct MonitorFlags {
  std::vector<std::string> gpus_text;  // each "0" or "0,1"
  std::vector<std::size_t> gpus;       // parsed from gpus_text
  bool gpus_given = false;
  bool cpus = false;
  long long interval_ms = 100;
  double kill_after_s = 10;
  bool json = false;
  std::string timeline;
  std::string plot;
  std::string output;
  std::string pushgateway;  // push the window as EnergyHistogram does
  std::string job;
  std::vector<std::string> zeusd_urls;  // each "URL" or "URL,URL"
  std::string zeusd_token_file;
  std::vector<std::string> command;
  // --per-process: the command's process tree's energy per GPU (monitor_processes.h).
  bool per_process = false;
  // --carbon ZONE: emissions from the offline table (zeus::carbon); the zone
  // and the table's source once CheckMonitorUsage found them.
  std::string carbon;
  std::optional<carbon::Zone> carbon_zone;
  std::string carbon_source;
  // `monitor power`
  long long live_interval_ms = 500;
  long long count = 0;
};

// The check of one --gpus word, "0" or "0,2": every comma-separated item a
// GPU index (a whole number, no sign, nothing past 2^32 - 1), in
// IntegerFlag's words ("--gpus must be at least 0 (got -1)"). Rewrites each
// item to plain decimal.
CLI::Validator GpuListFlag();

// "--gpus 0,2" -> flags.gpus = {0, 2}, flags.gpus_given; the words were
// checked by GpuListFlag.
void ParseGpuList(MonitorFlags& flags);

// `zeus monitor -- CMD`'s checks before the devices open (and ParseGpuList):
// a command is given, --zeusd-token-file comes with --zeusd, --pushgateway
// with --job, --carbon names a zone of the carbon-intensity table, and the output paths can be written and name different files
// (refused without truncating an existing file). kInvalidArgument naming the
// flags, or kPermissionDenied for a path that cannot be written for it.
Status CheckMonitorUsage(MonitorFlags& flags);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_MONITOR_FLAGS_H_
