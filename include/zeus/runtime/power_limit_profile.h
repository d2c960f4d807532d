// Copyright 2026 The Zeus C++ Authors.
//
// The power-limit optimizer's profile file: what profiling measured, saved so
// a recurring job can skip profiling.
//
// Format: the original Zeus's JSON (zeus-reference A9), plus optional keys
// that identify the hardware it was measured on:
//
//   {
//     "measurements": [                      // profiling order (high to low)
//       {"power_limit": 300, "energy": 1234.5, "time": 12.5},   // W, J, s
//       ...
//     ],
//     "gpu_model": "NVIDIA A100-SXM4-40GB",  // optional
//     "min_power_limit_w": 100,              // optional
//     "max_power_limit_w": 400,              // optional
//     "gpu_count": 8                         // optional: GPUs in the job
//   }
//
// Energy is the whole job's (every GPU of every rank), time the slowest
// rank's, both over one profiling window. Files written by the original Zeus
// (only "measurements") load too. A power limit that is not a whole number of
// watts is written with decimals.
//
// Pure functions over files and values; thread-safe.

#ifndef ZEUS_RUNTIME_POWER_LIMIT_PROFILE_H_
#define ZEUS_RUNTIME_POWER_LIMIT_PROFILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/device/gpu.h"
#include "zeus/optimizer/power_limit.h"

namespace zeus::runtime {

struct PowerLimitProfileFile {
  std::vector<optimizer::PowerLimitMeasurement> measurements;
  std::optional<std::string> gpu_model;
  std::optional<device::PowerLimitConstraints> constraints_mw;
  std::optional<int> gpu_count;
};

// What the current job is, to check a loaded profile against.
struct PowerLimitProfileExpectation {
  std::string gpu_model;
  device::PowerLimitConstraints constraints_mw;
  int gpu_count = 1;
  // The limits this job would profile (used for files without hardware keys).
  std::vector<std::uint32_t> power_limits_mw;
};

// Reads and validates the file's values. Errors (all naming the file):
//   kNotFound - no such file; kIoError - unreadable;
//   kInvalidArgument - not a regular file (a directory, a FIFO, a device;
//   refused before it is opened, so a FIFO never blocks the caller);
//   kInvalidArgument - not JSON, an unknown or mistyped key, no measurements,
//   a duplicated limit, a limit <= 0, energy < 0, time <= 0, or a value that
//   is not finite.
Result<PowerLimitProfileFile> LoadPowerLimitProfile(const std::string& path);

// OK when `profile` can be reused by the job described by `expected`:
//   * each hardware key the file has equals the job's (model, min, max,
//     gpu count);
//   * every measured limit lies within the job's constraints;
//   * a file without the model and constraint keys must have measured
//     exactly the job's power limits.
// Otherwise kFailedPrecondition whose message names the file, what differs,
// and says to delete the file or choose another path.
Status CheckPowerLimitProfile(const PowerLimitProfileFile& profile, const PowerLimitProfileExpectation& expected,
                              const std::string& path);

// Writes the file atomically (a temporary file in the same directory, then
// rename). kIoError naming the path on failure.
Status SavePowerLimitProfile(const std::string& path, const PowerLimitProfileFile& profile);

}  // namespace zeus::runtime

#endif  // ZEUS_RUNTIME_POWER_LIMIT_PROFILE_H_
