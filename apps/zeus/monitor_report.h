// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor`'s report: one JSON object (--json) or a table, to stdout or
// -o FILE; the power timeline (--timeline, CSV or JSON) and plot (--plot,
// SVG) files; and the notes on stderr.

#ifndef ZEUS_APPS_ZEUS_MONITOR_REPORT_H_
#define ZEUS_APPS_ZEUS_MONITOR_REPORT_H_

#include <string>
#include <vector>

#include "apps/zeus/monitor_flags.h"
#include "apps/zeus/monitor_sampling.h"

namespace zeus::cli {

// The command as one line, words with blanks or quotes in single quotes.
std::string JoinCommand(const std::vector<std::string>& command);

// The report when `signal` arrived before the command started (it was not
// run). Returns the exit code, 128 + signal.
int ReportNotStarted(const MonitorFlags& flags, int signal);

// Reports a finished run and writes --timeline and --plot. Returns the exit
// code: the command's, or 1 in its place when it is 0 and a report or file
// could not be written.
int ReportRun(const MonitorFlags& flags, const Devices& devices, const CommandMeasurement& sampling,
              const MeasuredRun& run);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_MONITOR_REPORT_H_
