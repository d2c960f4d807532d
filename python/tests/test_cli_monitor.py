"""The CLIs: ``python -m zeus.monitor energy|power`` and ``python -m zeus.show_env``, run as processes on
emulated GPUs. The emulator's manual clock is shared through its state file, so this test moves time
for the CLI process and knows the exact figures: 236 W (GPU 0) and 190 W (GPU 1) x the time passed."""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import time

import pytest
import zeus

from test_monitor_helpers import EmulatorControl, a40_busy
from test_monitor_helpers import close_devices_after_test  # noqa: F401 (an autouse fixture)
from zeus.monitor import ZeusMonitor


@pytest.fixture
def manual(emulator):
    emulator([a40_busy(), a40_busy(power_limit_w=200)], clock="manual")
    keep = ZeusMonitor(cpu_indices=[])  # loads the emulator in this process, so its clock can be moved
    yield EmulatorControl()
    del keep


def _env(subprocess_env: dict[str, str]) -> dict[str, str]:
    # The emulator's variables are set by the fixture after subprocess_env was built.
    return {**os.environ, "PYTHONPATH": subprocess_env["PYTHONPATH"]}


def _wait_for_line(stream, pattern: str, deadline_s: float = 60.0) -> str:
    """Reads lines of ``stream`` until one matches ``pattern`` (a readiness signal); fails at the deadline."""
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    end = time.monotonic() + deadline_s
    seen = []
    while time.monotonic() < end:
        if selector.select(timeout=max(0.0, end - time.monotonic())):
            line = stream.readline()
            if not line:
                break
            seen.append(line)
            if re.search(pattern, line):
                return line
    raise AssertionError(f"no line matching {pattern!r} within {deadline_s} s; got {seen}")


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)


def test_energy_cli(manual, subprocess_env) -> None:
    proc = _start(["zeus.monitor", "energy", "--gpu-indices", "0", "1"], _env(subprocess_env))
    try:
        _wait_for_line(proc.stderr, r"measuring GPUs \[0, 1\]")
        manual.advance(3.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "Measurement(time=3.0, gpu_energy={0: 708.0, 1: 570.0}" in out
    assert "Total time: 3.000 s, total GPU energy: 1278.000 J" in out


def test_power_cli(manual, subprocess_env) -> None:
    proc = _start(["zeus.monitor", "power", "--gpu-indices", "1", "--update-period", "0.05"], _env(subprocess_env))
    try:
        _wait_for_line(proc.stderr, r"sampling GPUs \[1\]")
        _wait_for_line(proc.stdout, r"\{'GPU1': 190\.0\}")
        manual.advance(2.0)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "Total time (s): 2.000" in out
    assert "Total energy (J): {1: 380.0}" in out


def test_power_cli_rejects_bad_period(manual, subprocess_env) -> None:
    done = subprocess.run([sys.executable, "-m", "zeus.monitor", "power", "--update-period", "0"],
                          env=_env(subprocess_env), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--update-period must be positive" in done.stderr


def test_show_env_with_gpus(manual, subprocess_env) -> None:
    done = subprocess.run([sys.executable, "-m", "zeus.show_env"], env=_env(subprocess_env), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"Zeus: {zeus.__version__}" in done.stdout
    assert re.search(r"PyTorch: \d+\.\d+", done.stdout)
    assert "PyTorch with CUDA: not available" in done.stdout
    assert "NVML GPU 0 -> Zeus GPU 0 (NVIDIA A40)" in done.stdout
    assert "NVML GPU 1 -> Zeus GPU 1 (NVIDIA A40)" in done.stdout
    assert "(NVML emulator)" in done.stdout


def test_show_env_without_driver(subprocess_env, tmp_path) -> None:
    env = {k: v for k, v in _env(subprocess_env).items() if k != "ZEUS_NVML_LIBRARY"}
    env["ZEUS_POWERCAP_ROOT"] = str(tmp_path)  # no RAPL either
    done = subprocess.run([sys.executable, "-m", "zeus.show_env"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "No GPUs: no NVIDIA driver found" in done.stdout
    assert "No CPUs: no RAPL CPU package found" in done.stdout
