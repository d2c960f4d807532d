"""Zeus: GPU energy measurement and optimization for deep learning.

This package follows the API of Zeus 0.16 (``zeus.monitor``,
``zeus.optimizer.power_limit``, ``zeus.optimizer.batch_size``,
``zeus.device``, ``zeus.utils``) over a native C++ engine (``zeus._native``):
power sampling runs in native threads, not in Python processes.

Versions: ``zeus.__version__`` is this project's version (the top-level
``VERSION`` file, compiled into the native module: the same as ``zeus
--version`` and the wheel's); ``zeus.__zeus_api_version__`` is the version of
Zeus whose API the package follows.
"""

from __future__ import annotations

__zeus_api_version__ = "0.16.0"


def __getattr__(name: str) -> str:
    # __version__ is read from the native module on first use, so that
    # `import zeus` alone (e.g. the `zeus` console script) does not load it.
    if name == "__version__":
        try:
            from zeus._native import __version__ as version
        except ImportError:
            # No native module (a broken install): the installed metadata, if any.
            try:
                from importlib.metadata import PackageNotFoundError, version as distribution_version
            except ImportError:  # pragma: no cover (Python < 3.8)
                return "unknown"
            try:
                version = distribution_version("zeus")
            except PackageNotFoundError:
                version = "unknown"
        globals()["__version__"] = version
        return version
    raise AttributeError(f"module 'zeus' has no attribute {name!r}")
