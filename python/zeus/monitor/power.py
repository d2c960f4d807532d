"""Power timelines: ``PowerMonitor`` and ``PowerDomain`` (Zeus's ``zeus.monitor.power``).

Sampling runs in native threads (one per GPU, ``zeus::monitor::PowerMonitor``), not in Python
processes: no process is spawned, no sample crosses a queue, and queries read bounded ring buffers.

Differences from Zeus, on purpose:

* ``update_period=None`` samples every 0.1 s instead of inferring the driver's update period by
  busy-polling at start-up.
* ``max_samples_per_gpu=None`` keeps the last 36,000 samples per GPU (an hour at 10 Hz), not every
  sample forever: memory is bounded.
* Timelines hold every sample, not only the samples where the value changed.
* ``get_energy`` integrates with hold-last-value semantics (the power read at a sample holds until
  the next one), clipped at ``start_time`` and ``end_time``, so a window of constant power P and
  length T reads P x T (Zeus's trapezoid over the in-window change points reads 0 J for it).
* Timestamps come from a monotonic clock (on the NVML emulator, its clock), shifted so that they
  read as Unix time at construction: ``time.time()`` values work as bounds, and NTP steps do not
  corrupt durations. On an emulator whose clock is scaled or manual, take bounds from
  ``PowerMonitor.time()`` instead of ``time.time()``.
* ``DEVICE_INSTANT`` is always monitored: a GPU without the instant-power field is sampled through
  the driver's power reading.
* GPUs need not be all of one model.
* The monitored domains are the attribute ``measurement_domains``, as in Zeus after 0.16 (the
  constructor argument stays ``power_domains``, as in Zeus; ``measurement_domains=`` is accepted
  too). The attribute ``power_domains`` (Zeus 0.16's) still works as a deprecated alias (one
  ``DeprecationWarning`` per process).

Fork: a PowerMonitor created before ``os.fork()`` raises ``RuntimeError`` when used in the forked
child (its sampler threads run only in the parent; the child gets no thread). Create a new one in
the child. The parent's samplers are unaffected.

Thread-safety: every method may be called from several threads at once.
"""

from __future__ import annotations

import bisect
import enum
import logging
import time as _time
import warnings
from typing import Optional, Sequence, Union

from zeus import _native

logger = logging.getLogger(__name__)

_DEFAULT_PERIOD_S = 0.1
_DEFAULT_CAPACITY = 36_000
# Below this, as Zeus warns, the driver's power reading rarely changes between samples.
_FAST_PERIOD_S = 0.05

# Advice given once per process.
_said: set[str] = set()


def _once(key: str) -> bool:
    """True the first time ``key`` is seen in this process."""
    if key in _said:
        return False
    _said.add(key)
    return True


def _deprecated_power_domains(stacklevel: int) -> None:
    if _once("power_domains"):
        warnings.warn(
            "PowerMonitor.power_domains is deprecated: read PowerMonitor.measurement_domains (the same list of "
            "PowerDomain), Zeus's name since 0.16",
            DeprecationWarning,
            stacklevel=stacklevel + 1,
        )


class PowerDomain(enum.Enum):
    """A power measurement domain (Zeus's values)."""

    DEVICE_INSTANT = "device_instant"
    DEVICE_AVERAGE = "device_average"
    MEMORY_AVERAGE = "memory_average"


_FIELD = {PowerDomain.DEVICE_INSTANT: 0, PowerDomain.DEVICE_AVERAGE: 1, PowerDomain.MEMORY_AVERAGE: 2}


def _domain(value: Union[PowerDomain, str]) -> PowerDomain:
    if isinstance(value, PowerDomain):
        return value
    try:
        return PowerDomain(value)
    except ValueError:
        raise ValueError(
            f"Unknown power domain {value!r}; expected one of {', '.join(d.value for d in PowerDomain)}"
        ) from None


def _nearest(timeline: list[tuple[float, float]], at: float) -> float:
    """Zeus's lookup: the sample nearest to ``at``; a tie goes to the earlier sample."""
    times = [t for t, _ in timeline]
    pos = bisect.bisect_left(times, at)
    if pos == 0:
        return timeline[0][1]
    if pos == len(times):
        return timeline[-1][1]
    before, after = timeline[pos - 1], timeline[pos]
    return before[1] if at - before[0] <= after[0] - at else after[1]


