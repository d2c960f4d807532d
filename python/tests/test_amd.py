"""AMD Instinct GPUs through AMD SMI, on the emulator's AMD SMI face (libzeus-amdsmi-emulator.so): get_gpus()
and zeus.device.gpu.amd, ZeusMonitor's energy, the wrong-rate counter caught at open, and a training loop with
GlobalPowerLimitOptimizer that chooses the hand-computed optimum and restores the original limit."""

from __future__ import annotations

import ctypes
import gc
import json
import logging
import os
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import BUILD_DIR

from zeus.device.gpu.common import ZeusGPUNotSupportedError
from zeus.device.gpu import get_gpus
from zeus.device.gpu.amd import AMDGPU, AMDGPUs, amdsmi_is_available
from zeus.monitor import ZeusMonitor
from zeus.optimizer.power_limit import Done, Energy, GlobalPowerLimitOptimizer, OptimumSelector, ZeusCost

AMDSMI_EMULATOR = BUILD_DIR / "lib" / "libzeus-amdsmi-emulator.so"

# An MI300X-like board whose limits the optimizer profiles in three steps (pl_step=150): 750, 600, 450 W.
# Per training step at each limit (W -> power W, iteration s, energy J):
#   750 -> 680, 1.0, 680    600 -> 560, 1.05, 588    450 -> 430, 1.3, 559
WORKLOAD = {"power_limits_w": [450, 600, 750], "power_w": [430, 560, 680], "iteration_time_s": [1.3, 1.05, 1.0]}
ORIGINAL_LIMIT_W = 600


def mi300x(**overrides: Any) -> dict[str, Any]:
    gpu: dict[str, Any] = {
        "name": "AMD Instinct MI300X",
        "min_power_limit_w": 450,
        "max_power_limit_w": 750,
        "default_power_limit_w": 750,
        "energy_counter": True,
        "unsupported": ["average_power"],
    }
    gpu.update(overrides)
    return gpu


