"""ZeusMonitor and PowerMonitor across os.fork() and from several Python threads."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import pytest

from test_monitor_helpers import A40_POWER_AT_300_W, EmulatorControl, a40_busy
from test_monitor_helpers import close_devices_after_test  # noqa: F401 (an autouse fixture)
from zeus.monitor import PowerMonitor, ZeusMonitor


@pytest.fixture
def manual(emulator):
    emulator([a40_busy(), a40_busy()], clock="manual")
    return EmulatorControl()


def _in_child(body) -> str:
    """Forks; the child runs ``body()`` and reports its result (or exception) through a pipe, then exits
    without running the parent's cleanup. Returns what the child reported."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_fd)
        try:
            message = f"ok {body()}"
        except BaseException as e:  # noqa: BLE001 (reported to the parent)
            message = f"{type(e).__name__}: {e}"
        os.write(write_fd, message.encode())
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        reported = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    return reported


def test_forked_child_cannot_use_the_parents_objects(manual) -> None:
    monitor = ZeusMonitor(cpu_indices=[])
    pm = PowerMonitor(update_period=0.1)
    try:
        monitor.begin_window("parent", sync_execution=False)
        reported = _in_child(lambda: monitor.end_window("parent", sync_execution=False))
        assert reported.startswith("RuntimeError: this ZeusMonitor was created before os.fork()"), reported
        reported = _in_child(lambda: monitor.begin_window("child", sync_execution=False))
        assert reported.startswith("RuntimeError: this ZeusMonitor"), reported
        reported = _in_child(lambda: pm.get_power())
        assert reported.startswith("RuntimeError: this PowerMonitor was created before os.fork()"), reported
        # A new monitor in the child works.
        reported = _in_child(lambda: list(ZeusMonitor(cpu_indices=[]).gpu_indices))
        assert reported == "ok [0, 1]"
        # The parent is unaffected.
        manual.advance(1.0)
        m = monitor.end_window("parent", sync_execution=False)
        assert m.gpu_energy[0] == pytest.approx(A40_POWER_AT_300_W, abs=0.002)
        assert pm.get_power() == {0: A40_POWER_AT_300_W, 1: A40_POWER_AT_300_W}
    finally:
        pm.stop()


def test_forked_child_exits_normally_with_inherited_samplers(emulator, subprocess_env) -> None:
    # The child ends through normal interpreter shutdown (not os._exit): the inherited objects must not
    # try to join the parent's sampler threads.
    emulator([a40_busy()])
    script = textwrap.dedent(
        """
        import os, sys
        from zeus.monitor import PowerMonitor, ZeusMonitor
        pm = PowerMonitor(update_period=0.01)
        monitor = ZeusMonitor(cpu_indices=[])
        monitor.begin_window("w", sync_execution=False)
        pid = os.fork()
        if pid == 0:
            del pm, monitor
            sys.exit(7)
        _, status = os.waitpid(pid, 0)
        monitor.end_window("w", sync_execution=False)
        pm.stop()
        print("child", os.waitstatus_to_exitcode(status))
        """
    )
    env = {**os.environ, "PYTHONPATH": subprocess_env["PYTHONPATH"]}  # with the emulator's variables
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "child 7"


@pytest.mark.filterwarnings("ignore:Window .* was too short")  # windows of zero emulated time
def test_windows_from_many_threads(manual) -> None:
    monitor = ZeusMonitor(cpu_indices=[])
    errors: list[BaseException] = []
    results: dict[int, list] = {}
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        try:
            barrier.wait()
            out = []
            for k in range(200):
                key = f"t{n}-{k}"
                monitor.begin_window(key, sync_execution=False)
                monitor.begin_window("shared", sync_execution=False, restart=True)
                out.append(monitor.end_window(key, sync_execution=False))
            results[n] = out
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    advancer_stop = threading.Event()

    def advancer() -> None:
        while not advancer_stop.is_set():
            manual.advance(0.01)

    clock_thread = threading.Thread(target=advancer)
    clock_thread.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    advancer_stop.set()
    clock_thread.join(timeout=60)
    assert not errors, errors
    assert sorted(results) == list(range(8))
    # Energy and time are on the emulator's clock: P x T. A window's duration encloses the interval its counters
    # measured (the clock is read before the counters at the begin and after them at the end), so no window may
    # read more than P x T. It may read less when the advancer moves the clock between the clock read and the
    # counter read; the advancer runs freely while the workers are in native code, so that gap is usually at most
    # one step (10 ms) at each end, but a descheduled worker can see more: allow that in 1% of the windows.
    stretched = 0
    for out in results.values():
        assert len(out) == 200
        for m in out:
            energy, drawn = m.gpu_energy[0], A40_POWER_AT_300_W * m.time
            assert 0 <= energy <= drawn + 0.002, (energy, m.time)
            if energy < drawn - (2 * A40_POWER_AT_300_W * 0.01 + 0.002):
                stretched += 1
    assert stretched <= 16, f"{stretched} of 1600 windows read more than one clock step short"
    monitor.end_window("shared", sync_execution=False)
