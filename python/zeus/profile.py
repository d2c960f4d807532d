"""Thermally stable energy profiling (Zeus's ``zeus.profile``): how long to measure and how long to cool down
between measurements so that repeated energy readings of a workload agree.

A workload is a callable that runs one iteration (``target_function()``, no arguments). A *trial* idles for
``cooldown_duration`` seconds (``time.sleep``), runs warm-up iterations, then measures a ``ZeusMonitor`` window
over ``ceil(measurement_duration / iteration_time)`` iterations, where the iteration time comes from a
calibration (``time.monotonic`` around ``num_calibration_iterations`` iterations). A *sweep* runs
``num_trials`` trials for each value of one duration and marks the value valid when the sample standard
deviation of the trials' energy per iteration is below ``trial_stddev_threshold`` (J)::

    measure(...)                       one calibrated trial                               -> TrialResult
    profile_measurement_duration(...)  sweep measurement_duration, cooldown fixed         -> SweepReport
    profile_cooldown_duration(...)     sweep cooldown_duration, measurement fixed         -> SweepReport
    profile_parameters(...)            both: measurement sweep (cooldown = max of its range), then cooldown
                                       sweep (measurement = max of its range, no warm-up trials)

Why: a GPU's power rises with its temperature (leakage), so back-to-back trials start hotter and read more
energy; a cooldown lets each start from the same temperature. The NVML emulator shows this with a scenario's
``"thermal"`` model (``docs/emulator-thermal.md``).

Distributed runs (``torch.distributed``): every rank profiles its own GPU (a ``ZeusMonitor`` with
``gpu_indices=[local_rank]``); each trial's figures are combined over the ranks with
``zeus.utils.framework.all_reduce``: energy summed, time the maximum, temperatures averaged. Only rank 0 logs
(logger ``zeus.profile``, INFO).

Differences from Zeus, on purpose:

* Arguments are checked before any work, and a bad one raises ``ValueError`` naming it (Zeus checks only
  ``warmup_settle_duration``, and otherwise fails later, e.g. with ``ZeroDivisionError`` for
  ``num_calibration_iterations=0``, or silently accepts a negative cooldown). An empty or ``None`` search
  range means the default ``[1.0, 2.0, ..., 10.0]``, as in Zeus.
* The temperature is read through ``zeus.device.get_gpus()`` (our ``ZeusMonitor`` has no ``gpus``
  attribute); a GPU without a temperature sensor raises the device error.
* When not distributed (world size 1) no all-reduce is attempted at all, so no framework is needed.
"""

from __future__ import annotations

import logging
import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple

from zeus.monitor.energy import ZeusMonitor
from zeus.utils import framework as _framework

__all__ = [
    "TrialResult",
    "SweepResult",
    "SweepReport",
    "measure",
    "profile_parameters",
    "profile_measurement_duration",
    "profile_cooldown_duration",
]

logger = logging.getLogger("zeus.profile")

# Zeus's constants (reference A13).
_DEFAULT_SEARCH_RANGE = [float(seconds) for seconds in range(1, 11)]
_DEFAULT_FIXED_DURATION_S = 10.0
_DEFAULT_NUM_TRIALS = 10
_DEFAULT_NUM_WARMUP_TRIALS = 2
_DEFAULT_TRIAL_STDDEV_THRESHOLD_J = 0.01
_DEFAULT_NUM_WARMUP_ITERATIONS = 10
_DEFAULT_NUM_CALIBRATION_ITERATIONS = 100
_WINDOW = "__zeus_profile_trial"


@dataclass
class TrialResult:
    """One trial: what its measurement window saw, over every rank.

    Attributes:
        energy_per_iter: total_energy / iterations (J).
        time_per_iter: total_time / iterations (s).
        total_energy: energy of the window, summed over the ranks (J).
        total_time: duration of the window, the longest rank's (s).
        iterations: iterations run in the window.
        temperature_before: mean temperature of the measured GPUs just before the window (°C), averaged over
            the ranks.
        temperature_after: the same just after the window (°C).
    """

    energy_per_iter: float
    time_per_iter: float
    total_energy: float
    total_time: float
    iterations: int
    temperature_before: float
    temperature_after: float


