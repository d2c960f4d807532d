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

std::int64_t PowerModel::NextStepAfterNs(std::int64_t time_ns) const {
  if (kind_ != Kind::kSchedule) return kNeverNs;
  auto after = std::upper_bound(steps_.begin(), steps_.end(), time_ns,
                                [](std::int64_t t, const ScheduleStep& s) { return t < s.time_ns; });
  return after == steps_.end() ? kNeverNs : after->time_ns;
}

std::optional<double> PowerModel::IterationTimeS(std::uint32_t limit_mw) const {
  if (kind_ != Kind::kWorkload || curve_.empty() || !curve_.front().iteration_time_s) return std::nullopt;
  return Interpolate(curve_, limit_mw, [](const CurvePoint& p) { return p.iteration_time_s.value_or(0.0); });
}

// ---- Integration and sensors -------------------------------------------------

Energy IntegrateEnergy(const PowerModel& model, const LimitTimeline& timeline, std::int64_t from_ns,
                       std::int64_t to_ns) {
  Energy energy{0, 0};
  if (to_ns <= from_ns) return energy;
  const auto& changes = timeline.changes;
  // Index of the first change strictly after from_ns; the limit before it.
  std::size_t next =
      static_cast<std::size_t>(std::upper_bound(changes.begin(), changes.end(), from_ns,
                                                [](std::int64_t t, const LimitChange& c) { return t < c.time_ns; }) -
                               changes.begin());
  std::uint32_t limit_mw = next == 0 ? timeline.base_limit_mw : changes[next - 1].limit_mw;
  std::int64_t t = from_ns;
  while (t < to_ns) {
    std::int64_t segment_end = std::min(to_ns, model.NextStepAfterNs(t));
    if (next < changes.size()) segment_end = std::min(segment_end, changes[next].time_ns);
    energy.AddPower(model.DrawnMw(t, limit_mw), segment_end - t);
    t = segment_end;
    while (next < changes.size() && changes[next].time_ns <= t) {
      limit_mw = changes[next].limit_mw;
      ++next;
    }
  }
  return energy;
}

std::uint32_t AveragePowerMw(const PowerModel& model, const LimitTimeline& timeline, std::int64_t from_ns,
                             std::int64_t to_ns) {
  if (to_ns <= from_ns) return model.DrawnMw(to_ns, timeline.LimitAt(to_ns));
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
  if (window_ns == 0) return model.DrawnMw(update_ns, timeline.LimitAt(update_ns));
  return AveragePowerMw(model, timeline, std::max<std::int64_t>(0, update_ns - window_ns), update_ns);
}

std::uint32_t PowerSensor::InstantMw(const PowerModel& model, const LimitTimeline& timeline,
                                     std::int64_t now_ns) const {
  const std::int64_t update_ns = LatestUpdateNs(now_ns);
  return model.DrawnMw(update_ns, timeline.LimitAt(update_ns));
}

// ---- LimitHistory -----------------------------------------------------------

void InitLimitHistory(LimitHistory* history, std::uint32_t initial_limit_mw) {
  *history = LimitHistory{};
  history->base.time_ns = 0;
  history->base.limit_mw = initial_limit_mw;
}

LimitTimeline TimelineOf(const LimitHistory& history) {
  const std::size_t count = std::min<std::size_t>(history.count, kLimitHistoryCapacity);
  return LimitTimeline{history.base.limit_mw, std::span<const LimitChange>(history.changes.data(), count)};
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

// The energy over [0, time_ns), where `from` is the entry in force at time_ns
// (time_ns is clamped up to from.time_ns).
Energy EnergyAtFrom(const LimitChange& from, const PowerModel& model, std::int64_t time_ns) {
  Energy energy = from.energy_before;
  energy.Add(IntegrateEnergy(model, LimitTimeline{from.limit_mw, {}}, from.time_ns, std::max(time_ns, from.time_ns)));
  return energy;
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
  const Energy before = EnergyAtFrom(Latest(*history), model, time_ns);
  history->changes[history->count] = LimitChange{time_ns, limit_mw, 0, before};
  ++history->count;
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