class _Sampler:
    """What PowerMonitor and TemperatureMonitor share: the native sampler and its clock offset."""

    def __init__(
        self,
        gpu_indices: Optional[Sequence[int]],
        period_s: float,
        slow_period_s: float,
        capacity: int,
        average: bool,
        memory: bool,
        temperature: bool,
    ) -> None:
        self._native = _native.monitor.PowerMonitor(
            None if gpu_indices is None else list(gpu_indices),
            period_s,
            slow_period_s,
            capacity,
            average,
            memory,
            temperature,
        )
        self.gpu_indices: list[int] = list(self._native.gpu_indices)
        # Native times + offset read as Unix time (see the module's docstring).
        self._offset = _time.time() - self._native.now()

    def time(self) -> float:
        """Now, on the samples' clock (reads as Unix time; see the module's docstring)."""
        return self._native.now() + self._offset

    def _timeline(
        self, field: int, gpu_index: Optional[int], start_time: Optional[float], end_time: Optional[float]
    ) -> dict[int, list[tuple[float, float]]]:
        gpus = self.gpu_indices if gpu_index is None else [i for i in self.gpu_indices if i == gpu_index]
        start = None if start_time is None else start_time - self._offset
        end = None if end_time is None else end_time - self._offset
        out = {}
        for gpu in gpus:
            out[gpu] = [(t + self._offset, v) for t, v in self._native.timeline(gpu, field, start, end)]
        return out

    def stop(self) -> None:
        """Stops sampling (joins the native threads). Queries after stop raise RuntimeError."""
        self._native.stop()


