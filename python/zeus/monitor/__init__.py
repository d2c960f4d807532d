"""Energy and power measurement (Zeus's ``zeus.monitor``): ``ZeusMonitor`` windows, ``PowerMonitor``
timelines and ``TemperatureMonitor``, over the native engine."""

from zeus.monitor.energy import Measurement, ZeusMonitor
from zeus.monitor.power import PowerDomain, PowerMonitor
from zeus.monitor.temperature import TemperatureMonitor

__all__ = ["Measurement", "PowerDomain", "PowerMonitor", "TemperatureMonitor", "ZeusMonitor"]
