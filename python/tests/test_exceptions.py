"""The native error table (python/src/errors.cc) and the exception classes, in full."""

from __future__ import annotations

import pytest

import zeus.exception as zx
from zeus import _native

CODES = [
    "INVALID_ARGUMENT", "NOT_FOUND", "NOT_SUPPORTED", "PERMISSION_DENIED", "UNAVAILABLE", "DEVICE_LOST",
    "TIMEOUT", "IO_ERROR", "FAILED_PRECONDITION", "ALREADY_EXISTS", "ABORTED", "INTERNAL",
]

# Written out by hand from the table in zeus/exception.py's docstring and Zeus's classes.
EXPECTED = {
    "general": {
        "INVALID_ARGUMENT": zx.ZeusInvalidArgumentError, "NOT_FOUND": zx.ZeusNotFoundError,
        "NOT_SUPPORTED": zx.ZeusNotSupportedError, "PERMISSION_DENIED": zx.ZeusPermissionError,
        "UNAVAILABLE": zx.ZeusUnavailableError, "DEVICE_LOST": zx.ZeusDeviceLostError,
        "TIMEOUT": zx.ZeusTimeoutError, "IO_ERROR": zx.ZeusIOError,
        "FAILED_PRECONDITION": zx.ZeusFailedPreconditionError, "ALREADY_EXISTS": zx.ZeusAlreadyExistsError,
        "ABORTED": zx.ZeusAbortedError, "INTERNAL": zx.ZeusInternalError,
    },
    "gpu": {
        "INVALID_ARGUMENT": zx.ZeusGPUInvalidArgError, "NOT_FOUND": zx.ZeusGPUNotFoundError,
        "NOT_SUPPORTED": zx.ZeusGPUNotSupportedError, "PERMISSION_DENIED": zx.ZeusGPUNoPermissionError,
        "UNAVAILABLE": zx.ZeusGPUInitError, "DEVICE_LOST": zx.ZeusGPULostError,
        "TIMEOUT": zx.ZeusGPUTimeoutError, "IO_ERROR": zx.ZeusGPUUnknownError,
        "FAILED_PRECONDITION": zx.ZeusFailedPreconditionError, "ALREADY_EXISTS": zx.ZeusAlreadyExistsError,
        "ABORTED": zx.ZeusGPUUnknownError, "INTERNAL": zx.ZeusGPUUnknownError,
    },
    "cpu": {
        "INVALID_ARGUMENT": zx.ZeusInvalidArgumentError, "NOT_FOUND": zx.ZeusCPUInitError,
        "NOT_SUPPORTED": zx.ZeusCPUInitError, "PERMISSION_DENIED": zx.ZeusCPUNoPermissionError,
        "UNAVAILABLE": zx.ZeusCPUInitError, "DEVICE_LOST": zx.ZeusDeviceLostError,
        "TIMEOUT": zx.ZeusTimeoutError, "IO_ERROR": zx.ZeusCPUIOError,
        "FAILED_PRECONDITION": zx.ZeusFailedPreconditionError, "ALREADY_EXISTS": zx.ZeusAlreadyExistsError,
        "ABORTED": zx.ZeusAbortedError, "INTERNAL": zx.ZeusInternalError,
    },
    "soc": {
        "INVALID_ARGUMENT": zx.ZeusInvalidArgumentError, "NOT_FOUND": zx.ZeusSoCInitError,
        "NOT_SUPPORTED": zx.ZeusSoCInitError, "PERMISSION_DENIED": zx.ZeusPermissionError,
        "UNAVAILABLE": zx.ZeusSoCInitError, "DEVICE_LOST": zx.ZeusDeviceLostError,
        "TIMEOUT": zx.ZeusTimeoutError, "IO_ERROR": zx.ZeusSoCIOError,
        "FAILED_PRECONDITION": zx.ZeusFailedPreconditionError, "ALREADY_EXISTS": zx.ZeusAlreadyExistsError,
        "ABORTED": zx.ZeusAbortedError, "INTERNAL": zx.ZeusInternalError,
    },
    "zeusd": {
        "INVALID_ARGUMENT": zx.ZeusdError, "NOT_FOUND": zx.ZeusdError,
        "NOT_SUPPORTED": zx.ZeusdError, "PERMISSION_DENIED": zx.ZeusdAuthError,
        "UNAVAILABLE": zx.ZeusdConnectionError, "DEVICE_LOST": zx.ZeusdError,
        "TIMEOUT": zx.ZeusdConnectionError, "IO_ERROR": zx.ZeusdConnectionError,
        "FAILED_PRECONDITION": zx.ZeusdCapabilityError, "ALREADY_EXISTS": zx.ZeusdError,
        "ABORTED": zx.ZeusdError, "INTERNAL": zx.ZeusdError,
    },
    "batch_size": {
        "INVALID_ARGUMENT": zx.ZeusBSOConfigError, "NOT_FOUND": zx.ZeusBSORuntimError,
        "NOT_SUPPORTED": zx.ZeusBSORuntimError, "PERMISSION_DENIED": zx.ZeusBSORuntimError,
        "UNAVAILABLE": zx.ZeusBSORuntimError, "DEVICE_LOST": zx.ZeusDeviceLostError,
        "TIMEOUT": zx.ZeusBSORuntimError, "IO_ERROR": zx.ZeusBSORuntimError,
        "FAILED_PRECONDITION": zx.ZeusBSOOperationOrderError, "ALREADY_EXISTS": zx.ZeusBSORuntimError,
        "ABORTED": zx.ZeusBSORuntimError, "INTERNAL": zx.ZeusBSORuntimError,
    },
}