class PowerMonitor(_Sampler):
    """Samples the power of GPUs in the background and answers timeline, power and energy queries.

    Args:
        gpu_indices: GPUs to sample (framework indices). None: every visible GPU.
        update_period: sampling period in seconds. None: 0.1 s.
        max_samples_per_gpu: samples kept per GPU. None: 36,000.
        power_domains: domains to sample. None: every domain the first GPU supports. The attribute
            ``measurement_domains`` lists them.
        measurement_domains: the same as ``power_domains`` (keyword only; give one of the two).

    An explicit ``update_period`` under 0.05 s is accepted with a warning on the ``zeus.monitor.power``
    logger (once per process), as in Zeus.

    Raises:
        ValueError: an empty ``gpu_indices`` or ``power_domains``, an unknown GPU, or a domain the
            GPU does not support.
        TypeError: both ``power_domains`` and ``measurement_domains``.
    """

    def __init__(
        self,
        gpu_indices: Optional[Sequence[int]] = None,
        update_period: Optional[float] = None,
        max_samples_per_gpu: Optional[int] = None,
        power_domains: Optional[Sequence[Union[PowerDomain, str]]] = None,
        *,
        measurement_domains: Optional[Sequence[Union[PowerDomain, str]]] = None,
    ) -> None:
        if measurement_domains is not None:
            if power_domains is not None:
                raise TypeError("PowerMonitor got both power_domains and measurement_domains (the same list); "
                                "pass one of them")
            power_domains = measurement_domains
        if gpu_indices is not None and len(gpu_indices) == 0:
            raise ValueError("gpu_indices must not be empty; pass None to monitor every GPU")
        if power_domains is not None and len(power_domains) == 0:
            raise ValueError("power_domains must not be empty; pass None to monitor every supported domain")
        if max_samples_per_gpu is not None and max_samples_per_gpu <= 0:
            raise ValueError(f"max_samples_per_gpu must be positive, got {max_samples_per_gpu}")
        period = _DEFAULT_PERIOD_S if update_period is None else float(update_period)
        if period <= 0:
            raise ValueError(f"update_period must be positive, got {update_period}")
        if period < _FAST_PERIOD_S and _once("fast_update_period"):
            logger.warning(
                "PowerMonitor update_period %s s is under %s s: the driver updates its power reading only every "
                "few tens of milliseconds, so faster polling mostly repeats samples and costs CPU time",
                period, _FAST_PERIOD_S,
            )
        wanted = None if power_domains is None else {_domain(d) for d in power_domains}
        super().__init__(
            gpu_indices,
            period,
            max(period, _DEFAULT_PERIOD_S),
            _DEFAULT_CAPACITY if max_samples_per_gpu is None else int(max_samples_per_gpu),
            wanted is None or PowerDomain.DEVICE_AVERAGE in wanted,
            wanted is None or PowerDomain.MEMORY_AVERAGE in wanted,
            False,
        )
        supported = {PowerDomain.DEVICE_INSTANT}
        if self._native.average_supported:
            supported.add(PowerDomain.DEVICE_AVERAGE)
        if self._native.memory_supported:
            supported.add(PowerDomain.MEMORY_AVERAGE)
        if wanted is not None and not wanted <= supported:
            self.stop()
            missing = sorted(d.value for d in wanted - supported)
            raise ValueError(f"Power domain(s) {', '.join(missing)} not supported by GPU {self.gpu_indices[0]}")
        self.measurement_domains: list[PowerDomain] = [d for d in PowerDomain if d in (wanted or supported)]
        self.update_period = period

    @property
    def power_domains(self) -> list[PowerDomain]:
        """Deprecated: Zeus 0.16's name of ``measurement_domains``."""
        _deprecated_power_domains(stacklevel=2)
        return self.measurement_domains

    def _check(self, domain: Union[PowerDomain, str]) -> PowerDomain:
        d = _domain(domain)
        if d not in self.measurement_domains:
            raise ValueError(
                f"Power domain {d.value} is not being monitored. Monitored: "
                f"{', '.join(x.value for x in self.measurement_domains)}"
            )
        return d

    def get_power_timeline(
        self,
        power_domain: Union[PowerDomain, str],
        gpu_index: Optional[int] = None,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
    ) -> dict[int, list[tuple[float, float]]]:
        """``{gpu: [(time, watts), ...]}`` of one domain, oldest first, within [start_time, end_time]."""
        d = self._check(power_domain)
        return self._timeline(_FIELD[d], gpu_index, start_time, end_time)

    def get_all_power_timelines(
        self, gpu_index: Optional[int] = None, start_time: Optional[float] = None, end_time: Optional[float] = None
    ) -> dict[str, dict[int, list[tuple[float, float]]]]:
        """``{domain.value: {gpu: [(time, watts), ...]}}`` for every monitored domain."""
        return {d.value: self._timeline(_FIELD[d], gpu_index, start_time, end_time) for d in self.measurement_domains}

    def get_energy(
        self, start_time: float, end_time: float, power_domain: Optional[Union[PowerDomain, str]] = None
    ) -> Optional[dict[int, float]]:
        """Energy of each GPU between two instants, in J, by hold-last-value integration.

        ``power_domain`` defaults to ``DEVICE_INSTANT`` (always monitored); ``DEVICE_AVERAGE`` and
        ``MEMORY_AVERAGE`` integrate their own readings the same way. The native sampler integrates
        (``zeus::monitor::PowerMonitor::Energy``). ``end_time`` before ``start_time`` raises ``ValueError``.
        """
        d = PowerDomain.DEVICE_INSTANT if power_domain is None else self._check(power_domain)
        start, end = start_time - self._offset, end_time - self._offset
        return {gpu: self._native.energy(gpu, start, end, _FIELD[d]) for gpu in self.gpu_indices}

    def get_power(
        self, time: Optional[float] = None, power_domain: Union[PowerDomain, str] = PowerDomain.DEVICE_INSTANT
    ) -> Optional[dict[int, float]]:
        """Each GPU's power in W: the latest sample, or the sample nearest ``time`` (ties: the earlier).
        None when a GPU has no sample yet."""
        d = self._check(power_domain)
        out = {}
        for gpu, timeline in self._timeline(_FIELD[d], None, None, None).items():
            if not timeline:
                return None
            out[gpu] = timeline[-1][1] if time is None else _nearest(timeline, time)
        return out

