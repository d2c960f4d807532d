"""Shared fixtures of the zeus package's tests: emulated GPUs and the build tree.

Run through ctest (``PythonPackage.Pytest``), which sets ``PYTHONPATH`` to the
built package and ``ZEUS_BUILD_DIR``; by hand::

    PYTHONPATH=build/python ZEUS_BUILD_DIR=build /usr/bin/python3 -m pytest python/tests
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

SOURCE_DIR = Path(os.environ.get("ZEUS_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("ZEUS_BUILD_DIR", SOURCE_DIR / "build"))
EMULATOR_LIBRARY = BUILD_DIR / "lib" / "libzeus-nvml-emulator.so"
ZEUS_BINARY = BUILD_DIR / "bin" / "zeus"
PYTHON_DIR = BUILD_DIR / "python"

# A workload curve (an A40 shape) whose per-limit figures tests can compute by hand.
A40_WORKLOAD = {
    "power_limits_w": [100, 150, 200, 250, 300],
    "power_w": [99, 148, 190, 222, 236],
    "iteration_time_s": [0.92, 0.61, 0.48, 0.43, 0.42],
}


def a40(**overrides: Any) -> dict[str, Any]:
    """One emulated NVIDIA A40 (100-300 W, energy counter), with overrides."""
    gpu: dict[str, Any] = {
        "name": "NVIDIA A40",
        "architecture": "ampere",
        "min_power_limit_w": 100,
        "max_power_limit_w": 300,
        "default_power_limit_w": 300,
        "energy_counter": True,
    }
    gpu.update(overrides)
    return gpu


def _close_devices() -> None:
    """Drops the devices zeus.device cached and collects garbage, so that no GpuSet outlives its test."""
    try:
        from zeus.device import reset_devices
    except ImportError:
        pass
    else:
        reset_devices()
    gc.collect()


def _emulator_state_path() -> str:
    """The state file of the emulator initialised in this process, or "" when it is not initialised."""
    lib = ctypes.CDLL(str(EMULATOR_LIBRARY))
    lib.zeusEmulatorStatePath.restype = ctypes.c_char_p
    return (lib.zeusEmulatorStatePath() or b"").decode()


@pytest.fixture(autouse=True)
def close_devices_after_every_test():
    """The emulator is process-wide: while any GpuSet is open, NVML stays initialised and the next test's
    nvmlInit keeps the old scenario. Every test ends by closing what it left open."""
    yield
    _close_devices()


@pytest.fixture
def emulator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Returns ``make(gpus, **top_level)``: writes a scenario (with its own state file, so tests never share
    emulated state), points ``ZEUS_NVML_LIBRARY`` and ``ZEUS_EMULATOR_CONFIG`` at it for this test, and returns
    the scenario's path. Subprocesses started by the test inherit both variables."""
    assert EMULATOR_LIBRARY.exists(), f"{EMULATOR_LIBRARY} is missing: build the project first (make)"

    def make(gpus: list[dict[str, Any]], **top_level: Any) -> Path:
        _close_devices()
        stale = _emulator_state_path()
        if stale:
            pytest.fail(f"the NVML emulator is still initialised with an earlier scenario (state file {stale}): "
                        "an object holding GPUs outlived its test, and this test's scenario would be ignored")
        scenario = {"driver_version": "550.54.15", "state_file": str(tmp_path / "emulator-state"), "gpus": gpus}
        scenario.update(top_level)
        path = tmp_path / "scenario.json"
        path.write_text(json.dumps(scenario, indent=2))
        monkeypatch.setenv("ZEUS_NVML_LIBRARY", str(EMULATOR_LIBRARY))
        monkeypatch.setenv("ZEUS_EMULATOR_CONFIG", str(path))
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        return path

    return make


@pytest.fixture
def subprocess_env() -> dict[str, str]:
    """The environment for a Python subprocess that imports the built package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PYTHON_DIR) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


PYTHON = sys.executable
