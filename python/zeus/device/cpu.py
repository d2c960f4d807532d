"""CPUs (Zeus's ``zeus.device.cpu``): Linux RAPL packages through powercap, read by the native device layer.

Differences from Zeus: ``get_total_energy_consumption`` counts from when the package was opened (the
first ``get_cpus()``), not from the raw counter's origin; differences between two reads, which are what
Zeus uses, are the same. The wraparound tracking runs in a native thread (not one process per RAPL
file). No Windows EMI and no zeusd.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Optional, Union

from zeus import _native


@dataclass
class CpuDramMeasurement:
    """Energy of one CPU package and of its DRAM (None without a DRAM domain), in mJ (or J after division)."""

    cpu_mj: float
    dram_mj: Optional[float] = None

    def __sub__(self, other: CpuDramMeasurement) -> CpuDramMeasurement:
        dram = None if self.dram_mj is None or other.dram_mj is None else self.dram_mj - other.dram_mj
        return CpuDramMeasurement(self.cpu_mj - other.cpu_mj, dram)

    def __truediv__(self, other: Union[int, float]) -> CpuDramMeasurement:
        return CpuDramMeasurement(self.cpu_mj / other, None if self.dram_mj is None else self.dram_mj / other)


class CPUs:
    """The RAPL CPU packages, as Zeus's ``CPUs``; methods take the package index first.

    Failures raise ``ZeusBaseCPUError`` subclasses (``ZeusCPUNoPermissionError`` when RAPL is root-only).
    """

    def __init__(self) -> None:
        self._native = _native.device.open_cpus()

    def __len__(self) -> int:
        return len(self._native)

    @property
    def cpus(self) -> list[int]:
        return list(range(len(self._native)))

    def get_name(self, index: int) -> str:
        return self._native.get_name(index)

    def get_total_energy_consumption(self, index: int) -> CpuDramMeasurement:
        cpu_mj, dram_mj = self._native.get_total_energy_consumption(index)
        return CpuDramMeasurement(cpu_mj, dram_mj)

    def supports_get_dram_energy_consumption(self, index: int) -> bool:
        return self._native.supports_get_dram_energy_consumption(index)


_lock = threading.Lock()
_cpus: Optional[CPUs] = None


def get_cpus() -> CPUs:
    """The RAPL CPU packages, opened once per process.

    Raises:
        ZeusCPUInitError: no RAPL on this machine.
    """
    global _cpus
    with _lock:
        if _cpus is None:
            _cpus = CPUs()
        return _cpus


def _reset() -> None:
    global _cpus
    with _lock:
        _cpus = None
