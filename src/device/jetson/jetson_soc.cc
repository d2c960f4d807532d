// Copyright 2026 The Zeus C++ Authors.

#include "device/jetson/jetson_soc.h"

#include <sys/utsname.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "zeus/base/log.h"

namespace zeus::device::jetson {
namespace fs = std::filesystem;

JetsonSoc::JetsonSoc(std::vector<Ina3221Rail> rails, std::vector<Error> problems,
                     std::chrono::nanoseconds sample_period, const Clock& clock)
    : problems_(std::move(problems)), clock_(clock), sample_period_(sample_period) {
  for (Ina3221Rail& rail : rails) {
    public_rails_.push_back(rail.rail);
    rails_.push_back(RailState{std::move(rail), {}});
  }
  {
    std::lock_guard lock(mu_);
    last_step_ = clock_.Now();
  }
  if (sample_period_ > std::chrono::nanoseconds(0)) {
    sampler_ = std::jthread([this](std::stop_token stop) { SamplerLoop(stop); });
  }
}

JetsonSoc::~JetsonSoc() {
  if (sampler_.joinable()) {
    sampler_.request_stop();
    cv_.notify_all();
    sampler_.join();
  }
}

void JetsonSoc::StepLocked() {
  const std::chrono::nanoseconds now = clock_.Now();
  const double dt_s = std::chrono::duration<double>(std::max(now - last_step_, std::chrono::nanoseconds(0))).count();
  last_step_ = std::max(now, last_step_);
  for (RailState& state : rails_) {
    auto power_mw = ReadRailPowerMw(state.rail.source);
    if (power_mw) {
      state.energy.energy_mj += *power_mw * dt_s;
      continue;
    }
    ++state.energy.failed_reads;
    state.energy.last_error =
        power_mw.error().WithContext(fmt::format("reading the {} rail '{}' of the NVIDIA Jetson",
                                                 SocRailKindName(state.rail.rail.kind), state.rail.rail.name));
    // Once per file: a rail that keeps failing would otherwise log ten times a second.
    LogOnce(fmt::format("jetson-rail-read:{}", state.rail.rail.sources),
            LogRecord{LogLevel::kWarning, "soc",
                      fmt::format("{}; the energy of this rail is unknown for every window over a failed read, the "
                                  "other rails are still measured",
                                  state.energy.last_error->message())});
  }
}

SocEnergy JetsonSoc::TotalEnergy() {
  std::lock_guard lock(mu_);
  StepLocked();
  SocEnergy out;
  for (const RailState& state : rails_) {
    switch (state.rail.rail.kind) {
      case SocRailKind::kCpu: out.cpu = state.energy; break;
      case SocRailKind::kGpu: out.gpu = state.energy; break;
      case SocRailKind::kTotal: out.total = state.energy; break;
    }
  }
  return out;
}

std::uint64_t JetsonSoc::sampler_steps() {
  std::lock_guard lock(mu_);
  return sampler_steps_;
}

bool JetsonSoc::WaitForSamplerSteps(std::uint64_t steps, std::chrono::nanoseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return sampler_steps_ >= steps; });
}

void JetsonSoc::SamplerLoop(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    // The wait is on real time: a manual clock (the emulator's) that does not
    // move must not make this loop spin; the energy is on clock_'s time.
    cv_.wait_for(lock, stop, sample_period_, [] { return false; });
    if (stop.stop_requested()) break;
    StepLocked();
    ++sampler_steps_;
    cv_.notify_all();
  }
}

JetsonPresence DetectJetson(const std::string& root) {
  const fs::path base(root);
  const fs::path release = base / "etc/nv_tegra_release";
  const fs::path tegra = base / "usr/lib/aarch64-linux-gnu/tegra";
  std::error_code ec;
  const bool real_root = fs::path(root).lexically_normal() == fs::path("/");
  if (real_root) {
    // Zeus also requires an aarch64 Linux machine; a fake tree (a test's, a
    // host's root mounted elsewhere) is taken at its word.
    struct utsname uts{};
    if (::uname(&uts) == 0 && std::string_view(uts.machine) != "aarch64") {
      return {false, fmt::format("not an NVIDIA Jetson: this machine is {}, not aarch64", uts.machine)};
    }
  }
  if (fs::exists(release, ec)) return {true, release.string()};
  if (fs::exists(tegra, ec)) return {true, tegra.string()};
  return {false, fmt::format("not an NVIDIA Jetson: neither {} nor {} exists", release.string(), tegra.string())};
}

Result<std::unique_ptr<Soc>> OpenJetson(const std::string& root, std::chrono::nanoseconds sample_period,
                                        const Clock& clock) {
  JetsonPresence presence = DetectJetson(root);
  if (!presence.present) return Fail(ErrorCode::kUnavailable, presence.evidence);
  RailDiscovery found = DiscoverIna3221Rails(root);

  // The first readable rail of each kind is measured; a rail that cannot be
  // read now is a problem, not a rail.
  std::vector<Ina3221Rail> rails;
  std::vector<Error> problems = std::move(found.problems);
  for (Ina3221Rail& rail : found.rails) {
    const bool taken = std::any_of(rails.begin(), rails.end(),
                                   [&](const Ina3221Rail& r) { return r.rail.kind == rail.rail.kind; });
    if (taken) continue;  // e.g. VDD_CPU_GPU_CV after VDD_CPU: Zeus too measures one rail per kind
    if (auto power = ReadRailPowerMw(rail.source); !power) {
      problems.push_back(power.error().WithContext(
          fmt::format("rail '{}' not measured", rail.rail.name)));
      continue;
    }
    rails.push_back(std::move(rail));
  }
  for (const Error& problem : problems) {
    LogOnce(fmt::format("jetson-rail-open:{}", problem.message()),
            LogRecord{LogLevel::kWarning, "soc", fmt::format("NVIDIA Jetson: {}", problem.message())});
  }
  if (rails.empty()) {
    std::string why;
    for (const Error& problem : problems) why += fmt::format("; {}", problem.message());
    return Fail(ErrorCode::kUnavailable,
                fmt::format("NVIDIA Jetson found ({}) but no readable INA3221 rail named for the CPU, GPU or total "
                            "power under {} or {}{}",
                            presence.evidence, found.searched.at(0), found.searched.at(1), why));
  }
  return std::unique_ptr<Soc>(std::make_unique<JetsonSoc>(std::move(rails), std::move(problems), sample_period, clock));
}

}  // namespace zeus::device::jetson
