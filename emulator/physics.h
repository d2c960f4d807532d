// Copyright 2026 The Zeus C++ Authors.
//
// The emulator's physics: what power a GPU draws, how much energy that adds up
// to, and what a driver's power sensor reports. Everything here is pure math
// over integer milliwatts and integer emulated nanoseconds, so results are
// exact and reproducible:
//
//   * Emulated time is an int64 count of nanoseconds since the state epoch
//     (time 0). It is never negative.
//   * Power is piecewise constant: it can change only when the power limit
//     changes, when a power schedule steps, or when the GPU goes idle or
//     busy (an activity change, zeusEmulatorSetIdle). Between those instants
//     the drawn power is min(demand, limit) (busy) or min(idle power, limit)
//     (idle), rounded to a whole milliwatt.
//   * Energy is integrated segment by segment, without sampling, in
//     picojoules (1 mW x 1 ns = 1 pJ) carried as whole millijoules plus a
//     picojoule remainder, so it cannot overflow for any realistic run.
//   * Optional thermal model (ThermalModel, off unless the scenario's GPU has
//     "thermal"): the GPU's temperature follows a first-order lag towards a
//     steady state that rises with the power drawn, and the power drawn rises
//     with temperature (leakage). Within each segment of constant work power
//     the coupled equations are linear with constant coefficients, so they
//     are integrated exactly in closed form (in double precision; energy is
//     then rounded to the picojoule per segment), deterministically. Power is
//     then no longer piecewise constant; instant readings are rounded to the
//     milliwatt.
//
// LimitHistory is a fixed-size, trivially copyable record of a GPU's power
// limit over time; it lives inside the memory-mapped state file that emulator
// processes share (see shared_state.h).
//
// Thread-safety: free functions are reentrant; PowerModel is immutable after
// construction. LimitHistory has no locking of its own.

