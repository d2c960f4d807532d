// Copyright 2026 The Zeus C++ Authors.

#include "device/rapl/rapl_cpu.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace zeus::device::rapl {
namespace fs = std::filesystem;

RaplCpu::RaplCpu(std::string name, std::unique_ptr<RaplCounter> package, std::unique_ptr<RaplCounter> dram)
    : name_(std::move(name)), package_(std::move(package)), dram_(std::move(dram)) {}

std::chrono::nanoseconds RaplCpu::max_safe_read_interval() const {
  auto interval = package_->max_safe_read_interval();
  if (dram_) interval = std::min(interval, dram_->max_safe_read_interval());
  return interval;
}

Result<CpuEnergy> RaplCpu::TotalEnergy() {
  CpuEnergy energy;
  auto package = package_->Read();
  if (!package) return Fail(package.error());
  energy.package_mj = static_cast<double>(package->energy_uj) / 1000.0;
  energy.wrap_uncertain = package->wrap_uncertain;
  energy.late_reads = package->late_reads;
  energy.counter_resets = package->resets;
  if (dram_) {
    auto dram = dram_->Read();
    if (!dram) return Fail(dram.error());
    energy.dram_mj = static_cast<double>(dram->energy_uj) / 1000.0;
    energy.wrap_uncertain = energy.wrap_uncertain || dram->wrap_uncertain;
    energy.late_reads += dram->late_reads;
    energy.counter_resets += dram->resets;
  }
  return energy;
}

void RaplCpu::Poll() {
  // A failure is kept by nobody here: the caller's next Read() fails the
  // same way, or reports what the counter kept (a reset, a late read).
  (void)package_->Poll();
  if (dram_) (void)dram_->Poll();
}

RaplCpuSet::RaplCpuSet(std::vector<std::unique_ptr<Cpu>> cpus, std::vector<RaplCpu*> rapl_cpus, bool wrap_guard)
    : CpuSet(std::move(cpus)), rapl_cpus_(std::move(rapl_cpus)) {
  if (!wrap_guard || rapl_cpus_.empty()) return;
  std::chrono::nanoseconds shortest = std::chrono::nanoseconds::max();
  for (RaplCpu* cpu : rapl_cpus_) shortest = std::min(shortest, cpu->max_safe_read_interval());
  guard_period_ = std::max<std::chrono::nanoseconds>(shortest / 2, std::chrono::microseconds(100));
  guard_ = std::jthread([this](std::stop_token stop) { GuardLoop(stop); });
}

RaplCpuSet::~RaplCpuSet() {
  if (guard_.joinable()) {
    guard_.request_stop();
    cv_.notify_all();
    guard_.join();
  }
}

std::uint64_t RaplCpuSet::guard_passes() {
  std::lock_guard lock(mu_);
  return guard_passes_;
}

bool RaplCpuSet::WaitForGuardPasses(std::uint64_t passes, std::chrono::nanoseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return guard_passes_ >= passes; });
}

void RaplCpuSet::GuardLoop(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    lock.unlock();
    for (RaplCpu* cpu : rapl_cpus_) cpu->Poll();
    lock.lock();
    ++guard_passes_;
    cv_.notify_all();
    cv_.wait_for(lock, stop, guard_period_, [] { return false; });
  }
}

namespace {

// "intel-rapl:3" -> 3; anything else (including subzones "intel-rapl:0:1") -> nullopt.
std::optional<unsigned int> TopLevelZoneIndex(const std::string& name) {
  constexpr std::string_view kPrefix = "intel-rapl:";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  std::string_view rest = std::string_view(name).substr(kPrefix.size());
  unsigned int index = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
  if (ec != std::errc() || end != rest.data() + rest.size() || rest.empty()) return std::nullopt;
  return index;
}

Result<std::unique_ptr<RaplCounter>> OpenCounter(const fs::path& zone, double max_power_w, const Clock& clock) {
  auto range_uj = ReadSysfsUint((zone / "max_energy_range_uj").string());
  if (!range_uj) return Fail(range_uj.error());
  if (*range_uj == 0) {
    return Fail(ErrorCode::kIoError,
                fmt::format("{}: max_energy_range_uj is 0; the zone cannot count energy", zone.string()));
  }
  // range [µJ] / power [W] = range / (power * 1e6) s.
  const double seconds = static_cast<double>(*range_uj) / (max_power_w * 1e6);
  const auto interval = std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9));
  return std::make_unique<RaplCounter>((zone / "energy_uj").string(), *range_uj, interval, clock);
}

}  // namespace

Result<std::unique_ptr<CpuSet>> OpenRaplCpus(const std::string& root, const CpuOptions& options,
                                             const Clock& clock) {
  std::vector<std::pair<unsigned int, fs::path>> zones;
  std::error_code ec;
  if (!fs::exists(root, ec)) {
    return std::unique_ptr<CpuSet>(std::make_unique<RaplCpuSet>(std::vector<std::unique_ptr<Cpu>>{},
                                                                std::vector<RaplCpu*>{}, false));
  }
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (auto index = TopLevelZoneIndex(it->path().filename().string())) zones.emplace_back(*index, it->path());
  }
  if (ec) return Fail(ErrorFromErrno(ec.value(), root));
  std::sort(zones.begin(), zones.end());

  std::vector<std::unique_ptr<Cpu>> cpus;
  std::vector<RaplCpu*> rapl_cpus;
  for (const auto& [index, zone] : zones) {
    auto name = ReadSysfsFile((zone / "name").string());
    if (!name) {
      cpus.push_back(std::make_unique<UnopenedCpu>(zone.filename().string(), name.error()));
      continue;
    }
    // Only package zones are CPUs (psys and others are platform-wide).
    if (!name->starts_with("package")) continue;
    auto package = OpenCounter(zone, options.assumed_max_zone_power_w, clock);
    if (!package) {
      cpus.push_back(std::make_unique<UnopenedCpu>(*name, package.error()));
      continue;
    }

    std::unique_ptr<RaplCounter> dram;
    std::optional<Error> dram_error;
    std::vector<fs::path> subzones;
    for (fs::directory_iterator it(zone, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().filename().string().starts_with(zone.filename().string() + ":")) subzones.push_back(it->path());
    }
    std::sort(subzones.begin(), subzones.end());
    for (const fs::path& sub : subzones) {
      auto sub_name = ReadSysfsFile((sub / "name").string());
      if (!sub_name || *sub_name != "dram") continue;
      auto counter = OpenCounter(sub, options.assumed_max_zone_power_w, clock);
      if (!counter) {
        dram_error = counter.error();
      } else {
        dram = std::move(*counter);
      }
      break;
    }
    if (dram_error) {
      cpus.push_back(std::make_unique<UnopenedCpu>(*name, *dram_error));
      continue;
    }
    auto cpu = std::make_unique<RaplCpu>(*name, std::move(*package), std::move(dram));
    // Take the origin now, so energy counts from opening. A permission failure
    // is reported on TotalEnergy(), so the package can still be listed.
    cpu->Poll();
    rapl_cpus.push_back(cpu.get());
    cpus.push_back(std::move(cpu));
  }
  return std::unique_ptr<CpuSet>(std::make_unique<RaplCpuSet>(std::move(cpus), std::move(rapl_cpus),
                                                              options.wrap_guard));
}

}  // namespace zeus::device::rapl
