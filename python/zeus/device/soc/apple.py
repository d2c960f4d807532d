"""Zeus's ``zeus.device.soc.apple``: Apple silicon, which this package cannot measure.

Zeus reads Apple silicon through its macOS-only ``zeus-apple-silicon`` extension (IOReport). This package is
built for Linux, so ``AppleSilicon()`` always raises ``ZeusAppleInitError`` saying why; the measurement
class is here with Zeus's fields so that code naming it imports and type-checks.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass, fields
from typing import List, Optional

from zeus.device.soc.common import SoC, SoCMeasurement
from zeus.exception import ZeusAppleInitError


def apple_silicon_is_available() -> bool:
    """Always False here (Apple silicon is measured on macOS only, through ``zeus-apple-silicon``)."""
    return False


def unavailable_reason() -> str:
    """Why Apple silicon cannot be measured in this process, in words."""
    return (
        f"not Apple silicon: this is {sys.platform} on {platform.machine() or 'an unknown machine'}, and Apple "
        "silicon is measured only on macOS on arm64 through Zeus's zeus-apple-silicon extension, which this "
        "package does not include"
    )


@dataclass
class AppleSiliconMeasurement(SoCMeasurement):
    """Energy of an Apple SoC's subsystems, in mJ (Zeus's fields; None when not measured)."""

    cpu_total_mj: Optional[int] = None
    efficiency_cores_mj: Optional[List[int]] = None
    performance_cores_mj: Optional[List[int]] = None
    efficiency_cluster_mj: Optional[List[int]] = None
    performance_cluster_mj: Optional[List[int]] = None
    efficiency_core_manager_mj: Optional[int] = None
    performance_core_manager_mj: Optional[int] = None
    dram_mj: Optional[int] = None
    gpu_mj: Optional[int] = None
    gpu_sram_mj: Optional[int] = None
    ane_mj: Optional[int] = None

    def __sub__(self, other: AppleSiliconMeasurement) -> AppleSiliconMeasurement:
        """Field by field. Both None: None; one None, different types or list lengths: ``ValueError``."""
        if not isinstance(other, AppleSiliconMeasurement):
            raise TypeError(
                f"an AppleSiliconMeasurement can only be subtracted from another, not a {type(other).__name__}"
            )
        result = AppleSiliconMeasurement()
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if mine is None and theirs is None:
                continue
            if type(mine) is not type(theirs):
                raise ValueError(f"field {f.name} differs in kind between the two measurements")
            if isinstance(mine, list):
                if len(mine) != len(theirs):
                    raise ValueError(f"field {f.name} has {len(mine)} entries in one measurement, {len(theirs)} in the other")
                setattr(result, f.name, [a - b for a, b in zip(mine, theirs)])
            else:
                setattr(result, f.name, mine - theirs)
        return result

    def zero_all_fields(self) -> None:
        """Numbers become 0, lists ``[]``, None stays None (as Zeus)."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, list):
                setattr(self, f.name, [])
            elif value is not None:
                setattr(self, f.name, 0)


class AppleSilicon(SoC):
    """Apple silicon (Zeus's ``AppleSilicon``). Raises ``ZeusAppleInitError`` here, always."""

    def __init__(self) -> None:
        raise ZeusAppleInitError(unavailable_reason())

    def get_available_metrics(self) -> set[str]:  # pragma: no cover (never constructed)
        return set()

    def get_total_energy_consumption(self) -> AppleSiliconMeasurement:  # pragma: no cover
        raise ZeusAppleInitError(unavailable_reason())


__all__ = ["AppleSilicon", "AppleSiliconMeasurement", "apple_silicon_is_available", "ZeusAppleInitError"]
