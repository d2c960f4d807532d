"""Where the GPU emulator and its example scenarios are, to try Zeus without a GPU.

The NVML emulator (``libzeus-nvml-emulator.so``) is NVML's C API over a JSON scenario of emulated GPUs. Zeus loads
it instead of NVIDIA's library when ``ZEUS_NVML_LIBRARY`` names it, and reads the scenario named by
``ZEUS_EMULATOR_CONFIG``. A scenario with ``"vendor": "amd"`` (``mi300x``, ``mi250``) is served by the same
emulator's AMD SMI face, ``libzeus-amdsmi-emulator.so``, through ``ZEUS_AMDSMI_LIBRARY``,
``ZEUS_AMDSMI_EMULATOR_CONFIG`` and ``ZEUS_GPU_VENDOR=amd``. This module finds them in whatever this package
came from:

* the wheel: ``zeus/lib/libzeus-{nvml,amdsmi}-emulator.so`` and ``zeus/emulator_scenarios/*.json``;
* a CMake build tree (``PYTHONPATH=<build>/python``): ``<build>/lib/`` and ``<build>/python/zeus/emulator_scenarios/``;
* the Debian packages: ``/usr/lib/<multiarch>/zeus/`` and ``/usr/share/zeus/examples/``.

In Python::

    import os, zeus.emulator
    os.environ.update(zeus.emulator.environment("four-gpus"))   # before the first ZeusMonitor

In a shell, ``python -m zeus.emulator [SCENARIO]`` prints the two ``export`` lines (``eval`` them);
``python -m zeus.emulator --list`` lists the scenarios.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import sysconfig
from pathlib import Path
from typing import Dict, List, Optional

__all__ = [
    "LIBRARY_NAME",
    "AMDSMI_LIBRARY_NAME",
    "DEFAULT_SCENARIO",
    "library_path",
    "scenario_path",
    "scenarios",
    "environment",
    "main",
]

LIBRARY_NAME = "libzeus-nvml-emulator.so"
AMDSMI_LIBRARY_NAME = "libzeus-amdsmi-emulator.so"
DEFAULT_SCENARIO = "four-gpus"

_PACKAGE_DIR = Path(__file__).resolve().parent


def _multiarch() -> str:
    return sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"


def _library_candidates(name: str = LIBRARY_NAME) -> List[Path]:
    return [
        _PACKAGE_DIR / "lib" / name,  # the wheel
        _PACKAGE_DIR.parent.parent / "lib" / name,  # a build tree: <build>/python/zeus -> <build>/lib
        Path("/usr/lib") / _multiarch() / "zeus" / name,  # the Debian package
    ]


def _scenario_dirs() -> List[Path]:
    return [
        _PACKAGE_DIR / "emulator_scenarios",  # the wheel and a build tree
        Path("/usr/share/zeus/examples"),  # the Debian package
        _PACKAGE_DIR.parent.parent / "examples",  # the source tree (PYTHONPATH=python)
    ]


def library_path(vendor: str = "nvidia") -> Path:
    """The emulator's shared library: its NVML face, or for ``vendor="amd"`` its AMD SMI face.

    Raises:
        FileNotFoundError: none of the places above has it (the message lists them).
    """
    name = AMDSMI_LIBRARY_NAME if vendor == "amd" else LIBRARY_NAME
    candidates = _library_candidates() if vendor != "amd" else _library_candidates(name)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    searched = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"the emulator ({name}) is not in this installation (looked for {searched})")


def _environment_for(path: Path) -> Dict[str, str]:
    try:
        vendor = json.loads(path.read_text()).get("vendor", "nvidia")
    except (OSError, ValueError, AttributeError):
        vendor = "nvidia"  # the emulator reports a bad file itself, naming the problem
    if vendor == "amd":
        return {"ZEUS_GPU_VENDOR": "amd", "ZEUS_AMDSMI_LIBRARY": str(library_path("amd")),
                "ZEUS_AMDSMI_EMULATOR_CONFIG": str(path)}
    return {"ZEUS_NVML_LIBRARY": str(library_path()), "ZEUS_EMULATOR_CONFIG": str(path)}


def scenarios() -> List[str]:
    """The names of the example scenarios found (e.g. ``four-gpus``, ``emulated-training``), sorted."""
    names = set()
    for directory in _scenario_dirs():
        if directory.is_dir():
            names.update(p.stem for p in directory.glob("*.json"))
    return sorted(names)


def scenario_path(name: str = DEFAULT_SCENARIO) -> Path:
    """The JSON file of the example scenario ``name`` (with or without ``.json``).

    Raises:
        FileNotFoundError: no such scenario (the message lists the ones there are).
    """
    file_name = name if name.endswith(".json") else f"{name}.json"
    if "/" in file_name or file_name.startswith("."):
        raise FileNotFoundError(f"{name!r} is not a scenario name (use one of {', '.join(scenarios()) or 'none'})")
    for directory in _scenario_dirs():
        candidate = directory / file_name
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"no emulator scenario {name!r} in this installation (there are: {', '.join(scenarios()) or 'none'})"
    )


def environment(scenario: str = DEFAULT_SCENARIO) -> Dict[str, str]:
    """``ZEUS_NVML_LIBRARY`` and ``ZEUS_EMULATOR_CONFIG`` for the emulator on ``scenario``; for an AMD scenario,
    ``ZEUS_GPU_VENDOR=amd``, ``ZEUS_AMDSMI_LIBRARY`` and ``ZEUS_AMDSMI_EMULATOR_CONFIG``."""
    return _environment_for(scenario_path(scenario))


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m zeus.emulator``: prints the environment that selects the emulator, as shell ``export`` lines."""
    parser = argparse.ArgumentParser(
        prog="python -m zeus.emulator",
        description="Print the shell lines that make Zeus use the NVML emulator: eval \"$(python -m zeus.emulator)\"",
    )
    parser.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO,
                        help=f"an example scenario's name or its JSON file (default: {DEFAULT_SCENARIO})")
    parser.add_argument("--list", action="store_true", help="list the example scenarios and exit")
    args = parser.parse_args(argv)
    try:
        if args.list:
            for name in scenarios():
                print(f"{name}\t{scenario_path(name)}")
            return 0
        scenario = Path(args.scenario)
        if scenario.suffix == ".json" and scenario.is_file():  # a scenario file of the user's own
            env = _environment_for(scenario.resolve())
        else:
            env = environment(args.scenario)
    except FileNotFoundError as e:
        print(f"python -m zeus.emulator: {e}", file=sys.stderr)
        return 1
    for key, value in env.items():
        print(f"export {key}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
