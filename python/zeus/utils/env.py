"""Typed environment variables (Zeus's ``zeus.utils.env``)."""

from __future__ import annotations

import os
from typing import Optional, Type, TypeVar

__all__ = ["get_env"]

T = TypeVar("T")


def get_env(name: str, valtype: Type[T], default: Optional[T] = None) -> T:
    """The environment variable ``name`` converted to ``valtype``, as in Zeus.

    * ``bool``: only ``true`` and ``false`` (any case) are accepted; anything else is a ``ValueError``.
    * Other types: ``valtype(value)`` (so ``int``, ``float``, ``str``, ``pathlib.Path``, ...); a value the type
      rejects raises what the type raises (``ValueError`` for ``int("x")``).
    * Unset: ``default``; when ``default`` is None, ``ValueError`` naming the variable.

    As in Zeus (its weakness W16), "no default" and "default None" cannot be told apart: a variable that is unset
    with ``default=None`` is always an error, so None cannot be a default. Use ``os.environ.get`` for that.

    Raises:
        ValueError: the variable is unset and there is no default, or a boolean that is not true/false.
    """
    try:
        value = os.environ[name]
    except KeyError:
        if default is not None:
            return default
        raise ValueError(f"Missing environment variable '{name}' (and no default was given)") from None
    if valtype is bool:
        lowered = value.lower()
        if lowered not in ("true", "false"):
            raise ValueError(f"Environment variable '{name}' must be 'true' or 'false' (any case), got '{value}'")
        return lowered == "true"  # type: ignore[return-value]
    return valtype(value)  # type: ignore[call-arg]
