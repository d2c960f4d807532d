#!/usr/bin/env python3
"""Cost of ZeusMonitor.begin_window + end_window from Python, on 1 and 8 emulated GPUs.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_monitor_bench.py [--pairs N] [--build-dir build]

Each configuration writes its own scenario (A40s drawing 236 W, energy counter updated continuously,
emulated time running 1000x faster than real time so that even a microsecond window moves the counter:
every window is a plain counter read, never the short-window path) and times N begin_window/end_window pairs with
sync_execution=False (no framework in the loop). Prints microseconds per pair (median of 5 runs), and
for comparison the native pair cost alone (zeus._native.monitor.Monitor). Goal: < 20 us per pair on
8 GPUs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

A40 = {
    "name": "NVIDIA A40", "architecture": "ampere", "min_power_limit_w": 100, "max_power_limit_w": 300,
    "default_power_limit_w": 300, "energy_counter": True, "power_w": 236, "counter_update_period_ms": 0,
}


def measure(pairs: int) -> None:
    """Runs in a child process whose environment points at the scenario."""
    from zeus.monitor import ZeusMonitor

    monitor = ZeusMonitor(cpu_indices=[])
    native = monitor._native
    for _ in range(1000):  # warm up
        monitor.begin_window("w", sync_execution=False)
        monitor.end_window("w", sync_execution=False)
    python_runs, native_runs = [], []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(pairs):
            monitor.begin_window("w", sync_execution=False)
            monitor.end_window("w", sync_execution=False)
        python_runs.append((time.perf_counter() - start) / pairs * 1e6)
        start = time.perf_counter()
        for _ in range(pairs):
            native.begin_window("w")
            native.end_window("w")
        native_runs.append((time.perf_counter() - start) / pairs * 1e6)
    print(json.dumps({"gpus": len(monitor.gpu_indices), "zeus_monitor_us": statistics.median(python_runs),
                      "native_us": statistics.median(native_runs)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20000)
    parser.add_argument("--build-dir", default=os.environ.get("ZEUS_BUILD_DIR", "build"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        measure(args.pairs)
        return
    library = Path(args.build_dir).resolve() / "lib" / "libzeus-nvml-emulator.so"
    if not library.exists():
        sys.exit(f"{library} is missing: build the project first")
    print(f"begin_window + end_window from Python ({args.pairs} pairs, median of 5 runs, sync_execution=False)")
    for count in (1, 8):
        with tempfile.TemporaryDirectory() as tmp:
            scenario = Path(tmp) / "scenario.json"
            scenario.write_text(json.dumps({"time_scale": 1000, "state_file": str(Path(tmp) / "state"),
                                            "gpus": [A40] * count}))
            env = {**os.environ, "ZEUS_NVML_LIBRARY": str(library), "ZEUS_EMULATOR_CONFIG": str(scenario)}
            env.pop("CUDA_VISIBLE_DEVICES", None)
            out = subprocess.run([sys.executable, __file__, "--child", "--pairs", str(args.pairs)], env=env,
                                 check=True, capture_output=True, text=True).stdout
            result = json.loads(out)
            print(f"  {result['gpus']} GPU{'s' if result['gpus'] > 1 else ' '}: "
                  f"ZeusMonitor {result['zeus_monitor_us']:6.2f} us/pair, native {result['native_us']:6.2f} us/pair")


if __name__ == "__main__":
    main()
