"""``python -m zeus.show_env``: what Zeus sees on this machine (Zeus's ``zeus.show_env``).

Prints package versions (Python, zeus, PyTorch and whether CUDA is available to it, JAX and CuPy when
installed), the GPUs (``CUDA_VISIBLE_DEVICES``, each GPU's framework index, NVML index and name, or
why none were found) and the CPUs (RAPL packages and DRAM availability, or why none were found).
"""

from __future__ import annotations

import importlib
import os
import platform
import sys


def _section(title: str) -> None:
    print(f"\n{title}\n{'=' * len(title)}")


def _package(name: str, label: str) -> object:
    try:
        module = importlib.import_module(name)
    except ImportError:
        print(f"{label}: not installed")
        return None
    print(f"{label}: {getattr(module, '__version__', 'unknown version')}")
    return module


def main() -> None:
    import zeus

    _section("Package versions")
    print(f"Python: {platform.python_version()} ({sys.executable})")
    print(f"Zeus: {zeus.__version__}")
    torch = _package("torch", "PyTorch")
    if torch is not None:
        print(f"PyTorch with CUDA: {'available' if torch.cuda.is_available() else 'not available'}")
    jax = _package("jax", "JAX")
    if jax is not None:
        try:
            has_gpu = bool(jax.devices("gpu"))
        except RuntimeError:
            has_gpu = False
        print(f"JAX with CUDA: {'available' if has_gpu else 'not available'}")
    _package("cupy", "CuPy")

    from zeus.device import get_cpus, get_gpus
    from zeus.exception import ZeusBaseError

    _section("GPUs")
    print(f"CUDA_VISIBLE_DEVICES: {os.environ.get('CUDA_VISIBLE_DEVICES', '(not set)')}")
    if os.environ.get("ZEUS_NVML_LIBRARY"):
        print(f"ZEUS_NVML_LIBRARY: {os.environ['ZEUS_NVML_LIBRARY']}")
    try:
        gpus = get_gpus()
    except ZeusBaseError as e:
        print(f"No GPUs: {e}")
    else:
        print(f"Driver: {gpus.driver_version or 'unknown'}{' (NVML emulator)' if gpus.emulated else ''}")
        if len(gpus) == 0:
            print("No GPUs: none is visible to this process.")
        for i in range(len(gpus)):
            try:
                name = gpus.get_name(i)
            except ZeusBaseError as e:
                name = f"name unavailable: {e}"
            print(f"  NVML GPU {gpus.get_nvml_index(i)} -> Zeus GPU {i} ({name})")

    _section("CPUs")
    try:
        cpus = get_cpus()
    except ZeusBaseError as e:
        print(f"No CPUs: {e}")
    else:
        for i in range(len(cpus)):
            dram = "DRAM available" if cpus.supports_get_dram_energy_consumption(i) else "no DRAM"
            try:
                cpus.get_total_energy_consumption(i)
                readable = "readable"
            except ZeusBaseError as e:
                readable = f"not readable: {e}"
            print(f"  CPU {i}: RAPL {cpus.get_name(i)}, {dram}, {readable}")

    from zeus.device import get_soc

    _section("SoC")
    try:
        soc = get_soc()
    except ZeusBaseError as e:
        print(f"No SoC: {e}")
    else:
        print(f"{type(soc).__name__}: metrics {', '.join(sorted(soc.get_available_metrics())) or 'none'}")
        for kind, name, files in getattr(soc, "rails", []):
            print(f"  {kind} rail {name}: {files}")
        for problem in getattr(soc, "problems", []):
            print(f"  not measured: {problem}")


if __name__ == "__main__":
    main()
