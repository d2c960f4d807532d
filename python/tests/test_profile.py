"""zeus.profile as a user runs it: scripts in fresh interpreters on an emulated GPU with a thermal model.

The emulator's clock is manual. Each script makes zeus.profile's clock the emulator's (``time.monotonic``: the
emulated time; ``time.sleep``: the GPU idles while the emulated time moves), and its workload is one iteration
of 0.125 s of emulated time at the scenario's busy power. So every figure is known in advance: the expected
energies come from the thermal model's closed form (``ThermalReference`` below, written from the model's
equations in docs/emulator-thermal.md, not from the emulator's code), and the valid/invalid marks from their
standard deviations.

The scenario (one GPU, never at its cap): busy 200 W and idle 50 W when cold; ambient and reference 30 °C;
R = 0.2 °C/W; tau = 10 s; leakage 0.005 /°C. Busy, it heads for 80 °C (250 W) with tau' = 10/0.8 = 12.5 s;
idle, for 40.5 °C with tau' = 10/0.95 s. A 2.25 s trial (2 warm-up + 16 measured iterations) warms it by
about 6 °C, i.e. +6 W, so back-to-back trials differ by about 0.1 J per iteration (standard deviation far above
the 0.01 J threshold: invalid), while after 120 s idle (11 time constants) each trial starts within 1e-4 °C of
the same temperature (standard deviation ~1e-5 J: valid).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import EMULATOR_LIBRARY, PYTHON, PYTHON_DIR, a40, write_scenario

ITERATION_S = 0.125
BUSY_W = 200.0
IDLE_W = 50.0
AMBIENT_C = 30.0
R_C_PER_W = 0.2
TAU_S = 10.0
LEAKAGE_PER_C = 0.005
THRESHOLD_J = 0.01


def thermal_gpu() -> dict[str, Any]:
    return a40(power_w=BUSY_W, idle_power_w=IDLE_W, counter_update_period_ms=0,
               thermal={"ambient_c": AMBIENT_C, "resistance_c_per_w": R_C_PER_W, "time_constant_s": TAU_S,
                        "leakage_per_c": LEAKAGE_PER_C, "reference_c": AMBIENT_C})


class ThermalReference:
    """The model by hand: T' = (Ta + R P - T) / tau, P = W (1 + k (T - Tref)); exact per constant-W interval."""

    def __init__(self) -> None:
        self.temperature_c = AMBIENT_C
        self.energy_j = 0.0  # since emulated time 0

    def run(self, work_w: float, seconds: float) -> None:
        alpha = work_w * (1 - LEAKAGE_PER_C * AMBIENT_C)
        beta = work_w * LEAKAGE_PER_C
        a = 1 - R_C_PER_W * beta
        t_inf = (AMBIENT_C + R_C_PER_W * alpha) / a
        tau = TAU_S / a
        decay = -math.expm1(-seconds / tau)
        self.energy_j += alpha * seconds + beta * (t_inf * seconds + (self.temperature_c - t_inf) * tau * decay)
        self.temperature_c = t_inf + (self.temperature_c - t_inf) * (1 - decay)

    def busy(self, iterations: int) -> None:
        self.run(BUSY_W, iterations * ITERATION_S)

    def counter_j(self) -> float:
        """What the GPU's millijoule counter reads now, in J."""
        return math.floor(self.energy_j * 1000 + 1e-6) / 1000

    def trial(self, cooldown_s: float, warmup: int, iterations: int) -> dict[str, float]:
        if cooldown_s > 0:
            self.run(IDLE_W, cooldown_s)
        self.busy(warmup)
        before_j, before_c = self.counter_j(), round(self.temperature_c)
        self.busy(iterations)
        energy = self.counter_j() - before_j
        return {"energy_per_iter": energy / iterations, "iterations": iterations, "total_energy": energy,
                "total_time": iterations * ITERATION_S, "temperature_before": before_c,
                "temperature_after": round(self.temperature_c)}


