// Copyright 2026 The Zeus C++ Authors.

#include "zeus/monitor/attribution.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <utility>

#include <fmt/format.h>

namespace zeus::monitor {
namespace {

// Products of energies and weights need more than 64 bits (mJ x 1e5 x
// samples); the quotients fit again.
__extension__ typedef unsigned __int128 Uint128;

constexpr std::int64_t kMaxMj = std::numeric_limits<std::int64_t>::max();

// Utilization weights are integers, so the split is exact: 1/1000 percent.
constexpr double kWeightUnitsPerPercent = 1000.0;

// idle_power_mw x duration in mJ, rounded down; saturates at kMaxMj.
std::int64_t IdleEnergyMj(std::uint32_t idle_power_mw, std::chrono::nanoseconds duration) {
  const Uint128 mj = Uint128{idle_power_mw} * static_cast<std::uint64_t>(duration.count()) / 1'000'000'000u;
  return mj > static_cast<Uint128>(kMaxMj) ? kMaxMj : static_cast<std::int64_t>(mj);
}

Status ValidateInterval(std::int64_t measured_energy_mj, std::chrono::nanoseconds duration,
                        std::span<const ProcessUtilizationSample> samples) {
  if (measured_energy_mj < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("an interval's measured energy must not be negative (got {} mJ); a counter that went "
                            "backwards is a driver reset, not an interval to attribute",
                            measured_energy_mj));
  }
  if (duration.count() < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("an interval's duration must not be negative (got {} ns); pass end - start of one "
                            "monotonic clock",
                            duration.count()));
  }
  for (const ProcessUtilizationSample& s : samples) {
    if (!std::isfinite(s.sm_util_percent) || s.sm_util_percent < 0.0 || s.sm_util_percent > 100.0) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("process {}'s SM utilization must be a number between 0 and 100 percent (got {})",
                              s.process.pid, s.sm_util_percent));
    }
  }
  return OkStatus();
}

// The distinct processes of `samples` in key order, each with its summed
// weight.
std::vector<std::pair<ProcessKey, std::uint64_t>> SumWeights(std::span<const ProcessUtilizationSample> samples) {
  std::vector<std::pair<ProcessKey, std::uint64_t>> weights;
  weights.reserve(samples.size());
  for (const ProcessUtilizationSample& s : samples) {
    weights.emplace_back(s.process, static_cast<std::uint64_t>(std::llround(s.sm_util_percent * kWeightUnitsPerPercent)));
  }
  std::sort(weights.begin(), weights.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (out > 0 && weights[out - 1].first == weights[i].first) {
      weights[out - 1].second += weights[i].second;
    } else {
      weights[out++] = weights[i];
    }
  }
  weights.resize(out);
  return weights;
}

}  // namespace

