"""Exceptions of the zeus package.

Every failure that comes from the native engine is one of these classes,
picked by one table (``python/src/errors.cc``) from where it happened (a GPU,
a CPU's RAPL counters, the batch-size optimizer, or elsewhere) and its kind.
Each class also derives from the builtin exception that Zeus raises for that
kind of failure, so code written for Zeus keeps catching what it caught:

=========================  ==============================  ===================
kind (native ErrorCode)    class (outside a family)        also a
=========================  ==============================  ===================
INVALID_ARGUMENT           ZeusInvalidArgumentError        ValueError
NOT_FOUND                  ZeusNotFoundError               ValueError
ALREADY_EXISTS             ZeusAlreadyExistsError          ValueError
NOT_SUPPORTED              ZeusNotSupportedError           RuntimeError
PERMISSION_DENIED          ZeusPermissionError             PermissionError
UNAVAILABLE                ZeusUnavailableError            RuntimeError
DEVICE_LOST                ZeusDeviceLostError             RuntimeError
TIMEOUT                    ZeusTimeoutError                TimeoutError
IO_ERROR                   ZeusIOError                     OSError
FAILED_PRECONDITION        ZeusFailedPreconditionError     RuntimeError
ABORTED                    ZeusAbortedError                RuntimeError
INTERNAL                   ZeusInternalError               RuntimeError
=========================  ==============================  ===================

GPU failures raise Zeus's ``ZeusBaseGPUError`` family (``ZeusGPUInitError``,
``ZeusGPUNoPermissionError``, ...), CPU failures ``ZeusBaseCPUError``'s, SoC
failures ``ZeusBaseSoCError``'s (``ZeusSoCInitError``, ``ZeusSoCIOError``) and
the batch-size optimizer's client ``ZeusBSOClientBaseError``'s; each of those
classes also derives from the class of its kind above. An error answer of the
batch-size service (any HTTP status) raises ``ZeusBSORuntimError``, as Zeus.
The zeusd client (``zeus.utils.zeusd``) raises ``ZeusdError`` and its
subclasses ``ZeusdConnectionError`` (unreachable, timeout, broken answer),
``ZeusdAuthError`` (token missing or rejected) and ``ZeusdCapabilityError``.

Every instance has ``message`` (as in Zeus), ``code`` (the native
``ErrorCode`` name, or None for errors raised in Python) and ``native_code``
(the NVML return code, errno value or HTTP status it came from, if any).
"""

from __future__ import annotations

from typing import Optional


