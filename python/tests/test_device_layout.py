"""zeus.device as Zeus lays it out: the gpu, cpu and soc packages, get_soc() on fake NVIDIA Jetson trees
(alone and inside a ZeusMonitor window), get_current_rapl_zone_id on fake /proc and sysfs trees.

Every case runs as a user script in a fresh interpreter (the devices are process-wide singletons); the
script prints JSON and the test checks it against figures computed by hand from the fake trees.

The Jetson trees are laid out as on real boards (see src/device/jetson/jetson_test.cc for the sources):
Jetson Nano's IIO ina3221x (rail_name_<i>, in_power<i>_input mW, in_voltage/in_current) and Jetson AGX
Orin's hwmon ina3221 (in<i>_label, in<i>_input mV, curr<i>_input mA).
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any, Optional

import pytest

from conftest import EMULATOR_LIBRARY, PYTHON, PYTHON_DIR, a40

NANO = "sys/bus/i2c/drivers/ina3221x/6-0040/iio:device0"
ORIN = "sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3"


def write_nano(root: Path, gpu_power: str = "1500") -> Path:
    """Jetson Nano: POM_5V_IN 4000 mW, POM_5V_GPU 1500 mW, POM_5V_CPU 5000 mV x 300 mA = 1500 mW."""
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc/nv_tegra_release").write_text("# R32 (release), REVISION: 7.1\n")
    d = root / NANO
    d.mkdir(parents=True, exist_ok=True)
    for name, value in {
        "rail_name_0": "POM_5V_IN", "in_power0_input": "4000",
        "rail_name_1": "POM_5V_GPU", "in_power1_input": gpu_power,
        "rail_name_2": "POM_5V_CPU", "in_voltage2_input": "5000", "in_current2_input": "300",
    }.items():
        (d / name).write_text(value + "\n")
    return root


def write_agx_orin(root: Path) -> Path:
    """Jetson AGX Orin: VDD_GPU_SOC 5000 mV x 1200 mA = 6000 mW, VDD_CPU_CV 5000 x 400 = 2000 mW, VIN_SYS_5V0
    (not a kind Zeus measures)."""
    (root / "usr/lib/aarch64-linux-gnu/tegra").mkdir(parents=True, exist_ok=True)
    d = root / ORIN
    d.mkdir(parents=True, exist_ok=True)
    for name, value in {
        "in1_label": "VDD_GPU_SOC", "in1_input": "5000", "curr1_input": "1200",
        "in2_label": "VDD_CPU_CV", "in2_input": "5000", "curr2_input": "400",
        "in3_label": "VIN_SYS_5V0", "in3_input": "5000", "curr3_input": "600",
    }.items():
        (d / name).write_text(value + "\n")
    return root


def run_script(script: str, tmp_path: Path, soc_root: Optional[Path] = None, scenario: Optional[dict] = None,
               args: tuple[str, ...] = ()) -> Any:
    """Runs `script` in a fresh interpreter with the built package and returns the JSON it printed last."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PYTHON_DIR)
    env["TMPDIR"] = str(tmp_path)
    for name in ("ZEUS_SOC_ROOT", "ZEUS_NVML_LIBRARY", "ZEUS_EMULATOR_CONFIG", "CUDA_VISIBLE_DEVICES",
                 "ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT"):
        env.pop(name, None)
    if soc_root is not None:
        env["ZEUS_SOC_ROOT"] = str(soc_root)
    if scenario is not None:
        path = tmp_path / "scenario.json"
        path.write_text(json.dumps({"driver_version": "550.54.15", "state_file": str(tmp_path / "state"), **scenario}))
        env["ZEUS_NVML_LIBRARY"] = str(EMULATOR_LIBRARY)
        env["ZEUS_EMULATOR_CONFIG"] = str(path)
    path = tmp_path / "user_script.py"
    path.write_text(textwrap.dedent(script))
    proc = subprocess.run([PYTHON, str(path), *args], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_zeus_import_paths_import(tmp_path) -> None:
    out = run_script("""
        import importlib, json
        from zeus.device import get_gpus, get_cpus, get_soc
        from zeus.device.gpu import get_gpus, GPUs, GPU, EmptyGPUs, ZeusGPUInitError, ZeusGPUNotFoundError
        from zeus.device.gpu.common import GPU, GPUs, ZeusGPUMemoryError, ZeusGPULibRMVersionMismatchError
        from zeus.device.gpu.nvidia import NVIDIAGPU, NVIDIAGPUs
        from zeus.device.cpu import get_cpus, CPUs, get_current_rapl_zone_id
        from zeus.device.cpu.common import CPU, CPUs, CpuDramMeasurement, ZeusCPUInitError
        from zeus.device.cpu.rapl import RAPLCPU, RAPLCPUs, get_current_rapl_zone_id, ZeusRAPLNotSupportedError
        from zeus.device.soc import get_soc
        from zeus.device.soc.common import SoC, SoCMeasurement, ZeusSoCInitError
        from zeus.device.soc.jetson import Jetson, JetsonMeasurement
        from zeus.device.soc.apple import AppleSilicon, AppleSiliconMeasurement
        from zeus.device.exception import (ZeusBaseGPUError, ZeusBaseCPUError, ZeusBaseSoCError,
                                           ZeusBaseMachineError, ZeusdError)
        from zeus.exception import ZeusSoCInitError as Same
        import zeus.device.cpu
        assert Same is ZeusSoCInitError and issubclass(ZeusSoCInitError, ZeusBaseSoCError)
        assert issubclass(NVIDIAGPUs, GPUs) and issubclass(NVIDIAGPU, GPU) and issubclass(RAPLCPUs, CPUs)
        assert issubclass(JetsonMeasurement, SoCMeasurement) and issubclass(Jetson, SoC)
        from zeus.device.gpu.amd import AMDGPU, AMDGPUs
        assert issubclass(AMDGPUs, GPUs) and issubclass(AMDGPU, GPU)
        try:
            importlib.import_module("zeus.device.gpu.amd")
            amd = "present"
        except ModuleNotFoundError:
            amd = "absent"
        print(json.dumps({"amd": amd, "get_cpus": zeus.device.cpu.get_cpus is get_cpus}))
    """, tmp_path)
    assert out == {"amd": "present", "get_cpus": True}


def test_gpus_are_zeus_classes_with_deprecated_aliases(tmp_path) -> None:
    out = run_script("""
        import json, warnings
        from zeus.device import get_gpus
        from zeus.device.gpu import GPUs, EmptyGPUs
        from zeus.device.gpu.nvidia import NVIDIAGPU
        from zeus.exception import ZeusGPUNotFoundError
        gpus = get_gpus()
        gpu = gpus.gpus[1]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            names = [gpus.getName(0), gpus.getName(1), gpu.getName()]
            limits = gpus.getPowerManagementLimitConstraints(1)
        deprecations = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
        try:
            EmptyGPUs().get_name(0)
            empty = "no error"
        except ZeusGPUNotFoundError as e:
            empty = str(e)
        print(json.dumps({
            "isinstance": isinstance(gpus, GPUs), "gpu_class": type(gpu).__name__, "len": len(gpus),
            "names": names, "limits": list(limits), "deprecations": deprecations,
            "limit_of_gpu_1": gpu.get_power_management_limit(), "uuid_extra": gpus.get_uuid(0) == gpus.gpus[0].get_uuid(),
            "empty_len": len(EmptyGPUs()), "empty": empty,
        }))
    """, tmp_path, scenario={"gpus": [a40(power_w=100), a40(power_w=150, name="NVIDIA A100-SXM4-40GB", architecture="ampere",
                                                 min_power_limit_w=100, max_power_limit_w=400,
                                                 default_power_limit_w=400)]})
    assert out["isinstance"] is True
    assert out["gpu_class"] == "NVIDIAGPU"
    assert out["len"] == 2
    assert out["names"] == ["NVIDIA A40", "NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"]
    assert out["limits"] == [100_000, 400_000]
    # One warning per alias per process, whatever object it is called on.
    assert out["deprecations"] == ["getName is deprecated; use get_name",
                                   "getPowerManagementLimitConstraints is deprecated; use "
                                   "get_power_management_limit_constraints"]
    assert out["limit_of_gpu_1"] == 400_000
    assert out["uuid_extra"] is True
    assert out["empty_len"] == 0 and "GPU 0 does not exist" in out["empty"]


JETSON_WINDOW = """
    import ctypes, json, os, sys, warnings
    from zeus.device import get_soc
    from zeus.device.soc.jetson import Jetson, JetsonMeasurement
    from zeus.monitor import ZeusMonitor
    lib = ctypes.CDLL(os.environ["ZEUS_NVML_LIBRARY"])
    lib.zeusEmulatorAdvanceTimeNs.argtypes = [ctypes.c_ulonglong]
    soc = get_soc()
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[])
    monitor.begin_window("epoch", sync_execution=False)
    assert lib.zeusEmulatorAdvanceTimeNs(2_500_000_000) == 0
    if sys.argv[1:2] == ["break-gpu-rail"]:
        with open(os.path.join(os.environ["ZEUS_SOC_ROOT"], sys.argv[2]), "w") as f:
            f.write("N/A\\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = monitor.end_window("epoch", sync_execution=False)
    monitor.begin_window("dropped", sync_execution=False)
    cancelled = monitor.end_window("dropped", sync_execution=False, cancel=True)
    print(json.dumps({
        "soc_class": type(soc).__name__, "rails": [r[1] for r in soc.rails],
        "metrics": sorted(soc.get_available_metrics()),
        "energy_class": type(m.soc_energy).__name__, "time": m.time, "gpu_j": m.gpu_energy[0],
        "cpu_mj": m.soc_energy.cpu_energy_mj, "gpu_mj": m.soc_energy.gpu_energy_mj,
        "total_mj": m.soc_energy.total_energy_mj,
        "cancelled": [cancelled.soc_energy.cpu_energy_mj, cancelled.soc_energy.gpu_energy_mj,
                      cancelled.soc_energy.total_energy_mj],
        "warnings": [str(w.message) for w in caught if issubclass(w.category, UserWarning)],
    }))
"""


def test_soc_energy_of_a_zeus_monitor_window_on_a_jetson_nano(tmp_path) -> None:
    root = write_nano(tmp_path / "nano")
    out = run_script(JETSON_WINDOW, tmp_path, soc_root=root,
                     scenario={"gpus": [a40(power_w=200)], "clock": "manual"})
    assert out["soc_class"] == "Jetson"
    assert out["rails"] == ["POM_5V_IN", "POM_5V_GPU", "POM_5V_CPU"]
    assert out["metrics"] == ["cpu_energy_mj", "gpu_energy_mj", "total_energy_mj"]
    assert out["energy_class"] == "JetsonMeasurement"
    # The window is 2.5 s on the emulator's manual clock, which the native Jetson integrates on too: each
    # rail's constant power (mW) x 2.5 s, in mJ, exactly (up to float rounding).
    assert out["time"] == pytest.approx(2.5, abs=1e-9)
    assert out["total_mj"] == pytest.approx(4000 * 2.5, rel=1e-12)
    assert out["gpu_mj"] == pytest.approx(1500 * 2.5, rel=1e-12)
    assert out["cpu_mj"] == pytest.approx(5000 * 300 / 1000 * 2.5, rel=1e-12)
    assert out["gpu_j"] == pytest.approx(200 * 2.5, abs=0.002)  # the GPU window still measured (J)
    assert out["cancelled"] == [0.0, 0.0, 0.0]
    assert out["warnings"] == []


def test_a_rail_that_breaks_in_a_window_is_none_and_named_while_the_others_are_measured(tmp_path) -> None:
    root = write_nano(tmp_path / "nano")
    out = run_script(JETSON_WINDOW, tmp_path, soc_root=root, scenario={"gpus": [a40(power_w=200)], "clock": "manual"},
                     args=("break-gpu-rail", f"{NANO}/in_power1_input"))
    assert out["gpu_mj"] is None
    assert out["total_mj"] == pytest.approx(4000 * 2.5, rel=1e-12)
    assert out["cpu_mj"] == pytest.approx(1500 * 2.5, rel=1e-12)
    assert len(out["warnings"]) == 1
    assert str(root / NANO / "in_power1_input") in out["warnings"][0]
    assert "'N/A'" in out["warnings"][0] and "POM_5V_GPU" in out["warnings"][0]


def test_get_soc_on_an_agx_orin_tree_and_its_own_windows(tmp_path) -> None:
    out = run_script("""
        import json, time
        from zeus.device import get_soc
        soc = get_soc()
        assert get_soc() is soc
        t0 = time.monotonic()  # before the window opens: elapsed encloses the window
        soc.begin_window("w")
        try:
            soc.begin_window("w")
            duplicate = "no error"
        except KeyError as e:
            duplicate = str(e)
        time.sleep(0.3)
        m = soc.end_window("w")
        elapsed = time.monotonic() - t0
        print(json.dumps({"rails": soc.rails, "metrics": sorted(soc.get_available_metrics()), "gpu_mj": m.gpu_energy_mj,
                          "cpu_mj": m.cpu_energy_mj, "total_mj": m.total_energy_mj, "elapsed": elapsed,
                          "duplicate": duplicate, "problems": soc.problems}))
    """, tmp_path, soc_root=write_agx_orin(tmp_path / "orin"))
    assert [r[:2] for r in out["rails"]] == [["gpu", "VDD_GPU_SOC"], ["cpu", "VDD_CPU_CV"]]
    assert out["metrics"] == ["cpu_energy_mj", "gpu_energy_mj"]
    assert out["total_mj"] is None  # VIN_SYS_5V0 is not a total by Zeus's rule
    assert out["problems"] == []
    assert "already exists" in out["duplicate"]
    # Real time here: the readings lie inside the interval the script timed, so the energy is at most power x
    # that interval and at least power x the 0.3 s slept.
    assert 6000 * 0.3 <= out["gpu_mj"] <= 6000 * out["elapsed"]
    assert 2000 * 0.3 <= out["cpu_mj"] <= 2000 * out["elapsed"]


def test_a_rail_unreadable_at_open_is_named_and_the_others_are_measured(tmp_path) -> None:
    root = write_nano(tmp_path / "nano", gpu_power="garbage")
    out = run_script("""
        import json, logging
        records = []
        class Keep(logging.Handler):
            def emit(self, record):
                records.append(record.getMessage())
        logging.getLogger("zeus").addHandler(Keep())
        from zeus.device import get_soc
        soc = get_soc()
        m = soc.get_total_energy_consumption()
        print(json.dumps({"rails": [r[1] for r in soc.rails], "problems": soc.problems, "logged": records,
                          "gpu": m.gpu_energy_mj, "total": m.total_energy_mj is not None}))
    """, tmp_path, soc_root=root)
    assert out["rails"] == ["POM_5V_IN", "POM_5V_CPU"]
    assert len(out["problems"]) == 1
    assert str(root / NANO / "in_power1_input") in out["problems"][0]
    assert "'garbage'" in out["problems"][0]
    assert any(str(root / NANO / "in_power1_input") in r for r in out["logged"])
    assert out["gpu"] is None and out["total"] is True


def test_get_soc_without_a_soc_says_why(tmp_path) -> None:
    empty = tmp_path / "not-a-jetson"
    empty.mkdir()
    out = run_script("""
        import json
        from zeus.device import get_soc
        from zeus.device.soc.apple import AppleSilicon
        from zeus.device.soc.jetson import Jetson
        from zeus.exception import ZeusSoCInitError, ZeusAppleInitError, ZeusJetsonInitError
        from zeus.monitor import ZeusMonitor
        out = {}
        try:
            get_soc()
        except ZeusSoCInitError as e:
            out["get_soc"] = [type(e).__name__, str(e), isinstance(e, RuntimeError)]
        try:
            AppleSilicon()
        except ZeusAppleInitError as e:
            out["apple"] = str(e)
        try:
            Jetson()
        except ZeusJetsonInitError as e:
            out["jetson"] = str(e)
        monitor = ZeusMonitor(gpu_indices=[], cpu_indices=[])
        monitor.begin_window("w", sync_execution=False)
        out["soc_energy"] = monitor.end_window("w", sync_execution=False).soc_energy
        print(json.dumps(out))
    """, tmp_path, soc_root=empty)
    kind, message, runtime = out["get_soc"]
    assert kind == "ZeusSoCInitError" and runtime
    assert "not Apple silicon" in message and "macOS" in message
    assert f"neither {empty}/etc/nv_tegra_release nor {empty}/usr/lib/aarch64-linux-gnu/tegra exists" in message
    assert "not Apple silicon" in out["apple"]
    assert "not an NVIDIA Jetson" in out["jetson"]
    assert out["soc_energy"] is None


def write_proc_and_sys(tmp_path: Path, cpu: int, package: int, die: Optional[int], zones: dict[int, str]) -> Path:
    """A process whose command name has spaces and parentheses, last run on `cpu` (field 39 of its stat)."""
    proc = tmp_path / "proc" / "4242"
    proc.mkdir(parents=True)
    after_comm = ["S"] + ["0"] * 35 + [str(cpu)] + ["0"] * 13  # fields 3..52; index 36 is field 39
    (proc / "stat").write_text(f"4242 (my (odd) trainer) {' '.join(after_comm)}\n")
    topology = tmp_path / "sys" / "devices" / "system" / "cpu" / f"cpu{cpu}" / "topology"
    topology.mkdir(parents=True)
    (topology / "physical_package_id").write_text(f"{package}\n")
    if die is not None:
        (topology / "die_id").write_text(f"{die}\n")
    powercap = tmp_path / "powercap"
    for index, name in zones.items():
        (powercap / f"intel-rapl:{index}").mkdir(parents=True)
        (powercap / f"intel-rapl:{index}" / "name").write_text(name + "\n")
    (powercap / "intel-rapl:0:0").mkdir(parents=True)  # a subzone (dram) is never a package's zone
    (powercap / "intel-rapl:0:0" / "name").write_text("package-1\n")
    return tmp_path


RAPL_ZONE = """
    import json, os, sys
    from zeus.device.cpu.rapl import get_current_rapl_zone_id
    from zeus.exception import ZeusRAPLNotSupportedError
    root = sys.argv[1]
    try:
        zone = get_current_rapl_zone_id(4242, proc_root=os.path.join(root, "proc"), sys_root=os.path.join(root, "sys"))
        print(json.dumps({"zone": zone}))
    except ZeusRAPLNotSupportedError as e:
        print(json.dumps({"error": str(e), "runtime": isinstance(e, RuntimeError)}))
"""


def test_current_rapl_zone_of_a_package(tmp_path, monkeypatch) -> None:
    root = write_proc_and_sys(tmp_path / "t", cpu=24, package=1, die=None, zones={0: "package-0", 1: "package-1"})
    # The powercap root comes from ZEUS_POWERCAP_ROOT, as the native RAPL reader's.
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(root / "powercap"))
    out = run_script(RAPL_ZONE, tmp_path, args=(str(root),))
    assert out == {"zone": 1}


