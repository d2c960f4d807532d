"""Measurement windows: ``ZeusMonitor`` and ``Measurement`` (Zeus's ``zeus.monitor.energy``).

The windows are kept by the native engine (``zeus._native.monitor.Monitor`` over the C++
``zeus::monitor::Monitor``): a ``begin_window``/``end_window`` pair reads each GPU's energy
counter once per end, with the GIL released, and starts no process or thread for GPUs that
have an energy counter.

Differences from Zeus, on purpose:

* Times come from a monotonic clock, not ``time.time()`` (an NTP step cannot corrupt a
  window). On the NVML emulator, windows are timed on the emulator's clock (which a scenario
  may scale or drive by hand), so that a window's time and energy agree. The log file's
  ``start_time`` column is still wall-clock time, as in Zeus.
* GPUs without an energy counter (pre-Volta) are measured by a native power sampler that
  integrates with hold-last-value semantics, clipped at the window's edges, instead of a
  trapezoid over the in-window samples only (which drops the edges and reads 0 J for a window
  of constant power).
* A window name with a comma or a quote is quoted in the log file (CSV), not written raw.
* A GPU or CPU that fails during a window raises the device's exception (``ZeusBaseGPUError``
  or ``ZeusBaseCPUError`` subclasses) from ``end_window``; the window is consumed.
* On an NVIDIA Jetson (``zeus.device.soc``), ``Measurement.soc_energy`` is a ``JetsonMeasurement`` in mJ
  (not converted, as Zeus), integrated natively on the windows' clock; a rail that could not be read during
  a window is None in it, with a ``UserWarning`` naming the file. Without an SoC it is None. Apple silicon is
  never measured (macOS only).
"""

from __future__ import annotations

import csv
import io
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional, Sequence, Union

from zeus import _native
from zeus.device.soc.common import SoCMeasurement
from zeus.device.soc.jetson import JetsonMeasurement, measurement_from_window
from zeus.utils.framework import sync_execution as _sync_execution


@dataclass
class Measurement:
    """The time and energy of one measurement window.

    Attributes:
        time: elapsed time of the window, in seconds.
        gpu_energy: energy of each monitored GPU (key: GPU index as in ``gpu_indices``), in J.
        cpu_energy: energy of each monitored CPU package, in J; None when no CPU is monitored.
        dram_energy: DRAM energy of each monitored CPU package that has a DRAM domain, in J; None when
            none has one.
        soc_energy: the SoC's energy in the window (a ``JetsonMeasurement``, mJ, not converted) when the
            machine is an NVIDIA Jetson; None otherwise.
    """

    time: float
    gpu_energy: dict[int, float]
    cpu_energy: Optional[dict[int, float]] = None
    dram_energy: Optional[dict[int, float]] = None
    soc_energy: Optional[SoCMeasurement] = None

    @property
    def total_energy(self) -> float:
        """The sum of the GPUs' energy, in J (GPU only, as in Zeus: CPU and DRAM energy are not included)."""
        return sum(self.gpu_energy.values())


