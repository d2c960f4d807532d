"""Prometheus metrics pushed to a Pushgateway: Zeus's ``zeus.metric``.

Three helpers with Zeus's constructors, metric names and labels (``window``, ``index``), so dashboards built for
Zeus keep working:

* ``EnergyHistogram``: each window's energy per GPU, CPU package and DRAM, observed into histograms
  ``energy_monitor_{gpu,cpu,dram}_energy_joules``;
* ``EnergyCumulativeCounter``: counters of the same names, fed every ``update_period`` seconds while a window is
  open;
* ``PowerGauge``: ``power_monitor_gpu_power_watts``, set every ``update_period`` seconds.

They are thin layers over the C++ helpers of ``zeus::exporter`` (``zeus._native.metric``). Differences from Zeus:
pushes run on a native background thread (the training loop never waits for the gateway, and an unreachable one is
logged once per window on stderr instead of printed per push); the cumulative counter and the gauge use a thread
instead of a spawned process, and the counter chains its sub-windows so that no energy between them is lost.
"""

from __future__ import annotations

import abc
from typing import Optional, Sequence

from zeus import _native
from zeus.monitor import ZeusMonitor

__all__ = ["Metric", "EnergyHistogram", "EnergyCumulativeCounter", "PowerGauge"]


class Metric(abc.ABC):
    """A metric over measurement windows, pushed to a Prometheus Pushgateway."""

    @abc.abstractmethod
    def begin_window(self, name: str, sync_execution: bool = True) -> None:
        """Begins the window ``name``."""

    @abc.abstractmethod
    def end_window(self, name: str, sync_execution: bool = True) -> None:
        """Ends the window ``name`` and pushes."""


class EnergyHistogram(Metric):
    """Energy per window, per device, as Prometheus histograms.

    Args:
        cpu_indices: CPU packages to measure (``ZeusMonitor``'s ``cpu_indices``).
        gpu_indices: GPUs to measure.
        pushgateway_url: e.g. ``"http://localhost:9091"``.
        job: the Pushgateway job name.
        gpu_bucket_range, cpu_bucket_range, dram_bucket_range: histogram bucket upper bounds, joules.

    Raises:
        ValueError: an empty bucket range, a malformed URL or job.
    """

    def __init__(
        self,
        cpu_indices: Optional[Sequence[int]],
        gpu_indices: Optional[Sequence[int]],
        pushgateway_url: str,
        job: str,
        gpu_bucket_range: Sequence[float] = (50.0, 100.0, 200.0, 500.0, 1000.0),
        cpu_bucket_range: Sequence[float] = (10.0, 50.0, 100.0, 500.0, 1000.0),
        dram_bucket_range: Sequence[float] = (5.0, 10.0, 20.0, 50.0, 150.0),
    ) -> None:
        self.gpu_indices = gpu_indices
        self.cpu_indices = cpu_indices
        self.pushgateway_url = pushgateway_url
        self.job = job
        self.energy_monitor = ZeusMonitor(cpu_indices=cpu_indices, gpu_indices=gpu_indices)
        self._native = _native.metric.EnergyHistogram(
            self.energy_monitor._native,
            pushgateway_url,
            job,
            [float(b) for b in gpu_bucket_range],
            [float(b) for b in cpu_bucket_range],
            [float(b) for b in dram_bucket_range],
        )

    def begin_window(self, name: str, sync_execution: bool = True) -> None:
        """Begins the window ``name`` (``ValueError`` if it is open)."""
        if sync_execution:
            self.energy_monitor._sync()
        self._native.begin_window(name)

    def end_window(self, name: str, sync_execution: bool = True) -> None:
        """Ends the window, observes each device's energy and pushes in the background."""
        if sync_execution:
            self.energy_monitor._sync()
        self._native.end_window(name)


class EnergyCumulativeCounter(Metric):
    """Energy as Prometheus counters, updated every ``update_period`` seconds while a window is open.

    Raises:
        ValueError: a non-positive update period, a malformed URL or job.
    """

    def __init__(
        self,
        cpu_indices: Optional[Sequence[int]],
        gpu_indices: Optional[Sequence[int]],
        update_period: float,
        pushgateway_url: str,
        job: str,
    ) -> None:
        self.cpu_indices = cpu_indices
        self.gpu_indices = gpu_indices
        self.update_period = update_period
        self.pushgateway_url = pushgateway_url
        self.job = job
        self.energy_monitor = ZeusMonitor(cpu_indices=cpu_indices, gpu_indices=gpu_indices)
        self._native = _native.metric.EnergyCumulativeCounter(
            self.energy_monitor._native, float(update_period), pushgateway_url, job
        )

    def begin_window(self, name: str, sync_execution: bool = False) -> None:
        """Starts counting under ``window=name`` (``ValueError`` if it is open)."""
        if sync_execution:
            self.energy_monitor._sync()
        self._native.begin_window(name)

    def end_window(self, name: str, sync_execution: bool = False) -> None:
        """Adds the last partial period, pushes and stops (``ValueError`` for an unknown window)."""
        if sync_execution:
            self.energy_monitor._sync()
        self._native.end_window(name)


class PowerGauge(Metric):
    """GPU power as a Prometheus gauge, set every ``update_period`` seconds while a window is open.

    Raises:
        ValueError: a non-positive update period, a malformed URL or job.
    """

    def __init__(
        self,
        gpu_indices: Optional[Sequence[int]],
        update_period: float,
        pushgateway_url: str,
        job: str,
    ) -> None:
        self.gpu_indices = gpu_indices
        self.update_period = update_period
        self.pushgateway_url = pushgateway_url
        self.job = job
        self.energy_monitor = ZeusMonitor(gpu_indices=gpu_indices, cpu_indices=[])
        self._native = _native.metric.PowerGauge(
            self.energy_monitor._native, float(update_period), pushgateway_url, job
        )

    def begin_window(self, name: str, sync_execution: bool = False) -> None:
        """Starts sampling (``ValueError`` if ``name`` is open)."""
        if sync_execution:
            self.energy_monitor._sync()
        self._native.begin_window(name)

    def end_window(self, name: str, sync_execution: bool = False) -> None:
        """Stops sampling (``ValueError`` for an unknown window)."""
        if sync_execution:
            self.energy_monitor._sync()
        self._native.end_window(name)
