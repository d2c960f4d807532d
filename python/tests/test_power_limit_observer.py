"""GlobalPowerLimitOptimizer(observer_mode=True) on the NVML emulator: it profiles every limit, then the original
limit (200 W) stays in force while ``state`` names the limit it would have chosen; ``what_if()`` reports, per
selector, what that choice would save, checked against a hand computation from test_power_limit_helpers.WORKLOAD.

Per step (helpers' table), against the original 200 W (209 J, 1.1 s):
    limit W   energy J   time s   saved per step
    300       235.2      0.98     -26.2 J, +0.12 s   <- Time
    250       220        1.0      -11 J,   +0.1 s    <- ZeusCost(0.5): 0.5 E + 150 T = 260, the least
    200       209        1.1      0
    150       210        1.4      -1 J,    -0.3 s    <- MaxSlowdownConstraint(1.5): time <= 1.47 s
    100       200        2.0      +9 J,    -0.9 s    <- Energy
With 50 steps per epoch and 4 epochs, Energy saves 450 J and costs 45 s per epoch, 1800 J and 180 s per run.
"""

from __future__ import annotations

import gc
import json
import warnings

import pytest

from test_power_limit_helpers import EXACT, ORIGINAL_LIMIT_W, Emulator, gpu

from zeus.monitor import ZeusMonitor
from zeus.optimizer.power_limit import Done, Energy, GlobalPowerLimitOptimizer

FAST = dict(wait_steps=1, warmup_steps=1, profile_steps=2, pl_step=50)
STEPS_TO_DONE = 1 + 5 * 3 + 1


@pytest.fixture
def setup(emulator):
    emulator([gpu()], **EXACT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CPU torch: no GPU sync (a one-time notice)
        monitor = ZeusMonitor(gpu_indices=[0])
    emu = Emulator()
    yield monitor, emu
    emu.close()
    del monitor
    gc.collect()


def run_steps(plo, emu, steps):
    limits = []
    for _ in range(steps):
        plo.on_step_begin()
        emu.step()
        plo.on_step_end()
        limits.append(emu.power_limit_w(0))
    return limits


def test_observer_mode_profiles_then_keeps_the_original_limit(setup):
    monitor, emu = setup
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), observer_mode=True, **FAST)
    assert plo.observer_mode
    limits = run_steps(plo, emu, STEPS_TO_DONE + 5)
    assert sorted(set(limits[:STEPS_TO_DONE])) == [100, 150, 200, 250, 300]  # every limit was in force
    assert plo.state == Done(optimal_power_limit=100_000)  # what it would have set
    assert limits[STEPS_TO_DONE - 1 :] == [ORIGINAL_LIMIT_W] * 6  # ... but the original is back
    plo.on_train_end()
    assert emu.power_limit_w(0) == ORIGINAL_LIMIT_W


def test_without_observer_mode_the_optimum_is_applied(setup):
    monitor, emu = setup
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), **FAST)
    assert not plo.observer_mode
    assert run_steps(plo, emu, STEPS_TO_DONE + 1)[-1] == 100
    plo.on_train_end()


def test_what_if_reports_each_selectors_savings(setup):
    monitor, emu = setup
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), observer_mode=True, **FAST)
    with pytest.raises(RuntimeError, match="once the optimizer is Done"):
        plo.what_if(steps_per_epoch=50)
    run_steps(plo, emu, STEPS_TO_DONE)
    report = plo.what_if(steps_per_epoch=50, epochs=4, eta_knob=0.5, max_slowdown=1.5)
    json.dumps(report)  # plain data
    base = report["baseline"]
    assert base["power_limit_w"] == 200 and base["requested"] is True
    assert base["energy_per_step_j"] == pytest.approx(209, abs=1e-3)
    assert base["time_per_step_s"] == pytest.approx(1.1, abs=1e-9)
    assert [m["pareto"] for m in report["measurements"]] == [True, True, True, False, True]  # 150 W: 200 W beats it

    want = {  # selector: (limit W, energy saved per epoch J, time saved per epoch s)
        "energy": (100, 450, -45),
        "time": (300, -1310, 6),
        "zeus-cost(eta=0.5)": (250, -550, 5),
        "max-slowdown(1.5)": (150, -50, -15),
    }
    got = {c["selector"]: c for c in report["selectors"]}
    assert list(got) == list(want)
    for name, (limit_w, energy_j, time_s) in want.items():
        c = got[name]
        assert c["power_limit_w"] == limit_w, name
        assert c["energy_saved_per_epoch_j"] == pytest.approx(energy_j, abs=0.01), name
        assert c["time_saved_per_epoch_s"] == pytest.approx(time_s, abs=1e-6), name
        assert c["energy_saved_run_j"] == pytest.approx(4 * energy_j, abs=0.04), name
        assert c["time_saved_run_s"] == pytest.approx(4 * time_s, abs=1e-6), name
    assert got["energy"]["energy_saved_percent"] == pytest.approx(100 * 9 / 209, abs=1e-3)
    assert got["energy"]["time_saved_percent"] == pytest.approx(-100 * 0.9 / 1.1, abs=1e-6)

    with pytest.raises(ValueError, match="steps per epoch must be >= 1"):
        plo.what_if(steps_per_epoch=0)
    with pytest.raises(ValueError):
        plo.what_if(steps_per_epoch=10, eta_knob=2)
    plo.on_train_end()


def test_observer_mode_with_a_saved_profile_changes_no_limit(setup, tmp_path):
    monitor, emu = setup
    path = tmp_path / "profile.json"
    first = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), observer_mode=True, profile_path=path, **FAST)
    run_steps(first, emu, STEPS_TO_DONE)
    first.on_train_end()
    assert path.exists()
    again = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), observer_mode=True, profile_path=path, **FAST)
    assert again.state == Done(optimal_power_limit=100_000)
    assert run_steps(again, emu, 3) == [ORIGINAL_LIMIT_W] * 3
    assert again.what_if(steps_per_epoch=50)["selectors"][0]["power_limit_w"] == 100
    again.on_train_end()
