// Copyright 2026 The Zeus C++ Authors.

#include "zeus/simulator/output.h"

#include <sys/stat.h>

#include <cstdlib>

#include <fmt/format.h>

namespace zeus::simulator {

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
  const std::string project_default = "../shared/traces/zeus-nsdi23";
  struct stat st {};
  if (stat(project_default.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return project_default;
  return Fail(ErrorCode::kNotFound,
              "no trace directory: pass --trace-dir DIR or set ZEUS_TRACE_DIR (the Zeus traces are "
              "../shared/traces/zeus-nsdi23 from the project root)");
}

}  // namespace zeus::simulator
