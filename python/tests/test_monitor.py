"""zeus.monitor.ZeusMonitor and Measurement on emulated GPUs.

Expected figures are computed by hand from the scenario: a GPU whose workload draws P watts for T
seconds of emulated time used P x T joules. The manual clock makes T exact."""

from __future__ import annotations

import csv
import faulthandler
import threading
import time
import warnings

import pytest

from conftest import a40
from test_monitor_helpers import A40_POWER_AT_300_W, EmulatorControl, a40_busy
from test_monitor_helpers import close_devices_after_test  # noqa: F401 (an autouse fixture)
from zeus.monitor import Measurement, ZeusMonitor


@pytest.fixture
def manual(emulator):
    """Two busy A40s (236 W) on the emulator's manual clock; returns the clock control."""
    emulator([a40_busy(), a40_busy(power_limit_w=200)], clock="manual")
    return EmulatorControl()


def test_window_energy_is_power_times_time(manual) -> None:
    monitor = ZeusMonitor(sync_execution_with="torch")
    assert monitor.gpu_indices == [0, 1]
    monitor.begin_window("w")
    manual.advance(2.0)
    m = monitor.end_window("w")
    assert isinstance(m, Measurement)
    assert m.time == pytest.approx(2.0, abs=1e-9)
    # GPU 0 at 300 W draws 236 W; GPU 1 at 200 W draws the curve's 190 W.
    assert m.gpu_energy[0] == pytest.approx(236.0 * 2.0, abs=0.002)
    assert m.gpu_energy[1] == pytest.approx(190.0 * 2.0, abs=0.002)
    assert m.total_energy == pytest.approx(236.0 * 2.0 + 190.0 * 2.0, abs=0.004)
    assert m.cpu_energy is None or isinstance(m.cpu_energy, dict)


def test_gpu_indices_select_gpus(manual) -> None:
    monitor = ZeusMonitor(gpu_indices=[1], cpu_indices=[])
    monitor.begin_window("w")
    manual.advance(1.0)
    m = monitor.end_window("w")
    assert list(m.gpu_energy) == [1]
    assert m.gpu_energy[1] == pytest.approx(190.0, abs=0.002)
    assert m.cpu_energy is None and m.dram_energy is None


def test_overlapping_and_nested_windows(manual) -> None:
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[])
    monitor.begin_window("outer")
    manual.advance(1.0)
    monitor.begin_window("inner")
    manual.advance(0.5)
    monitor.begin_window("overlap")
    manual.advance(0.5)
    inner = monitor.end_window("inner")
    manual.advance(1.0)
    overlap = monitor.end_window("overlap")
    outer = monitor.end_window("outer")
    assert (inner.time, overlap.time, outer.time) == pytest.approx((1.0, 1.5, 3.0), abs=1e-9)
    assert inner.gpu_energy[0] == pytest.approx(A40_POWER_AT_300_W * 1.0, abs=0.002)
    assert overlap.gpu_energy[0] == pytest.approx(A40_POWER_AT_300_W * 1.5, abs=0.002)
    assert outer.gpu_energy[0] == pytest.approx(A40_POWER_AT_300_W * 3.0, abs=0.002)


def test_duplicate_and_unknown_windows_raise_zeus_messages(manual) -> None:
    monitor = ZeusMonitor(cpu_indices=[])
    monitor.begin_window("step")
    with pytest.raises(ValueError) as e:
        monitor.begin_window("step")
    assert str(e.value) == "Measurement window 'step' already exists"
    with pytest.raises(ValueError) as e:
        monitor.end_window("nope")
    assert str(e.value) == "Measurement window 'nope' does not exist"
    monitor.end_window("step")
    with pytest.raises(ValueError, match="Measurement window 'step' does not exist"):
        monitor.end_window("step")


def test_restart_begins_the_window_again(manual) -> None:
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[])
    monitor.begin_window("w")
    manual.advance(5.0)
    monitor.begin_window("w", restart=True)
    manual.advance(1.0)
    m = monitor.end_window("w")
    assert m.time == pytest.approx(1.0, abs=1e-9)
    assert m.gpu_energy[0] == pytest.approx(A40_POWER_AT_300_W, abs=0.002)