@dataclass
class SweepResult:
    """The trials of one swept value.

    Attributes:
        measurement_duration: the measurement duration of these trials (s).
        cooldown_duration: their cooldown (s).
        trials: each trial's result.
        energy_mean: mean of the trials' energy_per_iter (J).
        energy_std: sample standard deviation of energy_per_iter (J; 0 for a single trial).
        avg_temperature_before: mean of the trials' temperature_before (°C).
        avg_temperature_after: mean of the trials' temperature_after (°C).
        avg_total_time: mean window duration (s).
        avg_total_energy: mean window energy (J).
        is_valid: energy_std < trial_stddev_threshold.
    """

    measurement_duration: float
    cooldown_duration: float
    trials: List[TrialResult]
    energy_mean: float
    energy_std: float
    avg_temperature_before: float
    avg_temperature_after: float
    avg_total_time: float
    avg_total_energy: float
    is_valid: bool

    def _figures(self) -> str:
        return (
            f"energy/iter {self.energy_mean:.4f} J ± {self.energy_std:.4f} J, "
            f"{self.avg_temperature_before:.1f} → {self.avg_temperature_after:.1f} °C, "
            f"{'valid' if self.is_valid else 'INVALID'}"
        )

    def __str__(self) -> str:
        """One line: the two durations and the figures, without the trials."""
        return (
            f"measurement {self.measurement_duration:g} s, cooldown {self.cooldown_duration:g} s: "
            f"{self._figures()}"
        )


@dataclass
class SweepReport:
    """A whole sweep.

    Attributes:
        sweep_param: (name of the swept duration, its values), e.g. ("cooldown_duration", [1.0, 2.0]).
        fixed_param: (name of the fixed duration, its value).
        entries: one SweepResult per swept value, in order.
    """

    sweep_param: Tuple[str, List[float]]
    fixed_param: Tuple[str, float]
    entries: List[SweepResult]

    def __str__(self) -> str:
        """A heading and one line per swept value."""
        swept, _ = self.sweep_param
        fixed, fixed_value = self.fixed_param
        lines = [f"{swept} sweep ({fixed} = {fixed_value:g} s):"]
        for entry in self.entries:
            lines.append(f"  {swept} = {getattr(entry, swept):g} s: {entry._figures()}")
        return "\n".join(lines)


# ---- argument checks ----------------------------------------------------------------------------------------


def _check_count(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum} (got {value!r})")


def _check_seconds(name: str, value: Any, positive: bool, unit: str = "seconds") -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be a finite number of {unit} {'> 0' if positive else '>= 0'} (got {value!r})")


def _search_range(name: str, values: Optional[Sequence[float]], positive: bool) -> List[float]:
    """The swept values: Zeus's default for None or an empty list (as Zeus's ``or``), else each checked."""
    if not values:
        return list(_DEFAULT_SEARCH_RANGE)
    checked = list(values)
    for i, value in enumerate(checked):
        _check_seconds(f"{name}[{i}]", value, positive)
    return [float(v) for v in checked]


def _check_common(target_function: Any, zeus_monitor: Any, num_warmup_iterations: Any,
                  num_calibration_iterations: Any) -> None:
    if not callable(target_function):
        raise ValueError(f"target_function must be a callable that runs one iteration (got {target_function!r})")
    if not isinstance(zeus_monitor, ZeusMonitor):
        raise ValueError(f"zeus_monitor must be a zeus.monitor.ZeusMonitor (got {type(zeus_monitor).__name__})")
    if not zeus_monitor.gpu_indices:
        raise ValueError("zeus_monitor measures no GPU: profiling needs GPU energy and temperature "
                         "(create it with gpu_indices=[...])")
    _check_count("num_warmup_iterations", num_warmup_iterations, 0)
    _check_count("num_calibration_iterations", num_calibration_iterations, 1)


