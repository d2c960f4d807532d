"""Electricity cost of measurement windows (Zeus's ``zeus.monitor.price``).

``EnergyCostMonitor`` measures like ``ZeusMonitor`` and prices each window's energy with an
``ElectricityPriceProvider``'s tariff: per clock hour, ``cost = E / 3.6e6 * rate`` (E in J, rate in the tariff's
currency per kWh), the rate being ``energy_rate_structure[tier][0]["rate"]`` with ``tier`` from the weekday or
weekend schedule ``[month - 1][hour]``. Unlike Zeus (which uses UTC), the month, day and hour are local time, as
OpenEI's schedules are. Providers:

* ``OpenEIClient``: OpenEI's utility-rate database (``/utility_rates``). Its API key is the ``api_key`` argument,
  else ``$OPENEI_API_KEY`` (no key is built in: get one at https://openei.org/services/api/signup/).
  ``base_url`` or ``$ZEUS_OPENEI_URL`` replaces ``https://api.openei.org``.
* ``FixedElectricityPriceProvider`` (beyond Zeus): one rate per kWh given by the user; no network.

The tariff is fetched once, at the first ``begin_window``, on the caller's thread: a failure raises
``ZeusElectricityPriceHTTPError`` naming the URL within the provider's ``timeout_s`` bound (Zeus's child process
returns and its ``end_window`` blocks forever).
"""

from __future__ import annotations

import abc
import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Optional, Sequence
from urllib.parse import quote

from zeus.exception import ZeusBaseError
from zeus.monitor._hourly import HourEnergy, HourlyWindows, attribute, device_energy, split_devices
from zeus.monitor.carbon import DEFAULT_TIMEOUT_S, _check_location, _check_timeout, fetch_json
from zeus.monitor.energy import ZeusMonitor

__all__ = [
    "ElectricityPriceProvider",
    "EnergyCostMeasurement",
    "EnergyCostMonitor",
    "FixedElectricityPriceProvider",
    "OpenEIClient",
    "ZeusElectricityPriceHTTPError",
    "ZeusElectricityPriceNotFoundError",
    "get_time_info",
]

_OPENEI_URL = "https://api.openei.org"


def get_time_info() -> tuple[str, str, int]:
    """(month name, "Weekday" or "Weekend", hour), in local time."""
    now = datetime.now()
    return now.strftime("%B"), "Weekend" if now.weekday() >= 5 else "Weekday", now.hour


class ZeusElectricityPriceHTTPError(ZeusBaseError):
    """The price provider could not be reached or answered with an error (the message names the URL)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class ZeusElectricityPriceNotFoundError(ZeusBaseError):
    """The provider has no tariff for the place or label asked."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class ElectricityPriceProvider(abc.ABC):
    """Where the tariff comes from."""

    @abc.abstractmethod
    def get_current_electricity_price(self) -> dict[str, list]:
        """{"energy_rate_structure": [[{"rate": per kWh, ...}], ...] (one list per tier),
        "energy_weekday_schedule": 12 x 24 tiers, "energy_weekend_schedule": 12 x 24 tiers}."""


def _search(data: Any, label: str, field: str) -> list:
    """Every ``field`` of an object whose ``label`` is ``label``, depth first."""
    found: list = []
    if isinstance(data, dict):
        if data.get("label") == label and field in data:
            found.append(data[field])
        for value in data.values():
            found.extend(_search(value, label, field))
    elif isinstance(data, list):
        for item in data:
            found.extend(_search(item, label, field))
    return found


