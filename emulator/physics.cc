// Copyright 2026 The Zeus C++ Authors.

#include "physics.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace zeus::emulator {
namespace {

constexpr std::uint64_t kPjPerMj = 1'000'000'000;

// Linear interpolation of `value(point)` over `points` (sorted by limit) at
// `limit_mw`, clamped to the end points.
template <class Value>
double Interpolate(const std::vector<CurvePoint>& points, std::uint32_t limit_mw, Value value) {
  if (limit_mw <= points.front().limit_mw) return value(points.front());
  if (limit_mw >= points.back().limit_mw) return value(points.back());
  // First point with limit > limit_mw; it exists and is not the first one.
  auto upper = std::upper_bound(points.begin(), points.end(), limit_mw,
                                [](std::uint32_t l, const CurvePoint& p) { return l < p.limit_mw; });
  const CurvePoint& hi = *upper;
  const CurvePoint& lo = *(upper - 1);
  const double fraction = static_cast<double>(limit_mw - lo.limit_mw) / static_cast<double>(hi.limit_mw - lo.limit_mw);
  return value(lo) + fraction * (value(hi) - value(lo));
}

std::uint32_t RoundToMw(double power_mw) {
  if (!(power_mw > 0.0)) return 0;
  const double max = static_cast<double>(std::numeric_limits<std::uint32_t>::max());
  return static_cast<std::uint32_t>(std::llround(std::min(power_mw, max)));
}

}  // namespace

// ---- Energy -----------------------------------------------------------------

void Energy::AddPower(std::uint64_t power_mw, std::int64_t duration_ns) {
  if (duration_ns <= 0 || power_mw == 0) return;
  const auto ns = static_cast<std::uint64_t>(duration_ns);
  // power_mw * ns picojoules, split so that no product overflows:
  // ns = whole_s * 1e9 + rest_ns, and power_mw * 1e9 pJ == power_mw mJ.
  const std::uint64_t whole_s = ns / kPjPerMj;
  const std::uint64_t rest_ns = ns % kPjPerMj;
  mj += power_mw * whole_s;
  rem_pj += power_mw * rest_ns;  // < 2^32 * 1e9 < 2^62
  mj += rem_pj / kPjPerMj;
  rem_pj %= kPjPerMj;
}

void Energy::Add(const Energy& other) {
  mj += other.mj;
  rem_pj += other.rem_pj;
  mj += rem_pj / kPjPerMj;
  rem_pj %= kPjPerMj;
}

Energy Energy::Minus(const Energy& other) const {
  Energy result{mj - other.mj, 0};
  if (rem_pj >= other.rem_pj) {
    result.rem_pj = rem_pj - other.rem_pj;
  } else {
    result.mj -= 1;
    result.rem_pj = rem_pj + kPjPerMj - other.rem_pj;
  }
  return result;
}

std::uint64_t Energy::TotalPicojoules() const { return mj * kPjPerMj + rem_pj; }

// ---- LimitTimeline ----------------------------------------------------------

std::uint32_t LimitTimeline::LimitAt(std::int64_t time_ns) const {
  // Last change with time <= time_ns.
  auto after = std::upper_bound(changes.begin(), changes.end(), time_ns,
                                [](std::int64_t t, const LimitChange& c) { return t < c.time_ns; });
  if (after == changes.begin()) return base_limit_mw;
  return (after - 1)->limit_mw;
}

Condition LimitTimeline::ConditionAt(std::int64_t time_ns) const {
  auto after = std::upper_bound(changes.begin(), changes.end(), time_ns,
                                [](std::int64_t t, const LimitChange& c) { return t < c.time_ns; });
  if (after == changes.begin()) return Condition::Of(base_limit_mw, base_flags);
  return Condition::Of((after - 1)->limit_mw, (after - 1)->flags);
}

// ---- PowerModel -------------------------------------------------------------

