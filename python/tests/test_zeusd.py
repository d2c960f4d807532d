"""zeus.utils.zeusd against the real daemon (build/bin/zeusd as root on the emulator), and the
Python GlobalPowerLimitOptimizer run as nobody changing limits through it."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Iterator

import pytest

from conftest import PYTHON, ZEUSD_BINARY, a40, start_zeusd
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
    with pytest.raises(ZeusdError, match="Failed to get_cpu_power"):
        client.get_cpu_power()  # cpu-read is not enabled: 404
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
