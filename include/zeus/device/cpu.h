// Copyright 2026 The Zeus C++ Authors.
//
// The CPU seam: package and DRAM energy (Linux RAPL through powercap in the
// one implementation today). Higher layers see only `Cpu` and `CpuSet`.
//
// Thread-safety: Cpu::TotalEnergy may be called from several threads at once.

#ifndef ZEUS_DEVICE_CPU_H_
#define ZEUS_DEVICE_CPU_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::device {

// Energy accumulated since the Cpu was opened, corrected for counter
// wraparound.
struct CpuEnergy {
  double package_mj = 0.0;
  // Absent when the package has no DRAM domain (e.g. AMD Zen, most desktops).
  std::optional<double> dram_mj;
  // True when, since the previous TotalEnergy() call, two reads of a counter
  // (this call's, or the wrap guard's in between) were further apart than its
  // safe read interval (see Cpu::max_safe_read_interval), so a second wrap
  // between them could have been missed and the figure may be low.
  bool wrap_uncertain = false;
  // Counts since the Cpu was opened, over all its counters, of reads (the
  // caller's or the wrap guard's) that came later than the safe interval, and
  // of counter resets. Exact for any two readings, however many windows
  // overlap: if `late_reads` differs, a wrap between them may have been
  // missed; if `counter_resets` differs, their difference is not the energy
  // in between (the energy across a reset is unknown).
  std::uint64_t late_reads = 0;
  std::uint64_t counter_resets = 0;
};

// One CPU package (socket or die).
class Cpu {
 public:
  virtual ~Cpu() = default;
  // The zone's name, e.g. "package-0".
  virtual const std::string& name() const = 0;
  virtual bool has_dram() const = 0;
  // The longest gap between two reads of a counter that cannot miss a
  // wraparound: the counter's range divided by the highest power the zone is
  // assumed to draw. Reads further apart may lose a whole counter range.
  virtual std::chrono::nanoseconds max_safe_read_interval() const = 0;
  // Reads the counters and returns the accumulated energy. Errors name the
  // file that failed and how to fix it (e.g. permission since Linux 5.10). A
  // counter reset (a decrease no plausible power explains) seen since the
  // previous call is an error once; later calls count on from the new value.
  virtual Result<CpuEnergy> TotalEnergy() = 0;
};

class CpuSet {
 public:
  explicit CpuSet(std::vector<std::unique_ptr<Cpu>> cpus) : cpus_(std::move(cpus)) {}
  virtual ~CpuSet() = default;
  CpuSet(const CpuSet&) = delete;
  CpuSet& operator=(const CpuSet&) = delete;

  std::size_t size() const { return cpus_.size(); }
  bool empty() const { return cpus_.empty(); }
  // REQUIRES: index < size().
  Cpu& cpu(std::size_t index) const { return *cpus_.at(index); }

 private:
  std::vector<std::unique_ptr<Cpu>> cpus_;
};

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_CPU_H_
