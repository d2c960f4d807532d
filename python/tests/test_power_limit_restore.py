"""The original power limit is put back when training ends badly: an uncaught exception, SIGTERM, SIGINT. The
training runs in a subprocess; the limit is read by another process (``zeus info --json``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import PYTHON, PYTHON_DIR, ZEUS_BINARY
from test_power_limit_helpers import EXACT, ORIGINAL_LIMIT_W, gpu, limits_from_another_process

TESTS_DIR = Path(__file__).resolve().parent

# Trains until the 250 W window opens, then raises or waits for a signal (after saying "ready").
SCRIPT = """
import sys, time, warnings
from test_power_limit_helpers import Emulator
from zeus.monitor import ZeusMonitor
from zeus.optimizer.power_limit import Energy, GlobalPowerLimitOptimizer, Profiling

warnings.simplefilter("ignore")
monitor = ZeusMonitor(gpu_indices=[0])
emu = Emulator()
plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), wait_steps=1, warmup_steps=1,
                                profile_steps=2, pl_step=50)
for step in range(100):
    plo.on_step_begin()
    if plo.state == Profiling(current_power_limit=250_000, steps=2):
        if sys.argv[1] == "raise":
            raise RuntimeError("the user's training failed")
        print("ready", flush=True)
        while True:
            time.sleep(0.05)
    emu.step()
print("never profiled 250 W", flush=True)
"""


def child_env() -> dict[str, str]:
    env = dict(os.environ)  # with the emulator fixture's variables
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), str(TESTS_DIR)])
    return env


def start(mode: str) -> subprocess.Popen:
    return subprocess.Popen([PYTHON, "-c", SCRIPT, mode], env=child_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for_ready(proc: subprocess.Popen, deadline_s: float = 60) -> None:
    """Reads the child's stdout until "ready" (its readiness signal); kills it after the deadline."""
    timer = threading.Timer(deadline_s, proc.kill)
    timer.start()
    try:
        line = proc.stdout.readline()
    finally:
        timer.cancel()
    if line.strip() != "ready":
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the training child did not get ready (stdout {line!r}); stderr:\n{err}")


def test_an_uncaught_exception_restores_the_original_limit(emulator):
    emulator([gpu()], **EXACT)
    proc = start("raise")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert "the user's training failed" in err
    assert limits_from_another_process(ZEUS_BINARY) == [ORIGINAL_LIMIT_W]


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_restores_the_original_limit(emulator, signo):
    emulator([gpu()], **EXACT)
    proc = start("wait")
    wait_for_ready(proc)
    assert limits_from_another_process(ZEUS_BINARY) == [250]  # profiling really changed it
    proc.send_signal(signo)
    _, err = proc.communicate(timeout=60)
    # The signal then does what it does without Zeus: SIGTERM ends the process, SIGINT is a KeyboardInterrupt
    # (Python ends an uncaught one by SIGINT too).
    assert proc.returncode == -signo, err
    if signo == signal.SIGINT:
        assert "KeyboardInterrupt" in err
    assert limits_from_another_process(ZEUS_BINARY) == [ORIGINAL_LIMIT_W]
    assert "original power limits restored" in err


FORK_SCRIPT = """
import gc, os, sys, warnings
from test_power_limit_helpers import Emulator
from zeus.monitor import ZeusMonitor
from zeus.optimizer.power_limit import Energy, GlobalPowerLimitOptimizer, Warmup

warnings.simplefilter("ignore")
monitor = ZeusMonitor(gpu_indices=[0])
emu = Emulator()
plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), wait_steps=0, warmup_steps=5,
                                profile_steps=2, pl_step=50)
plo.on_step_begin()  # 300 W, warmup
assert emu.power_limit_w(0) == 300
pid = os.fork()
if pid == 0:
    # A forked child (a data-loader worker): it may not drive the optimizer, and ending it (collection,
    # interpreter exit) must not touch the parent's limits.
    try:
        plo.on_step_begin()
        print("child: on_step_begin did not raise", flush=True)
    except RuntimeError as e:
        print(f"child: RuntimeError: {e}", flush=True)
    del plo
    gc.collect()
    sys.exit(0)
_, status = os.waitpid(pid, 0)
print(f"child exit {os.waitstatus_to_exitcode(status)}", flush=True)
print(f"after child {emu.power_limit_w(0)}", flush=True)
plo.on_step_begin()
print(f"parent state {plo.state}", flush=True)
plo.on_train_end()
print(f"after train end {emu.power_limit_w(0)}", flush=True)
"""


def test_a_forked_child_cannot_drive_the_optimizer_and_leaves_the_limits_alone(emulator):
    emulator([gpu()], **EXACT)
    proc = subprocess.run([PYTHON, "-c", FORK_SCRIPT], env=child_env(), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("child: RuntimeError:") for line in lines), proc.stdout + proc.stderr
    assert "child exit 0" in lines
    assert "after child 300.0" in lines  # the child's exit did not restore the parent's limit
    assert "parent state Warmup(current_power_limit=300000, steps=4)" in lines
    assert "after train end 200.0" in lines
