"""zeus.monitor.PowerMonitor, PowerDomain and TemperatureMonitor on emulated GPUs.

On the manual clock nothing moves unless the test advances it, so the constructor's first sample
(236 W for a busy A40 at its 300 W default limit, 190 W at 200 W) holds over any interval and the
energies are exact: P x T."""

from __future__ import annotations

import time

import pytest

from conftest import a40
from test_monitor_helpers import EmulatorControl, a40_busy
from test_monitor_helpers import close_devices_after_test  # noqa: F401 (an autouse fixture)
from zeus.monitor import PowerDomain, PowerMonitor, TemperatureMonitor


@pytest.fixture
def manual(emulator):
    emulator([a40_busy(memory_power_w=30, temperature_c=55), a40_busy(power_limit_w=200, memory_power_w=30)],
             clock="manual")
    return EmulatorControl()


def test_power_domain_values_are_zeus_values() -> None:
    assert [d.value for d in PowerDomain] == ["device_instant", "device_average", "memory_average"]


def test_energy_is_power_times_time_on_the_samples_clock(manual) -> None:
    pm = PowerMonitor(update_period=0.1)
    try:
        assert pm.gpu_indices == [0, 1]
        assert set(pm.power_domains) == set(PowerDomain)
        start = pm.time()
        manual.advance(2.0)
        end = pm.time()
        assert end - start == pytest.approx(2.0, abs=1e-6)
        energy = pm.get_energy(start, end)
        assert energy[0] == pytest.approx(236.0 * 2.0, rel=1e-6)
        assert energy[1] == pytest.approx(190.0 * 2.0, rel=1e-6)
        assert pm.get_power() == {0: 236.0, 1: 190.0}
        assert pm.get_power(power_domain="memory_average") == {0: 30.0, 1: 30.0}
    finally:
        pm.stop()


def test_timelines(manual) -> None:
    pm = PowerMonitor(gpu_indices=[1], update_period=0.1)
    try:
        timeline = pm.get_power_timeline(PowerDomain.DEVICE_INSTANT)
        assert list(timeline) == [1]
        assert timeline[1] and all(w == 190.0 for _, w in timeline[1])
        assert pm.get_power_timeline("device_instant", gpu_index=0) == {}
        everything = pm.get_all_power_timelines()
        assert set(everything) == {"device_instant", "device_average", "memory_average"}
        t0 = timeline[1][0][0]
        assert pm.get_power_timeline("device_instant", start_time=t0 + 1.0) == {1: []}
        assert pm.get_power(time=t0 - 100.0) == {1: 190.0}
    finally:
        pm.stop()


def test_sampler_threads_fill_the_timeline(emulator) -> None:
    # Wall clock, 100x: the demand steps from 100 W to 200 W at 5 emulated seconds (0.05 s of real time).
    gpu = a40(power_schedule=[{"at_s": 0, "power_w": 100}, {"at_s": 5, "power_w": 200}],
              power_update_period_ms=10, counter_update_period_ms=0)
    emulator([gpu], time_scale=100)
    pm = PowerMonitor(update_period=0.01, power_domains=[PowerDomain.DEVICE_INSTANT])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            timeline = pm.get_power_timeline("device_instant")[0]
            if len(timeline) >= 5 and timeline[-1][1] == 200.0:
                break
            time.sleep(0.01)
        assert len(timeline) >= 5 and timeline[-1][1] == 200.0, timeline
        times = [t for t, _ in timeline]
        assert times == sorted(times)
        assert {w for _, w in timeline} <= {100.0, 200.0}
        assert pm.power_domains == [PowerDomain.DEVICE_INSTANT]
        with pytest.raises(ValueError, match="device_average is not being monitored"):
            pm.get_power(power_domain="device_average")
    finally:
        pm.stop()


def test_bad_arguments(manual) -> None:
    with pytest.raises(ValueError):
        PowerMonitor(gpu_indices=[])
    with pytest.raises(ValueError):
        PowerMonitor(power_domains=[])
    with pytest.raises(ValueError, match="GPU 5 does not exist"):
        PowerMonitor(gpu_indices=[5])
    with pytest.raises(ValueError, match="Unknown power domain"):
        PowerMonitor(power_domains=["bogus"])


def test_unsupported_domain(emulator) -> None:
    emulator([a40_busy()], clock="manual")  # no memory_power_w: the memory domain is not supported
    with pytest.raises(ValueError, match="memory_average not supported"):
        PowerMonitor(power_domains=["memory_average"])
    pm = PowerMonitor()
    try:
        assert PowerDomain.MEMORY_AVERAGE not in pm.power_domains
        with pytest.raises(ValueError, match="memory_average is not being monitored"):
            pm.get_power_timeline("memory_average")
    finally:
        pm.stop()


def test_stop_is_final(manual) -> None:
    pm = PowerMonitor()
    pm.stop()
    pm.stop()  # idempotent
    with pytest.raises(RuntimeError, match="stopped"):
        pm.get_power()


def test_temperature_monitor(manual) -> None:
    tm = TemperatureMonitor(update_period=0.1)
    try:
        assert tm.get_temperature() == {0: 55, 1: 40}
        timeline = tm.get_temperature_timeline(gpu_index=0)
        assert timeline[0] and all(c == 55 for _, c in timeline[0])
        assert tm.get_temperature(time=timeline[0][0][0]) == {0: 55, 1: 40}
    finally:
        tm.stop()
