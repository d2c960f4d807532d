"""zeus.monitor.process.ProcessEnergyMonitor on emulated GPUs with scenario processes (fake PIDs named by a fake
/proc tree under ZEUS_PROC_ROOT): the split is exact on the manual clock, labels come from the cgroups, and the
parts add up."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import a40
from test_monitor_helpers import EmulatorControl, a40_busy
from test_monitor_helpers import close_devices_after_test  # noqa: F401 (an autouse fixture)
from zeus.monitor.process import ProcessEnergyMonitor

SLURM_CGROUP = "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n"
POD_CGROUP = (
    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/"
    "cri-containerd-4d6f1c2b3a59687766554433221100ffeeddccbbaa99887766554433221100ab.scope\n"
)


def write_process(root: Path, pid: int, comm: str, start: int, cgroup: str) -> None:
    d = root / str(pid)
    d.mkdir(parents=True)
    rest = "0 -1 4194304 100 0 0 0 5 1 0 0 20 0 4 0"
    (d / "stat").write_text(f"{pid} ({comm}) S 1 {pid} {pid} {rest} {start} 4096000 2500 0 0 0 0\n")
    (d / "status").write_text(f"Name:\t{comm}\nPid:\t{pid}\nPPid:\t1\nUid:\t0\t0\t0\t0\n")
    (d / "comm").write_text(comm + "\n")
    (d / "cgroup").write_text(cgroup)


@pytest.fixture
def shared_gpu(emulator, tmp_path, monkeypatch):
    proc = tmp_path / "proc"
    write_process(proc, 4242, "train", 5000, SLURM_CGROUP)
    write_process(proc, 4343, "serve", 6000, POD_CGROUP)
    monkeypatch.setenv("ZEUS_PROC_ROOT", str(proc))
    busy = a40_busy(idle_power_w=50, processes=[{"pid": 4242, "sm_util_percent": 75},
                                                 {"pid": 4343, "sm_util_percent": 25}])
    emulator([busy, a40(power_w=80, idle_power_w=50)], clock="manual")
    return EmulatorControl()


def test_three_to_one_utilization_gets_three_to_one_of_the_active_energy(shared_gpu) -> None:
    monitor = ProcessEnergyMonitor(update_period=0.05, idle_power_w={"NVIDIA A40": 50})
    shared_gpu.advance(2.0)
    monitor.stop()
    snap = monitor.snapshot()
    gpu0 = next(g for g in snap.gpus if g.gpu == 0)
    # 236 W for 2 s, 50 W of it idle: 372 J active, split 3:1.
    assert gpu0.measured_energy_j == pytest.approx(472.0, abs=1e-3)
    assert gpu0.idle_energy_j == pytest.approx(100.0, abs=1e-3)
    procs = {p.pid: p for p in snap.processes if p.gpu == 0}
    assert set(procs) == {4242, 4343}
    assert procs[4242].energy_j == pytest.approx(279.0, abs=1e-3)
    assert procs[4343].energy_j == pytest.approx(93.0, abs=1e-3)
    for g in snap.gpus:
        parts = g.idle_energy_j + g.unattributed_energy_j + g.other_energy_j + g.ended_energy_j
        parts += sum(p.energy_j for p in snap.processes if p.gpu == g.gpu)
        assert parts == pytest.approx(g.measured_energy_j, abs=1e-9)


def test_labels_come_from_the_cgroups(shared_gpu) -> None:
    monitor = ProcessEnergyMonitor()
    shared_gpu.advance(1.0)
    monitor.stop()
    procs = {p.pid: p for p in monitor.snapshot().processes}
    assert procs[4242].comm == "train"
    assert procs[4242].slurm_job_id == "4242"
    assert procs[4242].slurm_step == "0"
    assert procs[4242].start_time == 5000
    assert procs[4343].pod == "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
    assert procs[4343].container.startswith("4d6f1c2b")
    assert procs[4343].slurm_job_id == ""


def test_bad_arguments_raise(shared_gpu) -> None:
    with pytest.raises(ValueError, match="update_period"):
        ProcessEnergyMonitor(update_period=0)
    with pytest.raises(ValueError, match="max_processes"):
        ProcessEnergyMonitor(max_processes=0)


def test_a_hostile_process_name_is_valid_text(emulator, tmp_path, monkeypatch) -> None:
    # Any user can name a process with any bytes (prctl(PR_SET_NAME)), and the kernel cuts names at 15 bytes,
    # inside a character: snapshot() must still give str, not raise UnicodeDecodeError.
    proc = tmp_path / "proc"
    hostile = b"\xe6\x97\xa5\x1b[31mev\xff\x80il\xe6\x97"
    write_process(proc, 4242, "placeholder", 5000, SLURM_CGROUP)
    d = proc / "4242"
    (d / "comm").write_bytes(hostile + b"\n")
    (d / "stat").write_bytes((d / "stat").read_bytes().replace(b"placeholder", hostile))
    monkeypatch.setenv("ZEUS_PROC_ROOT", str(proc))
    emulator([a40_busy(idle_power_w=50, processes=[{"pid": 4242, "sm_util_percent": 75}])], clock="manual")
    control = EmulatorControl()
    monitor = ProcessEnergyMonitor(update_period=0.05)
    control.advance(1.0)
    monitor.stop()
    procs = {p.pid: p for p in monitor.snapshot().processes}
    # Each ill-formed sequence is one U+FFFD, as Python's own decoder replaces them.
    assert procs[4242].comm == hostile.decode("utf-8", errors="replace")
    assert procs[4242].comm == "\u65e5\x1b[31mev\ufffd\ufffdil\ufffd"
