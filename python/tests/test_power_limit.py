"""zeus.optimizer.power_limit on the NVML emulator: a training loop with the optimizer on a workload curve whose
optimum is computed by hand (test_power_limit_helpers.WORKLOAD), for every selector and a user's selector; the
original limit restored; Zeus's argument checks; the profile file; zeus.utils.metric.zeus_cost."""

from __future__ import annotations

import gc
import inspect
import json
import logging
import math
import warnings
import weakref

import pytest

from test_power_limit_helpers import EXACT, ORIGINAL_LIMIT_W, Emulator, gpu, train

from zeus.monitor import ZeusMonitor
from zeus.optimizer.power_limit import (
    Disabled,
    Done,
    Energy,
    GlobalPowerLimitOptimizer,
    HFGlobalPowerLimitOptimizer,
    MaxSlowdownConstraint,
    OptimumSelector,
    PowerLimitMeasurement,
    Profiling,
    Ready,
    Time,
    Warmup,
    ZeusCost,
)
from zeus.utils.metric import zeus_cost

# wait_steps=1, warmup_steps=1, profile_steps=2, pl_step=50: 1 + 5 x (1 + 2) steps, then Done.
FAST = dict(wait_steps=1, warmup_steps=1, profile_steps=2, pl_step=50)
STEPS_TO_DONE = 1 + 5 * 3 + 1

# Per profiling window of 2 steps (helpers' table x 2): limit W -> (energy J, time s).
EXPECTED = {300: (470.4, 1.96), 250: (440.0, 2.0), 200: (418.0, 2.2), 150: (420.0, 2.8), 100: (400.0, 4.0)}


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
    gc.collect()  # optimizers and monitors of this test release NVML: the next test loads its own scenario


class SecondLowest(OptimumSelector):
    """A user's selector: the second-lowest limit measured (no built-in selector picks 150 W here... except
    MaxSlowdownConstraint(1.5)). Records what it was given."""

    def __init__(self) -> None:
        self.seen: list[PowerLimitMeasurement] = []

    def select(self, measurements: list[PowerLimitMeasurement]) -> int:
        self.seen = list(measurements)
        return sorted(m.power_limit for m in measurements)[1]


def test_a_torch_training_loop_profiles_every_limit_exactly_and_restores_the_original(setup):
    torch = pytest.importorskip("torch")
    monitor, emu = setup
    model = torch.nn.Linear(8, 1)
    sgd = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 8), torch.randn(16, 1)

    def work() -> None:
        sgd.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        sgd.step()

    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), **FAST)
    assert plo.power_limits == [300_000, 250_000, 200_000, 150_000, 100_000]
    assert plo.pl_step == 50_000
    assert plo.original_power_limits == [ORIGINAL_LIMIT_W * 1000]
    assert plo.state == Ready(next_power_limit=300_000, steps=2)
    states = []
    for _ in range(STEPS_TO_DONE):
        plo.on_step_begin()
        work()
        emu.step()
        plo.on_step_end()
        states.append(plo.state)
    # Zeus's states step by step: 1 wait step, then per limit 1 warmup step and 2 profiled steps.
    assert states[:4] == [
        Ready(next_power_limit=300_000, steps=1),
        Warmup(current_power_limit=300_000, steps=1),
        Profiling(current_power_limit=300_000, steps=2),
        Profiling(current_power_limit=300_000, steps=1),
    ]
    assert states[4] == Warmup(current_power_limit=250_000, steps=1)
    assert states[-1] == Done(optimal_power_limit=100_000)
    measured = {m.power_limit: (m.energy, m.time) for m in plo.measurements}
    assert [m.power_limit for m in plo.measurements] == [300, 250, 200, 150, 100]
    for limit, (energy, time) in EXPECTED.items():
        assert measured[limit][0] == pytest.approx(energy, abs=2e-3), limit
        assert measured[limit][1] == pytest.approx(time, abs=1e-6), limit
    assert emu.power_limit_w(0) == 100
    plo.on_train_end()
    assert emu.power_limit_w(0) == ORIGINAL_LIMIT_W  # the original, not the maximum (300 W)


