// Copyright 2026 The Zeus C++ Authors.
//
// A FakeGpu with per-process use that is a steady state rather than a
// script of samples, for the exporter's per-process tests and benchmark:
// every call goes to the wrapped FakeGpu except RunningProcesses and
// ProcessUtilization, which answer from SetProcesses(). Unlike
// FakeGpu::AddProcessSample, whose samples accumulate, it keeps no history,
// so a benchmark of millions of ticks costs the same at every tick. ProcessUtilization
// gives one driver sample per listed process, stamped with the clock's time
// (microseconds), when that time is after `since_timestamp_us` (so one per
// clock step, as a driver gives one per sample period).
//
// Thread-safety: all methods may be called concurrently.

#ifndef ZEUS_TESTING_PROCESS_SCRIPTED_GPU_H_
#define ZEUS_TESTING_PROCESS_SCRIPTED_GPU_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "testing/fake_clock.h"
#include "testing/fake_gpu.h"
#include "zeus/device/gpu.h"

namespace zeus::testing {

struct ScriptedProcess {
  std::uint32_t pid = 0;
  unsigned int sm_util_percent = 0;
};

class ProcessScriptedGpu final : public device::Gpu {
 public:
  ProcessScriptedGpu(const FakeGpuConfig& config, const FakeClock& clock, unsigned int nvml_index = 0)
      : fake_(config, clock, nvml_index), clock_(clock) {}

  // The processes on this GPU from now on (replacing the previous list).
  void SetProcesses(std::vector<ScriptedProcess> processes) {
    std::lock_guard lock(mu_);
    processes_ = std::move(processes);
  }
  FakeGpu& fake() { return fake_; }

  Result<std::vector<device::GpuProcess>> RunningProcesses() override {
    std::lock_guard lock(mu_);
    std::vector<device::GpuProcess> out;
    for (const ScriptedProcess& p : processes_) out.push_back({.pid = p.pid, .used_memory_bytes = 1 << 30});
    return out;
  }
  Result<std::vector<device::GpuProcessUtilization>> ProcessUtilization(std::uint64_t since_timestamp_us) override {
    const auto now_us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now()).count());
    std::lock_guard lock(mu_);
    std::vector<device::GpuProcessUtilization> out;
    if (now_us <= since_timestamp_us) return out;
    for (const ScriptedProcess& p : processes_) {
      out.push_back({.pid = p.pid, .timestamp_us = now_us, .sm_util_percent = p.sm_util_percent});
    }
    return out;
  }

  unsigned int nvml_index() const override { return fake_.nvml_index(); }
  Result<std::string> Name() override { return fake_.Name(); }
  Result<std::string> Uuid() override { return fake_.Uuid(); }
  Result<std::string> PciBusId() override { return fake_.PciBusId(); }
  Result<device::GpuArchitecture> Architecture() override { return fake_.Architecture(); }
  Result<bool> MigEnabled() override { return fake_.MigEnabled(); }
  Result<std::uint32_t> PowerUsageMw() override { return fake_.PowerUsageMw(); }
  Result<std::uint32_t> InstantPowerMw() override { return fake_.InstantPowerMw(); }
  Result<std::uint32_t> AveragePowerMw() override { return fake_.AveragePowerMw(); }
  Result<std::uint32_t> MemoryPowerMw() override { return fake_.MemoryPowerMw(); }
  Result<device::PowerScope> PowerReadingScope() override { return fake_.PowerReadingScope(); }
  bool SupportsEnergyCounter() override { return fake_.SupportsEnergyCounter(); }
  Result<std::uint64_t> TotalEnergyMj() override { return fake_.TotalEnergyMj(); }
  Result<std::uint32_t> PowerLimitMw() override { return fake_.PowerLimitMw(); }
  Result<device::PowerLimitConstraints> PowerLimitConstraintsMw() override { return fake_.PowerLimitConstraintsMw(); }
  Result<std::uint32_t> DefaultPowerLimitMw() override { return fake_.DefaultPowerLimitMw(); }
  Result<std::uint32_t> EnforcedPowerLimitMw() override { return fake_.EnforcedPowerLimitMw(); }
  Status SetPowerLimitMw(std::uint32_t limit_mw) override { return fake_.SetPowerLimitMw(limit_mw); }
  Status ResetPowerLimit() override { return fake_.ResetPowerLimit(); }
  Result<bool> PersistenceMode() override { return fake_.PersistenceMode(); }
  Status SetPersistenceMode(bool enabled) override { return fake_.SetPersistenceMode(enabled); }
  Result<unsigned int> TemperatureC() override { return fake_.TemperatureC(); }
  Result<unsigned int> SmClockMhz() override { return fake_.SmClockMhz(); }
  Result<unsigned int> MemoryClockMhz() override { return fake_.MemoryClockMhz(); }
  Result<std::vector<unsigned int>> SupportedMemoryClocksMhz() override { return fake_.SupportedMemoryClocksMhz(); }
  Result<std::vector<unsigned int>> SupportedGraphicsClocksMhz(unsigned int memory_clock_mhz) override {
    return fake_.SupportedGraphicsClocksMhz(memory_clock_mhz);
  }
  Status SetGpuLockedClocks(unsigned int min_mhz, unsigned int max_mhz) override {
    return fake_.SetGpuLockedClocks(min_mhz, max_mhz);
  }
  Status ResetGpuLockedClocks() override { return fake_.ResetGpuLockedClocks(); }
  Status SetMemoryLockedClocks(unsigned int min_mhz, unsigned int max_mhz) override {
    return fake_.SetMemoryLockedClocks(min_mhz, max_mhz);
  }
  Status ResetMemoryLockedClocks() override { return fake_.ResetMemoryLockedClocks(); }

 private:
  FakeGpu fake_;
  const FakeClock& clock_;
  mutable std::mutex mu_;
  std::vector<ScriptedProcess> processes_;  // guarded by mu_
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_PROCESS_SCRIPTED_GPU_H_
