"""zeus.utils.zeusd against the real daemon (build/bin/zeusd as root on the emulator), and the
Python GlobalPowerLimitOptimizer run as nobody changing limits through it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import textwrap
from pathlib import Path
from typing import Iterator

import pytest

from conftest import PYTHON, ZEUSD_BINARY, a40, start_zeusd, stop_zeusd
from zeus.exception import ZeusdAuthError, ZeusdCapabilityError, ZeusdConnectionError, ZeusdError
from zeus.utils.zeusd import ZeusdClient, ZeusdConfig, require_capabilities

ZEUSD = ZEUSD_BINARY
# Energy per step falls with the limit (100 W: 100 J/s * 2 s = 200 J; 300 W: 260 * 0.98 = 254.8 J).
WORKLOAD = {"power_limits_w": [100, 200, 300], "power_w": [100, 200, 260], "iteration_time_s": [2.0, 1.1, 0.98]}

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the daemon needs root (gpu-control)")


@pytest.fixture
def daemon(emulator, tmp_path: Path) -> Iterator[Path]:
    os.chmod(tmp_path, 0o777)
    scenario = emulator([a40(power_limit_w=250, workload=WORKLOAD), a40(power_limit_w=300, workload=WORKLOAD)], clock="manual")
    os.chmod(scenario, 0o644)
    proc = start_zeusd(tmp_path, scenario)
    os.chmod(tmp_path / "emulator-state", 0o666)
    yield tmp_path / "zeusd.sock"
    proc.terminate()
    proc.wait(timeout=60)


def test_config_from_env_prefers_the_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEUSD_SOCK_PATH", "/run/zeusd/zeusd.sock")
    monkeypatch.setenv("ZEUSD_HOST_PORT", "node1")
    monkeypatch.setenv("ZEUSD_TOKEN", "t")
    config = ZeusdConfig.from_env()
    assert config == ZeusdConfig(socket_path="/run/zeusd/zeusd.sock", token="t")
    assert config.url("/discover") == "http://localhost/discover"
    monkeypatch.delenv("ZEUSD_SOCK_PATH")
    config = ZeusdConfig.from_env()
    assert config.host_port == "node1" and config.endpoint == "node1"
    assert config.url("/time") == "http://node1/time"
    monkeypatch.delenv("ZEUSD_HOST_PORT")
    assert ZeusdConfig.from_env() is None
    with pytest.raises(ZeusdConnectionError, match="No Zeusd connection configured"):
        ZeusdClient()


def test_an_empty_socket_path_counts_as_unset_as_in_the_native_client(monkeypatch: pytest.MonkeyPatch) -> None:
    # A port where nothing listens: bound, never listening.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as refusing:
        refusing.bind(("127.0.0.1", 0))
        host_port = f"127.0.0.1:{refusing.getsockname()[1]}"
        monkeypatch.setenv("ZEUSD_SOCK_PATH", "")
        monkeypatch.setenv("ZEUSD_HOST_PORT", host_port)
        monkeypatch.setenv("ZEUSD_TOKEN", "")
        assert ZeusdConfig.from_env() == ZeusdConfig(host_port=host_port)
        # The client goes where the configuration says: TCP, not a socket named "".
        with pytest.raises(ZeusdConnectionError, match="cannot reach zeusd at " + host_port):
            ZeusdClient()
    monkeypatch.setenv("ZEUSD_HOST_PORT", "")
    assert ZeusdConfig.from_env() is None
    with pytest.raises(ZeusdConnectionError, match="No Zeusd connection configured"):
        ZeusdClient()


def test_unreachable_daemon(tmp_path: Path) -> None:
    with pytest.raises(ZeusdConnectionError, match="cannot reach zeusd at " + str(tmp_path / "none.sock")):
        ZeusdClient(ZeusdConfig.uds(str(tmp_path / "none.sock")))


def test_client_discovers_sets_and_reads(daemon: Path) -> None:
    client = ZeusdClient(ZeusdConfig.uds(str(daemon)))
    assert client.gpu_ids == [0, 1]
    assert client.gpus[0].name == "NVIDIA A40"
    assert client.enabled_api_groups == {"gpu-control", "gpu-read"}
    assert (client.can_control_gpu, client.can_read_gpu, client.can_read_cpu) == (True, True, False)
    assert client.auth_required is False and client.auth_error is None
    assert client.get_power_limit() == {0: 250_000, 1: 300_000}
    client.set_power_limit([1], 200_000, block=True)
    assert client.get_power_limit([1]) == {1: 200_000}
    assert client.get_power_limit_constraints([0]) == {0: (100_000, 300_000)}
    assert client.get_time() > 1.7e9
    with pytest.raises(ZeusdError, match="400"):
        client.set_power_limit([0], 5_000)  # below the minimum
    assert client.get_power_limit_constraints() == {0: (100_000, 300_000), 1: (100_000, 300_000)}
    assert client.get_persistence_mode([0]) == {0: False}
    power = client.get_gpu_power()
    assert power.timestamp_ms > 1.7e12 and set(power.power_mw) == {0, 1}
    with pytest.raises(ZeusdError, match="failed to get CPU power \\(HTTP 404\\)") as raised:
        client.get_cpu_power()  # cpu-read is not enabled: 404
    assert type(raised.value) is ZeusdError and raised.value.native_code == 404
    require_capabilities(client, read_gpu=True, control_gpu=True, gpu_ids=[0, 1])
    with pytest.raises(ZeusdCapabilityError) as raised:
        require_capabilities(client, read_cpu=True, gpu_ids=[7])
    assert "'cpu-read' is not enabled" in str(raised.value)
    assert "GPU 7 is not available" in str(raised.value)


def test_auth_errors_are_kept_then_raised_by_require(emulator, tmp_path: Path) -> None:
    scenario = emulator([a40(workload=WORKLOAD)], clock="manual")
    key = tmp_path / "key"
    key.write_text("a signing key for the test only")
    key.chmod(0o600)
    proc = start_zeusd(tmp_path, scenario, "--signing-key-path", str(key))
    try:
        client = ZeusdClient(ZeusdConfig.uds(str(tmp_path / "zeusd.sock")))
        assert client.auth_required
        assert "no token was provided" in client.auth_error
        assert not client.can_read_gpu
        with pytest.raises(ZeusdAuthError):
            require_capabilities(client, read_gpu=True)
        token = subprocess.run([str(ZEUSD), "token", "issue", "--signing-key-path", str(key), "--user", "bob",
                                "--scope", "gpu-read", "--expires", "1h"], check=True, capture_output=True,
                               text=True).stdout.strip()
        client = ZeusdClient(ZeusdConfig.uds(str(tmp_path / "zeusd.sock"), token=token))
        assert client.granted_scopes == {"gpu-read"}
        assert client.can_read_gpu and not client.can_control_gpu
        with pytest.raises(ZeusdCapabilityError, match="lacks the 'gpu-control' scope"):
            require_capabilities(client, control_gpu=True)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def _rapl_tree(root: Path) -> None:
    zone = root / "intel-rapl:0"
    zone.mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    (zone / "energy_uj").write_text("1000\n")


def _token(key: Path, scope: str) -> str:
    return subprocess.run([str(ZEUSD), "token", "issue", "--signing-key-path", str(key), "--user", "bob", "--scope",
                           scope, "--expires", "1h"], check=True, capture_output=True, text=True).stdout.strip()


# Every call of ZeusdClient, with the API group whose scope it needs.
CALLS = {
    "get_gpu_energy": ("gpu-read", lambda c: c.get_gpu_energy([0])),
    "get_gpu_power": ("gpu-read", lambda c: c.get_gpu_power()),
    "get_persistence_mode": ("gpu-read", lambda c: c.get_persistence_mode()),
    "get_power_limit": ("gpu-read", lambda c: c.get_power_limit()),
    "get_power_limit_constraints": ("gpu-read", lambda c: c.get_power_limit_constraints([0])),
    "set_power_limit": ("gpu-control", lambda c: c.set_power_limit([0], 200_000)),
    "set_persistence_mode": ("gpu-control", lambda c: c.set_persistence_mode([0], True)),
    "set_gpu_locked_clocks": ("gpu-control", lambda c: c.set_gpu_locked_clocks([0], 210, 1740)),
    "reset_gpu_locked_clocks": ("gpu-control", lambda c: c.reset_gpu_locked_clocks([0])),
    "set_mem_locked_clocks": ("gpu-control", lambda c: c.set_mem_locked_clocks([0], 405, 1215)),
    "reset_mem_locked_clocks": ("gpu-control", lambda c: c.reset_mem_locked_clocks([0])),
    "reset_locked_clocks": ("gpu-control", lambda c: c.reset_locked_clocks([0])),
    "get_cpu_energy": ("cpu-read", lambda c: c.get_cpu_energy([0])),
    "get_cpu_power": ("cpu-read", lambda c: c.get_cpu_power([0])),
}


def test_a_403_is_zeusd_auth_error_from_every_call(emulator, tmp_path: Path) -> None:
    """A token without the call's scope: the daemon answers 403, and every call raises ZeusdAuthError (the native
    error table's row), never a bare ZeusdError."""
    scenario = emulator([a40(workload=WORKLOAD)], clock="manual")
    key = tmp_path / "key"
    key.write_text("a signing key for the test only")
    key.chmod(0o600)
    _rapl_tree(tmp_path / "powercap")
    proc = start_zeusd(tmp_path, scenario, "--signing-key-path", str(key), "--powercap-root",
                       str(tmp_path / "powercap"), enable="gpu-control,gpu-read,cpu-read")
    try:
        groups = ["gpu-control", "gpu-read", "cpu-read"]
        clients = {}
        for group in groups:
            others = ",".join(g for g in groups if g != group)
            clients[group] = ZeusdClient(ZeusdConfig.uds(str(tmp_path / "zeusd.sock"), token=_token(key, others)))
            assert clients[group].granted_scopes == set(groups) - {group}
        for name, (group, call) in CALLS.items():
            with pytest.raises(ZeusdAuthError) as raised:
                call(clients[group])
            assert raised.value.native_code == 403, name
            assert "403" in str(raised.value), name
        # With the scope, the same calls pass the daemon's check (the reads, which change nothing).
        everything = ZeusdClient(ZeusdConfig.uds(str(tmp_path / "zeusd.sock"), token=_token(key, ",".join(groups))))
        for name, (group, call) in CALLS.items():
            if name.startswith("get_"):
                call(everything)
    finally:
        stop_zeusd(proc)