def test_cancel_returns_zeros_and_is_not_logged(manual, tmp_path) -> None:
    log = tmp_path / "sub" / "log.csv"
    monitor = ZeusMonitor(cpu_indices=[], log_file=log)
    monitor.begin_window("w")
    manual.advance(1.0)
    m = monitor.end_window("w", cancel=True)
    assert m == Measurement(time=0.0, gpu_energy={0: 0.0, 1: 0.0}, cpu_energy=None, dram_energy=None)
    assert log.read_text() == "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy\n"
    with pytest.raises(ValueError):
        monitor.end_window("w")


def test_reset_windows_drops_every_open_window(manual) -> None:
    monitor = ZeusMonitor(cpu_indices=[])
    monitor.begin_window("a")
    monitor.begin_window("b")
    monitor.reset_windows()
    for key in ("a", "b"):
        with pytest.raises(ValueError, match=f"Measurement window '{key}' does not exist"):
            monitor.end_window(key)
    monitor.begin_window("a")  # may be begun again


def test_log_file_rows(manual, tmp_path) -> None:
    log = tmp_path / "nested" / "dir" / "log.csv"
    log.parent.mkdir(parents=True)
    log.write_text("old content\n")  # truncated, as in Zeus
    monitor = ZeusMonitor(gpu_indices=[1, 0], cpu_indices=[], log_file=str(log))
    monitor.begin_window("first")
    manual.advance(1.0)
    monitor.end_window("first")
    monitor.begin_window("a,b")
    manual.advance(2.0)
    monitor.end_window("a,b")
    rows = list(csv.reader(log.open()))
    assert rows[0] == ["start_time", "window_name", "elapsed_time", "gpu1_energy", "gpu0_energy"]
    assert [r[1] for r in rows[1:]] == ["first", "a,b"]
    assert float(rows[1][2]) == pytest.approx(1.0, abs=1e-9)
    assert float(rows[1][3]) == pytest.approx(190.0, abs=0.002)
    assert float(rows[1][4]) == pytest.approx(236.0, abs=0.002)
    assert float(rows[2][2]) == pytest.approx(2.0, abs=1e-9)
    assert float(rows[2][0]) > 1.6e9  # wall-clock start time (Unix seconds), as Zeus writes it


def test_no_driver_means_no_gpus(monkeypatch) -> None:
    monkeypatch.delenv("ZEUS_NVML_LIBRARY", raising=False)
    monitor = ZeusMonitor(cpu_indices=[])
    assert monitor.gpu_indices == []
    monitor.begin_window("w")
    m = monitor.end_window("w")
    assert m.gpu_energy == {} and m.total_energy == 0.0 and m.time >= 0.0


def test_unknown_gpu_index_is_a_value_error(manual) -> None:
    with pytest.raises(ValueError, match="GPU 2 does not exist"):
        ZeusMonitor(gpu_indices=[2])


def test_native_monitor_is_reachable(manual) -> None:
    from zeus import _native

    monitor = ZeusMonitor(cpu_indices=[])
    assert isinstance(monitor._native, _native.monitor.Monitor)
    assert monitor._native.gpu_indices == [0, 1]


def test_readings_are_on_the_emulator_clock(manual) -> None:
    monitor = ZeusMonitor(cpu_indices=[])
    assert monitor._native.emulated_clock
    assert monitor._native.now() == pytest.approx(manual.now(), abs=1e-9)
    manual.advance(1.5)
    assert monitor._native.now() == pytest.approx(manual.now(), abs=1e-9)