PowerModel PowerModel::Constant(std::uint32_t power_mw) {
  PowerModel model;
  model.kind_ = Kind::kConstant;
  model.constant_mw_ = power_mw;
  return model;
}

PowerModel PowerModel::Schedule(std::vector<ScheduleStep> steps) {
  PowerModel model;
  model.kind_ = Kind::kSchedule;
  model.steps_ = std::move(steps);
  return model;
}

PowerModel PowerModel::Workload(std::vector<CurvePoint> points) {
  PowerModel model;
  model.kind_ = Kind::kWorkload;
  model.curve_ = std::move(points);
  return model;
}

std::uint32_t PowerModel::DemandMw(std::int64_t time_ns, std::uint32_t limit_mw) const {
  switch (kind_) {
    case Kind::kConstant:
      return constant_mw_;
    case Kind::kSchedule: {
      auto after = std::upper_bound(steps_.begin(), steps_.end(), time_ns,
                                    [](std::int64_t t, const ScheduleStep& s) { return t < s.time_ns; });
      if (after == steps_.begin()) return 0;  // unreachable for valid schedules
      return (after - 1)->power_mw;
    }
    case Kind::kWorkload:
      return RoundToMw(Interpolate(curve_, limit_mw, [](const CurvePoint& p) { return p.power_mw; }));
  }
  return 0;
}

std::uint32_t PowerModel::DrawnMw(std::int64_t time_ns, std::uint32_t limit_mw) const {
  return std::min(DemandMw(time_ns, limit_mw), limit_mw);
}

std::int32_t PowerModel::ProcessLoadAt(std::int64_t time_ns) const {
  auto after = std::upper_bound(load_steps_.begin(), load_steps_.end(), time_ns,
                                [](std::int64_t t, const LoadStep& s) { return t < s.time_ns; });
  return after == load_steps_.begin() ? -1 : (after - 1)->percent;
}

std::uint32_t PowerModel::WorkMw(std::int64_t time_ns, Condition condition) const {
  if (condition.idle) return std::min(idle_mw_, condition.limit_mw);
  const std::int32_t scenario_load = ProcessLoadAt(time_ns);
  if (scenario_load < 0 && condition.attached_load_percent < 0) return DrawnMw(time_ns, condition.limit_mw);
  const std::uint64_t load = static_cast<std::uint64_t>(
      std::min(100, std::max(0, scenario_load) + std::max(0, condition.attached_load_percent)));
  const std::uint32_t demand_mw = DemandMw(time_ns, condition.limit_mw);
  if (demand_mw <= idle_mw_) return std::min(demand_mw, condition.limit_mw);
  const std::uint64_t active_mw = (static_cast<std::uint64_t>(demand_mw - idle_mw_) * load + 50) / 100;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(idle_mw_ + active_mw, condition.limit_mw));
}

std::int64_t PowerModel::NextStepAfterNs(std::int64_t time_ns) const {
  std::int64_t next = kNeverNs;
  if (kind_ == Kind::kSchedule) {
    auto after = std::upper_bound(steps_.begin(), steps_.end(), time_ns,
                                  [](std::int64_t t, const ScheduleStep& s) { return t < s.time_ns; });
    if (after != steps_.end()) next = after->time_ns;
  }
  auto load_after = std::upper_bound(load_steps_.begin(), load_steps_.end(), time_ns,
                                     [](std::int64_t t, const LoadStep& s) { return t < s.time_ns; });
  if (load_after != load_steps_.end()) next = std::min(next, load_after->time_ns);
  return next;
}

std::optional<double> PowerModel::IterationTimeS(std::uint32_t limit_mw) const {
  if (kind_ != Kind::kWorkload || curve_.empty() || !curve_.front().iteration_time_s) return std::nullopt;
  return Interpolate(curve_, limit_mw, [](const CurvePoint& p) { return p.iteration_time_s.value_or(0.0); });
}

// ---- The thermal model -------------------------------------------------------

