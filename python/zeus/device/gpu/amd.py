"""Zeus's ``zeus.device.gpu.amd``: AMD Instinct GPUs through AMD SMI (ROCm 6.3 or newer).

``AMDGPUs`` opens the visible AMD GPUs through the native device layer, which dlopens ``libamd_smi.so``
(or the library ``ZEUS_AMDSMI_LIBRARY`` names, such as the emulator's). Indices are HIP indices:
``ROCR_VISIBLE_DEVICES`` selects from every GPU, then ``HIP_VISIBLE_DEVICES`` (else
``CUDA_VISIBLE_DEVICES``) from what it left, as ROCm does. Methods are Zeus's (see
``zeus.device.gpu.common``); what AMD lacks raises ``ZeusGPUNotSupportedError``: memory power, persistence
mode, locked clocks, and on MI250 the instant power (MI300X: the average power). The second die of a
dual-die MI250 reports no power or energy of its own: its partner reports the board's.
"""

from __future__ import annotations

from zeus import _native
from zeus.device.gpu.common import ZeusGPUInitError
from zeus.device.gpu.nvidia import NVIDIAGPU, NVIDIAGPUs


def amdsmi_is_available() -> bool:
    """Whether AMD SMI (ROCm's, or the library ``ZEUS_AMDSMI_LIBRARY`` names) loads and sees the GPUs."""
    try:
        _native.device.open_gpus("amd")
    except ZeusGPUInitError:
        return False
    return True


class AMDGPU(NVIDIAGPU):
    """One AMD GPU of an ``AMDGPUs`` (its HIP index ``gpu_index``)."""


class AMDGPUs(NVIDIAGPUs):
    """The visible AMD GPUs (Zeus's ``AMDGPUs``); methods take the HIP index first.

    Args:
        ensure_homogeneous: raise ``ZeusGPUHeterogeneousError`` if the GPUs are not all one model.

    Raises:
        ZeusGPUInitError: no AMD SMI (ROCm 6.3 or newer) could be loaded, or it failed to initialise.
    """

    _vendor = "amd"
    _gpu_class = AMDGPU


__all__ = ["AMDGPU", "AMDGPUs", "amdsmi_is_available"]