Result<IntervalAttribution> AttributeInterval(std::int64_t measured_energy_mj, std::chrono::nanoseconds duration,
                                              std::uint32_t idle_power_mw,
                                              std::span<const ProcessUtilizationSample> samples,
                                              std::int64_t idle_carry_mj) {
  if (Status valid = ValidateInterval(measured_energy_mj, duration, samples); !valid) return Fail(valid.error());
  if (idle_carry_mj < 0) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("the idle carry must be >= 0 mJ (got {})", idle_carry_mj));
  }
  IntervalAttribution out;
  out.measured_energy_mj = measured_energy_mj;
  const std::int64_t allowance_mj = std::min(kMaxMj - idle_carry_mj, IdleEnergyMj(idle_power_mw, duration)) + idle_carry_mj;
  out.idle_energy_mj = std::min(measured_energy_mj, allowance_mj);
  out.idle_shortfall_mj = allowance_mj - out.idle_energy_mj;
  const std::int64_t active_mj = measured_energy_mj - out.idle_energy_mj;

  const std::vector<std::pair<ProcessKey, std::uint64_t>> weights = SumWeights(samples);
  Uint128 total_weight = 0;
  for (const auto& [key, weight] : weights) total_weight += weight;
  out.processes.reserve(weights.size());
  if (total_weight == 0) {
    for (const auto& [key, weight] : weights) out.processes.push_back({key, 0});
    out.unattributed_energy_mj = active_mj;
    return out;
  }

  // Largest remainder: floors first, then one millijoule each to the largest
  // remainders (ties to the smaller key, i.e. the smaller index here).
  std::vector<Uint128> remainders(weights.size());
  std::int64_t given_mj = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const Uint128 product = static_cast<Uint128>(active_mj) * weights[i].second;
    const auto floor_mj = static_cast<std::int64_t>(product / total_weight);
    remainders[i] = product % total_weight;
    out.processes.push_back({weights[i].first, floor_mj});
    given_mj += floor_mj;
  }
  // The leftover is the sum of the fractional parts: fewer than the number of
  // processes with a nonzero remainder, so a process of weight 0 never gets one.
  auto left_mj = static_cast<std::size_t>(active_mj - given_mj);
  if (left_mj > 0) {
    std::vector<std::size_t> order(weights.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(left_mj), order.end(),
                      [&](std::size_t a, std::size_t b) {
                        return remainders[a] != remainders[b] ? remainders[a] > remainders[b] : a < b;
                      });
    for (std::size_t i = 0; i < left_mj; ++i) ++out.processes[order[i]].energy_mj;
  }
  return out;
}

std::string_view IdlePowerSourceName(IdlePowerSource source) {
  switch (source) {
    case IdlePowerSource::kNone:
      return "none";
    case IdlePowerSource::kOperator:
      return "operator";
    case IdlePowerSource::kTrailingMinimum:
      return "trailing_minimum";
  }
  return "unknown";
}

Result<IdlePowerEstimator> IdlePowerEstimator::Create(std::string_view model, const IdlePowerOptions& options) {
  if (options.window.count() <= 0) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the idle power window must be positive (got {} ns)", options.window.count()));
  }
  std::optional<std::uint32_t> operator_mw;
  if (auto it = options.idle_power_mw_by_model.find(model); it != options.idle_power_mw_by_model.end()) {
    operator_mw = it->second;
  }
  return IdlePowerEstimator(operator_mw, options.window);
}

Status IdlePowerEstimator::AddSample(std::chrono::nanoseconds time, std::uint32_t power_mw) {
  if (last_time_ && time < *last_time_) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("a power sample at {} ns is older than the previous one at {} ns; add samples in time "
                            "order from one monotonic clock",
                            time.count(), last_time_->count()));
  }
  last_time_ = time;
  if (operator_mw_) return OkStatus();
  while (!minima_.empty() && minima_.back().power_mw >= power_mw) minima_.pop_back();
  minima_.push_back({time, power_mw});
  while (time - minima_.front().time >= window_) minima_.pop_front();
  return OkStatus();
}

std::uint32_t IdlePowerEstimator::IdlePowerMw() const {
  if (operator_mw_) return *operator_mw_;
  return minima_.empty() ? 0 : minima_.front().power_mw;
}

IdlePowerSource IdlePowerEstimator::source() const {
  if (operator_mw_) return IdlePowerSource::kOperator;
  return minima_.empty() ? IdlePowerSource::kNone : IdlePowerSource::kTrailingMinimum;
}

struct AttributionLedger::Impl {
  struct Entry {
    std::int64_t energy_mj = 0;
    std::chrono::nanoseconds last_seen{0};
  };
  using EntryKey = std::pair<std::size_t, ProcessKey>;

  // Drops the entries ended at `now` into their GPU's ended_energy_mj.
  // next_expiry is a lower bound of the earliest expiry (entries' last_seen
  // only grows), so most calls return at once. Requires mu.
  void DropEnded(std::chrono::nanoseconds now) {
    if (now < next_expiry) return;
    next_expiry = std::chrono::nanoseconds::max();
    for (auto it = entries.begin(); it != entries.end();) {
      const std::chrono::nanoseconds expiry = it->second.last_seen + retention;
      if (expiry <= now) {
        gpus[it->first.first].ended_energy_mj += it->second.energy_mj;
        it = entries.erase(it);
      } else {
        next_expiry = std::min(next_expiry, expiry);
        ++it;
      }
    }
  }