double ThermalPowerW(const ThermalModel& thermal, double work_w, double cap_w, double temperature_c) {
  const double leaking_w = work_w * (1.0 + thermal.leakage_per_c * (temperature_c - thermal.reference_c));
  return std::clamp(leaking_w, 0.0, cap_w);
}

ThermalInterval IntegrateThermal(const ThermalModel& thermal, double work_w, double cap_w, double start_c,
                                 double duration_s) {
  // Uncapped: P(T) = alpha + beta T, so dT/dt = ((Ta + R alpha) - (1 - R beta) T) / tau, a linear equation
  // with constant coefficients: T(t) = T_inf + (T0 - T_inf) e^(-t/tau'), tau' = tau / (1 - R beta).
  // Capped: P = cap, T_inf = Ta + R cap, tau' = tau. The uncapped power reaches the cap at T_star; a
  // trajectory crosses T_star at most once (at T_star both regimes head for the same steady state).
  const double r = thermal.resistance_c_per_w;
  const double tau = thermal.time_constant_s;
  const double alpha = work_w * (1.0 - thermal.leakage_per_c * thermal.reference_c);
  const double beta = work_w * thermal.leakage_per_c;
  const bool can_cap = beta > 0.0;
  const double t_star = can_cap ? (cap_w - alpha) / beta : 0.0;
  double t_c = start_c;
  double energy_j = 0.0;
  double left_s = std::max(0.0, duration_s);
  bool capped = can_cap && t_c >= t_star;
  for (int regime = 0; regime < 2 && left_s > 0.0; ++regime) {
    const double a = capped ? 1.0 : 1.0 - r * beta;
    const double t_inf = capped ? thermal.ambient_c + r * cap_w : (thermal.ambient_c + r * alpha) / a;
    const double tau_s = tau / a;
    // Where the other regime begins, if this trajectory gets there within the interval.
    double span_s = left_s;
    bool crosses = false;
    if (can_cap && regime == 0) {
      const bool heads_across = capped ? t_inf < t_star : t_inf > t_star;
      if (heads_across && t_c != t_inf) {
        const double ratio = (t_c - t_inf) / (t_star - t_inf);
        const double cross_s = ratio >= 1.0 ? tau_s * std::log(ratio) : 0.0;
        if (cross_s < left_s) {
          span_s = cross_s;
          crosses = true;
        }
      }
    }
    const double decay = -std::expm1(-span_s / tau_s);  // 1 - e^(-span/tau')
    const double end_c = crosses ? t_star : t_inf + (t_c - t_inf) * (1.0 - decay);
    if (capped) {
      energy_j += cap_w * span_s;
    } else {
      const double integral_c_s = t_inf * span_s + (t_c - t_inf) * tau_s * decay;  // integral of T dt
      energy_j += alpha * span_s + beta * integral_c_s;
    }
    t_c = end_c;
    left_s -= span_s;
    if (!crosses) break;
    capped = !capped;
  }
  return ThermalInterval{t_c, energy_j};
}

