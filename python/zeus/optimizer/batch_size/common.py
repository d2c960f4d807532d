"""A batch-size optimizer job's specification (Zeus's ``zeus.optimizer.batch_size.common``).

``JobSpec`` has Zeus's field names and defaults, made from the native module's
one list of them (``_native.batch_size.job_spec_fields()``, which is
``zeus/bso/job_spec_fields.h``, the list the server's JSON and database code
are made from too): names, types, defaults and their docs are not spelled out
here. Zeus builds it with pydantic;
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
from typing import Any, Callable, Optional

from zeus import _native
from zeus.exception import ZeusBSOConfigError

# The one field list (zeus/bso/job_spec_fields.h): dicts of name, type, default, required, part, extension, doc.
_FIELDS: list[dict[str, Any]] = list(_native.batch_size.job_spec_fields())

_ANNOTATIONS: dict[str, Any] = {
    "str": str, "int": int, "float": float, "bool": bool, "list[int]": list[int],
    "Optional[str]": Optional[str], "Optional[int]": Optional[int], "Optional[float]": Optional[float],
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(_is_int(b) for b in value)


# Per native type: what a value must be, what it is called in a problem, and how an accepted value is stored.
_CHECKS: dict[str, tuple[Callable[[Any], bool], str, Callable[[Any], Any]]] = {
    "str": (lambda v: isinstance(v, str), "a string", lambda v: v),
    "int": (_is_int, "an integer", lambda v: v),
    "float": (_is_number, "a number", float),
    "bool": (lambda v: isinstance(v, bool), "True or False", lambda v: v),
    "list[int]": (_is_int_list, "a list of integers", list),
}


def _type_problem(spec: Any, field: dict[str, Any]) -> Optional[str]:
    """Checks one field's type (and stores ints given for floats as floats, tuples as lists); returns the problem."""
    name, kind = field["name"], field["type"]
    optional = kind.startswith("Optional[")
    accepts, what, convert = _CHECKS[kind[len("Optional["):-1] if optional else kind]
    value = getattr(spec, name)
    if optional and value is None:
        return None
    if not accepts(value):
        return f"{name}: must be {what}{' or None' if optional else ''} (got {value!r})"
    setattr(spec, name, convert(value))
    return None


def _dataclass_fields(part: str) -> list[tuple[Any, ...]]:
    """The fields of one part, in order; a required user field has no default."""
    out: list[tuple[Any, ...]] = []
    for f in _FIELDS:
        if f["part"] != part:
            continue
        annotation = _ANNOTATIONS[f["type"]]
        if f["required"] and part == "job":
            out.append((f["name"], annotation))
        elif isinstance(f["default"], list):
            out.append((f["name"], annotation, dataclasses.field(default_factory=list(f["default"]).copy)))
        else:
            out.append((f["name"], annotation, dataclasses.field(default=f["default"])))
    return out


def _attributes(part: str) -> str:
    return "\n".join(f"        {f['name']}: {f['doc']}" for f in _FIELDS if f["part"] == part)


class _JobSpecChecks:
    """JobSpec's behaviour; its fields come from the native list."""

    def __post_init__(self) -> None:
        problems = []
        for f in _FIELDS:
            problem = _type_problem(self, f) if f["part"] == "job" else None
            if problem is not None:
                problems.append(problem)
        if not problems:
            problems, sorted_batch_sizes = _native.batch_size.validate_job(self)
            if not problems:
                self.batch_sizes = list(sorted_batch_sizes)  # type: ignore[attr-defined]
        if problems:
            raise ZeusBSOConfigError(f"Invalid {type(self).__name__}: " + "; ".join(problems))

    def dict(self) -> dict[str, Any]:
        """The fields as a dict (pydantic's ``.dict()``)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]


JobSpec = dataclasses.make_dataclass(
    "JobSpec",
    _dataclass_fields("job"),
    bases=(_JobSpecChecks,),
    kw_only=True,
    namespace={
        "__module__": __name__,
        "__doc__": "A recurring job for the batch-size optimizer service.\n\n    Attributes:\n" + _attributes("job"),
    },
)


def _created_job_post_init(self: Any) -> None:
    """The service validated it already."""


CreatedJob = dataclasses.make_dataclass(
    "CreatedJob",
    _dataclass_fields("gpu"),
    bases=(JobSpec,),
    kw_only=True,
    namespace={
        "__module__": __name__,
        "__post_init__": _created_job_post_init,
        "__doc__": "A job as the service stored it (Zeus's ``CreatedJob``): a ``JobSpec`` with its ``job_id`` and "
        "the GPU configuration the optimizer sent, taken from the monitor's GPUs.\n\n    Attributes:\n"
        + _attributes("gpu"),
    },
)
