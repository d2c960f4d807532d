"""Every public name of Zeus 0.16, and of the later additions the reference describes
(../shared/docs/zeus-reference.md, section 1, F1-F20), imports from the module Zeus has it in; the names left out
on purpose are listed with the reason (the README's Python section says the same).

Two lists:

* ``EXPECTED``: must import (Zeus 0.16's names and the later additions: zeus.profile, the zeus.device packages
  and SoCs, carbon and price).
* ``DELIBERATELY_ABSENT``: not provided, each with its reason. Not checked either way.
"""

from __future__ import annotations

import importlib

import pytest

# module -> names
EXPECTED: dict[str, list[str]] = {
    # F1-F4: measurement.
    "zeus.monitor": ["ZeusMonitor", "Measurement", "PowerMonitor", "PowerDomain", "TemperatureMonitor"],
    "zeus.monitor.energy": ["ZeusMonitor", "Measurement"],
    "zeus.monitor.power": ["PowerMonitor", "PowerDomain"],
    "zeus.monitor.temperature": ["TemperatureMonitor"],
    "zeus.monitor.power_streaming": ["PowerStreamingClient", "PowerReadings", "CpuPowerReading"],
    # F8: Prometheus push helpers.
    "zeus.metric": ["Metric", "EnergyHistogram", "EnergyCumulativeCounter", "PowerGauge"],
    # F10, F11: the device layer's entry points.
    "zeus.device": ["get_gpus", "get_cpus"],
    "zeus.device.gpu": ["get_gpus"],
    "zeus.device.gpu.amd": ["AMDGPU", "AMDGPUs"],
    "zeus.device.cpu": ["get_cpus"],
    # F13: the power-limit optimizer.
    "zeus.optimizer.power_limit": [
        "GlobalPowerLimitOptimizer", "HFGlobalPowerLimitOptimizer", "OptimumSelector", "Energy", "Time", "ZeusCost",
        "MaxSlowdownConstraint", "PowerLimitMeasurement", "Ready", "Warmup", "Profiling", "Done",
    ],
    # F14: the batch-size optimizer's client.
    "zeus.optimizer.batch_size": ["BatchSizeOptimizer", "JobSpec"],
    "zeus.optimizer.batch_size.client": ["BatchSizeOptimizer"],
    "zeus.optimizer.batch_size.common": ["JobSpec", "CreatedJob"],
    "zeus.optimizer.batch_size.exceptions": [
        "ZeusBSOConfigError", "ZeusBSORuntimError", "ZeusBSOBadOperationError", "ZeusBSOOperationOrderError",
        "ZeusBSOTrainFailError",
    ],
    # F17: the zeusd client.
    "zeus.utils.zeusd": ["ZeusdConfig", "ZeusdClient", "require_capabilities"],
    # F18: framework helpers.
    "zeus.utils.framework": ["sync_execution", "all_reduce", "is_distributed", "get_rank", "get_world_size"],
    # F20: utilities.
    "zeus.utils.metric": ["zeus_cost"],
    "zeus.utils.lr_scaler": ["SquareRootScaler", "LinearScaler"],
    "zeus.utils.env": ["get_env"],
    "zeus.callback": ["Callback", "CallbackSet"],
    "zeus.exception": ["ZeusBaseError"],
    "zeus.show_env": ["main"],
}

# Issue 22's additions (merged into EXPECTED below).
_ISSUE_22: dict[str, list[str]] = {
    # F9 (with warmup_settle_duration, added after 0.16).
    "zeus.profile": [
        "measure", "profile_parameters", "profile_measurement_duration", "profile_cooldown_duration", "TrialResult",
        "SweepReport",
    ],
    # F10: zeus.device.gpu as a package, with Zeus's modules and classes.
    "zeus.device.gpu.common": [
        "GPU", "GPUs", "EmptyGPUs", "ZeusGPUInitError", "ZeusGPUInvalidArgError", "ZeusGPUNotSupportedError",
        "ZeusGPUNoPermissionError", "ZeusGPUAlreadyInitializedError", "ZeusGPUNotFoundError",
        "ZeusGPUInsufficientSizeError", "ZeusGPUInsufficientPowerError", "ZeusGPUDriverNotLoadedError",
        "ZeusGPUTimeoutError", "ZeusGPUIRQError", "ZeusGPULibraryNotFoundError", "ZeusGPUFunctionNotFoundError",
        "ZeusGPUCorruptedInfoROMError", "ZeusGPULostError", "ZeusGPUResetRequiredError",
        "ZeusGPUOperatingSystemError", "ZeusGPULibRMVersionMismatchError", "ZeusGPUMemoryError",
        "ZeusGPUUnknownError", "ZeusGPUHeterogeneousError",
    ],
    "zeus.device.gpu": ["GPUs", "ZeusGPUInitError"],
    "zeus.device.gpu.nvidia": ["NVIDIAGPU", "NVIDIAGPUs"],
    # F11: zeus.device.cpu as a package.
    "zeus.device.cpu.common": ["CPU", "CPUs", "CpuDramMeasurement", "EmptyCPUs", "ZeusCPUInitError",
                               "ZeusCPUNoPermissionError"],
    "zeus.device.cpu.rapl": ["RAPLCPU", "RAPLCPUs", "get_current_rapl_zone_id"],
    "zeus.device.exception": ["ZeusBaseGPUError", "ZeusBaseCPUError", "ZeusBaseSoCError", "ZeusdError"],
    # F12: SoCs.
    "zeus.device": ["get_soc"],
    "zeus.device.soc": ["get_soc"],
    "zeus.device.soc.common": ["SoC", "SoCMeasurement", "ZeusSoCInitError"],
    "zeus.device.soc.jetson": ["Jetson", "JetsonMeasurement"],
    "zeus.device.soc.apple": ["AppleSilicon", "AppleSiliconMeasurement"],
    # F5, F6: carbon and price.
    "zeus.monitor.carbon": [
        "CarbonEmissionMonitor", "CarbonEmissionMeasurement", "CarbonIntensityProvider", "ElectrictyMapsClient",
        "ZeusCarbonIntensityHTTPError", "ZeusCarbonIntensityNotFoundError",
    ],
    "zeus.monitor.price": [
        "EnergyCostMonitor", "EnergyCostMeasurement", "ElectricityPriceProvider", "OpenEIClient",
        "ZeusElectricityPriceNotFoundError", "get_time_info",
    ],
    "zeus.utils.lat_lon": ["get_ip_lat_long"],
}
for _module, _names in _ISSUE_22.items():
    EXPECTED.setdefault(_module, []).extend(n for n in _names if n not in EXPECTED.get(_module, []))

