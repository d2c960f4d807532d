// Copyright 2026 The Zeus C++ Authors.

#include "testing/fake_gpu.h"

#include <algorithm>
#include <cmath>

namespace zeus::testing {

using device::GpuArchitecture;
using device::PowerLimitConstraints;

#define ZEUS_FAKE_FAIL_IF_SET(method)                                \
  do {                                                               \
    MaybeHang(method);                                               \
    RunBefore(method);                                               \
    if (auto failure = Failure(method)) return Fail(*failure);       \
  } while (0)

FakeGpu::FakeGpu(const FakeGpuConfig& config, const FakeClock& clock, unsigned int nvml_index)
    : config_(config), clock_(clock), nvml_index_(nvml_index), power_w_(config.power_w),
      limit_mw_(config.default_power_limit_mw), last_fold_(clock.Now()) {
  drawn_history_.emplace_back(last_fold_, 0.0);
}

double FakeGpu::DrawW() const { return std::min(power_w_, limit_mw_ / 1000.0); }

void FakeGpu::Fold() {
  const auto now = clock_.Now();
  const double added_mj = DrawW() * std::chrono::duration<double>(now - last_fold_).count() * 1000.0;
  energy_mj_ += added_mj;
  drawn_mj_ += added_mj;
  last_fold_ = now;
  if (config_.average_power_period.count() > 0 && now > drawn_history_.back().first) {
    drawn_history_.emplace_back(now, drawn_mj_);
    // Keep one point at or before the period's start.
    while (drawn_history_.size() > 2 && drawn_history_[1].first <= now - config_.average_power_period) {
      drawn_history_.pop_front();
    }
  }
}

std::uint32_t FakeGpu::AveragedPowerMw() {
  Fold();
  const std::chrono::nanoseconds now = last_fold_;
  const std::chrono::nanoseconds from = std::max(now - config_.average_power_period, drawn_history_.front().first);
  if (config_.average_power_period.count() == 0 || from >= now) {
    return static_cast<std::uint32_t>(std::lround(DrawW() * 1000.0));
  }
  // The drawn energy at `from`: linear between folds (the draw is constant there).
  double from_mj = drawn_history_.front().second;
  for (std::size_t i = 1; i < drawn_history_.size(); ++i) {
    const auto& [t0, e0] = drawn_history_[i - 1];
    const auto& [t1, e1] = drawn_history_[i];
    if (from <= t1) {
      from_mj = e0 + (e1 - e0) * std::chrono::duration<double>(from - t0).count() /
                         std::chrono::duration<double>(t1 - t0).count();
      break;
    }
  }
  const double seconds = std::chrono::duration<double>(now - from).count();
  return static_cast<std::uint32_t>(std::lround((drawn_mj_ - from_mj) / seconds));
}

std::optional<Error> FakeGpu::Failure(const std::string& method) const {
  auto it = failures_.find(method);
  if (it == failures_.end()) return std::nullopt;
  return it->second;
}

void FakeGpu::SetPowerW(double power_w) {
  std::lock_guard lock(mu_);
  Fold();
  power_w_ = power_w;
}

void FakeGpu::FailWith(const std::string& method, Error error) {
  std::lock_guard lock(mu_);
  failures_.insert_or_assign(method, std::move(error));
}

void FakeGpu::MaybeHang(const std::string& method) const {
  std::unique_lock lock(hang_mu_);
  if (hangs_released_ || hangs_.count(method) == 0) return;
  ++hung_calls_;
  released_.wait(lock, [this] { return hangs_released_; });
  --hung_calls_;
}

void FakeGpu::RunBefore(const std::string& method) const {
  if (auto it = before_.find(method); it != before_.end()) it->second();
}

void FakeGpu::BeforeCall(const std::string& method, std::function<void()> action) {
  std::lock_guard lock(mu_);
  before_.insert_or_assign(method, std::move(action));
}

void FakeGpu::HangOn(const std::string& method) {
  std::lock_guard lock(hang_mu_);
  hangs_.insert(method);
}

void FakeGpu::ReleaseHangs() {
  {
    std::lock_guard lock(hang_mu_);
    hangs_released_ = true;
  }
  released_.notify_all();
}

int FakeGpu::hung_calls() const {
  std::lock_guard lock(hang_mu_);
  return hung_calls_;
}

void FakeGpu::ClearFailures() {
  std::lock_guard lock(mu_);
  failures_.clear();
}

void FakeGpu::ResetEnergyCounter() {
  std::lock_guard lock(mu_);
  Fold();
  energy_mj_ = 0.0;
}

std::vector<std::uint32_t> FakeGpu::power_limit_calls() const {
  std::lock_guard lock(mu_);
  return limit_calls_;
}

Result<std::string> FakeGpu::Name() {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("Name");
  return config_.name;
}

Result<std::string> FakeGpu::Uuid() {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("Uuid");
  return config_.uuid;
}

Result<std::string> FakeGpu::PciBusId() { return std::string("00000000:00:00.0"); }

Result<GpuArchitecture> FakeGpu::Architecture() { return config_.architecture; }

Result<bool> FakeGpu::MigEnabled() { return false; }

Result<std::uint32_t> FakeGpu::PowerUsageMw() {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("PowerUsageMw");
  return AveragedPowerMw();
}

Result<std::uint32_t> FakeGpu::InstantPowerMw() {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("InstantPowerMw");
  if (!config_.instant_power) return Fail(ErrorCode::kNotSupported, "fake GPU has no instant power field");
  return static_cast<std::uint32_t>(std::lround(DrawW() * 1000.0));
}

Result<std::uint32_t> FakeGpu::AveragePowerMw() {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("AveragePowerMw");
  return AveragedPowerMw();
}

Result<std::uint32_t> FakeGpu::MemoryPowerMw() {
  return Fail(ErrorCode::kNotSupported, "fake GPU has no memory power domain");
}

Result<device::PowerScope> FakeGpu::PowerReadingScope() { return config_.power_scope; }

bool FakeGpu::SupportsEnergyCounter() { return config_.energy_counter; }

Result<std::uint64_t> FakeGpu::TotalEnergyMj() {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("TotalEnergyMj");
  if (!config_.energy_counter) return Fail(ErrorCode::kNotSupported, "fake GPU has no energy counter");
  Fold();
  return static_cast<std::uint64_t>(std::llround(energy_mj_ * config_.energy_counter_rate));
}

void FakeGpu::SetProcesses(std::vector<device::GpuProcess> processes) {
  std::lock_guard lock(mu_);
  processes_ = std::move(processes);
}

void FakeGpu::AddProcessSample(std::uint32_t pid, unsigned int sm_util_percent) {
  std::lock_guard lock(mu_);
  const auto now_us = std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now()).count();
  process_samples_.push_back({pid, static_cast<std::uint64_t>(now_us), sm_util_percent, 0});
}

