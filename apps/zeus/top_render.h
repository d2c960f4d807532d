// Copyright 2026 The Zeus C++ Authors.
//
// `zeus top`'s frames: what one refresh shows, as text lines or as one JSON
// object. Pure functions of a TopFrame (no devices, no clock, no terminal),
// so the layout is tested without a GPU.
//
// Text layout (every line cut to the width; width 0: no limit):
//
//   zeus top  elapsed 12.3 s  2 GPUs  refresh 1.0 s  (q quits)
//   GPU 0  NVIDIA A40  power 236.0 W  idle 99.0 W (trailing_minimum)  energy 2890.1 J
//       PID USER       COMMAND          JOB                   POWER W    ENERGY J
//      4242 alice      python           slurm 1234.0            120.3      1502.7
//           unattributed                                          0.0        12.0
//
// A GPU's processes are the tracker's live entries for it, sorted by current
// power (the process's share of the last interval over that interval's
// duration), then by energy, then by PID. Under them, when nonzero: the
// "unattributed" row (active energy no process's utilization explained) and
// the "other" row (shares of processes past the ledger's cap, and of ended
// processes whose entries were dropped). A GPU without processes says so; a
// GPU whose view carries an error shows it under its line.

#ifndef ZEUS_APPS_ZEUS_TOP_RENDER_H_
#define ZEUS_APPS_ZEUS_TOP_RENDER_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeus/monitor/attribution.h"
#include "zeus/monitor/process_energy.h"

namespace zeus::cli {

// Everything one refresh shows.
struct TopFrame {
  std::chrono::nanoseconds elapsed{0};   // since `zeus top` started
  std::chrono::nanoseconds refresh{0};   // the refresh interval (0: not shown)
  std::vector<std::string> gpu_names;    // by GPU index; "" where unknown
  std::vector<monitor::GpuIntervalView> intervals;  // ProcessEnergyTracker::LastIntervals()
  monitor::AttributionSnapshot snapshot;            // ProcessEnergyTracker::Snapshot()
  std::map<monitor::ProcessKey, monitor::ProcessLabels> labels;  // per process of the snapshot
};

// The frame as text lines (no line breaks, no escape codes), each at most
// `width` bytes (0: no limit); a cut never splits a UTF-8 character. Control
// characters in labels and names (a process may name itself with ESC
// sequences) are written as text (base::EscapeControlCharacters: "\x1b").
std::vector<std::string> RenderTopFrame(const TopFrame& frame, std::size_t width);

// The frame as one JSON object (`zeus top --json`): elapsed_s and, per GPU,
// its figures (watts, joules), error (null or the message) and processes
// (same order as the text) with their labels.
nlohmann::json TopFrameJson(const TopFrame& frame);

// Helpers, exposed for tests.
// A process's job in a few characters: "slurm 1234.0" (job and step),
// "pod 1a2b3c4d/ctr 0123456789ab" (shortened IDs), "ctr 0123456789ab",
// the systemd unit, else "-".
std::string JobColumn(const monitor::ProcessLabels& labels);
// `line` cut to at most `width` bytes (0: unchanged), never inside a UTF-8
// character.
std::string TruncateLine(std::string_view line, std::size_t width);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_TOP_RENDER_H_
