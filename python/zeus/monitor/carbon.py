"""Carbon emissions of measurement windows (Zeus's ``zeus.monitor.carbon``).

``CarbonEmissionMonitor`` measures like ``ZeusMonitor`` and converts each window's energy into gCO2eq with a
``CarbonIntensityProvider``: per clock hour (UTC), ``emission = E / 3.6e6 * I(hour)`` with E in J and I in
gCO2eq/kWh. Providers:

* ``ElectrictyMapsClient`` (Zeus's spelling; ``ElectricityMapsClient`` is the same class): Electricity Maps' v3 API.
  Its token is sent as the ``auth-token`` header: the ``api_key`` argument, else ``$ELECTRICITYMAPS_API_TOKEN``
  (optional: the API answers some zones without one). ``base_url`` or ``$ZEUS_ELECTRICITYMAPS_URL`` replaces
  ``https://api.electricitymap.org`` (a proxy, a test server).
* ``OfflineCarbonIntensityProvider`` (beyond Zeus): the yearly average of a country or region from the table shipped
  with zeus (Ember's data via co2.js, see ``data/carbon/README.md``); no network, no key. The table is
  ``$ZEUS_CARBON_DATA`` when set, else the package's copy.

Unlike Zeus, no child process: a thread cuts open windows at hour boundaries and ``end_window`` computes on the
caller's thread, so a provider failure is raised there (``ZeusCarbonIntensityHTTPError`` naming the URL, within the
provider's ``timeout_s`` bound) instead of blocking forever.
"""

from __future__ import annotations

import abc
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Literal, Optional, Sequence

from zeus import _native
from zeus.exception import ZeusBaseError
from zeus.monitor._hourly import HourEnergy, HourlyWindows, attribute, device_energy, split_devices
from zeus.monitor.energy import ZeusMonitor

__all__ = [
    "CarbonEmissionMeasurement",
    "CarbonEmissionMonitor",
    "CarbonIntensityProvider",
    "ElectricityMapsClient",
    "ElectrictyMapsClient",
    "OfflineCarbonIntensityProvider",
    "ZeusCarbonIntensityHTTPError",
    "ZeusCarbonIntensityNotFoundError",
]

DEFAULT_TIMEOUT_S = 10.0
_ELECTRICITY_MAPS_URL = "https://api.electricitymap.org"


class ZeusCarbonIntensityHTTPError(ZeusBaseError):
    """The carbon-intensity provider could not be reached or answered with an error (the message names the URL)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class ZeusCarbonIntensityNotFoundError(ZeusBaseError):
    """The provider's answer has no carbon intensity for the place or hour asked."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class CarbonIntensityProvider(abc.ABC):
    """Where carbon intensity (gCO2eq/kWh) comes from."""

    @abc.abstractmethod
    def get_current_carbon_intensity(self) -> float:
        """The current intensity, in gCO2eq/kWh."""

    @abc.abstractmethod
    def get_recent_carbon_intensity(self) -> dict[datetime, float]:
        """The intensity of recent hours: {hour start (aware, UTC): gCO2eq/kWh}."""

    @property
    @abc.abstractmethod
    def update_period(self) -> timedelta:
        """How often the intensity changes."""

    @property
    @abc.abstractmethod
    def history_length(self) -> int:
        """How many periods ``get_recent_carbon_intensity`` returns."""


def _check_timeout(timeout_s: float) -> float:
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not timeout_s > 0:
        raise ValueError(f"timeout_s must be a positive number of seconds (got {timeout_s!r})")
    return float(timeout_s)


def _check_location(location: object) -> tuple[float, float]:
    try:
        lat, lon = location  # type: ignore[misc]
        lat, lon = float(lat), float(lon)
    except (TypeError, ValueError):
        raise ValueError(f"location must be a (latitude, longitude) pair of numbers (got {location!r})") from None
    if not -90 <= lat <= 90 or not -180 <= lon <= 180:
        raise ValueError(f"location must be (latitude in [-90, 90], longitude in [-180, 180]) (got {location!r})")
    return lat, lon


