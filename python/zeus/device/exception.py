"""Zeus's ``zeus.device.exception``: the base classes of device failures (``zeus.exception``'s classes)."""

from zeus.exception import (  # noqa: F401 (Zeus's names)
    ZeusBaseCPUError,
    ZeusBaseError,
    ZeusBaseGPUError,
    ZeusBaseMachineError,
    ZeusBaseSoCError,
    ZeusdError,
)

__all__ = ["ZeusBaseCPUError", "ZeusBaseGPUError", "ZeusBaseMachineError", "ZeusBaseSoCError", "ZeusdError"]
