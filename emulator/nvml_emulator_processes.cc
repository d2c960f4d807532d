// Copyright 2026 The Zeus C++ Authors.
//
// libzeus-nvml-emulator.so's per-process calls
// (nvmlDeviceGetComputeRunningProcesses_v3, nvmlDeviceGetProcessUtilization).
// The process controls that attach processes at run time are shared by both
// faces (emulator_process_controls.cc, emulator_processes.h).
//
// A GPU's processes are its scenario's "processes" (fixed in time by the
// scenario) plus the attachments in its shared ProcessTable
// (shared_state.h), made at run time by any process sharing the state.
// Samples are not stored: the driver's sample at instant k x period (k >= 1)
// is derived from what ran then, for the instants within
// kProcessSampleHistoryNs before now (the driver's sample buffer).
// Attachments change the GPU's process load in its limit history
// (RecordProcessLoadChange), so power and energy follow them.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "api_functions.h"
#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"
#include "emulator_processes.h"
#include "nvml_emulator_internal.h"
#include "physics.h"
#include "scenario.h"
#include "shared_state.h"

namespace zeus::emulator {
namespace {

// GPU `index`'s process table now, with exited processes' attachments ended
// (a write only when one has exited).
nvmlReturn_t ReadTable(Emulator& emulator, std::size_t index, ProcessTable* table, std::int64_t* now_ns) {
  if (!emulator.state().ReadProcesses(index, table, now_ns)) return NVML_ERROR_UNKNOWN;
  bool exited = false;
  for (std::uint32_t i = 0; i < table->count && !exited; ++i) {
    exited = IsOpen(table->segments[i]) && ProcessExited(table->segments[i].pid);
  }
  if (!exited) return NVML_SUCCESS;
  if (EndExitedProcesses(emulator, index) != ZEUS_EMULATOR_OK) return NVML_ERROR_UNKNOWN;
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

}  // namespace
}  // namespace zeus::emulator

using zeus::emulator::ApiFunction;
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

}  // extern "C"