def fetch_json(url: str, headers: dict[str, str], timeout_s: float, error: type[ZeusBaseError]) -> object:
    """GET url through the native client; the JSON answer, or ``error`` naming the URL (secrets redacted)."""
    shown = _native.http.redact_url(url)
    try:
        status, body = _native.http.fetch(url, list(headers.items()), timeout_s)
    except ZeusBaseError as e:
        raise error(f"request failed: {e}") from e
    if status != 200:
        text = body.decode(errors="replace")[:300]
        raise error(f"GET {shown}: HTTP {status}: {text}")
    try:
        return json.loads(body)
    except ValueError as e:
        raise error(f"GET {shown}: the answer is not JSON ({e})") from None


class ElectrictyMapsClient(CarbonIntensityProvider):
    """Electricity Maps' carbon intensity for a location (Zeus's class, Zeus's spelling).

    Args:
        location: (latitude, longitude).
        estimate: whether estimated figures are accepted (sent as ``disableEstimations=<not estimate>``).
        emission_factor_type: ``"direct"`` or ``"lifecycle"``.
        api_key: the Electricity Maps token, sent as the ``auth-token`` header; default
            ``$ELECTRICITYMAPS_API_TOKEN``.
        zone: an Electricity Maps zone (``"FR"``, ``"US-CAL-CISO"``) asked instead of the location.
        base_url: default ``$ZEUS_ELECTRICITYMAPS_URL``, else ``https://api.electricitymap.org``.
        timeout_s: bound of each request (connecting, then answering).
    """

    def __init__(
        self,
        location: tuple[float, float],
        estimate: bool = False,
        emission_factor_type: Literal["direct", "lifecycle"] = "direct",
        api_key: Optional[str] = None,
        zone: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        if zone is None:
            self.lat, self.long = _check_location(location)
        else:
            if not isinstance(zone, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", zone):
                raise ValueError(f"zone must be an Electricity Maps zone such as 'FR' or 'US-CAL-CISO' (got {zone!r})")
            self.lat, self.long = location if location is not None else (None, None)
        if emission_factor_type not in ("direct", "lifecycle"):
            raise ValueError(f"emission_factor_type must be 'direct' or 'lifecycle' (got {emission_factor_type!r})")
        self.location = location
        self.zone = zone
        self.estimate = bool(estimate)
        self.emission_factor_type = emission_factor_type
        self.api_key = api_key if api_key is not None else os.environ.get("ELECTRICITYMAPS_API_TOKEN")
        self.base_url = (base_url or os.environ.get("ZEUS_ELECTRICITYMAPS_URL") or _ELECTRICITY_MAPS_URL).rstrip("/")
        self.timeout_s = _check_timeout(timeout_s)

    def _url(self, endpoint: str) -> str:
        where = f"zone={self.zone}" if self.zone is not None else f"lat={self.lat}&lon={self.long}"
        # Python's True/False, as Zeus writes them.
        return (f"{self.base_url}/v3/carbon-intensity/{endpoint}?{where}"
                f"&disableEstimations={not self.estimate}&emissionFactorType={self.emission_factor_type}")

    def _get(self, endpoint: str) -> dict:
        headers = {"auth-token": self.api_key} if self.api_key else {}
        data = fetch_json(self._url(endpoint), headers, self.timeout_s, ZeusCarbonIntensityHTTPError)
        if not isinstance(data, dict):
            raise ZeusCarbonIntensityNotFoundError(f"GET {self._url(endpoint)}: the answer is not a JSON object")
        return data

    def get_current_carbon_intensity(self) -> float:
        data = self._get("latest")
        value = data.get("carbonIntensity")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ZeusCarbonIntensityNotFoundError(
                f"Electricity Maps has no current carbon intensity for {self._where()} ({self._url('latest')} "
                f"answered without carbonIntensity)")
        return float(value)

    def get_recent_carbon_intensity(self) -> dict[datetime, float]:
        data = self._get("history")
        history = data.get("history")
        if not isinstance(history, list):
            raise ZeusCarbonIntensityNotFoundError(
                f"Electricity Maps has no carbon-intensity history for {self._where()} ({self._url('history')} "
                f"answered without a history list)")
        out: dict[datetime, float] = {}
        for entry in history:
            if not isinstance(entry, dict) or not isinstance(entry.get("carbonIntensity"), (int, float)):
                continue  # an hour without a figure (null): looked up as missing
            try:
                moment = datetime.fromisoformat(str(entry["datetime"]).replace("Z", "+00:00"))
            except (KeyError, ValueError):
                continue
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            out[moment.astimezone(timezone.utc)] = float(entry["carbonIntensity"])
        return out

    def _where(self) -> str:
        return f"zone {self.zone}" if self.zone is not None else f"({self.lat}, {self.long})"

    @property
    def update_period(self) -> timedelta:
        return timedelta(hours=1)

    @property
    def history_length(self) -> int:
        return 24


ElectricityMapsClient = ElectrictyMapsClient


def carbon_data_path() -> str:
    """The offline table: ``$ZEUS_CARBON_DATA``, else the package's copy, else the native search."""
    env = os.environ.get("ZEUS_CARBON_DATA")
    if env:
        return env
    packaged = Path(__file__).resolve().parent.parent / "data" / "carbon_intensity.json"
    if packaged.is_file():
        return str(packaged)
    return _native.carbon.find_data()


class OfflineCarbonIntensityProvider(CarbonIntensityProvider):
    """The yearly average intensity of a country or region, from the table shipped with zeus (no network).

    Args:
        zone: an ISO 3166 alpha-2 or alpha-3 country code (``"FR"``, ``"FRA"``), a country's name, or a region of
            the table (``"World"``, ``"EU"``, ``"Asia"``); any case.
        data_path: another table in the same format; default ``$ZEUS_CARBON_DATA``, else the package's copy.

    Attributes: ``zone`` (the table's code), ``name``, ``year`` (the figure's year), ``intensity`` (gCO2eq/kWh),
    ``source`` and ``licence`` (to cite with results). Selection by latitude/longitude is not offered: the table has
    no geometry.
    """

    def __init__(self, zone: str, data_path: Optional[str] = None) -> None:
        if not isinstance(zone, str) or not zone.strip():
            raise ValueError(f"zone must be a country code (FR, FRA) or a region (World) (got {zone!r})")
        path = str(data_path) if data_path is not None else carbon_data_path()
        found = _native.carbon.lookup(path, zone.strip())
        self.zone: str = found["code"]
        self.name: str = found["name"]
        self.year: int = found["year"]
        self.intensity: float = found["intensity"]
        self.source: str = found["source"]
        self.licence: str = found["licence"]
        self.data_path: str = found["path"]

    def get_current_carbon_intensity(self) -> float:
        return self.intensity

    def get_recent_carbon_intensity(self) -> dict[datetime, float]:
        now = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
        return {now - timedelta(hours=h): self.intensity for h in range(self.history_length)}

    @property
    def update_period(self) -> timedelta:
        return timedelta(hours=1)

    @property
    def history_length(self) -> int:
        return 24


@dataclass
class CarbonEmissionMeasurement:
    """One window: time (s), energy (J) and carbon emissions (gCO2eq) of each device."""

    time: float
    gpu_energy: dict[int, float]
    gpu_carbon_emission: dict[int, float]
    cpu_energy: Optional[dict[int, float]] = None
    cpu_carbon_emission: Optional[dict[int, float]] = None
    dram_energy: Optional[dict[int, float]] = None
    dram_carbon_emission: Optional[dict[int, float]] = None


def intensity_of_hour(history: dict[datetime, float], hour: datetime, provider: CarbonIntensityProvider) -> float:
    """The intensity of ``hour``: its own figure, else the latest earlier one in ``history``, else the provider's
    current figure (Zeus raises KeyError and hangs there)."""
    if hour in history:
        return history[hour]
    earlier = [h for h in history if h <= hour]
    if earlier:
        return history[max(earlier)]
    return provider.get_current_carbon_intensity()


class CarbonEmissionMonitor:
    """Time, energy and carbon emissions of named windows (Zeus's ``CarbonEmissionMonitor``)."""

    def __init__(
        self,
        carbon_intensity_provider: CarbonIntensityProvider,
        gpu_indices: Optional[Sequence[int]] = None,
        cpu_indices: Optional[Sequence[int]] = None,
        sync_execution_with: Literal["torch", "jax", "cupy"] = "torch",
    ) -> None:
        if not isinstance(carbon_intensity_provider, CarbonIntensityProvider):
            raise ValueError("carbon_intensity_provider must be a CarbonIntensityProvider "
                             f"(got {type(carbon_intensity_provider).__name__})")
        self.zeus_monitor = ZeusMonitor(gpu_indices=gpu_indices, cpu_indices=cpu_indices,
                                        sync_execution_with=sync_execution_with)
        self.carbon_intensity_provider = carbon_intensity_provider
        self.gpu_indices = self.zeus_monitor.gpu_indices
        self.cpu_indices = self.zeus_monitor.cpu_indices
        self.current_keys: set[str] = set()
        self._emissions: dict[str, dict[str, float]] = {}
        self._converted_energy: dict[str, dict[str, float]] = {}
        self._hourly = HourlyWindows(self.zeus_monitor, on_hour=self._flush_old_hours)

    def _convert(self, key: str, hours: list[HourEnergy]) -> None:
        if not hours:
            return
        history = self.carbon_intensity_provider.get_recent_carbon_intensity()
        totals = self._emissions.setdefault(key, {})
        converted = self._converted_energy.setdefault(key, {})
        for hour, energies in hours:
            intensity = intensity_of_hour(history, hour, self.carbon_intensity_provider)
            for device, energy_j in energies.items():
                totals[device] = totals.get(device, 0.0) + energy_j / 3.6e6 * intensity
                converted[device] = converted.get(device, 0.0) + energy_j

    def _flush_old_hours(self, key: str, hours: list[HourEnergy]) -> list[HourEnergy]:
        # Converted while the provider's history still covers them (Zeus's 23-hour flush).
        if hours and hours[-1][0] - hours[0][0] >= (self.carbon_intensity_provider.history_length - 2) * \
                self.carbon_intensity_provider.update_period:
            self._convert(key, hours)
            return []
        return hours

    def begin_window(self, key: str, sync_execution: bool = True) -> None:
        if key in self.current_keys:
            raise ValueError(f"Measurement window '{key}' already exists")
        self.zeus_monitor.begin_window(key, sync_execution=sync_execution)
        self.current_keys.add(key)
        self._emissions[key] = {}
        self._converted_energy[key] = {}
        self._hourly.begin(key)

    def end_window(self, key: str, sync_execution: bool = True) -> CarbonEmissionMeasurement:
        if key not in self.current_keys:
            raise ValueError(f"Measurement window '{key}' does not exist")
        self.current_keys.discard(key)
        try:
            try:
                overall = self.zeus_monitor.end_window(key, sync_execution=sync_execution)
            finally:
                hours = self._hourly.end(key)
            self._convert(key, attribute(hours, device_energy(overall), self._converted_energy.get(key, {})))
            emissions = self._emissions.get(key, {})
        finally:
            self._emissions.pop(key, None)
            self._converted_energy.pop(key, None)
        gpu, cpu, dram = split_devices(emissions)
        for i in overall.gpu_energy:
            gpu.setdefault(i, 0.0)
        return CarbonEmissionMeasurement(
            time=overall.time,
            gpu_energy=overall.gpu_energy,
            gpu_carbon_emission=gpu,
            cpu_energy=overall.cpu_energy,
            cpu_carbon_emission=cpu or None,
            dram_energy=overall.dram_energy,
            dram_carbon_emission=dram or None,
        )