# Hand-computed optima (per-window figures in EXPECTED; max power = 300 W x 1 GPU):
#   ZeusCost(0.5) = 0.5 E + 150 T per step: 264.6, 260, 269.5, 315, 400 -> 250 W
#   ZeusCost(0.9) = 0.9 E + 30 T per step:  241.08, 228, 221.1, 231, 240 -> 200 W
#   MaxSlowdownConstraint(f): time <= f x 0.98 s: 1.1 -> 250 W, 1.15 -> 200 W, 1.5 -> 150 W
@pytest.mark.parametrize(
    "selector, expected_w",
    [
        (Energy(), 100),
        (Time(), 300),
        (ZeusCost(0.5), 250),
        (ZeusCost(0.9), 200),
        (ZeusCost(eta_knob=1.0, world_size=4), 100),
        (MaxSlowdownConstraint(1.1), 250),
        (MaxSlowdownConstraint(1.15), 200),
        (MaxSlowdownConstraint(1.5), 150),
        (SecondLowest(), 150),
    ],
    ids=["energy", "time", "zeus_cost_0.5", "zeus_cost_0.9", "zeus_cost_1", "slowdown_1.1", "slowdown_1.15",
         "slowdown_1.5", "user_subclass"],
)
def test_every_selector_chooses_the_hand_computed_optimum(setup, selector, expected_w):
    monitor, emu = setup
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=selector, **FAST)
    states = train(plo, emu, epochs=1, steps_per_epoch=STEPS_TO_DONE + 2)
    assert states[-1] == Done(optimal_power_limit=expected_w * 1000)
    assert emu.power_limit_w(0) == ORIGINAL_LIMIT_W  # on_train_end restored it
    assert states[STEPS_TO_DONE - 1] == Done(optimal_power_limit=expected_w * 1000)


def test_the_default_selector_is_zeus_cost_half(setup):
    monitor, emu = setup
    plo = GlobalPowerLimitOptimizer(monitor, **FAST)
    assert isinstance(plo.optimum_selector, ZeusCost) and plo.optimum_selector.eta_knob == 0.5
    for _ in range(STEPS_TO_DONE):
        plo.on_step_begin()
        emu.step()
    assert plo.state == Done(optimal_power_limit=250_000)
    assert emu.power_limit_w(0) == 250


def test_a_user_selector_gets_zeus_measurements(setup):
    monitor, emu = setup
    selector = SecondLowest()
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=selector, **FAST)
    train(plo, emu, epochs=1, steps_per_epoch=STEPS_TO_DONE)
    assert [m.power_limit for m in selector.seen] == [300, 250, 200, 150, 100]
    assert all(isinstance(m, PowerLimitMeasurement) and isinstance(m.power_limit, int) for m in selector.seen)
    assert selector.seen[0].energy == pytest.approx(470.4, abs=2e-3)
    assert selector.seen[0].time == pytest.approx(1.96, abs=1e-6)


def test_a_subclass_of_a_builtin_selector_that_overrides_select_is_called(setup):
    monitor, emu = setup

    class AlwaysTwoHundred(Energy):
        def select(self, measurements):
            return 200

    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=AlwaysTwoHundred(), **FAST)
    for _ in range(STEPS_TO_DONE):
        plo.on_step_begin()
        emu.step()
    assert plo.state == Done(optimal_power_limit=200_000)


def test_an_exception_in_a_user_selector_is_raised_from_the_hook_and_the_limit_restored(setup):
    monitor, emu = setup

    class Broken(OptimumSelector):
        def select(self, measurements):
            return 1 / 0

    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Broken(), **FAST)
    with pytest.raises(ZeroDivisionError):
        for _ in range(STEPS_TO_DONE):
            plo.on_step_begin()
            emu.step()
    assert isinstance(plo.state, Disabled)
    assert "ZeroDivisionError" in plo.state.reason
    assert emu.power_limit_w(0) == ORIGINAL_LIMIT_W
    plo.on_step_begin()  # disabled: nothing happens, nothing raised
    assert emu.power_limit_w(0) == ORIGINAL_LIMIT_W


