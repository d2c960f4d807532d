// Copyright 2026 The Zeus C++ Authors.
//
// The process controls (zeusEmulatorAttachProcess,
// zeusEmulatorSetProcessUtilization, zeusEmulatorDetachProcess), exported by
// both faces, and the process-table helpers of emulator_processes.h.
//
// A GPU's processes are its scenario's "processes" (fixed in time by the
// scenario) plus the attachments in its shared ProcessTable
// (shared_state.h), made at run time by any process sharing the state.
// Attachments change the GPU's process load in its limit history
// (RecordProcessLoadChange), so power and energy follow them.

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <shared_mutex>

#include "emulator_control.h"
#include "emulator_face.h"
#include "emulator_processes.h"
#include "physics.h"
#include "scenario.h"
#include "shared_state.h"

namespace zeus::emulator {
namespace {

// The open attachment of `pid`, or null.
AttachedSegment* FindOpen(ProcessTable& table, std::uint32_t pid) {
  for (std::uint32_t i = 0; i < table.count; ++i) {
    if (table.segments[i].pid == pid && IsOpen(table.segments[i])) return &table.segments[i];
  }
  return nullptr;
}

// The summed utilization of the open attachments, or -1 when there is none.
std::int32_t AttachedLoad(const ProcessTable& table) {
  std::int32_t load = -1;
  for (std::uint32_t i = 0; i < table.count; ++i) {
    if (IsOpen(table.segments[i])) load = std::max(load, 0) + static_cast<std::int32_t>(table.segments[i].sm_util_percent);
  }
  return load;
}

// Drops ended attachments that no sample in the history can see.
void ForgetOld(ProcessTable& table, std::int64_t now_ns) {
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < table.count; ++i) {
    const AttachedSegment& s = table.segments[i];
    if (IsOpen(s) || s.end_ns > now_ns - kProcessSampleHistoryNs) table.segments[kept++] = s;
  }
  table.count = kept;
}

// Ends the open attachments of processes that have exited; true if any.
bool EndExited(ProcessTable& table, std::int64_t now_ns) {
  bool any = false;
  for (std::uint32_t i = 0; i < table.count; ++i) {
    AttachedSegment& s = table.segments[i];
    if (IsOpen(s) && ProcessExited(s.pid)) {
      s.end_ns = std::max(now_ns, s.start_ns);
      any = true;
    }
  }
  return any;
}

// Runs `change(table, now_ns)` (returning a ZEUS_EMULATOR_* code) on GPU
// `index`'s table under the locks, after ending exited processes' and
// forgetting old attachments, and records the resulting process load.
template <class Change>
int ChangeProcesses(Emulator& emulator, std::size_t index, Change&& change) {
  const GpuSpec& spec = emulator.scenario().gpus[index];
  int result = ZEUS_EMULATOR_OK;
  const bool locked = emulator.state().UpdateProcesses(
      index, [&](GpuState& gpu, ProcessTable& table, std::int64_t now_ns) {
        EndExited(table, now_ns);
        ForgetOld(table, now_ns);
        result = change(table, now_ns);
        // As the limit setter: only what readings from now on can need is kept.
        ForgetLimitChangesBefore(&gpu.limits, spec.power, spec.counter_reset_ns, now_ns - KeptLookbackNs(spec));
        RecordProcessLoadChange(&gpu.limits, spec.power, spec.counter_reset_ns, now_ns, AttachedLoad(table));
      });
  return locked ? result : ZEUS_EMULATOR_ERROR_STATE;
}

// A process control on GPU `gpu`: checks and locking around `change`.
template <class Change>
int ProcessControl(unsigned int gpu, unsigned int sm_util_percent, Change&& change) {
  try {
    auto& globals = TheGlobals();
    std::shared_lock<std::shared_mutex> lock(globals.mutex);
    Emulator* emulator = globals.emulator.get();
    if (emulator == nullptr) return ZEUS_EMULATOR_ERROR_UNINITIALIZED;
    if (gpu >= static_cast<unsigned int>(emulator->gpu_count()) || sm_util_percent > 100) {
      return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
    }
    if (!emulator->scenario().gpus[gpu].processes_supported) return ZEUS_EMULATOR_ERROR_WRONG_MODE;
    return ChangeProcesses(*emulator, gpu, change);
  } catch (...) {
    return ZEUS_EMULATOR_ERROR_STATE;
  }
}

}  // namespace

bool ProcessExited(std::uint32_t pid) { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

int EndExitedProcesses(Emulator& emulator, std::size_t index) {
  return ChangeProcesses(emulator, index, [](ProcessTable&, std::int64_t) { return ZEUS_EMULATOR_OK; });
}

}  // namespace zeus::emulator

using zeus::emulator::AttachedSegment;
using zeus::emulator::ProcessTable;

extern "C" {

int zeusEmulatorAttachProcess(unsigned int gpu, unsigned int pid, unsigned int sm_util_percent) {
  if (pid == 0 || zeus::emulator::ProcessExited(pid)) return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
  return zeus::emulator::ProcessControl(gpu, sm_util_percent, [&](ProcessTable& table, std::int64_t now_ns) {
    if (zeus::emulator::FindOpen(table, pid) != nullptr) return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
    if (table.count >= zeus::emulator::kMaxAttachedSegments) return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
    table.segments[table.count++] = AttachedSegment{pid, sm_util_percent, now_ns, zeus::emulator::kNeverNs};
    return ZEUS_EMULATOR_OK;
  });
}

int zeusEmulatorSetProcessUtilization(unsigned int gpu, unsigned int pid, unsigned int sm_util_percent) {
  return zeus::emulator::ProcessControl(gpu, sm_util_percent, [&](ProcessTable& table, std::int64_t now_ns) {
    AttachedSegment* open = zeus::emulator::FindOpen(table, pid);
    if (open == nullptr) return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
    if (open->sm_util_percent == sm_util_percent) return ZEUS_EMULATOR_OK;
    if (open->start_ns == now_ns) {  // nothing sampled at the old value yet
      open->sm_util_percent = sm_util_percent;
      return ZEUS_EMULATOR_OK;
    }
    if (table.count >= zeus::emulator::kMaxAttachedSegments) return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
    open->end_ns = now_ns;
    table.segments[table.count++] = AttachedSegment{pid, sm_util_percent, now_ns, zeus::emulator::kNeverNs};
    return ZEUS_EMULATOR_OK;
  });
}

int zeusEmulatorDetachProcess(unsigned int gpu, unsigned int pid) {
  return zeus::emulator::ProcessControl(gpu, 0, [&](ProcessTable& table, std::int64_t now_ns) {
    AttachedSegment* open = zeus::emulator::FindOpen(table, pid);
    if (open == nullptr) return ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT;
    open->end_ns = std::max(now_ns, open->start_ns);
    return ZEUS_EMULATOR_OK;
  });
}

}  // extern "C"
