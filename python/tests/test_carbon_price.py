"""zeus.monitor.carbon and zeus.monitor.price: Zeus's API against a local server that answers as Electricity Maps
and OpenEI do, and the offline providers, run as user scripts in fresh interpreters on emulated GPUs.

The response shapes the local server implements (from the providers' documentation):

* Electricity Maps ``GET /v3/carbon-intensity/latest?...`` (header ``auth-token``)::

      {"zone": "DE", "carbonIntensity": 302, "datetime": "2026-12-03T12:00:00.000Z",
       "updatedAt": "2026-12-03T11:50:12.000Z", "emissionFactorType": "lifecycle", "isEstimated": false,
       "estimationMethod": null}

* Electricity Maps ``GET /v3/carbon-intensity/history?...``: ``{"zone": "DE", "history": [<24 objects as above,
  one per hour, oldest first, the last being the current hour>]}``
* OpenEI ``GET /utility_rates?version=latest&format=json&api_key=..&lat=..&lon=..&radius=..&detail=full&sector=..``::

      {"items": [{"label": "5b0c...", "name": "...", "sector": "Residential",
                  "energyratestructure": [[{"rate": 0.1, "unit": "kWh"}], [{"rate": 0.3, "unit": "kWh"}]],
                  "energyweekdayschedule": [[tier] * 24] * 12, "energyweekendschedule": [[tier] * 24] * 12}]}
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import a40

INTENSITY = 300.0  # gCO2eq/kWh, every hour
RATES = [0.1, 0.3]  # per kWh; the schedules use tier 1 all year
LABEL = "rate-label-1"
POWER_W = 200.0  # each emulated GPU's constant draw


class FakeApis:
    """Electricity Maps and OpenEI on 127.0.0.1, port 0; ``mode`` is "ok", "500", "hang" or "empty"."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.release = threading.Event()
        apis = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                apis.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                if apis.mode == "hang":
                    apis.release.wait(60)
                    return
                if apis.mode == "500":
                    self.answer(500, {"error": "internal"})
                    return
                path = self.path.split("?")[0]
                now = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
                entry = lambda hour: {"zone": "TEST", "carbonIntensity": INTENSITY,  # noqa: E731
                                      "datetime": hour.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                                      "updatedAt": hour.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                                      "emissionFactorType": "direct", "isEstimated": False, "estimationMethod": None}
                if apis.mode == "empty":
                    self.answer(200, {"zone": "TEST"} if path.endswith("latest") else {"items": []})
                elif path == "/v3/carbon-intensity/latest":
                    self.answer(200, entry(now))
                elif path == "/v3/carbon-intensity/history":
                    self.answer(200, {"zone": "TEST", "history": [entry(now - timedelta(hours=h))
                                                                  for h in range(23, -1, -1)]})
                elif path == "/utility_rates":
                    schedule = [[1] * 24 for _ in range(12)]
                    self.answer(200, {"items": [
                        {"label": "other", "energyratestructure": [[{"rate": 9.9}]]},
                        {"label": LABEL, "name": "Test rate", "sector": "Residential",
                         "energyratestructure": [[{"rate": r, "unit": "kWh"}] for r in RATES],
                         "energyweekdayschedule": schedule, "energyweekendschedule": schedule}]})
                else:
                    self.answer(404, {"message": "no such route"})

            def answer(self, status: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def apis():
    server = FakeApis()
    yield server
    server.close()


def run_script(source: str, tmp_path: Path, **env_extra: str) -> dict:
    """Runs ``source`` as a user script in a fresh interpreter; returns the JSON it prints last."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore", **env_extra}
    build = Path(os.environ.get("ZEUS_BUILD_DIR", "build"))
    env["PYTHONPATH"] = str(build.resolve() / "python") + os.pathsep + env.get("PYTHONPATH", "")
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(source))
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


CARBON_SCRIPT = '''
import json, sys, time
from zeus.monitor.carbon import CarbonEmissionMonitor, ElectrictyMapsClient, OfflineCarbonIntensityProvider

provider = {provider}
monitor = CarbonEmissionMonitor(provider, gpu_indices=[0, 1])
monitor.begin_window("outer")
monitor.begin_window("inner")
time.sleep(0.3)
inner = monitor.end_window("inner")
outer = monitor.end_window("outer")
print(json.dumps({{"inner": inner.__dict__, "outer": outer.__dict__,
                   "intensity": provider.get_current_carbon_intensity()}}))
'''


def check_emissions(result: dict, intensity: float) -> None:
    for window in ("inner", "outer"):
        m = result[window]
        assert m["time"] > 0.25
        assert sorted(m["gpu_energy"]) == ["0", "1"]
        for gpu, energy_j in m["gpu_energy"].items():
            assert energy_j == pytest.approx(POWER_W * m["time"], rel=0.05)  # the emulator's known power
            # The hand calculation: J / 3.6e6 J/kWh * gCO2eq/kWh.
            assert m["gpu_carbon_emission"][gpu] == pytest.approx(energy_j / 3.6e6 * intensity, rel=1e-9)
    assert result["outer"]["gpu_energy"]["0"] >= result["inner"]["gpu_energy"]["0"]


def test_carbon_monitor_against_the_local_electricity_maps(emulator, apis, tmp_path) -> None:
    emulator([a40(power_w=POWER_W), a40(power_w=POWER_W)], counter_update_period_ms=0)
    result = run_script(CARBON_SCRIPT.format(
        provider="ElectrictyMapsClient(location=(48.85, 2.35), emission_factor_type='lifecycle')"), tmp_path,
        ZEUS_ELECTRICITYMAPS_URL=apis.url, ELECTRICITYMAPS_API_TOKEN="tok-123")
    check_emissions(result, INTENSITY)
    assert result["intensity"] == INTENSITY
    paths = [path for path, _ in apis.requests]
    # Zeus's query, with Python's True/False.
    assert "/v3/carbon-intensity/history?lat=48.85&lon=2.35&disableEstimations=True&emissionFactorType=lifecycle" \
        in paths
    assert all(headers.get("auth-token") == "tok-123" for _, headers in apis.requests)


def test_carbon_monitor_offline(emulator, tmp_path) -> None:
    emulator([a40(power_w=POWER_W), a40(power_w=POWER_W)], counter_update_period_ms=0)
    table = json.loads((Path(__file__).resolve().parents[2] / "data" / "carbon" / "intensity.json").read_text())
    result = run_script(CARBON_SCRIPT.format(provider="OfflineCarbonIntensityProvider('fr')"), tmp_path)
    assert result["intensity"] == table["zones"]["FRA"]["intensity"]
    check_emissions(result, table["zones"]["FRA"]["intensity"])


def test_offline_table_from_the_environment(emulator, tmp_path) -> None:
    emulator([a40(power_w=POWER_W), a40(power_w=POWER_W)], counter_update_period_ms=0)
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"format": "zeus-carbon-intensity/1", "source": "mine", "unit": "gCO2eq/kWh",
                               "year": "2030", "zones": {"XYZ": {"name": "Nowhere", "year": 2030,
                                                                 "intensity": 123.0}}}))
    result = run_script(CARBON_SCRIPT.format(provider="OfflineCarbonIntensityProvider('nowhere')"), tmp_path,
                        ZEUS_CARBON_DATA=str(own))
    check_emissions(result, 123.0)


PRICE_SCRIPT = '''
import json, time
from zeus.monitor.price import EnergyCostMonitor, FixedElectricityPriceProvider, OpenEIClient

monitor = EnergyCostMonitor({provider}, gpu_indices=[0, 1])
monitor.begin_window("w")
time.sleep(0.3)
m = monitor.end_window("w")
print(json.dumps(m.__dict__))
'''


def check_cost(m: dict, rate: float) -> None:
    assert sorted(m["gpu_energy"]) == ["0", "1"]
    for gpu, energy_j in m["gpu_energy"].items():
        assert energy_j == pytest.approx(POWER_W * m["time"], rel=0.05)  # the emulator's known power
        assert m["gpu_energy_cost"][gpu] == pytest.approx(energy_j / 3.6e6 * rate, rel=1e-9)


def test_cost_monitor_against_the_local_openei(emulator, apis, tmp_path) -> None:
    emulator([a40(power_w=POWER_W), a40(power_w=POWER_W)], counter_update_period_ms=0)
    m = run_script(PRICE_SCRIPT.format(provider=f"OpenEIClient((40.7, -74.0), {LABEL!r}, radius=5)"), tmp_path,
                   ZEUS_OPENEI_URL=apis.url, OPENEI_API_KEY="key-1")
    check_cost(m, RATES[1])
    assert [path for path, _ in apis.requests] == [
        "/utility_rates?version=latest&format=json&api_key=key-1&lat=40.7&lon=-74.0&radius=5&detail=full"
        "&sector=Residential"]


def test_cost_monitor_with_a_fixed_tariff(emulator, tmp_path) -> None:
    emulator([a40(power_w=POWER_W), a40(power_w=POWER_W)], counter_update_period_ms=0)
    check_cost(run_script(PRICE_SCRIPT.format(provider="FixedElectricityPriceProvider(0.25, 'EUR')"), tmp_path),
               0.25)


# Provider failures: in this process (no GPUs needed), each an exception naming the URL within the bound.

def test_provider_failures_are_errors_naming_the_url(apis) -> None:
    from zeus.monitor.carbon import (ElectrictyMapsClient, ZeusCarbonIntensityHTTPError,
                                     ZeusCarbonIntensityNotFoundError)
    from zeus.monitor.price import OpenEIClient, ZeusElectricityPriceHTTPError, ZeusElectricityPriceNotFoundError

    carbon = ElectrictyMapsClient((1.0, 2.0), base_url=apis.url, timeout_s=0.5)
    price = OpenEIClient((1.0, 2.0), LABEL, api_key="SECRET", base_url=apis.url, timeout_s=0.5)
    apis.mode = "500"
    with pytest.raises(ZeusCarbonIntensityHTTPError, match=r"GET http://127\.0\.0\.1:\d+/v3/carbon-intensity/latest"
                                                           r"\?lat=1\.0&lon=2\.0.*HTTP 500"):
        carbon.get_current_carbon_intensity()
    with pytest.raises(ZeusElectricityPriceHTTPError, match=r"/utility_rates\?.*api_key=\*\*\*.*HTTP 500") as e:
        price.get_current_electricity_price()
    assert "SECRET" not in str(e.value)
    apis.mode = "empty"
    with pytest.raises(ZeusCarbonIntensityNotFoundError):
        carbon.get_current_carbon_intensity()
    with pytest.raises(ZeusElectricityPriceNotFoundError, match=LABEL):
        price.get_current_electricity_price()

    apis.mode = "hang"
    for call, error in ((carbon.get_recent_carbon_intensity, ZeusCarbonIntensityHTTPError),
                        (price.get_current_electricity_price, ZeusElectricityPriceHTTPError)):
        start = time.monotonic()
        with pytest.raises(error, match=r"GET http://127\.0\.0\.1:\d+/.*within 500 ms"):
            call()
        assert time.monotonic() - start < 5  # bounded: about twice timeout_s at most

    with socket.socket() as s:  # bound, never listening: refused
        s.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{s.getsockname()[1]}"
        with pytest.raises(ZeusCarbonIntensityHTTPError, match=f"GET {refused}/v3/carbon-intensity/latest"):
            ElectrictyMapsClient((1.0, 2.0), base_url=refused).get_current_carbon_intensity()


def test_a_failing_provider_fails_end_window_not_hangs(emulator, apis) -> None:
    emulator([a40(power_w=POWER_W)], counter_update_period_ms=0)
    from zeus.monitor.carbon import CarbonEmissionMonitor, ElectrictyMapsClient, ZeusCarbonIntensityHTTPError
    from zeus.monitor.price import EnergyCostMonitor, OpenEIClient, ZeusElectricityPriceHTTPError

    monitor = CarbonEmissionMonitor(ElectrictyMapsClient((1.0, 2.0), base_url=apis.url, timeout_s=0.5))
    monitor.begin_window("w")
    apis.mode = "hang"
    start = time.monotonic()
    with pytest.raises(ZeusCarbonIntensityHTTPError, match="/v3/carbon-intensity/history"):
        monitor.end_window("w")
    assert time.monotonic() - start < 5
    with pytest.raises(ValueError, match="'w' does not exist"):
        monitor.end_window("w")
    monitor.begin_window("w")  # the key is free again
    apis.mode = "ok"
    assert monitor.end_window("w").gpu_carbon_emission[0] >= 0

    apis.mode = "500"
    costs = EnergyCostMonitor(OpenEIClient((1.0, 2.0), LABEL, api_key="k", base_url=apis.url, timeout_s=0.5))
    with pytest.raises(ZeusElectricityPriceHTTPError, match="HTTP 500"):
        costs.begin_window("w")
    assert costs.current_keys == set()


def test_invalid_arguments_name_the_argument(monkeypatch) -> None:
    from zeus.exception import ZeusNotFoundError
    from zeus.monitor.carbon import ElectricityMapsClient, ElectrictyMapsClient, OfflineCarbonIntensityProvider
    from zeus.monitor.price import FixedElectricityPriceProvider, OpenEIClient

    assert ElectricityMapsClient is ElectrictyMapsClient
    monkeypatch.delenv("OPENEI_API_KEY", raising=False)
    for make, name in (
        (lambda: ElectrictyMapsClient("paris"), "location"),
        (lambda: ElectrictyMapsClient((91, 0)), "location"),
        (lambda: ElectrictyMapsClient((1, 2), emission_factor_type="total"), "emission_factor_type"),
        (lambda: ElectrictyMapsClient((1, 2), timeout_s=0), "timeout_s"),
        (lambda: ElectrictyMapsClient(None, zone="F R"), "zone"),
        (lambda: OpenEIClient((1, 2), "x"), "api_key"),
        (lambda: OpenEIClient((1, 2), "", api_key="k"), "label"),
        (lambda: OpenEIClient((1, 2), "x", sector="Farm", api_key="k"), "sector"),
        (lambda: OpenEIClient((1, 2), "x", radius=-1, api_key="k"), "radius"),
        (lambda: FixedElectricityPriceProvider(-1), "rate_per_kwh"),
        (lambda: OfflineCarbonIntensityProvider(""), "zone"),
    ):
        with pytest.raises(ValueError, match=name):
            make()
    with pytest.raises(ZeusNotFoundError, match=r"carbon zone 'FRX' .*close matches: FR/FRA \(France\)"):
        OfflineCarbonIntensityProvider("FRX")


def test_time_info_and_exports() -> None:
    import zeus.monitor.carbon as carbon
    import zeus.monitor.price as price

    month, day_type, hour = price.get_time_info()
    assert month in ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                     "October", "November", "December")
    assert day_type in ("Weekday", "Weekend") and 0 <= hour < 24
    for module in (carbon, price):
        for name in module.__all__:
            assert hasattr(module, name), name


def test_a_window_across_an_hour_boundary_uses_each_hours_intensity(emulator) -> None:
    """The hourly cut, on a clock shifted so that an hour starts 0.3 s into a 0.8 s window: the first 0.3 s at the
    old hour's intensity, the rest at the new one's (the per-hour bucketing of Zeus's algorithm A12)."""
    emulator([a40(power_w=POWER_W)], counter_update_period_ms=0)
    from zeus.monitor._hourly import HourlyWindows, hour_floor
    from zeus.monitor.carbon import CarbonEmissionMonitor, CarbonIntensityProvider

    intensities: dict = {}

    class TwoHours(CarbonIntensityProvider):
        def get_current_carbon_intensity(self) -> float:
            return 500.0

        def get_recent_carbon_intensity(self) -> dict:
            return dict(intensities)

        update_period = timedelta(hours=1)
        history_length = 24

    # The monitor first (opening the GPUs checks their counters, which takes a moment), then the clock's shift,
    # so that the hour still starts 0.3 s into the window.
    monitor = CarbonEmissionMonitor(TwoHours())
    real_now = datetime.now(timezone.utc)
    offset = hour_floor(real_now) + timedelta(hours=1) - timedelta(seconds=0.3) - real_now
    fake_now = lambda: datetime.now(timezone.utc) + offset  # noqa: E731
    first_hour = hour_floor(fake_now())
    intensities.update({first_hour: 100.0, first_hour + timedelta(hours=1): 500.0})
    monitor._hourly = HourlyWindows(monitor.zeus_monitor, on_hour=monitor._flush_old_hours, now=fake_now)
    monitor.begin_window("w")
    while fake_now() < first_hour + timedelta(hours=1, seconds=0.5):
        time.sleep(0.05)
    m = monitor.end_window("w")
    energy_j = m.gpu_energy[0]
    share_first = 0.3 / m.time
    expected = energy_j / 3.6e6 * (share_first * 100.0 + (1 - share_first) * 500.0)
    assert m.gpu_carbon_emission[0] == pytest.approx(expected, rel=0.1)
    # Neither hour's intensity alone explains it.
    assert energy_j / 3.6e6 * 100.0 * 1.2 < m.gpu_carbon_emission[0] < energy_j / 3.6e6 * 500.0 * 0.9


def test_https_with_a_verified_certificate(tmp_path, monkeypatch) -> None:
    """The providers' https:// goes through the native client's TLS: the certificate is checked against the CAs
    (SSL_CERT_FILE here) and against the host name."""
    import shutil
    import ssl

    from zeus import _native
    from zeus.exception import ZeusIOError

    if not _native.http.supports_https():
        pytest.skip("this build has no OpenSSL")
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True, timeout=60)
    apis = FakeApis()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    apis.server.socket = context.wrap_socket(apis.server.socket, server_side=True)
    port = apis.server.server_address[1]
    try:
        from zeus.monitor.carbon import ElectrictyMapsClient, ZeusCarbonIntensityHTTPError

        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        client = ElectrictyMapsClient((1.0, 2.0), base_url=f"https://localhost:{port}", timeout_s=5)
        assert client.get_current_carbon_intensity() == INTENSITY
        with pytest.raises(ZeusCarbonIntensityHTTPError, match="certificate verify failed"):  # the name is localhost
            ElectrictyMapsClient((1.0, 2.0), base_url=f"https://127.0.0.1:{port}").get_current_carbon_intensity()
        monkeypatch.delenv("SSL_CERT_FILE")
        with pytest.raises(ZeusIOError, match=f"GET https://localhost:{port}/x: TLS handshake failed"):
            _native.http.fetch(f"https://localhost:{port}/x", [], 5.0)
    finally:
        apis.close()
