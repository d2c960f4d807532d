"""Helpers shared by the zeus.monitor tests (no tests here): the NVML emulator's manual clock, driven
through its exported control functions (emulator/emulator_control.h) with ctypes, and the figures the
emulated GPUs must produce, computed by hand from the scenario."""

from __future__ import annotations

import ctypes
import gc
from typing import Any

import pytest

from conftest import A40_WORKLOAD, EMULATOR_LIBRARY, a40
from zeus.device import reset_devices


@pytest.fixture(autouse=True)
def close_devices_after_test():
    """Closes every device a test left open (import this name into a test module to use it).

    The emulator is process-wide: while any GpuSet is open (a ZeusMonitor kept alive by a traceback's
    reference cycle, the get_gpus() cache), NVML stays initialised and the next test's nvmlInit keeps
    the old scenario instead of loading its own."""
    yield
    reset_devices()
    gc.collect()


class EmulatorControl:
    """The emulator library this process loaded as NVML (the same handle: dlopen of one path)."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL(str(EMULATOR_LIBRARY))
        self.lib.zeusEmulatorAdvanceTimeNs.argtypes = [ctypes.c_ulonglong]
        self.lib.zeusEmulatorNowNs.argtypes = [ctypes.POINTER(ctypes.c_ulonglong)]

    def advance(self, seconds: float) -> None:
        """Moves the manual clock forward (the emulator must be initialised: a ZeusMonitor is open)."""
        rc = self.lib.zeusEmulatorAdvanceTimeNs(ctypes.c_ulonglong(round(seconds * 1e9)))
        assert rc == 0, f"zeusEmulatorAdvanceTimeNs failed with {rc}"

    def hung_calls(self) -> int:
        self.lib.zeusEmulatorHungCalls.restype = ctypes.c_ulonglong
        return self.lib.zeusEmulatorHungCalls()

    def release_hung_calls(self) -> None:
        assert self.lib.zeusEmulatorReleaseHungCalls() == 0

    def now(self) -> float:
        ns = ctypes.c_ulonglong(0)
        assert self.lib.zeusEmulatorNowNs(ctypes.byref(ns)) == 0
        return ns.value / 1e9


# The A40 workload curve at its 300 W default limit draws 236 W (conftest.A40_WORKLOAD).
A40_POWER_AT_300_W = 236.0
assert A40_WORKLOAD["power_w"][-1] == A40_POWER_AT_300_W


def a40_busy(**overrides: Any) -> dict[str, Any]:
    """An A40 running the A40 workload at its default limit: 236 W, counter updated continuously."""
    gpu = a40(workload=A40_WORKLOAD, counter_update_period_ms=0, power_update_period_ms=10)
    gpu.update(overrides)
    return gpu
