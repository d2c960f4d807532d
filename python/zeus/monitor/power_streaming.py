"""Power of many nodes, streamed from their zeusd daemons (Zeus's ``zeus.monitor.power_streaming``).

``PowerStreamingClient`` follows the server-sent power events of one or more
zeusd daemons (``ZeusdConfig``: a Unix socket or ``host:port``, a token, and
the GPU and CPU ids to follow). The streams, reconnections, clock offsets and
the per-device timelines live in the native client (C++), which runs its own
threads; this module is its Python API.

Zeus's API: ``get_power()``, a blocking iterator and an async iterator over
snapshots, ``stop()``. Timestamps are Unix seconds on this machine's clock
(``time.time()``): each daemon's stamps are moved by its clock offset,
measured with ``GET /time`` round trips at start-up.

Beyond Zeus (its weaknesses W15): every device's power TIMELINE is kept (not
only the latest reading), with ``get_power_timeline`` and ``get_energy``
(which says how much of the interval had no known power: a stream that was
lost or silent), ``clock_offsets`` and ``stream_status``. The iterators never
miss an update that arrives while the consumer is busy: they wait on an
update counter, not on a notification.
"""

from __future__ import annotations

import asyncio
import copy
import operator
import weakref
from dataclasses import dataclass, field
from typing import AsyncIterator, Dict, Iterator, List, Optional, Sequence, Tuple

from zeus import _native
from zeus.utils.zeusd import ZeusdConfig

__all__ = ["CpuPowerReading", "PowerReadings", "PowerStreamingClient", "StreamEnergy"]

# The wait slice of the iterators: how often a blocked iterator returns to
# Python (for signals such as Ctrl-C) when nothing arrives.
_WAIT_SLICE_S = 0.5


@dataclass
class CpuPowerReading:
    """Power of one CPU package and its DRAM (W; ``dram_w`` None when the daemon reports no DRAM)."""

    cpu_w: float
    dram_w: Optional[float] = None


@dataclass
class PowerReadings:
    """The latest readings of one daemon's devices.

    ``timestamp_s`` is the newest event's time (Unix seconds, clock offset
    applied; it never goes back). ``gpu_power_w`` maps GPU ids to watts,
    ``cpu_power_w`` CPU package ids to ``CpuPowerReading``.
    """

    timestamp_s: float = 0.0
    gpu_power_w: Dict[int, float] = field(default_factory=dict)
    cpu_power_w: Dict[int, CpuPowerReading] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamEnergy:
    """The energy of one device over an interval (``PowerStreamingClient.get_energy``).

    ``energy_j`` counts only the known part of the interval: each reading
    holds until the next one, for at most a few seconds, never across a lost
    connection. ``uncovered_s`` is the part with no known power (before the
    first reading, while the stream was lost or silent), in ``gaps`` stretches;
    ``complete`` is True when there is none.
    """

    energy_j: float
    dram_energy_j: Optional[float]
    uncovered_s: float
    gaps: int

    @property
    def complete(self) -> bool:
        """Whether power was known over the whole interval."""
        return self.gaps == 0


def _server_tuple(config: ZeusdConfig) -> tuple:
    def ids(value: Optional[Sequence[int]]) -> Optional[List[int]]:
        return None if value is None else [int(i) for i in value]

    return (config.socket_path, config.host_port, config.token or None, ids(config.gpu_indices),
            ids(config.cpu_indices))