class AmdEmulator:
    """The AMD SMI emulator this process loaded (same handle: dlopen of the same path), read through AMD SMI's
    own C API so that the checks do not go through the code under test."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL(str(AMDSMI_EMULATOR))
        self.lib.zeusEmulatorAdvanceTimeNs.argtypes = [ctypes.c_ulonglong]
        self.lib.zeusEmulatorIterationTimeS.argtypes = [ctypes.c_uint, ctypes.POINTER(ctypes.c_double)]
        assert self.lib.amdsmi_init(ctypes.c_uint64(2)) == 0  # AMDSMI_INIT_AMD_GPUS; keeps the scenario loaded

    def close(self) -> None:
        self.lib.amdsmi_shut_down()

    def _handle(self, index: int) -> ctypes.c_void_p:
        count = ctypes.c_uint32(0)
        assert self.lib.amdsmi_get_socket_handles(ctypes.byref(count), None) == 0
        sockets = (ctypes.c_void_p * count.value)()
        assert self.lib.amdsmi_get_socket_handles(ctypes.byref(count), sockets) == 0
        one = ctypes.c_uint32(1)
        processor = (ctypes.c_void_p * 1)()
        assert self.lib.amdsmi_get_processor_handles(ctypes.c_void_p(sockets[index]), ctypes.byref(one), processor) == 0
        return ctypes.c_void_p(processor[0])

    def power_cap_w(self, index: int) -> float:
        info = (ctypes.c_uint64 * 8)()  # amdsmi_power_cap_info_t: power_cap (µW) first
        assert self.lib.amdsmi_get_power_cap_info(self._handle(index), ctypes.c_uint32(0), info) == 0
        return info[0] / 1e6

    def step(self, index: int = 0) -> None:
        seconds = ctypes.c_double()
        assert self.lib.zeusEmulatorIterationTimeS(index, ctypes.byref(seconds)) == 0
        assert self.lib.zeusEmulatorAdvanceTimeNs(round(seconds.value * 1e9)) == 0


@pytest.fixture
def amd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """``make(gpus, **top_level)``: an AMD scenario of its own, with ZEUS_GPU_VENDOR=amd and the AMD SMI emulator
    (so that a machine with an NVIDIA driver runs these tests the same)."""
    assert AMDSMI_EMULATOR.exists(), f"{AMDSMI_EMULATOR} is missing: build the project first (make)"

    def make(gpus: list[dict[str, Any]], **top_level: Any) -> Path:
        scenario = {"vendor": "amd", "clock": "manual", "state_file": str(tmp_path / "amd-state"), "gpus": gpus}
        scenario.update(top_level)
        path = tmp_path / "amd.json"
        path.write_text(json.dumps(scenario, indent=2))
        monkeypatch.setenv("ZEUS_GPU_VENDOR", "amd")
        monkeypatch.setenv("ZEUS_AMDSMI_LIBRARY", str(AMDSMI_EMULATOR))
        monkeypatch.setenv("ZEUS_AMDSMI_EMULATOR_CONFIG", str(path))
        for name in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZEUS_NVML_LIBRARY"):
            monkeypatch.delenv(name, raising=False)
        return path

    return make


def test_get_gpus_returns_amd_gpus_in_hip_order(amd) -> None:
    amd([mi300x(power_w=300, kfd_node_id=5, uuid="bbbb"), mi300x(power_w=200, kfd_node_id=3, uuid="aaaa")])
    assert amdsmi_is_available()
    gpus = get_gpus()
    assert isinstance(gpus, AMDGPUs)
    assert isinstance(gpus.gpus[0], AMDGPU)
    assert len(gpus) == 2
    assert gpus.vendor == "amd"
    assert gpus.get_name(0) == "AMD Instinct MI300X"
    assert gpus.get_uuid(0) == "aaaa"  # the lower KFD node is HIP's GPU 0
    assert gpus.get_power_management_limit_constraints(0) == (450_000, 750_000)
    assert gpus.get_instant_power_usage(0) == 200_000
    with pytest.raises(ZeusGPUNotSupportedError):
        gpus.get_average_power_usage(0)  # an MI300X reports its current power only
    with pytest.raises(ZeusGPUNotSupportedError):
        gpus.set_persistence_mode(0, True)
    assert gpus.supports_get_total_energy_consumption(0)


def test_zeus_monitor_measures_amd_energy_exactly(amd) -> None:
    amd([mi300x(power_w=400, counter_update_period_ms=0)])
    emu = AmdEmulator()
    try:
        monitor = ZeusMonitor(gpu_indices=[0])
        monitor.begin_window("w")
        emu.lib.zeusEmulatorAdvanceTimeNs(10_000_000_000)
        m = monitor.end_window("w")
        assert m.time == pytest.approx(10.0, rel=1e-6)
        assert m.gpu_energy[0] == pytest.approx(4000.0, rel=1e-3)
        del monitor
    finally:
        emu.close()


def test_opening_amd_gpus_runs_no_counter_check(amd, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 37: ZeusMonitor() waits for no counter check (zeus info, zeusd and the exporter run it), so a
    wrong-rate counter is read as it is, with no warning."""
    caplog.set_level(logging.WARNING, logger="zeus")
    amd([mi300x(power_w=500, energy_counter_rate=2.0, counter_update_period_ms=0)], clock="wall", time_scale=1)
    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window("w")
    time.sleep(0.1)
    m = monitor.end_window("w")
    assert m.gpu_energy[0] == pytest.approx(2 * 500.0 * m.time, rel=0.05)
    assert not [r for r in caplog.records if r.name == "zeus.device"]


class Boom(OptimumSelector):
    def select(self, measurements: list[Any]) -> int:
        raise RuntimeError("selector failed")


FAST = dict(wait_steps=1, warmup_steps=1, profile_steps=2, pl_step=150)
STEPS_TO_DONE = 1 + 3 * 3 + 1