Result<std::vector<device::GpuProcess>> FakeGpu::RunningProcesses() {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("RunningProcesses");
  if (!processes_) return Fail(ErrorCode::kNotSupported, "fake GPU has no per-process accounting");
  return *processes_;
}

Result<std::vector<device::GpuProcessUtilization>> FakeGpu::ProcessUtilization(std::uint64_t since_timestamp_us) {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("ProcessUtilization");
  if (!processes_) return Fail(ErrorCode::kNotSupported, "fake GPU has no per-process accounting");
  std::vector<device::GpuProcessUtilization> out;
  for (const auto& sample : process_samples_) {
    if (sample.timestamp_us > since_timestamp_us) out.push_back(sample);
  }
  return out;
}

Result<std::uint32_t> FakeGpu::PowerLimitMw() {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("PowerLimitMw");
  return limit_mw_;
}

Result<PowerLimitConstraints> FakeGpu::PowerLimitConstraintsMw() {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("PowerLimitConstraintsMw");
  return PowerLimitConstraints{config_.min_power_limit_mw, config_.max_power_limit_mw};
}

Result<std::uint32_t> FakeGpu::DefaultPowerLimitMw() { return config_.default_power_limit_mw; }

Result<std::uint32_t> FakeGpu::EnforcedPowerLimitMw() { return PowerLimitMw(); }

Status FakeGpu::SetPowerLimitMw(std::uint32_t limit_mw) {
  std::lock_guard lock(mu_);
  limit_calls_.push_back(limit_mw);
  ZEUS_FAKE_FAIL_IF_SET("SetPowerLimitMw");
  if (limit_mw < config_.min_power_limit_mw || limit_mw > config_.max_power_limit_mw) {
    return Fail(ErrorCode::kInvalidArgument, "fake GPU: power limit out of range");
  }
  Fold();
  limit_mw_ = limit_mw;
  return OkStatus();
}

Status FakeGpu::ResetPowerLimit() { return SetPowerLimitMw(config_.default_power_limit_mw); }

Result<bool> FakeGpu::PersistenceMode() {
  std::lock_guard lock(mu_);
  return persistence_;
}

Status FakeGpu::SetPersistenceMode(bool enabled) {
  std::lock_guard lock(mu_);
  ZEUS_FAKE_FAIL_IF_SET("SetPersistenceMode");
  persistence_ = enabled;
  return OkStatus();
}

Result<unsigned int> FakeGpu::TemperatureC() { return 40u; }
Result<unsigned int> FakeGpu::SmClockMhz() { return 1530u; }
Result<unsigned int> FakeGpu::MemoryClockMhz() { return 877u; }
Result<std::vector<unsigned int>> FakeGpu::SupportedMemoryClocksMhz() { return std::vector<unsigned int>{877}; }
Result<std::vector<unsigned int>> FakeGpu::SupportedGraphicsClocksMhz(unsigned int) {
  return std::vector<unsigned int>{1530, 1380, 1200};
}
Status FakeGpu::SetGpuLockedClocks(unsigned int, unsigned int) { return OkStatus(); }
Status FakeGpu::ResetGpuLockedClocks() { return OkStatus(); }
Status FakeGpu::SetMemoryLockedClocks(unsigned int, unsigned int) { return OkStatus(); }
Status FakeGpu::ResetMemoryLockedClocks() { return OkStatus(); }

#undef ZEUS_FAKE_FAIL_IF_SET

}  // namespace zeus::testing
