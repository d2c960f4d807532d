// Copyright 2026 The Zeus C++ Authors.
//
// RAPL packages under a powercap root, as Cpu and CpuSet.

#ifndef ZEUS_DEVICE_RAPL_RAPL_CPU_H_
#define ZEUS_DEVICE_RAPL_RAPL_CPU_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "device/rapl/rapl_counter.h"
#include "zeus/device/cpu.h"
#include "zeus/device/discovery.h"

namespace zeus::device::rapl {

class RaplCpu final : public Cpu {
 public:
  RaplCpu(std::string name, std::unique_ptr<RaplCounter> package, std::unique_ptr<RaplCounter> dram);

  const std::string& name() const override { return name_; }
  bool has_dram() const override { return dram_ != nullptr; }
  std::chrono::nanoseconds max_safe_read_interval() const override;
  Result<CpuEnergy> TotalEnergy() override;

  // Reads every counter once, for the wrap guard (RaplCounter::Poll). What
  // it sees (a late read, a reset, a failure) surfaces on the next
  // TotalEnergy().
  void Poll();

 private:
  std::string name_;
  std::unique_ptr<RaplCounter> package_;
  std::unique_ptr<RaplCounter> dram_;  // null without a DRAM subzone
};

// A package zone that could not be opened (its name or max_energy_range_uj
// is unreadable or malformed): listed so that the other packages are still
// served and the problem is reported as data; TotalEnergy() returns why.
class UnopenedCpu final : public Cpu {
 public:
  UnopenedCpu(std::string name, Error error) : name_(std::move(name)), error_(std::move(error)) {}
  const std::string& name() const override { return name_; }
  bool has_dram() const override { return false; }
  std::chrono::nanoseconds max_safe_read_interval() const override { return std::chrono::nanoseconds::max(); }
  Result<CpuEnergy> TotalEnergy() override { return Fail(error_); }

 private:
  std::string name_;
  Error error_;
};

// Owns the packages and, when enabled, the wrap-guard thread that reads each
// counter at half the shortest safe read interval.
class RaplCpuSet final : public CpuSet {
 public:
  RaplCpuSet(std::vector<std::unique_ptr<Cpu>> cpus, std::vector<RaplCpu*> rapl_cpus, bool wrap_guard);
  ~RaplCpuSet() override;  // stops and joins the guard

  // The guard's period (zero when there is no guard).
  std::chrono::nanoseconds guard_period() const { return guard_period_; }
  // For tests: how many passes over every counter the guard has finished.
  std::uint64_t guard_passes();
  // For tests: waits until the guard has finished `passes` passes, or
  // `timeout` of real time has passed; returns whether it had.
  bool WaitForGuardPasses(std::uint64_t passes, std::chrono::nanoseconds timeout);

 private:
  void GuardLoop(std::stop_token stop);

  std::vector<RaplCpu*> rapl_cpus_;
  std::chrono::nanoseconds guard_period_{0};
  std::mutex mu_;
  std::condition_variable_any cv_;
  std::uint64_t guard_passes_ = 0;  // guarded by mu_
  std::jthread guard_;
};

// Scans `root` (e.g. /sys/class/powercap) for top-level intel-rapl:<N> zones,
// sorted by N, each with its "dram" subzone when present. A zone that cannot
// be opened is listed as an UnopenedCpu (named "intel-rapl:<N>" when its name
// cannot be read); only a root that cannot be listed is an error.
Result<std::unique_ptr<CpuSet>> OpenRaplCpus(const std::string& root, const CpuOptions& options,
                                             const Clock& clock);

}  // namespace zeus::device::rapl

#endif  // ZEUS_DEVICE_RAPL_RAPL_CPU_H_