namespace {

// Whole millijoules plus picojoules from joules (>= 0).
Energy EnergyFromJoules(double joules) {
  if (!(joules > 0.0)) return Energy{0, 0};
  const double mj = joules * 1e3;
  const double whole = std::floor(mj);
  Energy energy{static_cast<std::uint64_t>(whole), 0};
  energy.rem_pj = static_cast<std::uint64_t>(std::llround((mj - whole) * static_cast<double>(kPjPerMj)));
  if (energy.rem_pj >= kPjPerMj) {
    energy.mj += 1;
    energy.rem_pj -= kPjPerMj;
  }
  return energy;
}

// What a walk along a timeline found: the energy over [from_ns, to_ns) and,
// under a thermal model, the temperature at to_ns.
struct Walked {
  Energy energy;
  double temperature_c;
};

// Walks `timeline` from the entry in force at from_ns (a thermal model needs
// the temperature there, so the walk starts at that entry's time) to to_ns,
// segment by segment: a segment ends at a limit or activity change or a
// schedule step.
Walked Walk(const PowerModel& model, const LimitTimeline& timeline, std::int64_t from_ns, std::int64_t to_ns) {
  const auto& changes = timeline.changes;
  const std::optional<ThermalModel>& thermal = model.thermal();
  // Index of the first change strictly after from_ns; the entry before it.
  std::size_t next =
      static_cast<std::size_t>(std::upper_bound(changes.begin(), changes.end(), from_ns,
                                                [](std::int64_t t, const LimitChange& c) { return t < c.time_ns; }) -
                               changes.begin());
  Condition condition = timeline.ConditionAt(from_ns);
  Walked walked{Energy{0, 0}, 0.0};
  std::int64_t t = from_ns;
  double joules = 0.0;
  if (thermal) {
    walked.temperature_c = next == 0 ? timeline.base_temperature_c : changes[next - 1].temperature_c;
    const std::int64_t entry_ns = next == 0 ? timeline.base_time_ns : changes[next - 1].time_ns;
    if (entry_ns < from_ns) {
      // Bring the temperature from the entry to from_ns (the entry's condition holds throughout).
      std::int64_t s = entry_ns;
      while (s < from_ns) {
        const std::int64_t end = std::min(from_ns, model.NextStepAfterNs(s));
        const double work_w = model.WorkMw(s, condition) / 1000.0;
        walked.temperature_c = IntegrateThermal(*thermal, work_w, condition.limit_mw / 1000.0, walked.temperature_c,
                                                static_cast<double>(end - s) / kNsPerSecond)
                                   .end_c;
        s = end;
      }
    } else if (from_ns < entry_ns && to_ns > from_ns) {
      // Before the base: constant power at the base's temperature.
      const std::int64_t end = std::min(to_ns, entry_ns);
      const double power_w = ThermalPowerW(*thermal, model.WorkMw(from_ns, condition) / 1000.0,
                                           condition.limit_mw / 1000.0, walked.temperature_c);
      joules += power_w * static_cast<double>(end - from_ns) / kNsPerSecond;
      t = end;
    }
  }
  while (t < to_ns) {
    std::int64_t segment_end = std::min(to_ns, model.NextStepAfterNs(t));
    if (next < changes.size()) segment_end = std::min(segment_end, changes[next].time_ns);
    const std::uint32_t work_mw = model.WorkMw(t, condition);
    if (thermal) {
      const ThermalInterval interval =
          IntegrateThermal(*thermal, work_mw / 1000.0, condition.limit_mw / 1000.0, walked.temperature_c,
                           static_cast<double>(segment_end - t) / kNsPerSecond);
      walked.temperature_c = interval.end_c;
      joules += interval.energy_j;
    } else {
      walked.energy.AddPower(work_mw, segment_end - t);
    }
    t = segment_end;
    while (next < changes.size() && changes[next].time_ns <= t) {
      condition = Condition::Of(changes[next].limit_mw, changes[next].flags);
      ++next;
    }
  }
  if (thermal) walked.energy.Add(EnergyFromJoules(joules));
  return walked;
}

}  // namespace

// ---- Integration and sensors -------------------------------------------------

Energy IntegrateEnergy(const PowerModel& model, const LimitTimeline& timeline, std::int64_t from_ns,
                       std::int64_t to_ns) {
  if (to_ns <= from_ns) return Energy{0, 0};
  return Walk(model, timeline, from_ns, to_ns).energy;
}

double TemperatureAt(const PowerModel& model, const LimitTimeline& timeline, std::int64_t time_ns) {
  if (!model.thermal()) return 0.0;
  return Walk(model, timeline, time_ns, time_ns).temperature_c;
}

