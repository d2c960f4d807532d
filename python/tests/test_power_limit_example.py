"""examples/python/power_limit_training.py runs as documented on the emulator (the README's scenario)."""

from __future__ import annotations

import os
import subprocess

from conftest import EMULATOR_LIBRARY, PYTHON, PYTHON_DIR, SOURCE_DIR


def test_the_power_limit_example_runs_on_the_emulator(tmp_path):
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env["ZEUS_NVML_LIBRARY"] = str(EMULATOR_LIBRARY)
    env["ZEUS_EMULATOR_CONFIG"] = str(SOURCE_DIR / "examples" / "emulated-training.json")
    env["TMPDIR"] = str(tmp_path)  # the scenario's state file goes here, not in a shared /tmp
    env["PYTHONPATH"] = str(PYTHON_DIR)
    example = SOURCE_DIR / "examples" / "python" / "power_limit_training.py"
    proc = subprocess.run([PYTHON, "-W", "ignore", str(example)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "epoch 3:" in proc.stdout
    assert "chosen power limit:" in proc.stdout
    assert list(tmp_path.glob("zeus-nvml-emulator-*.state")), "the example did not use the emulator"