@pytest.mark.parametrize(
    "selector, expected_w",
    [
        # Per step: Energy -> 450 W (559 J). ZeusCost(0.5) = 0.5 E + 0.5 x 750 W x T per step:
        # 750: 340 + 375 = 715; 600: 294 + 393.75 = 687.75; 450: 279.5 + 487.5 = 767 -> 600 W.
        (Energy(), 450),
        (ZeusCost(eta_knob=0.5), 600),
    ],
)
def test_the_optimizer_on_amd_chooses_the_hand_computed_optimum_and_restores(amd, selector, expected_w) -> None:
    amd([mi300x(power_limit_w=ORIGINAL_LIMIT_W, workload=WORKLOAD)], counter_update_period_ms=0, power_settle_ms=0)
    emu = AmdEmulator()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            monitor = ZeusMonitor(gpu_indices=[0])
        plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=selector, **FAST)
        assert plo.power_limits == [750_000, 600_000, 450_000]
        for _ in range(STEPS_TO_DONE):
            plo.on_step_begin()
            emu.step()
            plo.on_step_end()
        assert plo.state == Done(optimal_power_limit=expected_w * 1000)
        measured = {m.power_limit: m.energy for m in plo.measurements}
        assert measured[750] == pytest.approx(2 * 680.0, rel=1e-3)
        assert measured[450] == pytest.approx(2 * 559.0, rel=1e-3)
        assert emu.power_cap_w(0) == expected_w
        plo.on_train_end()
        assert emu.power_cap_w(0) == ORIGINAL_LIMIT_W  # the original, not the maximum
        del plo, monitor
        gc.collect()
    finally:
        emu.close()


def test_a_failing_selector_on_amd_restores_the_original_limit(amd) -> None:
    amd([mi300x(power_limit_w=ORIGINAL_LIMIT_W, workload=WORKLOAD)], counter_update_period_ms=0, power_settle_ms=0)
    emu = AmdEmulator()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            monitor = ZeusMonitor(gpu_indices=[0])
        plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Boom(), **FAST)
        with pytest.raises(RuntimeError, match="selector failed"):
            for _ in range(STEPS_TO_DONE):
                plo.on_step_begin()
                emu.step()
                plo.on_step_end()
        assert emu.power_cap_w(0) == ORIGINAL_LIMIT_W
        del plo, monitor
        gc.collect()
    finally:
        emu.close()


ZEUSD_SCRIPT = """
import json
from zeus.monitor import ZeusMonitor
from zeus.optimizer.power_limit import GlobalPowerLimitOptimizer, Energy
monitor = ZeusMonitor(gpu_indices=[0])
plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), wait_steps=1, warmup_steps=1,
                                profile_steps=2, pl_step=150)
for epoch in range(30):
    plo.on_epoch_begin()
    for step in range(4):
        plo.on_step_begin()
        plo.on_step_end()
    plo.on_epoch_end()
print(json.dumps({"state": type(plo.state).__name__}))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the daemon needs root (gpu-control)")
def test_the_optimizer_as_nobody_sets_amd_limits_through_zeusd_amdsmi(amd, tmp_path: Path, subprocess_env) -> None:
    from conftest import PYTHON, ZEUSD_BINARY, zeusd_accepts
    from zeus.utils.zeusd import ZeusdClient, ZeusdConfig

    os.chmod(tmp_path, 0o777)
    scenario = amd([mi300x(power_limit_w=ORIGINAL_LIMIT_W, workload=WORKLOAD)])
    os.chmod(scenario, 0o644)
    sock = tmp_path / "zeusd.sock"
    err = tmp_path / "zeusd.err"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZEUSD_")}
    proc = subprocess.Popen(
        [str(ZEUSD_BINARY), "serve", "--mode", "uds", "--socket-path", str(sock), "--socket-permissions", "666",
         "--gpu-backend", "amdsmi", "--amdsmi-library", str(AMDSMI_EMULATOR), "--enable", "gpu-control,gpu-read"],
        env=env, stderr=open(err, "w"))
    try:
        deadline = time.monotonic() + 60
        while not zeusd_accepts(sock):
            assert proc.poll() is None, err.read_text()
            assert time.monotonic() < deadline, "zeusd did not listen within 60 s"
            time.sleep(0.01)
        os.chmod(tmp_path / "amd-state", 0o666)
        for parent in sock.parents:
            if parent in (Path("/tmp"), Path("/")):
                break
            os.chmod(parent, os.stat(parent).st_mode | 0o005)
        # The AMD variables were set after subprocess_env was taken.
        run_env = dict(subprocess_env, ZEUSD_SOCK_PATH=str(sock),
                       **{k: os.environ[k] for k in ("ZEUS_GPU_VENDOR", "ZEUS_AMDSMI_LIBRARY",
                                                     "ZEUS_AMDSMI_EMULATOR_CONFIG")})
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", PYTHON, "-c",
                            ZEUSD_SCRIPT], env=run_env, capture_output=True, text=True, timeout=300, cwd="/")
        assert r.returncode == 0, r.stderr
        assert "no permission" not in r.stderr
        assert json.loads(r.stdout.strip().splitlines()[-1])["state"] == "Done", r.stderr
        # The original limit is back after the normal end, as the daemon reads it through AMD SMI.
        assert ZeusdClient(ZeusdConfig.uds(str(sock))).get_power_limit([0]) == {0: ORIGINAL_LIMIT_W * 1000}
    finally:
        proc.terminate()
        proc.wait(timeout=60)


# Every exit path restores the original cap on AMD too: an uncaught exception, SIGTERM, SIGINT. The training runs
# in a subprocess (the emulator's state file is shared); the cap is read by `zeus info --json` in another one.
RESTORE_SCRIPT = """
import sys, time, warnings
from test_amd import AmdEmulator
from zeus.monitor import ZeusMonitor
from zeus.optimizer.power_limit import Energy, GlobalPowerLimitOptimizer, Profiling