std::uint32_t PowerAtMw(const PowerModel& model, const LimitTimeline& timeline, std::int64_t time_ns) {
  const Condition condition = timeline.ConditionAt(time_ns);
  const std::uint32_t work_mw = model.WorkMw(time_ns, condition);
  if (!model.thermal()) return work_mw;
  const double power_w = ThermalPowerW(*model.thermal(), work_mw / 1000.0, condition.limit_mw / 1000.0,
                                       TemperatureAt(model, timeline, time_ns));
  return RoundToMw(power_w * 1000.0);
}

std::uint32_t AveragePowerMw(const PowerModel& model, const LimitTimeline& timeline, std::int64_t from_ns,
                             std::int64_t to_ns) {
  if (to_ns <= from_ns) return PowerAtMw(model, timeline, to_ns);
  const std::uint64_t pj = IntegrateEnergy(model, timeline, from_ns, to_ns).TotalPicojoules();
  const auto length_ns = static_cast<std::uint64_t>(to_ns - from_ns);
  return static_cast<std::uint32_t>((pj + length_ns / 2) / length_ns);
}

std::int64_t PowerSensor::LatestUpdateNs(std::int64_t now_ns) const {
  if (now_ns <= 0) return 0;
  return now_ns - now_ns % period_ns;
}

std::uint32_t PowerSensor::AverageMw(const PowerModel& model, const LimitTimeline& timeline,
                                     std::int64_t now_ns) const {
  const std::int64_t update_ns = LatestUpdateNs(now_ns);
  if (window_ns == 0) return PowerAtMw(model, timeline, update_ns);
  return AveragePowerMw(model, timeline, std::max<std::int64_t>(0, update_ns - window_ns), update_ns);
}

std::uint32_t PowerSensor::InstantMw(const PowerModel& model, const LimitTimeline& timeline,
                                     std::int64_t now_ns) const {
  return PowerAtMw(model, timeline, LatestUpdateNs(now_ns));
}

// ---- LimitHistory -----------------------------------------------------------

void InitLimitHistory(LimitHistory* history, std::uint32_t initial_limit_mw, double initial_temperature_c) {
  *history = LimitHistory{};
  history->base.time_ns = 0;
  history->base.limit_mw = initial_limit_mw;
  history->base.temperature_c = initial_temperature_c;
}

LimitTimeline TimelineOf(const LimitHistory& history) {
  const std::size_t count = std::min<std::size_t>(history.count, kLimitHistoryCapacity);
  return LimitTimeline{history.base.limit_mw, std::span<const LimitChange>(history.changes.data(), count),
                       history.base.flags, history.base.temperature_c, history.base.time_ns};
}

std::uint32_t CurrentLimitMw(const LimitHistory& history) {
  if (history.count == 0) return history.base.limit_mw;
  return history.changes[history.count - 1].limit_mw;
}