def test_the_framework_is_synced_when_a_profiling_window_opens_or_closes(setup):
    monitor, emu = setup
    syncs = []
    holder = {}  # a weak reference: the optimizer keeps the sync function, which must not keep the optimizer
    monitor._sync = lambda: syncs.append(holder["plo"]().state)  # ZeusMonitor's framework sync, observed
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), **FAST)
    holder["plo"] = weakref.ref(plo)
    for _ in range(STEPS_TO_DONE + 3):
        plo.on_step_begin()
        emu.step()
    # Before each window opens (last warmup step) and closes (last profiled step): 2 per limit, none after.
    plo.on_train_end()
    assert len(syncs) == 10
    assert syncs[:2] == [Warmup(current_power_limit=300_000, steps=1), Profiling(current_power_limit=300_000, steps=1)]


def test_an_epoch_ending_mid_profile_restores_the_original_and_retries_that_limit(setup):
    monitor, emu = setup
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), **FAST)
    for _ in range(3):  # wait, warmup at 300 W, first profiled step
        plo.on_step_begin()
        emu.step()
    assert plo.state == Profiling(current_power_limit=300_000, steps=2)
    plo.on_epoch_end()
    assert plo.state == Ready(next_power_limit=300_000, steps=1)
    assert emu.power_limit_w(0) == ORIGINAL_LIMIT_W
    for _ in range(STEPS_TO_DONE - 1):
        plo.on_step_begin()
        emu.step()
    assert plo.state == Done(optimal_power_limit=100_000)
    assert plo.measurements[0].energy == pytest.approx(470.4, abs=2e-3)  # a full window after the retry


def test_an_emptied_optimizer_restores_when_collected(setup):
    monitor, emu = setup
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), **FAST)
    for _ in range(2):
        plo.on_step_begin()
        emu.step()
    assert emu.power_limit_w(0) == 300
    del plo
    gc.collect()
    assert emu.power_limit_w(0) == ORIGINAL_LIMIT_W


def test_bad_arguments_raise_zeus_errors(setup):
    monitor, _ = setup
    cases = [
        (dict(wait_steps=-1), "`wait_steps` must be non-negative."),
        (dict(warmup_steps=-1), "`warmup_steps` must be non-negative."),
        (dict(profile_steps=0), "`profile_steps` must be positive."),
        (dict(pl_step=0), "`pl_step` must be positive."),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as info:
            GlobalPowerLimitOptimizer(monitor, **kwargs)
        assert str(info.value) == message
    with pytest.raises(ValueError, match="eta_knob must be between 0 and 1"):
        ZeusCost(1.5)
    with pytest.raises(ValueError, match="world_size"):
        ZeusCost(0.5, world_size=0)
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        MaxSlowdownConstraint(0.9)
    with pytest.raises(TypeError, match="OptimumSelector"):
        GlobalPowerLimitOptimizer(monitor, optimum_selector="energy")
    with pytest.raises(TypeError):
        OptimumSelector()  # abstract


def test_warmup_steps_zero_works(setup):
    monitor, emu = setup
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Time(), wait_steps=0, warmup_steps=0,
                                    profile_steps=1, pl_step=50)
    for _ in range(1 + 5):
        plo.on_step_begin()
        emu.step()
    assert plo.state == Done(optimal_power_limit=300_000)


