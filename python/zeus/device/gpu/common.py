"""Zeus's ``zeus.device.gpu.common``: the ``GPU`` and ``GPUs`` interfaces, ``EmptyGPUs`` and the GPU exceptions.

``GPUs`` is the set of visible GPUs; each method takes the GPU's index first and forwards to that ``GPU``
(``gpus.get_name(0) == gpus.gpus[0].get_name()``). Units are Zeus's: mW, mJ, MHz, °C. Every method also
has Zeus's deprecated camelCase alias (``getName``, ``getPowerManagementLimitConstraints``, ...), which
warns once per process with ``DeprecationWarning`` and forwards.

The exception classes are ``zeus.exception``'s (each also the builtin Zeus raises for its kind).
"""

from __future__ import annotations

import abc
import threading
import warnings
from typing import Any, Sequence

from zeus.exception import (  # noqa: F401 (re-exported under Zeus's module)
    ZeusBaseGPUError,
    ZeusGPUAlreadyInitializedError,
    ZeusGPUCorruptedInfoROMError,
    ZeusGPUDriverNotLoadedError,
    ZeusGPUFunctionNotFoundError,
    ZeusGPUHeterogeneousError,
    ZeusGPUInitError,
    ZeusGPUInsufficientPowerError,
    ZeusGPUInsufficientSizeError,
    ZeusGPUInvalidArgError,
    ZeusGPUIRQError,
    ZeusGPULibraryNotFoundError,
    ZeusGPULibRMVersionMismatchError,
    ZeusGPULostError,
    ZeusGPUMemoryError,
    ZeusGPUNoPermissionError,
    ZeusGPUNotFoundError,
    ZeusGPUNotSupportedError,
    ZeusGPUOperatingSystemError,
    ZeusGPUResetRequiredError,
    ZeusGPUTimeoutError,
    ZeusGPUUnknownError,
)

# Zeus's GPU methods (GPUs takes the index first). The camelCase aliases are made from these names.
GPU_METHODS = (
    "get_name",
    "get_power_management_limit_constraints",
    "get_power_management_limit",
    "set_power_management_limit",
    "reset_power_management_limit",
    "set_persistence_mode",
    "get_persistence_mode",
    "get_supported_memory_clocks",
    "set_memory_locked_clocks",
    "reset_memory_locked_clocks",
    "get_supported_graphics_clocks",
    "set_gpu_locked_clocks",
    "reset_gpu_locked_clocks",
    "reset_locked_clocks",
    "get_average_power_usage",
    "get_instant_power_usage",
    "get_average_memory_power_usage",
    "supports_get_total_energy_consumption",
    "get_total_energy_consumption",
    "get_gpu_temperature",
)

_warned_lock = threading.Lock()
_warned_aliases: set[str] = set()