def _check_sweep(num_trials: Any, num_warmup_trials: Any, trial_stddev_threshold: Any,
                 iteration_duration: Any) -> None:
    _check_count("num_trials", num_trials, 1)
    _check_count("num_warmup_trials", num_warmup_trials, 0)
    _check_seconds("trial_stddev_threshold", trial_stddev_threshold, positive=False, unit="joules")
    if iteration_duration is not None:
        _check_seconds("iteration_duration", iteration_duration, positive=True)


# ---- the steps of A13 ---------------------------------------------------------------------------------------


def _is_rank_zero() -> bool:
    return _framework.get_rank() == 0


def _log(message: str, *args: Any) -> None:
    if _is_rank_zero():
        logger.info(message, *args)


def _reduce(values: List[float], operation: str) -> List[float]:
    """all_reduce over the ranks; the values themselves when not distributed (no framework needed)."""
    if _framework.get_world_size() == 1:
        return list(values)
    return list(_framework.all_reduce(values, operation))


def _sync(zeus_monitor: ZeusMonitor) -> None:
    _framework.sync_execution(zeus_monitor.gpu_indices, sync_with=zeus_monitor.sync_with)


def _calibrate(target_function: Callable[[], Any], zeus_monitor: ZeusMonitor, num_warmup_iterations: int,
               num_calibration_iterations: int) -> float:
    """Seconds per iteration: warm up, then time num_calibration_iterations on the monotonic clock; the slowest
    rank's figure."""
    for _ in range(num_warmup_iterations):
        target_function()
    _sync(zeus_monitor)
    started = time.monotonic()
    for _ in range(num_calibration_iterations):
        target_function()
    _sync(zeus_monitor)
    iteration_s = (time.monotonic() - started) / num_calibration_iterations
    [iteration_s] = _reduce([iteration_s], "max")
    if not iteration_s > 0:
        raise RuntimeError(
            f"zeus.profile: {num_calibration_iterations} iterations of target_function took no measurable time on "
            "time.monotonic(); give iteration_duration, or raise num_calibration_iterations"
        )
    _log("calibrated iteration time: %.6f s", iteration_s)
    return iteration_s


def _mean_temperature(zeus_monitor: ZeusMonitor) -> float:
    from zeus.device import get_gpus

    gpus = get_gpus()
    readings = [float(gpus.get_gpu_temperature(i)) for i in zeus_monitor.gpu_indices]
    return sum(readings) / len(readings)


def _trial(target_function: Callable[[], Any], zeus_monitor: ZeusMonitor, cooldown_duration: float,
           measurement_duration: float, num_warmup_iterations: int, iteration_duration: float) -> TrialResult:
    """Cool down, warm up, measure (A13's trial)."""
    iterations = max(1, math.ceil(measurement_duration / iteration_duration))
    if cooldown_duration > 0:
        time.sleep(cooldown_duration)
    for _ in range(num_warmup_iterations):
        target_function()
    _sync(zeus_monitor)
    before_c = _mean_temperature(zeus_monitor)
    zeus_monitor.begin_window(_WINDOW, sync_execution=False)
    for _ in range(iterations):
        target_function()
    measured = zeus_monitor.end_window(_WINDOW)
    after_c = _mean_temperature(zeus_monitor)
    [energy_j] = _reduce([measured.total_energy], "sum")
    [time_s] = _reduce([measured.time], "max")
    [before_sum_c, after_sum_c] = _reduce([before_c, after_c], "sum")
    ranks = _framework.get_world_size()
    return TrialResult(
        energy_per_iter=energy_j / iterations,
        time_per_iter=time_s / iterations,
        total_energy=energy_j,
        total_time=time_s,
        iterations=iterations,
        temperature_before=before_sum_c / ranks,
        temperature_after=after_sum_c / ranks,
    )