namespace {

// The latest kept entry: the last change, or the base.
const LimitChange& Latest(const LimitHistory& history) {
  return history.count == 0 ? history.base : history.changes[history.count - 1];
}

// The energy over [0, time_ns) and the temperature at time_ns, where `from`
// is the entry in force at time_ns (time_ns is clamped up to from.time_ns).
Walked StateAtFrom(const LimitChange& from, const PowerModel& model, std::int64_t time_ns) {
  const LimitTimeline alone{from.limit_mw, {}, from.flags, from.temperature_c, from.time_ns};
  Walked walked = Walk(model, alone, from.time_ns, std::max(time_ns, from.time_ns));
  Energy energy = from.energy_before;
  energy.Add(walked.energy);
  walked.energy = energy;
  return walked;
}

Energy EnergyAtFrom(const LimitChange& from, const PowerModel& model, std::int64_t time_ns) {
  return StateAtFrom(from, model, time_ns).energy;
}

// Recomputes the energy before and the temperature of kept changes [first, count) from their predecessors.
void RecomputeFrom(LimitHistory* history, const PowerModel& model, std::size_t first) {
  for (std::size_t i = first; i < history->count; ++i) {
    const LimitChange& previous = i == 0 ? history->base : history->changes[i - 1];
    const Walked state = StateAtFrom(previous, model, history->changes[i].time_ns);
    history->changes[i].energy_before = state.energy;
    history->changes[i].temperature_c = state.temperature_c;
  }
}

// Moves the oldest `n` kept changes (1 <= n <= count) into the base.
void FoldOldest(LimitHistory* history, const PowerModel& model, std::optional<std::int64_t> counter_reset_ns,
                std::size_t n) {
  const LimitChange& new_base = history->changes[n - 1];
  if (counter_reset_ns && history->reset_captured == 0 && *counter_reset_ns < new_base.time_ns) {
    // The base passes the reset instant: remember the energy there, from the
    // entry in force at it.
    const LimitChange* at = &history->base;
    for (std::size_t i = 0; i + 1 < n && history->changes[i].time_ns <= *counter_reset_ns; ++i) {
      at = &history->changes[i];
    }
    history->reset_energy = EnergyAtFrom(*at, model, *counter_reset_ns);
    history->reset_captured = 1;
  }
  history->base = new_base;
  std::copy(history->changes.begin() + static_cast<std::ptrdiff_t>(n),
            history->changes.begin() + history->count, history->changes.begin());
  history->count -= static_cast<std::uint32_t>(n);
}

}  // namespace

void RecordLimitChange(LimitHistory* history, const PowerModel& model, std::optional<std::int64_t> counter_reset_ns,
                       std::int64_t time_ns, std::uint32_t limit_mw) {
  time_ns = std::max(time_ns, Latest(*history).time_ns);
  if (history->count > 0 && history->changes[history->count - 1].time_ns == time_ns) {
    history->changes[history->count - 1].limit_mw = limit_mw;  // the energy before it stays the same
    return;
  }
  if (history->count >= kLimitHistoryCapacity) FoldOldest(history, model, counter_reset_ns, 1);
  const LimitChange& latest = Latest(*history);
  const Walked before = StateAtFrom(latest, model, time_ns);
  history->changes[history->count] = LimitChange{time_ns, limit_mw, latest.flags, before.energy, before.temperature_c};
  ++history->count;
}

namespace {

// Sets the bits `mask` of the flags to `value` from `time_ns` on (the
// activity or the attached process load), keeping the other bits; nothing
// when they already are so then.
void RecordFlagsChange(LimitHistory* history, const PowerModel& model, std::optional<std::int64_t> counter_reset_ns,
                       std::int64_t time_ns, std::uint32_t mask, std::uint32_t value) {
  time_ns = std::max(time_ns, history->base.time_ns);
  auto flags_at = [&](std::int64_t t) {
    std::uint32_t flags = history->base.flags;
    for (std::size_t i = 0; i < history->count && history->changes[i].time_ns <= t; ++i) {
      flags = history->changes[i].flags;
    }
    return flags;
  };
  if ((flags_at(time_ns) & mask) == value) return;
  if (history->count >= kLimitHistoryCapacity) {
    FoldOldest(history, model, counter_reset_ns, 1);
    time_ns = std::max(time_ns, history->base.time_ns);
  }
  auto with = [&](std::uint32_t flags) { return (flags & ~mask) | value; };
  // The first kept change after time_ns; the entry before it is in force at time_ns.
  std::size_t at = 0;
  while (at < history->count && history->changes[at].time_ns <= time_ns) ++at;
  std::size_t recompute_from = at;
  if (at > 0 && history->changes[at - 1].time_ns == time_ns) {
    history->changes[at - 1].flags = with(history->changes[at - 1].flags);  // its energy before and temperature stay
  } else if (at == 0 && history->base.time_ns == time_ns) {
    history->base.flags = with(history->base.flags);
  } else {
    const LimitChange& in_force = at == 0 ? history->base : history->changes[at - 1];
    const Walked before = StateAtFrom(in_force, model, time_ns);
    const std::uint32_t flags = with(in_force.flags);
    std::copy_backward(history->changes.begin() + static_cast<std::ptrdiff_t>(at),
                       history->changes.begin() + history->count,
                       history->changes.begin() + history->count + 1);
    history->changes[at] = LimitChange{time_ns, in_force.limit_mw, flags, before.energy, before.temperature_c};
    ++history->count;
    recompute_from = at + 1;
  }
  for (std::size_t i = recompute_from; i < history->count; ++i) history->changes[i].flags = with(history->changes[i].flags);
  RecomputeFrom(history, model, recompute_from);
}

}  // namespace

