// Copyright 2026 The Zeus C++ Authors.
//
// The GPU seam. Everything above the device layer (measurement, optimizers,
// CLI) sees GPUs only through `Gpu` and `GpuSet`; NVML stays private to
// src/device/nvml. Obtain a GpuSet from zeus/device/discovery.h at a
// composition root (the CLI, a service's main) and pass it down.
//
// Units are in every name: mW, mJ, MHz, degrees Celsius.
//
// Thread-safety: a Gpu may be called from several threads at once (NVML is
// thread-safe, and so is the emulator). A GpuSet is immutable after opening.

#ifndef ZEUS_DEVICE_GPU_H_
#define ZEUS_DEVICE_GPU_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"

namespace zeus::device {

// Whose GPUs, and so which driver library serves them.
enum class GpuVendor : std::uint8_t {
  kNvidia,  // NVML (libnvidia-ml.so.1)
  kAmd,     // AMD SMI (libamd_smi.so, ROCm 6.3 and later)
};

// "nvidia", "amd".
std::string_view GpuVendorName(GpuVendor vendor);

// NVIDIA's generations in order, then AMD Instinct's CDNA generations (not
// ordered against NVIDIA's: compare only within a vendor).
enum class GpuArchitecture : std::uint8_t {
  kUnknown = 0, kKepler, kMaxwell, kPascal, kVolta, kTuring, kAmpere, kAda, kHopper, kBlackwell,
  kCdna = 32,  // MI100
  kCdna2,      // MI210, MI250, MI250X
  kCdna3,      // MI300A, MI300X, MI325X
};

// Lower-case name ("volta", "cdna3"), "unknown" for kUnknown.
std::string_view GpuArchitectureName(GpuArchitecture arch);

// Which part of the board a GPU's power readings cover. NVML's power fields
// take a scope: the GPU alone, or the whole module the GPU sits on (on a
// superchip such as Grace Hopper GH200: GPU + Grace CPU + CPU memory).
enum class PowerScope : std::uint8_t {
  kGpu,       // NVML_POWER_SCOPE_GPU: the GPU alone
  kModule,    // NVML_POWER_SCOPE_MODULE: the driver offers only the module's power
  kUnscoped,  // no power fields: the plain nvmlDeviceGetPowerUsage (older drivers and GPUs)
};

// "gpu", "module", "unscoped".
std::string_view PowerScopeName(PowerScope scope);

// A process with a compute context on a GPU
// (nvmlDeviceGetComputeRunningProcesses).
struct GpuProcess {
  std::uint32_t pid = 0;
  // GPU memory the process holds; absent where the driver cannot tell
  // (NVML_VALUE_NOT_AVAILABLE: Windows WDDM, some MIG and container setups).
  std::optional<std::uint64_t> used_memory_bytes;
};

// One driver sample of one process's utilization
// (nvmlDeviceGetProcessUtilization's nvmlProcessUtilizationSample_t).
struct GpuProcessUtilization {
  std::uint32_t pid = 0;
  // When the driver took the sample: microseconds on the driver's clock (CPU
  // time since the epoch on a real driver). Pass the newest one seen back to
  // ProcessUtilization() to read only newer samples.
  std::uint64_t timestamp_us = 0;
  unsigned int sm_util_percent = 0;   // 0..100: share of time a kernel of this process ran
  unsigned int mem_util_percent = 0;  // 0..100: share of time its memory traffic ran
};

struct PowerLimitConstraints {
  std::uint32_t min_mw = 0;
  std::uint32_t max_mw = 0;
};

// One GPU. Getters read the device each time (no caching beyond what the
// implementation documents); setters act at once.
class Gpu {
 public:
  virtual ~Gpu() = default;

  // The index the driver gives this device, not the visible-devices index:
  // NVML's index on NVIDIA; on AMD, the HIP index among all GPUs (before
  // ROCR/HIP_VISIBLE_DEVICES), which is the KFD node order.
  virtual unsigned int nvml_index() const = 0;

  virtual Result<std::string> Name() = 0;
  virtual Result<std::string> Uuid() = 0;
  // PCI bus id, e.g. "00000000:1A:00.0".
  virtual Result<std::string> PciBusId() = 0;
  virtual Result<GpuArchitecture> Architecture() = 0;
  // Whether the GPU is in MIG mode (a whole-device view of a partitioned GPU).
  virtual Result<bool> MigEnabled() = 0;

  // The GPU's power as the driver reports it: a 1 s average on Ampere
  // (except GA100) and newer, instantaneous before; updated on the driver's
  // period. Read at the GPU's power scope (AveragePowerMw()); where the
  // driver has no average power field at any scope, the plain
  // nvmlDeviceGetPowerUsage (which on a superchip covers the whole module).
  virtual Result<std::uint32_t> PowerUsageMw() = 0;
  // Explicit power domains (NVML field values). Instant and average power
  // are read at GPU scope; where the driver refuses the GPU scope
  // (NVML_ERROR_NOT_SUPPORTED, drivers that offer only a superchip's module
  // power), at module scope, with a warning logged once per GPU. The scope is
  // resolved at the first read of each field and kept. kNotSupported where
  // the driver lacks the field at both scopes.
  virtual Result<std::uint32_t> InstantPowerMw() = 0;
  virtual Result<std::uint32_t> AveragePowerMw() = 0;
  virtual Result<std::uint32_t> MemoryPowerMw() = 0;
  // The scope of this GPU's power readings: the instant power field's scope,
  // else the average field's, else kUnscoped (resolving them if needed).
  // An error only when the driver fails for another reason (a lost GPU).
  virtual Result<PowerScope> PowerReadingScope() = 0;

