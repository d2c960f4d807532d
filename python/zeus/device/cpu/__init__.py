"""CPUs (Zeus's ``zeus.device.cpu``): ``get_cpus()`` and the classes of ``common`` and ``rapl``.

``get_cpus()`` returns a ``RAPLCPUs`` (a ``CPUs``): the Linux RAPL packages read by the native device
layer, methods as Zeus's (``get_total_energy_consumption(i) -> CpuDramMeasurement`` in mJ,
``supports_get_dram_energy_consumption(i)``). ``get_current_rapl_zone_id()`` finds this process's zone.
No Windows EMI (``EMICPUs``).
"""

from __future__ import annotations

import threading
from typing import Optional

from zeus.device.cpu.common import *  # noqa: F401,F403 (Zeus's names)
from zeus.device.cpu.common import CPU, CPUs, CpuDramMeasurement, EmptyCPUs
from zeus.device.cpu.rapl import RAPLCPU, RAPLCPUs, get_current_rapl_zone_id, rapl_is_available

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
            _cpus = RAPLCPUs()
        return _cpus


def _reset() -> None:
    global _cpus
    with _lock:
        _cpus = None


__all__ = [
    "get_cpus",
    "CPU",
    "CPUs",
    "CpuDramMeasurement",
    "EmptyCPUs",
    "RAPLCPU",
    "RAPLCPUs",
    "get_current_rapl_zone_id",
    "rapl_is_available",
]
