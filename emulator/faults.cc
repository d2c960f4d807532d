// Copyright 2026 The Zeus C++ Authors.

#include "faults.h"

#include <chrono>
#include <thread>
#include <utility>

namespace zeus::emulator {
namespace {

// SplitMix64's finaliser: a good 64-bit mixing function.
std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

FaultInjector::FaultInjector(std::vector<FaultSpec> rules, int gpu_count)
    : gpu_count_(gpu_count),
      counts_(new std::atomic<std::uint64_t>[static_cast<std::size_t>(kApiFunctionCount) *
                                             static_cast<std::size_t>(gpu_count + 1)]()) {
  for (FaultSpec& spec : rules) {
    auto rule = std::make_unique<Rule>();
    rule->spec = std::move(spec);
    rules_.push_back(std::move(rule));
  }
}

double FaultInjector::Uniform(std::uint64_t seed, std::uint64_t n) {
  // 53 random bits -> [0, 1).
  return static_cast<double>(Mix(Mix(seed) ^ n) >> 11) * 0x1.0p-53;
}

std::size_t FaultInjector::Slot(ApiFunction function, int gpu) const {
  const int column = (gpu >= 0 && gpu < gpu_count_) ? gpu : gpu_count_;
  return static_cast<std::size_t>(function) * static_cast<std::size_t>(gpu_count_ + 1) +
         static_cast<std::size_t>(column);
}

FaultAction FaultInjector::Decide(ApiFunction function, int gpu) {
  counts_[Slot(function, gpu)].fetch_add(1, std::memory_order_relaxed);
  for (const std::unique_ptr<Rule>& rule : rules_) {
    const FaultSpec& spec = rule->spec;
    const bool function_matches = spec.function ? *spec.function == function : IsDeviceFunction(function);
    if (!function_matches) continue;
    // A GPU-specific rule that names its function also hits device-less calls
    // of it; a GPU-specific "*" rule ("GPU n is lost") only hits that GPU.
    const bool gpu_matches = !spec.gpu || gpu == *spec.gpu || (gpu == kNoDevice && spec.function);
    if (!gpu_matches) continue;
    const std::uint64_t n = rule->matched.fetch_add(1, std::memory_order_relaxed);
    if (n < spec.after_calls) continue;
    if (spec.probability >= 1.0 || Uniform(spec.seed, n) < spec.probability) {
      if (spec.max_failures && rule->failed.fetch_add(1, std::memory_order_relaxed) >= *spec.max_failures) continue;
      return FaultAction{spec.return_code, spec.latency_ns, spec.hang};
    }
  }
  return FaultAction{};
}

int FaultInjector::Perform(const FaultAction& action) {
  if (action.latency_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(action.latency_ns));
  if (action.hang) {
    std::unique_lock lock(hang_mu_);
    ++hung_calls_;
    hang_cv_.wait(lock, [this] { return hangs_released_; });
    --hung_calls_;
  }
  return action.code;
}

void FaultInjector::ReleaseHungCalls() {
  std::lock_guard lock(hang_mu_);
  hangs_released_ = true;
  hang_cv_.notify_all();
}

std::uint64_t FaultInjector::HungCalls() const {
  std::lock_guard lock(hang_mu_);
  return hung_calls_;
}

std::uint64_t FaultInjector::CallCount(std::optional<ApiFunction> function, int gpu) const {
  std::uint64_t total = 0;
  for (int f = 0; f < kApiFunctionCount; ++f) {
    const auto candidate = static_cast<ApiFunction>(f);
    if (function && *function != candidate) continue;
    if (gpu == -1) {
      for (int g = 0; g <= gpu_count_; ++g) total += counts_[Slot(candidate, g)].load(std::memory_order_relaxed);
    } else if (gpu >= 0 && gpu < gpu_count_) {
      total += counts_[Slot(candidate, gpu)].load(std::memory_order_relaxed);
    }
  }
  return total;
}

}  // namespace zeus::emulator