# The script's prologue: the emulator's clock for zeus.profile, and a workload of one emulated iteration.
PROLOGUE = textwrap.dedent(f"""
    import ctypes, json, logging, os, sys, types
    import warnings
    warnings.simplefilter("ignore")  # the CPU-only PyTorch's one-time "no CUDA, no sync" notice
    from zeus.monitor import ZeusMonitor
    import zeus.profile
    import zeus.utils.framework

    monitor = ZeusMonitor(gpu_indices=[0])
    lib = ctypes.CDLL(os.environ["ZEUS_NVML_LIBRARY"])  # the emulator zeus loaded: the same instance
    lib.zeusEmulatorAdvanceTimeNs.argtypes = [ctypes.c_ulonglong]
    lib.zeusEmulatorNowNs.argtypes = [ctypes.POINTER(ctypes.c_ulonglong)]
    lib.zeusEmulatorSetIdle.argtypes = [ctypes.c_int, ctypes.c_int]

    def now():
        ns = ctypes.c_ulonglong()
        assert lib.zeusEmulatorNowNs(ctypes.byref(ns)) == 0
        return ns.value / 1e9

    def advance(seconds):
        assert lib.zeusEmulatorAdvanceTimeNs(round(seconds * 1e9)) == 0

    def idle_sleep(seconds):
        assert lib.zeusEmulatorSetIdle(-1, 1) == 0
        advance(seconds)
        assert lib.zeusEmulatorSetIdle(-1, 0) == 0

    zeus.profile.time = types.SimpleNamespace(monotonic=now, sleep=idle_sleep)
    calls = 0

    def one_iteration():
        global calls
        calls += 1
        advance({ITERATION_S})

    def as_dict(result):
        return {{k: getattr(result, k) for k in ("energy_per_iter", "iterations", "total_energy", "total_time",
                                                "temperature_before", "temperature_after")}}
""")


