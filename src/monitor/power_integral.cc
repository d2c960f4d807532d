// Copyright 2026 The Zeus C++ Authors.

#include "zeus/monitor/power_integral.h"

#include "zeus/base/clock.h"

namespace zeus::monitor {

double PowerIntegral::AdvanceTo(std::chrono::nanoseconds time) {
  if (!last_time_) {
    last_time_ = time;
    return 0.0;
  }
  if (time <= *last_time_) return 0.0;
  const double added_mj = power_mw_ ? *power_mw_ * ToSeconds(time - *last_time_) : 0.0;
  energy_mj_ += added_mj;
  last_time_ = time;
  return added_mj;
}

double PowerIntegral::Add(std::chrono::nanoseconds time, double power_mw) {
  const double added_mj = AdvanceTo(time);
  Hold(power_mw);
  return added_mj;
}

double PowerIntegral::EnergyAtMj(std::chrono::nanoseconds time) const {
  if (!last_time_ || !power_mw_ || time <= *last_time_) return energy_mj_;
  return energy_mj_ + *power_mw_ * ToSeconds(time - *last_time_);
}

}  // namespace zeus::monitor
