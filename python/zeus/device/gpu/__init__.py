"""GPUs (Zeus's ``zeus.device.gpu``): ``get_gpus()`` and the classes of ``common`` and ``nvidia``.

``get_gpus()`` returns an ``NVIDIAGPUs`` where an NVIDIA driver has GPUs, else an ``AMDGPUs`` (AMD SMI,
ROCm 6.3 or newer), as Zeus does; ``ZEUS_GPU_VENDOR=nvidia|amd`` chooses. Either is a ``GPUs``:
``len(gpus)`` GPUs in framework order (``CUDA_VISIBLE_DEVICES`` applied; on AMD the HIP order, with
``ROCR_VISIBLE_DEVICES`` and ``HIP_VISIBLE_DEVICES``), methods as Zeus's ``GPUs`` (``get_name(i)``,
``get_power_management_limit_constraints(i) -> (min_mW, max_mW)``, ``get_power_management_limit(i)``,
``get_instant_power_usage(i)``, ``get_average_power_usage(i)``, ``get_average_memory_power_usage(i)``,
``supports_get_total_energy_consumption(i)``, ``get_total_energy_consumption(i)`` (mJ),
``get_gpu_temperature(i)``, the setters, ...), each also under Zeus's deprecated camelCase name.
Failures raise ``ZeusBaseGPUError`` subclasses.

Differences from Zeus: no zeusd-relayed GPUs (``ZeusdNVIDIAGPU``, ``ZeusdAMDGPU``); a missing driver raises ``ZeusGPUInitError`` from ``get_gpus()`` as in Zeus, but
``CUDA_VISIBLE_DEVICES=""`` is zero GPUs rather than an error.
"""

from __future__ import annotations

import threading
from typing import Optional

from zeus import _native
from zeus.device.gpu.common import *  # noqa: F401,F403 (Zeus's names: GPU, GPUs, EmptyGPUs, the exceptions)
from zeus.device.gpu.common import EmptyGPUs, GPU, GPUs
from zeus.device.gpu.amd import AMDGPU, AMDGPUs, amdsmi_is_available
from zeus.device.gpu import nvidia as _nvidia
from zeus.device.gpu.nvidia import NVIDIAGPU, NVIDIAGPUs, nvml_is_available

_lock = threading.Lock()
_gpus: Optional[GPUs] = None


def get_gpus(ensure_homogeneous: bool = False) -> GPUs:
    """The visible GPUs, opened once per process.

    Args:
        ensure_homogeneous: raise ``ZeusGPUHeterogeneousError`` if the GPUs are not all one model (checked
            when the GPUs are opened, i.e. on the first call, as in Zeus).

    Raises:
        ZeusGPUInitError: neither an NVIDIA driver nor AMD SMI (nor an emulator of either) could be loaded.
    """
    global _gpus
    with _lock:
        if _gpus is None:
            native = _native.device.open_gpus()
            cls = AMDGPUs if native.vendor == "amd" else NVIDIAGPUs
            _gpus = cls._from_native(native, ensure_homogeneous)
        return _gpus


def _reset() -> None:
    global _gpus
    with _lock:
        _gpus = None
    _nvidia._reset_probe()


__all__ = [
    "get_gpus",
    "GPU",
    "GPUs",
    "EmptyGPUs",
    "NVIDIAGPU",
    "NVIDIAGPUs",
    "nvml_is_available",
    "AMDGPU",
    "AMDGPUs",
    "amdsmi_is_available",
]