  const Clock* clock = nullptr;
  std::chrono::nanoseconds retention{0};
  std::size_t max_entries = 0;
  std::mutex mu;
  std::map<std::size_t, GpuEnergyTotals> gpus;  // guarded by mu
  std::map<EntryKey, Entry> entries;             // guarded by mu
  std::chrono::nanoseconds next_expiry = std::chrono::nanoseconds::max();  // guarded by mu
};

Result<std::unique_ptr<AttributionLedger>> AttributionLedger::Create(AttributionLedgerOptions options) {
  if (options.retention.count() <= 0) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the attribution ledger's retention must be positive (got {} ns)",
                            options.retention.count()));
  }
  auto impl = std::make_unique<Impl>();
  impl->clock = options.clock != nullptr ? options.clock : &SteadyClock();
  impl->retention = options.retention;
  impl->max_entries = options.max_entries;
  return std::unique_ptr<AttributionLedger>(new AttributionLedger(std::move(impl)));
}

AttributionLedger::AttributionLedger(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AttributionLedger::~AttributionLedger() = default;

Status AttributionLedger::Add(std::size_t gpu_index, const IntervalAttribution& interval) {
  // The parts must be non-negative and add up; summed in 128 bits so that no
  // input overflows the check.
  __extension__ __int128 parts = interval.idle_energy_mj;
  parts += interval.unattributed_energy_mj;
  bool negative = interval.measured_energy_mj < 0 || interval.idle_energy_mj < 0 || interval.unattributed_energy_mj < 0;
  for (const ProcessEnergy& p : interval.processes) {
    negative = negative || p.energy_mj < 0;
    parts += p.energy_mj;
  }
  if (negative || parts != interval.measured_energy_mj) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("GPU {}'s interval does not add up: idle, unattributed and process energies must be "
                            "non-negative and sum to the measured {} mJ; pass what AttributeInterval returned",
                            gpu_index, interval.measured_energy_mj));
  }

  std::lock_guard<std::mutex> lock(impl_->mu);
  const std::chrono::nanoseconds now = impl_->clock->Now();
  GpuEnergyTotals& totals = impl_->gpus[gpu_index];
  totals.gpu_index = gpu_index;
  totals.measured_energy_mj += interval.measured_energy_mj;
  totals.idle_energy_mj += interval.idle_energy_mj;
  totals.unattributed_energy_mj += interval.unattributed_energy_mj;
  for (const ProcessEnergy& p : interval.processes) {
    auto it = impl_->entries.find({gpu_index, p.process});
    if (it == impl_->entries.end()) {
      if (impl_->entries.size() >= impl_->max_entries) impl_->DropEnded(now);
      if (impl_->entries.size() >= impl_->max_entries) {
        totals.other_energy_mj += p.energy_mj;
        continue;
      }
      it = impl_->entries.emplace(Impl::EntryKey{gpu_index, p.process}, Impl::Entry{}).first;
      impl_->next_expiry = std::min(impl_->next_expiry, now + impl_->retention);
    }
    it->second.energy_mj += p.energy_mj;
    it->second.last_seen = now;
  }
  return OkStatus();
}

AttributionSnapshot AttributionLedger::Snapshot() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->DropEnded(impl_->clock->Now());
  AttributionSnapshot out;
  out.gpus.reserve(impl_->gpus.size());
  for (const auto& [index, totals] : impl_->gpus) out.gpus.push_back(totals);
  out.processes.reserve(impl_->entries.size());
  for (const auto& [key, entry] : impl_->entries) {
    out.processes.push_back({key.first, key.second, entry.energy_mj, entry.last_seen});
  }
  return out;
}

}  // namespace zeus::monitor
