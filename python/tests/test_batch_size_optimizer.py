"""zeus.optimizer.batch_size against a real ``zeus bso-server`` on an emulated GPU.

Costs are made exact: the emulator's clock is manual (each epoch advances it by EPOCH_S), its energy counter moves
continuously, the GPU draws A40_WORKLOAD's 236 W at its 300 W limit, and eta_knob = 1, so a run's cost is its
energy, 236 W x EPOCH_S x epochs, whatever the wall clock does.
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import socket
import subprocess
import textwrap
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Iterator, Optional, Union

import pytest

from conftest import A40_WORKLOAD, EMULATOR_LIBRARY, PYTHON, SOURCE_DIR, ZEUS_BINARY, a40
from zeus.exception import ZeusBSOConfigError
from zeus.monitor import ZeusMonitor
from zeus.optimizer.batch_size import BatchSizeOptimizer, CreatedJob, JobSpec
from zeus.optimizer.batch_size.exceptions import (
    ZeusBSOBadOperationError,
    ZeusBSOOperationOrderError,
    ZeusBSORuntimError,
    ZeusBSOTrainFailError,
)

EPOCH_S = 10
READY_DEADLINE_S = 60


class Server:
    """A ``zeus bso-server`` process on a free port with its own SQLite database."""

    def __init__(self, tmp_path: Path) -> None:
        ready_file = tmp_path / "bso-ready"
        self.stderr_path = tmp_path / "bso-server.log"
        self._stderr = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            [str(ZEUS_BINARY), "bso-server", "--listen", "127.0.0.1:0", "--database",
             f"sqlite:///{tmp_path / 'bso.db'}", "--threads", "2", "--no-access-log", "--log-level", "warn",
             "--ready-file", str(ready_file)],
            stdout=subprocess.DEVNULL, stderr=self._stderr)
        deadline = time.monotonic() + READY_DEADLINE_S
        self.url = ""
        while not self.url:
            self._check_alive_before(deadline, "write its ready file")
            if ready_file.exists():
                self.url = ready_file.read_text().strip()
            else:
                time.sleep(0.02)
        while not self._healthy():
            self._check_alive_before(deadline, "answer GET /healthz")
            time.sleep(0.02)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/healthz", timeout=5) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def _check_alive_before(self, deadline: float, what: str) -> None:
        if self.process.poll() is not None:
            pytest.fail(f"zeus bso-server exited ({self.process.returncode}) before it could {what}: "
                        f"{self.stderr_path.read_text()}")
        if time.monotonic() > deadline:
            pytest.fail(f"zeus bso-server did not {what} within {READY_DEADLINE_S} s: {self.stderr_path.read_text()}")

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self._stderr.close()


@pytest.fixture
def bso_server(tmp_path: Path) -> Iterator[Server]:
    assert ZEUS_BINARY.exists(), f"{ZEUS_BINARY} is missing: build the project first (make)"
    server = Server(tmp_path)
    yield server
    server.stop()


@pytest.fixture
def gpu(emulator: Callable[..., Path]) -> Callable[[float], None]:
    """One emulated A40 on a manual clock; returns advance(seconds)."""
    emulator([a40(workload=A40_WORKLOAD)], clock="manual", counter_update_period_ms=0)
    library = ctypes.CDLL(str(EMULATOR_LIBRARY))
    library.zeusEmulatorAdvanceTimeNs.argtypes = [ctypes.c_ulonglong]

    def advance(seconds: float) -> None:
        assert library.zeusEmulatorAdvanceTimeNs(int(seconds * 1e9)) == 0

    return advance


def make_job(**overrides: object) -> JobSpec:
    fields: dict[str, object] = dict(
        job_id="pruning-1", job_id_prefix="pruning", batch_sizes=[8, 16, 32, 64, 128, 256], default_batch_size=128,
        eta_knob=1.0, beta_knob=None, target_metric=0.5, max_epochs=3, mab_seed=7)
    fields.update(overrides)
    return JobSpec(**fields)  # type: ignore[arg-type]


def recurrence(monitor: ZeusMonitor, url: str, job: JobSpec, advance: Callable[[float], None],
               epochs_to_converge: Union[Optional[int], dict[int, Optional[int]]]) -> tuple[int, int, Optional[str]]:
    """One run, as a Zeus user writes it: (batch size, trial number, the TrainFail message or None).
    ``epochs_to_converge`` (None: never) may depend on the batch size the run gets (a dict)."""
    bso = BatchSizeOptimizer(monitor=monitor, server_url=url, job=job)
    batch_size = bso.get_batch_size()
    if isinstance(epochs_to_converge, dict):
        epochs_to_converge = epochs_to_converge[batch_size]
    bso.on_train_begin()
    try:
        for epoch in range(1, job.max_epochs + 1):
            advance(EPOCH_S)
            converged = epochs_to_converge is not None and epoch >= epochs_to_converge
            bso.on_evaluate(0.9 if converged else 0.1)
            if bso.training_finished:
                break
    except ZeusBSOTrainFailError as e:
        assert bso.training_finished
        return batch_size, bso.trial_number, str(e)
    assert bso.training_finished
    return batch_size, bso.trial_number, None


def test_recurrences_follow_the_pruning_order_then_thompson_sampling(bso_server: Server, gpu) -> None:
    job = make_job()
    monitor = ZeusMonitor(gpu_indices=[0])
    # Epochs each visit needs to converge (None: never), per batch size, in visit order. Worked out by hand from
    # the pruning rules (docs/batch-size-service.md, zeus-reference A10), the case of Zeus's test_explorer.py:
    # round 1 starts at the default 128 and goes down 128, 64, 32, 16, 8 (8 fails: stop going down), then up 256.
    # The cheapest converged run is 32's (1 epoch), so round 2 starts at 32 over the converged {16, 32, 64, 128,
    # 256}: down 32, 16 (fails now), then up 64, 128, 256 (fails now). Thompson sampling gets {32, 64, 128}.
    plan = {8: [None], 16: [2, None], 32: [1, 1], 64: [2, 2], 128: [3, 3], 256: [3, None]}
    expected = [128, 64, 32, 16, 8, 256, 32, 16, 64, 128, 256]
    seen: list[int] = []
    failures: list[tuple[int, Optional[str]]] = []
    for trial in range(1, len(expected) + 1):
        # The run's outcome is the plan's for the batch size it should get; a wrong batch size fails below.
        outcome = plan[expected[len(seen)]].pop(0)
        bs, trial_number, failure = recurrence(monitor, bso_server.url, job, gpu, outcome)
        assert bs == expected[len(seen)], f"explored {seen + [bs]}, expected {expected}"
        seen.append(bs)
        assert trial_number == trial
        failures.append((bs, failure))
    assert seen == expected
    assert [bs for bs, f in failures if f is not None] == [8, 16, 256]
    for _, failure in failures:
        assert failure in (None, "Train failed to converge within max_epoch(3)")
    # Then every run is one of the arms.
    for trial in range(len(expected) + 1, len(expected) + 4):
        bs, trial_number, failure = recurrence(monitor, bso_server.url, job, gpu, 1)
        assert bs in (32, 64, 128)
        assert trial_number == trial
        assert failure is None


def test_a_zeus_robust_job_explores_one_pruning_round_that_stops_past_the_optimum(bso_server: Server, gpu) -> None:
    # The same job and the same outcomes (epochs to converge per batch size, None: never; a run's cost is
    # proportional to its epochs) under both policies, as two jobs on one server.
    epochs = {8: None, 16: 2, 32: 1, 64: 2, 128: 3, 256: 3}
    monitor = ZeusMonitor(gpu_indices=[0])

    def explore(job: JobSpec, runs: int) -> list[int]:
        seen: list[int] = []
        for trial in range(1, runs + 1):
            bs, trial_number, _ = recurrence(monitor, bso_server.url, job, gpu, epochs)
            seen.append(bs)
            assert trial_number == trial
        return seen

    # zeus (by hand, as in test_recurrences_follow_the_pruning_order_then_thompson_sampling): round 1 goes down
    # 128, 64, 32, 16, 8 (8 fails), then up to 256.
    assert explore(make_job(job_id="pruning-zeus"), 6) == [128, 64, 32, 16, 8, 256]
    # zeus-robust (stop ratio 1.5, patience 1; costs in epochs): down 128 (3), 64 (2), 32 (1, the least), 16 (2 >
    # 1.5 x 1: past the optimum, the direction ends, 16 is kept); "up" is skipped since the start 128 cost 3 > 1.5 x
    # 1. That was the only round: 8 and 256 are never run, and Thompson sampling draws from {16, 32, 64, 128}.
    robust = make_job(job_id="pruning-robust", policy="zeus-robust")
    seen = explore(robust, 8)
    assert seen[:4] == [128, 64, 32, 16]
    assert set(seen[4:]) <= {16, 32, 64, 128}, f"explored {seen}"
    assert BatchSizeOptimizer(monitor=monitor, server_url=bso_server.url, job=robust).job.policy == "zeus-robust"


def test_the_job_is_registered_with_the_gpu_configuration(bso_server: Server, gpu) -> None:
    bso = BatchSizeOptimizer(monitor=ZeusMonitor(gpu_indices=[0]), server_url=bso_server.url,
                             job=make_job(job_id=None))
    job = bso.job
    assert isinstance(job, CreatedJob)
    assert job.job_id is not None and job.job_id.startswith("pruning-")
    assert (job.max_power, job.number_of_gpus, job.gpu_model) == (300.0, 1, "NVIDIA A40")
    assert (bso.current_batch_size, bso.trial_number, bso.cur_epoch, bso.training_finished) == (0, 0, 0, False)
    assert bso.get_batch_size() == 128
    assert bso.get_batch_size() == 128  # cached: still trial 1
    assert (bso.current_batch_size, bso.trial_number) == (128, 1)


def test_the_registered_job_id_is_logged_so_a_user_can_reuse_it(bso_server: Server, gpu,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="zeus")
    monitor = ZeusMonitor(gpu_indices=[0])
    bso = BatchSizeOptimizer(monitor=monitor, server_url=bso_server.url, job=make_job(job_id=None))
    job_id = bso.job.job_id
    registered = [r for r in caplog.records if r.name == "zeus.optimizer.batch_size.client"]
    assert len(registered) == 1 and registered[0].levelno == logging.INFO
    assert job_id in registered[0].getMessage() and bso_server.url in registered[0].getMessage()
    # The logged id continues the job: the next run gets trial 2.
    assert bso.get_batch_size() == 128
    bso.on_train_begin()
    gpu(1.0)  # an epoch of emulated time
    bso.on_evaluate(0.9)
    assert bso.training_finished
    again = BatchSizeOptimizer(monitor=monitor, server_url=bso_server.url, job=make_job(job_id=job_id))
    assert again.job.job_id == job_id
    assert again.get_batch_size() in make_job().batch_sizes and again.trial_number == 2
    # Other ranks register nothing and log nothing.
    caplog.clear()
    BatchSizeOptimizer(monitor=monitor, server_url=bso_server.url, job=make_job(job_id=job_id), rank=1)
    assert [r for r in caplog.records if r.name == "zeus.optimizer.batch_size.client"] == []


def test_a_run_that_does_not_converge_raises_train_fail_error(bso_server: Server, gpu) -> None:
    job = make_job(max_epochs=2)
    bso = BatchSizeOptimizer(monitor=ZeusMonitor(gpu_indices=[0]), server_url=bso_server.url, job=job)
    bso.get_batch_size()
    bso.on_train_begin()
    gpu(EPOCH_S)
    bso.on_evaluate(0.1)
    assert not bso.training_finished and bso.cur_epoch == 1
    gpu(EPOCH_S)
    with pytest.raises(ZeusBSOTrainFailError, match=r"^Train failed to converge within max_epoch\(2\)$"):
        bso.on_evaluate(0.2)
    assert bso.training_finished and bso.cur_epoch == 2
    assert bso.consumed_energy == pytest.approx(236 * 2 * EPOCH_S, rel=1e-6)
    bso.on_evaluate(0.9)  # finished: nothing more, as in Zeus
    assert bso.cur_epoch == 2


def test_a_job_whose_pruning_finds_nothing_that_converges_is_a_runtime_error(bso_server: Server, gpu) -> None:
    # Round 1 from the default 32: 32 fails (stop going down), then 64 fails: no batch size converged. The service
    # answers 409; Zeus's client raised ZeusBSORuntimError for any error answer, and so do we.
    job = make_job(batch_sizes=[32, 64], default_batch_size=32, max_epochs=1)
    monitor = ZeusMonitor(gpu_indices=[0])
    assert recurrence(monitor, bso_server.url, job, gpu, None)[:2] == (32, 1)
    assert recurrence(monitor, bso_server.url, job, gpu, None)[:2] == (64, 2)
    bso = BatchSizeOptimizer(monitor=monitor, server_url=bso_server.url, job=job)
    with pytest.raises(ZeusBSORuntimError, match="no batch size reached the target metric") as info:
        bso.get_batch_size()
    assert info.value.native_code == 409


def test_a_costly_run_is_early_stopped_with_train_fail_error(bso_server: Server, gpu) -> None:
    # beta 2: the first run (128) converges after 1 epoch, cost c; the next (64) passes 2c at its third epoch.
    job = make_job(beta_knob=2.0, max_epochs=5)
    monitor = ZeusMonitor(gpu_indices=[0])
    assert recurrence(monitor, bso_server.url, job, gpu, 1) == (128, 1, None)
    bs, trial, failure = recurrence(monitor, bso_server.url, job, gpu, None)
    assert (bs, trial) == (64, 2)
    assert failure is not None and failure.startswith("Batch Size(64) exceeded the cost upper bound")


def test_a_run_whose_process_exits_early_is_explored_again(bso_server: Server, gpu, tmp_path: Path,
                                                          subprocess_env: dict[str, str]) -> None:
    # As Zeus's atexit hook: a process that ends before its final report marks its trial failed, so the next run
    # explores the same batch size (a new trial), instead of getting a Concurrent trial of it.
    script = tmp_path / "quits.py"
    script.write_text(textwrap.dedent(f"""
        from zeus.monitor import ZeusMonitor
        from zeus.optimizer.batch_size import BatchSizeOptimizer, JobSpec
        job = JobSpec(job_id="pruning-1", job_id_prefix="pruning", batch_sizes=[8, 16, 32, 64, 128, 256],
                      default_batch_size=128, eta_knob=1.0, beta_knob=None, target_metric=0.5, max_epochs=3,
                      mab_seed=7)
        bso = BatchSizeOptimizer(monitor=ZeusMonitor(gpu_indices=[0]), server_url={bso_server.url!r}, job=job)
        print(bso.get_batch_size(), bso.trial_number)
        bso.on_train_begin()
    """))
    run = subprocess.run([PYTHON, "-W", "ignore", str(script)], env=subprocess_env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.split() == ["128", "1"]
    assert "marked it failed on the server" in run.stderr
    assert recurrence(ZeusMonitor(gpu_indices=[0]), bso_server.url, make_job(), gpu, 1) == (128, 2, None)


def test_hooks_out_of_order(bso_server: Server, gpu) -> None:
    bso = BatchSizeOptimizer(monitor=ZeusMonitor(gpu_indices=[0]), server_url=bso_server.url, job=make_job())
    with pytest.raises(ZeusBSOOperationOrderError, match=r"get_batch_size\(\) before on_evaluate"):
        bso.on_evaluate(0.9)
    with pytest.raises(ZeusBSOOperationOrderError, match=r"get_batch_size\(\) before on_train_begin"):
        bso.on_train_begin()


def test_other_ranks_cannot_ask_and_report_what_rank_0_copied(bso_server: Server, gpu) -> None:
    job = make_job()
    rank0 = BatchSizeOptimizer(monitor=ZeusMonitor(gpu_indices=[0]), server_url=bso_server.url, job=job)
    rank1 = BatchSizeOptimizer(monitor=ZeusMonitor(gpu_indices=[0]), server_url=bso_server.url, job=job, rank=1)
    with pytest.raises(ZeusBSOBadOperationError, match="Only rank 0"):
        rank1.get_batch_size()
    with pytest.raises(ZeusBSOOperationOrderError, match="Rank 1 has no batch size"):
        rank1.on_train_begin()
    # As a Zeus user does: copy rank 0's batch size and trial number to the other ranks.
    rank1.current_batch_size = rank0.get_batch_size()
    rank1.trial_number = rank0.trial_number
    rank0.current_batch_size = rank0.current_batch_size  # copying rank 0's own value back is harmless
    with pytest.raises(ZeusBSOBadOperationError, match="comes from the batch-size service"):
        rank0.current_batch_size = 64
    rank0.on_train_begin()
    rank1.on_train_begin()
    gpu(EPOCH_S)
    rank0.on_evaluate(0.9)
    rank1.on_evaluate(0.9)  # the trial has ended: the service answers with its outcome, converged
    assert rank0.training_finished and rank1.training_finished
    assert (rank1.current_batch_size, rank1.trial_number) == (128, 1)


def test_a_distributed_job_needs_a_job_id_on_other_ranks(bso_server: Server, gpu) -> None:
    rank1 = BatchSizeOptimizer(monitor=ZeusMonitor(gpu_indices=[0]), server_url=bso_server.url,
                               job=make_job(job_id=None), rank=1)
    rank1.current_batch_size, rank1.trial_number = 128, 1
    with pytest.raises(ZeusBSOConfigError, match="has no job_id"):
        rank1.on_train_begin()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_that_is_not_running_is_a_clear_error(gpu) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there any more
    with pytest.raises(ZeusBSORuntimError, match="cannot connect to " + url):
        BatchSizeOptimizer(monitor=ZeusMonitor(gpu_indices=[0]), server_url=url, job=make_job())


def test_a_bad_url_is_a_config_error(gpu) -> None:
    with pytest.raises(ZeusBSOConfigError):
        BatchSizeOptimizer(monitor=ZeusMonitor(gpu_indices=[0]), server_url="ftp://nowhere", job=make_job())


def serve_fake_bso(listener: socket.socket, requests: list[str]) -> None:
    """A minimal batch-size service in Python: one request per connection, every answer a success."""
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return  # closed: the test is over
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            method, target = lines[0].split(" ")[:2]
            length = next((int(line.split(":", 1)[1]) for line in lines[1:]
                           if line.lower().startswith("content-length:")), 0)
            while len(body) < length:
                body += conn.recv(65536)
            path = target.split("?")[0]
            requests.append(f"{method} {path}")
            if (method, path) == ("POST", "/jobs"):
                status, reply = 201, json.loads(body)
            elif (method, path) == ("GET", "/jobs/batch_size"):
                status, reply = 200, {"job_id": "pruning-1", "batch_size": 64, "trial_number": 1}
            else:
                status, reply = 200, {"stop_train": True, "converged": True, "message": "Train succeeded"}
            payload = json.dumps(reply).encode()
            conn.sendall(b"HTTP/1.1 %d OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                         b"Connection: close\r\n\r\n%s" % (status, len(payload), payload))


def test_http_calls_release_the_gil(gpu) -> None:
    # The service is a Python thread of this process: it can only answer while the native client waits without
    # the GIL. Were the GIL held, every request would time out instead (ZeusBSORuntimError after the retries).
    requests: list[str] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    thread = threading.Thread(target=serve_fake_bso, args=(listener, requests), daemon=True)
    thread.start()
    try:
        bso = BatchSizeOptimizer(monitor=ZeusMonitor(gpu_indices=[0]),
                                 server_url=f"http://127.0.0.1:{listener.getsockname()[1]}", job=make_job())
        assert bso.get_batch_size() == 64
        bso.on_train_begin()
        bso.on_evaluate(0.9)
        assert bso.training_finished
        assert requests == ["POST /jobs", "GET /jobs/batch_size", "POST /report"]
    finally:
        listener.close()


DISTRIBUTED_WORKER = textwrap.dedent("""
    import json, os, sys
    import torch.distributed as dist
    from zeus.monitor import ZeusMonitor
    from zeus.optimizer.batch_size.client import BatchSizeOptimizer
    from zeus.optimizer.batch_size.common import JobSpec

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    url, out = sys.argv[1], sys.argv[2]
    monitor = ZeusMonitor(gpu_indices=[rank])
    results = []

    # The helper: every rank calls get_batch_size(broadcast=True). job_id None: the broadcast carries it.
    job = JobSpec(job_id_prefix="ddp", batch_sizes=[16, 32, 64], default_batch_size=32, beta_knob=None,
                  max_epochs=2)
    bso = BatchSizeOptimizer(monitor=monitor, server_url=url, job=job, rank=rank)
    batch_size = bso.get_batch_size(broadcast=True)
    bso.on_train_begin()
    bso.on_evaluate(0.9)
    results.append([batch_size, bso.trial_number, bso.training_finished])

    # As Zeus's documentation has it: rank 0 asks, the user broadcasts and copies.
    job = JobSpec(job_id="ddp-zeus", job_id_prefix="ddp", batch_sizes=[16, 32, 64], default_batch_size=64,
                  beta_knob=None, max_epochs=2)
    bso = BatchSizeOptimizer(monitor=monitor, server_url=url, job=job, rank=rank)
    shared = [bso.get_batch_size(), bso.trial_number] if rank == 0 else [None, None]
    dist.broadcast_object_list(shared, src=0)
    bso.current_batch_size, bso.trial_number = shared
    bso.on_train_begin()
    failed = None
    try:
        bso.on_evaluate(0.1)
        dist.barrier()
        bso.on_evaluate(0.1)
    except Exception as e:
        failed = type(e).__name__
    results.append([bso.current_batch_size, bso.trial_number, failed])
    with open(f"{out}.{rank}", "w") as f:
        json.dump(results, f)
    dist.destroy_process_group()
