// Copyright 2026 The Zeus C++ Authors.
//
// A GPU's "processes" and "process_sample_period_ms" (scenario.h's
// ScenarioProcess), and the load they put on the GPU's power model.

#include <algorithm>
#include <cmath>
#include <set>

#include "scenario_internal.h"

namespace zeus::emulator {

std::uint32_t ScenarioProcess::SmPercentAt(std::int64_t time_ns) const {
  if (!RunningAt(time_ns)) return 0;
  auto after = std::upper_bound(sm_util.begin(), sm_util.end(), time_ns,
                                [](std::int64_t t, const UtilStep& s) { return t < s.time_ns; });
  return after == sm_util.begin() ? 0 : (after - 1)->percent;
}

namespace internal {
namespace {

constexpr std::int64_t kMaxPid = 4'194'304;  // Linux's PID_MAX_LIMIT
constexpr double kMaxUsedMemoryMib = 1e9;

std::uint32_t ReadPercent(const Json& value, const std::string& path) {
  return static_cast<std::uint32_t>(std::llround(ReadNumberIn(value, path, 0.0, 100.0, " %")));
}

// "sm_util_steps": [[at_s, percent], ...], strictly increasing times.
std::vector<UtilStep> ReadUtilSteps(const Json& value, const std::string& path) {
  const Json& array = ReadArray(value, path, /*allow_empty=*/false);
  std::vector<UtilStep> steps;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string step_path = ElementPath(path, i);
    if (!array[i].is_array() || array[i].size() != 2) {
      Fail(step_path, fmt::format("expected [time_s, percent], got {}", Show(array[i])));
    }
    UtilStep step{ReadSecondsAsNs(array[i][0], ElementPath(step_path, 0)),
                  ReadPercent(array[i][1], ElementPath(step_path, 1))};
    if (!steps.empty() && step.time_ns <= steps.back().time_ns) {
      Fail(ElementPath(step_path, 0), "steps must be in strictly increasing time order");
    }
    steps.push_back(step);
  }
  return steps;
}

ScenarioProcess ReadProcess(const Json& value, const std::string& path) {
  const ObjectReader in(value, path,
                        {"pid", "sm_util_percent", "sm_util_steps", "mem_util_percent", "used_memory_mib", "start_s",
                         "end_s"});
  ScenarioProcess process;
  process.pid = static_cast<std::uint32_t>(ReadIntegerIn(in.Require("pid"), in.PathOf("pid"), 1, kMaxPid));
  const Json* constant = in.Find("sm_util_percent");
  const Json* steps = in.Find("sm_util_steps");
  if ((constant == nullptr) == (steps == nullptr)) {
    Fail(path, "needs exactly one of \"sm_util_percent\" (a constant) and \"sm_util_steps\" ([[time_s, percent], ...])");
  }
  if (constant != nullptr) {
    process.sm_util = {UtilStep{0, ReadPercent(*constant, in.PathOf("sm_util_percent"))}};
  } else {
    process.sm_util = ReadUtilSteps(*steps, in.PathOf("sm_util_steps"));
  }
  if (const Json* mem = in.Find("mem_util_percent")) process.mem_util_percent = ReadPercent(*mem, in.PathOf("mem_util_percent"));
  if (const Json* memory = in.Find("used_memory_mib")) {
    const double mib = ReadNumberIn(*memory, in.PathOf("used_memory_mib"), 0.0, kMaxUsedMemoryMib, " MiB");
    process.used_memory_bytes = static_cast<std::uint64_t>(std::llround(mib * 1024.0 * 1024.0));
  }
  if (const Json* start = in.Find("start_s")) process.start_ns = ReadSecondsAsNs(*start, in.PathOf("start_s"));
  if (const Json* end = in.Find("end_s")) {
    process.end_ns = ReadSecondsAsNs(*end, in.PathOf("end_s"));
    if (process.end_ns <= process.start_ns) Fail(in.PathOf("end_s"), "must be later than start_s");
  }
  return process;
}

// The summed load of `processes` as steps (PowerModel::set_process_load).
std::vector<LoadStep> LoadSteps(const std::vector<ScenarioProcess>& processes) {
  std::set<std::int64_t> instants;
  for (const ScenarioProcess& p : processes) {
    instants.insert(p.start_ns);
    if (p.end_ns != std::numeric_limits<std::int64_t>::max()) instants.insert(p.end_ns);
    for (const UtilStep& step : p.sm_util) instants.insert(step.time_ns);
  }
  std::vector<LoadStep> steps;
  for (std::int64_t t : instants) {
    std::int32_t load = -1;
    for (const ScenarioProcess& p : processes) {
      if (p.RunningAt(t)) load = std::max(load, 0) + static_cast<std::int32_t>(p.SmPercentAt(t));
    }
    load = std::min(load, 100);
    if (steps.empty() ? load >= 0 || t > 0 : steps.back().percent != load) steps.push_back(LoadStep{t, load});
  }
  return steps;
}

}  // namespace

void ReadProcesses(const ObjectReader& in, GpuSpec* gpu) {
  if (const Json* period = in.Find("process_sample_period_ms")) {
    gpu->process_sample_period_ns =
        ReadMillisAsNs(*period, in.PathOf("process_sample_period_ms"), 10.0, kMaxPeriodMs);
  }
  const Json* list = in.Find("processes");
  if (list == nullptr) return;
  const std::string path = in.PathOf("processes");
  const Json& array = ReadArray(*list, path, /*allow_empty=*/true);
  if (array.size() > kMaxScenarioProcesses) {
    Fail(path, fmt::format("at most {} processes per GPU, got {}", kMaxScenarioProcesses, array.size()));
  }
  for (std::size_t i = 0; i < array.size(); ++i) {
    gpu->processes.push_back(ReadProcess(array[i], ElementPath(path, i)));
    for (std::size_t j = 0; j < i; ++j) {
      if (gpu->processes[j].pid == gpu->processes[i].pid) {
        Fail(ChildPath(ElementPath(path, i), "pid"), fmt::format("{} is also processes[{}]'s", gpu->processes[i].pid, j));
      }
    }
  }
  if (!gpu->processes_supported && !gpu->processes.empty()) {
    Fail(path, "the GPU lists \"processes\" in \"unsupported\"; drop one of the two");
  }
  gpu->power.set_process_load(LoadSteps(gpu->processes));
}

}  // namespace internal
}  // namespace zeus::emulator
