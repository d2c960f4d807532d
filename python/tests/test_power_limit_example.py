"""examples/python/power_limit_training.py runs as documented on the emulator (the README's scenario, `make demo`):
on a curve Zeus's authors measured (examples/power-limit-demo.json) the optimizer keeps a limit below the default
and the saving it prints is the one its own profile measured."""

from __future__ import annotations

import os
import re
import subprocess

from conftest import EMULATOR_LIBRARY, PYTHON, PYTHON_DIR, SOURCE_DIR


def test_the_power_limit_example_runs_on_the_emulator_and_saves_energy(tmp_path):
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env["ZEUS_NVML_LIBRARY"] = str(EMULATOR_LIBRARY)
    env["ZEUS_EMULATOR_CONFIG"] = str(SOURCE_DIR / "examples" / "power-limit-demo.json")
    env["TMPDIR"] = str(tmp_path)  # the scenario's state file goes here, not in a shared /tmp
    env["PYTHONPATH"] = str(PYTHON_DIR)
    example = SOURCE_DIR / "examples" / "python" / "power_limit_training.py"
    proc = subprocess.run([PYTHON, "-W", "ignore", str(example)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "epoch 3:" in out
    assert list(tmp_path.glob("zeus-nvml-emulator-*.state")), "the example did not use the emulator"

    profile = {int(w): (float(e), float(t))
               for w, e, t in re.findall(r"^\s+(\d+) W:\s+([\d.]+) J\s+([\d.]+) s$", out, re.MULTILINE)}
    assert sorted(profile) == list(range(100, 301, 25)), out  # every limit, from the default 300 W down
    chosen = re.search(r"^chosen power limit: (\d+) W$", out, re.MULTILINE)
    assert chosen, out
    chosen_w = int(chosen.group(1))
    # On this curve more power than ~200 W buys almost no speed: the cost optimum is well below the default.
    assert chosen_w < 300, out
    saving = re.search(r"^at (\d+) W instead of the default (\d+) W, a step takes ([-\d.]+)% less energy and "
                       r"([-\d.]+)% more time$", out, re.MULTILINE)
    assert saving, out
    assert (int(saving.group(1)), int(saving.group(2))) == (chosen_w, 300)
    # The figures are the run's own profile, not written in the example.
    (e_chosen, t_chosen), (e_default, t_default) = profile[chosen_w], profile[300]
    # (the profile is printed to 0.1 J and 0.01 s: a window of about 3.5 s reads within 0.3 points)
    assert abs(float(saving.group(3)) - 100 * (1 - e_chosen / e_default)) < 0.1, out
    assert abs(float(saving.group(4)) - 100 * (t_chosen / t_default - 1)) < 0.3, out
    assert float(saving.group(3)) > 0, out