class OpenEIClient(ElectricityPriceProvider):
    """OpenEI's utility rates for a location and a rate's label (Zeus's class).

    Args:
        location: (latitude, longitude).
        label: the rate's unique label in OpenEI's database.
        sector: "Residential", "Commercial", "Industrial" or "Lighting".
        radius: search radius in miles.
        api_key: default ``$OPENEI_API_KEY``; required.
        base_url: default ``$ZEUS_OPENEI_URL``, else ``https://api.openei.org``.
        timeout_s: bound of the request (connecting, then answering).
    """

    def __init__(
        self,
        location: tuple[float, float],
        label: str,
        sector: Literal["Residential", "Commercial", "Industrial", "Lighting"] = "Residential",
        radius: int = 0,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.lat, self.long = _check_location(location)
        if not isinstance(label, str) or not label:
            raise ValueError(f"label must be an OpenEI rate label (got {label!r})")
        if sector not in ("Residential", "Commercial", "Industrial", "Lighting"):
            raise ValueError(f"sector must be Residential, Commercial, Industrial or Lighting (got {sector!r})")
        if isinstance(radius, bool) or not isinstance(radius, int) or not 0 <= radius <= 200:
            raise ValueError(f"radius must be a whole number of miles from 0 to 200 (got {radius!r})")
        self.label = label
        self.sector = sector
        self.radius = radius
        self.api_key = api_key if api_key is not None else os.environ.get("OPENEI_API_KEY")
        if not self.api_key:
            raise ValueError("api_key is missing: pass OpenEIClient(api_key=...) or set OPENEI_API_KEY "
                             "(a free key from https://openei.org/services/api/signup/)")
        self.base_url = (base_url or os.environ.get("ZEUS_OPENEI_URL") or _OPENEI_URL).rstrip("/")
        self.timeout_s = _check_timeout(timeout_s)

    def url(self) -> str:
        return (f"{self.base_url}/utility_rates?version=latest&format=json&api_key={quote(self.api_key, safe='')}"
                f"&lat={self.lat}&lon={self.long}&radius={self.radius}&detail=full&sector={self.sector}")

    def get_current_electricity_price(self) -> dict[str, list]:
        data = fetch_json(self.url(), {}, self.timeout_s, ZeusElectricityPriceHTTPError)
        fields = {"energy_rate_structure": "energyratestructure", "energy_weekday_schedule": "energyweekdayschedule",
                  "energy_weekend_schedule": "energyweekendschedule"}
        out = {}
        for ours, theirs in fields.items():
            found = _search(data, self.label, theirs)
            if not found:
                raise ZeusElectricityPriceNotFoundError(
                    f"OpenEI has no {theirs} for the rate labelled {self.label!r} near ({self.lat}, {self.long}) in "
                    f"the {self.sector} sector (radius {self.radius} mi)")
            out[ours] = found[0]
        return out


class FixedElectricityPriceProvider(ElectricityPriceProvider):
    """One flat rate: ``rate_per_kwh`` in ``currency`` (e.g. 0.15, "USD"), every hour of the year."""

    def __init__(self, rate_per_kwh: float, currency: str = "USD") -> None:
        if isinstance(rate_per_kwh, bool) or not isinstance(rate_per_kwh, (int, float)) or not rate_per_kwh >= 0:
            raise ValueError(f"rate_per_kwh must be a non-negative number (got {rate_per_kwh!r})")
        if not isinstance(currency, str) or not currency:
            raise ValueError(f"currency must be a name such as 'USD' (got {currency!r})")
        self.rate_per_kwh = float(rate_per_kwh)
        self.currency = currency

    def get_current_electricity_price(self) -> dict[str, list]:
        flat = [[0] * 24 for _ in range(12)]
        return {"energy_rate_structure": [[{"rate": self.rate_per_kwh, "unit": "kWh"}]],
                "energy_weekday_schedule": flat, "energy_weekend_schedule": [row[:] for row in flat]}


@dataclass
class EnergyCostMeasurement:
    """One window: time (s), energy (J) and energy cost (the tariff's currency) of each device."""

    time: float
    gpu_energy: dict[int, float]
    gpu_energy_cost: dict[int, float]
    cpu_energy: Optional[dict[int, float]] = None
    cpu_energy_cost: Optional[dict[int, float]] = None
    dram_energy: Optional[dict[int, float]] = None
    dram_energy_cost: Optional[dict[int, float]] = None


def rate_of_hour(tariff: dict[str, list], hour_utc: datetime) -> float:
    """The rate per kWh of the hour starting at ``hour_utc``, by the tariff's local-time schedules."""
    local = hour_utc.astimezone()
    schedule = tariff["energy_weekday_schedule"] if local.weekday() < 5 else tariff["energy_weekend_schedule"]
    try:
        tier = schedule[local.month - 1][local.hour]
        return float(tariff["energy_rate_structure"][tier][0]["rate"])
    except (IndexError, KeyError, TypeError, ValueError) as e:
        raise ZeusElectricityPriceNotFoundError(
            f"the tariff has no rate for {local:%B}, hour {local.hour} ({e!r}): its schedules must be 12 x 24 tiers "
            "and every tier must have a rate") from None


class EnergyCostMonitor:
    """Time, energy and energy cost of named windows (Zeus's ``EnergyCostMonitor``)."""

    def __init__(
        self,
        electricity_price_provider: ElectricityPriceProvider,
        gpu_indices: Optional[Sequence[int]] = None,
        cpu_indices: Optional[Sequence[int]] = None,
        sync_execution_with: Literal["torch", "jax", "cupy"] = "torch",
    ) -> None:
        if not isinstance(electricity_price_provider, ElectricityPriceProvider):
            raise ValueError("electricity_price_provider must be an ElectricityPriceProvider "
                             f"(got {type(electricity_price_provider).__name__})")
        self.zeus_monitor = ZeusMonitor(gpu_indices=gpu_indices, cpu_indices=cpu_indices,
                                        approx_instant_energy=True, sync_execution_with=sync_execution_with)
        self.electricity_price_provider = electricity_price_provider
        self.gpu_indices = self.zeus_monitor.gpu_indices
        self.cpu_indices = self.zeus_monitor.cpu_indices
        self.current_keys: set[str] = set()
        self._tariff: Optional[dict[str, list]] = None
        self._hourly = HourlyWindows(self.zeus_monitor)

    def begin_window(self, key: str, sync_execution: bool = True) -> None:
        if key in self.current_keys:
            raise ValueError(f"Measurement window '{key}' already exists")
        if self._tariff is None:
            self._tariff = self.electricity_price_provider.get_current_electricity_price()
        self.zeus_monitor.begin_window(key, sync_execution=sync_execution)
        self.current_keys.add(key)
        self._hourly.begin(key)

    def end_window(self, key: str, sync_execution: bool = True) -> EnergyCostMeasurement:
        if key not in self.current_keys:
            raise ValueError(f"Measurement window '{key}' does not exist")
        self.current_keys.discard(key)
        try:
            overall = self.zeus_monitor.end_window(key, sync_execution=sync_execution)
        finally:
            hours: list[HourEnergy] = self._hourly.end(key)
        assert self._tariff is not None
        costs: dict[str, float] = {}
        for hour, energies in attribute(hours, device_energy(overall), {}):
            rate = rate_of_hour(self._tariff, hour)
            for device, energy_j in energies.items():
                costs[device] = costs.get(device, 0.0) + energy_j / 3.6e6 * rate
        gpu, cpu, dram = split_devices(costs)
        return EnergyCostMeasurement(
            time=overall.time,
            gpu_energy=overall.gpu_energy,
            gpu_energy_cost=gpu,
            cpu_energy=overall.cpu_energy,
            cpu_energy_cost=cpu or None,
            dram_energy=overall.dram_energy,
            dram_energy_cost=dram or None,
        )
