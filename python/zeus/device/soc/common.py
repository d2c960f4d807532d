"""Zeus's ``zeus.device.soc.common``: the ``SoC`` and ``SoCMeasurement`` interfaces and ``ZeusSoCInitError``.

An SoC measures its subsystems (CPU, GPU, DRAM, ...) in mJ, cumulatively from an arbitrary origin;
``begin_window``/``end_window`` subtract two readings. ``ZeusMonitor`` fills ``Measurement.soc_energy`` with
the SoC's measurement of each window (mJ, not converted, as Zeus).
"""

from __future__ import annotations

import abc
import threading
from dataclasses import dataclass

from zeus.exception import ZeusBaseSoCError, ZeusSoCInitError, ZeusSoCIOError  # noqa: F401 (Zeus's names)


@dataclass
class SoCMeasurement(abc.ABC):
    """One SoC reading or window, in mJ; the fields are each SoC's (``JetsonMeasurement``,
    ``AppleSiliconMeasurement``)."""

    @abc.abstractmethod
    def __sub__(self, other: SoCMeasurement) -> SoCMeasurement:
        """The field-by-field difference (a window from two cumulative readings)."""

    @abc.abstractmethod
    def zero_all_fields(self) -> None:
        """Sets every measured field to zero (a cancelled window); fields not measured stay None."""


class SoC(abc.ABC):
    """An SoC whose subsystems' energy can be read (Zeus's ``SoC``).

    Windows: ``begin_window(key)`` stores a reading, ``end_window(key)`` returns the difference to a new
    one. A repeated ``begin_window`` raises ``KeyError`` (as Zeus; ``ZeusMonitor`` raises ``ValueError``).
    """

    def __init__(self) -> None:
        self._window_lock = threading.Lock()
        self.measurement_states: dict[str, SoCMeasurement] = {}

    @abc.abstractmethod
    def get_available_metrics(self) -> set[str]:
        """The names of the measurement fields this SoC fills."""

    @abc.abstractmethod
    def get_total_energy_consumption(self) -> SoCMeasurement:
        """The cumulative energy of each subsystem, in mJ."""

    def begin_window(self, key: str, restart: bool = False) -> None:
        """Begins the window ``key``; with ``restart``, an open window of that name is begun anew."""
        with self._window_lock:
            if key in self.measurement_states and not restart:
                raise KeyError(f"Measurement window '{key}' already exists")
        reading = self.get_total_energy_consumption()
        with self._window_lock:
            self.measurement_states[key] = reading

    def end_window(self, key: str) -> SoCMeasurement:
        """Ends the window ``key`` and returns its energy, in mJ."""
        with self._window_lock:
            try:
                start = self.measurement_states.pop(key)
            except KeyError:
                raise KeyError(f"Measurement window '{key}' does not exist") from None
        return self.get_total_energy_consumption() - start


__all__ = ["SoC", "SoCMeasurement", "ZeusBaseSoCError", "ZeusSoCInitError"]
