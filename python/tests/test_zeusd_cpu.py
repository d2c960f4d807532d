"""ZeusMonitor(cpu_indices=[0]) run as nobody on a powercap tree whose counters only root may read (as on
Linux >= 5.10): the CPU energy comes through zeusd (build/bin/zeusd as root, cpu-read, --powercap-root on the
same tree), and a daemon configured but absent is an error naming its socket (W13b)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import textwrap
import time
from pathlib import Path
from typing import Iterator

import pytest

from conftest import BUILD_DIR, PYTHON

ZEUSD = BUILD_DIR / "bin" / "zeusd"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the daemon needs root (cpu-read), the client runs as nobody")

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

# Opens the window, says so, waits for a line on stdin (the test advances the counters meanwhile), ends it.
SCRIPT = textwrap.dedent("""
    import json, sys
    from zeus.monitor import ZeusMonitor
    monitor = ZeusMonitor(gpu_indices=[], cpu_indices=[0])
    monitor.begin_window("w", sync_execution=False)
    print("begun", flush=True)
    sys.stdin.readline()
    m = monitor.end_window("w", sync_execution=False)
    print(json.dumps({"cpu": m.cpu_energy[0], "dram": m.dram_energy[0]}), flush=True)
""")


def _write_energy(path: Path, energy_uj: int) -> None:
    path.write_text(f"{energy_uj}\n")
    path.chmod(0o400)  # root only


def _root_only_tree(root: Path, package_uj: int, dram_uj: int) -> tuple[Path, Path]:
    zone = root / "intel-rapl:0"
    dram = zone / "intel-rapl:0:1"
    dram.mkdir(parents=True)
    for directory, name in ((zone, "package-0"), (dram, "dram")):
        (directory / "name").write_text(f"{name}\n")
        (directory / "max_energy_range_uj").write_text("262143328850\n")
    _write_energy(zone / "energy_uj", package_uj)
    _write_energy(dram / "energy_uj", dram_uj)
    return zone / "energy_uj", dram / "energy_uj"


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(path))
            return True
        except OSError:
            return False


@pytest.fixture
def world(tmp_path: Path, subprocess_env: dict) -> dict:
    # nobody must reach the tree's names and the socket: let it through pytest's directories (0700 for root).
    for parent in [tmp_path, *tmp_path.parents]:
        if parent in (Path("/tmp"), Path("/")):
            break
        os.chmod(parent, os.stat(parent).st_mode | 0o005)
    os.chmod(tmp_path, 0o777)
    env = {k: v for k, v in subprocess_env.items() if k not in ("ZEUS_NVML_LIBRARY", "ZEUS_EMULATOR_CONFIG")}
    env["ZEUS_POWERCAP_ROOT"] = str(tmp_path / "powercap")
    env["ZEUSD_SOCK_PATH"] = str(tmp_path / "zeusd.sock")
    env.pop("ZEUSD_HOST_PORT", None)
    env.pop("ZEUSD_TOKEN", None)
    return {"root": tmp_path / "powercap", "sock": tmp_path / "zeusd.sock", "env": env}


@pytest.fixture
def daemon(world: dict, tmp_path: Path) -> Iterator[Path]:
    package, dram = _root_only_tree(world["root"], package_uj=2_000_000, dram_uj=300_000)
    proc = subprocess.Popen(
        [str(ZEUSD), "serve", "--mode", "uds", "--socket-path", str(world["sock"]), "--socket-permissions", "666",
         "--enable", "cpu-read", "--powercap-root", str(world["root"])],
        stderr=open(tmp_path / "zeusd.err", "w"))
    deadline = time.monotonic() + 60
    while not _accepts(world["sock"]):
        assert proc.poll() is None, (tmp_path / "zeusd.err").read_text()
        assert time.monotonic() < deadline, "zeusd did not listen within 60 s"
        time.sleep(0.01)
    yield package, dram
    proc.terminate()
    proc.wait(timeout=60)


def test_zeus_monitor_as_nobody_reads_cpu_energy_through_the_daemon(world: dict, daemon) -> None:
    package, dram = daemon
    child = subprocess.Popen([*NOBODY, PYTHON, "-c", SCRIPT], env=world["env"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
    try:
        line = child.stdout.readline()  # the window is open once this arrives
        assert line.strip() == "begun", child.stderr.read()
        _write_energy(package, 5_500_000)
        _write_energy(dram, 800_000)
        out, err = child.communicate("end\n", timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    energy = json.loads(out.strip().splitlines()[-1])
    assert energy["cpu"] == pytest.approx(3.5)  # (5.5e6 - 2e6) µJ
    assert energy["dram"] == pytest.approx(0.5)  # (0.8e6 - 0.3e6) µJ


def test_a_configured_but_absent_daemon_is_an_error_naming_it(world: dict) -> None:
    _root_only_tree(world["root"], package_uj=0, dram_uj=0)
    script = "from zeus.monitor import ZeusMonitor\nZeusMonitor(gpu_indices=[])\n"
    r = subprocess.run([*NOBODY, PYTHON, "-c", script], env=world["env"], capture_output=True, text=True,
                       timeout=120, cwd="/")
    assert r.returncode != 0
    assert "ZeusCPUInitError" in r.stderr, r.stderr
    assert "cannot reach zeusd at " + str(world["sock"]) in r.stderr, r.stderr
