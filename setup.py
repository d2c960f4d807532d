"""Builds the Python package `zeus` with the project's CMake build, for pip.

`python3 -m pip install --no-build-isolation .` and `pip wheel` (scripts/build-wheel, `make wheel`) run this. It
configures the C++ project in build-wheel/ (or $ZEUS_CMAKE_BUILD_DIR) with the core components only (no tests,
benchmarks, exporter, batch-size service, zeusd or MPI), with the build type and ZEUS_WERROR of the `release`
preset (so that ccache shares objects with build-release/), builds the native module, the `zeus` tool and the NVML
emulator, and puts beside the Python sources:

    zeus/_native*.so                        the native module
    zeus/bin/zeus                           the command-line tool (run by the console script `zeus`: zeus._cli)
    zeus/lib/libzeus-nvml-emulator.so       the NVML emulator (zeus.emulator finds it)
    zeus/lib/libzeus-amdsmi-emulator.so     its AMD SMI face
    zeus/emulator_scenarios/*.json          example scenarios (examples/{four-gpus,emulated-training,gh200}.json, data/emulator/{mi300x,mi250}.json)

With ZEUS_WHEEL_SELF_CONTAINED=1 (scripts/build-wheel sets it) the copies are made independent of the build
machine's libraries (and stripped): the shared libraries they need beyond the C and C++ runtimes (only fmt's libfmt.so.9: the rest
is static or header-only) are copied into zeus/.libs/ and found through an RPATH set with patchelf; any other
dependency fails the build, naming it. Without it (a local `pip install .` over an existing build tree, as
scripts/test-python-install does) the copies use the system's libraries, as the build tree does.

If $ZEUS_CMAKE_BUILD_DIR names a configured tree, it is built as it is (not reconfigured). The version is the
top-level VERSION file's. Everything else is in pyproject.toml.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent
SCENARIOS = ("examples/four-gpus", "examples/emulated-training", "examples/gh200", "data/emulator/mi300x",
             "data/emulator/mi250")

# Shared libraries the wheel's native files may need from the system: glibc's and the compiler's runtimes.
ALLOWED_LIBRARIES = re.compile(
    r"^(libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|ld-linux-x86-64\.so\.2|libdl\.so\.2|"
    r"libpthread\.so\.0)$"
)
# Shared libraries copied into zeus/.libs/ (Debian ships fmt as a shared library only; OpenSSL's for the
# https:// of the carbon and price providers; the CA certificates stay the system's).
BUNDLED_LIBRARIES = re.compile(r"^(libfmt\.so\.\d+|libssl\.so\.3|libcrypto\.so\.3)$")


def read_version() -> str:
    """The project's version: the first line of the top-level VERSION file."""
    path = ROOT / "VERSION"
    try:
        version = path.read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, IndexError) as e:
        raise RuntimeError(f"cannot read the project's version from {path}: {e}") from e
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise RuntimeError(f"{path} holds {version!r}, not a version MAJOR.MINOR.PATCH")
    return version


def release_preset_settings() -> Dict[str, str]:
    """CMAKE_BUILD_TYPE and ZEUS_WERROR of the `release` configure preset (CMakePresets.json), inherits followed."""
    settings = {"CMAKE_BUILD_TYPE": "Release", "ZEUS_WERROR": "OFF"}
    try:
        presets = {p["name"]: p for p in json.loads((ROOT / "CMakePresets.json").read_text())["configurePresets"]}
    except (OSError, ValueError, KeyError):
        return settings

    def resolve(name: str, seen: frozenset) -> Dict[str, str]:
        preset = presets.get(name)
        if preset is None or name in seen:
            return {}
        out: Dict[str, str] = {}
        inherits = preset.get("inherits", [])
        for parent in reversed([inherits] if isinstance(inherits, str) else inherits):
            out.update(resolve(parent, seen | {name}))
        for key, value in preset.get("cacheVariables", {}).items():
            out[key] = value["value"] if isinstance(value, dict) else value
        return out

    resolved = resolve("release", frozenset())
    for key in settings:
        if key in resolved:
            settings[key] = str(resolved[key])
    return settings


