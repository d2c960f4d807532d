"""Helpers of the power-limit optimizer's tests (no tests here): the emulated workload, a training step on the
emulator's manual clock, and reading a GPU's limit directly through the emulator's NVML.

Every step advances the emulator's manual clock by the iteration time of the workload curve at the limit in
force, so energies and times of profiling windows are exact: ``steps x power(limit) x iteration_time(limit)``.
Also imported by the subprocess scripts of the tests (sys.path gets this folder).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
from pathlib import Path
from typing import Any

# One A40 (100-300 W) whose original limit is 200 W (not the maximum). Profiling with pl_step=50 measures
# 300, 250, 200, 150, 100 W. Per training step at each limit (W -> power W, iteration s, energy J):
#   300 -> 240, 0.98, 235.2    250 -> 220, 1.0, 220    200 -> 190, 1.1, 209    150 -> 150, 1.4, 210
#   100 -> 100, 2.0, 200
WORKLOAD = {
    "power_limits_w": [100, 150, 200, 250, 300],
    "power_w": [100, 150, 190, 220, 240],
    "iteration_time_s": [2.0, 1.4, 1.1, 1.0, 0.98],
}
ORIGINAL_LIMIT_W = 200

# Exact scenario: manual clock, counters that move continuously, limits that apply at once.
EXACT = {"clock": "manual", "counter_update_period_ms": 0, "power_settle_ms": 0}


def gpu(workload: dict[str, list[float]] = WORKLOAD, power_limit_w: int = ORIGINAL_LIMIT_W) -> dict[str, Any]:
    return {
        "name": "NVIDIA A40",
        "architecture": "ampere",
        "min_power_limit_w": 100,
        "max_power_limit_w": 300,
        "default_power_limit_w": 300,
        "power_limit_w": power_limit_w,
        "energy_counter": True,
        "workload": workload,
    }


class Emulator:
    """The emulator library this process loaded as NVML (same handle: dlopen of the same path)."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL(os.environ["ZEUS_NVML_LIBRARY"])
        self.lib.zeusEmulatorAdvanceTimeNs.argtypes = [ctypes.c_ulonglong]
        self.lib.zeusEmulatorIterationTimeS.argtypes = [ctypes.c_uint, ctypes.POINTER(ctypes.c_double)]
        # Keeps NVML initialised for our own reads (nvmlShutdown is counted).
        assert self.lib.nvmlInit_v2() == 0, self.lib.zeusEmulatorLastError

    def close(self) -> None:
        """Our nvmlShutdown: the scenario is dropped once every user in this process has shut down, so the next
        test's scenario is read."""
        self.lib.nvmlShutdown()

    def iteration_time_s(self, nvml_index: int) -> float:
        seconds = ctypes.c_double()
        rc = self.lib.zeusEmulatorIterationTimeS(nvml_index, ctypes.byref(seconds))
        assert rc == 0, f"zeusEmulatorIterationTimeS({nvml_index}) returned {rc}"
        return seconds.value

    def advance(self, seconds: float) -> None:
        rc = self.lib.zeusEmulatorAdvanceTimeNs(round(seconds * 1e9))
        assert rc == 0, f"zeusEmulatorAdvanceTimeNs returned {rc}"

    def power_limit_w(self, nvml_index: int) -> float:
        handle = ctypes.c_void_p()
        assert self.lib.nvmlDeviceGetHandleByIndex_v2(nvml_index, ctypes.byref(handle)) == 0
        limit_mw = ctypes.c_uint()
        assert self.lib.nvmlDeviceGetPowerManagementLimit(handle, ctypes.byref(limit_mw)) == 0
        return limit_mw.value / 1000

    def step(self, nvml_index: int = 0) -> None:
        """One training step's GPU work: the iteration time at the limit in force."""
        self.advance(self.iteration_time_s(nvml_index))


def train(optimizer: Any, emulator: Emulator, epochs: int, steps_per_epoch: int, work: Any = None) -> list[Any]:
    """A training loop with Zeus's hooks; ``work()`` (if given) runs in each step. Returns the state after
    each step."""
    states = []
    optimizer.on_train_begin()
    for _ in range(epochs):
        optimizer.on_epoch_begin()
        for _ in range(steps_per_epoch):
            optimizer.on_step_begin()
            if work is not None:
                work()
            emulator.step()
            optimizer.on_step_end()
            states.append(optimizer.state)
        optimizer.on_epoch_end()
    optimizer.on_train_end()
    return states


def limits_from_another_process(zeus_binary: Path) -> list[float]:
    """Every emulated GPU's power limit (W), read by ``zeus info --json`` in a separate process."""
    out = subprocess.run([str(zeus_binary), "info", "--json"], check=True, capture_output=True, text=True, timeout=60)
    return [g["power_limit_w"] for g in json.loads(out.stdout)["gpus"]]
