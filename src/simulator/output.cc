// Copyright 2026 The Zeus C++ Authors.

#include "zeus/simulator/output.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#ifndef ZEUS_TRACE_DATA_INSTALLED
#define ZEUS_TRACE_DATA_INSTALLED ""
#endif
#ifndef ZEUS_TRACE_DATA_SOURCE
#define ZEUS_TRACE_DATA_SOURCE ""
#endif

namespace zeus::simulator {
namespace {

namespace fs = std::filesystem;

std::string ExeDirectory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

std::string TriesCsv(const SimulationResult& result) {
  std::string out = "recurrence,try,batch_size,power_limit,epochs,energy,time,cost,reached\n";
  out.reserve(out.size() + result.tries.size() * 96);
  for (const TryRecord& t : result.tries) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{}\n", t.recurrence, t.attempt, t.batch_size,
                   t.power_limit_w, t.epochs, t.energy_j, t.time_s, t.cost, t.reached ? "true" : "false");
  }
  return out;
}

Result<std::string> ResolveTraceDir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("ZEUS_TRACE_DIR"); env != nullptr && *env != '\0') return std::string(env);
  return FindShippedTraceDir();
}

Result<std::string> FindShippedTraceDir() {
  std::vector<std::string> candidates;
  if (const std::string exe_dir = ExeDirectory(); !exe_dir.empty()) {
    candidates.push_back((fs::path(exe_dir) / ".." / "share" / "zeus" / "traces" / "zeus-nsdi23").string());
  }
  if (*ZEUS_TRACE_DATA_INSTALLED != '\0') candidates.emplace_back(ZEUS_TRACE_DATA_INSTALLED);
  if (*ZEUS_TRACE_DATA_SOURCE != '\0') candidates.emplace_back(ZEUS_TRACE_DATA_SOURCE);
  for (const std::string& candidate : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(fs::path(candidate) / "summary_train.csv", ec)) {
      return fs::path(candidate).lexically_normal().string();
    }
  }
  return Fail(ErrorCode::kNotFound,
              fmt::format("no trace directory: pass --trace-dir DIR or set ZEUS_TRACE_DIR (the Zeus NSDI '23 traces "
                          "that zeus ships are not installed; looked in {})",
                          fmt::join(candidates, ", ")));
}

}  // namespace zeus::simulator
