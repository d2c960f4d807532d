"""zeus.monitor.power_streaming.PowerStreamingClient against real daemons: build/bin/zeusd (as root) on
emulated GPUs with constant power, and a fake powercap tree for CPU readings.

The emulated GPUs draw constant power (power_w), so every reading is known by hand. zeusd repeats an
unchanged reading at least once a second, which is what drives the updates here; nothing waits on a sleep
being long enough: every wait is for a condition, with a generous deadline.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List

import pytest

from conftest import a40, start_zeusd, stop_zeusd, write_scenario
from zeus.exception import ZeusdCapabilityError, ZeusdConnectionError
from zeus.monitor.power_streaming import CpuPowerReading, PowerReadings, PowerStreamingClient, StreamEnergy
from zeus.utils.zeusd import ZeusdConfig

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the daemon needs root (cpu-read, gpu-control)")

DEADLINE_S = 60


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {DEADLINE_S} s"
        time.sleep(0.01)


def _iterate(client: PowerStreamingClient, on_snapshot: Callable[[Dict[str, PowerReadings]], bool]) -> None:
    """``for snapshot in client: if on_snapshot(snapshot): break``, bounded by DEADLINE_S: the loop runs in a
    thread; if it is still running at the deadline the client is stopped (so the thread ends) and the test fails."""
    errors: List[BaseException] = []

    def run() -> None:
        try:
            for snapshot in client:
                if on_snapshot(snapshot):
                    return
        except BaseException as e:  # re-raised in the test's thread
            errors.append(e)

    consumer = threading.Thread(target=run, daemon=True)
    consumer.start()
    consumer.join(DEADLINE_S)
    if consumer.is_alive():
        client.stop()
        consumer.join(DEADLINE_S)
        pytest.fail(f"the iteration did not finish within {DEADLINE_S} s")
    if errors:
        raise errors[0]


def _write_rapl(root: Path) -> None:
    """Two packages whose counters stand still: package 0 with DRAM, package 1 without (so 0 W each)."""
    for package, dram in ((0, True), (1, False)):
        zone = root / f"intel-rapl:{package}"
        zone.mkdir(parents=True)
        (zone / "name").write_text(f"package-{package}\n")
        (zone / "max_energy_range_uj").write_text("262143328850\n")
        (zone / "energy_uj").write_text("5000000\n")
        if dram:
            sub = zone / f"intel-rapl:{package}:0"
            sub.mkdir()
            (sub / "name").write_text("dram\n")
            (sub / "max_energy_range_uj").write_text("65712999613\n")
            (sub / "energy_uj").write_text("7000000\n")


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[Dict[str, Path]]:
    """Two daemons: "a" with GPUs at 100 W and 150 W (and two fake RAPL packages), "b" with one GPU at 200 W."""
    rapl = tmp_path / "powercap"
    _write_rapl(rapl)
    a = start_zeusd(tmp_path, write_scenario(tmp_path / "a", [a40(power_w=100), a40(power_w=150)]),
                    "--powercap-root", str(rapl), socket_name="a.sock", enable="gpu-read,cpu-read")
    b = start_zeusd(tmp_path, write_scenario(tmp_path / "b", [a40(power_w=200)]), socket_name="b.sock",
                    enable="gpu-read")
    yield {"a": tmp_path / "a.sock", "b": tmp_path / "b.sock"}
    stop_zeusd(a)
    stop_zeusd(b)


@pytest.fixture
def client(daemons: Dict[str, Path]) -> Iterator[PowerStreamingClient]:
    # A 30 s hold: a daemon repeat delayed on a loaded machine must not turn into a gap where tests assert
    # complete energy.
    c = PowerStreamingClient([ZeusdConfig.uds(str(daemons["a"])), ZeusdConfig.uds(str(daemons["b"]))],
                             reconnect_delay_s=0.1, max_sample_hold_s=30.0)
    yield c
    c.stop()


def _all_in(snapshot: Dict[str, PowerReadings], daemons: Dict[str, Path]) -> bool:
    a = snapshot.get(str(daemons["a"]))
    b = snapshot.get(str(daemons["b"]))
    return (a is not None and b is not None and set(a.gpu_power_w) == {0, 1} and set(a.cpu_power_w) == {0, 1}
            and set(b.gpu_power_w) == {0})


def test_iterator_yields_every_endpoint_in_order(client: PowerStreamingClient, daemons: Dict[str, Path]) -> None:
    snapshots: List[Dict[str, PowerReadings]] = []
    start_s = time.time()

    def collect(snapshot: Dict[str, PowerReadings]) -> bool:
        snapshots.append(snapshot)
        return (_all_in(snapshot, daemons) and len(snapshots) >= 4) or len(snapshots) == 100

    _iterate(client, collect)
    last = snapshots[-1]
    assert _all_in(last, daemons), last
    a, b = last[str(daemons["a"])], last[str(daemons["b"])]
    assert a.gpu_power_w == {0: 100.0, 1: 150.0}
    assert a.cpu_power_w == {0: CpuPowerReading(0.0, 0.0), 1: CpuPowerReading(0.0, None)}
    assert b.gpu_power_w == {0: 200.0}
    assert b.cpu_power_w == {}  # cpu-read is not enabled on b: skipped silently (indices None)
    # Per endpoint the timestamps never go back, and they are on this machine's Unix clock.
    for endpoint in (str(daemons["a"]), str(daemons["b"])):
        stamps = [s[endpoint].timestamp_s for s in snapshots if endpoint in s]
        assert stamps == sorted(stamps)
        assert stamps[0] > start_s - 5
    # A device, once seen, stays in every later snapshot (an event updates only its device).
    seen: Dict[str, set] = {}
    for snapshot in snapshots:
        for endpoint, readings in snapshot.items():
            gpus = set(readings.gpu_power_w)
            assert seen.get(endpoint, set()) <= gpus
            seen[endpoint] = gpus


def test_snapshots_are_deep_copies(client: PowerStreamingClient, daemons: Dict[str, Path]) -> None:
    _wait_for(lambda: _all_in(client.get_power(), daemons), "every device read")
    snapshot = client.get_power()
    snapshot[str(daemons["a"])].gpu_power_w[0] = -1.0
    snapshot[str(daemons["a"])].cpu_power_w[0].cpu_w = -1.0
    del snapshot[str(daemons["b"])]
    again = client.get_power()
    assert again[str(daemons["a"])].gpu_power_w[0] == 100.0
    assert again[str(daemons["a"])].cpu_power_w[0].cpu_w == 0.0
    assert str(daemons["b"]) in again

    def change(yielded: Dict[str, PowerReadings]) -> bool:
        yielded[str(daemons["a"])].gpu_power_w.clear()
        return True

    _iterate(client, change)
    assert client.get_power()[str(daemons["a"])].gpu_power_w == {0: 100.0, 1: 150.0}


def test_iterator_ends_promptly_on_stop(client: PowerStreamingClient) -> None:
    got: List[int] = []
    first = threading.Event()

    def consume() -> None:
        for _ in client:
            got.append(1)
            first.set()

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    assert first.wait(DEADLINE_S), "no snapshot"
    client.stop()
    consumer.join(DEADLINE_S)
    assert not consumer.is_alive(), "the iterator kept blocking after stop()"
    after_stop: List[Dict[str, PowerReadings]] = []
    _iterate(client, lambda snapshot: after_stop.append(snapshot) is not None)
    assert after_stop == []  # a stopped client yields nothing
    assert client.get_power()  # and its data stays readable


def test_async_iterator_lets_the_loop_run(client: PowerStreamingClient, daemons: Dict[str, Path]) -> None:
    async def main() -> List[int]:
        ticks = 0
        stop = False

        async def ticker() -> None:
            nonlocal ticks
            while not stop:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        at_snapshot: List[int] = []
        async for snapshot in client:
            at_snapshot.append(ticks)
            assert isinstance(snapshot, dict)
            if len(at_snapshot) == 3:
                asyncio.get_running_loop().call_soon(client.stop)  # stop from the loop: the iterator must end
            if len(at_snapshot) == 10:
                break  # the loop never ran stop(): fail below rather than iterate for ever
        stop = True
        await task
        return at_snapshot

    at_snapshot = asyncio.run(asyncio.wait_for(main(), DEADLINE_S))  # fails with TimeoutError if nothing comes
    assert len(at_snapshot) == 3
    # Between two snapshots the ticker ran: waiting for the next update did not hold the loop.
    assert at_snapshot[1] > at_snapshot[0] and at_snapshot[2] > at_snapshot[1]


def test_get_power_is_empty_before_data(tmp_path: Path) -> None:
    # The daemon's GPU cannot be read: its stream is connected but carries no event.
    scenario = write_scenario(tmp_path / "s", [a40(power_w=100)],
                              faults=[{"function": "nvmlDeviceGetFieldValues", "return": "UNKNOWN"}])
    proc = start_zeusd(tmp_path, scenario, enable="gpu-read")
    try:
        client = PowerStreamingClient([ZeusdConfig.uds(str(tmp_path / "zeusd.sock"))])
        try:
            _wait_for(lambda: all(s["connected"] for s in client.stream_status()), "the stream connected")
            assert client.get_power() == {}
            assert client.get_power_timeline(str(tmp_path / "zeusd.sock"), "gpu", 0) == []
        finally:
            client.stop()
    finally:
        stop_zeusd(proc)


def test_timeline_energy_and_clock_offsets(client: PowerStreamingClient, daemons: Dict[str, Path]) -> None:
    a = str(daemons["a"])
    _wait_for(lambda: len(client.get_power_timeline(a, "gpu", 1)) >= 3, "three readings of a's GPU 1")
    timeline = client.get_power_timeline(a, "gpu", 1)
    assert [w for _, w in timeline] == [150.0] * len(timeline)
    times = [t for t, _ in timeline]
    assert times == sorted(times)
    # A constant 150 W between the first and the last reading: 150 W times that span, fully covered. (Unix
    # seconds as floats resolve about 0.24 us today: start 1 us after the first reading, never before it.)
    t0, t1 = times[0] + 1e-6, times[-1]
    energy = client.get_energy(a, "gpu", 1, t0, t1)
    assert energy.energy_j == pytest.approx(150.0 * (t1 - t0), rel=1e-6, abs=1e-6)
    assert energy.complete and energy.uncovered_s == 0.0 and energy.dram_energy_j is None
    # One second before the first reading is unknown: one gap of that second, the rest counted.
    early = client.get_energy(a, "gpu", 1, t0 - 1.0, t1)
    assert early.gaps == 1 and not early.complete
    assert early.uncovered_s == pytest.approx(1.0, abs=1e-5)
    assert early.energy_j == pytest.approx(energy.energy_j, rel=1e-6, abs=1e-6)
    # DRAM: package 0 reports 0 W, package 1 no DRAM at all.
    _wait_for(lambda: len(client.get_dram_power_timeline(a, 0)) >= 1, "a DRAM reading")
    assert {w for _, w in client.get_dram_power_timeline(a, 0)} == {0.0}
    assert client.get_dram_power_timeline(a, 1) == []
    # The daemons share this machine's clock: offsets are within a round trip of zero.
    offsets = client.clock_offsets
    assert set(offsets) == {a, str(daemons["b"])}
    assert all(abs(o) < 5.0 for o in offsets.values()), offsets
    with pytest.raises(ValueError):
        client.get_power_timeline(a, "gpu", 7)
    with pytest.raises(ValueError):
        client.get_energy("nowhere.sock", "gpu", 0, t0, t1)
    with pytest.raises(ValueError):
        client.get_energy(a, "gpu", 0, t1, t0)
    assert isinstance(energy, StreamEnergy)


def test_configuration_errors(daemons: Dict[str, Path], tmp_path: Path) -> None:
    a = ZeusdConfig.uds(str(daemons["a"]))
    with pytest.raises(ValueError, match="a.sock"):
        PowerStreamingClient([a, ZeusdConfig.uds(str(daemons["a"]), gpu_indices=[0])])
    with pytest.raises(ValueError, match="7"):
        PowerStreamingClient([ZeusdConfig.uds(str(daemons["b"]), gpu_indices=[7])])
    with pytest.raises(ZeusdConnectionError):
        PowerStreamingClient([ZeusdConfig.uds(str(tmp_path / "none.sock"))])


def test_scope_errors(tmp_path: Path) -> None:
    """Explicit ids without the scope: ZeusdCapabilityError, whether the group is disabled or the token is
    missing; without explicit ids that kind is skipped silently, as Zeus."""
    key = tmp_path / "key"
    key.write_text("a signing key for the test only")
    key.chmod(0o600)
    scenario = write_scenario(tmp_path / "c", [a40(power_w=100)])
    control_only = start_zeusd(tmp_path, scenario, socket_name="control.sock", enable="gpu-control")
    with_auth = start_zeusd(tmp_path, scenario, "--signing-key-path", str(key), socket_name="auth.sock",
                            enable="gpu-read")
    try:
        with pytest.raises(ZeusdCapabilityError, match="gpu-read"):
            PowerStreamingClient([ZeusdConfig.uds(str(tmp_path / "control.sock"), gpu_indices=[0])])
        with pytest.raises(ZeusdCapabilityError, match="token"):
            PowerStreamingClient([ZeusdConfig.uds(str(tmp_path / "auth.sock"), gpu_indices=[0])])
        client = PowerStreamingClient([ZeusdConfig.uds(str(tmp_path / "control.sock")),
                                       ZeusdConfig.uds(str(tmp_path / "auth.sock"))])
        try:
            assert client.stream_status() == []
            assert client.endpoints == [str(tmp_path / "control.sock"), str(tmp_path / "auth.sock")]
        finally:
            client.stop()
    finally:
        stop_zeusd(control_only)
        stop_zeusd(with_auth)


def test_empty_lists_stream_nothing_of_that_kind(daemons: Dict[str, Path]) -> None:
    client = PowerStreamingClient([ZeusdConfig.uds(str(daemons["a"]), gpu_indices=[1], cpu_indices=[])])
    try:
        assert [(s["kind"], s["ids"]) for s in client.stream_status()] == [("gpu", [1])]
        _wait_for(lambda: bool(client.get_power()), "a reading")
        readings = client.get_power()[str(daemons["a"])]
        assert readings.gpu_power_w == {1: 150.0} and readings.cpu_power_w == {}
    finally:
        client.stop()


def test_option_validation(daemons: Dict[str, Path], tmp_path: Path) -> None:
    """The native options' keywords: bad values are ValueErrors naming the option, raised before any connection
    (the socket here does not exist: a missing check would surface as ZeusdConnectionError instead)."""
    nowhere = [ZeusdConfig.uds(str(tmp_path / "none.sock"))]
    bad = [("max_sample_hold_s", 0.0), ("max_sample_hold_s", -1.0), ("max_sample_hold_s", float("nan")),
           ("max_sample_hold_s", float("inf")), ("max_sample_hold_s", 1e300), ("stall_timeout_s", -0.5),
           ("stall_timeout_s", 4e7), ("reconnect_delay_s", 1e300), ("timeline_capacity", 1),
           ("timeline_capacity", 10**9), ("timeline_capacity", 2**80)]
    for name, value in bad:
        with pytest.raises(ValueError, match=name):
            PowerStreamingClient(nowhere, **{name: value})
    with pytest.raises(TypeError):
        PowerStreamingClient(nowhere, timeline_capacity=2.5)
    with pytest.raises(TypeError):  # keyword-only
        PowerStreamingClient(nowhere, 1.0, 3.0)  # type: ignore[misc]
    # The hold reaches the native client: with 1 ms, the second between two repeats of a reading is a gap.
    b = str(daemons["b"])
    client = PowerStreamingClient([ZeusdConfig.uds(b)], max_sample_hold_s=0.001, stall_timeout_s=0,
                                  timeline_capacity=1000)
    try:
        def two_apart() -> bool:
            times = [t for t, _ in client.get_power_timeline(b, "gpu", 0)]
            return len(times) >= 2 and times[1] - times[0] > 0.01

        _wait_for(two_apart, "two readings of b's GPU 0 more than 10 ms apart")
        times = [t for t, _ in client.get_power_timeline(b, "gpu", 0)]
        energy = client.get_energy(b, "gpu", 0, times[0] + 1e-6, times[1])
        assert energy.gaps == 1 and energy.uncovered_s > 0.005
        # Time points beyond +-9e9 s are rejected, not converted with overflow.
        with pytest.raises(ValueError, match="9e9"):
            client.get_energy(b, "gpu", 0, 0.0, 1e300)
        with pytest.raises(ValueError, match="9e9"):
            client.get_power_timeline(b, "gpu", 0, -1e10)
    finally:
        client.stop()