def test_short_window_warns_or_approximates(emulator) -> None:
    # The counter advances every 100 ms; a 50 ms window sees it stand still.
    emulator([a40_busy(counter_update_period_ms=100)], clock="manual")
    clock = EmulatorControl()
    plain = ZeusMonitor(cpu_indices=[])
    approx = ZeusMonitor(cpu_indices=[], approx_instant_energy=True)
    clock.advance(0.01)  # away from an update instant
    plain.begin_window("w", sync_execution=False)
    approx.begin_window("w", sync_execution=False)
    clock.advance(0.05)
    with pytest.warns(UserWarning, match="approx_instant_energy=True"):
        m = plain.end_window("w", sync_execution=False)
    assert m.gpu_energy == {0: 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = approx.end_window("w", sync_execution=False)
    assert a.gpu_energy[0] == pytest.approx(A40_POWER_AT_300_W * 0.05, rel=1e-6)


def test_gpu_without_energy_counter_integrates_power(emulator) -> None:
    emulator([a40(power_w=80, energy_counter=False, power_update_period_ms=10)], clock="manual")
    clock = EmulatorControl()
    monitor = ZeusMonitor(cpu_indices=[])
    monitor.begin_window("w", sync_execution=False)
    clock.advance(2.0)
    m = monitor.end_window("w", sync_execution=False)
    assert m.gpu_energy[0] == pytest.approx(80.0 * 2.0, rel=1e-6)


def test_sync_runs_before_native_reads(manual, monkeypatch) -> None:
    import zeus.monitor.energy as energy

    calls = []
    monkeypatch.setattr(energy, "_sync_execution", lambda gpus, sync_with: calls.append((list(gpus), sync_with)))
    monitor = ZeusMonitor(gpu_indices=[1], cpu_indices=[], sync_execution_with="cupy")
    monitor.begin_window("w")
    monitor.end_window("w")
    monitor.begin_window("x", sync_execution=False)
    monitor.end_window("x", sync_execution=False)
    assert calls == [([1], "cupy"), ([1], "cupy")]


def test_missing_framework_is_a_runtime_error(manual) -> None:
    monitor = ZeusMonitor(cpu_indices=[], sync_execution_with="jax")
    try:
        import jax  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="jax"):
            monitor.begin_window("w")
    monitor.begin_window("w", sync_execution=False)  # works without the framework


def test_gil_is_released_while_a_gpu_read_hangs(emulator) -> None:
    # Energy-counter reads: 1 when the monitor probes the counter, 2 and 3 for window "a"; the 4th
    # (window "b", begun in another thread) hangs in the driver until released.
    emulator([a40_busy()], clock="manual",
             faults=[{"function": "nvmlDeviceGetTotalEnergyConsumption", "hang": True, "after_calls": 3}])
    clock = EmulatorControl()
    monitor = ZeusMonitor(cpu_indices=[])
    # Were the GIL held during the hung read, this thread could not run at all: end the process with
    # the stacks after a generous deadline rather than hang the suite.
    faulthandler.dump_traceback_later(120, exit=True)
    monitor.begin_window("a", sync_execution=False)
    clock.advance(1.0)
    monitor.end_window("a", sync_execution=False)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (monitor.begin_window("b", sync_execution=False), done.set()))
    worker.start()
    deadline = time.monotonic() + 60
    while clock.hung_calls() == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert clock.hung_calls() == 1
    # The other thread is blocked in the driver (hung_calls() == 1) while this one ran the Python loop above:
    # begin_window released the GIL. Had it kept it, this thread could not have run, and faulthandler would end
    # the run after 120 s (a failure).
    assert not done.is_set()
    clock.release_hung_calls()
    worker.join(timeout=60)
    faulthandler.cancel_dump_traceback_later()
    assert done.is_set()
    monitor.end_window("b", sync_execution=False)


def test_opening_the_gpus_runs_no_counter_check(emulator, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 37: ZeusMonitor() waits for no counter check (zeus info, zeusd and the exporter run it, see
    docs/architecture.md), so a counter at twice the rate is read as it is, with no warning."""
    import logging

    caplog.set_level(logging.WARNING, logger="zeus")
    emulator([a40_busy(energy_counter_rate=2.0)], clock="wall", time_scale=1)
    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window("w")
    time.sleep(0.1)
    m = monitor.end_window("w")
    assert m.time > 0
    assert m.gpu_energy[0] == pytest.approx(2 * 236.0 * m.time, rel=0.05)
    assert not [r for r in caplog.records if r.name == "zeus.device"]
