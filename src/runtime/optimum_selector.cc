// Copyright 2026 The Zeus C++ Authors.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "zeus/optimizer/cost.h"
#include "zeus/runtime/power_limit_optimizer.h"

namespace zeus::runtime {

std::string OptimumSelector::Describe() const {
  switch (kind) {
    case Kind::kEnergy: return "energy";
    case Kind::kTime: return "time";
    case Kind::kZeusCost: return fmt::format("zeus-cost(eta={})", eta);
    case Kind::kMaxSlowdown: return fmt::format("max-slowdown({})", max_slowdown);
    case Kind::kCustom: return fmt::format("custom({})", custom_name);
  }
  return "unknown";
}

Status ValidateSelector(const OptimumSelector& selector) {
  switch (selector.kind) {
    case OptimumSelector::Kind::kEnergy:
    case OptimumSelector::Kind::kTime:
      return OkStatus();
    case OptimumSelector::Kind::kZeusCost:
      return optimizer::ValidateEta(selector.eta);
    case OptimumSelector::Kind::kMaxSlowdown:
      if (!(std::isfinite(selector.max_slowdown) && selector.max_slowdown >= 1.0)) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("the maximum slowdown is a factor >= 1 (1.1 allows 10% more time than at the "
                                "highest power limit), got {}",
                                selector.max_slowdown));
      }
      return OkStatus();
    case OptimumSelector::Kind::kCustom:
      if (!selector.custom) {
        return Fail(ErrorCode::kInvalidArgument, "a custom optimum selector needs a function to call; got none");
      }
      return OkStatus();
  }
  return Fail(ErrorCode::kInvalidArgument, "unknown optimum selector");
}

Result<double> SelectPowerLimitW(const OptimumSelector& selector,
                                 std::span<const optimizer::PowerLimitMeasurement> measurements, int total_gpus) {
  if (Status s = ValidateSelector(selector); !s) return Fail(s.error());
  double eta = selector.eta;
  switch (selector.kind) {
    case OptimumSelector::Kind::kEnergy: eta = 1.0; break;
    case OptimumSelector::Kind::kTime: eta = 0.0; break;
    case OptimumSelector::Kind::kZeusCost: break;
    case OptimumSelector::Kind::kCustom: {
      // The same checks of the measurements as the built-in selectors.
      auto checked = optimizer::ChoosePowerLimitFromMeasurements(measurements, 1.0, total_gpus);
      if (!checked) return Fail(checked.error());
      auto chosen_w = selector.custom(measurements, total_gpus);
      if (!chosen_w) return chosen_w;
      if (!(std::isfinite(*chosen_w) && *chosen_w > 0)) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("the optimum selector {} returned {} W; it must return a power limit in W > 0 "
                                "(one of the measured limits)",
                                selector.Describe(), *chosen_w));
      }
      return *chosen_w;
    }
    case OptimumSelector::Kind::kMaxSlowdown: {
      // Validation (and the error messages) of the shared argmin.
      auto checked = optimizer::ChoosePowerLimitFromMeasurements(measurements, 1.0, total_gpus);
      if (!checked) return Fail(checked.error());
      const auto highest = std::max_element(measurements.begin(), measurements.end(), [](const auto& a, const auto& b) {
        return a.power_limit_w < b.power_limit_w;
      });
      const double allowed_s = selector.max_slowdown * highest->time_s;
      double best_w = highest->power_limit_w;
      for (const auto& m : measurements) {
        if (m.time_s <= allowed_s) best_w = std::min(best_w, m.power_limit_w);
      }
      return best_w;
    }
  }
  auto choice = optimizer::ChoosePowerLimitFromMeasurements(measurements, eta, total_gpus);
  if (!choice) return Fail(choice.error());
  return choice->power_limit_w;
}

}  // namespace zeus::runtime