class PowerStreamingClient:
    """Streams GPU and CPU power from zeusd daemons.

    Args:
        servers: One ``ZeusdConfig`` per daemon. Per device kind, ``gpu_indices``
            / ``cpu_indices`` None streams every device of that kind when the
            daemon has some and grants the scope (skipped silently otherwise),
            ``[]`` none, and a list exactly those ids.
        reconnect_delay_s: Seconds between a lost or failed stream and the next
            try. A stream refused with 401 or 403 is not retried.
        max_sample_hold_s: (Beyond Zeus, keyword-only.) The longest a reading is
            taken to hold without a newer one; past it, until the next reading,
            is a gap in ``get_energy`` (zeusd repeats unchanged readings every
            second).
        stall_timeout_s: (Keyword-only.) A connected stream silent this long is
            dropped and reconnected; 0: never.
        timeline_capacity: (Keyword-only.) Readings kept per device for
            ``get_power_timeline`` / ``get_energy``; the oldest go first.

    Raises:
        ValueError: Two servers with the same endpoint, an id a daemon does
            not have, or a duration that is not finite, is negative (zero for
            ``max_sample_hold_s``) or exceeds one year, or a
            ``timeline_capacity`` outside 2..100,000,000.
        ZeusdCapabilityError: Ids were asked for explicitly but the daemon does
            not grant that scope (token missing, rejected or without it, or the
            API group disabled).
        ZeusdConnectionError: A daemon cannot be reached (none is left out
            silently).
    """

    def __init__(self, servers: Sequence[ZeusdConfig], reconnect_delay_s: float = 1.0, *,
                 max_sample_hold_s: float = 3.0, stall_timeout_s: float = 10.0,
                 timeline_capacity: int = 100000) -> None:
        """Connect to every daemon, measure clock offsets and start streaming."""
        self._native = _native.power_streaming.Client([_server_tuple(s) for s in servers],
                                                      float(reconnect_delay_s),
                                                      max_sample_hold_s=float(max_sample_hold_s),
                                                      stall_timeout_s=float(stall_timeout_s),
                                                      timeline_capacity=operator.index(timeline_capacity))
        # Joins the stream threads (GIL released) when the client is collected without stop().
        self._finalizer = weakref.finalize(self, self._native.stop)

    @property
    def endpoints(self) -> List[str]:
        """The daemons' endpoints (socket path or ``host:port``), in the order given."""
        return list(self._native.endpoints())

    def get_power(self) -> Dict[str, PowerReadings]:
        """The latest readings per endpoint (fresh objects: changing them changes nothing here).

        Endpoints that have sent nothing yet are absent, so this is ``{}``
        before the first event.
        """
        out: Dict[str, PowerReadings] = {}
        for endpoint, (time_s, gpus, cpus) in self._native.latest().items():
            if not gpus and not cpus:
                continue
            out[endpoint] = PowerReadings(
                timestamp_s=time_s,
                gpu_power_w=dict(gpus),
                cpu_power_w={i: CpuPowerReading(cpu_w, dram_w) for i, (cpu_w, dram_w) in cpus.items()},
            )
        return out

    def __iter__(self) -> Iterator[Dict[str, PowerReadings]]:
        """Yields a ``get_power()`` snapshot after each update, until ``stop()``.

        Updates that arrive while the consumer is busy are folded into the
        next snapshot, never lost; a snapshot equal to the previous one (a
        stream reconnected but sent nothing new) is not repeated.
        """
        seen = self._native.sequence()
        previous: Optional[Dict[str, PowerReadings]] = None
        while True:
            now = self._native.wait_for_update(seen, _WAIT_SLICE_S)
            if self._native.stopped:
                return
            if now == seen:
                continue
            seen = now
            snapshot = self.get_power()
            if snapshot and snapshot != previous:
                previous = copy.deepcopy(snapshot)
                yield snapshot

    async def __aiter__(self) -> AsyncIterator[Dict[str, PowerReadings]]:
        """As ``__iter__``, waiting in the loop's default executor so that the event loop keeps running."""
        loop = asyncio.get_running_loop()
        seen = self._native.sequence()
        previous: Optional[Dict[str, PowerReadings]] = None
        while True:
            now = await loop.run_in_executor(None, self._native.wait_for_update, seen, _WAIT_SLICE_S)
            if self._native.stopped:
                return
            if now == seen:
                continue
            seen = now
            snapshot = self.get_power()
            if snapshot and snapshot != previous:
                previous = copy.deepcopy(snapshot)
                yield snapshot

    def stop(self) -> None:
        """Stop every stream and join its thread; iterators end. The data stays readable."""
        self._native.stop()

    # Beyond Zeus.

    @property
    def clock_offsets(self) -> Dict[str, float]:
        """Seconds added to each daemon's timestamps to put them on this machine's clock."""
        return {e: self._native.clock_offset_s(e) for e in self._native.endpoints()}

    def get_power_timeline(self, endpoint: str, kind: str, device_id: int, start_time: Optional[float] = None,
                           end_time: Optional[float] = None) -> List[Tuple[float, float]]:
        """``[(timestamp_s, W)]`` of one device (``kind`` "gpu" or "cpu"; CPU package power), oldest first,
        with ``start_time <= timestamp_s <= end_time`` (Unix seconds; None: unbounded).

        Raises ValueError (ZeusNotFoundError) for an endpoint or device that is not streamed.
        """
        return [(t, w) for t, w, _ in self._native.timeline(endpoint, kind, int(device_id), start_time, end_time)]

    def get_dram_power_timeline(self, endpoint: str, cpu_id: int, start_time: Optional[float] = None,
                                end_time: Optional[float] = None) -> List[Tuple[float, float]]:
        """``[(timestamp_s, W)]`` of one CPU package's DRAM (readings without DRAM power are left out)."""
        return [(t, d) for t, _, d in self._native.timeline(endpoint, "cpu", int(cpu_id), start_time, end_time)
                if d is not None]

    def get_energy(self, endpoint: str, kind: str, device_id: int, start_time: float,
                   end_time: float) -> StreamEnergy:
        """The energy of one device between two Unix times (see ``StreamEnergy``).

        Raises ValueError: ``end_time < start_time`` (ZeusInvalidArgumentError), an
        endpoint or device that is not streamed (ZeusNotFoundError).
        """
        energy_j, dram_j, uncovered_s, gaps = self._native.energy(endpoint, kind, int(device_id), float(start_time),
                                                                  float(end_time))
        return StreamEnergy(energy_j, dram_j, uncovered_s, gaps)

    def stream_status(self) -> List[dict]:
        """Each stream's state (endpoint, kind, ids, connected, given_up, last_error, counters)."""
        return list(self._native.status())
