"""Zeus's ``zeus.device.gpu.nvidia``: NVIDIA GPUs through NVML, loaded by the native device layer.

``NVIDIAGPUs`` is what ``get_gpus()`` returns: the visible GPUs (``CUDA_VISIBLE_DEVICES`` applied), over
``zeus._native.device.GPUs``; ``NVIDIAGPU`` is one of them. Besides Zeus's methods (see
``zeus.device.gpu.common``) both answer the native object's extras (``get_uuid``, ``get_pci_bus_id``,
``get_architecture``, ``get_power_usage``, ``get_default_power_management_limit``, ``driver_version``,
``emulated``, ...). Setters accept ``block`` and always block (``supports_nonblocking_setters`` is False).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Dict, Optional, Sequence

from zeus import _native
from zeus.device.gpu.common import GPU, GPU_METHODS, GPUs, ZeusGPUHeterogeneousError

_probe_lock = threading.Lock()
_nvml_probes: Dict[Optional[str], bool] = {}  # ZEUS_NVML_LIBRARY (None: unset) -> the answer


def nvml_is_available() -> bool:
    """Whether NVML (the driver's, or the library ``ZEUS_NVML_LIBRARY`` names) loads and reports a GPU.

    NVIDIA's NVML only: on a machine with AMD GPUs alone this is False, whatever ``ZEUS_GPU_VENDOR`` says.
    Never raises: a missing driver, a ``ZEUS_NVML_LIBRARY`` that names no loadable library, an NVML that fails
    to initialise or reports no GPU is False. A probe (``_native.device.nvml_gpu_count``: load NVML, count its
    GPUs) that opens no GPU, so runs no energy-counter check; answered once per process for each value of
    ``ZEUS_NVML_LIBRARY`` (Zeus caches its answer too); ``zeus.device.reset_devices()`` forgets the answers.
    """
    library = os.environ.get("ZEUS_NVML_LIBRARY")
    with _probe_lock:
        answer = _nvml_probes.get(library)
        if answer is None:
            try:
                answer = _native.device.nvml_gpu_count() > 0
            except Exception:  # noqa: BLE001 (the question is whether it works; any failure is "no")
                answer = False
            _nvml_probes[library] = answer
        return answer


def _reset_probe() -> None:
    """Forgets nvml_is_available's answers (zeus.device.reset_devices)."""
    with _probe_lock:
        _nvml_probes.clear()


def _index_forwarder(name: str) -> Callable[..., Any]:
    def forward(self: NVIDIAGPU, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._native, name)(self.gpu_index, *args, **kwargs)

    forward.__name__ = name
    return forward


def _set_forwarder(name: str) -> Callable[..., Any]:
    def forward(self: NVIDIAGPUs, gpu_index: int, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._native, name)(gpu_index, *args, **kwargs)

    forward.__name__ = name
    return forward


class NVIDIAGPU(GPU):
    """One NVIDIA GPU of an ``NVIDIAGPUs`` (its framework index ``gpu_index``)."""

    def __init__(self, native: Any, gpu_index: int) -> None:
        super().__init__(gpu_index)
        self._native = native

    for _name in GPU_METHODS:
        locals()[_name] = _index_forwarder(_name)
    del _name

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._native, name)
        if callable(method):
            return lambda *args, **kwargs: method(self.gpu_index, *args, **kwargs)
        return method

    def __repr__(self) -> str:
        return f"{type(self).__name__}(gpu_index={self.gpu_index})"


class NVIDIAGPUs(GPUs):
    """The visible NVIDIA GPUs (Zeus's ``NVIDIAGPUs``); methods take the framework index first.

    Args:
        ensure_homogeneous: raise ``ZeusGPUHeterogeneousError`` if the GPUs are not all one model.

    Raises:
        ZeusGPUInitError: no NVIDIA driver (or NVML emulator) could be loaded.
    """

    _vendor = "nvidia"  # which GPUs open_gpus opens (AMDGPUs: "amd")
    _gpu_class: type = None  # set below the class: NVIDIAGPU

    def __init__(self, ensure_homogeneous: bool = False) -> None:
        self._adopt(_native.device.open_gpus(self._vendor), ensure_homogeneous)

    @classmethod
    def _from_native(cls, native: Any, ensure_homogeneous: bool = False) -> "NVIDIAGPUs":
        """Wraps GPUs already opened (``get_gpus`` opens once, then picks the class by vendor)."""
        gpus = cls.__new__(cls)
        gpus._adopt(native, ensure_homogeneous)
        return gpus

    def _adopt(self, native: Any, ensure_homogeneous: bool) -> None:
        self._native = native
        if ensure_homogeneous:
            names = {self._native.get_name(i) for i in range(len(self._native))}
            if len(names) > 1:
                raise ZeusGPUHeterogeneousError(
                    f"The visible GPUs are not all one model ({', '.join(sorted(names))}); restrict "
                    "CUDA_VISIBLE_DEVICES to GPUs of one model."
                )
        self._gpus = [self._gpu_class(self._native, i) for i in range(len(self._native))]

    @property
    def gpus(self) -> Sequence[GPU]:
        return self._gpus

    def __len__(self) -> int:
        return len(self._native)

    @property
    def supports_nonblocking_setters(self) -> bool:
        return False

    for _name in GPU_METHODS:
        locals()[_name] = _set_forwarder(_name)
    del _name

    def __getattr__(self, name: str) -> Any:
        if name == "_native":  # not yet set: __init__ failed
            raise AttributeError(name)
        return getattr(self._native, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} GPU{'' if len(self) == 1 else 's'})"


NVIDIAGPUs._gpu_class = NVIDIAGPU


__all__ = ["NVIDIAGPU", "NVIDIAGPUs", "nvml_is_available"]
