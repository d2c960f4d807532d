"""Zeus: GPU energy measurement and optimization for deep learning.

This package follows the API of Zeus 0.16 (``zeus.monitor``,
``zeus.optimizer.power_limit``, ``zeus.optimizer.batch_size``,
``zeus.device``, ``zeus.utils``) over a native C++ engine (``zeus._native``):
power sampling runs in native threads, not in Python processes.
"""

__version__ = "0.16.0+cpp"