def needed_libraries(elf: Path) -> List[str]:
    """The DT_NEEDED entries of an ELF file (readelf -d)."""
    out = subprocess.run(["readelf", "-d", str(elf)], check=True, capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def resolved_libraries(elf: Path) -> Dict[str, str]:
    """soname -> path of the libraries the dynamic loader finds for an ELF file (ldd)."""
    out = subprocess.run(["ldd", str(elf)], check=True, capture_output=True, text=True).stdout
    return {m.group(1): m.group(2) for m in re.finditer(r"^\s*(\S+) => (/\S+)", out, re.MULTILINE)}


def make_self_contained(package: Path, elves: List[Path]) -> None:
    """Copies the bundled libraries the ELF files need into package/.libs and points their RPATH there."""
    patchelf = shutil.which("patchelf")
    if patchelf is None:
        raise RuntimeError("ZEUS_WHEEL_SELF_CONTAINED=1 needs patchelf (Debian package patchelf)")
    for elf in elves:  # symbol tables are of no use to the wheel's users (a Release build has no debug info)
        subprocess.run(["strip", "--strip-unneeded", str(elf)], check=True)
    libs = package / ".libs"
    queue = list(elves)
    done = set()
    while queue:
        elf = queue.pop(0)
        if elf in done:
            continue
        done.add(elf)
        bundled = []
        locations = None
        for soname in needed_libraries(elf):
            if ALLOWED_LIBRARIES.match(soname):
                continue
            if not BUNDLED_LIBRARIES.match(soname):
                raise RuntimeError(
                    f"{elf.relative_to(package.parent)} needs {soname}, which the wheel may neither need nor carry "
                    "(is the build tree configured with a service component on?)"
                )
            if locations is None:
                locations = resolved_libraries(elf)
            source = locations.get(soname)
            if source is None:
                raise RuntimeError(f"{elf} needs {soname}, which the dynamic loader does not find")
            target = libs / soname
            if not target.exists():
                libs.mkdir(parents=True, exist_ok=True)
                shutil.copy2(os.path.realpath(source), target)
                target.chmod(0o755)
                queue.append(target)
            bundled.append(soname)
        if bundled or elf.parent == libs:
            rpath = "$ORIGIN" if elf.parent == libs else f"$ORIGIN/{os.path.relpath(libs, elf.parent)}"
            subprocess.run([patchelf, "--set-rpath", rpath, str(elf)], check=True)


class BuildWithCMake(build_py):
    """build_py, plus the CMake build's native files copied into the package."""

    def run(self) -> None:
        super().run()
        build_dir = Path(os.environ.get("ZEUS_CMAKE_BUILD_DIR") or ROOT / "build-wheel")
        preset = release_preset_settings()
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
            f"-DCMAKE_BUILD_TYPE={preset['CMAKE_BUILD_TYPE']}", f"-DZEUS_WERROR={preset['ZEUS_WERROR']}",
            "-DZEUS_BUILD_TESTS=OFF", "-DZEUS_BUILD_BENCHMARKS=OFF", "-DZEUS_BUILD_PYTHON=ON",
            "-DZEUS_BUILD_EXPORTER=OFF", "-DZEUS_BUILD_BSO_SERVER=OFF", "-DZEUS_BUILD_ZEUSD=OFF",
            "-DZEUS_BUILD_MPI=OFF", f"-DPython3_EXECUTABLE={sys.executable}",
        ]
        env = dict(os.environ)
        # ccache (wired in by the project's CMake) then sees paths relative to the build tree, the same in
        # build-release/ and build-wheel/.
        env.setdefault("CCACHE_BASEDIR", str(ROOT))
        if not (build_dir / "CMakeCache.txt").exists() or "ZEUS_CMAKE_BUILD_DIR" not in os.environ:
            subprocess.run(configure, check=True, env=env)
        jobs = os.environ.get("ZEUS_BUILD_JOBS") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build_dir), "-j", jobs, "--target", "zeus_python", "zeus",
                        "zeus_nvml_emulator", "zeus_amdsmi_emulator"], check=True, env=env)

        package = Path(self.build_lib) / "zeus"
        modules = list((build_dir / "python" / "zeus").glob("_native*.so"))
        if len(modules) != 1:
            raise RuntimeError(f"expected one zeus/_native*.so in {build_dir / 'python'}, found {modules}")
        copies = {
            modules[0]: package / modules[0].name,
            build_dir / "bin" / "zeus": package / "bin" / "zeus",
            build_dir / "lib" / "libzeus-nvml-emulator.so": package / "lib" / "libzeus-nvml-emulator.so",
            build_dir / "lib" / "libzeus-amdsmi-emulator.so": package / "lib" / "libzeus-amdsmi-emulator.so",
        }
        for scenario in SCENARIOS:
            name = Path(scenario).name
            copies[ROOT / f"{scenario}.json"] = package / "emulator_scenarios" / f"{name}.json"
        # The offline carbon-intensity table: for zeus.monitor.carbon, and for the bundled `zeus` (bin/../share).
        copies[ROOT / "data" / "carbon" / "intensity.json"] = package / "data" / "carbon_intensity.json"
        copies[build_dir / "share" / "zeus" / "carbon" / "intensity.json"] = (
            package / "share" / "zeus" / "carbon" / "intensity.json")
        # The Zeus NSDI '23 traces, for the bundled `zeus reproduce` / `zeus simulate` (bin/../share).
        for name in ("summary_train.csv", "summary_power_v100.csv", "summary_power_a40.csv", "README.md", "LICENSE",
                     "NOTICE", "SHA256SUMS"):
            copies[ROOT / "data" / "traces" / "zeus-nsdi23" / name] = (
                package / "share" / "zeus" / "traces" / "zeus-nsdi23" / name)
        shutil.rmtree(package / ".libs", ignore_errors=True)
        for source, target in copies.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.unlink(missing_ok=True)  # patchelf may have edited an earlier copy in place
            shutil.copy2(source, target)
        if os.environ.get("ZEUS_WHEEL_SELF_CONTAINED") == "1":
            elves = [t for t in copies.values() if t.suffix == ".so" or t.parent.name == "bin"]
            make_self_contained(package, elves)


class BinaryDistribution(Distribution):
    """The wheel holds native code: tag it for this platform and Python (cp311-cp311-linux_x86_64 on Debian 12)."""

    def has_ext_modules(self) -> bool:
        return True


# setuptools wants egg_info's directory to exist.
(ROOT / "build-wheel").mkdir(exist_ok=True)

setup(
    version=read_version(),
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    # Not build/: that is the CMake build tree of `make`.
    options={"build": {"build_base": "build-wheel/setuptools"}, "egg_info": {"egg_base": "build-wheel"}},
)