BUILTIN = {
    "INVALID_ARGUMENT": ValueError, "NOT_FOUND": ValueError, "ALREADY_EXISTS": ValueError,
    "NOT_SUPPORTED": RuntimeError, "PERMISSION_DENIED": PermissionError, "UNAVAILABLE": RuntimeError,
    "DEVICE_LOST": RuntimeError, "TIMEOUT": TimeoutError, "IO_ERROR": OSError,
    "FAILED_PRECONDITION": RuntimeError, "ABORTED": RuntimeError, "INTERNAL": RuntimeError,
}


@pytest.mark.parametrize("domain", sorted(EXPECTED))
@pytest.mark.parametrize("code", CODES)
def test_every_domain_and_code_raises_its_class(domain: str, code: str) -> None:
    expected = EXPECTED[domain][code]
    assert _native.errors.exception_for(domain, code) == expected.__name__
    with pytest.raises(expected) as raised:
        _native.errors.raise_error(domain, code, "the message names the problem")
    error = raised.value
    assert type(error) is expected
    assert isinstance(error, zx.ZeusBaseError)
    if domain == "general":
        assert isinstance(error, BUILTIN[code]), f"{expected.__name__} is not a {BUILTIN[code].__name__}"
    else:
        # A family's class is at least a RuntimeError, ValueError or OSError, as Zeus's are.
        assert isinstance(error, (RuntimeError, ValueError, OSError))
    assert error.message == "the message names the problem"
    assert str(error) == "the message names the problem"
    assert error.code == code


def test_the_table_has_no_row_this_test_does_not_know() -> None:
    for domain, code, name in _native.errors.table():
        assert EXPECTED[domain][code].__name__ == name, (domain, code)


def test_families() -> None:
    for cls in (zx.ZeusGPUInitError, zx.ZeusGPUNoPermissionError, zx.ZeusGPUHeterogeneousError):
        assert issubclass(cls, zx.ZeusBaseGPUError)
    for cls in (zx.ZeusCPUInitError, zx.ZeusCPUNoPermissionError, zx.ZeusCPUNotFoundError,
                zx.ZeusRAPLNotSupportedError, zx.ZeusRAPLFileInitError):
        assert issubclass(cls, zx.ZeusBaseCPUError)
    for cls in (zx.ZeusSoCInitError, zx.ZeusJetsonInitError, zx.ZeusAppleInitError, zx.ZeusSoCIOError):
        assert issubclass(cls, zx.ZeusBaseSoCError)
    assert issubclass(zx.ZeusJetsonInitError, zx.ZeusSoCInitError)
    assert issubclass(zx.ZeusAppleInitError, zx.ZeusSoCInitError)
    for name in ("AlreadyInitialized", "InsufficientSize", "InsufficientPower", "DriverNotLoaded", "IRQ",
                 "LibraryNotFound", "FunctionNotFound", "CorruptedInfoROM", "ResetRequired", "OperatingSystem",
                 "LibRMVersionMismatch", "Memory"):
        cls = getattr(zx, f"ZeusGPU{name}Error")
        assert issubclass(cls, zx.ZeusBaseGPUError) and issubclass(cls, (RuntimeError, ValueError)), name
    for cls in (zx.ZeusBSOConfigError, zx.ZeusBSORuntimError, zx.ZeusBSOBadOperationError,
                zx.ZeusBSOOperationOrderError, zx.ZeusBSOTrainFailError):
        assert issubclass(cls, zx.ZeusBSOClientBaseError)


def test_unknown_domain_or_code_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown error domain 'disk'"):
        _native.errors.exception_for("disk", "INTERNAL")
    with pytest.raises(ValueError, match="unknown error code 'OOPS'"):
        _native.errors.exception_for("gpu", "OOPS")
