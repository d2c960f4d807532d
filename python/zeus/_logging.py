"""Where the native engine's log records surface in Python.

Native code (C++) logs through one seam; the ``zeus._native`` module forwards
each record here (``python/src/log.cc``):

* log lines go to the ``zeus.<component>`` logger at their level
  (``zeus.monitor``, ``zeus.power_limit_optimizer``, ...), so
  ``logging.getLogger("zeus").setLevel(logging.ERROR)`` silences them and
  handlers redirect them;
* advice about the caller's code or data is a ``UserWarning`` through
  ``warnings``, attributed to the first frame outside the ``zeus`` package, so
  ``-W ignore``, ``warnings.filterwarnings`` and ``warnings.catch_warnings``
  apply, and Python's default filter shows a repeated warning once per place.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _stacklevel() -> int:
    """deliver's warnings.warn stacklevel that names the first frame outside this package.

    deliver is called from native code, so its caller's frame (stacklevel 2) is
    the Python code that called into the engine.
    """
    try:
        frame = sys._getframe(2)
    except ValueError:  # the delivery thread: no Python caller
        return 1
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def deliver(level: int, component: str, message: str, user_warning: bool) -> None:
    """Hands one native record to ``warnings`` or the ``zeus.<component>`` logger."""
    if user_warning:
        warnings.warn(message, UserWarning, stacklevel=_stacklevel())
        return
    name = "zeus" if not component else "zeus." + component.replace("-", "_")
    logging.getLogger(name).log(level, message)