""")


def test_two_torch_distributed_ranks_get_the_same_batch_size(bso_server: Server, emulator, tmp_path: Path,
                                                             subprocess_env: dict[str, str]) -> None:
    emulator([a40(workload=A40_WORKLOAD), a40(workload=A40_WORKLOAD)], clock="manual", counter_update_period_ms=0)
    worker = tmp_path / "worker.py"
    worker.write_text(DISTRIBUTED_WORKER)
    env = dict(subprocess_env, ZEUS_NVML_LIBRARY=os.environ["ZEUS_NVML_LIBRARY"],
               ZEUS_EMULATOR_CONFIG=os.environ["ZEUS_EMULATOR_CONFIG"], OMP_NUM_THREADS="1")
    out = tmp_path / "result"
    # --redirects/--tee 1: Debian's torch 1.13 on Python 3.11 reads their default "0" as None and fails (3.11's
    # IntFlag iterates only one-bit members); 1 copies the workers' stdout to --log_dir.
    run = subprocess.run(
        [PYTHON, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
         "--master_port", str(free_port()), "--redirects", "1", "--tee", "1", "--log_dir", str(tmp_path / "logs"),
         str(worker), bso_server.url, str(out)],
        env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    rank0 = json.loads(Path(f"{out}.0").read_text())
    rank1 = json.loads(Path(f"{out}.1").read_text())
    # Broadcast: the default batch size, trial 1, and both ranks finished (one report ended it, the other got
    # its outcome).
    assert rank0[0] == rank1[0] == [32, 1, True]
    # Zeus's way: the same trial on both ranks, and both raise ZeusBSOTrainFailError when it fails.
    assert rank0[1] == rank1[1] == [64, 1, "ZeusBSOTrainFailError"]


def test_the_example_runs_as_a_recurrence_of_its_job(bso_server: Server, emulator,
                                                     subprocess_env: dict[str, str]) -> None:
    emulator([a40(workload=A40_WORKLOAD)], time_scale=50)
    env = dict(subprocess_env, ZEUS_NVML_LIBRARY=os.environ["ZEUS_NVML_LIBRARY"],
               ZEUS_EMULATOR_CONFIG=os.environ["ZEUS_EMULATOR_CONFIG"], OMP_NUM_THREADS="1")
    run = subprocess.run([PYTHON, str(SOURCE_DIR / "examples" / "python" / "batch_size_optimizer.py"),
                          "--server-url", bso_server.url], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    # The first run of the job gets its default batch size; its data make it reach the target.
    assert run.stdout.startswith("Trial 1: batch size 64\n"), run.stdout
    assert "batch size 64 reached the target in 3 epochs" in run.stdout, run.stdout