def test_every_public_call_of_the_client_is_covered() -> None:
    public = {name for name in vars(ZeusdClient) if not name.startswith("_") and callable(getattr(ZeusdClient, name))}
    assert public - {"url", "get_time"} == set(CALLS)  # /time needs no token; url() sends nothing


SCRIPT = textwrap.dedent("""
    import json
    from zeus.monitor import ZeusMonitor
    from zeus.optimizer.power_limit import GlobalPowerLimitOptimizer, Energy
    monitor = ZeusMonitor(gpu_indices=[0])
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), wait_steps=1, warmup_steps=1,
                                    profile_steps=2, pl_step=100)
    for epoch in range(30):
        plo.on_epoch_begin()
        for step in range(4):
            plo.on_step_begin()
            plo.on_step_end()
        plo.on_epoch_end()
    print(json.dumps({"state": type(plo.state).__name__}))
""")


def test_python_optimizer_as_nobody_goes_through_the_daemon(daemon: Path, subprocess_env: dict) -> None:
    # nobody must reach the scenario and the state: let it through pytest's directories (0700 for root).
    for parent in daemon.parents:
        if parent == Path("/tmp") or parent == Path("/"):
            break
        os.chmod(parent, os.stat(parent).st_mode | 0o005)
    env = dict(subprocess_env, ZEUSD_SOCK_PATH=str(daemon))
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", PYTHON, "-c", SCRIPT],
                       env=env, capture_output=True, text=True, timeout=300, cwd="/")
    assert r.returncode == 0, r.stderr
    assert "no permission" not in r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["state"] == "Done", r.stderr
    # Read as root from this process: the original limit is back after the normal end.
    assert ZeusdClient(ZeusdConfig.uds(str(daemon))).get_power_limit([0]) == {0: 250_000}
    # The limits went through the daemon: pointed at a socket where none listens, the optimizer fails and says so.
    env["ZEUSD_SOCK_PATH"] = str(daemon) + ".none"
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", PYTHON, "-c", SCRIPT],
                       env=env, capture_output=True, text=True, timeout=300, cwd="/")
    assert r.returncode != 0
    assert "cannot reach zeusd at " + str(daemon) + ".none" in r.stderr, r.stderr
