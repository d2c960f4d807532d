"""Just-in-time GPU power-limit optimization inside the training loop (Zeus's
``zeus.optimizer.power_limit``).

The optimizer profiles power limits from the highest down during training: at
each limit it runs ``warmup_steps`` steps, then measures ``profile_steps``
steps with the monitor, and finally keeps the limit its ``optimum_selector``
chooses for the rest of training::

    monitor = ZeusMonitor(gpu_indices=[torch.cuda.current_device()])
    plo = GlobalPowerLimitOptimizer(monitor)
    for epoch in range(epochs):
        plo.on_epoch_begin()
        for x, y in loader:
            plo.on_step_begin()
            ...  # forward, backward, step
            plo.on_step_end()
        plo.on_epoch_end()
    plo.on_train_end()

The state machine, the measurements, the choice and the restoring of limits
are the native ``zeus::runtime::PowerLimitOptimizer``; this module is the
Python face of it (Zeus's classes and names).

Differences from Zeus, on purpose:

* The *original* power limit of each GPU (the one in force when the optimizer
  was created) is put back, not the maximum: by ``on_train_end()``, when the
  optimizer is garbage collected, at interpreter exit, on SIGINT and SIGTERM
  (then the signal does what it would have done: KeyboardInterrupt, or the
  end of the process) and on a fatal native error.
* ``ZeusCost`` inside the optimizer counts every GPU of the job (all ranks),
  whatever its ``world_size``: Zeus's default counted the GPUs of one process
  while summing the energy of all ranks.
* The minimum power limit is always profiled, even when ``pl_step`` does not
  divide the range.
* ``warmup_steps=0`` works; a measurement of 0 J is accepted.
* Without permission to change power limits (or when a GPU fails while
  profiling) the optimizer is ``Disabled`` (a state Zeus does not have), warns
  with the reason and the ways out, and training goes on at the original
  limits; Zeus raised ``RuntimeError``.
* The profile file (``profile_path``) is Zeus's JSON plus the GPU model, its
  power-limit range and the job's GPU count; a file that does not match the
  GPUs is an error instead of being used. Zeus's own files load.
* The measurement windows are named ``__PowerLimitOptimizer_<limit>mW``.

Additions: ``observer_mode=True`` (the paper's observer mode: profile, then keep the original limits) and
``what_if()`` (what each selector would save per epoch and over the run; docs/power-limit-optimizer.md).
"""

from __future__ import annotations

import abc
import json
import logging
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from zeus import _native
from zeus.callback import Callback
from zeus.utils import framework

logger = logging.getLogger(__name__)

__all__ = [
    "PowerLimitMeasurement",
    "OptimumSelector",
    "Energy",
    "Time",
    "ZeusCost",
    "MaxSlowdownConstraint",
    "Ready",
    "Warmup",
    "Profiling",
    "Done",
    "Disabled",
    "GlobalPowerLimitOptimizer",
    "HFGlobalPowerLimitOptimizer",
]


_SHORT_REASON_CHARS = 160


def _short_reason(text: str) -> str:
    """The first sentence of a disabled optimizer's reason (the advice that follows is in ``details``), at most
    ``_SHORT_REASON_CHARS`` characters."""
    end = text.find(". ")
    short = text if end < 0 else text[:end]
    if len(short) > _SHORT_REASON_CHARS:
        short = short[: _SHORT_REASON_CHARS - 3].rstrip() + "..."
    return short


def _watts(value: float) -> Union[int, float]:
    return int(value) if float(value).is_integer() else float(value)


@dataclass(frozen=True)
class PowerLimitMeasurement:
    """What one profiling window measured: ``power_limit`` in W, ``energy`` in J (every GPU of the job),
    ``time`` in s (the slowest rank's)."""

    power_limit: Union[int, float]
    energy: float
    time: float


# The optimizer's states. Power limits are in mW, as in Zeus.
@dataclass(frozen=True)
class Ready:
    """Waiting ``steps`` more steps before profiling ``next_power_limit`` (mW)."""

    next_power_limit: int
    steps: int


@dataclass(frozen=True)
class Warmup:
    """Running ``steps`` more warmup steps at ``current_power_limit`` (mW)."""

    current_power_limit: int
    steps: int


@dataclass(frozen=True)
class Profiling:
    """Measuring ``steps`` more steps at ``current_power_limit`` (mW)."""

    current_power_limit: int
    steps: int


@dataclass(frozen=True)
class Done:
    """Profiling is over; ``optimal_power_limit`` (mW) is in force."""

    optimal_power_limit: int


@dataclass(frozen=True)
class Disabled:
    """Not in Zeus: the optimizer could not change or measure power limits; training goes on at the original
    limits.

    ``reason`` is the short reason (its first sentence); ``details`` the whole text with the ways out (what the
    optimizer's one warning said). ``repr`` shows the short reason only.
    """

    reason: str
    details: str = field(default="", repr=False, compare=False)


