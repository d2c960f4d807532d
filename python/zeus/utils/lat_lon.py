"""The machine's location from its public IP address (Zeus's ``zeus.utils.lat_lon``).

``get_ip_lat_long()`` asks ipinfo.io (``GET http://ipinfo.io/json``, field ``loc`` = ``"lat,lon"``) through the
native HTTP client, as Zeus does, for the carbon monitor's ``ElectrictyMapsClient(location=...)``. Beyond Zeus:
the request is bounded by ``timeout_s``, ``ZEUS_IPINFO_URL`` points it elsewhere (tests, a proxy), and a failure
raises ``ZeusBaseError`` naming the URL instead of an uncaught ``requests`` exception. Offline, name a zone
instead (``OfflineCarbonIntensityProvider``).
"""

from __future__ import annotations

import json
import os

from zeus import _native
from zeus.exception import ZeusBaseError

_DEFAULT_URL = "http://ipinfo.io/json"


def get_ip_lat_long(timeout_s: float = 10.0) -> tuple[float, float]:
    """(latitude, longitude) of this machine's public IP address, from ipinfo.io.

    Raises:
        ZeusBaseError: the service could not be reached within ``timeout_s``, answered an HTTP error, or gave no
            ``loc`` field.
    """
    url = os.environ.get("ZEUS_IPINFO_URL") or _DEFAULT_URL
    try:
        status, body = _native.http.fetch(url, [("Accept", "application/json")], timeout_s)
    except ZeusBaseError as e:
        raise ZeusBaseError(f"Cannot find this machine's location at {url}: {e}") from e
    if status != 200:
        raise ZeusBaseError(f"Cannot find this machine's location: GET {url} answered HTTP {status}")
    try:
        lat, lon = (float(x) for x in json.loads(body)["loc"].split(","))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ZeusBaseError(f"GET {url} gave no usable 'loc' field (\"lat,lon\"): {body[:200]!r}") from e
    return lat, lon