def _summarise(measurement_duration: float, cooldown_duration: float, trials: List[TrialResult],
               trial_stddev_threshold: float) -> SweepResult:
    energies = [t.energy_per_iter for t in trials]
    std_j = statistics.stdev(energies) if len(energies) >= 2 else 0.0
    n = len(trials)
    return SweepResult(
        measurement_duration=measurement_duration,
        cooldown_duration=cooldown_duration,
        trials=trials,
        energy_mean=statistics.mean(energies),
        energy_std=std_j,
        avg_temperature_before=sum(t.temperature_before for t in trials) / n,
        avg_temperature_after=sum(t.temperature_after for t in trials) / n,
        avg_total_time=sum(t.total_time for t in trials) / n,
        avg_total_energy=sum(t.total_energy for t in trials) / n,
        is_valid=std_j < trial_stddev_threshold,
    )


def _sweep(target_function: Callable[[], Any], zeus_monitor: ZeusMonitor, swept: str, values: List[float],
           fixed_value: float, num_trials: int, num_warmup_trials: int, trial_stddev_threshold: float,
           num_warmup_iterations: int, iteration_duration: float) -> SweepReport:
    cooldown_swept = swept == "cooldown_duration"
    if num_warmup_trials > 0:
        # Back to back, no warm-up iterations, as long as the longest measurement of the sweep.
        warmup_measurement = fixed_value if cooldown_swept else max(values)
        _log("%d warm-up trial(s) of %g s", num_warmup_trials, warmup_measurement)
        for _ in range(num_warmup_trials):
            _trial(target_function, zeus_monitor, 0.0, warmup_measurement, 0, iteration_duration)
    entries: List[SweepResult] = []
    for value in values:
        cooldown = value if cooldown_swept else fixed_value
        measurement = fixed_value if cooldown_swept else value
        trials = []
        for number in range(1, num_trials + 1):
            trials.append(_trial(target_function, zeus_monitor, cooldown, measurement, num_warmup_iterations,
                                 iteration_duration))
            _log("%s = %g s: trial %d of %d: %.4f J per iteration", swept, value, number, num_trials,
                 trials[-1].energy_per_iter)
        entries.append(_summarise(measurement, cooldown, trials, trial_stddev_threshold))
    fixed = "measurement_duration" if cooldown_swept else "cooldown_duration"
    report = SweepReport(sweep_param=(swept, list(values)), fixed_param=(fixed, fixed_value), entries=entries)
    _log("%s", report)
    return report


# ---- the public API -----------------------------------------------------------------------------------------


def profile_measurement_duration(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    measurement_duration_search_range: Optional[List[float]] = None,
    cooldown_duration: float = _DEFAULT_FIXED_DURATION_S,
    num_trials: int = _DEFAULT_NUM_TRIALS,
    num_warmup_trials: int = _DEFAULT_NUM_WARMUP_TRIALS,
    trial_stddev_threshold: float = _DEFAULT_TRIAL_STDDEV_THRESHOLD_J,
    num_warmup_iterations: int = _DEFAULT_NUM_WARMUP_ITERATIONS,
    num_calibration_iterations: int = _DEFAULT_NUM_CALIBRATION_ITERATIONS,
    iteration_duration: Optional[float] = None,
) -> SweepReport:
    """Sweeps the measurement duration with the cooldown fixed.

    Args:
        target_function: runs one iteration of the workload (called with no arguments).
        zeus_monitor: measures the windows (its GPUs; one per rank when distributed).
        measurement_duration_search_range: the durations to try (s, each > 0); None or empty: 1, 2, ..., 10.
        cooldown_duration: idle time before every trial (s, >= 0).
        num_trials: trials per duration (>= 1).
        num_warmup_trials: back-to-back trials before the sweep, discarded (>= 0), at the longest duration.
        trial_stddev_threshold: a duration is valid when the trials' energy-per-iteration standard deviation
            is below this (J).
        num_warmup_iterations: iterations before each trial's window, and before calibration (>= 0).
        num_calibration_iterations: iterations timed to find the iteration time (>= 1).
        iteration_duration: seconds per iteration, if already known (> 0): no calibration.

    Raises:
        ValueError: an argument is out of range (the message names it).
    """
    _check_common(target_function, zeus_monitor, num_warmup_iterations, num_calibration_iterations)
    values = _search_range("measurement_duration_search_range", measurement_duration_search_range, positive=True)
    _check_seconds("cooldown_duration", cooldown_duration, positive=False)
    _check_sweep(num_trials, num_warmup_trials, trial_stddev_threshold, iteration_duration)
    if iteration_duration is None:
        iteration_duration = _calibrate(target_function, zeus_monitor, num_warmup_iterations,
                                        num_calibration_iterations)
    _log("sweeping measurement_duration over %s s with a %g s cooldown", values, cooldown_duration)
    return _sweep(target_function, zeus_monitor, "measurement_duration", values, float(cooldown_duration),
                  num_trials, num_warmup_trials, trial_stddev_threshold, num_warmup_iterations, iteration_duration)


