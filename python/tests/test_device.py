"""zeus.device: get_gpus() on emulated GPUs and get_cpus() on a fake powercap tree, with Zeus's method
names, units (mW, mJ) and exception classes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import zeus.exception as zx
from conftest import a40
from test_monitor_helpers import EmulatorControl, a40_busy
from test_monitor_helpers import close_devices_after_test  # noqa: F401 (an autouse fixture)
from zeus.device import CpuDramMeasurement, get_cpus, get_gpus, reset_devices
from zeus.monitor import ZeusMonitor


@pytest.fixture(autouse=True)
def fresh_devices():
    reset_devices()
    yield
    reset_devices()


def write_rapl(root: Path, package_uj: int, dram_uj: int | None = None) -> None:
    """A powercap tree with one package (and its DRAM subzone when dram_uj is given)."""
    zone = root / "intel-rapl:0"
    zone.mkdir(parents=True, exist_ok=True)
    (zone / "name").write_text("package-0\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    (zone / "energy_uj").write_text(f"{package_uj}\n")
    if dram_uj is not None:
        sub = zone / "intel-rapl:0:0"
        sub.mkdir(exist_ok=True)
        (sub / "name").write_text("dram\n")
        (sub / "max_energy_range_uj").write_text("65712999613\n")
        (sub / "energy_uj").write_text(f"{dram_uj}\n")


def test_gpu_reads_in_zeus_units(emulator) -> None:
    emulator([a40_busy(temperature_c=61), a40(power_w=80, energy_counter=False)], clock="manual")
    clock = EmulatorControl()
    gpus = get_gpus()
    assert get_gpus() is gpus  # one per process
    assert len(gpus) == 2
    assert gpus.get_name(0) == "NVIDIA A40"
    assert gpus.get_power_management_limit_constraints(0) == (100_000, 300_000)
    assert gpus.get_power_management_limit(0) == 300_000
    assert gpus.get_instant_power_usage(0) == 236_000
    assert gpus.get_gpu_temperature(0) == 61
    assert gpus.supports_get_total_energy_consumption(0)
    assert not gpus.supports_get_total_energy_consumption(1)
    before = gpus.get_total_energy_consumption(0)
    clock.advance(1.0)
    assert gpus.get_total_energy_consumption(0) - before == 236_000  # mJ in one second at 236 W
    with pytest.raises(zx.ZeusGPUNotSupportedError):
        gpus.get_total_energy_consumption(1)


def test_gpu_setters_and_errors(emulator) -> None:
    emulator([a40_busy()], clock="manual")
    gpus = get_gpus()
    gpus.set_power_management_limit(0, 200_000)
    assert gpus.get_power_management_limit(0) == 200_000
    gpus.reset_power_management_limit(0)
    assert gpus.get_power_management_limit(0) == 300_000
    with pytest.raises(zx.ZeusGPUInvalidArgError):
        gpus.set_power_management_limit(0, 50_000)
    with pytest.raises(zx.ZeusGPUNotFoundError, match="GPU 3 does not exist"):
        gpus.get_name(3)


def test_unsupported_query(emulator) -> None:
    emulator([a40_busy(unsupported=["instant_power"])], clock="manual")
    with pytest.raises(zx.ZeusGPUNotSupportedError):
        get_gpus().get_instant_power_usage(0)


def test_no_driver_is_gpu_init_error(monkeypatch) -> None:
    monkeypatch.delenv("ZEUS_NVML_LIBRARY", raising=False)
    with pytest.raises(zx.ZeusGPUInitError, match="no NVIDIA driver found"):
        get_gpus()


def test_heterogeneous_gpus(emulator) -> None:
    emulator([a40_busy(), a40_busy(name="NVIDIA A100-SXM4-40GB")], clock="manual")
    with pytest.raises(zx.ZeusGPUHeterogeneousError):
        get_gpus(ensure_homogeneous=True)
    assert len(get_gpus()) == 2


def test_cpus_on_a_fake_powercap_tree(tmp_path, monkeypatch) -> None:
    write_rapl(tmp_path, package_uj=5_000_000, dram_uj=1_000_000)
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(tmp_path))
    cpus = get_cpus()
    assert len(cpus) == 1
    assert cpus.supports_get_dram_energy_consumption(0)
    # Counted from when the package was opened (see zeus.device.cpu).
    assert cpus.get_total_energy_consumption(0) == CpuDramMeasurement(cpu_mj=0.0, dram_mj=0.0)
    write_rapl(tmp_path, package_uj=7_500_000, dram_uj=1_250_000)
    assert cpus.get_total_energy_consumption(0) == CpuDramMeasurement(cpu_mj=2500.0, dram_mj=250.0)


def test_zeus_monitor_measures_cpus(tmp_path, monkeypatch, emulator) -> None:
    emulator([a40_busy()], clock="manual")
    write_rapl(tmp_path, package_uj=5_000_000, dram_uj=1_000_000)
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(tmp_path))
    monitor = ZeusMonitor(gpu_indices=[], cpu_indices=[0])
    monitor.begin_window("w", sync_execution=False)
    write_rapl(tmp_path, package_uj=8_000_000, dram_uj=1_500_000)
    m = monitor.end_window("w", sync_execution=False)
    assert m.cpu_energy == {0: pytest.approx(3.0)}
    assert m.dram_energy == {0: pytest.approx(0.5)}
    assert m.total_energy == 0.0  # GPU only, as in Zeus


def test_no_rapl(tmp_path, monkeypatch, emulator) -> None:
    emulator([a40_busy()], clock="manual")
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(tmp_path))  # an empty powercap root
    message = r"under the powercap root \(/sys/class/powercap, or \$ZEUS_POWERCAP_ROOT\)"
    with pytest.raises(zx.ZeusCPUInitError, match=message):
        get_cpus()
    assert ZeusMonitor().cpu_indices == []  # silently none
    with pytest.raises(zx.ZeusCPUInitError, match="no RAPL CPU package"):
        ZeusMonitor(cpu_indices=[0])


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file: RAPL permission cannot be denied")
def test_unreadable_rapl(tmp_path, monkeypatch, emulator) -> None:
    emulator([a40_busy()], clock="manual")
    write_rapl(tmp_path, package_uj=5_000_000)
    (tmp_path / "intel-rapl:0" / "energy_uj").chmod(0)
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(tmp_path))
    assert ZeusMonitor().cpu_indices == []  # silently none, as Zeus
    with pytest.raises(RuntimeError, match="cpu_indices=\\[\\]") as e:
        ZeusMonitor(cpu_indices=[0])
    assert isinstance(e.value, zx.ZeusFailedPreconditionError)
    with pytest.raises(zx.ZeusCPUNoPermissionError):
        get_cpus().get_total_energy_consumption(0)


# nvml_is_available(): whether NVML loads and reports a GPU; never raises; a cached probe that opens no GPU.


def test_nvml_is_available_on_the_emulator_without_opening_gpus(emulator, monkeypatch) -> None:
    from zeus import _native
    from zeus.device.gpu import nvml_is_available

    emulator([a40(power_w=200)])
    probes = []
    real_count = _native.device.nvml_gpu_count

    def count() -> int:
        probes.append(1)
        return real_count()

    def open_gpus(*args, **kwargs):
        raise AssertionError("nvml_is_available opened the GPUs")

    monkeypatch.setattr(_native.device, "nvml_gpu_count", count)
    monkeypatch.setattr(_native.device, "open_gpus", open_gpus)
    assert nvml_is_available()
    assert nvml_is_available()
    assert nvml_is_available()
    assert len(probes) == 1  # answered once, not probed at each call
    reset_devices()
    assert nvml_is_available()
    assert len(probes) == 2


def test_nvml_is_available_is_false_for_a_missing_library(monkeypatch, tmp_path) -> None:
    from zeus.device.gpu import nvml_is_available

    monkeypatch.setenv("ZEUS_NVML_LIBRARY", str(tmp_path / "no-such-libnvidia-ml.so.1"))
    assert nvml_is_available() is False
    with pytest.raises(zx.ZeusBaseGPUError):  # opening the GPUs still says why
        get_gpus()


def test_nvml_is_available_is_false_when_nvml_reports_no_gpu(emulator) -> None:
    from zeus.device.gpu import nvml_is_available

    emulator([])
    assert nvml_is_available() is False
