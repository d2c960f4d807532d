"""Cost of GlobalPowerLimitOptimizer's hooks from Python, per training step, outside profiling windows.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_power_limit_bench.py [--steps N]

Runs on one emulated A40 (its own scenario and state file in a temporary directory; build the emulator first).
Measures on_step_begin() + on_step_end() per step, minus the cost of an empty loop, in two states:

* done: profiling is over (a profile file was loaded), the state for almost all of training;
* ready: waiting before profiling (wait_steps large), where each on_step_begin counts down in native code.

Goal (issue 11): under 2 us per step. Prints one line per state and, with --json, a JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("ZEUS_BUILD_DIR", ROOT / "build"))


def scenario(directory: Path) -> Path:
    path = directory / "scenario.json"
    gpu = {
        "name": "NVIDIA A40", "architecture": "ampere", "min_power_limit_w": 100, "max_power_limit_w": 300,
        "default_power_limit_w": 300, "energy_counter": True,
        "workload": {"power_limits_w": [100, 300], "power_w": [100, 240], "iteration_time_s": [2.0, 1.0]},
    }
    path.write_text(json.dumps({"clock": "manual", "state_file": str(directory / "state"), "gpus": [gpu]}))
    return path


def per_step_ns(step, steps: int) -> float:
    """Best of 5 runs of `steps` steps, minus an empty loop, in ns per step."""

    def run(body) -> float:
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter_ns()
            for _ in range(steps):
                body()
            best = min(best, (time.perf_counter_ns() - start) / steps)
        return best

    return run(step) - run(lambda: None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        os.environ.setdefault("ZEUS_NVML_LIBRARY", str(BUILD / "lib" / "libzeus-nvml-emulator.so"))
        os.environ["ZEUS_EMULATOR_CONFIG"] = str(scenario(directory))
        from zeus.monitor import ZeusMonitor
        from zeus.optimizer.power_limit import Done, Energy, GlobalPowerLimitOptimizer, Ready

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            monitor = ZeusMonitor(gpu_indices=[0])
        profile = directory / "profile.json"
        profile.write_text(json.dumps({"measurements": [
            {"power_limit": 300, "energy": 240.0, "time": 1.0}, {"power_limit": 100, "energy": 200.0, "time": 2.0}]}))
        results = {}

        done = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), pl_step=200, profile_path=profile)
        assert isinstance(done.state, Done), done.state

        def done_step() -> None:
            done.on_step_begin()
            done.on_step_end()

        results["done"] = per_step_ns(done_step, args.steps)
        done.on_train_end()
        del done

        ready = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), wait_steps=100 * args.steps)
        assert isinstance(ready.state, Ready), ready.state

        def ready_step() -> None:
            ready.on_step_begin()
            ready.on_step_end()

        results["ready"] = per_step_ns(ready_step, args.steps)
        assert isinstance(ready.state, Ready), ready.state
        ready.on_train_end()

    for state, ns in results.items():
        print(f"{state:5s}: {ns / 1000:.3f} us per step (on_step_begin + on_step_end), goal < 2 us")
    if args.json:
        print(json.dumps({f"{state}_us_per_step": round(ns / 1000, 4) for state, ns in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