def run_script(tmp_path: Path, body: str) -> dict[str, Any]:
    """Runs PROLOGUE + body in a fresh /usr/bin/python3 on the thermal scenario; returns the JSON it prints
    last."""
    scenario = write_scenario(tmp_path / "emulator", [thermal_gpu()], clock="manual")
    script = tmp_path / "user_script.py"
    script.write_text(PROLOGUE + textwrap.dedent(body))
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.update(ZEUS_NVML_LIBRARY=str(EMULATOR_LIBRARY), ZEUS_EMULATOR_CONFIG=str(scenario),
               PYTHONPATH=str(PYTHON_DIR), TMPDIR=str(tmp_path))
    proc = subprocess.run([PYTHON, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_trial(observed: dict[str, Any], expected: dict[str, float]) -> None:
    assert observed["iterations"] == expected["iterations"]
    assert observed["total_time"] == pytest.approx(expected["total_time"], abs=1e-9)
    assert observed["total_energy"] == pytest.approx(expected["total_energy"], abs=2e-3)
    assert observed["energy_per_iter"] == pytest.approx(expected["energy_per_iter"], abs=2e-3 / expected["iterations"])
    assert observed["temperature_before"] == expected["temperature_before"]
    assert observed["temperature_after"] == expected["temperature_after"]


def test_profile_parameters_marks_back_to_back_trials_invalid_and_cooled_down_ones_valid(tmp_path):
    observed = run_script(tmp_path, """
        measurement, cooldown = zeus.profile.profile_parameters(
            one_iteration, monitor, measurement_duration_search_range=[1.0, 2.0],
            cooldown_duration_search_range=[0.0, 120.0], num_trials=3, num_warmup_trials=1,
            trial_stddev_threshold=0.01, num_warmup_iterations=2, num_calibration_iterations=8)
        def report(r):
            return {"sweep_param": list(r.sweep_param), "fixed_param": list(r.fixed_param),
                    "entries": [{"measurement_duration": e.measurement_duration,
                                 "cooldown_duration": e.cooldown_duration, "energy_std": e.energy_std,
                                 "energy_mean": e.energy_mean, "is_valid": e.is_valid,
                                 "trials": [as_dict(t) for t in e.trials]} for e in r.entries]}
        print(str(cooldown))
        print(json.dumps({"measurement": report(measurement), "cooldown": report(cooldown), "calls": calls}))
    """)
    # By hand: calibration (2 + 8 iterations, 1.0 s -> 0.125 s per iteration); the measurement sweep with a
    # 120 s cooldown after one back-to-back warm-up trial of 2 s (16 iterations); then the cooldown sweep with
    # 2 s measurements.
    ref = ThermalReference()
    ref.busy(2 + 8)
    ref.trial(0.0, 0, 16)
    expected_measurement = [[ref.trial(120.0, 2, math.ceil(m / ITERATION_S)) for _ in range(3)] for m in (1.0, 2.0)]
    expected_cooldown = [[ref.trial(c, 2, 16) for _ in range(3)] for c in (0.0, 120.0)]

    for name, expected, fixed in (("measurement", expected_measurement, ["cooldown_duration", 120.0]),
                                  ("cooldown", expected_cooldown, ["measurement_duration", 2.0])):
        report = observed[name]
        assert report["fixed_param"] == fixed
        for entry, trials in zip(report["entries"], expected):
            for got, want in zip(entry["trials"], trials):
                assert_trial(got, want)
            energies = [t["energy_per_iter"] for t in trials]
            std = statistics.stdev(energies)
            assert entry["energy_std"] == pytest.approx(std, abs=1e-3)
            assert entry["energy_mean"] == pytest.approx(statistics.mean(energies), abs=1e-3)
            assert entry["is_valid"] == (std < THRESHOLD_J)
    # What the hand calculation says, in words: cooled down, both durations are valid; back to back, the
    # trials drift (each starts ~6 °C hotter) and the zero cooldown is invalid.
    assert [e["is_valid"] for e in observed["measurement"]["entries"]] == [True, True]
    assert [e["is_valid"] for e in observed["cooldown"]["entries"]] == [False, True]
    back_to_back = observed["cooldown"]["entries"][0]
    assert back_to_back["energy_std"] > 10 * THRESHOLD_J
    assert [t["temperature_before"] for t in back_to_back["trials"]] == sorted(
        t["temperature_before"] for t in back_to_back["trials"])
    assert observed["cooldown"]["entries"][1]["energy_std"] < THRESHOLD_J / 10
    assert observed["calls"] == 10 + 16 + 3 * (10 + 18) + 6 * 18


def test_measure_with_a_warmup_settle_duration(tmp_path):
    observed = run_script(tmp_path, """
        result = zeus.profile.measure(one_iteration, monitor, measurement_duration=1.0, cooldown_duration=0.0,
                                      num_warmup_iterations=2, num_calibration_iterations=8,
                                      warmup_settle_duration=0.3)
        print(json.dumps({"result": as_dict(result), "calls": calls}))
    """)
    # Calibration: 2 + 8 iterations. Then ceil(0.3 / 0.125) = 3 warm-up iterations (not 2), and
    # ceil(1.0 / 0.125) = 8 measured ones: 21 calls in all.
    assert observed["calls"] == 2 + 8 + 3 + 8
    ref = ThermalReference()
    ref.busy(2 + 8)
    assert_trial(observed["result"], ref.trial(0.0, 3, 8))
    # About 25.8 J per iteration: 200 W cold, plus leakage after 13 iterations of warming.
    assert 25.0 < observed["result"]["energy_per_iter"] < 27.0


def test_distributed_aggregation_and_rank_zero_logging(tmp_path):
    observed = run_script(tmp_path, """
        records = []
        class Keep(logging.Handler):
            def emit(self, record):
                records.append(record.getMessage())
        logging.getLogger("zeus.profile").addHandler(Keep())
        logging.getLogger("zeus.profile").setLevel(logging.INFO)
        fw = zeus.utils.framework
        # Rank 1 of 2 (faked where zeus.profile asks): it logs nothing; the all-reduce is a stand-in for
        # two identical ranks (sum: twice, max: the same).
        fw.get_rank, fw.get_world_size = (lambda: 1), (lambda: 2)
        fw.all_reduce = lambda values, op: [2 * v for v in values] if op == "sum" else list(values)
        two = zeus.profile.measure(one_iteration, monitor, 1.0, 0.0, num_warmup_iterations=2,
                                   num_calibration_iterations=8)
        rank1_records = len(records)
        fw.get_rank = lambda: 0
        zeus.profile.measure(one_iteration, monitor, 1.0, 0.0, num_warmup_iterations=2,
                             num_calibration_iterations=8)
        print(json.dumps({"two": as_dict(two), "rank1_records": rank1_records, "rank0_records": records}))
    """)
    assert observed["rank1_records"] == 0
    assert any("calibrated iteration time" in r for r in observed["rank0_records"])
    assert any("8 iterations after 2 warm-up" in r for r in observed["rank0_records"])
    ref = ThermalReference()
    ref.busy(2 + 8)
    one = ref.trial(0.0, 2, 8)
    two = observed["two"]
    # Energy summed over the ranks, time the maximum, temperatures averaged ((T + T) / 2).
    assert two["total_energy"] == pytest.approx(2 * one["total_energy"], abs=4e-3)
    assert two["energy_per_iter"] == pytest.approx(2 * one["energy_per_iter"], abs=1e-3)
    assert two["total_time"] == pytest.approx(one["total_time"], abs=1e-9)
    assert two["temperature_before"] == one["temperature_before"]


def test_invalid_arguments_raise_value_errors_naming_them(tmp_path):
    observed = run_script(tmp_path, """
        p = zeus.profile
        cases = {
            "warmup_settle_duration": lambda: p.measure(one_iteration, monitor, 1.0, 0.0, warmup_settle_duration=-1),
            "measurement_duration": lambda: p.measure(one_iteration, monitor, 0.0, 0.0),
            "cooldown_duration": lambda: p.measure(one_iteration, monitor, 1.0, -2.0),
            "num_calibration_iterations": lambda: p.measure(one_iteration, monitor, 1.0, 0.0,
                                                            num_calibration_iterations=0),
            "num_warmup_iterations": lambda: p.measure(one_iteration, monitor, 1.0, 0.0, num_warmup_iterations=-1),
            "target_function": lambda: p.measure(42, monitor, 1.0, 0.0),
            "zeus_monitor": lambda: p.measure(one_iteration, object(), 1.0, 0.0),
            "num_trials": lambda: p.profile_cooldown_duration(one_iteration, monitor, [1.0], num_trials=0),
            "num_warmup_trials": lambda: p.profile_measurement_duration(one_iteration, monitor, [1.0],
                                                                        num_warmup_trials=-1),
            "trial_stddev_threshold": lambda: p.profile_parameters(one_iteration, monitor,
                                                                   trial_stddev_threshold=float("nan")),
            "measurement_duration_search_range[1]": lambda: p.profile_parameters(one_iteration, monitor, [1.0, 0.0]),
            "cooldown_duration_search_range[0]": lambda: p.profile_cooldown_duration(one_iteration, monitor, [-1.0]),
            "iteration_duration": lambda: p.profile_cooldown_duration(one_iteration, monitor, [1.0],
                                                                      iteration_duration=0),
        }
        messages = {}
        for name, call in cases.items():
            try:
                call()
            except ValueError as e:
                messages[name] = str(e)
            else:
                messages[name] = None
        print(json.dumps({"messages": messages, "calls": calls}))
    """)
    for name, message in observed["messages"].items():
        assert message is not None, f"{name}: no ValueError"
        assert message.startswith(name + " "), message
    assert observed["calls"] == 0  # every check comes before any work