class OptimumSelector(abc.ABC):
    """Chooses the power limit from the profiling measurements. Subclass it and implement ``select``."""

    @abc.abstractmethod
    def select(self, measurements: list[PowerLimitMeasurement]) -> int:
        """Returns the chosen power limit in W (one of the measured ``power_limit`` values).

        ``measurements`` are in profiling order (highest limit first). In a distributed job every rank calls
        this with the same measurements and must return the same limit.

        An exception raised here disables the optimizer (the original limits are put back and training goes on
        unoptimized) and is raised again from the hook that ended profiling (or from the constructor, when a
        profile file is loaded).
        """

    def _native_spec(self) -> Optional[tuple[Any, ...]]:
        """The native selector that does what ``select`` does, or None (a user's selector)."""
        return None


def _select_native(spec: tuple[Any, ...], measurements: list[PowerLimitMeasurement], total_gpus: int) -> int:
    rows = [(float(m.power_limit), float(m.energy), float(m.time)) for m in measurements]
    return _watts(_native.power_limit.select(spec, rows, total_gpus))


class Energy(OptimumSelector):
    """The limit with the least energy (ties: the higher limit)."""

    def select(self, measurements: list[PowerLimitMeasurement]) -> int:
        return _select_native(("energy", 0.0), measurements, 1)

    def _native_spec(self) -> Optional[tuple[Any, ...]]:
        return ("energy", 0.0) if type(self).select is Energy.select else None


class Time(OptimumSelector):
    """The limit with the least time (ties: the higher limit)."""

    def select(self, measurements: list[PowerLimitMeasurement]) -> int:
        return _select_native(("time", 0.0), measurements, 1)

    def _native_spec(self) -> Optional[tuple[Any, ...]]:
        return ("time", 0.0) if type(self).select is Time.select else None


class ZeusCost(OptimumSelector):
    """The limit with the least Zeus cost ``eta_knob * energy + (1 - eta_knob) * max_power * time``, with
    ``max_power`` = the highest measured limit x ``world_size``.

    Inside ``GlobalPowerLimitOptimizer``, ``world_size`` is replaced by the number of GPUs of the whole job
    (every rank), because the measured energy is the whole job's (a fix of Zeus, which weighed the energy of all
    ranks against the time of one GPU).

    Raises:
        ValueError: ``eta_knob`` outside [0, 1] or ``world_size`` < 1.
    """

    def __init__(self, eta_knob: float, world_size: int = 1) -> None:
        if not 0.0 <= eta_knob <= 1.0:
            raise ValueError("eta_knob must be between 0 and 1, inclusive.")
        if world_size < 1:
            raise ValueError("world_size must be greater than or equal to 1.")
        self.eta_knob = eta_knob
        self.world_size = world_size

    def select(self, measurements: list[PowerLimitMeasurement]) -> int:
        return _select_native(("zeus_cost", float(self.eta_knob)), measurements, self.world_size)

    def _native_spec(self) -> Optional[tuple[Any, ...]]:
        return ("zeus_cost", float(self.eta_knob)) if type(self).select is ZeusCost.select else None


class MaxSlowdownConstraint(OptimumSelector):
    """The lowest limit whose time is at most ``factor`` x the time at the highest limit.

    Raises:
        ValueError: ``factor`` < 1.
    """

    def __init__(self, factor: float) -> None:
        if not factor >= 1.0:
            raise ValueError(f"max_slowdown_factor must be greater than or equal to 1.0. Got {factor}.")
        self.factor = factor

    def select(self, measurements: list[PowerLimitMeasurement]) -> int:
        return _select_native(("max_slowdown", float(self.factor)), measurements, 1)

    def _native_spec(self) -> Optional[tuple[Any, ...]]:
        return ("max_slowdown", float(self.factor)) if type(self).select is MaxSlowdownConstraint.select else None


def _custom_spec(selector: OptimumSelector) -> tuple[Any, ...]:
    def call(rows: list[tuple[float, float, float]], total_gpus: int) -> float:
        measurements = [PowerLimitMeasurement(_watts(w), e, t) for (w, e, t) in rows]
        return float(selector.select(measurements))

    return ("custom", call, type(selector).__qualname__)


