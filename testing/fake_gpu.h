// Copyright 2026 The Zeus C++ Authors.
//
// An in-process Gpu for tests of the layers above the device layer. Its power
// draw is scripted, its energy counter is the exact integral of that draw
// over a FakeClock, and every call can be made to fail. It records setter
// calls so a test can assert what an optimizer asked for.
//
// Thread-safety: all methods may be called concurrently.

#ifndef ZEUS_TESTING_FAKE_GPU_H_
#define ZEUS_TESTING_FAKE_GPU_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "testing/fake_clock.h"
#include "zeus/device/gpu.h"

namespace zeus::testing {

struct FakeGpuConfig {
  std::string name = "Fake V100";
  std::string uuid = "GPU-fake";
  device::GpuArchitecture architecture = device::GpuArchitecture::kVolta;
  bool energy_counter = true;
  std::uint32_t min_power_limit_mw = 100'000;
  std::uint32_t max_power_limit_mw = 250'000;
  std::uint32_t default_power_limit_mw = 250'000;
  double power_w = 100.0;  // demand; the draw is min(demand, limit)
  double energy_counter_rate = 1.0;  // the counter reads the true energy x this (a faulty driver)
  device::PowerScope power_scope = device::PowerScope::kGpu;  // what PowerReadingScope() answers
  // Zero: PowerUsageMw() and AveragePowerMw() answer the draw now. Else they
  // answer the mean draw over this trailing period (since construction, when
  // shorter): a driver's averaged power field, which lags a changing load.
  std::chrono::nanoseconds average_power_period{0};
  // False: InstantPowerMw() answers kNotSupported (a GPU without the field).
  bool instant_power = true;
};

class FakeGpu final : public device::Gpu {
 public:
  FakeGpu(const FakeGpuConfig& config, const FakeClock& clock, unsigned int nvml_index = 0);

  // Changes the demand from now on (energy stays exact across the change).
  void SetPowerW(double power_w);
  // The next calls to `method` (e.g. "TotalEnergyMj") fail with `error`.
  void FailWith(const std::string& method, Error error);
  void ClearFailures();
  // Every later call to `method` runs `action` first (with this GPU's lock
  // held: it must not call this GPU), e.g. advancing a FakeClock to model a
  // slow driver call.
  void BeforeCall(const std::string& method, std::function<void()> action);
  // Calls to `method` block (a hung driver call; other calls to this GPU
  // then wait behind it, as on a real driver) until ReleaseHangs(). Once
  // released, hangs stay released.
  void HangOn(const std::string& method);
  void ReleaseHangs();
  // Calls blocked in a hang now: what a test waits for.
  int hung_calls() const;
  // Subtracts the counter's current value: the next reading starts from 0.
  void ResetEnergyCounter();
  // Every SetPowerLimitMw call, in order.
  std::vector<std::uint32_t> power_limit_calls() const;

  // Per-process use. RunningProcesses() answers `processes`;
  // AddProcessSample() adds a driver sample of `pid` at SM utilization
  // `sm_util_percent`, stamped with the clock's time now in microseconds
  // (ProcessUtilization(since) answers the samples stamped after `since`,
  // oldest first). Until SetProcesses() is called both calls answer
  // kNotSupported, as a GPU without per-process accounting does.
  void SetProcesses(std::vector<device::GpuProcess> processes);
  void AddProcessSample(std::uint32_t pid, unsigned int sm_util_percent);

  unsigned int nvml_index() const override { return nvml_index_; }
  Result<std::string> Name() override;
  Result<std::string> Uuid() override;
  Result<std::string> PciBusId() override;
  Result<device::GpuArchitecture> Architecture() override;
  Result<bool> MigEnabled() override;
  Result<std::uint32_t> PowerUsageMw() override;
  Result<std::uint32_t> InstantPowerMw() override;
  Result<std::uint32_t> AveragePowerMw() override;
  Result<std::uint32_t> MemoryPowerMw() override;
  Result<device::PowerScope> PowerReadingScope() override;
  bool SupportsEnergyCounter() override;
  Result<std::uint64_t> TotalEnergyMj() override;
  Result<std::uint32_t> PowerLimitMw() override;
  Result<device::PowerLimitConstraints> PowerLimitConstraintsMw() override;
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
  Result<std::vector<device::GpuProcess>> RunningProcesses() override;
  Result<std::vector<device::GpuProcessUtilization>> ProcessUtilization(std::uint64_t since_timestamp_us) override;

 private:
  std::optional<Error> Failure(const std::string& method) const;  // requires mu_
  void MaybeHang(const std::string& method) const;
  void RunBefore(const std::string& method) const;                 // requires mu_
  void Fold();                                                     // requires mu_
  double DrawW() const;                                            // requires mu_
  std::uint32_t AveragedPowerMw();                                 // requires mu_

  const FakeGpuConfig config_;
  const FakeClock& clock_;
  const unsigned int nvml_index_;
  mutable std::mutex mu_;
  double power_w_;
  std::uint32_t limit_mw_;
  bool persistence_ = false;
  double energy_mj_ = 0.0;  // integral up to last_fold_
  std::chrono::nanoseconds last_fold_;
  double drawn_mj_ = 0.0;  // the true energy drawn (never reset), for the averaged field
  std::deque<std::pair<std::chrono::nanoseconds, double>> drawn_history_;  // (time, drawn_mj_ then)
  std::map<std::string, Error> failures_;
  std::map<std::string, std::function<void()>> before_;
  std::vector<std::uint32_t> limit_calls_;
  std::optional<std::vector<device::GpuProcess>> processes_;
  std::vector<device::GpuProcessUtilization> process_samples_;
  mutable std::mutex hang_mu_;  // apart from mu_, so that a hung call holding mu_ can be released
  mutable std::condition_variable released_;
  std::set<std::string> hangs_;  // guarded by hang_mu_
  bool hangs_released_ = false;  // guarded by hang_mu_
  mutable int hung_calls_ = 0;   // guarded by hang_mu_
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_FAKE_GPU_H_
