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
logged once per window on the ``zeus.metric`` logger instead of printed per push); the cumulative counter and the
gauge use a thread instead of a spawned process, and the counter chains its sub-windows so that no energy between
them is lost. A window's energy outside the histogram's buckets is a ``UserWarning`` whose text names the bucket
bound but not the value, so Python shows it once per place (Zeus warned with the value, on every window).

The helpers need the native module built with the exporter component (prometheus-cpp). A build without it (the
wheel of ``make wheel``, or a source build where prometheus-cpp was not found) still imports ``zeus.metric``, but
constructing any of the three helpers raises ``MetricsUnavailableError`` (a subclass of ``ImportError``) that says
why and what to install; ``metrics_available()`` tells in advance.
"""

from __future__ import annotations

import abc
from typing import Optional, Sequence

from zeus import _native
from zeus.monitor import ZeusMonitor

__all__ = [
    "Metric",
    "EnergyHistogram",
    "EnergyCumulativeCounter",
    "PowerGauge",
    "MetricsUnavailableError",
    "metrics_available",
]


class MetricsUnavailableError(ImportError):
    """The push helpers are not in this build: its native module was built without prometheus-cpp.

    Raised when ``EnergyHistogram``, ``EnergyCumulativeCounter`` or ``PowerGauge`` is constructed. A subclass of
    ``ImportError``, so ``except ImportError`` (the usual guard around optional features) catches it.
    """


def metrics_available() -> bool:
    """Whether this build has the Prometheus push helpers (the native module's exporter component)."""
    return hasattr(_native, "metric")


def _native_metric():
    """``zeus._native.metric``, or ``MetricsUnavailableError`` saying why it is absent and how to get it."""
    native = getattr(_native, "metric", None)
    if native is None:
        raise MetricsUnavailableError(
            "zeus.metric's Prometheus push helpers are not in this build of zeus: its native module "
            f"({getattr(_native, '__file__', 'zeus._native')}) was built without the exporter component "
            "(prometheus-cpp), as the zeus wheel always is. To use them, install the Debian "
            "package python3-zeus, or build zeus from source with prometheus-cpp installed (Debian package "
            "prometheus-cpp-dev; configure with -DZEUS_BUILD_EXPORTER=ON) and use that build's package.",
            name="zeus._native.metric",
        )
    return native


class Metric(abc.ABC):
    """A metric over measurement windows, pushed to a Prometheus Pushgateway."""

    @abc.abstractmethod
    def begin_window(self, name: str, sync_execution: bool = True) -> None:
        """Begins the window ``name``."""

    @abc.abstractmethod
    def end_window(self, name: str, sync_execution: bool = True) -> None:
        """Ends the window ``name`` and pushes."""

    # The three helpers keep a ZeusMonitor (``energy_monitor``) and their native
    # object (``_native``); a window's begin and end sync the framework first when asked.
    def _begin_native_window(self, name: str, sync_execution: bool) -> None:
        if sync_execution:
            self.energy_monitor._sync()
        self._native.begin_window(name)

    def _end_native_window(self, name: str, sync_execution: bool) -> None:
        if sync_execution:
            self.energy_monitor._sync()
        self._native.end_window(name)


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
        MetricsUnavailableError: this build has no push helpers (see the module's documentation).
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
        native = _native_metric()
        self.gpu_indices = gpu_indices
        self.cpu_indices = cpu_indices
        self.pushgateway_url = pushgateway_url
        self.job = job
        self.energy_monitor = ZeusMonitor(cpu_indices=cpu_indices, gpu_indices=gpu_indices)
        self._native = native.EnergyHistogram(
            self.energy_monitor._native,
            pushgateway_url,
            job,
            [float(b) for b in gpu_bucket_range],
            [float(b) for b in cpu_bucket_range],
            [float(b) for b in dram_bucket_range],
        )

    def begin_window(self, name: str, sync_execution: bool = True) -> None:
        """Begins the window ``name`` (``ValueError`` if it is open)."""
        self._begin_native_window(name, sync_execution)

    def end_window(self, name: str, sync_execution: bool = True) -> None:
        """Ends the window, observes each device's energy and pushes in the background."""
        self._end_native_window(name, sync_execution)


class EnergyCumulativeCounter(Metric):
    """Energy as Prometheus counters, updated every ``update_period`` seconds while a window is open.

    Raises:
        ValueError: a non-positive update period, a malformed URL or job.
        MetricsUnavailableError: this build has no push helpers (see the module's documentation).
    """

    def __init__(
        self,
        cpu_indices: Optional[Sequence[int]],
        gpu_indices: Optional[Sequence[int]],
        update_period: float,
        pushgateway_url: str,
        job: str,
    ) -> None:
        native = _native_metric()
        self.cpu_indices = cpu_indices
        self.gpu_indices = gpu_indices
        self.update_period = update_period
        self.pushgateway_url = pushgateway_url
        self.job = job
        self.energy_monitor = ZeusMonitor(cpu_indices=cpu_indices, gpu_indices=gpu_indices)
        self._native = native.EnergyCumulativeCounter(
            self.energy_monitor._native, float(update_period), pushgateway_url, job
        )

    def begin_window(self, name: str, sync_execution: bool = False) -> None:
        """Starts counting under ``window=name`` (``ValueError`` if it is open)."""
        self._begin_native_window(name, sync_execution)

    def end_window(self, name: str, sync_execution: bool = False) -> None:
        """Adds the last partial period, pushes and stops (``ValueError`` for an unknown window)."""
        self._end_native_window(name, sync_execution)


class PowerGauge(Metric):
    """GPU power as a Prometheus gauge, set every ``update_period`` seconds while a window is open.

    Raises:
        ValueError: a non-positive update period, a malformed URL or job.
        MetricsUnavailableError: this build has no push helpers (see the module's documentation).
    """

    def __init__(
        self,
        gpu_indices: Optional[Sequence[int]],
        update_period: float,
        pushgateway_url: str,
        job: str,
    ) -> None:
        native = _native_metric()
        self.gpu_indices = gpu_indices
        self.update_period = update_period
        self.pushgateway_url = pushgateway_url
        self.job = job
        self.energy_monitor = ZeusMonitor(gpu_indices=gpu_indices, cpu_indices=[])
        self._native = native.PowerGauge(
            self.energy_monitor._native, float(update_period), pushgateway_url, job
        )

    def begin_window(self, name: str, sync_execution: bool = False) -> None:
        """Starts sampling (``ValueError`` if ``name`` is open)."""
        self._begin_native_window(name, sync_execution)

    def end_window(self, name: str, sync_execution: bool = False) -> None:
        """Stops sampling (``ValueError`` for an unknown window)."""
        self._end_native_window(name, sync_execution)
