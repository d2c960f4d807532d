"""Helpers shared by the zeus.monitor tests (no tests here): the NVML emulator's manual clock, driven
through its exported control functions (emulator/emulator_control.h) with ctypes, and the figures the
emulated GPUs must produce, computed by hand from the scenario."""

from __future__ import annotations

import ctypes
from typing import Any

from conftest import A40_WORKLOAD, EMULATOR_LIBRARY, a40


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
