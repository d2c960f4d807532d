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
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

SOURCE_DIR = Path(os.environ.get("ZEUS_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("ZEUS_BUILD_DIR", SOURCE_DIR / "build"))
EMULATOR_LIBRARY = BUILD_DIR / "lib" / "libzeus-nvml-emulator.so"
ZEUS_BINARY = BUILD_DIR / "bin" / "zeus"
ZEUSD_BINARY = BUILD_DIR / "bin" / "zeusd"
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


def zeusd_accepts(path: Path) -> bool:
    """Whether a daemon listens on the Unix socket ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(path))
            return True
        except OSError:
            return False


def write_scenario(directory: Path, gpus: list[dict[str, Any]], **top_level: Any) -> Path:
    """Writes an emulator scenario with its own state file in ``directory`` (for a daemon: another process, so
    this process's emulator stays untouched) and returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    scenario = {"driver_version": "550.54.15", "state_file": str(directory / "emulator-state"), "gpus": gpus}
    scenario.update(top_level)
    path = directory / "scenario.json"
    path.write_text(json.dumps(scenario, indent=2))
    return path


def start_zeusd(directory: Path, scenario: Path, *extra: str, socket_name: str = "zeusd.sock",
                enable: str = "gpu-control,gpu-read") -> subprocess.Popen:
    """Starts build/bin/zeusd on the emulator (``scenario``) on the Unix socket ``directory/socket_name``
    (stderr in ``<socket>.err``); returns once the socket accepts (60 s deadline). Needs root for gpu-control
    and cpu-read. The caller terminates it."""
    sock = directory / socket_name
    err = directory / (socket_name + ".err")
    env = dict(os.environ, ZEUS_EMULATOR_CONFIG=str(scenario))
    for name in ("ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT", "ZEUSD_TOKEN"):
        env.pop(name, None)
    proc = subprocess.Popen(
        [str(ZEUSD_BINARY), "serve", "--mode", "uds", "--socket-path", str(sock), "--socket-permissions", "666",
         "--nvml-library", str(EMULATOR_LIBRARY), "--enable", enable, *extra],
        env=env, stderr=open(err, "w"))
    deadline = time.monotonic() + 60
    while not zeusd_accepts(sock):
        assert proc.poll() is None, err.read_text()
        assert time.monotonic() < deadline, "zeusd did not listen within 60 s"
        time.sleep(0.01)
    return proc


def stop_zeusd(proc: subprocess.Popen) -> None:
    """Terminates a daemon started by start_zeusd and waits for it."""
    proc.terminate()
    proc.wait(timeout=60)
