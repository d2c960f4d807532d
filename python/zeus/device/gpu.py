"""GPUs (Zeus's ``zeus.device.gpu``): NVIDIA GPUs through NVML, loaded by the native device layer.

``get_gpus()`` returns a ``zeus._native.device.GPUs``: ``len(gpus)`` GPUs in framework order
(``CUDA_VISIBLE_DEVICES`` applied), methods as Zeus's ``GPUs`` (``get_name(i)``,
``get_power_management_limit_constraints(i) -> (min_mW, max_mW)``, ``get_power_management_limit(i)``,
``get_instant_power_usage(i)``, ``get_average_power_usage(i)``, ``get_average_memory_power_usage(i)``,
``supports_get_total_energy_consumption(i)``, ``get_total_energy_consumption(i)`` (mJ),
``get_gpu_temperature(i)``, the setters, ...). Failures raise ``ZeusBaseGPUError`` subclasses.

Differences from Zeus: no AMD GPUs (ROCm) and no zeusd; a missing driver raises ``ZeusGPUInitError``
from ``get_gpus()`` as in Zeus, but ``CUDA_VISIBLE_DEVICES=""`` is zero GPUs rather than an error.
"""

from __future__ import annotations

import threading
from typing import Optional

from zeus import _native
from zeus.exception import ZeusGPUHeterogeneousError

_lock = threading.Lock()
_gpus: Optional[_native.device.GPUs] = None


def get_gpus(ensure_homogeneous: bool = False) -> _native.device.GPUs:
    """The visible GPUs, opened once per process.

    Args:
        ensure_homogeneous: raise ``ZeusGPUHeterogeneousError`` if the GPUs are not all one model (checked
            when the GPUs are opened, i.e. on the first call, as in Zeus).

    Raises:
        ZeusGPUInitError: no NVIDIA driver (or NVML emulator) could be loaded.
    """
    global _gpus
    with _lock:
        if _gpus is None:
            gpus = _native.device.open_gpus()
            if ensure_homogeneous:
                names = {gpus.get_name(i) for i in range(len(gpus))}
                if len(names) > 1:
                    raise ZeusGPUHeterogeneousError(
                        f"The visible GPUs are not all one model ({', '.join(sorted(names))}); restrict "
                        "CUDA_VISIBLE_DEVICES to GPUs of one model."
                    )
            _gpus = gpus
        return _gpus


def _reset() -> None:
    global _gpus
    with _lock:
        _gpus = None
