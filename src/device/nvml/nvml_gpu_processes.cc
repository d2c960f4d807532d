// Copyright 2026 The Zeus C++ Authors.
//
// NvmlGpu's per-process calls: nvmlDeviceGetComputeRunningProcesses_v3 and
// nvmlDeviceGetProcessUtilization, both with NVML's buffer protocol (a call
// with a null buffer or a short one answers NVML_ERROR_INSUFFICIENT_SIZE and
// the count needed).

#include <algorithm>
#include <vector>

#include "device/nvml/nvml_error.h"
#include "device/nvml/nvml_gpu.h"

namespace zeus::device::nvml {
namespace {

// How many times a list is asked for again after it grew between the size
// query and the read (processes start at any time).
constexpr int kListAttempts = 4;
// Room for this many more entries than the size query said, so that a list
// that grows a little between the two calls still fits.
constexpr unsigned int kListHeadroom = 8;

}  // namespace

Result<std::vector<GpuProcess>> NvmlGpu::RunningProcesses() {
  constexpr std::string_view kWhat = "running processes";
  unsigned int count = 0;
  nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetComputeRunningProcesses_v3, device_, &count,
                                      static_cast<nvmlProcessInfo_t*>(nullptr));
  if (rc == NVML_SUCCESS) return std::vector<GpuProcess>{};  // no process
  std::vector<nvmlProcessInfo_t> infos;
  for (int attempt = 0; attempt < kListAttempts; ++attempt) {
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE) return Fail(QueryError(rc, kWhat));
    infos.assign(std::max<std::size_t>(count + kListHeadroom, infos.size() * 2), nvmlProcessInfo_t{});
    count = static_cast<unsigned int>(infos.size());
    rc = NvmlLibrary::Call(api_.nvmlDeviceGetComputeRunningProcesses_v3, device_, &count, infos.data());
    if (rc == NVML_SUCCESS) {
      std::vector<GpuProcess> processes;
      processes.reserve(count);
      for (unsigned int i = 0; i < std::min<std::size_t>(count, infos.size()); ++i) {
        GpuProcess process;
        process.pid = infos[i].pid;
        if (infos[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE) process.used_memory_bytes = infos[i].usedGpuMemory;
        processes.push_back(process);
      }
      return processes;
    }
  }
  return Fail(QueryError(rc, kWhat));
}

Result<std::vector<GpuProcessUtilization>> NvmlGpu::ProcessUtilization(std::uint64_t since_timestamp_us) {
  constexpr std::string_view kWhat = "per-process utilization";
  unsigned int count = 0;
  nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetProcessUtilization, device_,
                                      static_cast<nvmlProcessUtilizationSample_t*>(nullptr), &count,
                                      static_cast<unsigned long long>(since_timestamp_us));
  std::vector<nvmlProcessUtilizationSample_t> samples;
  for (int attempt = 0; attempt <= kListAttempts; ++attempt) {
    // No sample newer than the timestamp (or no process at all).
    if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_SUCCESS && samples.empty())) {
      return std::vector<GpuProcessUtilization>{};
    }
    if (rc == NVML_SUCCESS) {
      std::vector<GpuProcessUtilization> result;
      result.reserve(count);
      for (unsigned int i = 0; i < std::min<std::size_t>(count, samples.size()); ++i) {
        const nvmlProcessUtilizationSample_t& s = samples[i];
        result.push_back(GpuProcessUtilization{s.pid, s.timeStamp, s.smUtil, s.memUtil});
      }
      // Oldest first, as the contract says (the driver's order is its own).
      std::stable_sort(result.begin(), result.end(), [](const auto& a, const auto& b) {
        return a.timestamp_us < b.timestamp_us;
      });
      return result;
    }
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE || attempt == kListAttempts) break;
    samples.assign(std::max<std::size_t>(count + kListHeadroom, samples.size() * 2),
                   nvmlProcessUtilizationSample_t{});
    count = static_cast<unsigned int>(samples.size());
    rc = NvmlLibrary::Call(api_.nvmlDeviceGetProcessUtilization, device_, samples.data(), &count,
                           static_cast<unsigned long long>(since_timestamp_us));
  }
  return Fail(QueryError(rc, kWhat));
}

}  // namespace zeus::device::nvml