  // Whether TotalEnergyMj() is available (Volta and newer; on AMD, where
  // AMD SMI has a counter).
  virtual bool SupportsEnergyCounter() = 0;
  // Trust, but check (zeus/monitor/counter_check.h): from now on SupportsEnergyCounter()
  // answers false and TotalEnergyMj() kNotSupported naming `reason`, so that
  // every measurement integrates power instead. For a counter that disagreed
  // with the GPU's power (monitor::ApplyCounterChecks: zeusd and the exporter
  // on their per-GPU threads, zeus info). Safe while other threads read the GPU; call it once.
  // Backends without a counter ignore it.
  virtual void DistrustEnergyCounter(std::string reason) { (void)reason; }
  // Energy since the driver was loaded, in mJ. kNotSupported before Volta.
  virtual Result<std::uint64_t> TotalEnergyMj() = 0;

  virtual Result<std::uint32_t> PowerLimitMw() = 0;
  virtual Result<PowerLimitConstraints> PowerLimitConstraintsMw() = 0;
  virtual Result<std::uint32_t> DefaultPowerLimitMw() = 0;
  // The limit the driver actually enforces (may be lower than PowerLimitMw()
  // when another agent caps the board).
  virtual Result<std::uint32_t> EnforcedPowerLimitMw() = 0;
  // REQUIRES: root or CAP_SYS_ADMIN on real hardware. A value outside the
  // constraints is kInvalidArgument.
  virtual Status SetPowerLimitMw(std::uint32_t limit_mw) = 0;
  // Sets the default limit.
  virtual Status ResetPowerLimit() = 0;

  virtual Result<bool> PersistenceMode() = 0;
  virtual Status SetPersistenceMode(bool enabled) = 0;

  virtual Result<unsigned int> TemperatureC() = 0;

  virtual Result<unsigned int> SmClockMhz() = 0;
  virtual Result<unsigned int> MemoryClockMhz() = 0;
  virtual Result<std::vector<unsigned int>> SupportedMemoryClocksMhz() = 0;
  virtual Result<std::vector<unsigned int>> SupportedGraphicsClocksMhz(unsigned int memory_clock_mhz) = 0;
  virtual Status SetGpuLockedClocks(unsigned int min_mhz, unsigned int max_mhz) = 0;
  virtual Status ResetGpuLockedClocks() = 0;
  virtual Status SetMemoryLockedClocks(unsigned int min_mhz, unsigned int max_mhz) = 0;
  virtual Status ResetMemoryLockedClocks() = 0;

  // Per-process use (for attributing energy to processes; see
  // zeus/monitor/attribution.h). Not every backend has these: the default
  // answers kNotSupported, as a driver that lacks the calls does.
  //
  // The processes with a compute context on this GPU now, in the driver's
  // order. An empty list when none. PIDs are in the driver's (the host's)
  // PID namespace; a process that exited may still be listed until the
  // driver reaps its context.
  virtual Result<std::vector<GpuProcess>> RunningProcesses() { return Fail(NotSupportedError("RunningProcesses")); }
  // The driver's per-process utilization samples taken after
  // `since_timestamp_us` (0: every sample the driver still keeps, a few
  // seconds' worth), oldest first. An empty list when there is none (NVML's
  // NVML_ERROR_NOT_FOUND: no process ran, or nothing new since the
  // timestamp). kNotSupported on GPUs without per-process accounting.
  virtual Result<std::vector<GpuProcessUtilization>> ProcessUtilization(std::uint64_t since_timestamp_us) {
    (void)since_timestamp_us;
    return Fail(NotSupportedError("ProcessUtilization"));
  }

 private:
  static Error NotSupportedError(std::string_view call);
};

// The GPUs visible to this process, in CUDA_VISIBLE_DEVICES order: gpu(i) is
// what a framework calls device i.
class GpuSet {
 public:
  // `driver_clock`: see driver_clock(); null for a real driver.
  GpuSet(std::string driver_version, std::vector<std::unique_ptr<Gpu>> gpus,
         std::shared_ptr<const Clock> driver_clock = nullptr, GpuVendor vendor = GpuVendor::kNvidia)
      : driver_version_(std::move(driver_version)), gpus_(std::move(gpus)), driver_clock_(std::move(driver_clock)),
        vendor_(vendor) {}
  GpuSet(const GpuSet&) = delete;
  GpuSet& operator=(const GpuSet&) = delete;

  // Driver version string, e.g. "550.54.15"; on AMD the AMD SMI library's
  // version, e.g. "24.7.0"; empty when unknown.
  const std::string& driver_version() const { return driver_version_; }
  // Whose GPUs these are (one vendor per set).
  GpuVendor vendor() const { return vendor_; }
  std::size_t size() const { return gpus_.size(); }
  bool empty() const { return gpus_.empty(); }
  // REQUIRES: index < size().
  Gpu& gpu(std::size_t index) const { return *gpus_.at(index); }

  // The clock the driver's readings are on, when it is not the real
  // monotonic clock: null for a real driver (use SteadyClock()); the
  // emulator's clock when the GPUs are emulated, which a scenario may
  // scale (time_scale) or drive by hand ("clock": "manual"). Energy counters
  // count this clock's time, so measurement windows over these GPUs must be
  // timed on it. Its SleepFor() waits until the clock has moved `duration` or
  // the same wall time has passed, whichever is first; it never moves a
  // manual clock. Valid as long as this GpuSet.
  const Clock* driver_clock() const { return driver_clock_.get(); }

 private:
  std::string driver_version_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::shared_ptr<const Clock> driver_clock_;
  GpuVendor vendor_;
};

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_GPU_H_