def test_the_profile_is_saved_in_zeus_format_and_reused(setup, tmp_path):
    monitor, emu = setup
    path = tmp_path / "profile.json"
    first = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), profile_path=path, **FAST)
    train(first, emu, epochs=1, steps_per_epoch=STEPS_TO_DONE)
    saved = json.loads(path.read_text())
    assert [m["power_limit"] for m in saved["measurements"]] == [300, 250, 200, 150, 100]
    assert saved["measurements"][2]["energy"] == pytest.approx(418.0, abs=2e-3)
    assert saved["measurements"][2]["time"] == pytest.approx(2.2, abs=1e-6)
    # A later run with another selector: no profiling, that selector's choice from the file, at once.
    second = GlobalPowerLimitOptimizer(monitor, optimum_selector=MaxSlowdownConstraint(1.15), profile_path=path,
                                       **FAST)
    assert second.state == Done(optimal_power_limit=200_000)
    assert emu.power_limit_w(0) == 200
    assert [m.power_limit for m in second.measurements] == [300, 250, 200, 150, 100]
    second.on_train_end()


def test_a_zeus_written_profile_loads(setup, tmp_path):
    monitor, emu = setup
    path = tmp_path / "zeus.json"
    rows = [{"power_limit": w, "energy": e, "time": t} for w, (e, t) in EXPECTED.items()]
    path.write_text(json.dumps({"measurements": rows}, indent=4))
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=ZeusCost(0.9), profile_path=path, **FAST)
    assert plo.state == Done(optimal_power_limit=200_000)
    plo.on_train_end()


def test_without_permission_the_optimizer_warns_and_training_goes_on(emulator):
    emulator([gpu()], faults=[{"function": "nvmlDeviceSetPowerManagementLimit", "return": "NO_PERMISSION"}],
             **EXACT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        monitor = ZeusMonitor(gpu_indices=[0])
    emu = Emulator()
    try:
        with pytest.warns(UserWarning, match="CAP_SYS_ADMIN"):
            plo = GlobalPowerLimitOptimizer(monitor, **FAST)
        assert isinstance(plo.state, Disabled)
        train(plo, emu, epochs=1, steps_per_epoch=5)
        assert emu.power_limit_w(0) == ORIGINAL_LIMIT_W
    finally:
        emu.close()


def test_a_disabled_optimizer_gives_its_advice_once_and_a_short_state(emulator, caplog):
    emulator([gpu()], faults=[{"function": "nvmlDeviceSetPowerManagementLimit", "return": "NO_PERMISSION"}],
             **EXACT)
    caplog.set_level(logging.DEBUG, logger="zeus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        monitor = ZeusMonitor(gpu_indices=[0])
    emu = Emulator()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # no "once" filter helping: the optimizer itself says it once
            plo = GlobalPowerLimitOptimizer(monitor, **FAST)
            train(plo, emu, epochs=2, steps_per_epoch=5)
            plo.on_train_end()
        advice = [w for w in caught if "CAP_SYS_ADMIN" in str(w.message)]
        assert len(advice) == 1, [str(w.message) for w in caught]
        assert advice[0].filename == __file__  # the user's line that built the optimizer
        assert "training continues at the original power limits" in str(advice[0].message)
        assert [r.getMessage() for r in caplog.records if "CAP_SYS_ADMIN" in r.getMessage()] == []
        state = plo.state
        assert isinstance(state, Disabled)
        assert "CAP_SYS_ADMIN" not in repr(state) and len(repr(state)) < 200, repr(state)
        assert repr(state).startswith("Disabled(reason='no permission to change GPU power limits")
        assert "CAP_SYS_ADMIN" in state.details  # the ways out, when asked for
    finally:
        emu.close()


def test_hf_optimizer_has_the_same_signature_and_names_transformers(setup):
    monitor, _ = setup
    assert inspect.signature(HFGlobalPowerLimitOptimizer.__init__) == inspect.signature(
        GlobalPowerLimitOptimizer.__init__)
    try:
        import transformers  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="transformers"):
            HFGlobalPowerLimitOptimizer(monitor)
    else:
        hf = HFGlobalPowerLimitOptimizer(monitor, **FAST)
        assert isinstance(hf, transformers.TrainerCallback)
        assert isinstance(hf.optimizer, GlobalPowerLimitOptimizer)


def test_zeus_cost_metric():
    # 0.5 x 100 + 0.5 x 300 x 2 = 350; eta 1: energy only; eta 0: max power x time.
    assert zeus_cost(100, 2, 0.5, 300) == 350
    assert zeus_cost(100, 2, 1.0, 300) == 100
    assert zeus_cost(100, 2, 0.0, 300) == 600
    for eta in (-0.1, 1.1, math.nan):
        with pytest.raises(ValueError, match="eta"):
            zeus_cost(100, 2, eta, 300)


def test_builtin_selectors_called_directly():
    measurements = [PowerLimitMeasurement(w, e, t) for w, (e, t) in EXPECTED.items()]
    assert Energy().select(measurements) == 100
    assert Time().select(measurements) == 300
    assert ZeusCost(0.5).select(measurements) == 250
    # world_size 4 with one GPU's energy: time weighs 4x more -> the fastest limit.
    assert ZeusCost(0.5, world_size=4).select(measurements) == 300
    assert MaxSlowdownConstraint(1.15).select(measurements) == 200
    with pytest.raises(ValueError):
        Energy().select([])


def test_an_exception_in_the_all_reduce_is_raised_from_the_hook_and_the_limit_restored(setup, monkeypatch):
    """The torch.distributed path without torch.distributed: a fake all_reduce of world size 1 that fails at
    the first profiling window's end."""
    monitor, emu = setup
    from zeus.utils import framework

    calls = []

    def all_reduce(values, operation):
        calls.append(operation)
        if len(calls) > 2:  # Create's two collectives pass
            raise ConnectionError("rank 1 went away")
        return list(values)

    monkeypatch.setattr(framework, "is_distributed", lambda: True)
    monkeypatch.setattr(framework, "get_rank", lambda: 0)
    monkeypatch.setattr(framework, "get_world_size", lambda: 1)
    monkeypatch.setattr(framework, "all_reduce", all_reduce)
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), **FAST)
    assert calls == ["max", "sum"]
    with pytest.raises(ConnectionError, match="rank 1 went away"):
        for _ in range(STEPS_TO_DONE):
            plo.on_step_begin()
            emu.step()
    assert isinstance(plo.state, Disabled) and "rank 1 went away" in plo.state.reason
    assert emu.power_limit_w(0) == ORIGINAL_LIMIT_W


