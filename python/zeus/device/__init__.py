"""The devices (Zeus's ``zeus.device``): ``get_gpus()``, ``get_cpus()`` and ``get_soc()``.

Each returns a process-wide object, opened on first use, with Zeus's class and method names and units
(mW, mJ, MHz, °C); the GPU and CPU methods take the device's index first. The packages are laid out as
Zeus's: ``zeus.device.gpu`` (``common``: ``GPU``, ``GPUs``, ``EmptyGPUs``; ``nvidia``: ``NVIDIAGPU(s)``),
``zeus.device.cpu`` (``common``: ``CPU``, ``CPUs``, ``CpuDramMeasurement``; ``rapl``: ``RAPLCPU(s)``,
``get_current_rapl_zone_id``), ``zeus.device.soc`` (``common``: ``SoC``, ``SoCMeasurement``; ``jetson``;
``apple``) and ``zeus.device.exception``. ``reset_devices()`` drops the cached objects, so that the next call
opens the devices again (tests change ``ZEUS_EMULATOR_CONFIG`` or ``ZEUS_SOC_ROOT`` between cases).
"""

from zeus.device.cpu import CpuDramMeasurement, get_cpus
from zeus.device.gpu import get_gpus
from zeus.device.soc import get_soc


def reset_devices() -> None:
    """Forgets the objects ``get_gpus()``, ``get_cpus()`` and ``get_soc()`` cached; the next calls open anew."""
    from zeus.device import cpu, gpu, soc

    gpu._reset()
    cpu._reset()
    soc._reset()


__all__ = ["CpuDramMeasurement", "get_cpus", "get_gpus", "get_soc", "reset_devices"]
