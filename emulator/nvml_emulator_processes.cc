// Copyright 2026 The Zeus C++ Authors.
//
// libzeus-nvml-emulator.so's per-process calls
// (nvmlDeviceGetComputeRunningProcesses_v3, nvmlDeviceGetProcessUtilization)
// and the process controls (zeusEmulatorAttachProcess,
// zeusEmulatorSetProcessUtilization, zeusEmulatorDetachProcess).
//
// A GPU's processes are its scenario's "processes" (fixed in time by the
// scenario) plus the attachments in its shared ProcessTable
// (shared_state.h), made at run time by any process sharing the state.
// Samples are not stored: the driver's sample at instant k x period (k >= 1)
// is derived from what ran then, for the instants within
// kProcessSampleHistoryNs before now (the driver's sample buffer).
// Attachments change the GPU's process load in its limit history
// (RecordProcessLoadChange), so power and energy follow them.

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <vector>

#include "api_functions.h"
#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"
#include "nvml_emulator_internal.h"
#include "physics.h"
#include "scenario.h"
#include "shared_state.h"

namespace zeus::emulator {
namespace {

bool ProcessExited(std::uint32_t pid) { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

bool IsOpen(const AttachedSegment& segment) { return segment.end_ns == kNeverNs; }

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

// GPU `index`'s process table now, with exited processes' attachments ended
// (a write only when one has exited).
nvmlReturn_t ReadTable(Emulator& emulator, std::size_t index, ProcessTable* table, std::int64_t* now_ns) {
  if (!emulator.state().ReadProcesses(index, table, now_ns)) return NVML_ERROR_UNKNOWN;
  bool exited = false;
  for (std::uint32_t i = 0; i < table->count && !exited; ++i) {
    exited = IsOpen(table->segments[i]) && ProcessExited(table->segments[i].pid);
  }
  if (!exited) return NVML_SUCCESS;
  const int rc = ChangeProcesses(emulator, index, [](ProcessTable&, std::int64_t) { return ZEUS_EMULATOR_OK; });
  if (rc != ZEUS_EMULATOR_OK) return NVML_ERROR_UNKNOWN;
  return emulator.state().ReadProcesses(index, table, now_ns) ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

std::vector<nvmlProcessInfo_t> RunningProcesses(const GpuSpec& spec, const ProcessTable& table, std::int64_t now_ns) {
  std::vector<nvmlProcessInfo_t> running;
  auto add = [&](std::uint32_t pid, unsigned long long memory) {
    for (const nvmlProcessInfo_t& info : running) {
      if (info.pid == pid) return;
    }
    // Instance ids: NVML's "not in MIG mode" value (0xFFFFFFFF).
    running.push_back(nvmlProcessInfo_t{pid, memory, 0xFFFFFFFFu, 0xFFFFFFFFu});
  };
  for (const ScenarioProcess& p : spec.processes) {
    if (p.RunningAt(now_ns)) add(p.pid, p.used_memory_bytes.value_or(NVML_VALUE_NOT_AVAILABLE));
  }
  for (std::uint32_t i = 0; i < table.count; ++i) {
    if (IsOpen(table.segments[i])) add(table.segments[i].pid, NVML_VALUE_NOT_AVAILABLE);
  }
  return running;
}

// The samples taken after `last_seen_us` and within the history, oldest
// first: at each sample instant t, one per process with a non-zero SM
// utilization in the period that ends at t (the value in force just before
// t; an attachment over [start, end) counts for start < t <= end).
std::vector<nvmlProcessUtilizationSample_t> Samples(const GpuSpec& spec, const ProcessTable& table,
                                                    std::int64_t now_ns, unsigned long long last_seen_us) {
  std::vector<nvmlProcessUtilizationSample_t> samples;
  const std::int64_t period = spec.process_sample_period_ns;
  const std::int64_t oldest_ns = std::max<std::int64_t>(period, now_ns - kProcessSampleHistoryNs + 1);
  for (std::int64_t t = (oldest_ns + period - 1) / period * period; t <= now_ns; t += period) {
    const auto stamp_us = static_cast<unsigned long long>(t / 1000);
    if (stamp_us <= last_seen_us) continue;
    for (const ScenarioProcess& p : spec.processes) {
      const std::uint32_t sm = p.SmPercentAt(t - 1);
      if (sm > 0) samples.push_back(nvmlProcessUtilizationSample_t{p.pid, stamp_us, sm, p.mem_util_percent, 0, 0});
    }
    for (std::uint32_t i = 0; i < table.count; ++i) {
      const AttachedSegment& s = table.segments[i];
      if (s.start_ns < t && t <= s.end_ns && s.sm_util_percent > 0) {
        samples.push_back(nvmlProcessUtilizationSample_t{s.pid, stamp_us, s.sm_util_percent, 0, 0, 0});
      }
    }
  }
  return samples;
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
}  // namespace zeus::emulator

using zeus::emulator::ApiFunction;
using zeus::emulator::AttachedSegment;
using zeus::emulator::Emulator;
using zeus::emulator::GpuSpec;
using zeus::emulator::ProcessTable;

extern "C" {

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* info_count,
                                                     nvmlProcessInfo_t* infos) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceGetComputeRunningProcesses_v3, device,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
        if (info_count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (!spec.processes_supported) return NVML_ERROR_NOT_SUPPORTED;
        ProcessTable table;
        std::int64_t now_ns = 0;
        if (nvmlReturn_t rc = zeus::emulator::ReadTable(emulator, index, &table, &now_ns); rc != NVML_SUCCESS) {
          return rc;
        }
        const std::vector<nvmlProcessInfo_t> running = zeus::emulator::RunningProcesses(spec, table, now_ns);
        const auto needed = static_cast<unsigned int>(running.size());
        if (needed > *info_count || (needed > 0 && infos == nullptr)) {
          *info_count = needed;
          return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        std::copy(running.begin(), running.end(), infos);
        *info_count = needed;
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
                                             unsigned int* process_samples_count,
                                             unsigned long long last_seen_timestamp_us) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceGetProcessUtilization, device,
      [&](Emulator& emulator, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
        if (process_samples_count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (!spec.processes_supported) return NVML_ERROR_NOT_SUPPORTED;
        ProcessTable table;
        std::int64_t now_ns = 0;
        if (nvmlReturn_t rc = zeus::emulator::ReadTable(emulator, index, &table, &now_ns); rc != NVML_SUCCESS) {
          return rc;
        }
        const std::vector<nvmlProcessUtilizationSample_t> samples =
            zeus::emulator::Samples(spec, table, now_ns, last_seen_timestamp_us);
        const auto needed = static_cast<unsigned int>(samples.size());
        if (needed == 0) {
          *process_samples_count = 0;
          return NVML_ERROR_NOT_FOUND;
        }
        if (utilization == nullptr || needed > *process_samples_count) {
          *process_samples_count = needed;
          return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        std::copy(samples.begin(), samples.end(), utilization);
        *process_samples_count = needed;
        return NVML_SUCCESS;
      });
}

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