warnings.simplefilter("ignore")
monitor = ZeusMonitor(gpu_indices=[0])
emu = AmdEmulator()
plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), wait_steps=1, warmup_steps=1,
                                profile_steps=2, pl_step=150)
for step in range(100):
    plo.on_step_begin()
    if plo.state == Profiling(current_power_limit=450_000, steps=2):
        if sys.argv[1] == "raise":
            raise RuntimeError("the user's training failed")
        print("ready", flush=True)
        while True:
            time.sleep(0.05)
    emu.step()
print("never profiled 450 W", flush=True)
"""


def _caps_from_another_process() -> list[float]:
    from conftest import ZEUS_BINARY

    out = subprocess.run([str(ZEUS_BINARY), "info", "--json", "--no-counter-check"], check=True, capture_output=True,
                         text=True, timeout=60)
    return [g["power_limit_w"] for g in json.loads(out.stdout)["gpus"]]


@pytest.mark.parametrize("ending", ["raise", "SIGTERM", "SIGINT"])
def test_every_exit_path_restores_the_original_amd_cap(amd, ending) -> None:
    import signal
    import threading

    from conftest import PYTHON, PYTHON_DIR

    amd([mi300x(power_limit_w=ORIGINAL_LIMIT_W, workload=WORKLOAD)], counter_update_period_ms=0, power_settle_ms=0)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), str(Path(__file__).resolve().parent)]))
    proc = subprocess.Popen([PYTHON, "-c", RESTORE_SCRIPT, "raise" if ending == "raise" else "wait"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if ending == "raise":
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 1, err
        assert "the user's training failed" in err
    else:
        timer = threading.Timer(60, proc.kill)  # the readiness signal's deadline
        timer.start()
        try:
            line = proc.stdout.readline()
        finally:
            timer.cancel()
        assert line.strip() == "ready", proc.communicate()[1]
        assert _caps_from_another_process() == [450]  # profiling really changed it
        signo = signal.SIGTERM if ending == "SIGTERM" else signal.SIGINT
        proc.send_signal(signo)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == -signo, err
        assert "original power limits restored" in err
    assert _caps_from_another_process() == [ORIGINAL_LIMIT_W]


def _system_nvml_loads() -> bool:
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


@pytest.mark.parametrize("vendor", ["amd", None])
def test_nvml_is_not_available_on_a_machine_with_amd_gpus_only(amd, monkeypatch, vendor) -> None:
    """AMD GPUs (the AMD SMI emulator) and no NVIDIA driver: NVML is not available, whether ZEUS_GPU_VENDOR says
    amd or is unset (auto, which opens the AMD GPUs)."""
    from zeus.device.gpu import nvml_is_available

    if _system_nvml_loads():
        pytest.skip("this machine has an NVIDIA driver (libnvidia-ml.so.1 loads)")
    amd([mi300x(power_w=500)])
    if vendor is None:
        monkeypatch.delenv("ZEUS_GPU_VENDOR")
    assert len(get_gpus()) == 1  # the AMD GPU is there
    assert nvml_is_available() is False
