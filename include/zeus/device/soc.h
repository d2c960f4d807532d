// Copyright 2026 The Zeus C++ Authors.
//
// The SoC seam: energy of an integrated system-on-chip's subsystems (CPU,
// GPU, whole module), where there is no per-device energy counter. The one
// implementation today is NVIDIA Jetson, whose INA3221 power monitors are
// read from sysfs and integrated into energy by the Soc itself (a sampler
// thread at ~10 Hz, as Zeus's Jetson process). Opened by OpenSoc
// (discovery.h); higher layers see only `Soc`.
//
// Units: power mW, energy mJ (Zeus's SoC units; not converted to J).
//
// Thread-safety: every method may be called from several threads at once.

#ifndef ZEUS_DEVICE_SOC_H_
#define ZEUS_DEVICE_SOC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::device {

// What a power rail feeds, by Zeus's rule on its name (case-insensitive):
// containing "cpu" -> kCpu; else "gpu" -> kGpu; else "system", "_in" or
// "total" -> kTotal; other rails (SOC, CV, DDR) are not measured.
enum class SocRailKind : std::uint8_t { kCpu, kGpu, kTotal };
std::string_view SocRailKindName(SocRailKind kind);  // "cpu", "gpu", "total"

// One measured rail.
struct SocRail {
  SocRailKind kind = SocRailKind::kTotal;
  std::string name;     // as the board names it, e.g. "VDD_GPU_SOC", "POM_5V_CPU"
  std::string sources;  // the files its power is read from, for messages
};

// The energy of one kind of rail since the Soc was opened.
struct SocRailEnergy {
  double energy_mj = 0.0;
  // Reads of this rail that failed since open (a vanished file, a garbage
  // value). The interval before a failed read is not integrated, so two
  // readings whose counts differ do not hold the rail's whole energy between
  // them: a window over them must report it as unknown.
  std::uint64_t failed_reads = 0;
  // The latest failure, naming the file; set once any read failed.
  std::optional<Error> last_error;
};

// Cumulative energy per kind; a kind without a rail is absent.
struct SocEnergy {
  std::optional<SocRailEnergy> cpu;
  std::optional<SocRailEnergy> gpu;
  std::optional<SocRailEnergy> total;
};

class Soc {
 public:
  virtual ~Soc() = default;
  // "NVIDIA Jetson".
  virtual const std::string& name() const = 0;
  // The rails measured, at most one per kind.
  virtual const std::vector<SocRail>& rails() const = 0;
  // Rails found but not measured, each an error naming the file and why (a
  // missing power file, a value that is not a number at open, a second rail
  // of a kind already measured is not a problem and is not listed).
  virtual const std::vector<Error>& problems() const = 0;
  // Integrates every rail up to now (each rail's power read now, held over
  // the interval since the previous read, as Zeus's sampler does) and
  // returns the cumulative energy. A rail whose read fails counts the
  // failure (SocRailEnergy::failed_reads) and the others are still measured;
  // this never fails as a whole.
  virtual SocEnergy TotalEnergy() = 0;
};

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_SOC_H_
