"""Per-process GPU energy on a shared node: who used the energy (an extension; Zeus has no such module).

``ProcessEnergyMonitor`` samples every visible GPU in the background (a native thread, 10 Hz by default) and splits
each GPU's measured energy into idle energy and the processes' shares of the rest, by each process's share of the
GPU's utilization (the rule Kepler documents). It is a model, not a measurement: read "Per-process energy" in the
README for what it can and cannot tell. The same native code serves ``zeus exporter --per-process`` and
``zeus monitor --per-process``. Energy is conserved: per GPU, ``measured == idle + unattributed + other + ended +``
the sum of its processes, exactly, in whole millijoules.

Example::

    from zeus.monitor.process import ProcessEnergyMonitor
    monitor = ProcessEnergyMonitor()
    ...                                   # the node's jobs run
    for p in monitor.snapshot().processes:
        print(p.gpu, p.pid, p.comm, p.slurm_job_id, p.energy_j)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from zeus import _native

__all__ = ["GpuEnergyParts", "ProcessEnergy", "ProcessEnergySnapshot", "ProcessEnergyMonitor"]


@dataclass(frozen=True)
class GpuEnergyParts:
    """One GPU's energy since the monitor started, in joules, split into its parts."""

    gpu: int
    measured_energy_j: float
    idle_energy_j: float
    unattributed_energy_j: float  # active energy when no process had utilization
    other_energy_j: float  # processes past the max_processes cap
    ended_energy_j: float  # processes that ended more than `retention` ago


@dataclass(frozen=True)
class ProcessEnergy:
    """One process's energy on one GPU, in joules, with who it is (empty strings where unknown)."""

    gpu: int
    pid: int
    start_time: int  # clock ticks after boot (/proc/PID/stat); tells a reused PID
    energy_j: float
    comm: str
    user: str
    slurm_job_id: str
    slurm_step: str
    pod: str
    container: str
    systemd_unit: str


@dataclass(frozen=True)
class ProcessEnergySnapshot:
    gpus: List[GpuEnergyParts] = field(default_factory=list)
    processes: List[ProcessEnergy] = field(default_factory=list)


class ProcessEnergyMonitor:
    """Per-process energy of every visible GPU, sampled in the background.

    Args:
        update_period: seconds between samples (default 0.1).
        idle_power_w: idle power in watts per GPU model name (as ``zeus.device`` names it). A model not listed
            uses the lowest power seen over the last ten minutes.
        retention: seconds after which a process that left its GPU is dropped (its energy moves to
            ``ended_energy_j``). Default 300.
        max_processes: the most (GPU, process) entries kept; later processes count as ``other_energy_j``.
        proc_root: where /proc is read (default: ``$ZEUS_PROC_ROOT``, else ``/proc``).
    """

    def __init__(
        self,
        update_period: float = 0.1,
        idle_power_w: Optional[Dict[str, float]] = None,
        retention: float = 300.0,
        max_processes: int = 1000,
        proc_root: Optional[str] = None,
    ) -> None:
        if update_period <= 0:
            raise ValueError(f"update_period must be positive, got {update_period}")
        if retention <= 0:
            raise ValueError(f"retention must be positive, got {retention}")
        if max_processes <= 0:
            raise ValueError(f"max_processes must be positive, got {max_processes}")
        self._native = _native.monitor.ProcessEnergyMonitor(
            update_period, dict(idle_power_w or {}), retention, max_processes, proc_root
        )

    def snapshot(self) -> ProcessEnergySnapshot:
        """Every GPU's energy parts and every live (GPU, process) entry."""
        raw = self._native.snapshot()
        return ProcessEnergySnapshot(
            gpus=[GpuEnergyParts(**g) for g in raw["gpus"]],
            processes=[ProcessEnergy(**p) for p in raw["processes"]],
        )

    def stop(self) -> None:
        """Takes a last sample and stops sampling; ``snapshot()`` still answers."""
        self._native.stop()
