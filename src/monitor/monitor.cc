// Copyright 2026 The Zeus C++ Authors.

#include "zeus/monitor/monitor.h"

#include <algorithm>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

namespace zeus::monitor {
namespace {

using std::chrono::nanoseconds;

struct GpuStart {
  std::optional<std::uint64_t> counter_mj;  // counter GPUs
  std::optional<double> cumulative_j;       // integrated GPUs
  std::uint64_t failures = 0;
  std::uint64_t late_reads = 0;  // integrated GPUs: reads that took too long
  bool read_late = false;        // integrated GPUs: a read too long in progress now
  std::optional<Error> error;
};

struct CpuStart {
  std::optional<device::CpuEnergy> energy;
  std::optional<Error> error;
};

struct Snapshot {
  nanoseconds time{0};
  std::vector<GpuStart> gpus;
  std::vector<CpuStart> cpus;
  std::optional<device::SocEnergy> soc;
};

// One kind of an SoC's rails over a window: its energy, or nothing with the
// failure when a read of it failed in between.
std::optional<double> SocKindEnergy(const std::optional<device::SocRailEnergy>& begin,
                                    const std::optional<device::SocRailEnergy>& end, std::string_view window,
                                    std::vector<Error>& errors) {
  if (!begin || !end) return std::nullopt;
  if (end->failed_reads != begin->failed_reads) {
    // No window name or count in the text: Python's "once per place" filter
    // must recognise the warning made of it when it repeats.
    (void)window;
    errors.push_back(end->last_error.value_or(Error(ErrorCode::kIoError, "a rail read failed"))
                         .WithContext("a read of this rail failed during the window, so its energy is unknown"));
    return std::nullopt;
  }
  return end->energy_mj - begin->energy_mj;
}

// Transparent hashing so lookups by string_view do not allocate.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace

std::string_view EnergySourceName(EnergySource source) {
  switch (source) {
    case EnergySource::kCounter: return "counter";
    case EnergySource::kIntegratedPower: return "integrated_power";
    case EnergySource::kInstantEstimate: return "instant_estimate";
  }
  return "counter";
}

std::string CsvEscape(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

struct Monitor::Impl {
  const device::GpuSet* gpus = nullptr;
  const device::CpuSet* cpus = nullptr;
  MonitorOptions options;
  const Clock* clock = nullptr;
  std::vector<std::size_t> gpu_indices;
  std::vector<std::size_t> cpu_indices;
  std::vector<bool> has_counter;  // per gpu_indices entry
  std::unique_ptr<PowerMonitor> owned_power_monitor;
  PowerMonitor* power_monitor = nullptr;  // owned_power_monitor or options.power_source

  mutable std::mutex mu;
  std::unordered_map<std::string, Snapshot, NameHash, std::equal_to<>> windows;  // guarded by mu

  std::mutex log_mu;
  std::ofstream log;  // guarded by log_mu

  // The clock is read before the device counters at a window's begin and
  // after them at its end, so the window's duration encloses the interval the
  // counters measured: an average (energy / duration) cannot exceed the power
  // drawn because of the time the reads took.
  Snapshot Take(bool at_end) {
    if (options.sync) options.sync();
    if (power_monitor) power_monitor->SampleOnce();
    Snapshot snap;
    if (!at_end) snap.time = clock->Now();
    snap.gpus.resize(gpu_indices.size());
    for (std::size_t k = 0; k < gpu_indices.size(); ++k) {
      if (!has_counter[k]) continue;
      auto energy = gpus->gpu(gpu_indices[k]).TotalEnergyMj();
      if (energy) {
        snap.gpus[k].counter_mj = *energy;
      } else {
        snap.gpus[k].error = energy.error();
      }
    }
    snap.cpus.resize(cpu_indices.size());
    for (std::size_t k = 0; k < cpu_indices.size(); ++k) {
      auto energy = cpus->cpu(cpu_indices[k]).TotalEnergy();
      if (energy) {
        snap.cpus[k].energy = *energy;
      } else {
        snap.cpus[k].error = energy.error();
      }
    }
    if (options.soc != nullptr) snap.soc = options.soc->TotalEnergy();
    if (at_end) snap.time = clock->Now();
    for (std::size_t k = 0; k < gpu_indices.size(); ++k) {
      if (has_counter[k]) continue;
      const std::size_t i = gpu_indices[k];
      GpuStart& g = snap.gpus[k];
      g.failures = power_monitor->ReadFailures(i);
      g.late_reads = power_monitor->LateReads(i);
      g.read_late = power_monitor->ReadLateAt(i, snap.time);
      auto energy = power_monitor->CumulativeEnergyJ(i, snap.time);
      if (energy) {
        g.cumulative_j = *energy;
      } else {
        g.error = energy.error();
      }
    }
    return snap;
  }

  GpuMeasurement MeasureGpu(std::size_t k, const GpuStart& begin, const GpuStart& end, nanoseconds duration,
                            std::string_view window) {
    const std::size_t i = gpu_indices[k];
    GpuMeasurement m;
    m.index = i;
    m.source = has_counter[k] ? EnergySource::kCounter : EnergySource::kIntegratedPower;
    auto fail = [&](Error e) {
      m.error = e.WithContext(fmt::format("window \"{}\"", window));
      return m;
    };
    if (begin.error) return fail(*begin.error);
    if (end.error) return fail(*end.error);
    if (has_counter[k]) {
      if (*end.counter_mj < *begin.counter_mj) {
        return fail(Error(ErrorCode::kFailedPrecondition,
                          fmt::format("the energy counter of GPU {} went backwards from {} to {} mJ (the counter was "
                                      "reset or the driver reloaded); this GPU's energy is unknown for the window",
                                      i, *begin.counter_mj, *end.counter_mj)));
      }
      m.energy_j = static_cast<double>(*end.counter_mj - *begin.counter_mj) / 1000.0;
      // A counter that did not move in a non-empty window has not ticked in
      // it (its update period can exceed counter_update_period): never a
      // certain 0.
      const bool unmoved = m.energy_j == 0.0 && duration > nanoseconds(0);
      if (duration < options.counter_update_period || unmoved) {
        m.uncertain = true;
        if (m.energy_j == 0.0) {
          // The counter has not ticked: estimate from the instant power.
          auto power = gpus->gpu(i).InstantPowerMw();
          if (!power) power = gpus->gpu(i).PowerUsageMw();
          if (power) {
            m.energy_j = *power / 1000.0 * ToSeconds(duration);
            m.source = EnergySource::kInstantEstimate;
          }
        }
      }
    } else {
      if (end.failures != begin.failures) {
        return fail(Error(ErrorCode::kDeviceLost,
                          fmt::format("{} power reading{} of GPU {} failed during the window; its energy is unknown",
                                      end.failures - begin.failures, end.failures - begin.failures == 1 ? "" : "s",
                                      i)));
      }
      m.energy_j = *end.cumulative_j - *begin.cumulative_j;
      // Too short to be sampled, or the sampler's read was slow or hung in
      // the window, so the last value was held over part of it.
      m.uncertain = duration < power_monitor->interval() || end.late_reads != begin.late_reads || end.read_late;
    }
    return m;
  }

  void Log(const Measurement& m) {
    std::lock_guard lock(log_mu);
    if (!log.is_open()) return;
    std::string row = CsvEscape(m.name) + fmt::format(",{:.6f}", m.time_s);
    for (const GpuMeasurement& g : m.gpus) row += g.error ? "," : fmt::format(",{:.6f}", g.energy_j);
    for (const CpuMeasurement& c : m.cpus) {
      row += c.error ? "," : fmt::format(",{:.6f}", c.package_energy_j);
      row += (c.error || !c.dram_energy_j) ? "," : fmt::format(",{:.6f}", *c.dram_energy_j);
    }
    row += fmt::format(",{:.6f}\n", m.total_energy_j);
    log << row;
    log.flush();
  }
};

Monitor::Monitor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Monitor::~Monitor() = default;

Result<std::unique_ptr<Monitor>> Monitor::Create(const device::GpuSet* gpus, const device::CpuSet* cpus,
                                                 MonitorOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->gpus = gpus;
  impl->cpus = cpus;
  impl->clock = options.clock != nullptr ? options.clock : &SteadyClock();
  const std::size_t gpu_count = gpus != nullptr ? gpus->size() : 0;
  const std::size_t cpu_count = cpus != nullptr ? cpus->size() : 0;
  auto pick = [](const std::optional<std::vector<std::size_t>>& chosen, std::size_t count,
                 const char* kind) -> Result<std::vector<std::size_t>> {
    std::vector<std::size_t> out;
    if (!chosen) {
      for (std::size_t i = 0; i < count; ++i) out.push_back(i);
      return out;
    }
    for (std::size_t i : *chosen) {
      if (i >= count) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("{} {} does not exist: {} {}{} visible", kind, i, count, kind, count == 1 ? "" : "s"));
      }
      if (std::find(out.begin(), out.end(), i) != out.end()) {
        return Fail(ErrorCode::kInvalidArgument, fmt::format("{} {} is listed twice", kind, i));
      }
      out.push_back(i);
    }
    return out;
  };
  auto gpu_indices = pick(options.gpu_indices, gpu_count, "GPU");
  if (!gpu_indices) return Fail(gpu_indices.error());
  auto cpu_indices = pick(options.cpu_indices, cpu_count, "CPU");
  if (!cpu_indices) return Fail(cpu_indices.error());
  impl->gpu_indices = *gpu_indices;
  impl->cpu_indices = *cpu_indices;