class ZeusMonitor:
    """Measures the time and the GPU and CPU energy of named, possibly overlapping, windows.

    ```python
    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window("epoch")
    train_one_epoch()
    measurement = monitor.end_window("epoch")
    print(measurement.time, measurement.total_energy)
    ```

    Args:
        gpu_indices: GPUs to measure, as the framework numbers them (after ``CUDA_VISIBLE_DEVICES``).
            None: every visible GPU. No NVIDIA driver means no GPU (not an error), as in Zeus.
        cpu_indices: RAPL CPU packages to measure. None: all, or none when RAPL is absent or not
            readable (root only since Linux 5.10). An explicit non-empty list whose packages cannot be
            read raises ``RuntimeError``.
        approx_instant_energy: when a window is too short for a GPU's energy counter to move,
            report instant power x duration for that GPU instead of 0.0 J (and no warning).
        log_file: a CSV file to truncate and write one row per ended (not cancelled) window:
            ``start_time,window_name,elapsed_time,gpu<i>_energy,...`` as in Zeus.
        sync_execution_with: the framework whose queued GPU work ``begin_window``/``end_window``
            wait for: ``"torch"``, ``"jax"`` or ``"cupy"`` (see ``zeus.utils.framework.sync_execution``).

    Raises:
        ValueError: an unknown or repeated GPU or CPU index (``ZeusGPUInvalidArgError``).
        RuntimeError: ``cpu_indices`` given (non-empty) but RAPL is absent (``ZeusCPUInitError``) or not
            readable (``ZeusFailedPreconditionError``).

    Thread-safety: the methods may be called from several threads at once; each window name is one
    window whichever thread begins or ends it.

    Fork: a ZeusMonitor created before ``os.fork()`` raises ``RuntimeError`` when used in the
    forked child (create a new one there); the parent is unaffected.
    """

    def __init__(
        self,
        gpu_indices: Optional[Sequence[int]] = None,
        cpu_indices: Optional[Sequence[int]] = None,
        approx_instant_energy: bool = False,
        log_file: Optional[Union[str, Path]] = None,
        sync_execution_with: Literal["torch", "jax", "cupy"] = "torch",
    ) -> None:
        # The native monitor (zeus._native.monitor.Monitor, a std::shared_ptr<NativeMonitor>). The
        # optimizers' bindings take this object (monitor._native) and share its devices and windows.
        self._native = _native.monitor.Monitor(
            None if gpu_indices is None else list(gpu_indices),
            None if cpu_indices is None else list(cpu_indices),
        )
        self.gpu_indices: list[int] = list(self._native.gpu_indices)
        self.cpu_indices: list[int] = list(self._native.cpu_indices)
        self.approx_instant_energy = approx_instant_energy
        self.sync_with = sync_execution_with
        self._lock = threading.Lock()
        self._wall_starts: dict[str, float] = {}
        self._log = None
        if log_file is not None:
            path = Path(log_file)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(path, "w", newline="")  # noqa: SIM115 (open for the monitor's lifetime)
            header = ["start_time", "window_name", "elapsed_time"] + [f"gpu{i}_energy" for i in self.gpu_indices]
            self._log.write(",".join(header) + "\n")
            self._log.flush()

    def _sync(self) -> None:
        if self.gpu_indices:
            _sync_execution(self.gpu_indices, sync_with=self.sync_with)

    def begin_window(self, key: str, sync_execution: bool = True, restart: bool = False) -> None:
        """Begins the window ``key``.

        Args:
            key: the window's name, unique among the open windows.
            sync_execution: wait for the framework's queued GPU work first.
            restart: if ``key`` is open, drop it and begin it again instead of raising.

        Raises:
            ValueError: ``Measurement window '<key>' already exists`` (and ``restart`` is False).
        """
        if sync_execution:
            self._sync()
        self._native.begin_window(key, restart)
        if self._log is not None:
            with self._lock:
                self._wall_starts[key] = time.time()

    def end_window(self, key: str, sync_execution: bool = True, cancel: bool = False) -> Measurement:
        """Ends the window ``key`` and returns its measurement.

        Args:
            key: the name given to ``begin_window``.
            sync_execution: wait for the framework's queued GPU work first.
            cancel: drop the window: the measurement is all zeros and nothing is logged.

        Raises:
            ValueError: ``Measurement window '<key>' does not exist``.
        """
        if sync_execution:
            self._sync()
        elapsed, gpu_energy, cpu_energy, dram_energy, estimated, soc = self._native.end_window(key, cancel)
        wall_start = None
        if self._log is not None:
            with self._lock:
                wall_start = self._wall_starts.pop(key, None)
        if cancel:
            soc_energy = None
            if soc is not None:
                soc_energy = JetsonMeasurement(*soc[:3])
                soc_energy.zero_all_fields()
            return Measurement(
                time=0.0,
                gpu_energy={i: 0.0 for i in self.gpu_indices},
                cpu_energy=None if cpu_energy is None else {i: 0.0 for i in self.cpu_indices},
                dram_energy=None if dram_energy is None else {i: 0.0 for i in dram_energy},
                soc_energy=soc_energy,
            )
        if estimated and not self.approx_instant_energy:
            for i in estimated:
                gpu_energy[i] = 0.0
            # The text stays the same from call to call (no window length), so Python's default filter shows
            # a window that is always too short once per place, as Zeus does.
            warnings.warn(
                f"Window '{key}' was too short for the energy counter of GPU(s) "
                f"{', '.join(map(str, estimated))} to update, so their energy reads 0.0 J. Measure longer windows, "
                "or pass approx_instant_energy=True to ZeusMonitor to estimate it as instant power x time.",
                stacklevel=2,
            )
        measurement = Measurement(
            time=elapsed,
            gpu_energy=gpu_energy,
            cpu_energy=cpu_energy,
            dram_energy=dram_energy,
            soc_energy=measurement_from_window(soc),
        )
        if self._log is not None:
            row = io.StringIO()
            csv.writer(row, lineterminator="\n").writerow(
                [str(wall_start), key, str(elapsed)] + [str(gpu_energy[i]) for i in self.gpu_indices]
            )
            with self._lock:
                self._log.write(row.getvalue())
                self._log.flush()
        return measurement

    def reset_windows(self) -> None:
        """Drops every open window (they can be begun again)."""
        self._native.reset_windows()
        with self._lock:
            self._wall_starts.clear()