class ZeusBaseError(Exception):
    """Base class of every exception zeus raises itself."""

    def __init__(self, message: str, code: Optional[str] = None, native_code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.native_code = native_code

    def __str__(self) -> str:
        return self.message


# One class per native ErrorCode.
class ZeusInvalidArgumentError(ZeusBaseError, ValueError):
    """A bad argument, file or value out of range."""


class ZeusNotFoundError(ZeusBaseError, ValueError):
    """The named thing (a window, a GPU, a job) does not exist."""


class ZeusAlreadyExistsError(ZeusBaseError, ValueError):
    """The thing to create (a window of that name) exists already."""


class ZeusNotSupportedError(ZeusBaseError, RuntimeError):
    """The device or platform cannot do this."""


class ZeusPermissionError(ZeusBaseError, PermissionError):
    """The process lacks the privilege (root, CAP_SYS_ADMIN)."""


class ZeusUnavailableError(ZeusBaseError, RuntimeError):
    """A library, driver, daemon or server is absent or not initialised."""


class ZeusDeviceLostError(ZeusBaseError, RuntimeError):
    """The device fell off the bus or needs a reset."""


class ZeusTimeoutError(ZeusBaseError, TimeoutError):
    """An operation took too long."""


class ZeusIOError(ZeusBaseError, OSError):
    """A read or write failed."""


class ZeusFailedPreconditionError(ZeusBaseError, RuntimeError):
    """The call is not valid in the current state."""


class ZeusAbortedError(ZeusBaseError, RuntimeError):
    """A concurrent change conflicted; the operation may be retried."""


class ZeusInternalError(ZeusBaseError, RuntimeError):
    """An unexpected failure: a bug, or an unknown native code."""


# GPUs (Zeus's zeus.device.exception names).
class ZeusBaseGPUError(ZeusBaseError):
    """Base class of GPU failures."""


class ZeusGPUInitError(ZeusBaseGPUError, ZeusUnavailableError):
    """No driver, no library, or the GPUs could not be opened."""


class ZeusGPUInvalidArgError(ZeusBaseGPUError, ZeusInvalidArgumentError):
    """The driver rejected an argument (a power limit out of range, ...)."""


class ZeusGPUNotSupportedError(ZeusBaseGPUError, ZeusNotSupportedError):
    """The GPU or driver does not support the call."""


class ZeusGPUNoPermissionError(ZeusBaseGPUError, ZeusPermissionError):
    """Changing the GPU needs root or CAP_SYS_ADMIN."""


class ZeusGPUNotFoundError(ZeusBaseGPUError, ZeusNotFoundError):
    """No GPU of that index."""


class ZeusGPUTimeoutError(ZeusBaseGPUError, ZeusTimeoutError):
    """The driver timed out."""


class ZeusGPULostError(ZeusBaseGPUError, ZeusDeviceLostError):
    """The GPU fell off the bus or needs a reset."""


class ZeusGPUUnknownError(ZeusBaseGPUError, ZeusInternalError):
    """Any other driver failure."""


class ZeusGPUHeterogeneousError(ZeusBaseGPUError, ZeusInvalidArgumentError):
    """The GPUs are of different models where one model is required."""


# The rest of Zeus's GPU classes (one per NVML/AMDSMI error it maps). Our native table raises the classes
# above; these exist so that code written for Zeus can name (and catch) them.
class ZeusGPUAlreadyInitializedError(ZeusBaseGPUError, ZeusFailedPreconditionError):
    """The library was initialised already."""


class ZeusGPUInsufficientSizeError(ZeusBaseGPUError, ZeusInvalidArgumentError):
    """A buffer given to the driver was too small."""


class ZeusGPUInsufficientPowerError(ZeusBaseGPUError, ZeusFailedPreconditionError):
    """A power cable is not connected properly."""


class ZeusGPUDriverNotLoadedError(ZeusBaseGPUError, ZeusUnavailableError):
    """The GPU driver is not loaded."""


class ZeusGPUIRQError(ZeusBaseGPUError, ZeusInternalError):
    """The driver saw an interrupt problem with the GPU."""


class ZeusGPULibraryNotFoundError(ZeusBaseGPUError, ZeusUnavailableError):
    """The management library (NVML) was not found."""


class ZeusGPUFunctionNotFoundError(ZeusBaseGPUError, ZeusNotSupportedError):
    """The library lacks the function (driver too old)."""


class ZeusGPUCorruptedInfoROMError(ZeusBaseGPUError, ZeusDeviceLostError):
    """The GPU's InfoROM is corrupted."""


class ZeusGPUResetRequiredError(ZeusBaseGPUError, ZeusDeviceLostError):
    """The GPU needs a reset."""


class ZeusGPUOperatingSystemError(ZeusBaseGPUError, ZeusInternalError):
    """The operating system blocked the call."""


class ZeusGPULibRMVersionMismatchError(ZeusBaseGPUError, ZeusUnavailableError):
    """The library and the kernel driver are of different versions."""


class ZeusGPUMemoryError(ZeusBaseGPUError, ZeusInternalError):
    """The driver ran out of memory."""


# CPUs (RAPL).
class ZeusBaseCPUError(ZeusBaseError):
    """Base class of CPU (RAPL) failures."""


class ZeusCPUInitError(ZeusBaseCPUError, ZeusUnavailableError):
    """No RAPL interface, or the package cannot be opened."""


class ZeusCPUNoPermissionError(ZeusBaseCPUError, ZeusPermissionError):
    """Reading RAPL needs root (Linux 5.10 and later)."""


class ZeusCPUIOError(ZeusBaseCPUError, ZeusIOError):
    """A RAPL counter could not be read."""


class ZeusCPUNotFoundError(ZeusBaseCPUError, ZeusNotFoundError):
    """No CPU package of that index."""


class ZeusRAPLNotSupportedError(ZeusBaseCPUError, ZeusNotSupportedError):
    """RAPL cannot answer (``get_current_rapl_zone_id``: no zone is this process's package)."""


class ZeusRAPLFileInitError(ZeusBaseCPUError, ZeusUnavailableError):
    """A RAPL file (name, energy_uj, max_energy_range_uj) is missing."""


# SoCs (NVIDIA Jetson, Apple silicon).
class ZeusBaseSoCError(ZeusBaseError):
    """Base class of SoC failures."""


class ZeusSoCInitError(ZeusBaseSoCError, ZeusUnavailableError):
    """No SoC, or it cannot be measured; the message says why."""


class ZeusJetsonInitError(ZeusSoCInitError):
    """Not an NVIDIA Jetson, or no readable power rail on it."""


class ZeusAppleInitError(ZeusSoCInitError):
    """Not Apple silicon (macOS on arm64 only)."""


class ZeusSoCIOError(ZeusBaseSoCError, ZeusIOError):
    """An SoC's power rail could not be read."""


# Machines (Zeus's zeus.device.exception; no machine backend here).
class ZeusBaseMachineError(ZeusBaseError):
    """Base class of whole-machine power meter failures."""


# The batch-size optimizer's client (Zeus's spellings, ``Runtim`` included).
class ZeusBSOClientBaseError(ZeusBaseError):
    """Base class of the batch-size optimizer client's failures."""


class ZeusBSOConfigError(ZeusBSOClientBaseError, ZeusInvalidArgumentError):
    """A bad job specification or configuration."""


class ZeusBSORuntimError(ZeusBSOClientBaseError, RuntimeError):
    """The server failed or could not be reached."""


class ZeusBSOBadOperationError(ZeusBSOClientBaseError, RuntimeError):
    """An operation only rank 0 may do."""


class ZeusBSOOperationOrderError(ZeusBSOClientBaseError, ZeusFailedPreconditionError):
    """Hooks called out of order (a report before a batch size)."""


class ZeusBSOTrainFailError(ZeusBSOClientBaseError, RuntimeError):
    """The run ended without reaching the target metric."""


# zeusd, the privileged daemon (zeus.utils.zeusd).
class ZeusdError(ZeusBaseError, RuntimeError):
    """A request to zeusd failed (the daemon's answer is in the message)."""


class ZeusdConnectionError(ZeusdError, ZeusUnavailableError):
    """zeusd is not configured, cannot be reached, or answered /discover badly."""


class ZeusdAuthError(ZeusdError, ZeusPermissionError):
    """zeusd wants a token and none was given, or it rejected the token."""


class ZeusdCapabilityError(ZeusdError, ZeusFailedPreconditionError):
    """zeusd cannot do what is needed (group not enabled, scope missing, ids absent)."""
