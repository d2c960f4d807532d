// Copyright 2026 The Zeus C++ Authors.
//
// zeusd's CPU routes (private to src/zeusd): GET /cpu/get_cumulative_energy
// and GET /cpu/get_power over the daemon's CpuSet (RAPL), and the reading
// both they and the CPU power streams take.
//
// Thread-safety: Energy and Power may be called concurrently (Cpu objects
// may be read from several threads).

#ifndef ZEUS_SRC_ZEUSD_CPU_ROUTES_H_
#define ZEUS_SRC_ZEUSD_CPU_ROUTES_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "http/http.h"
#include "zeus/base/error.h"
#include "zeus/device/cpu.h"
#include "zeusd/query.h"

namespace zeus::zeusd {

// One CPU package's energy since it was opened.
struct CpuReading {
  double package_mj = 0;
  std::optional<double> dram_mj;  // unset: the package has no DRAM domain
};

// Reads CPU `id` of `cpus`; the device's error otherwise.
Result<CpuReading> ReadCpu(const device::CpuSet& cpus, std::size_t id);

// Average power in mW of `delta_mj` over `elapsed_s`, rounded; 0 when either
// is not positive (a counter that did not move, or no time between reads).
std::uint64_t PowerMw(double delta_mj, double elapsed_s);

class CpuRoutes {
 public:
  // `cpus` (null: none) must outlive this. /cpu/get_power measures over
  // `power_window`; answers are stamped with `unix_time_ms` (null: the system
  // clock).
  CpuRoutes(const device::CpuSet* cpus, std::chrono::microseconds power_window,
            std::function<std::int64_t()> unix_time_ms);

  std::size_t count() const { return cpus_ == nullptr ? 0 : cpus_->size(); }

  // GET /cpu/get_cumulative_energy?cpu_ids=...&cpu=...&dram=...: each
  // package's energy in uJ, null where not asked for or not available.
  http::HttpResponse Energy(const Target& target);
  // GET /cpu/get_power?cpu_ids=...: two reads `power_window` apart.
  http::HttpResponse Power(const Target& target);

 private:
  const device::CpuSet* cpus_;
  std::chrono::microseconds power_window_;
  std::function<std::int64_t()> unix_time_ms_;
};

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_CPU_ROUTES_H_
