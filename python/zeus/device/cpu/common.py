"""Zeus's ``zeus.device.cpu.common``: ``CpuDramMeasurement``, the ``CPU`` and ``CPUs`` interfaces, ``EmptyCPUs``
and the CPU exceptions.

``CPUs`` is the set of CPU packages; each method takes the package index first and forwards to that
``CPU``. Energies are mJ; a ``CpuDramMeasurement`` supports ``-`` and ``/ number`` (``ZeusMonitor`` divides
by 1000 for J). Every method also has Zeus's deprecated camelCase alias, which warns once.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from zeus.device.gpu.common import add_deprecated_aliases
from zeus.exception import (  # noqa: F401 (re-exported under Zeus's module)
    ZeusBaseCPUError,
    ZeusCPUInitError,
    ZeusCPUIOError,
    ZeusCPUNoPermissionError,
    ZeusCPUNotFoundError,
)


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


CPU_METHODS = ("get_total_energy_consumption", "supports_get_dram_energy_consumption")


class CPU(abc.ABC):
    """One CPU package (Zeus's ``CPU``)."""

    def __init__(self, cpu_index: int) -> None:
        self.cpu_index = cpu_index

    @abc.abstractmethod
    def get_total_energy_consumption(self) -> CpuDramMeasurement:
        """The package's (and its DRAM's) energy, in mJ."""

    @abc.abstractmethod
    def supports_get_dram_energy_consumption(self) -> bool:
        """Whether the package has a DRAM domain."""


class CPUs(abc.ABC):
    """The CPU packages (Zeus's ``CPUs``): each method takes the package index first."""

    @property
    @abc.abstractmethod
    def cpus(self) -> Sequence[CPU]:
        """The packages, by index."""

    def __len__(self) -> int:
        return len(self.cpus)

    def _cpu(self, cpu_index: int) -> CPU:
        if not 0 <= cpu_index < len(self.cpus):
            count = len(self.cpus)
            raise ZeusCPUNotFoundError(
                f"CPU {cpu_index} does not exist: {count} CPU package{'' if count == 1 else 's'} found"
            )
        return self.cpus[cpu_index]

    def get_total_energy_consumption(self, cpu_index: int) -> CpuDramMeasurement:
        return self._cpu(cpu_index).get_total_energy_consumption()

    def supports_get_dram_energy_consumption(self, cpu_index: int) -> bool:
        return self._cpu(cpu_index).supports_get_dram_energy_consumption()


class EmptyCPUs(CPUs):
    """No CPU packages (Zeus's ``EmptyCPUs``)."""

    @property
    def cpus(self) -> Sequence[CPU]:
        return []


add_deprecated_aliases(CPU, CPU_METHODS)
add_deprecated_aliases(CPUs, CPU_METHODS)

__all__ = [
    "CpuDramMeasurement",
    "CPU",
    "CPUs",
    "EmptyCPUs",
    "ZeusBaseCPUError",
    "ZeusCPUInitError",
    "ZeusCPUIOError",
    "ZeusCPUNoPermissionError",
    "ZeusCPUNotFoundError",
]
