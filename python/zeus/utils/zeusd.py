"""Client of zeusd, the privileged daemon (Zeus's ``zeus.utils.zeusd`` API).

A thin layer over the native client (``zeus._native.zeusd``, the C++
``zeus::zeusd::ZeusdClient``): the configuration from the environment,
connection, discovery, authentication, every request and the decoding of its
answer run in C++, with the GIL released; every error is raised by the native
error table (``ZeusdAuthError`` for a 401 or 403 from any call,
``ZeusdConnectionError`` for an unreachable daemon, ``ZeusdError`` for other
error answers). Configuration as Zeus's: ``ZEUSD_SOCK_PATH`` (a Unix socket)
first, else ``ZEUSD_HOST_PORT``; ``ZEUSD_TOKEN`` for a daemon that requires
tokens; an empty variable counts as unset.

The power-limit optimizer needs none of this: when ``ZEUSD_SOCK_PATH`` or
``ZEUSD_HOST_PORT`` is set, it changes limits through the daemon by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

from zeus import _native
from zeus.exception import (
    ZeusdAuthError,
    ZeusdCapabilityError,
    ZeusdConnectionError,
    ZeusdError,
)

__all__ = [
    "ZeusdConfig",
    "ZeusdClient",
    "GpuInfo",
    "CpuInfo",
    "GpuPowerSnapshot",
    "CpuDramPower",
    "CpuPowerSnapshot",
    "CpuEnergyResult",
    "require_capabilities",
    "ZeusdError",
    "ZeusdConnectionError",
    "ZeusdAuthError",
    "ZeusdCapabilityError",
]


@dataclass(frozen=True)
class GpuInfo:
    """A GPU of the daemon: its id in zeusd's routes, model, PCI address, counter."""

    id: int
    name: str
    pci_address: str
    cumulative_energy_available: bool


@dataclass(frozen=True)
class CpuInfo:
    """A CPU package of the daemon and whether it has a DRAM counter."""

    id: int
    dram_available: bool


@dataclass(frozen=True)
class GpuPowerSnapshot:
    """Power of the daemon's GPUs (mW) at the daemon's time (ms since the epoch)."""

    timestamp_ms: int
    power_mw: Dict[int, int]


@dataclass(frozen=True)
class CpuDramPower:
    """Power of one CPU package and its DRAM (mW; DRAM None when unavailable)."""

    cpu_mw: int
    dram_mw: Optional[int]


@dataclass(frozen=True)
class CpuPowerSnapshot:
    """Power of the daemon's CPU packages at the daemon's time."""

    timestamp_ms: int
    power_mw: Dict[int, CpuDramPower]


@dataclass(frozen=True)
class CpuEnergyResult:
    """Cumulative energy of one CPU package and its DRAM (uJ; None when not asked or unavailable)."""

    cpu_energy_uj: Optional[int]
    dram_energy_uj: Optional[int]


@dataclass(frozen=True)
class ZeusdConfig:
    """Where zeusd listens and the token to show it.

    Build it with ``tcp``, ``uds`` or ``from_env``. ``gpu_indices`` and
    ``cpu_indices`` are for streaming clients (None: all); ZeusdClient ignores them.
    """

    host_port: Optional[str] = None
    socket_path: Optional[str] = None
    token: Optional[str] = None
    gpu_indices: Optional[List[int]] = None
    cpu_indices: Optional[List[int]] = None

    @classmethod
    def tcp(cls, host: str, port: int, *, token: Optional[str] = None, gpu_indices: Optional[List[int]] = None,
            cpu_indices: Optional[List[int]] = None) -> "ZeusdConfig":
        """A daemon listening on TCP at ``host:port``."""
        return cls(host_port=f"{host}:{port}", token=token, gpu_indices=gpu_indices, cpu_indices=cpu_indices)

    @classmethod
    def uds(cls, socket_path: str, *, token: Optional[str] = None, gpu_indices: Optional[List[int]] = None,
            cpu_indices: Optional[List[int]] = None) -> "ZeusdConfig":
        """A daemon listening on the Unix socket ``socket_path``."""
        return cls(socket_path=socket_path, token=token, gpu_indices=gpu_indices, cpu_indices=cpu_indices)

    @classmethod
    def from_env(cls) -> Optional["ZeusdConfig"]:
        """``ZEUSD_SOCK_PATH``, else ``ZEUSD_HOST_PORT`` (verbatim); ``ZEUSD_TOKEN``. None when neither is set.

        The native client's reading of the environment (an empty variable counts as unset).
        """
        found = _native.zeusd.config_from_env()
        return None if found is None else cls._from_native(found)

    @classmethod
    def _from_native(cls, config: tuple) -> "ZeusdConfig":
        socket_path, host_port, token = config
        return cls(host_port=host_port, socket_path=socket_path, token=token)

    def url(self, path: str) -> str:
        """The URL of ``path`` on this daemon (``http://localhost`` for a Unix socket)."""
        if self.socket_path is not None:
            return f"http://localhost{path}"
        return f"http://{self.host_port}{path}"

    @property
    def endpoint(self) -> str:
        """The socket path or ``host:port``, for messages."""
        if self.socket_path is not None:
            return self.socket_path
        if self.host_port is not None:
            return self.host_port
        raise ValueError("ZeusdConfig has neither socket_path nor host_port set.")


