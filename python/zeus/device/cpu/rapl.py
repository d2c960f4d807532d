"""Zeus's ``zeus.device.cpu.rapl``: Linux RAPL packages through powercap, read by the native device layer.

``RAPLCPUs`` is what ``get_cpus()`` returns. The packages are the top-level ``intel-rapl:<N>`` zones under the
powercap root (``$ZEUS_POWERCAP_ROOT``, else ``/sys/class/powercap``), sorted by N, each with its ``dram``
subzone when present; zeusd's packages when local RAPL is not readable and ``ZEUSD_*`` is set.

Differences from Zeus: ``get_total_energy_consumption`` counts from when the package was opened (the
first ``get_cpus()``), not from the raw counter's origin; differences between two reads, which are what
Zeus uses, are the same. The wraparound tracking runs in a native thread (not one process per RAPL
file). No Windows EMI.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from zeus import _native
from zeus.device.cpu.common import CPU, CPUs, CpuDramMeasurement
from zeus.exception import ZeusCPUInitError, ZeusRAPLFileInitError, ZeusRAPLNotSupportedError  # noqa: F401


def rapl_is_available() -> bool:
    """Whether the powercap root has RAPL zones (readable or not)."""
    root = Path(_native.device.powercap_root())
    try:
        return any(_top_level_zone(p.name) is not None for p in root.iterdir())
    except OSError:
        return False


class RAPLCPU(CPU):
    """One RAPL package of a ``RAPLCPUs``."""

    def __init__(self, native: Any, cpu_index: int) -> None:
        super().__init__(cpu_index)
        self._native = native

    def get_name(self) -> str:
        """The zone's name, e.g. ``package-0``."""
        return self._native.get_name(self.cpu_index)

    def get_total_energy_consumption(self) -> CpuDramMeasurement:
        cpu_mj, dram_mj = self._native.get_total_energy_consumption(self.cpu_index)
        return CpuDramMeasurement(cpu_mj, dram_mj)

    def supports_get_dram_energy_consumption(self) -> bool:
        return self._native.supports_get_dram_energy_consumption(self.cpu_index)


class RAPLCPUs(CPUs):
    """The RAPL CPU packages (Zeus's ``RAPLCPUs``); methods take the package index first.

    Raises:
        ZeusCPUInitError: no RAPL package on this machine. Reads raise ``ZeusBaseCPUError`` subclasses
            (``ZeusCPUNoPermissionError`` when RAPL is root-only).
    """

    def __init__(self) -> None:
        self._native = _native.device.open_cpus()
        self._cpus = [RAPLCPU(self._native, i) for i in range(len(self._native))]

    @property
    def cpus(self) -> Sequence[CPU]:
        return self._cpus

    def __len__(self) -> int:
        return len(self._native)

    def get_name(self, cpu_index: int) -> str:
        return self._native.get_name(cpu_index)

    def get_total_energy_consumption(self, cpu_index: int) -> CpuDramMeasurement:
        cpu_mj, dram_mj = self._native.get_total_energy_consumption(cpu_index)
        return CpuDramMeasurement(cpu_mj, dram_mj)

    def supports_get_dram_energy_consumption(self, cpu_index: int) -> bool:
        return self._native.supports_get_dram_energy_consumption(cpu_index)


def _top_level_zone(name: str) -> Optional[int]:
    prefix = "intel-rapl:"
    rest = name[len(prefix):]
    return int(rest) if name.startswith(prefix) and rest.isdigit() else None


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError as e:
        raise ZeusRAPLNotSupportedError(f"{path}: cannot be read ({e.strerror or e})") from None


def get_current_rapl_zone_id(
    pid: Union[int, str] = "current",
    *,
    proc_root: Union[str, os.PathLike[str]] = "/proc",
    sys_root: Union[str, os.PathLike[str]] = "/sys",
    powercap_root: Optional[Union[str, os.PathLike[str]]] = None,
) -> int:
    """The RAPL zone (N of ``intel-rapl:N``) of the package the process ``pid`` last ran on.

    As Zeus: the logical CPU is field 39 of ``/proc/<pid>/stat`` (counted after the last ``)``, so a
    command name with spaces or parentheses is skipped); its package is
    ``/sys/devices/system/cpu/cpu<C>/topology/physical_package_id``; the zone is the top-level one whose
    ``name`` is ``package-<P>``, or ``package-<P>-die-<D>`` when ``topology/die_id`` is readable.

    Args:
        pid: a process id, or ``"current"`` for this process (``/proc/self``).
        proc_root: where ``/proc`` is (a fake tree in tests).
        sys_root: where ``/sys`` is, for the CPU topology.
        powercap_root: where the RAPL zones are; None: the native RAPL reader's root
            (``$ZEUS_POWERCAP_ROOT``, else ``/sys/class/powercap``).

    Raises:
        ZeusRAPLNotSupportedError: no zone matches the package (the message lists the names found), or a
            file above cannot be read (named).
    """
    stat_path = Path(proc_root) / ("self" if pid == "current" else str(int(pid))) / "stat"
    stat = _read(stat_path)
    fields = stat[stat.rfind(")") + 1 :].split()
    if len(fields) < 37 or not fields[36].isdigit():
        raise ZeusRAPLNotSupportedError(f"{stat_path}: no processor number in field 39 (read {stat!r})")
    cpu = int(fields[36])
    topology = Path(sys_root) / "devices" / "system" / "cpu" / f"cpu{cpu}" / "topology"
    package = _read(topology / "physical_package_id")
    accepted = {f"package-{package}"}
    try:
        accepted.add(f"package-{package}-die-{(topology / 'die_id').read_text().strip()}")
    except OSError:
        pass
    root = Path(powercap_root if powercap_root is not None else _native.device.powercap_root())
    zones = []
    try:
        for entry in root.iterdir():
            index = _top_level_zone(entry.name)
            if index is not None:
                zones.append((index, entry))
    except OSError as e:
        raise ZeusRAPLNotSupportedError(f"{root}: cannot be listed ({e.strerror or e}); is RAPL present?") from None
    found = []
    for index, zone in sorted(zones):
        try:
            name = (zone / "name").read_text().strip()
        except OSError:
            continue
        if name in accepted:
            return index
        found.append(f"{zone.name}={name}")
    raise ZeusRAPLNotSupportedError(
        f"no RAPL zone under {root} is CPU {cpu}'s package ({' or '.join(sorted(accepted))}); "
        f"zones found: {', '.join(found) if found else 'none'}"
    )


__all__ = ["RAPLCPU", "RAPLCPUs", "get_current_rapl_zone_id", "rapl_is_available", "ZeusRAPLNotSupportedError"]
