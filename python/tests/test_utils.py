"""zeus.utils.lr_scaler, zeus.utils.env.get_env and zeus.utils.framework without a deep-learning framework."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from zeus.utils.env import get_env
from zeus.utils.lr_scaler import LinearScaler, SquareRootScaler


def test_square_root_and_linear_scaling() -> None:
    sqrt = SquareRootScaler(bs=64, lr=0.1)
    assert sqrt.compute_lr(256) == pytest.approx(0.2)  # 0.1 x sqrt(4)
    assert sqrt.compute_lr(16) == pytest.approx(0.05)
    assert sqrt.compute_lr(64) == pytest.approx(0.1)
    linear = LinearScaler(bs=64, lr=0.1)
    assert linear.compute_lr(256) == pytest.approx(0.4)
    assert linear.compute_lr(32) == pytest.approx(0.05)
    assert (sqrt.bs, sqrt.lr) == (64, 0.1)  # Zeus's fields
    assert SquareRootScaler(64, 0.1) == sqrt  # dataclasses, as in Zeus
    assert math.isclose(SquareRootScaler(bs=100, lr=1.0).compute_lr(200), math.sqrt(2))


@pytest.mark.parametrize("scaler", [SquareRootScaler, LinearScaler])
def test_a_batch_size_that_is_not_positive_is_a_value_error_naming_it(scaler) -> None:
    for bs in (0, -8, "64", None):
        with pytest.raises(ValueError, match="bs .* must be a positive number"):
            scaler(bs=bs, lr=0.1)
    with pytest.raises(ValueError, match="lr .* must be a number"):
        scaler(bs=64, lr="fast")


def test_get_env_converts_as_zeus_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEUS_TEST_INT", "42")
    monkeypatch.setenv("ZEUS_TEST_FLOAT", "0.5")
    monkeypatch.setenv("ZEUS_TEST_STR", "hello")
    assert get_env("ZEUS_TEST_INT", int) == 42
    assert get_env("ZEUS_TEST_FLOAT", float) == 0.5
    assert get_env("ZEUS_TEST_STR", str) == "hello"
    assert get_env("ZEUS_TEST_STR", Path) == Path("hello")
    for text, value in (("true", True), ("TRUE", True), ("False", False), ("false", False)):
        monkeypatch.setenv("ZEUS_TEST_BOOL", text)
        assert get_env("ZEUS_TEST_BOOL", bool) is value
    for text in ("1", "yes", "", "on"):
        monkeypatch.setenv("ZEUS_TEST_BOOL", text)
        with pytest.raises(ValueError, match="ZEUS_TEST_BOOL.*'true' or 'false'"):
            get_env("ZEUS_TEST_BOOL", bool)
    with pytest.raises(ValueError):
        get_env("ZEUS_TEST_STR", int)  # int("hello")


def test_get_env_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZEUS_TEST_UNSET", raising=False)
    assert get_env("ZEUS_TEST_UNSET", int, 7) == 7
    assert get_env("ZEUS_TEST_UNSET", bool, False) is False  # a falsy default is still a default
    # Zeus's weakness W16, kept: default=None means "no default", so an unset variable is an error.
    with pytest.raises(ValueError, match="Missing environment variable 'ZEUS_TEST_UNSET'"):
        get_env("ZEUS_TEST_UNSET", int)
    with pytest.raises(ValueError, match="Missing environment variable"):
        get_env("ZEUS_TEST_UNSET", str, None)
    monkeypatch.setenv("ZEUS_TEST_UNSET", "3")
    assert get_env("ZEUS_TEST_UNSET", int, 7) == 3  # set: the default is not used


def test_without_a_framework_all_reduce_returns_its_input_and_nothing_is_distributed(
        subprocess_env: dict[str, str], tmp_path: Path) -> None:
    script = tmp_path / "no_framework.py"
    script.write_text(textwrap.dedent("""
        import sys
        for name in ("torch", "jax", "cupy"):
            sys.modules[name] = None  # not importable: as on a machine without them

        from zeus.utils import framework

        values = [1.0, 2.5]
        assert framework.all_reduce(values, "sum") is values
        assert framework.all_reduce(values, "max") is values
        assert framework.is_distributed() is False
        assert framework.get_rank() == 0
        assert framework.get_world_size() == 1
        try:
            framework.all_reduce(values, "mean")
        except ValueError as e:
            assert "'sum' or 'max'" in str(e)
        else:
            raise AssertionError("all_reduce accepted 'mean'")
        try:
            framework.sync_execution([0], sync_with="torch")
        except RuntimeError as e:
            assert "sync_execution=False" in str(e)
        else:
            raise AssertionError("sync_execution without torch did not raise")
        print("ok")
    """))
    env = {**subprocess_env}
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert done.stderr == ""


def _serve_once(body: bytes, status: int = 200):
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # quiet
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_get_ip_lat_long_reads_ipinfo_loc(monkeypatch) -> None:
    from zeus.exception import ZeusBaseError
    from zeus.utils.lat_lon import get_ip_lat_long

    server = _serve_once(b'{"ip": "192.0.2.1", "loc": "37.3860,-122.0838"}')
    try:
        monkeypatch.setenv("ZEUS_IPINFO_URL", f"http://127.0.0.1:{server.server_address[1]}/json")
        assert get_ip_lat_long() == (37.386, -122.0838)
    finally:
        server.shutdown()
    bad = _serve_once(b'{"ip": "192.0.2.1"}')
    try:
        url = f"http://127.0.0.1:{bad.server_address[1]}/json"
        monkeypatch.setenv("ZEUS_IPINFO_URL", url)
        with pytest.raises(ZeusBaseError, match="loc"):
            get_ip_lat_long()
    finally:
        bad.shutdown()
    monkeypatch.setenv("ZEUS_IPINFO_URL", "http://127.0.0.1:9/json")  # discard port: refused
    with pytest.raises(ZeusBaseError, match="127.0.0.1:9"):
        get_ip_lat_long(timeout_s=5)
