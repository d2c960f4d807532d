"""Helpers that talk to the deep-learning framework: GPU synchronisation and
``torch.distributed`` collectives (Zeus's ``zeus.utils.framework``).

Differences from Zeus, on purpose:

* ``sync_execution(..., sync_with="torch")`` on a PyTorch without CUDA (such
  as Debian's CPU build, used with the NVML emulator) does nothing and says so
  once through ``warnings``, instead of raising: there is no queued GPU work to
  wait for.
* ``all_reduce`` reduces on the CPU under the gloo backend and on the GPU
  under NCCL, instead of always building a CUDA tensor.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Literal, Sequence

_SYNC_FRAMEWORKS = ("torch", "jax", "cupy")
_notified_cpu_torch = False


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise RuntimeError(
            f"sync_execution_with='{name}' but {name} cannot be imported ({e}). Install {name}, choose another "
            f"framework ({', '.join(_SYNC_FRAMEWORKS)}), or pass sync_execution=False."
        ) from e


def sync_execution(gpu_devices: Sequence[int], sync_with: Literal["torch", "jax", "cupy"] = "torch") -> None:
    """Waits until the queued work of the framework on ``gpu_devices`` (framework indices) is done.

    Raises:
        RuntimeError: the framework cannot be imported, or ``sync_with`` is not one of torch, jax, cupy.
    """
    global _notified_cpu_torch
    if sync_with == "torch":
        torch = _import("torch")
        if not torch.cuda.is_available():
            if not _notified_cpu_torch:
                _notified_cpu_torch = True
                warnings.warn(
                    "zeus: PyTorch has no CUDA here, so GPU synchronisation is skipped "
                    "(nothing is queued on a GPU by this process).",
                    stacklevel=2,
                )
            return
        for device in gpu_devices:
            torch.cuda.synchronize(device)
        return
    if sync_with == "jax":
        jax = _import("jax")
        futures = [jax.device_put(0.0, device=jax.devices("gpu")[d]) + 0 for d in gpu_devices]
        futures.append(jax.device_put(0.0, device=jax.devices("cpu")[0]) + 0)
        for future in futures:
            future.block_until_ready()
        return
    if sync_with == "cupy":
        cupy = _import("cupy")
        for device in gpu_devices:
            cupy.cuda.Device(device).synchronize()
        return
    raise RuntimeError(f"Unsupported sync_with={sync_with!r}: expected one of {', '.join(_SYNC_FRAMEWORKS)}.")


def _torch_distributed() -> Any:
    """torch.distributed when it is importable and initialised, else None (no PyTorch, or a PyTorch that cannot
    be imported, is "not distributed")."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if not dist.is_available() or not dist.is_initialized():
        return None
    return dist


def is_distributed() -> bool:
    """True under an initialised torch.distributed process group."""
    return _torch_distributed() is not None


def get_rank() -> int:
    """This process's rank; 0 when not distributed."""
    dist = _torch_distributed()
    return dist.get_rank() if dist is not None else 0


def get_world_size() -> int:
    """The number of processes; 1 when not distributed."""
    dist = _torch_distributed()
    return dist.get_world_size() if dist is not None else 1


def all_reduce(object: list[float], operation: Literal["sum", "max"]) -> list[float]:  # noqa: A002 (Zeus's name)
    """Reduces ``object`` element-wise over every rank; returns ``object`` itself when not distributed (also
    when no deep-learning framework is installed).

    Raises:
        ValueError: ``operation`` is not "sum" or "max".
    """
    if operation not in ("sum", "max"):
        raise ValueError(f"all_reduce operation must be 'sum' or 'max' (got {operation!r})")
    dist = _torch_distributed()
    if dist is None:
        return object
    import torch

    device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    tensor = torch.tensor(list(object), dtype=torch.float64, device=device)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM if operation == "sum" else dist.ReduceOp.MAX)
    return tensor.cpu().tolist()
