// Copyright 2026 The Zeus C++ Authors.
//
// One RAPL energy counter (a powercap zone's energy_uj) read into a 64-bit
// accumulated count that survives wraparound.
//
// Wraparound: energy_uj counts up to max_energy_range_uj and restarts from 0.
// Between two reads the accumulator adds (now - last) modulo the range, which
// is exact as long as the counter wrapped at most once in between. A second
// wrap is invisible, so reads must be at most one range's worth of energy
// apart: max_safe_read_interval = range / assumed maximum power (e.g. a
// 262 kJ range at 1000 W: 262 s; 65.5 kJ: 65 s). A read later than that still
// counts one wrap but is flagged `wrap_uncertain`. The RAPL CpuSet keeps a
// guard thread that reads every counter at half that interval.
//
// Thread-safety: Read() may be called from several threads.

#ifndef ZEUS_DEVICE_RAPL_RAPL_COUNTER_H_
#define ZEUS_DEVICE_RAPL_RAPL_COUNTER_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"

namespace zeus::device::rapl {

// The pure wraparound arithmetic.
class WrapAccumulator {
 public:
  // REQUIRES: range_uj > 0.
  explicit WrapAccumulator(std::uint64_t range_uj) : range_uj_(range_uj) {}
  // Takes a raw counter value and returns the energy accumulated since the
  // first value passed, in µJ. A value below the previous one is one wrap.
  std::uint64_t Update(std::uint64_t raw_uj);
  std::uint64_t total_uj() const { return total_uj_; }
  std::uint64_t wraps() const { return wraps_; }

 private:
  std::uint64_t range_uj_;
  std::optional<std::uint64_t> last_raw_uj_;
  std::uint64_t total_uj_ = 0;
  std::uint64_t wraps_ = 0;
};

// Reads a whole small sysfs file, trimmed. Errors carry errno's translation
// and name the path.
Result<std::string> ReadSysfsFile(const std::string& path);
// ReadSysfsFile + an unsigned decimal parse; a non-number names the file.
Result<std::uint64_t> ReadSysfsUint(const std::string& path);

struct CounterReading {
  std::uint64_t energy_uj = 0;  // accumulated since the first read
  bool wrap_uncertain = false;  // this read came later than the safe interval
};

class RaplCounter {
 public:
  // `energy_path` is the zone's energy_uj file.
  RaplCounter(std::string energy_path, std::uint64_t range_uj, std::chrono::nanoseconds max_safe_read_interval,
              const Clock& clock);
  RaplCounter(const RaplCounter&) = delete;
  RaplCounter& operator=(const RaplCounter&) = delete;

  // Reads energy_uj and folds it into the accumulated count. The first
  // successful read sets the origin (energy 0). A permission failure names
  // the file and the fix.
  Result<CounterReading> Read();

  const std::string& path() const { return energy_path_; }
  std::chrono::nanoseconds max_safe_read_interval() const { return max_safe_read_interval_; }
  std::uint64_t range_uj() const { return range_uj_; }

 private:
  const std::string energy_path_;
  const std::uint64_t range_uj_;
  const std::chrono::nanoseconds max_safe_read_interval_;
  const Clock& clock_;
  std::mutex mu_;
  WrapAccumulator accumulator_;                          // guarded by mu_
  std::optional<std::chrono::nanoseconds> last_read_;    // guarded by mu_
};

}  // namespace zeus::device::rapl

#endif  // ZEUS_DEVICE_RAPL_RAPL_COUNTER_H_
