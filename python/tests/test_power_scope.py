"""GPU power scope on an emulated Grace Hopper (GH200) superchip, as user scripts in fresh interpreters.

The scenario is the project's example (examples/gh200.json: GPU 600 W, Grace CPU 100 W, its memory 20 W) on the
emulator's manual clock, which the script moves itself, so every figure is a hand calculation:

* a driver that offers the GPU scope: Zeus reads the GPU's 600 W, not the module's 720 W that the plain
  nvmlDeviceGetPowerUsage reports, and PowerMonitor and ZeusMonitor energies are 600 W x T;
* a driver that offers only the module scope (as Zeus observed on GH200): 720 W, energy 720 W x T, and exactly one
  warning, through the ``zeus`` logger."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import SOURCE_DIR

GPU_W = 600.0
MODULE_W = 600.0 + 100.0 + 20.0


def gh200_scenario(tmp_path: Path, gpu_scope: bool) -> Path:
    """examples/gh200.json on a manual clock with its own state file, optionally without the GPU scope."""
    text = (SOURCE_DIR / "examples" / "gh200.json").read_text()
    scenario = json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))
    scenario["clock"] = "manual"
    scenario["state_file"] = str(tmp_path / "emulator-state")
    scenario["counter_update_period_ms"] = 0  # the counter moves continuously: exact energies
    if not gpu_scope:
        scenario["gpus"][0]["unsupported"] = ["gpu_scope_power"]
    path = tmp_path / "gh200.json"
    path.write_text(json.dumps(scenario))
    return path


SCRIPT = '''
import ctypes, logging, os, sys, warnings

records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record)
logging.getLogger("zeus").addHandler(Keep())
warnings.simplefilter("always")

with warnings.catch_warnings(record=True) as caught:
    from zeus.monitor import PowerMonitor, ZeusMonitor

    emulator = ctypes.CDLL(os.environ["ZEUS_NVML_LIBRARY"])  # the NVML Zeus loaded: move its clock
    emulator.zeusEmulatorAdvanceTimeNs.argtypes = [ctypes.c_ulonglong]

    monitor = ZeusMonitor(gpu_indices=[0])
    power = PowerMonitor(gpu_indices=[0], update_period=0.1)
    monitor.begin_window("step")
    start = power.time()
    assert emulator.zeusEmulatorAdvanceTimeNs(3 * 10**9) == 0
    end = power.time()
    measurement = monitor.end_window("step")
    print("power_w", power.get_power()[0])
    print("power_energy_j", power.get_energy(start, end)[0])
    print("window_s", end - start)
    print("zeus_energy_j", measurement.gpu_energy[0])
    print("zeus_time_s", measurement.time)
    power.stop()

scope = [r for r in records if "GPU scope not supported" in r.getMessage()]
print("scope_log_records", len(scope))
print("scope_log_levels", ",".join(sorted({r.levelname for r in scope})))
print("scope_log_loggers", ",".join(sorted({r.name for r in scope})))
print("scope_warnings", sum("GPU scope" in str(w.message) for w in caught))
'''


def run(tmp_path: Path, scenario: Path, subprocess_env: dict[str, str]) -> dict[str, str]:
    env = {**subprocess_env, "ZEUS_NVML_LIBRARY": str(Path(os.environ.get("ZEUS_BUILD_DIR", SOURCE_DIR / "build"))
                                                       / "lib" / "libzeus-nvml-emulator.so"),
           "ZEUS_EMULATOR_CONFIG": str(scenario)}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(line.split(" ", 1) if " " in line else (line, "") for line in done.stdout.splitlines())


def test_gpu_scope_on_gh200_measures_the_gpu_alone(tmp_path: Path, subprocess_env: dict[str, str]) -> None:
    out = run(tmp_path, gh200_scenario(tmp_path, gpu_scope=True), subprocess_env)
    assert float(out["window_s"]) == 3.0
    assert float(out["power_w"]) == GPU_W  # not the module's 720 W
    assert float(out["power_energy_j"]) == GPU_W * 3.0
    assert float(out["zeus_time_s"]) == 3.0
    assert abs(float(out["zeus_energy_j"]) - GPU_W * 3.0) <= 0.001  # the counter counts whole mJ
    assert out["scope_log_records"] == "0" and out["scope_warnings"] == "0"


def test_module_only_driver_reads_the_module_with_one_warning(tmp_path: Path,
                                                             subprocess_env: dict[str, str]) -> None:
    out = run(tmp_path, gh200_scenario(tmp_path, gpu_scope=False), subprocess_env)
    assert float(out["window_s"]) == 3.0
    assert float(out["power_w"]) == MODULE_W
    assert float(out["power_energy_j"]) == MODULE_W * 3.0
    assert abs(float(out["zeus_energy_j"]) - MODULE_W * 3.0) <= 0.001  # the counter counts the module too
    # Exactly one warning, though ZeusMonitor and PowerMonitor both opened the GPU and read its power many times.
    assert out["scope_log_records"] == "1"
    assert out["scope_log_levels"] == "WARNING"
    assert out["scope_log_loggers"] == "zeus.device"
    assert out["scope_warnings"] == "0"
