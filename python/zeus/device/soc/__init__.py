"""SoCs (Zeus's ``zeus.device.soc``): ``get_soc()``, NVIDIA Jetson (measured natively) and Apple silicon (not here).

``get_soc()`` returns the process's SoC, opened on first use: Apple silicon (never, on this Linux-only
package), else an NVIDIA Jetson (``<root>/etc/nv_tegra_release`` or ``<root>/usr/lib/aarch64-linux-gnu/tegra``
with a readable INA3221 rail; ``root`` is ``$ZEUS_SOC_ROOT``, else ``/``), else ``ZeusSoCInitError`` whose
message gives the reason for each kind.
"""

from __future__ import annotations

import threading
from typing import Optional

from zeus.device.soc.apple import AppleSilicon, AppleSiliconMeasurement, apple_silicon_is_available
from zeus.device.soc.apple import unavailable_reason as _apple_reason
from zeus.device.soc.common import SoC, SoCMeasurement, ZeusSoCInitError
from zeus.device.soc.jetson import Jetson, JetsonMeasurement, jetson_is_available

_lock = threading.Lock()
_soc: Optional[SoC] = None


def get_soc() -> SoC:
    """The SoC of this machine, opened once per process.

    Raises:
        ZeusSoCInitError: neither Apple silicon nor an NVIDIA Jetson with a readable rail; the message says why
            for each (e.g. "not an NVIDIA Jetson: neither /etc/nv_tegra_release nor ... exists").
    """
    global _soc
    with _lock:
        if _soc is None:
            try:
                _soc = Jetson()
            except ZeusSoCInitError as e:
                raise ZeusSoCInitError(f"No SoC found: {_apple_reason()}; {e.message}", e.code, e.native_code) from None
        return _soc


def _reset() -> None:
    global _soc
    with _lock:
        _soc = None


__all__ = [
    "get_soc",
    "SoC",
    "SoCMeasurement",
    "Jetson",
    "JetsonMeasurement",
    "AppleSilicon",
    "AppleSiliconMeasurement",
    "apple_silicon_is_available",
    "jetson_is_available",
    "ZeusSoCInitError",
]
