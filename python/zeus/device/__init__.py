"""The GPUs and CPUs (Zeus's ``zeus.device``): ``get_gpus()`` and ``get_cpus()``.

Both return process-wide objects, opened on first use, with Zeus's method names and units (mW, mJ,
MHz, °C); each method takes the device's index first. ``reset_devices()`` drops the cached objects,
so that the next call opens the devices again (tests change ``ZEUS_EMULATOR_CONFIG`` between
cases).
"""

from zeus.device.cpu import CpuDramMeasurement, get_cpus
from zeus.device.gpu import get_gpus


def reset_devices() -> None:
    """Forgets the objects ``get_gpus()`` and ``get_cpus()`` cached; the next calls open the devices anew."""
    from zeus.device import cpu, gpu

    gpu._reset()
    cpu._reset()


__all__ = ["CpuDramMeasurement", "get_cpus", "get_gpus", "reset_devices"]