def _ids(ids: Optional[List[int]]) -> List[int]:
    return [] if ids is None else [int(i) for i in ids]


class ZeusdClient:
    """A connection to one zeusd: its devices, our capabilities, typed requests.

    Raises ZeusdConnectionError when no daemon is configured, it cannot be
    reached, or its /discover fails. Authentication problems do not raise
    here: they are in ``auth_error`` and make every ``can_*`` False.
    """

    def __init__(self, config: Optional[ZeusdConfig] = None) -> None:
        """Connect to ``config``'s daemon (the environment's when None)."""
        if config is None:
            self._native = _native.zeusd.Client.from_env()
            config = ZeusdConfig._from_native(self._native.config)
        else:
            self._native = _native.zeusd.Client(config.socket_path, config.host_port, config.token or None)
        self._config = config
        self._gpus = [GpuInfo(*g) for g in self._native.gpus]
        self._cpus = [CpuInfo(*c) for c in self._native.cpus]

    @property
    def endpoint(self) -> str:
        """The socket path or ``host:port``."""
        return self._native.endpoint

    @property
    def gpus(self) -> List[GpuInfo]:
        """The daemon's GPUs."""
        return list(self._gpus)

    @property
    def gpu_ids(self) -> List[int]:
        """The daemon's GPU ids."""
        return [g.id for g in self._gpus]

    @property
    def cpus(self) -> List[CpuInfo]:
        """The daemon's CPU packages."""
        return list(self._cpus)

    @property
    def cpu_ids(self) -> List[int]:
        """The daemon's CPU package ids."""
        return [c.id for c in self._cpus]

    @property
    def dram_available(self) -> List[bool]:
        """Whether each CPU package (in ``cpu_ids`` order) has a DRAM counter."""
        return [c.dram_available for c in self._cpus]

    @property
    def enabled_api_groups(self) -> frozenset:
        """The API groups the daemon serves."""
        return frozenset(self._native.enabled_api_groups)

    @property
    def auth_required(self) -> bool:
        """Whether the daemon requires tokens."""
        return self._native.auth_required

    @property
    def auth_error(self) -> Optional[str]:
        """Why our token is not usable, or None."""
        return self._native.auth_error

    @property
    def granted_scopes(self) -> frozenset:
        """The scopes of our token (empty when auth is off or failed)."""
        return frozenset(self._native.scopes)

    @property
    def can_read_gpu(self) -> bool:
        """gpu-read is enabled and, with auth, our token has it."""
        return self._native.can("gpu-read")

    @property
    def can_control_gpu(self) -> bool:
        """gpu-control is enabled and, with auth, our token has it."""
        return self._native.can("gpu-control")

    @property
    def can_read_cpu(self) -> bool:
        """cpu-read is enabled and, with auth, our token has it."""
        return self._native.can("cpu-read")

    def get_gpu_energy(self, gpu_ids: List[int]) -> Dict[int, int]:
        """Cumulative energy (mJ) of each GPU."""
        return dict(self._native.get_gpu_energy(_ids(gpu_ids)))

    def get_gpu_power(self, gpu_ids: Optional[List[int]] = None) -> GpuPowerSnapshot:
        """Power (mW) of the GPUs (all when None)."""
        timestamp_ms, power_mw = self._native.get_gpu_power(_ids(gpu_ids))
        return GpuPowerSnapshot(timestamp_ms, dict(power_mw))

    def set_power_limit(self, gpu_ids: List[int], power_limit_mw: int, block: bool = True) -> None:
        """Set the GPUs' power limit (mW); with ``block``, return once applied."""
        self._native.set_power_limit(_ids(gpu_ids), int(power_limit_mw), block)

    def set_persistence_mode(self, gpu_ids: List[int], enabled: bool, block: bool = True) -> None:
        """Turn persistence mode on or off."""
        self._native.set_persistence_mode(_ids(gpu_ids), enabled, block)

    def get_persistence_mode(self, gpu_ids: Optional[List[int]] = None) -> Dict[int, bool]:
        """Persistence mode of each GPU."""
        return dict(self._native.get_persistence_mode(_ids(gpu_ids)))

    def get_power_limit(self, gpu_ids: Optional[List[int]] = None) -> Dict[int, int]:
        """Power limit (mW) of each GPU."""
        return dict(self._native.get_power_limit(_ids(gpu_ids)))

    def get_power_limit_constraints(self, gpu_ids: Optional[List[int]] = None) -> Dict[int, tuple]:
        """(min, max) power limit (mW) of each GPU."""
        return dict(self._native.get_power_limit_constraints(_ids(gpu_ids)))

    def set_gpu_locked_clocks(self, gpu_ids: List[int], min_clock_mhz: int, max_clock_mhz: int,
                              block: bool = True) -> None:
        """Lock the GPU clock between two frequencies (MHz)."""
        self._native.set_gpu_locked_clocks(_ids(gpu_ids), int(min_clock_mhz), int(max_clock_mhz), block)

    def reset_gpu_locked_clocks(self, gpu_ids: List[int], block: bool = True) -> None:
        """Unlock the GPU clock."""
        self._native.reset_gpu_locked_clocks(_ids(gpu_ids), block)

    def set_mem_locked_clocks(self, gpu_ids: List[int], min_clock_mhz: int, max_clock_mhz: int,
                              block: bool = True) -> None:
        """Lock the memory clock between two frequencies (MHz)."""
        self._native.set_mem_locked_clocks(_ids(gpu_ids), int(min_clock_mhz), int(max_clock_mhz), block)

    def reset_mem_locked_clocks(self, gpu_ids: List[int], block: bool = True) -> None:
        """Unlock the memory clock."""
        self._native.reset_mem_locked_clocks(_ids(gpu_ids), block)

    def reset_locked_clocks(self, gpu_ids: List[int], block: bool = True) -> None:
        """Unlock both the GPU and the memory clock."""
        self._native.reset_locked_clocks(_ids(gpu_ids), block)

    def get_cpu_energy(self, cpu_ids: Optional[List[int]] = None, cpu: bool = True,
                       dram: bool = True) -> Dict[int, CpuEnergyResult]:
        """Cumulative energy (uJ) of each CPU package and its DRAM."""
        return {k: CpuEnergyResult(*v) for k, v in self._native.get_cpu_energy(_ids(cpu_ids), cpu, dram).items()}

    def get_cpu_power(self, cpu_ids: Optional[List[int]] = None) -> CpuPowerSnapshot:
        """Power (mW) of each CPU package and its DRAM."""
        timestamp_ms, power_mw = self._native.get_cpu_power(_ids(cpu_ids))
        return CpuPowerSnapshot(timestamp_ms, {k: CpuDramPower(*v) for k, v in power_mw.items()})

    def get_time(self) -> float:
        """The daemon's wall clock, in seconds since the epoch."""
        return self._native.time_ms() / 1000.0

    def url(self, path: str) -> str:
        """The URL of ``path`` on this daemon."""
        return self._config.url(path)


def require_capabilities(client: ZeusdClient, *, read_gpu: bool = False, control_gpu: bool = False,
                         read_cpu: bool = False, gpu_ids: Optional[List[int]] = None,
                         cpu_ids: Optional[List[int]] = None) -> None:
    """Raise unless ``client``'s daemon can do all of this for us.

    ZeusdAuthError for an authentication problem; otherwise one
    ZeusdCapabilityError naming every unmet requirement (a group not enabled,
    a scope the token lacks, ids the daemon does not have).
    """
    client._native.require(control_gpu, read_gpu, read_cpu, _ids(gpu_ids), _ids(cpu_ids))
