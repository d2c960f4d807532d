"""Per-hour energy of open windows, shared by ``CarbonEmissionMonitor`` and ``EnergyCostMonitor``.

Each open window has a sub-window on the monitor's ``ZeusMonitor``; a thread of this process (not a child process,
so nothing can die and leave ``end_window`` waiting) ends and restarts the sub-windows at every hour boundary, so
each window's energy is known per clock hour. ``end_window`` ends the last sub-window on the caller's thread and
returns the hours; it never waits for the thread beyond a lock held for one sub-window's reading.
"""

from __future__ import annotations

import itertools
import threading
from datetime import datetime, timedelta, timezone
from typing import Callable, Optional

from zeus.monitor.energy import Measurement, ZeusMonitor

# One hour's energy of one window: (the hour's start in UTC, {"gpu_0": J, "cpu_0": J, "dram_0": J}).
HourEnergy = tuple[datetime, dict[str, float]]

_PREFIX = "__zeus_hourly__"
_ids = itertools.count()


def hour_floor(moment: datetime) -> datetime:
    """``moment`` (aware) truncated to its hour, in UTC."""
    return moment.astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0)


def device_energy(measurement: Measurement) -> dict[str, float]:
    energy = {f"gpu_{i}": e for i, e in measurement.gpu_energy.items()}
    energy.update({f"cpu_{i}": e for i, e in (measurement.cpu_energy or {}).items()})
    energy.update({f"dram_{i}": e for i, e in (measurement.dram_energy or {}).items()})
    return energy


def split_devices(values: dict[str, float]) -> tuple[dict[int, float], dict[int, float], dict[int, float]]:
    """{"gpu_0": x, "cpu_1": y, ...} -> (gpu, cpu, dram) dicts keyed by index."""
    out: tuple[dict[int, float], dict[int, float], dict[int, float]] = ({}, {}, {})
    for name, value in values.items():
        kind, index = name.split("_")
        out[("gpu", "cpu", "dram").index(kind)][int(index)] = value
    return out


class HourlyWindows:
    """Open windows' energy, cut at every hour boundary.

    ``on_hour(key, hours)`` (optional) is called from the thread after each cut with the window's hours so far;
    it may consume them (return the hours to keep). An exception it or a cut raises is kept and raised by that
    window's ``end``.
    """

    def __init__(self, monitor: ZeusMonitor, on_hour: Optional[Callable[[str, list[HourEnergy]], list[HourEnergy]]] = None,
                 now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> None:
        self._monitor = monitor
        self._on_hour = on_hour
        self._now = now
        self._id = next(_ids)
        self._lock = threading.Lock()
        self._open: dict[str, tuple[str, datetime]] = {}  # key -> (sub-window name, its hour)
        self._hours: dict[str, list[HourEnergy]] = {}
        self._errors: dict[str, BaseException] = {}
        self._sequence = itertools.count()
        self._wake = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def _begin_sub(self, key: str) -> None:
        name = f"{_PREFIX}{self._id}_{next(self._sequence)}_{key}"
        self._monitor.begin_window(name, sync_execution=False)
        self._open[key] = (name, hour_floor(self._now()))

    def _end_sub(self, key: str) -> None:
        name, hour = self._open.pop(key)
        measurement = self._monitor.end_window(name, sync_execution=False)
        self._hours[key].append((hour, device_energy(measurement)))

    def begin(self, key: str) -> None:
        with self._lock:
            self._hours[key] = []
            self._begin_sub(key)
            if self._thread is None or not self._thread.is_alive():
                self._wake.clear()
                self._thread = threading.Thread(target=self._run, name="zeus-hourly-windows", daemon=True)
                self._thread.start()

    def end(self, key: str) -> list[HourEnergy]:
        """The window's energy per hour; raises what a cut of this window raised."""
        with self._lock:
            try:
                if key in self._open:
                    self._end_sub(key)
            finally:
                hours = self._hours.pop(key, [])
                self._open.pop(key, None)
                error = self._errors.pop(key, None)
                if not self._open:
                    self._wake.set()  # the thread ends
        if error is not None:
            raise error
        return hours

    def _run(self) -> None:
        while True:
            now = self._now()
            next_hour = hour_floor(now) + timedelta(hours=1)
            if self._wake.wait(timeout=max(0.0, (next_hour - now).total_seconds()) + 0.001):
                with self._lock:
                    if not self._open:
                        return
                    self._wake.clear()
                continue
            with self._lock:
                if not self._open:
                    return
                for key in list(self._open):
                    if key in self._errors:
                        continue
                    try:
                        self._end_sub(key)
                        self._begin_sub(key)
                        if self._on_hour is not None:
                            self._hours[key] = self._on_hour(key, self._hours[key])
                    except BaseException as e:  # kept for end(): never lost in this thread
                        self._errors[key] = e


def attribute(hours: list[HourEnergy], overall: dict[str, float], already: dict[str, float]) -> list[HourEnergy]:
    """The window's ``overall`` energy (its own reading, less the ``already`` converted part) split over ``hours``
    in proportion to the sub-windows' readings, so that a window's emissions or cost are its energy's, the few
    milliseconds between sub-windows included. A device without sub-window energy gets it all in the last hour."""
    if not hours:
        return []
    out: list[HourEnergy] = [(hour, {}) for hour, _ in hours]
    for device, total in overall.items():
        remaining = max(0.0, total - already.get(device, 0.0))
        parts = [energies.get(device, 0.0) for _, energies in hours]
        whole = sum(parts)
        for (_, energies), part in zip(out, parts):
            energies[device] = remaining * part / whole if whole > 0 else 0.0
        if whole <= 0:
            out[-1][1][device] = remaining
    return out
