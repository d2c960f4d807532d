"""Builds the native module zeus._native with the project's CMake build, for pip.

`python3 -m pip install --no-build-isolation .` runs this: it configures the
C++ project in build-pip/ (or $ZEUS_CMAKE_BUILD_DIR) without tests, builds
only the Python package's target, and puts the module beside the Python
sources in the wheel. Needs what `make` needs (scripts/install-deps); uses
ccache when it is installed. Everything else is in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent


class BuildWithCMake(build_py):
    """build_py, plus the CMake build of zeus._native copied into the build tree."""

    def run(self) -> None:
        super().run()
        build_dir = Path(os.environ.get("ZEUS_CMAKE_BUILD_DIR", ROOT / "build-pip"))
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=Release", "-DZEUS_BUILD_TESTS=OFF", "-DZEUS_BUILD_BENCHMARKS=OFF",
            "-DZEUS_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}",
        ]
        if shutil.which("ccache") and "CMAKE_CXX_COMPILER_LAUNCHER" not in os.environ:
            configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        if not (build_dir / "CMakeCache.txt").exists() or "ZEUS_CMAKE_BUILD_DIR" not in os.environ:
            subprocess.run(configure, check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "zeus_python", "-j", jobs], check=True)
        modules = list((build_dir / "python" / "zeus").glob("_native*.so"))
        if len(modules) != 1:
            raise RuntimeError(f"expected one zeus/_native*.so in {build_dir / 'python'}, found {modules}")
        target = Path(self.build_lib) / "zeus"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(modules[0], target / modules[0].name)


class BinaryDistribution(Distribution):
    """The wheel holds a native module: tag it for this platform and Python."""

    def has_ext_modules(self) -> bool:
        return True


setup(
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    # Not build/: that is the CMake build tree of `make`.
    options={"build": {"build_base": "build-pip/setuptools"}, "egg_info": {"egg_base": "build-pip"}},
)
