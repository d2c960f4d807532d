"""The usage snippets of Zeus's documentation for ZeusMonitor, GlobalPowerLimitOptimizer and BatchSizeOptimizer,
run as user scripts (unchanged apart from ``.cuda()`` and the names they leave to the reader, such as the model and
the data) in a fresh interpreter on emulated GPUs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import A40_WORKLOAD, a40
from test_batch_size_optimizer import bso_server  # noqa: F401 (a fixture: a real zeus bso-server)

# What the reader supplies around the snippets: a tiny model and data on the CPU.
PRELUDE = '''
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_dataloader = DataLoader(TensorDataset(torch.randn(64, 3, 8, 8), torch.randint(0, 10, (64,))), batch_size=1)

def train_step(x, y):
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
'''


def run_script(source: str, tmp_path: Path, subprocess_env: dict[str, str]) -> str:
    # The emulator's variables are set after subprocess_env was built: take them from os.environ now.
    env = {**os.environ, "PYTHONPATH": subprocess_env["PYTHONPATH"], "PYTHONWARNINGS": "ignore"}
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(source))
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_zeus_monitor_snippet(emulator, subprocess_env, tmp_path: Path) -> None:
    emulator([a40(workload=A40_WORKLOAD) for _ in range(4)], counter_update_period_ms=0)
    out = run_script('''
        from zeus.monitor import ZeusMonitor

        # All four GPUs are measured simultaneously.
        monitor = ZeusMonitor(gpu_indices=[0,1,2,3])

        # Measure total time and energy within the window.
        monitor.begin_window("heavy computation")
        # ... Four GPUs consuming energy like crazy!
        measurement = monitor.end_window("heavy computation")
        print(f"Energy: {measurement.total_energy} J")
        print(f"Time  : {measurement.time} s")
        print(sorted(measurement.gpu_energy))
    ''', tmp_path, subprocess_env)
    assert re.search(r"^Energy: \d+(\.\d+)?(e-?\d+)? J$", out, re.MULTILINE), out
    assert re.search(r"^Time  : \d+(\.\d+)?(e-?\d+)? s$", out, re.MULTILINE), out
    assert "[0, 1, 2, 3]" in out


def test_global_power_limit_optimizer_snippet(emulator, subprocess_env, tmp_path: Path) -> None:
    emulator([a40(workload=A40_WORKLOAD)], counter_update_period_ms=0)
    out = run_script(PRELUDE + '''
from zeus.monitor import ZeusMonitor
from zeus.optimizer.power_limit import GlobalPowerLimitOptimizer

# Data parallel training with four GPUs (here: one emulated GPU, the current device).
monitor = ZeusMonitor(gpu_indices=[0])
plo = GlobalPowerLimitOptimizer(monitor)

for epoch in range(2):
    plo.on_epoch_begin()

    for _ in range(5):
        for x, y in train_dataloader:
            plo.on_step_begin()
            train_step(x, y)  # Learn from x and y!
            plo.on_step_end()

    plo.on_epoch_end()

print(type(plo.state).__name__, plo.state.optimal_power_limit)
print(len(plo.measurements))
''', tmp_path, subprocess_env)
    # Defaults: 1 wait step, then 10 warm-up and 40 profiled steps per limit, 300 W down to 100 W by 25 W:
    # 1 + 9 x 50 = 451 steps < 2 epochs x 320 steps, so profiling ends in the second epoch.
    state, limit_mw = out.split("\n")[0].split()
    assert state == "Done"
    assert int(limit_mw) in {w * 1000 for w in range(100, 301, 25)}
    assert out.split("\n")[1] == "9"


def test_batch_size_optimizer_snippet(bso_server, emulator, subprocess_env, tmp_path: Path) -> None:  # noqa: F811
    emulator([a40(workload=A40_WORKLOAD)], counter_update_period_ms=0)
    out = run_script(PRELUDE + f'''
from zeus.monitor import ZeusMonitor
from zeus.optimizer.batch_size import BatchSizeOptimizer, JobSpec

max_epochs = 3

def train_one_epoch(loader, batch_size):
    for x, y in loader:
        train_step(x, y)

def validate():
    return 0.95  # the target is reached after the first epoch

# Monitor the GPU that this process uses.
monitor = ZeusMonitor(gpu_indices=[0])

# The batch size optimizer client for one job.
bso = BatchSizeOptimizer(
    monitor=monitor,
    server_url="{bso_server.url}",
    job=JobSpec(
        job_id_prefix="mnist-dev",
        default_batch_size=256,
        batch_sizes=[32, 64, 256, 512, 1024, 4096, 2048],
        max_epochs=max_epochs,
        target_metric=0.9,
    ),
)

# Get the batch size to use from the server.
batch_size = bso.get_batch_size()

# Start measuring the energy and time of this training run.
bso.on_train_begin()

for epoch in range(max_epochs):
    train_one_epoch(train_dataloader, batch_size)
    acc = validate()

    # Report the validation metric; the server decides whether to stop.
    bso.on_evaluate(acc)
    if bso.training_finished:
        break

print(batch_size, bso.trial_number, bso.cur_epoch, bso.training_finished)
''', tmp_path, subprocess_env)
    # The first run of a new job explores the default batch size (trial 1) and stops once the target is reached.
    assert out.split() == ["256", "1", "1", "True"], out
