"""``python -m zeus.monitor energy|power``: Zeus's measurement CLIs (F7).

* ``energy [--gpu-indices I ...]``: one ``ZeusMonitor`` window, named ``zeus.monitor.energy``, from
  start until Ctrl-C (SIGINT) or SIGTERM; then prints the ``Measurement``.
* ``power [--gpu-indices I ...] [--update-period S] [--power-domain D]``: a ``PowerMonitor``; every
  ``update_period`` seconds prints the time and ``{"GPU<i>": W}`` of the chosen domain; on Ctrl-C or
  SIGTERM prints the total time and the energy of that domain over it.

Both print a line to stderr once measuring has begun (scripts can wait for it). Differences from
Zeus: SIGTERM ends the measurement like Ctrl-C; the energy window does not wait for a framework
(``sync_execution=False``: there is no framework work to wait for).
"""

from __future__ import annotations

import argparse
import datetime
import signal
import sys
import threading
from typing import Optional, Sequence


class _StopSignal:
    """SIGINT and SIGTERM end the measurement. The handlers are installed when this is made, before the
    readiness line is printed, so a signal sent as soon as that line is read is never lost."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        signal.signal(signal.SIGINT, self._handler)
        signal.signal(signal.SIGTERM, self._handler)

    def _handler(self, signum, frame) -> None:  # noqa: ARG002 (signal handler signature)
        self._stop.set()

    def wait(self, period_s: Optional[float] = None, tick=None) -> None:
        """Returns once a signal came; calls ``tick()`` every ``period_s`` seconds meanwhile."""
        while not self._stop.wait(period_s if period_s is not None else 3600.0):
            if tick is not None:
                tick()


def _energy(args: argparse.Namespace) -> None:
    from zeus.monitor import ZeusMonitor

    stop = _StopSignal()
    monitor = ZeusMonitor(gpu_indices=args.gpu_indices)
    monitor.begin_window("zeus.monitor.energy", sync_execution=False)
    print(f"zeus.monitor energy: measuring GPUs {monitor.gpu_indices}; press Ctrl-C to stop", file=sys.stderr,
          flush=True)
    stop.wait()
    measurement = monitor.end_window("zeus.monitor.energy", sync_execution=False)
    print(measurement, flush=True)
    print(f"Total time: {measurement.time:.3f} s, total GPU energy: {measurement.total_energy:.3f} J", flush=True)


def _power(args: argparse.Namespace) -> None:
    from zeus.monitor import PowerDomain, PowerMonitor

    stop = _StopSignal()
    domain = PowerDomain(args.power_domain)
    monitor = PowerMonitor(gpu_indices=args.gpu_indices, update_period=args.update_period)
    if domain not in monitor.measurement_domains:
        monitor.stop()
        raise SystemExit(f"error: power domain {domain.value} is not supported by these GPUs")
    start = monitor.time()
    print(f"zeus.monitor power: sampling GPUs {monitor.gpu_indices} every {args.update_period} s; press Ctrl-C to "
          "stop", file=sys.stderr, flush=True)

    def tick() -> None:
        power = monitor.get_power(power_domain=domain)
        if power is not None:
            print(datetime.datetime.now(), {f"GPU{i}": w for i, w in power.items()}, flush=True)

    stop.wait(args.update_period, tick)
    end = monitor.time()
    energy = monitor.get_energy(start, end, power_domain=domain)
    monitor.stop()
    print(f"Total time (s): {end - start:.3f}", flush=True)
    print(f"Total energy (J): {energy}", flush=True)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m zeus.monitor", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    energy = commands.add_parser("energy", help="measure energy until Ctrl-C")
    energy.add_argument("--gpu-indices", nargs="+", type=int, default=None, help="GPUs to measure (default: all)")
    power = commands.add_parser("power", help="print power every update period until Ctrl-C")
    power.add_argument("--gpu-indices", nargs="+", type=int, default=None, help="GPUs to sample (default: all)")
    power.add_argument("--update-period", type=float, default=1.0, help="seconds between prints (default: 1.0)")
    power.add_argument("--power-domain", default="device_instant",
                       choices=["device_instant", "device_average", "memory_average"],
                       help="the domain to print and integrate (default: device_instant)")
    args = parser.parse_args(argv)
    if args.command == "power" and args.update_period <= 0:
        parser.error(f"--update-period must be positive, got {args.update_period}")
    {"energy": _energy, "power": _power}[args.command](args)


if __name__ == "__main__":
    main()