def test_a_fake_second_rank_doubles_the_energy_and_the_gpu_count(setup, monkeypatch):
    """Every collective of a 2-rank job whose other rank measured exactly what this one did: energies sum to
    twice this GPU's, times are the same, and ZeusCost counts 2 GPUs (max power 600 W)."""
    monitor, emu = setup
    from zeus.utils import framework

    def all_reduce(values, operation):
        return [2 * v for v in values] if operation == "sum" else list(values)

    monkeypatch.setattr(framework, "is_distributed", lambda: True)
    monkeypatch.setattr(framework, "get_rank", lambda: 1)  # not rank 0: no profile written
    monkeypatch.setattr(framework, "get_world_size", lambda: 2)
    monkeypatch.setattr(framework, "all_reduce", all_reduce)
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=ZeusCost(0.7), **FAST)
    for _ in range(STEPS_TO_DONE):
        plo.on_step_begin()
        emu.step()
    measured = {m.power_limit: (m.energy, m.time) for m in plo.measurements}
    for limit, (energy, time) in EXPECTED.items():
        assert measured[limit][0] == pytest.approx(2 * energy, abs=4e-3), limit
        assert measured[limit][1] == pytest.approx(time, abs=1e-6), limit
    # Per window with 2 GPUs (max power 600 W): 0.7 x 2E + 0.3 x 600 T = 2 (0.7 E + 90 T) = 2 x (505.68, 488,
    # 490.6, 546, 640) -> 250 W. Counting one GPU (Zeus's world_size=1): 2 (0.7 E + 45 T) = 2 x (417.48, 398,
    # 391.6, 420, 460) -> 200 W.
    assert plo.state == Done(optimal_power_limit=250_000)
    plo.on_train_end()
