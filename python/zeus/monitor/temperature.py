"""GPU temperature timelines: ``TemperatureMonitor`` (Zeus's ``zeus.monitor.temperature``).

A native sampler thread per GPU reads the temperature every ``update_period`` seconds. Differences
from Zeus, on purpose: timestamps as in ``zeus.monitor.power`` (monotonic, read as Unix time);
``max_samples_per_gpu=None`` keeps the last 36,000 samples; a GPU without a temperature sensor has
an empty timeline instead of cutting every polling round short (Zeus's W12). Fork: as PowerMonitor.
"""

from __future__ import annotations

from typing import Optional, Sequence

from zeus.monitor.power import _DEFAULT_CAPACITY, _nearest, _Sampler

_TEMPERATURE = 3


class TemperatureMonitor(_Sampler):
    """Samples GPU temperatures (°C) in the background.

    Args:
        gpu_indices: GPUs to sample (framework indices). None: every visible GPU.
        update_period: sampling period in seconds.
        max_samples_per_gpu: samples kept per GPU. None: 36,000.
    """

    def __init__(
        self,
        gpu_indices: Optional[Sequence[int]] = None,
        update_period: float = 1.0,
        max_samples_per_gpu: Optional[int] = None,
    ) -> None:
        if gpu_indices is not None and len(gpu_indices) == 0:
            raise ValueError("gpu_indices must not be empty; pass None to monitor every GPU")
        if update_period <= 0:
            raise ValueError(f"update_period must be positive, got {update_period}")
        if max_samples_per_gpu is not None and max_samples_per_gpu <= 0:
            raise ValueError(f"max_samples_per_gpu must be positive, got {max_samples_per_gpu}")
        super().__init__(
            gpu_indices,
            float(update_period),
            float(update_period),
            _DEFAULT_CAPACITY if max_samples_per_gpu is None else int(max_samples_per_gpu),
            False,
            False,
            True,
        )
        self.update_period = float(update_period)

    def get_temperature_timeline(
        self, gpu_index: Optional[int] = None, start_time: Optional[float] = None, end_time: Optional[float] = None
    ) -> dict[int, list[tuple[float, int]]]:
        """``{gpu: [(time, celsius), ...]}``, oldest first, within [start_time, end_time]."""
        return {
            gpu: [(t, int(c)) for t, c in timeline]
            for gpu, timeline in self._timeline(_TEMPERATURE, gpu_index, start_time, end_time).items()
        }

    def get_temperature(self, time: Optional[float] = None) -> Optional[dict[int, int]]:
        """Each GPU's temperature: the latest sample, or the one nearest ``time``; None if a GPU has none."""
        out = {}
        for gpu, timeline in self.get_temperature_timeline().items():
            if not timeline:
                return None
            out[gpu] = timeline[-1][1] if time is None else int(_nearest(timeline, time))
        return out
