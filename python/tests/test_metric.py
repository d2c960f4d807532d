"""zeus.metric against Debian's Prometheus Pushgateway and Prometheus.

Each test pushes from emulated GPUs on the emulator's manual clock, so energies are exact (power x the time the
test advances); the values are read back through Prometheus's query API after it scraped the gateway.
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest

from conftest import EMULATOR_LIBRARY, a40
from zeus.metric import EnergyCumulativeCounter, EnergyHistogram, PowerGauge

PROMETHEUS = "/usr/bin/prometheus"
PUSHGATEWAY = "/usr/bin/prometheus-pushgateway"
DEADLINE_S = 60.0

pytestmark = pytest.mark.skipif(
    not (os.path.exists(PROMETHEUS) and os.path.exists(PUSHGATEWAY)), reason="prometheus or pushgateway missing"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(url: str) -> Optional[bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read() if response.status == 200 else None
    except OSError:
        return None


def wait_until(ready: Callable[[], bool]) -> bool:
    """Polls ``ready`` until it holds or the deadline passes (a readiness wait, never a fixed sleep)."""
    give_up = time.monotonic() + DEADLINE_S
    while not ready():
        if time.monotonic() > give_up:
            return ready()
        time.sleep(0.01)
    return True


def start(argv: list[str], url: str, log: Path) -> subprocess.Popen:
    process = subprocess.Popen(argv, stdout=log.open("w"), stderr=subprocess.STDOUT)
    assert wait_until(lambda: http_get(url + "/-/ready") is not None), f"{argv[0]} not ready; see {log}"
    return process


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Servers:
    def __init__(self, directory: Path) -> None:
        gateway_port = free_port()
        self.gateway = f"http://127.0.0.1:{gateway_port}"
        self._gateway = start(
            [PUSHGATEWAY, f"--web.listen-address=127.0.0.1:{gateway_port}",
             f"--persistence.file={directory / 'pushgateway.data'}", "--log.level=warn"],
            self.gateway, directory / "pushgateway.log")
        config = directory / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 200ms\n  scrape_timeout: 200ms\nscrape_configs:\n"
            f"  - job_name: pushgateway\n    honor_labels: true\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{gateway_port}']\n")
        prometheus_port = free_port()
        self.prometheus = f"http://127.0.0.1:{prometheus_port}"
        try:
            self._prometheus = start(
                [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={directory / 'data'}",
                 f"--web.listen-address=127.0.0.1:{prometheus_port}", "--log.level=warn"],
                self.prometheus, directory / "prometheus.log")
        except BaseException:
            stop(self._gateway)
            raise

    def close(self) -> None:
        stop(self._prometheus)
        stop(self._gateway)

    def value(self, promql: str) -> Optional[float]:
        body = http_get(self.prometheus + "/api/v1/query?query=" + urllib.parse.quote(promql))
        if body is None:
            return None
        result = json.loads(body)["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    def wait_for(self, promql: str, expected: float) -> Optional[float]:
        wait_until(lambda: self.value(promql) == expected)
        return self.value(promql)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    directory = tmp_path_factory.mktemp("prometheus")
    s = Servers(directory)
    yield s
    s.close()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def advance(emulator: Callable[..., Path]) -> Callable[[float], None]:
    """One emulated A40 drawing 200 W on a manual clock; returns advance(seconds)."""
    emulator([a40(power_w=200)], clock="manual", counter_update_period_ms=0)
    library = ctypes.CDLL(str(EMULATOR_LIBRARY))
    library.zeusEmulatorAdvanceTimeNs.argtypes = [ctypes.c_ulonglong]

    def step(seconds: float) -> None:
        assert library.zeusEmulatorAdvanceTimeNs(int(seconds * 1e9)) == 0

    return step


def test_histogram_window_reaches_prometheus(servers: Servers, advance: Callable[[float], None]) -> None:
    histogram = EnergyHistogram(cpu_indices=[], gpu_indices=[0], pushgateway_url=servers.gateway, job="py_hist")
    histogram.begin_window("epoch", sync_execution=False)
    advance(2.0)  # 200 W x 2 s
    histogram.end_window("epoch", sync_execution=False)
    sel = '{job="py_hist",window="epoch",index="0"'
    assert servers.wait_for(f"energy_monitor_gpu_energy_joules_sum{sel}}}", 400.0) == 400.0
    assert servers.value(f"energy_monitor_gpu_energy_joules_count{sel}}}") == 1.0
    assert servers.value(f'energy_monitor_gpu_energy_joules_bucket{sel},le="500"}}') == 1.0
    assert servers.value(f'energy_monitor_gpu_energy_joules_bucket{sel},le="200"}}') == 0.0


def test_cumulative_counter_totals_the_window(servers: Servers, advance: Callable[[float], None]) -> None:
    counter = EnergyCumulativeCounter(
        cpu_indices=[], gpu_indices=[0], update_period=0.01, pushgateway_url=servers.gateway, job="py_counter")
    counter.begin_window("train")
    for _ in range(3):
        pushes = counter._native.pushes_attempted
        advance(1.0)
        assert wait_until(lambda: counter._native.pushes_attempted >= pushes + 2)  # a sub-window boundary
    counter.end_window("train")
    query = 'energy_monitor_gpu_energy_joules_total{job="py_counter",window="train",index="0"}'
    assert servers.wait_for(query, 600.0) == 600.0  # 200 W x 3 s
    with pytest.raises(ValueError, match="does not exist"):
        counter.end_window("train")


def test_power_gauge_reaches_prometheus(servers: Servers, advance: Callable[[float], None]) -> None:
    gauge = PowerGauge(gpu_indices=[0], update_period=0.01, pushgateway_url=servers.gateway, job="py_gauge")
    gauge.begin_window("run")
    with pytest.raises(ValueError, match="already exists"):
        gauge.begin_window("run")
    assert wait_until(lambda: gauge._native.pushes_attempted >= 2)
    gauge.end_window("run")
    assert servers.wait_for('power_monitor_gpu_power_watts{job="py_gauge",window="run",index="0"}', 200.0) == 200.0


def test_empty_bucket_range_is_a_value_error(advance: Callable[[float], None]) -> None:
    with pytest.raises(ValueError, match="GPU bucket range cannot be empty"):
        EnergyHistogram([], [0], "http://127.0.0.1:9", "job", gpu_bucket_range=[])


def test_unreachable_gateway_never_raises(advance: Callable[[float], None], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="zeus")

    def logged(window: str) -> int:
        return sum(f'pushing window "{window}" of job "py_down"' in r.getMessage() for r in caplog.records
                   if r.name == "zeus.metric")

    with socket.socket() as refusing:  # bound, never listening: connections are refused
        refusing.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{refusing.getsockname()[1]}"
        histogram = EnergyHistogram([], [0], url, "py_down")
        for failed, window in enumerate(("a", "b"), start=1):
            histogram.begin_window(window, sync_execution=False)
            advance(0.5)
            histogram.end_window(window, sync_execution=False)  # returns at once; the push fails behind it
            assert wait_until(lambda: histogram._native.pushes_failed == failed)
            # Logged by the push thread: delivered to the zeus.metric logger by the log bridge's thread.
            assert wait_until(lambda: logged(window) == 1)
    assert logged("a") == 1 and logged("b") == 1