class GlobalPowerLimitOptimizer(Callback):
    """Finds the best GPU power limit while training runs (Zeus's JIT power-limit profiling).

    Call ``on_step_begin()`` at the start of every training step and ``on_epoch_end()`` at the end of every
    epoch (an epoch that ends during warmup or profiling makes the interrupted limit be profiled again), and
    ``on_train_end()`` at the end (it puts the original limits back). ``on_epoch_begin``, ``on_step_end`` and
    ``on_train_begin`` do nothing. Outside profiling a hook costs about a microsecond.

    Under ``torch.distributed`` create one optimizer per rank (each monitoring its own GPU) and call the hooks on
    every rank in step: energy is summed over the ranks, time is the slowest rank's, and every rank sets the same
    limit.

    Args:
        monitor: the ``ZeusMonitor`` whose GPUs are optimized (and measured).
        optimum_selector: how to choose; default ``ZeusCost(eta_knob=0.5)``.
        wait_steps: steps run at the original limit before profiling starts.
        warmup_steps: steps run at each limit before it is measured.
        profile_steps: steps measured at each limit.
        pl_step: W between two profiled limits.
        profile_path: a JSON file of measurements: if it exists, it is used and nothing is profiled; otherwise it
            is written (by rank 0) when profiling ends.
        observer_mode: not in Zeus (the paper's observer mode, §5): profile as usual (the limits do change while
            profiling), then put the original limits back instead of applying the optimum. ``state`` becomes
            ``Done(optimal_power_limit=...)`` with the limit that *would* have been set, and ``what_if()`` says
            what each selector would save. With a loaded ``profile_path`` no limit is changed at all.

    Raises:
        ValueError: a step count or ``pl_step`` out of range; GPUs with different models or power-limit ranges;
            a profile file that is malformed (``zeus.exception.ZeusGPUInvalidArgError``).
        zeus.exception.ZeusBaseError: a GPU could not be read, or the profile file does not match the GPUs.

    See the module's docstring for the differences from Zeus (the original limit is restored, not the maximum).
    """

    def __init__(
        self,
        monitor: Any,
        optimum_selector: Optional[OptimumSelector] = None,
        wait_steps: int = 1,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: int = 25,
        profile_path: Optional[Union[str, os.PathLike]] = None,
        *,
        observer_mode: bool = False,
    ) -> None:
        if wait_steps < 0:
            raise ValueError("`wait_steps` must be non-negative.")
        if warmup_steps < 0:
            raise ValueError("`warmup_steps` must be non-negative.")
        if profile_steps <= 0:
            raise ValueError("`profile_steps` must be positive.")
        if pl_step <= 0:
            raise ValueError("`pl_step` must be positive.")
        if optimum_selector is not None and not isinstance(optimum_selector, OptimumSelector):
            raise TypeError(
                f"optimum_selector must be an OptimumSelector (Energy(), Time(), ZeusCost(eta), "
                f"MaxSlowdownConstraint(factor) or a subclass), got {type(optimum_selector).__name__}"
            )
        self.monitor = monitor
        self.optimum_selector = optimum_selector or ZeusCost(eta_knob=0.5, world_size=len(monitor.gpu_indices))
        self.wait_steps = wait_steps
        self.warmup_steps = warmup_steps
        self.profile_steps = profile_steps
        self.pl_step = pl_step * 1000  # mW, as Zeus keeps it
        self.profile_path = profile_path
        self.observer_mode = bool(observer_mode)

        all_reduce = None
        rank, world_size = 0, 1
        if framework.is_distributed():
            all_reduce = framework.all_reduce
            rank, world_size = framework.get_rank(), framework.get_world_size()
            if len(monitor.gpu_indices) > 1:
                warnings.warn(
                    "GlobalPowerLimitOptimizer under torch.distributed expects one GPU per process; this process "
                    f"monitors {len(monitor.gpu_indices)} GPUs (all are optimized together).",
                    stacklevel=2,
                )
        spec = self.optimum_selector._native_spec() or _custom_spec(self.optimum_selector)
        self._native = _native.power_limit.Optimizer(
            monitor._native,
            wait_steps,
            warmup_steps,
            profile_steps,
            float(pl_step),
            None if profile_path is None else os.fspath(profile_path),
            spec,
            all_reduce,
            rank,
            world_size,
            # Framework sync around profiling windows, as Zeus's begin_window/end_window do.
            getattr(monitor, "_sync", None),
            observer_mode=self.observer_mode,
        )
        # A disabled optimizer has warned once, with the reason and the ways out (the native log seam: a
        # UserWarning attributed to the caller's line); its state keeps the short reason.
        self.power_limits: list[int] = list(self._native.power_limits_mw())

    @property
    def state(self) -> Union[Ready, Warmup, Profiling, Done, Disabled]:
        """The current state (limits in mW)."""
        name, limit_mw, steps, reason = self._native.state()
        if name == "ready":
            return Ready(next_power_limit=limit_mw, steps=steps)
        if name == "warmup":
            return Warmup(current_power_limit=limit_mw, steps=steps)
        if name == "profiling":
            return Profiling(current_power_limit=limit_mw, steps=steps)
        if name == "done":
            return Done(optimal_power_limit=limit_mw)
        return Disabled(reason=_short_reason(reason or ""), details=reason or "")

    @property
    def measurements(self) -> list[PowerLimitMeasurement]:
        """The job's measurements so far (or the loaded profile's), in profiling order."""
        return [PowerLimitMeasurement(_watts(w), e, t) for (w, e, t) in self._native.measurements()]

    @property
    def original_power_limits(self) -> list[int]:
        """Not in Zeus: the limit (mW) each monitored GPU had when the optimizer was created; restored at the
        end."""
        return list(self._native.original_power_limits_mw())

    def what_if(
        self, steps_per_epoch: int, epochs: int = 1, eta_knob: float = 0.5, max_slowdown: float = 1.1
    ) -> dict[str, Any]:
        """Not in Zeus: what each selector would save, from this optimizer's measurements (observer mode's report,
        the same as ``zeus what-if`` prints from the profile file).

        For each of ``Energy``, ``Time``, ``ZeusCost(eta_knob)`` and ``MaxSlowdownConstraint(max_slowdown)``: the
        limit it would choose, and the energy (J) and time (s) it would save against the original limit (the
        highest profiled limit if the original was not profiled or the GPUs' originals differ). A measurement
        covers ``profile_steps`` steps, so per step = measurement / ``profile_steps``; saved per epoch =
        ``steps_per_epoch`` x (baseline - chosen) per step; saved over the run = ``epochs`` x saved per epoch.
        Negative savings are costs. The profiling phase is not deducted (it is the same whether the optimizer
        observes or applies).

        Returns:
            A dict: ``baseline`` (``power_limit_w``, ``requested``, ``energy_per_step_j``, ``time_per_step_s``),
            ``measurements`` (with ``pareto``: on the energy-time Pareto front) and ``selectors``: one dict each
            with ``selector``, ``power_limit_w``, ``energy_saved_per_epoch_j``, ``time_saved_per_epoch_s``,
            ``energy_saved_run_j``, ``time_saved_run_s``, ``energy_saved_percent``, ``time_saved_percent``.

        Raises:
            RuntimeError: profiling has not finished (the optimizer is not Done).
            zeus.exception.ZeusInvalidArgumentError (a ValueError): ``steps_per_epoch`` or ``epochs`` below 1,
                ``eta_knob`` outside [0, 1], or ``max_slowdown`` below 1.
        """
        if not isinstance(self.state, Done):
            raise RuntimeError(
                "what_if() needs the profiling results: call it once the optimizer is Done (after profiling ends)."
            )
        return json.loads(self._native.what_if(steps_per_epoch, epochs, float(eta_knob), float(max_slowdown)))

    def on_step_begin(self) -> None:
        """Call at the start of every training step."""
        self._native.on_step_begin()

    def on_epoch_end(self) -> None:
        """Call at the end of every epoch."""
        self._native.on_epoch_end()

    def on_train_end(self) -> None:
        """Puts the original power limits back and stops optimizing (not in Zeus, whose hook did nothing).

        Raises:
            zeus.exception.ZeusBaseGPUError: a GPU's limit could not be restored.
        """
        self._native.on_train_end()