def camel_case(name: str) -> str:
    """``get_gpu_temperature`` -> ``getGpuTemperature`` (Zeus's deprecated spelling)."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def add_deprecated_aliases(cls: type, names: Sequence[str]) -> None:
    """Gives ``cls`` a camelCase alias of each method in ``names``; the first call of each alias in the
    process warns (``DeprecationWarning``) and every call forwards to the snake_case method."""
    for name in names:
        alias = camel_case(name)

        def make(name: str = name, alias: str = alias) -> Any:
            def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
                with _warned_lock:
                    first = alias not in _warned_aliases
                    _warned_aliases.add(alias)
                if first:
                    warnings.warn(f"{alias} is deprecated; use {name}", DeprecationWarning, stacklevel=2)
                return getattr(self, name)(*args, **kwargs)

            forward.__name__ = alias
            forward.__doc__ = f"Deprecated alias of ``{name}``."
            return forward

        setattr(cls, alias, make())


class GPU(abc.ABC):
    """One GPU (Zeus's ``GPU``). ``gpu_index`` is its framework index (after ``CUDA_VISIBLE_DEVICES``)."""

    def __init__(self, gpu_index: int) -> None:
        self.gpu_index = gpu_index

    @property
    def supports_nonblocking_setters(self) -> bool:
        """Whether the setters' ``block=False`` returns before the change is made (never here)."""
        return False

    @abc.abstractmethod
    def get_name(self) -> str: ...

    @abc.abstractmethod
    def get_power_management_limit_constraints(self) -> tuple[int, int]: ...

    @abc.abstractmethod
    def get_power_management_limit(self) -> int: ...

    @abc.abstractmethod
    def set_power_management_limit(self, power_limit_mw: int, block: bool = True) -> None: ...

    @abc.abstractmethod
    def reset_power_management_limit(self, block: bool = True) -> None: ...

    @abc.abstractmethod
    def set_persistence_mode(self, enabled: bool, block: bool = True) -> None: ...

    @abc.abstractmethod
    def get_persistence_mode(self) -> bool: ...

    @abc.abstractmethod
    def get_supported_memory_clocks(self) -> list[int]: ...

    @abc.abstractmethod
    def set_memory_locked_clocks(self, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None: ...

    @abc.abstractmethod
    def reset_memory_locked_clocks(self, block: bool = True) -> None: ...

    @abc.abstractmethod
    def get_supported_graphics_clocks(self, memory_clock_mhz: int | None = None) -> list[int]: ...

    @abc.abstractmethod
    def set_gpu_locked_clocks(self, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None: ...

    @abc.abstractmethod
    def reset_gpu_locked_clocks(self, block: bool = True) -> None: ...

    def reset_locked_clocks(self, block: bool = True) -> None:
        """Resets the GPU's and then the memory's locked clocks."""
        self.reset_gpu_locked_clocks(block)
        self.reset_memory_locked_clocks(block)

    @abc.abstractmethod
    def get_average_power_usage(self) -> int: ...

    @abc.abstractmethod
    def get_instant_power_usage(self) -> int: ...

    @abc.abstractmethod
    def get_average_memory_power_usage(self) -> int: ...

    @abc.abstractmethod
    def supports_get_total_energy_consumption(self) -> bool: ...

    @abc.abstractmethod
    def get_total_energy_consumption(self) -> int: ...

    @abc.abstractmethod
    def get_gpu_temperature(self) -> int: ...


class GPUs(abc.ABC):
    """The visible GPUs (Zeus's ``GPUs``): each method takes the GPU index first and forwards to ``gpus[i]``."""

    @property
    @abc.abstractmethod
    def gpus(self) -> Sequence[GPU]:
        """The GPUs, in framework index order."""

    def __len__(self) -> int:
        return len(self.gpus)

    def _gpu(self, gpu_index: int) -> GPU:
        if not 0 <= gpu_index < len(self.gpus):
            count = len(self.gpus)
            raise ZeusGPUNotFoundError(
                f"GPU {gpu_index} does not exist: {count} GPU{' is' if count == 1 else 's are'} visible"
            )
        return self.gpus[gpu_index]

    @property
    def supports_nonblocking_setters(self) -> bool:
        return all(g.supports_nonblocking_setters for g in self.gpus)

    def get_name(self, gpu_index: int) -> str:
        return self._gpu(gpu_index).get_name()

    def get_power_management_limit_constraints(self, gpu_index: int) -> tuple[int, int]:
        return self._gpu(gpu_index).get_power_management_limit_constraints()

    def get_power_management_limit(self, gpu_index: int) -> int:
        return self._gpu(gpu_index).get_power_management_limit()

    def set_power_management_limit(self, gpu_index: int, power_limit_mw: int, block: bool = True) -> None:
        self._gpu(gpu_index).set_power_management_limit(power_limit_mw, block)

    def reset_power_management_limit(self, gpu_index: int, block: bool = True) -> None:
        self._gpu(gpu_index).reset_power_management_limit(block)

    def set_persistence_mode(self, gpu_index: int, enabled: bool, block: bool = True) -> None:
        self._gpu(gpu_index).set_persistence_mode(enabled, block)

    def get_persistence_mode(self, gpu_index: int) -> bool:
        return self._gpu(gpu_index).get_persistence_mode()

    def get_supported_memory_clocks(self, gpu_index: int) -> list[int]:
        return self._gpu(gpu_index).get_supported_memory_clocks()

    def set_memory_locked_clocks(
        self, gpu_index: int, min_clock_mhz: int, max_clock_mhz: int, block: bool = True
    ) -> None:
        self._gpu(gpu_index).set_memory_locked_clocks(min_clock_mhz, max_clock_mhz, block)

    def reset_memory_locked_clocks(self, gpu_index: int, block: bool = True) -> None:
        self._gpu(gpu_index).reset_memory_locked_clocks(block)

    def get_supported_graphics_clocks(self, gpu_index: int, memory_clock_mhz: int | None = None) -> list[int]:
        return self._gpu(gpu_index).get_supported_graphics_clocks(memory_clock_mhz)

    def set_gpu_locked_clocks(self, gpu_index: int, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        self._gpu(gpu_index).set_gpu_locked_clocks(min_clock_mhz, max_clock_mhz, block)

    def reset_gpu_locked_clocks(self, gpu_index: int, block: bool = True) -> None:
        self._gpu(gpu_index).reset_gpu_locked_clocks(block)

    def reset_locked_clocks(self, gpu_index: int, block: bool = True) -> None:
        self._gpu(gpu_index).reset_locked_clocks(block)

    def get_average_power_usage(self, gpu_index: int) -> int:
        return self._gpu(gpu_index).get_average_power_usage()

    def get_instant_power_usage(self, gpu_index: int) -> int:
        return self._gpu(gpu_index).get_instant_power_usage()

    def get_average_memory_power_usage(self, gpu_index: int) -> int:
        return self._gpu(gpu_index).get_average_memory_power_usage()

    def supports_get_total_energy_consumption(self, gpu_index: int) -> bool:
        return self._gpu(gpu_index).supports_get_total_energy_consumption()

    def get_total_energy_consumption(self, gpu_index: int) -> int:
        return self._gpu(gpu_index).get_total_energy_consumption()

    def get_gpu_temperature(self, gpu_index: int) -> int:
        return self._gpu(gpu_index).get_gpu_temperature()


class EmptyGPUs(GPUs):
    """No GPUs (Zeus's ``EmptyGPUs``, what ``ZeusMonitor`` uses without a driver): every index is unknown."""

    @property
    def gpus(self) -> Sequence[GPU]:
        return []


add_deprecated_aliases(GPU, GPU_METHODS)
add_deprecated_aliases(GPUs, GPU_METHODS)

__all__ = [
    "GPU",
    "GPUs",
    "EmptyGPUs",
    "ZeusBaseGPUError",
    "ZeusGPUAlreadyInitializedError",
    "ZeusGPUCorruptedInfoROMError",
    "ZeusGPUDriverNotLoadedError",
    "ZeusGPUFunctionNotFoundError",
    "ZeusGPUHeterogeneousError",
    "ZeusGPUInitError",
    "ZeusGPUInsufficientPowerError",
    "ZeusGPUInsufficientSizeError",
    "ZeusGPUInvalidArgError",
    "ZeusGPUIRQError",
    "ZeusGPULibraryNotFoundError",
    "ZeusGPULibRMVersionMismatchError",
    "ZeusGPULostError",
    "ZeusGPUMemoryError",
    "ZeusGPUNoPermissionError",
    "ZeusGPUNotFoundError",
    "ZeusGPUNotSupportedError",
    "ZeusGPUOperatingSystemError",
    "ZeusGPUResetRequiredError",
    "ZeusGPUTimeoutError",
    "ZeusGPUUnknownError",
]