  std::vector<std::size_t> integrated;
  for (std::size_t i : impl->gpu_indices) {
    const bool counter = gpus->gpu(i).SupportsEnergyCounter();
    impl->has_counter.push_back(counter);
    if (!counter) integrated.push_back(i);
  }
  if (!integrated.empty() && options.power_source != nullptr) {
    const auto& sampled = options.power_source->gpu_indices();
    for (std::size_t i : integrated) {
      if (std::find(sampled.begin(), sampled.end(), i) == sampled.end()) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("GPU {} has no energy counter and the given PowerMonitor does not sample it", i));
      }
    }
    impl->power_monitor = options.power_source;
  } else if (!integrated.empty()) {
    PowerMonitorOptions pm = options.power_monitor;
    if (pm.clock == nullptr) pm.clock = impl->clock;
    auto power_monitor = PowerMonitor::Create(*gpus, integrated, pm);
    if (!power_monitor) return Fail(power_monitor.error());
    impl->owned_power_monitor = std::move(*power_monitor);
    impl->power_monitor = impl->owned_power_monitor.get();
  }

  if (options.log_csv_path) {
    const std::string& path = *options.log_csv_path;
    std::ifstream existing(path);
    const bool fresh = !existing.good() || existing.peek() == std::ifstream::traits_type::eof();
    impl->log.open(path, std::ios::app);
    if (!impl->log) return Fail(ErrorFromErrno(errno, path).WithContext("opening the window log"));
    if (fresh) {
      std::string header = "window,time_s";
      for (std::size_t i : impl->gpu_indices) header += fmt::format(",gpu{}_energy_j", i);
      for (std::size_t i : impl->cpu_indices) header += fmt::format(",cpu{}_energy_j,dram{}_energy_j", i, i);
      impl->log << header << ",total_energy_j\n";
      impl->log.flush();
    }
  }
  impl->options = std::move(options);
  return std::unique_ptr<Monitor>(new Monitor(std::move(impl)));
}

