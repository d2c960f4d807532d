"""zeus.monitor.PowerMonitor, PowerDomain and TemperatureMonitor on emulated GPUs.

On the manual clock nothing moves unless the test advances it, so the constructor's first sample
(236 W for a busy A40 at its 300 W default limit, 190 W at 200 W) holds over any interval and the
energies are exact: P x T."""

from __future__ import annotations

import logging
import time
import warnings

import pytest

from conftest import a40
from test_monitor_helpers import EmulatorControl, a40_busy
from test_monitor_helpers import close_devices_after_test  # noqa: F401 (an autouse fixture)
from zeus.monitor import PowerDomain, PowerMonitor, TemperatureMonitor
from zeus.monitor import power as power_module


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
        assert set(pm.measurement_domains) == set(PowerDomain)
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


def test_energy_of_every_domain_holds_its_own_readings(manual) -> None:
    pm = PowerMonitor(update_period=0.1)
    try:
        start = pm.time()
        manual.advance(2.0)
        end = pm.time()
        average = pm.get_power(power_domain="device_average")
        assert average is not None
        watts_of = {"device_instant": {0: 236.0, 1: 190.0}, "device_average": average,
                    "memory_average": {0: 30.0, 1: 30.0}}
        for domain, watts in watts_of.items():
            # From a second before the first sample (held backwards) to the end (held forwards).
            energy = pm.get_energy(start - 1.0, end, power_domain=domain)
            assert energy == pytest.approx({gpu: w * 3.0 for gpu, w in watts.items()}, rel=1e-6), domain
            assert pm.get_energy(end, end, power_domain=domain) == {0: 0.0, 1: 0.0}
            with pytest.raises(ValueError, match="ends before it starts"):
                pm.get_energy(end, start, power_domain=domain)
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
    pm = PowerMonitor(update_period=0.01, measurement_domains=[PowerDomain.DEVICE_INSTANT])
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
        assert pm.measurement_domains == [PowerDomain.DEVICE_INSTANT]
        with pytest.raises(ValueError, match="device_average is not being monitored"):
            pm.get_power(power_domain="device_average")
    finally:
        pm.stop()


def test_bad_arguments(manual) -> None:
    with pytest.raises(ValueError):
        PowerMonitor(gpu_indices=[])
    with pytest.raises(ValueError, match="power_domains must not be empty"):
        PowerMonitor(power_domains=[])
    with pytest.raises(ValueError, match="GPU 5 does not exist"):
        PowerMonitor(gpu_indices=[5])
    with pytest.raises(ValueError, match="Unknown power domain"):
        PowerMonitor(power_domains=["bogus"])


def test_unsupported_domain(emulator) -> None:
    emulator([a40_busy()], clock="manual")  # no memory_power_w: the memory domain is not supported
    with pytest.raises(ValueError, match="memory_average not supported"):
        PowerMonitor(measurement_domains=["memory_average"])
    pm = PowerMonitor()
    try:
        assert PowerDomain.MEMORY_AVERAGE not in pm.measurement_domains
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


def test_measurement_domains_and_the_deprecated_power_domains_attribute(manual, monkeypatch) -> None:
    monkeypatch.setattr(power_module, "_said", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pm = PowerMonitor(power_domains=[PowerDomain.DEVICE_INSTANT])  # Zeus's argument: no warning
        try:
            assert caught == []
            assert pm.measurement_domains == [PowerDomain.DEVICE_INSTANT]
            assert pm.power_domains == [PowerDomain.DEVICE_INSTANT]  # Zeus 0.16's attribute: deprecated
            assert pm.power_domains == [PowerDomain.DEVICE_INSTANT]
        finally:
            pm.stop()
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, [str(w.message) for w in caught]  # once per process
    assert "read PowerMonitor.measurement_domains" in str(deprecations[0].message)
    assert deprecations[0].filename == __file__
    with pytest.raises(TypeError, match="both power_domains and measurement_domains"):
        PowerMonitor(measurement_domains=["device_instant"], power_domains=["device_instant"])


def test_an_update_period_under_50_ms_is_warned_about_once(manual, monkeypatch, caplog) -> None:
    monkeypatch.setattr(power_module, "_said", set())
    caplog.set_level(logging.WARNING, logger="zeus")
    for period in (0.1, 0.05):
        PowerMonitor(update_period=period).stop()
    assert [r for r in caplog.records if "update_period" in r.getMessage()] == []
    for period in (0.01, 0.02):
        pm = PowerMonitor(update_period=period)
        assert pm.update_period == period  # accepted, as in Zeus
        pm.stop()
    warned = [r for r in caplog.records if "update_period" in r.getMessage()]
    assert len(warned) == 1
    assert warned[0].name == "zeus.monitor.power" and warned[0].levelno == logging.WARNING
    assert "0.01 s is under 0.05 s" in warned[0].getMessage()