try:
    from transformers import TrainerCallback as _TrainerCallback

    _TRANSFORMERS_ERROR: Optional[ImportError] = None
except ImportError as _e:  # transformers is optional
    _TrainerCallback = object  # type: ignore[assignment,misc]
    _TRANSFORMERS_ERROR = _e


class HFGlobalPowerLimitOptimizer(_TrainerCallback):  # type: ignore[misc,valid-type]
    """``GlobalPowerLimitOptimizer`` as a Hugging Face ``transformers.TrainerCallback``: pass it in
    ``Trainer(callbacks=[...])``. Same arguments; the wrapped optimizer is ``self.optimizer``.

    Raises:
        ImportError: the ``transformers`` package is not installed.
    """

    def __init__(
        self,
        monitor: Any,
        optimum_selector: Optional[OptimumSelector] = None,
        wait_steps: int = 1,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: int = 25,
        profile_path: Optional[Union[str, os.PathLike]] = None,
        *,
        observer_mode: bool = False,
    ) -> None:
        if _TRANSFORMERS_ERROR is not None:
            raise ImportError(
                "HFGlobalPowerLimitOptimizer needs the 'transformers' package (pip install transformers); "
                f"it could not be imported: {_TRANSFORMERS_ERROR}"
            )
        self.optimizer = GlobalPowerLimitOptimizer(
            monitor,
            optimum_selector=optimum_selector,
            wait_steps=wait_steps,
            warmup_steps=warmup_steps,
            profile_steps=profile_steps,
            pl_step=pl_step,
            profile_path=profile_path,
            observer_mode=observer_mode,
        )

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.optimizer.on_step_begin()

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.optimizer.on_epoch_end()

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.optimizer.on_train_end()
