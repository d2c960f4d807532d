"""The packaging side of the zeus package: versions, zeus.emulator, the console script (zeus._cli), zeus.metric
without the exporter, and `cmake --install --component python`.

Against a build tree (``PYTHONPATH=<build>/python ZEUS_BUILD_DIR=<build>``); the wheel itself is checked by
scripts/test-wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BUILD_DIR, EMULATOR_LIBRARY, PYTHON_DIR, SOURCE_DIR, ZEUS_BINARY

import zeus
import zeus._cli
import zeus._native
import zeus.emulator
import zeus.metric


def project_version() -> str:
    return (SOURCE_DIR / "VERSION").read_text().splitlines()[0].strip()


def run_python(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture
def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = str(PYTHON_DIR)
    for key in ("ZEUS_NVML_LIBRARY", "ZEUS_EMULATOR_CONFIG"):
        out.pop(key, None)
    return out


# --- Versions.

def test_version_is_the_projects() -> None:
    assert zeus.__version__ == project_version()
    assert zeus._native.__version__ == project_version()


def test_zeus_api_version_is_separate() -> None:
    assert zeus.__zeus_api_version__ == "0.16.0"


def test_unknown_package_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        zeus.no_such_thing  # noqa: B018


# --- zeus.emulator.

def test_emulator_library_is_the_build_trees() -> None:
    assert zeus.emulator.library_path() == EMULATOR_LIBRARY.resolve()


def test_scenarios_are_found() -> None:
    assert {"four-gpus", "emulated-training"} <= set(zeus.emulator.scenarios())
    path = zeus.emulator.scenario_path("four-gpus")
    assert len(json.loads(path.read_text())["gpus"]) == 4
    assert zeus.emulator.scenario_path("four-gpus.json") == path
    assert zeus.emulator.scenario_path() == path  # the default


def test_unknown_scenario_names_the_known_ones() -> None:
    with pytest.raises(FileNotFoundError, match="four-gpus"):
        zeus.emulator.scenario_path("no-such-scenario")


def test_scenario_name_is_not_a_path() -> None:
    with pytest.raises(FileNotFoundError, match="not a scenario name"):
        zeus.emulator.scenario_path("../examples/four-gpus")


def test_missing_library_lists_where_it_looked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(zeus.emulator, "_library_candidates", lambda: [tmp_path / "a.so", tmp_path / "b.so"])
    with pytest.raises(FileNotFoundError, match="b.so"):
        zeus.emulator.library_path()


def test_environment_selects_the_emulator() -> None:
    env = zeus.emulator.environment("emulated-training")
    assert env == {
        "ZEUS_NVML_LIBRARY": str(zeus.emulator.library_path()),
        "ZEUS_EMULATOR_CONFIG": str(zeus.emulator.scenario_path("emulated-training")),
    }


def test_module_prints_export_lines(env: dict[str, str]) -> None:
    done = run_python("-m", "zeus.emulator", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"export ZEUS_NVML_LIBRARY={zeus.emulator.library_path()}",
        f"export ZEUS_EMULATOR_CONFIG={zeus.emulator.scenario_path('four-gpus')}",
    ]


def test_module_takes_a_scenario_file(env: dict[str, str], tmp_path: Path) -> None:
    own = tmp_path / "my scenario.json"
    own.write_text('{"gpus": []}')
    done = run_python("-m", "zeus.emulator", str(own), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == f"export ZEUS_EMULATOR_CONFIG='{own}'"  # quoted for the shell


def test_module_lists_and_rejects(env: dict[str, str]) -> None:
    listed = run_python("-m", "zeus.emulator", "--list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert any(line.startswith("four-gpus\t") for line in listed.stdout.splitlines())
    bad = run_python("-m", "zeus.emulator", "no-such-scenario", env=env)
    assert bad.returncode == 1
    assert "no emulator scenario 'no-such-scenario'" in bad.stderr


def test_exported_environment_measures(env: dict[str, str]) -> None:
    env.update(zeus.emulator.environment("four-gpus"))
    code = (
        "from zeus.monitor import ZeusMonitor\n"
        "m = ZeusMonitor(gpu_indices=[0, 1], cpu_indices=[])\n"
        "m.begin_window('w', sync_execution=False)\n"
        "print(sorted(m.end_window('w', sync_execution=False).gpu_energy))\n"
    )
    done = run_python("-c", code, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0, 1]"


# --- The console script.

def test_cli_finds_the_build_trees_binary() -> None:
    assert zeus._cli.binary_path() == ZEUS_BINARY.resolve()


def test_cli_runs_the_binary_with_its_arguments(env: dict[str, str]) -> None:
    done = run_python("-m", "zeus._cli", "--version", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"zeus {project_version()}"


def test_cli_passes_the_exit_status_through(env: dict[str, str]) -> None:
    done = run_python("-m", "zeus._cli", "info", "--no-such-flag", env=env)
    assert done.returncode == 2, (done.stdout, done.stderr)


def test_cli_info_lists_the_scenarios_gpus(env: dict[str, str]) -> None:
    env.update(zeus.emulator.environment("four-gpus"))
    done = run_python("-m", "zeus._cli", "info", "--json", env=env)
    assert done.returncode == 0, done.stderr
    names = [g["name"] for g in json.loads(done.stdout)["gpus"]]
    assert names == [g["name"] for g in json.loads(zeus.emulator.scenario_path("four-gpus").read_text())["gpus"]]


def test_cli_without_a_binary_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                      capsys: pytest.CaptureFixture) -> None:
    not_elf = tmp_path / "zeus"
    not_elf.write_text("#!/bin/sh\n")  # a script named zeus (the console script itself) is never run
    not_elf.chmod(0o755)
    monkeypatch.setattr(zeus._cli, "_candidates", lambda: [tmp_path / "missing", not_elf])
    assert zeus._cli.main(["--version"]) == 127
    assert "not in this installation" in capsys.readouterr().err


# --- zeus.metric without the push helpers.

@pytest.mark.parametrize("make", [
    lambda: zeus.metric.EnergyHistogram([], [0], "http://127.0.0.1:9", "job"),
    lambda: zeus.metric.EnergyCumulativeCounter([], [0], 1.0, "http://127.0.0.1:9", "job"),
    lambda: zeus.metric.PowerGauge([0], 1.0, "http://127.0.0.1:9", "job"),
], ids=["histogram", "counter", "gauge"])
def test_metric_without_exporter_raises_the_documented_error(monkeypatch: pytest.MonkeyPatch, make) -> None:
    if hasattr(zeus._native, "metric"):
        monkeypatch.delattr(zeus._native, "metric")  # as in a build without the exporter
    assert not zeus.metric.metrics_available()
    with pytest.raises(zeus.metric.MetricsUnavailableError) as raised:
        make()  # before any GPU is opened: no emulator is needed
    assert isinstance(raised.value, ImportError)
    for words in ("exporter", "prometheus-cpp", "python3-zeus", "-DZEUS_BUILD_EXPORTER=ON"):
        assert words in str(raised.value)


# --- cmake --install --component python.

def test_installed_component_is_an_importable_package(tmp_path: Path, env: dict[str, str]) -> None:
    if shutil.which("cmake") is None or not (BUILD_DIR / "cmake_install.cmake").exists():
        pytest.skip("no cmake or no configured build tree")
    cache = (BUILD_DIR / "CMakeCache.txt").read_text()
    pythondir = next((line.split("=", 1)[1] for line in cache.splitlines()
                      if line.startswith("ZEUS_INSTALL_PYTHONDIR:")), None)
    if pythondir is None or os.path.isabs(pythondir):
        pytest.skip(f"the build tree installs the package to {pythondir}, not under a prefix")
    done = subprocess.run(["cmake", "--install", str(BUILD_DIR), "--component", "python", "--prefix",
                           str(tmp_path / "prefix")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "prefix" / pythondir
    assert (site / "zeus" / "__init__.py").is_file()
    assert list((site / "zeus").glob("_native*.so"))
    assert (site / "zeus" / "optimizer" / "batch_size" / "client.py").is_file()
    env["PYTHONPATH"] = str(site)
    code = "import zeus, zeus._native, zeus.monitor, zeus.metric; print(zeus.__file__, zeus.__version__)"
    imported = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                              cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.split() == [str(site / "zeus" / "__init__.py"), project_version()]


def test_an_amd_scenario_selects_the_amd_smi_face() -> None:
    assert {"mi300x", "mi250"} <= set(zeus.emulator.scenarios())
    env = zeus.emulator.environment("mi300x")
    assert env == {
        "ZEUS_GPU_VENDOR": "amd",
        "ZEUS_AMDSMI_LIBRARY": str(zeus.emulator.library_path("amd")),
        "ZEUS_AMDSMI_EMULATOR_CONFIG": str(zeus.emulator.scenario_path("mi300x")),
    }
    assert zeus.emulator.library_path("amd").name == "libzeus-amdsmi-emulator.so"