def test_current_rapl_zone_with_dies(tmp_path, monkeypatch) -> None:
    root = write_proc_and_sys(tmp_path / "t", cpu=5, package=0, die=1,
                              zones={0: "package-0-die-0", 1: "package-0-die-1", 2: "psys"})
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(root / "powercap"))
    out = run_script(RAPL_ZONE, tmp_path, args=(str(root),))
    assert out == {"zone": 1}


def test_current_rapl_zone_without_a_match_is_an_error(tmp_path, monkeypatch) -> None:
    root = write_proc_and_sys(tmp_path / "t", cpu=3, package=2, die=None, zones={0: "package-0", 1: "package-1"})
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(root / "powercap"))
    out = run_script(RAPL_ZONE, tmp_path, args=(str(root),))
    assert out["runtime"] is True
    assert "package-2" in out["error"]
    assert "intel-rapl:0=package-0, intel-rapl:1=package-1" in out["error"]


def test_show_env_lists_the_jetson_rails(tmp_path) -> None:
    root = write_nano(tmp_path / "nano", gpu_power="")
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR), ZEUS_SOC_ROOT=str(root), TMPDIR=str(tmp_path))
    env.pop("ZEUS_NVML_LIBRARY", None)
    done = subprocess.run([PYTHON, "-m", "zeus.show_env"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Jetson: metrics cpu_energy_mj, total_energy_mj" in done.stdout
    assert f"total rail POM_5V_IN: {root / NANO / 'in_power0_input'}" in done.stdout
    assert "not measured: " in done.stdout and str(root / NANO / "in_power1_input") in done.stdout
