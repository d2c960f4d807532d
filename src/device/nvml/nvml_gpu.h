// Copyright 2026 The Zeus C++ Authors.
//
// NvmlGpu: the Gpu interface over an NVML device handle.

#ifndef ZEUS_DEVICE_NVML_NVML_GPU_H_
#define ZEUS_DEVICE_NVML_NVML_GPU_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "device/nvml/nvml_library.h"
#include "zeus/device/gpu.h"

namespace zeus::device::nvml {

class NvmlGpu final : public Gpu {
 public:
  // `label` names the GPU in error messages, e.g. "GPU 0".
  NvmlGpu(std::shared_ptr<const NvmlLibrary> library, nvmlDevice_t device, unsigned int nvml_index,
          std::string label);

  unsigned int nvml_index() const override { return nvml_index_; }
  Result<std::string> Name() override;
  Result<std::string> Uuid() override;
  Result<std::string> PciBusId() override;
  Result<GpuArchitecture> Architecture() override;
  Result<bool> MigEnabled() override;
  Result<std::uint32_t> PowerUsageMw() override;
  Result<std::uint32_t> InstantPowerMw() override;
  Result<std::uint32_t> AveragePowerMw() override;
  Result<std::uint32_t> MemoryPowerMw() override;
  Result<PowerScope> PowerReadingScope() override;
  bool SupportsEnergyCounter() override;
  Result<std::uint64_t> TotalEnergyMj() override;
  Result<std::uint32_t> PowerLimitMw() override;
  Result<PowerLimitConstraints> PowerLimitConstraintsMw() override;
  Result<std::uint32_t> DefaultPowerLimitMw() override;
  Result<std::uint32_t> EnforcedPowerLimitMw() override;
  Status SetPowerLimitMw(std::uint32_t limit_mw) override;
  Status ResetPowerLimit() override;
  Result<bool> PersistenceMode() override;
  Status SetPersistenceMode(bool enabled) override;
  Result<unsigned int> TemperatureC() override;
  Result<unsigned int> SmClockMhz() override;
  Result<unsigned int> MemoryClockMhz() override;
  Result<std::vector<unsigned int>> SupportedMemoryClocksMhz() override;
  Result<std::vector<unsigned int>> SupportedGraphicsClocksMhz(unsigned int memory_clock_mhz) override;
  Status SetGpuLockedClocks(unsigned int min_mhz, unsigned int max_mhz) override;
  Status ResetGpuLockedClocks() override;
  Status SetMemoryLockedClocks(unsigned int min_mhz, unsigned int max_mhz) override;
  Status ResetMemoryLockedClocks() override;
  // nvml_gpu_processes.cc: NVML's size query, then the list, retried a few
  // times if the list grew in between.
  Result<std::vector<GpuProcess>> RunningProcesses() override;
  Result<std::vector<GpuProcessUtilization>> ProcessUtilization(std::uint64_t since_timestamp_us) override;

  void DistrustEnergyCounter(std::string reason) override;

 private:
  Error QueryError(nvmlReturn_t rc, std::string_view what) const;
  Error SetterError(nvmlReturn_t rc, std::string_view what) const;
  // What a power field's scope resolved to (kept per field, see gpu.h).
  enum class FieldScope : std::uint8_t { kUnresolved, kGpu, kModule, kNone };
  Result<std::uint32_t> PowerField(unsigned int field_id, unsigned int scope, std::string_view what);
  // `field_id` at the GPU scope, else the module scope; `resolved` caches the
  // answer.
  Result<std::uint32_t> ScopedPowerField(unsigned int field_id, std::atomic<FieldScope>& resolved,
                                         std::string_view what);
  Result<std::vector<unsigned int>> ClockList(std::string_view what, unsigned int memory_clock_mhz, bool graphics);

  std::shared_ptr<const NvmlLibrary> library_;
  const NvmlApi& api_;
  nvmlDevice_t device_;
  unsigned int nvml_index_;
  std::string label_;
  std::atomic<FieldScope> instant_scope_{FieldScope::kUnresolved};
  std::atomic<FieldScope> average_scope_{FieldScope::kUnresolved};
  // The reason is written once, before the flag is set (release); read only
  // after the flag is seen set (acquire).
  std::atomic<bool> counter_distrusted_{false};
  std::string counter_distrust_reason_;
};

}  // namespace zeus::device::nvml

#endif  // ZEUS_DEVICE_NVML_NVML_GPU_H_
