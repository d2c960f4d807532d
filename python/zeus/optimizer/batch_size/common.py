"""A batch-size optimizer job's specification (Zeus's ``zeus.optimizer.batch_size.common``).

``JobSpec`` has Zeus's field names and defaults. Zeus builds it with pydantic;
here it is a keyword-only dataclass that checks its fields when it is built:
their types first (Python's part), then the service's own rules, run by the
native code the server uses (``bso::ValidateJobSpec``), so the client and the
server cannot disagree. A problem raises ``ZeusBSOConfigError`` (a
``ValueError``, as pydantic's ``ValidationError`` is) naming every bad field.

Differences from Zeus, on purpose (the server's fixes, W8):
``num_pruning_rounds`` must be at least 1 (0 was accepted and then broke the
service), ``window_size`` and ``mab_prior_precision`` at least 0, batch sizes
positive and distinct, ``mab_seed`` at least 0. Values are not coerced from
strings as pydantic would: ``max_epochs="10"`` is an error.

Extension: ``policy``, the batch-size policy the service runs for the job
(``"zeus"``, the default, or ``"zeus-robust"``; docs/simulator.md, "The
zeus-robust policy"). The names are the native side's, so an unknown one is
rejected with the list of allowed names. The client always sends it; Zeus's
own client never does (our server then runs ``"zeus"``) and Zeus's own server
ignores it (pydantic drops unknown fields), running Zeus's policy.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional

from zeus import _native
from zeus.exception import ZeusBSOConfigError

_INT_FIELDS = ("default_batch_size", "max_epochs", "num_pruning_rounds", "window_size", "mab_num_explorations")
_FLOAT_FIELDS = ("eta_knob", "target_metric", "mab_prior_mean", "mab_prior_precision")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(kw_only=True)
class JobSpec:
    """A recurring job for the batch-size optimizer service.

    Attributes:
        job_id: the job's id; ``None`` lets the service make one (``<job_id_prefix>-<8 hex digits>``). A job run
            by several ranks of ``torch.distributed`` should set it (see ``BatchSizeOptimizer``).
        job_id_prefix: the prefix of the job id; a given ``job_id`` must start with it.
        batch_sizes: the batch sizes to choose from (kept sorted ascending).
        default_batch_size: the batch size the job uses today; one of ``batch_sizes``. Exploration starts there.
        eta_knob: the weight of energy against time in the cost, in [0, 1] (cost = eta x energy +
            (1 - eta) x max_power x time).
        beta_knob: early stopping: a run whose cost passes ``beta_knob`` x the cheapest converged run's cost is
            stopped; ``None`` turns early stopping off.
        target_metric: the validation metric at which a run has converged.
        higher_is_better_metric: ``True`` when the run converges at ``metric >= target_metric``, ``False`` for
            ``metric <= target_metric``.
        max_epochs: a run that has not converged after this many epochs has failed.
        num_pruning_rounds: rounds of pruning exploration before Thompson sampling (at least 1).
        window_size: how many of each batch size's newest runs Thompson sampling keeps; 0 keeps all.
        mab_prior_mean: the prior mean of the Gaussian Thompson sampling arms.
        mab_prior_precision: the prior precision of the arms; 0 is uninformative.
        mab_num_explorations: runs of each batch size before Thompson sampling draws.
        mab_seed: the service's random seed for this job; ``None`` lets the service pick one.
        policy: extension: the batch-size policy, ``"zeus"`` (Zeus's exploration, the default) or
            ``"zeus-robust"``; Zeus's own server ignores it.
    """

    job_id: Optional[str] = None
    job_id_prefix: str
    batch_sizes: list[int]
    default_batch_size: int
    eta_knob: float = 0.5
    beta_knob: Optional[float] = 2.0
    target_metric: float = 0.5
    higher_is_better_metric: bool = True
    max_epochs: int = 100
    num_pruning_rounds: int = 2
    window_size: int = 0
    mab_prior_mean: float = 0.0
    mab_prior_precision: float = 0.0
    mab_num_explorations: int = 2
    mab_seed: Optional[int] = None
    policy: str = "zeus"

    def __post_init__(self) -> None:
        problems = self._type_problems()
        if not problems:
            problems, sorted_batch_sizes = _native.batch_size.validate_job(self)
            if not problems:
                self.batch_sizes = list(sorted_batch_sizes)
        if problems:
            raise ZeusBSOConfigError(f"Invalid {type(self).__name__}: " + "; ".join(problems))

    def _type_problems(self) -> list[str]:
        """Checks the types (and turns ints given for floats into floats); returns the problems."""
        problems: list[str] = []
        if self.job_id is not None and not isinstance(self.job_id, str):
            problems.append(f"job_id: must be a string or None (got {self.job_id!r})")
        if not isinstance(self.job_id_prefix, str):
            problems.append(f"job_id_prefix: must be a string (got {self.job_id_prefix!r})")
        if not isinstance(self.batch_sizes, (list, tuple)) or not all(_is_int(b) for b in self.batch_sizes):
            problems.append(f"batch_sizes: must be a list of integers (got {self.batch_sizes!r})")
        else:
            self.batch_sizes = list(self.batch_sizes)
        for name in _INT_FIELDS:
            if not _is_int(getattr(self, name)):
                problems.append(f"{name}: must be an integer (got {getattr(self, name)!r})")
        for name in _FLOAT_FIELDS:
            value = getattr(self, name)
            if not _is_number(value):
                problems.append(f"{name}: must be a number (got {value!r})")
            else:
                setattr(self, name, float(value))
        if self.beta_knob is not None:
            if not _is_number(self.beta_knob):
                problems.append(f"beta_knob: must be a number or None (got {self.beta_knob!r})")
            else:
                self.beta_knob = float(self.beta_knob)
        if not isinstance(self.higher_is_better_metric, bool):
            problems.append(f"higher_is_better_metric: must be True or False (got {self.higher_is_better_metric!r})")
        if self.mab_seed is not None and not _is_int(self.mab_seed):
            problems.append(f"mab_seed: must be an integer or None (got {self.mab_seed!r})")
        if not isinstance(self.policy, str):
            problems.append(f"policy: must be a string (got {self.policy!r})")
        return problems

    def dict(self) -> dict[str, Any]:
        """The fields as a dict (pydantic's ``.dict()``)."""
        return dataclasses.asdict(self)


@dataclass(kw_only=True)
class CreatedJob(JobSpec):
    """A job as the service stored it (Zeus's ``CreatedJob``): a ``JobSpec`` with its ``job_id`` and the GPU
    configuration the optimizer sent, taken from the monitor's GPUs.

    Attributes:
        max_power: the largest power limit of the job's GPUs (W, floored) times their number.
        number_of_gpus: how many GPUs the monitor measures.
        gpu_model: the GPUs' model name.
    """

    max_power: float = field(default=0.0)
    number_of_gpus: int = field(default=0)
    gpu_model: str = field(default="")

    def __post_init__(self) -> None:
        """The service validated it already."""
