// Copyright 2026 The Zeus C++ Authors.
//
// AmdSmiGpu: the Gpu interface over an AMD SMI processor handle.
//
// What differs from NVIDIA (README, "AMD GPUs"):
//   * power caps are µW in AMD SMI and socket power whole watts; this class
//     converts to mW (a cap that is not a whole mW is rounded down);
//   * energy is an accumulator times a resolution (µJ); TotalEnergyMj() is
//     their product / 1000;
//   * InstantPowerMw() is AMD SMI's current socket power, AveragePowerMw()
//     its average; either may be "N/A" (kNotSupported): MI250 reports only
//     an average, MI300X only the current power. PowerUsageMw() is the
//     average where there is one, else the current power;
//   * no memory power, no persistence mode, no MIG, no per-process calls,
//     and locked clocks are not supported (kNotSupported).

#ifndef ZEUS_DEVICE_AMDSMI_AMDSMI_GPU_H_
#define ZEUS_DEVICE_AMDSMI_AMDSMI_GPU_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "device/amdsmi/amdsmi_library.h"
#include "zeus/device/gpu.h"

namespace zeus::device::amdsmi {

// The CDNA generation an Instinct product name belongs to ("AMD Instinct
// MI300X" -> kCdna3), kUnknown for other names.
GpuArchitecture ArchitectureFromName(std::string_view name);

class AmdSmiGpu final : public Gpu {
 public:
  // `hip_index`: the GPU's HIP index among all GPUs; `label` names it in
  // error messages, e.g. "GPU 0".
  AmdSmiGpu(std::shared_ptr<const AmdSmiLibrary> library, amdsmi_processor_handle handle, unsigned int hip_index,
            std::string label);

  unsigned int nvml_index() const override { return hip_index_; }
  Result<std::string> Name() override;
  Result<std::string> Uuid() override;
  // "0000:c1:00.0", as Linux and amd-smi write it.
  Result<std::string> PciBusId() override;
  Result<GpuArchitecture> Architecture() override;
  Result<bool> MigEnabled() override { return false; }
  Result<std::uint32_t> PowerUsageMw() override;
  Result<std::uint32_t> InstantPowerMw() override;
  Result<std::uint32_t> AveragePowerMw() override;
  Result<std::uint32_t> MemoryPowerMw() override;
  // kGpu: AMD SMI's socket power is the GPU's (on MI250, see NoPowerOfItsOwn).
  Result<PowerScope> PowerReadingScope() override { return PowerScope::kGpu; }
  bool SupportsEnergyCounter() override;
  Result<std::uint64_t> TotalEnergyMj() override;
  Result<std::uint32_t> PowerLimitMw() override;
  Result<PowerLimitConstraints> PowerLimitConstraintsMw() override;
  Result<std::uint32_t> DefaultPowerLimitMw() override;
  // AMD SMI has no separate enforced limit: the power cap.
  Result<std::uint32_t> EnforcedPowerLimitMw() override { return PowerLimitMw(); }
  Status SetPowerLimitMw(std::uint32_t limit_mw) override;
  Status ResetPowerLimit() override;
  Result<bool> PersistenceMode() override;
  Status SetPersistenceMode(bool enabled) override;
  // The hotspot (junction) temperature, as Zeus reads it.
  Result<unsigned int> TemperatureC() override;
  Result<unsigned int> SmClockMhz() override;
  Result<unsigned int> MemoryClockMhz() override;
  Result<std::vector<unsigned int>> SupportedMemoryClocksMhz() override;
  Result<std::vector<unsigned int>> SupportedGraphicsClocksMhz(unsigned int memory_clock_mhz) override;
  Status SetGpuLockedClocks(unsigned int min_mhz, unsigned int max_mhz) override;
  Status ResetGpuLockedClocks() override;
  Status SetMemoryLockedClocks(unsigned int min_mhz, unsigned int max_mhz) override;
  Status ResetMemoryLockedClocks() override;

  void DistrustEnergyCounter(std::string reason) override;
  // For the die of a dual-die board that reports no power of its own (the
  // second GCD of an MI250, whose partner reports the whole board's): from
  // now on every power and energy reading is kNotSupported naming `reason`.
  // Called by OpenGpus before the set is handed out.
  void NoPowerOfItsOwn(std::string reason);

 private:
  Error QueryError(amdsmi_status_t rc, std::string_view what) const;
  Error SetterError(amdsmi_status_t rc, std::string_view what) const;
  // A power reading's N/A or the die's NoPowerOfItsOwn, as kNotSupported.
  Error NotReported(std::string_view what) const;
  Result<amdsmi_power_info_t> PowerInfo();
  Result<amdsmi_power_cap_info_t> PowerCapInfo();
  Result<amdsmi_frequencies_t> Frequencies(amdsmi_clk_type_t type, std::string_view what);
  Status Unsupported(std::string_view what) const;

  std::shared_ptr<const AmdSmiLibrary> library_;
  const AmdSmiApi& api_;
  amdsmi_processor_handle handle_;
  unsigned int hip_index_;
  std::string label_;
  // The reason is written once, before the flag is set (release); read only
  // after the flag is seen set (acquire).
  std::atomic<bool> counter_distrusted_{false};
  std::string counter_distrust_reason_;
  // Set once, before the GpuSet is handed out (OpenGpus), then only read.
  std::optional<std::string> no_power_reason_;
};

}  // namespace zeus::device::amdsmi

#endif  // ZEUS_DEVICE_AMDSMI_AMDSMI_GPU_H_