Status Monitor::BeginWindow(std::string_view name, bool restart) {
  if (restart) {
    Snapshot snap = impl_->Take(/*at_end=*/false);
    std::lock_guard lock(impl_->mu);
    impl_->windows.insert_or_assign(std::string(name), std::move(snap));
    return OkStatus();
  }
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->windows.contains(name)) {
      return Fail(ErrorCode::kAlreadyExists,
                  fmt::format("window \"{}\" is already open; end it first or use another name", name));
    }
  }
  Snapshot snap = impl_->Take(/*at_end=*/false);
  std::lock_guard lock(impl_->mu);
  auto [it, inserted] = impl_->windows.try_emplace(std::string(name), std::move(snap));
  if (!inserted) {
    return Fail(ErrorCode::kAlreadyExists, fmt::format("window \"{}\" was opened twice concurrently", name));
  }
  return OkStatus();
}

Result<Measurement> Monitor::EndWindow(std::string_view name, bool cancel) { return End(name, cancel, false); }

Result<Measurement> Monitor::EndWindowAndRestart(std::string_view name) { return End(name, false, true); }

Result<Measurement> Monitor::End(std::string_view name, bool cancel, bool restart) {
  Snapshot begin;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->windows.find(name);
    if (it == impl_->windows.end()) {
      return Fail(ErrorCode::kNotFound, fmt::format("window \"{}\" was never begun (or has ended already)", name));
    }
    begin = std::move(it->second);
    impl_->windows.erase(it);
  }
  Measurement m;
  m.name = std::string(name);
  if (cancel) {
    m.cancelled = true;
    if (impl_->options.soc != nullptr) {
      // Zeus zeroes a cancelled window's SoC fields that the SoC measures.
      SocMeasurement zero;
      for (const device::SocRail& rail : impl_->options.soc->rails()) {
        switch (rail.kind) {
          case device::SocRailKind::kCpu: zero.cpu_energy_mj = 0.0; break;
          case device::SocRailKind::kGpu: zero.gpu_energy_mj = 0.0; break;
          case device::SocRailKind::kTotal: zero.total_energy_mj = 0.0; break;
        }
      }
      m.soc = std::move(zero);
    }
    return m;
  }
  Snapshot end = impl_->Take(/*at_end=*/true);
  if (restart) {
    std::lock_guard lock(impl_->mu);
    impl_->windows.try_emplace(std::string(name), end);
  }
  const nanoseconds duration = end.time - begin.time;
  m.time_s = ToSeconds(duration);
  for (std::size_t k = 0; k < impl_->gpu_indices.size(); ++k) {
    GpuMeasurement g = impl_->MeasureGpu(k, begin.gpus[k], end.gpus[k], duration, name);
    if (!g.error) m.total_energy_j += g.energy_j;
    m.gpus.push_back(std::move(g));
  }
  for (std::size_t k = 0; k < impl_->cpu_indices.size(); ++k) {
    CpuMeasurement c;
    c.index = impl_->cpu_indices[k];
    const CpuStart& b = begin.cpus[k];
    const CpuStart& e = end.cpus[k];
    if (b.error || e.error) {
      c.error = (b.error ? *b.error : *e.error).WithContext(fmt::format("window \"{}\"", name));
    } else if (e.energy->counter_resets != b.energy->counter_resets) {
      c.error = Error(ErrorCode::kIoError,
                      fmt::format("window \"{}\": a RAPL counter of CPU {} was reset during the window (the reading "
                                  "after the reset said so); the energy across a reset is unknown",
                                  name, c.index));
    } else {
      c.package_energy_j = (e.energy->package_mj - b.energy->package_mj) / 1000.0;
      if (b.energy->dram_mj && e.energy->dram_mj) c.dram_energy_j = (*e.energy->dram_mj - *b.energy->dram_mj) / 1000.0;
      // Counts, not the end's flag: exact for overlapping windows too.
      c.uncertain = e.energy->late_reads != b.energy->late_reads;
      m.total_energy_j += c.package_energy_j + c.dram_energy_j.value_or(0.0);
    }
    m.cpus.push_back(std::move(c));
  }
  if (begin.soc && end.soc) {
    SocMeasurement soc;
    soc.cpu_energy_mj = SocKindEnergy(begin.soc->cpu, end.soc->cpu, name, soc.errors);
    soc.gpu_energy_mj = SocKindEnergy(begin.soc->gpu, end.soc->gpu, name, soc.errors);
    soc.total_energy_mj = SocKindEnergy(begin.soc->total, end.soc->total, name, soc.errors);
    m.soc = std::move(soc);
  }
  impl_->Log(m);
  return m;
}

std::vector<std::string> Monitor::OpenWindows() const {
  std::lock_guard lock(impl_->mu);
  std::vector<std::string> names;
  for (const auto& [name, snap] : impl_->windows) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

const std::vector<std::size_t>& Monitor::gpu_indices() const { return impl_->gpu_indices; }
const std::vector<std::size_t>& Monitor::cpu_indices() const { return impl_->cpu_indices; }
PowerMonitor* Monitor::power_monitor() const { return impl_->power_monitor; }

}  // namespace zeus::monitor
