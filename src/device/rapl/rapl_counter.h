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
// Reset: a decrease that a wrap cannot explain is a counter reset (CPU
// hotplug, resume from suspend, a driver reload). The rule: the energy a wrap
// would imply, (range - previous) + now, divided by the time since the
// previous read plus kCounterUpdateSlack, exceeds the assumed maximum power
// (range / max_safe_read_interval). The energy across a reset is unknown: the
// read is an error, and later reads count on from the new value.
//
// The guard's reads (Poll) keep what they saw for the caller: the next Read()
// reports a late guard read as `wrap_uncertain` and a reset found by the guard
// as its error, so the window that spans either one is never reported as
// certain.
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
  // Takes `raw_uj` as the new previous value without adding energy (after a
  // counter reset).
  void Restart(std::uint64_t raw_uj) { last_raw_uj_ = raw_uj; }
  // The previous raw value, if any.
  std::optional<std::uint64_t> last_raw_uj() const { return last_raw_uj_; }
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

// RAPL counters update about every millisecond (Intel SDM), so the energy
// seen between two reads may cover up to one update period more than the
// time between them; the reset rule allows this much, and more, for it.
inline constexpr std::chrono::milliseconds kCounterUpdateSlack{10};

struct CounterReading {
  std::uint64_t energy_uj = 0;  // accumulated since the first read
  // This read, or a guard read since the previous Read(), came later than the
  // safe interval after the read before it.
  bool wrap_uncertain = false;
  // Since construction, by Read() and Poll() alike: late reads, resets.
  std::uint64_t late_reads = 0;
  std::uint64_t resets = 0;
};

// Whether a decrease of a counter from `previous_uj` to `now_uj` within
// `elapsed` is a reset rather than a wrap: see the file comment.
// REQUIRES: now_uj < previous_uj <= range_uj; max_safe_read_interval > 0.
bool IsCounterReset(std::uint64_t previous_uj, std::uint64_t now_uj, std::chrono::nanoseconds elapsed,
                    std::uint64_t range_uj, std::chrono::nanoseconds max_safe_read_interval);

// The error for an energy_uj that cannot be read (`cause` from
// ReadSysfsUint), with the reason a person can act on: for EACCES/EPERM it
// depends on `is_root` (not root: root-only since Linux 5.10; as root: a
// user-namespace/rootless container or a security module), ENOENT (no
// counter: a masked /sys in a container), anything else names the errno.
// Other causes (a garbage value) are returned unchanged.
Error UnreadableCounterError(const Error& cause, const std::string& path, bool is_root);

class RaplCounter {
 public:
  // `energy_path` is the zone's energy_uj file.
  RaplCounter(std::string energy_path, std::uint64_t range_uj, std::chrono::nanoseconds max_safe_read_interval,
              const Clock& clock);
  RaplCounter(const RaplCounter&) = delete;
  RaplCounter& operator=(const RaplCounter&) = delete;

  // Reads energy_uj and folds it into the accumulated count. The first
  // successful read sets the origin (energy 0). Reports what guard reads saw
  // since the previous Read() (see the file comment), then forgets it. A
  // failure names the file and the fix (UnreadableCounterError).
  Result<CounterReading> Read();
  // The guard's read: folds like Read() but keeps a late read or a reset for
  // the next Read() to report. Returns this read's own failure.
  Status Poll();

  const std::string& path() const { return energy_path_; }
  std::chrono::nanoseconds max_safe_read_interval() const { return max_safe_read_interval_; }
  std::uint64_t range_uj() const { return range_uj_; }

 private:
  const std::string energy_path_;
  const std::uint64_t range_uj_;
  const std::chrono::nanoseconds max_safe_read_interval_;
  const Clock& clock_;
  std::mutex mu_;
  // Reads and folds; sets the pending flags below. Requires mu_.
  Result<CounterReading> Fold();

  WrapAccumulator accumulator_;                          // guarded by mu_
  std::optional<std::chrono::nanoseconds> last_read_;    // guarded by mu_
  bool pending_uncertain_ = false;                       // guarded by mu_
  std::uint64_t late_reads_ = 0;                         // guarded by mu_
  std::uint64_t resets_ = 0;                             // guarded by mu_
  std::optional<Error> pending_reset_;                   // guarded by mu_
};

}  // namespace zeus::device::rapl

#endif  // ZEUS_DEVICE_RAPL_RAPL_COUNTER_H_
