// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/power_limit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "zeus/optimizer/cost.h"

namespace zeus::optimizer {
namespace {

bool Usable(double v) { return std::isfinite(v) && v >= 0.0; }

// Indices of `limits` from the highest limit to the lowest; equal limits keep
// their input order.
std::vector<std::size_t> HighToLow(std::span<const double> limits) {
  std::vector<std::size_t> order(limits.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return limits[a] > limits[b]; });
  return order;
}

// argmin of cost(i) visiting `order`, keeping a strictly smaller cost.
template <class CostFn>
PowerLimitChoice ArgMin(std::span<const double> limits, CostFn cost) {
  PowerLimitChoice best{0.0, std::numeric_limits<double>::infinity()};
  bool first = true;
  for (std::size_t i : HighToLow(limits)) {
    const double c = cost(i);
    if (first || c < best.cost) best = {limits[i], c};
    first = false;
  }
  return best;
}

}  // namespace

Result<PowerLimitChoice> ChoosePowerLimit(std::span<const PowerLimitProfile> profiles, double eta) {
  if (Status s = ValidateEta(eta); !s) return Fail(s.error());
  if (profiles.empty()) return Fail(ErrorCode::kInvalidArgument, "no power-limit profiles to choose from");
  std::vector<double> limits;
  for (const PowerLimitProfile& p : profiles) {
    if (!Usable(p.power_limit_w) || !Usable(p.time_s) || !Usable(p.average_power_w)) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("power-limit profile at {} W has a negative or non-finite value (time {} s, power {} W)",
                              p.power_limit_w, p.time_s, p.average_power_w));
    }
    limits.push_back(p.power_limit_w);
  }
  const double max_limit_w = *std::max_element(limits.begin(), limits.end());
  return ArgMin(limits, [&](std::size_t i) {
    return (eta * profiles[i].average_power_w + (1.0 - eta) * max_limit_w) * profiles[i].time_s;
  });
}

Result<PowerLimitChoice> ChoosePowerLimitFromMeasurements(std::span<const PowerLimitMeasurement> measurements,
                                                          double eta, int world_size) {
  if (Status s = ValidateEta(eta); !s) return Fail(s.error());
  if (world_size < 1) return Fail(ErrorCode::kInvalidArgument, fmt::format("world size must be >= 1, got {}", world_size));
  if (measurements.empty()) return Fail(ErrorCode::kInvalidArgument, "no power-limit measurements to choose from");
  std::vector<double> limits;
  for (const PowerLimitMeasurement& m : measurements) {
    if (!Usable(m.power_limit_w) || !Usable(m.energy_j) || !Usable(m.time_s)) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("power-limit measurement at {} W has a negative or non-finite value (energy {} J, time {} s)",
                              m.power_limit_w, m.energy_j, m.time_s));
    }
    limits.push_back(m.power_limit_w);
  }
  const double max_power_w = *std::max_element(limits.begin(), limits.end()) * world_size;
  return ArgMin(limits, [&](std::size_t i) {
    return ZeusCost(measurements[i].energy_j, measurements[i].time_s, eta, max_power_w);
  });
}

}  // namespace zeus::optimizer
