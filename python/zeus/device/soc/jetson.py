"""Zeus's ``zeus.device.soc.jetson``: NVIDIA Jetson's power rails, read and integrated natively.

The rails are the INA3221 channels under ``<root>/sys/bus/i2c/drivers/ina3221x`` and ``.../ina3221`` (with
their ``hwmon*`` folders), named by ``in<i>_label`` or ``rail_name_<i>`` (see ``src/device/jetson/`` and
``zeus::device::OpenSoc``). A rail whose name contains ``cpu`` is the CPU, else ``gpu`` the GPU, else
``system``, ``_in`` or ``total`` the whole module (as Zeus); one rail per kind. A native thread integrates
their power into energy about ten times a second (every reading also integrates up to its instant),
instead of Zeus's spawned process.

``root`` (``Jetson(root=...)``, else ``$ZEUS_SOC_ROOT``, else ``/``) stands for the file system's root, so a
fake tree can be measured; under the real root the machine must also be aarch64, as in Zeus.

Bad input: a rail whose file is missing or not a number when the Jetson is opened is not measured and is
listed in ``problems`` (each naming the file, also logged on the ``zeus.soc`` logger); a read that fails
later makes that rail's energy ``None`` in every window over it, with a ``UserWarning`` naming the file;
the other rails are still measured.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, fields
from typing import Optional, Union

from zeus import _native
from zeus.device.soc.common import SoC, SoCMeasurement
from zeus.exception import ZeusJetsonInitError, ZeusSoCInitError

_KINDS = ("cpu", "gpu", "total")


def jetson_is_available() -> bool:
    """Whether this machine (or the tree ``$ZEUS_SOC_ROOT`` names) is an NVIDIA Jetson with a readable rail."""
    try:
        _native.device.open_soc()
    except ZeusSoCInitError:
        return False
    return True


@dataclass
class JetsonMeasurement(SoCMeasurement):
    """The energy of a Jetson's rails, in mJ; None for a kind without a rail (or, in a window, whose rail
    could not be read during it)."""

    cpu_energy_mj: Optional[float] = None
    gpu_energy_mj: Optional[float] = None
    total_energy_mj: Optional[float] = None

    def __sub__(self, other: JetsonMeasurement) -> JetsonMeasurement:
        if not isinstance(other, JetsonMeasurement):
            raise TypeError(f"a JetsonMeasurement can only be subtracted from another, not a {type(other).__name__}")
        result = JetsonMeasurement()
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            setattr(result, f.name, None if mine is None or theirs is None else mine - theirs)
        return result

    def zero_all_fields(self) -> None:
        for f in fields(self):
            if getattr(self, f.name) is not None:
                setattr(self, f.name, 0.0)


def measurement_from_window(
    soc: Optional[tuple], stacklevel: int = 2
) -> Optional[JetsonMeasurement]:
    """A native window's SoC tuple ``(cpu_mj, gpu_mj, total_mj, problems)`` as a JetsonMeasurement; each
    problem (a rail read that failed in the window, naming the file) is a UserWarning."""
    if soc is None:
        return None
    cpu_mj, gpu_mj, total_mj, problems = soc
    for problem in problems:
        warnings.warn(f"NVIDIA Jetson: {problem}", UserWarning, stacklevel=stacklevel + 1)
    return JetsonMeasurement(cpu_energy_mj=cpu_mj, gpu_energy_mj=gpu_mj, total_energy_mj=total_mj)


class Jetson(SoC):
    """An NVIDIA Jetson (Zeus's ``Jetson``).

    Args:
        root: the directory standing for ``/`` (a fake tree in tests); None: ``$ZEUS_SOC_ROOT``, else ``/``.

    Raises:
        ZeusJetsonInitError (a ZeusSoCInitError): not a Jetson, or no readable CPU, GPU or total rail; the
            message says why.
    """

    def __init__(self, root: Optional[Union[str, os.PathLike]] = None) -> None:
        super().__init__()
        try:
            self._native = _native.device.open_soc(None if root is None else str(root))
        except ZeusSoCInitError as e:
            raise ZeusJetsonInitError(e.message, e.code, e.native_code) from None
        self.available_metrics: Optional[set[str]] = None
        self._window_failures: dict[str, tuple] = {}

    @property
    def rails(self) -> list[tuple[str, str, str]]:
        """The measured rails: ``(kind, rail name, files read)``, kind ``cpu``, ``gpu`` or ``total``."""
        return [tuple(r) for r in self._native.rails()]

    @property
    def problems(self) -> list[str]:
        """The rails found but not measured, each naming the file and why."""
        return list(self._native.problems())

    def get_available_metrics(self) -> set[str]:
        if self.available_metrics is None:
            kinds = {kind for kind, _, _ in self.rails}
            self.available_metrics = {f"{kind}_energy_mj" for kind in _KINDS if kind in kinds}
        return set(self.available_metrics)

    def _read(self) -> tuple:
        return self._native.total_energy()

    def get_total_energy_consumption(self) -> JetsonMeasurement:
        """The energy of each rail since the Jetson was opened, in mJ (a rail's failed reads are not
        integrated; see ``end_window`` for windows that know it)."""
        reading = self._read()
        return JetsonMeasurement(*[None if r is None else r[0] for r in reading])

    def begin_window(self, key: str, restart: bool = False) -> None:
        with self._window_lock:
            if key in self.measurement_states and not restart:
                raise KeyError(f"Measurement window '{key}' already exists")
        reading = self._read()
        with self._window_lock:
            self.measurement_states[key] = JetsonMeasurement(*[None if r is None else r[0] for r in reading])
            self._window_failures[key] = reading

    def end_window(self, key: str) -> JetsonMeasurement:
        """The window's energy, in mJ; a rail that failed to read during it is None (and warned about)."""
        with self._window_lock:
            if key not in self.measurement_states:
                raise KeyError(f"Measurement window '{key}' does not exist")
            del self.measurement_states[key]
            begin = self._window_failures.pop(key)
        end = self._read()
        values: list[Optional[float]] = []
        problems: list[str] = []
        for b, e in zip(begin, end):
            if b is None or e is None:
                values.append(None)
            elif e[1] != b[1]:
                values.append(None)
                problems.append(f"a read of this rail failed during the window, so its energy is unknown: {e[2]}")
            else:
                values.append(e[0] - b[0])
        return measurement_from_window((*values, problems), stacklevel=2)

    def __repr__(self) -> str:
        return f"Jetson(rails={[name for _, name, _ in self.rails]})"


__all__ = ["Jetson", "JetsonMeasurement", "jetson_is_available", "ZeusJetsonInitError"]