void RecordActivityChange(LimitHistory* history, const PowerModel& model,
                          std::optional<std::int64_t> counter_reset_ns, std::int64_t time_ns, bool idle) {
  RecordFlagsChange(history, model, counter_reset_ns, time_ns, kIdleFlag, idle ? kIdleFlag : 0);
}

void RecordProcessLoadChange(LimitHistory* history, const PowerModel& model,
                             std::optional<std::int64_t> counter_reset_ns, std::int64_t time_ns,
                             std::int32_t percent) {
  RecordFlagsChange(history, model, counter_reset_ns, time_ns, kLoadMask, ProcessLoadFlags(percent));
}

void ForgetLimitChangesBefore(LimitHistory* history, const PowerModel& model,
                              std::optional<std::int64_t> counter_reset_ns, std::int64_t horizon_ns) {
  std::size_t n = 0;
  while (n < history->count && history->changes[n].time_ns <= horizon_ns) ++n;
  if (n > 0) FoldOldest(history, model, counter_reset_ns, n);
}

void RecordLimitRamp(LimitHistory* history, const PowerModel& model, std::optional<std::int64_t> counter_reset_ns,
                     std::int64_t time_ns, std::uint32_t limit_mw, std::int64_t settle_ns) {
  while (history->count > 0 && history->changes[history->count - 1].time_ns > time_ns) --history->count;
  const std::uint32_t from_mw = TimelineOf(*history).LimitAt(time_ns);
  if (settle_ns <= 0 || from_mw == limit_mw) {
    RecordLimitChange(history, model, counter_reset_ns, time_ns, limit_mw);
    return;
  }
  const double from = from_mw;
  const double span = static_cast<double>(limit_mw) - from;
  for (int k = 0; k < kSettleSteps; ++k) {
    const std::int64_t at_ns = time_ns + settle_ns * k / kSettleSteps;
    const double fraction = (2.0 * k + 1.0) / (2.0 * kSettleSteps);
    RecordLimitChange(history, model, counter_reset_ns, at_ns, RoundToMw(from + span * fraction));
  }
  RecordLimitChange(history, model, counter_reset_ns, time_ns + settle_ns, limit_mw);
}

Energy TotalEnergyAt(const LimitHistory& history, const PowerModel& model, std::int64_t now_ns) {
  // The entry in force at now_ns, found from the newest: only the changes
  // after now_ns are passed over.
  std::size_t after = std::min<std::size_t>(history.count, kLimitHistoryCapacity);
  while (after > 0 && history.changes[after - 1].time_ns > now_ns) --after;
  return EnergyAtFrom(after == 0 ? history.base : history.changes[after - 1], model, now_ns);
}

Energy CounterEnergyAt(const LimitHistory& history, const PowerModel& model,
                       std::optional<std::int64_t> counter_reset_ns, std::int64_t now_ns) {
  const Energy total = TotalEnergyAt(history, model, now_ns);
  if (!counter_reset_ns || now_ns < *counter_reset_ns) return total;
  const Energy at_reset =
      history.reset_captured != 0 ? history.reset_energy : TotalEnergyAt(history, model, *counter_reset_ns);
  return total.Minus(at_reset);
}

}  // namespace zeus::emulator