# module -> {name: why it is not provided}; "*" stands for the whole module.
DELIBERATELY_ABSENT: dict[str, dict[str, str]] = {
    "zeus.device.gpu.nvidia": {
        "ZeusdNVIDIAGPU": "GPUs are never relayed per call through zeusd here: reads are local NVML, and the "
                          "power-limit optimizer sets limits through zeusd itself when ZEUSD_* is set "
                          "(ZeusdPowerLimitSetter), so no separate GPU class is needed.",
    },
    "zeus.device.gpu.amd": {
        "ZeusdAMDGPU": "as ZeusdNVIDIAGPU: reads are local AMD SMI, and the power-limit optimizer sets limits "
                       "through zeusd itself when ZEUSD_* is set.",
    },
    "zeus.device.cpu.emi": {
        "*": "Windows EMI energy (EMICPUs, get_current_emi_cpu_index): the package targets Linux (RAPL).",
    },
    "zeus.optimizer.pipeline_frequency": {
        "*": "The pipeline frequency optimizer (Perseus, F15: PipelineFrequencyOptimizer, FrequencyController and "
             "its FastAPI server) is not implemented: it needs per-stage frequency profiles and the lowtime solver, "
             "and Zeus's own client never reports its profiling results (W11), so only static schedules work there.",
    },
    "zeus._legacy": {
        "*": "Zeus's research simulator and legacy policies (F19) are a private package there; the C++ CLIs "
             "`zeus simulate` and `zeus reproduce` replace them (the same policies, on the same traces).",
    },
    "zeus.optimizer.batch_size.server": {
        "*": "The batch-size optimizer service is `zeus bso-server` (C++, the same REST API and database schema), "
             "not a FastAPI app inside the Python package.",
    },
    "zeus.optimizer.batch_size.common": {
        name: "A REST model of the batch-size service: the native client (zeus::bso) builds and parses them; "
              "Python users only ever hand JobSpec to BatchSizeOptimizer."
        for name in ("TrialId", "TrainingResult", "ReportResponse", "JobSpecFromClient")
    },
    "zeus.monitor.power": {
        "infer_counter_update_period": "PowerMonitor samples every 0.1 s by default instead of busy-polling the "
                                       "driver 1000 times per GPU model at start-up to infer its period (W4).",
    },
    "zeus.utils.metric": {
        name: "Reads the power-log CSV of the old zeus_monitor binary (removed from Zeus in 2024) with pandas and "
              "scikit-learn; PowerMonitor.get_energy and ZeusMonitor replace it."
        for name in ("energy", "avg_power")
    },
    "zeus.utils.testing": {
        "ReplayZeusMonitor": "Not provided: a test double that replays a ZeusMonitor log_file; tests here run on "
                             "the NVML emulator instead.",
    },
    "zeus.utils.multiprocessing": {
        "warn_if_global_in_subprocess": "The monitors here sample in native threads and spawn no process, so a "
                                        "monitor created at import time in a spawned child costs nothing to warn "
                                        "about.",
    },
    "zeus.utils.async_utils": {
        "create_task": "An internal helper of Zeus's asyncio servers; the services here are C++.",
    },
    "zeus.utils.logging": {
        "get_logger": "The package logs through the standard `logging` module under the `zeus` logger (and native "
                      "records through the same loggers); it installs no handler of its own.",
    },
}


def _pairs(table: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(module, name) for module, names in table.items() for name in names]


def _lookup(module: str, name: str) -> object:
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize(("module", "name"), _pairs(EXPECTED), ids=lambda v: v)
def test_a_zeus_name_imports(module: str, name: str) -> None:
    assert _lookup(module, name) is not None


def test_the_lists_do_not_overlap_and_every_absence_has_a_reason() -> None:
    expected = set(_pairs(EXPECTED))
    for module, names in DELIBERATELY_ABSENT.items():
        for name, reason in names.items():
            assert len(reason) > 30, (module, name)
            if name == "*":
                assert not any(m == module or m.startswith(module + ".") for m, _ in expected), module
            else:
                assert (module, name) not in expected, (module, name)