#ifndef ZEUS_EMULATOR_PHYSICS_H_
#define ZEUS_EMULATOR_PHYSICS_H_

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace zeus::emulator {

inline constexpr std::int64_t kNsPerSecond = 1'000'000'000;
inline constexpr std::int64_t kNsPerMs = 1'000'000;
// "Never": later than any emulated instant.
inline constexpr std::int64_t kNeverNs = std::numeric_limits<std::int64_t>::max();

// An amount of energy: whole millijoules plus a picojoule remainder.
// Invariant: rem_pj < 1e9 (one millijoule). Trivially copyable, so it can sit
// in the shared state file.
struct Energy {
  std::uint64_t mj;
  std::uint64_t rem_pj;

  // Adds `power_mw` drawn for `duration_ns` (>= 0). Exact.
  void AddPower(std::uint64_t power_mw, std::int64_t duration_ns);
  // Adds another amount. Exact.
  void Add(const Energy& other);
  // Returns *this - other. Requires *this >= other.
  Energy Minus(const Energy& other) const;
  // The amount in picojoules. Requires mj < 18e9 (no overflow), which holds
  // for any power average window the scenario allows.
  std::uint64_t TotalPicojoules() const;

  friend bool operator==(const Energy&, const Energy&) = default;
  friend auto operator<=>(const Energy&, const Energy&) = default;
};

// LimitChange::flags: the GPU is idle (draws its idle power) from this entry
// on; clear: busy (draws its demand), the default.
inline constexpr std::uint32_t kIdleFlag = 1;
// LimitChange::flags: processes attached at run time (zeusEmulatorAttachProcess)
// put a load on the GPU from this entry on; its percent (0..100, their summed
// SM utilization, capped) is in bits 8..15 (kLoadShift). Clear: none attached.
inline constexpr std::uint32_t kProcessLoadFlag = 2;
inline constexpr std::uint32_t kLoadShift = 8;
inline constexpr std::uint32_t kLoadMask = kProcessLoadFlag | (0xffu << kLoadShift);
// The flags for an attached load of `percent` (capped at 100), or for none (-1).
inline std::uint32_t ProcessLoadFlags(std::int32_t percent) {
  if (percent < 0) return 0;
  return kProcessLoadFlag | (static_cast<std::uint32_t>(percent > 100 ? 100 : percent) << kLoadShift);
}

// One entry in a GPU's power-limit timeline: from `time_ns` on (inclusive),
// the limit is `limit_mw` and the activity is `flags`. In a LimitHistory,
// `energy_before` is the exact energy drawn over [0, time_ns) and
// `temperature_c` the temperature at time_ns (thermal model only; else 0), so
// that energy and temperature at a later instant need only this entry and the
// segment after it; plain timelines leave both zero.
struct LimitChange {
  std::int64_t time_ns;
  std::uint32_t limit_mw;
  std::uint32_t flags;  // kIdleFlag or 0
  Energy energy_before;
  double temperature_c = 0.0;
};

// The limit and activity in force at an instant.
struct Condition {
  std::uint32_t limit_mw;
  bool idle;
  // The load of the processes attached at run time, in percent; -1: none.
  std::int32_t attached_load_percent = -1;

  static Condition Of(std::uint32_t limit_mw, std::uint32_t flags) {
    return Condition{limit_mw, (flags & kIdleFlag) != 0,
                     (flags & kProcessLoadFlag) != 0 ? static_cast<std::int32_t>((flags >> kLoadShift) & 0xff) : -1};
  }
};

// One step of the load a scenario's processes put on a GPU: from `time_ns`
// on, their summed SM utilization is `percent` (capped at 100), or no
// process runs (-1).
struct LoadStep {
  std::int64_t time_ns;
  std::int32_t percent;
};

// A piecewise-constant power limit: `base_limit_mw` before the first change,
// then each change in turn. `changes` must be sorted by time (ties allowed; the
// later entry wins). The base's activity is `base_flags`; under a thermal
// model the temperature at `base_time_ns` is `base_temperature_c`, and the
// power before base_time_ns is taken as constant at that temperature.
struct LimitTimeline {
  std::uint32_t base_limit_mw;
  std::span<const LimitChange> changes;
  std::uint32_t base_flags = 0;
  double base_temperature_c = 0.0;
  std::int64_t base_time_ns = 0;

  // The limit in force at `time_ns` (right-continuous: a change at exactly
  // `time_ns` is already in force).
  std::uint32_t LimitAt(std::int64_t time_ns) const;
  // The limit and activity in force at `time_ns` (right-continuous).
  Condition ConditionAt(std::int64_t time_ns) const;
};

// A GPU's thermal behaviour (see the file comment and docs/emulator-thermal.md):
//   steady state      T_ss = ambient_c + resistance_c_per_w x P        (P in W)
//   first-order lag   dT/dt = (T_ss - T) / time_constant_s
//   leakage           P = min(W x (1 + leakage_per_c x (T - reference_c)), limit)
// where W is the work power (min(demand, limit), or the idle power). The
// temperature starts at ambient_c at emulated time 0.
// Valid (the scenario checks it): resistance_c_per_w > 0, time_constant_s > 0,
// leakage_per_c >= 0, resistance_c_per_w x leakage_per_c x (any W) < 1 (no
// thermal runaway), and 1 + leakage_per_c x (ambient_c - reference_c) > 0.
struct ThermalModel {
  double ambient_c = 30.0;
  double resistance_c_per_w = 0.1;
  double time_constant_s = 30.0;
  double leakage_per_c = 0.0;
  double reference_c = 30.0;
};

// One step of a power schedule: from `time_ns` on, the demand is `power_mw`.
struct ScheduleStep {
  std::int64_t time_ns;
  std::uint32_t power_mw;
};

// One point of a workload curve: at power limit `limit_mw` the workload wants
// `power_mw` and (optionally) takes `iteration_time_s` per iteration.
struct CurvePoint {
  std::uint32_t limit_mw;
  double power_mw;
  std::optional<double> iteration_time_s;
};

// What a GPU demands, as a function of emulated time and the limit in force.
// Three kinds, matching the scenario's power_w / power_schedule / workload.
class PowerModel {
 public:
  enum class Kind { kConstant, kSchedule, kWorkload };

  // Demand is `power_mw` at all times.
  static PowerModel Constant(std::uint32_t power_mw);
  // Demand follows `steps`. Requires: non-empty, steps[0].time_ns == 0, times
  // strictly increasing. The last step's power holds forever.
  static PowerModel Schedule(std::vector<ScheduleStep> steps);
  // Demand is the curve's power linearly interpolated at the limit in force,
  // clamped to the end points outside the curve. Requires: non-empty, limits
  // strictly increasing; iteration times present on all points or none.
  static PowerModel Workload(std::vector<CurvePoint> points);

  // A constant 0 mW model (so that default-constructed specs are usable).
  PowerModel() = default;

  Kind kind() const { return kind_; }

  // What an idle GPU (an entry with kIdleFlag) draws before the limit, in mW.
  std::uint32_t idle_mw() const { return idle_mw_; }
  void set_idle_mw(std::uint32_t idle_mw) { idle_mw_ = idle_mw; }
  // The thermal model; nullopt (the default): temperature plays no part.
  const std::optional<ThermalModel>& thermal() const { return thermal_; }
  void set_thermal(std::optional<ThermalModel> thermal) { thermal_ = thermal; }
  // The load of the scenario's processes (see ProcessLoadAt); empty: none.
  // Requires `steps` sorted by time.
  void set_process_load(std::vector<LoadStep> steps) { load_steps_ = std::move(steps); }
  // The scenario's processes' load at `time_ns` in percent, -1 when none runs.
  std::int32_t ProcessLoadAt(std::int64_t time_ns) const;
  // The work power (before leakage) at `time_ns` under `condition`:
  // min(idle_mw, limit) when idle; else, while processes run (the scenario's,
  // or attached ones: condition.attached_load_percent), the process load
  // rule: with L = min(100, the scenario's load + the attached load) and
  // D = DemandMw, min(idle_mw + (D - idle_mw) x L / 100, limit) (D when
  // D <= idle_mw); else DrawnMw.
  std::uint32_t WorkMw(std::int64_t time_ns, Condition condition) const;

  // The power the workload wants at `time_ns` under `limit_mw`, in whole mW.
  std::uint32_t DemandMw(std::int64_t time_ns, std::uint32_t limit_mw) const;
  // The power actually drawn: min(demand, limit).
  std::uint32_t DrawnMw(std::int64_t time_ns, std::uint32_t limit_mw) const;
  // The first instant after `time_ns` at which the demand changes for a
  // reason other than the limit (a schedule step or a process load step), or
  // kNeverNs.
  std::int64_t NextStepAfterNs(std::int64_t time_ns) const;
  // Seconds per iteration at `limit_mw`, interpolated like the power; nullopt
  // unless this is a workload model whose points carry iteration times.
  std::optional<double> IterationTimeS(std::uint32_t limit_mw) const;

 private:
  Kind kind_ = Kind::kConstant;
  std::uint32_t constant_mw_ = 0;
  std::vector<ScheduleStep> steps_;
  std::vector<CurvePoint> curve_;
  std::uint32_t idle_mw_ = 0;
  std::optional<ThermalModel> thermal_;
  std::vector<LoadStep> load_steps_;
};

// The power drawn at `time_ns` (the activity, and under a thermal model the
// temperature then, included), rounded to a whole mW. Without a thermal model
// and with no idle entry this is model.DrawnMw(time_ns, LimitAt(time_ns)).
std::uint32_t PowerAtMw(const PowerModel& model, const LimitTimeline& timeline, std::int64_t time_ns);

// The temperature at `time_ns` under the model's thermal model, in °C,
// integrated from the timeline's entry in force then; 0 without one.
double TemperatureAt(const PowerModel& model, const LimitTimeline& timeline, std::int64_t time_ns);

// Closed-form pieces of the thermal model, exposed for tests. One interval of
// `duration_s` (>= 0) at constant work power `work_w` under cap `cap_w`
// (work_w <= cap_w), starting at `start_c`: the temperature at its end and
// the energy drawn over it, in J. Exact (up to rounding) across a crossing
// of the cap.
struct ThermalInterval {
  double end_c;
  double energy_j;
};
ThermalInterval IntegrateThermal(const ThermalModel& thermal, double work_w, double cap_w, double start_c,
                                 double duration_s);
// The power drawn at temperature `temperature_c`, in W.
double ThermalPowerW(const ThermalModel& thermal, double work_w, double cap_w, double temperature_c);

// The exact energy drawn over [from_ns, to_ns) (zero if to_ns <= from_ns).
Energy IntegrateEnergy(const PowerModel& model, const LimitTimeline& timeline, std::int64_t from_ns,
                       std::int64_t to_ns);

// The average drawn power over [from_ns, to_ns], rounded to the nearest mW. If
// the interval is empty (to_ns <= from_ns) it is the power drawn at to_ns.
// Requires to_ns - from_ns <= 60 s (see Energy::TotalPicojoules).
std::uint32_t AveragePowerMw(const PowerModel& model, const LimitTimeline& timeline, std::int64_t from_ns,
                             std::int64_t to_ns);

// How a driver's power sensor reports: the reported value changes only at
// update instants u_k = k * period_ns, and is the average drawn power over
// [u - window_ns, u] (clipped at time 0) for the latest u <= now_ns. A zero
// window reports the power drawn at u.
struct PowerSensor {
  std::int64_t period_ns;  // > 0
  std::int64_t window_ns;  // in [0, 60 s]

  // The latest update instant at or before `now_ns` (now_ns >= 0).
  std::int64_t LatestUpdateNs(std::int64_t now_ns) const;
  // The windowed average reported at `now_ns` (NVML's "average" power).
  std::uint32_t AverageMw(const PowerModel& model, const LimitTimeline& timeline, std::int64_t now_ns) const;
  // The power drawn at the latest update instant (NVML's "instant" power).
  std::uint32_t InstantMw(const PowerModel& model, const LimitTimeline& timeline, std::int64_t now_ns) const;
};

// How many limit changes a LimitHistory keeps individually. Older ones are
// folded into its base.
inline constexpr std::size_t kLimitHistoryCapacity = 256;

// A GPU's power-limit history, sufficient to integrate its energy exactly from
// time 0 to any instant not before its base.
//
// The timeline is: `base.limit_mw` from `base.time_ns` until the first kept
// change, then the kept changes; every entry (the base included) carries the
// exact energy drawn before it. Folding moves the oldest kept changes into the
// base. The emulator's setter folds what no reading can need any more
// (ForgetLimitChangesBefore), so the history holds only the changes within
// the longest look-back of a reading plus a settling ramp still under way;
// recording a change folds the oldest one when all kLimitHistoryCapacity are
// in use.
// Power averages whose window reaches behind the base treat the limit there as
// `base.limit_mw` (an approximation only after more than
// kLimitHistoryCapacity changes within one look-back), and an energy reading
// at an instant before the base reads the energy at the base.
//
// Space is constant (this fixed-size record), and so is the work of an
// energy reading: TotalEnergyAt passes over only the changes after its
// instant.
//
// Trivially copyable with a fixed layout: it lives in the shared state file.
// Initialise with InitLimitHistory; zeroed memory is not a valid history.
struct LimitHistory {
  LimitChange base;
  std::uint32_t count;  // kept changes, <= kLimitHistoryCapacity
  // Energy over [0, reset time) once the base has passed the counter reset
  // time (see CounterEnergyAt); valid when reset_captured != 0.
  std::uint32_t reset_captured;
  Energy reset_energy;
  std::array<LimitChange, kLimitHistoryCapacity> changes;
};

// Resets `history` to "limit `initial_limit_mw` since time 0, busy, nothing
// drawn, at `initial_temperature_c`" (the thermal model's ambient_c; 0
// without one).
void InitLimitHistory(LimitHistory* history, std::uint32_t initial_limit_mw, double initial_temperature_c = 0.0);

// The limit timeline a history describes.
LimitTimeline TimelineOf(const LimitHistory& history);

// The limit currently in force (the latest change, or the base's limit).
std::uint32_t CurrentLimitMw(const LimitHistory& history);

// Records that the limit becomes `limit_mw` at `time_ns`. A time earlier than
// the latest recorded change is moved up to it (time never runs backwards in
// the record); a change at the same instant as the latest replaces it.
// `counter_reset_ns` is the GPU's energy-counter reset time, if any, so that
// folding can capture the energy at that instant exactly.
void RecordLimitChange(LimitHistory* history, const PowerModel& model, std::optional<std::int64_t> counter_reset_ns,
                       std::int64_t time_ns, std::uint32_t limit_mw);

// Records that the GPU goes idle (`idle`) or busy from `time_ns` on (an
// activity change; the limit stays). Time is clamped up to the base's. Kept
// changes after `time_ns` (the rest of a settling ramp) keep their limits,
// take the new activity, and have their energy and temperature recomputed.
// Nothing is recorded when the activity in force at `time_ns` is already
// `idle`.
void RecordActivityChange(LimitHistory* history, const PowerModel& model,
                          std::optional<std::int64_t> counter_reset_ns, std::int64_t time_ns, bool idle);

// Records that the load of the processes attached at run time becomes
// `percent` (capped at 100; -1: none attached) from `time_ns` on, as
// RecordActivityChange does for the activity (the limit and the activity
// stay). Nothing is recorded when that load is already in force.
void RecordProcessLoadChange(LimitHistory* history, const PowerModel& model,
                             std::optional<std::int64_t> counter_reset_ns, std::int64_t time_ns,
                             std::int32_t percent);

// Folds every kept change at or before `horizon_ns` into the base (the change
// in force at horizon_ns becomes the base), capturing the counter-reset
// energy if the base passes the reset time. Afterwards every reading at
// instants >= horizon_ns is what it was before, and the history holds only
// the changes after horizon_ns.
void ForgetLimitChangesBefore(LimitHistory* history, const PowerModel& model,
                              std::optional<std::int64_t> counter_reset_ns, std::int64_t horizon_ns);

// How many steps a settling limit change takes (see RecordLimitRamp).
inline constexpr int kSettleSteps = 10;

// Records a limit change to `limit_mw` made at `time_ns` that settles over
// `settle_ns`, as a power controller does: the cap on drawn power moves from
// the limit in force at `time_ns` to `limit_mw` in kSettleSteps equal time
// steps, step k (0-based) at the value a straight ramp has at the middle of
// the step, so that energy under a binding cap equals the straight ramp's;
// from time_ns + settle_ns on it is `limit_mw`. Changes recorded for instants
// after `time_ns` (the rest of a ramp still under way) are dropped first, so a
// new change starts from where the old ramp had got to. With settle_ns <= 0,
// or nothing to ramp, this is RecordLimitChange. CurrentLimitMw reads
// `limit_mw` at once (the setting), while the drawn power follows the ramp.
void RecordLimitRamp(LimitHistory* history, const PowerModel& model, std::optional<std::int64_t> counter_reset_ns,
                     std::int64_t time_ns, std::uint32_t limit_mw, std::int64_t settle_ns);

// The exact energy drawn over [0, now_ns). now_ns is clamped up to the base's
// time. Work: the kept changes after now_ns (a settling ramp at most, for a
// history the setter maintains), not the whole history.
Energy TotalEnergyAt(const LimitHistory& history, const PowerModel& model, std::int64_t now_ns);

// What the GPU's energy counter reads at `now_ns`: TotalEnergyAt, or, once
// `counter_reset_ns` has passed, the energy since that instant.
Energy CounterEnergyAt(const LimitHistory& history, const PowerModel& model,
                       std::optional<std::int64_t> counter_reset_ns, std::int64_t now_ns);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_PHYSICS_H_
