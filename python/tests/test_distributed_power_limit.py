"""GlobalPowerLimitOptimizer under torch.distributed (gloo, CPU): ``python3 -m torch.distributed.run
--nproc_per_node 2``, each rank on its own emulated GPU (CUDA_VISIBLE_DEVICES=<rank>). Both ranks must choose the
same limit: the optimum of the energy summed over the ranks and the slowest rank's time, which is neither GPU's
own optimum.

The two GPUs (limit W: power W), with iteration times t0 (GPU 0) and t1 (GPU 1); a step lasts max(t0, t1) on
both (ranks run in lockstep), and each GPU draws its power the whole step:

    limit   P0      P1      t0     t1     step T   energy per step (P0 + P1) x T
    300     300     300     0.8    0.8    0.8      480
    250     220     170     1.0    1.0    1.0      390
    200     160     142.4   1.25   1.25   1.25     378
    150     116.25  118.75  1.6    1.6    1.6      376     <- least summed energy
    100     90      100     2.0    2.5    2.5      475

Alone, GPU 0 uses the least energy per step at 100 W (90 x 2.0 = 180 < 186 < 200 ...) and GPU 1 at 250 W
(170 < 178 < 190 < 240 < 250 at 100 W with its own time). The job's Energy optimum is 150 W.

ZeusCost(0.5) counts both GPUs (max power 300 W x 2 = 600 W): 0.5 x E + 300 x T per step = 480, 495, 564, 668,
987.5 -> 300 W; with one GPU's max power (Zeus's world_size=1) it would be 0.5 x E + 150 x T = 360, 345, 376.5,
428, 612.5 -> 250 W.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from conftest import PYTHON, PYTHON_DIR
from test_power_limit_helpers import EXACT, gpu

TESTS_DIR = Path(__file__).resolve().parent

GPU0 = {"power_limits_w": [100, 150, 200, 250, 300], "power_w": [90, 116.25, 160, 220, 300],
        "iteration_time_s": [2.0, 1.6, 1.25, 1.0, 0.8]}
GPU1 = {"power_limits_w": [100, 150, 200, 250, 300], "power_w": [100, 118.75, 142.4, 170, 300],
        "iteration_time_s": [2.5, 1.6, 1.25, 1.0, 0.8]}

# Each rank trains twice (Energy, then ZeusCost(0.5)) and prints one JSON line per run.
WORKER = """
import json, os, sys, warnings
os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["LOCAL_RANK"]
import torch.distributed as dist
from test_power_limit_helpers import Emulator
from zeus.monitor import ZeusMonitor
from zeus.optimizer.power_limit import Done, Energy, GlobalPowerLimitOptimizer, ZeusCost
from zeus.utils import framework

warnings.simplefilter("ignore")
dist.init_process_group("gloo")
rank = dist.get_rank()
nvml_index = int(os.environ["CUDA_VISIBLE_DEVICES"])
monitor = ZeusMonitor(gpu_indices=[0])
emu = Emulator()
for selector in (Energy(), ZeusCost(0.5)):
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=selector, wait_steps=1, warmup_steps=1,
                                    profile_steps=2, pl_step=50)
    for step in range(1 + 5 * 3 + 1):
        plo.on_step_begin()
        # The step lasts as long as the slowest rank's GPU; rank 0 moves the shared manual clock.
        step_s = framework.all_reduce([emu.iteration_time_s(nvml_index)], "max")[0]
        if rank == 0:
            emu.advance(step_s)
        dist.barrier()
        plo.on_step_end()
    state = plo.state
    limit_in_force = emu.power_limit_w(nvml_index)
    plo.on_train_end()
    dist.barrier()
    results = os.path.join(os.environ["RESULT_DIR"], f"rank{rank}.jsonl")
    with open(results, "a") as out:
        out.write(json.dumps({"rank": rank, "selector": type(selector).__name__,
                      "done_w": state.optimal_power_limit / 1000 if isinstance(state, Done) else repr(state),
                      "limit_in_force_w": limit_in_force,
                      "restored_w": emu.power_limit_w(nvml_index),
                      "measurements": [[m.power_limit, m.energy, m.time] for m in plo.measurements]}) + "\\n")
dist.destroy_process_group()
"""

# Per window of 2 steps: limit -> (summed energy J, time s).
EXPECTED = {300: (960.0, 1.6), 250: (780.0, 2.0), 200: (756.0, 2.5), 150: (752.0, 3.2), 100: (950.0, 5.0)}


def test_two_ranks_choose_the_optimum_of_summed_energy_and_max_time(emulator, tmp_path):
    emulator([gpu(GPU0, power_limit_w=200), gpu(GPU1, power_limit_w=200)], **EXACT)
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), str(TESTS_DIR)])
    env["OMP_NUM_THREADS"] = "1"
    env["RESULT_DIR"] = str(tmp_path)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # --redirects/--tee 1: Debian's torch 1.13 on Python 3.11 turns their default "0" (and "3") into None (3.11
    # iterates only the one-bit members of an IntFlag) and fails; 1 copies the workers' stdout to --log_dir.
    proc = subprocess.run(
        [PYTHON, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
         "--master_port", str(port), "--redirects", "1", "--tee", "1", "--log_dir", str(tmp_path / "logs"),
         str(script)],
        env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = [json.loads(line) for rank in (0, 1) for line in (tmp_path / f"rank{rank}.jsonl").read_text().splitlines()]
    assert len(results) == 4, proc.stdout + proc.stderr
    by = {(r["rank"], r["selector"]): r for r in results}
    for rank in (0, 1):
        energy, cost = by[(rank, "Energy")], by[(rank, "ZeusCost")]
        assert energy["done_w"] == 150 and energy["limit_in_force_w"] == 150, energy
        assert cost["done_w"] == 300 and cost["limit_in_force_w"] == 300, cost
        for r in (energy, cost):
            assert r["restored_w"] == 200
            measured = {w: (e, t) for w, e, t in r["measurements"]}
            assert sorted(measured) == sorted(EXPECTED)
            for limit, (e, t) in EXPECTED.items():
                assert measured[limit][0] == pytest.approx(e, abs=5e-3), (rank, limit)
                assert measured[limit][1] == pytest.approx(t, abs=1e-6), (rank, limit)