def profile_cooldown_duration(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    cooldown_duration_search_range: Optional[List[float]] = None,
    measurement_duration: float = _DEFAULT_FIXED_DURATION_S,
    num_trials: int = _DEFAULT_NUM_TRIALS,
    num_warmup_trials: int = _DEFAULT_NUM_WARMUP_TRIALS,
    trial_stddev_threshold: float = _DEFAULT_TRIAL_STDDEV_THRESHOLD_J,
    num_warmup_iterations: int = _DEFAULT_NUM_WARMUP_ITERATIONS,
    num_calibration_iterations: int = _DEFAULT_NUM_CALIBRATION_ITERATIONS,
    iteration_duration: Optional[float] = None,
) -> SweepReport:
    """Sweeps the cooldown with the measurement duration fixed.

    Args:
        cooldown_duration_search_range: the cooldowns to try (s, each >= 0); None or empty: 1, 2, ..., 10.
        measurement_duration: the measurement duration of every trial (s, > 0).
        The others: as profile_measurement_duration (warm-up trials measure ``measurement_duration``).

    Raises:
        ValueError: an argument is out of range (the message names it).
    """
    _check_common(target_function, zeus_monitor, num_warmup_iterations, num_calibration_iterations)
    values = _search_range("cooldown_duration_search_range", cooldown_duration_search_range, positive=False)
    _check_seconds("measurement_duration", measurement_duration, positive=True)
    _check_sweep(num_trials, num_warmup_trials, trial_stddev_threshold, iteration_duration)
    if iteration_duration is None:
        iteration_duration = _calibrate(target_function, zeus_monitor, num_warmup_iterations,
                                        num_calibration_iterations)
    _log("sweeping cooldown_duration over %s s with %g s measurements", values, measurement_duration)
    return _sweep(target_function, zeus_monitor, "cooldown_duration", values, float(measurement_duration),
                  num_trials, num_warmup_trials, trial_stddev_threshold, num_warmup_iterations, iteration_duration)


def profile_parameters(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    measurement_duration_search_range: Optional[List[float]] = None,
    cooldown_duration_search_range: Optional[List[float]] = None,
    num_trials: int = _DEFAULT_NUM_TRIALS,
    num_warmup_trials: int = _DEFAULT_NUM_WARMUP_TRIALS,
    trial_stddev_threshold: float = _DEFAULT_TRIAL_STDDEV_THRESHOLD_J,
    num_warmup_iterations: int = _DEFAULT_NUM_WARMUP_ITERATIONS,
    num_calibration_iterations: int = _DEFAULT_NUM_CALIBRATION_ITERATIONS,
) -> Tuple[SweepReport, SweepReport]:
    """Both sweeps after one calibration: the measurement durations with the cooldown at the longest of
    ``cooldown_duration_search_range`` (after ``num_warmup_trials`` warm-up trials), then the cooldowns with the
    measurement at the longest of ``measurement_duration_search_range`` (no warm-up trials).

    Returns:
        (measurement sweep report, cooldown sweep report).

    Raises:
        ValueError: an argument is out of range (the message names it).
    """
    _check_common(target_function, zeus_monitor, num_warmup_iterations, num_calibration_iterations)
    measurements = _search_range("measurement_duration_search_range", measurement_duration_search_range,
                                 positive=True)
    cooldowns = _search_range("cooldown_duration_search_range", cooldown_duration_search_range, positive=False)
    _check_sweep(num_trials, num_warmup_trials, trial_stddev_threshold, None)
    iteration_s = _calibrate(target_function, zeus_monitor, num_warmup_iterations, num_calibration_iterations)
    measurement_report = profile_measurement_duration(
        target_function, zeus_monitor, measurements, max(cooldowns), num_trials, num_warmup_trials,
        trial_stddev_threshold, num_warmup_iterations, num_calibration_iterations, iteration_s)
    cooldown_report = profile_cooldown_duration(
        target_function, zeus_monitor, cooldowns, max(measurements), num_trials, 0, trial_stddev_threshold,
        num_warmup_iterations, num_calibration_iterations, iteration_s)
    return measurement_report, cooldown_report


def measure(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    measurement_duration: float,
    cooldown_duration: float,
    num_warmup_iterations: int = _DEFAULT_NUM_WARMUP_ITERATIONS,
    num_calibration_iterations: int = _DEFAULT_NUM_CALIBRATION_ITERATIONS,
    warmup_settle_duration: Optional[float] = None,
) -> TrialResult:
    """One calibrated trial with durations of your choice.

    Args:
        target_function: runs one iteration of the workload.
        zeus_monitor: measures the window.
        measurement_duration: how long to measure (s, > 0): ceil(measurement_duration / iteration time)
            iterations (at least one).
        cooldown_duration: idle time before the warm-up (s, >= 0).
        num_warmup_iterations: iterations before calibration, and before the window unless
            warmup_settle_duration is given (>= 0).
        num_calibration_iterations: iterations timed to find the iteration time (>= 1).
        warmup_settle_duration: run the workload this long before the window (s, >= 0), i.e.
            max(1, ceil(warmup_settle_duration / iteration time)) warm-up iterations instead of
            num_warmup_iterations (calibration still uses num_warmup_iterations).

    Raises:
        ValueError: an argument is out of range (the message names it); a negative warmup_settle_duration
            raises it as Zeus does.
    """
    if warmup_settle_duration is not None:
        ok = isinstance(warmup_settle_duration, (int, float)) and not isinstance(warmup_settle_duration, bool)
        if not ok or not warmup_settle_duration >= 0 or not math.isfinite(warmup_settle_duration):
            raise ValueError(f"warmup_settle_duration must be a finite number of seconds >= 0 "
                             f"(got {warmup_settle_duration!r})")
    _check_common(target_function, zeus_monitor, num_warmup_iterations, num_calibration_iterations)
    _check_seconds("measurement_duration", measurement_duration, positive=True)
    _check_seconds("cooldown_duration", cooldown_duration, positive=False)
    iteration_s = _calibrate(target_function, zeus_monitor, num_warmup_iterations, num_calibration_iterations)
    warmup_iterations = num_warmup_iterations
    if warmup_settle_duration is not None:
        warmup_iterations = max(1, math.ceil(warmup_settle_duration / iteration_s))
    result = _trial(target_function, zeus_monitor, float(cooldown_duration), float(measurement_duration),
                    warmup_iterations, iteration_s)
    _log("measured %d iterations after %d warm-up iterations: %.4f J per iteration", result.iterations,
         warmup_iterations, result.energy_per_iter)
    return result
