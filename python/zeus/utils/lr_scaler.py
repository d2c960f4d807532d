"""Learning-rate scaling rules for a changed batch size (Zeus's ``zeus.utils.lr_scaler``).

When the batch-size optimizer picks a batch size other than the one a learning rate was tuned for,
scale the learning rate with one of these::

    scaler = SquareRootScaler(bs=64, lr=0.1)
    lr = scaler.compute_lr(bso.get_batch_size())

Difference from Zeus, on purpose: ``bs`` must be a positive number (``ValueError`` naming it at
construction; Zeus divided by it later).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["SquareRootScaler", "LinearScaler"]


def _check(bs: float, lr: float) -> None:
    if isinstance(bs, bool) or not isinstance(bs, (int, float)) or not bs > 0:
        raise ValueError(f"bs (the batch size the learning rate was tuned for) must be a positive number, got {bs!r}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)):
        raise ValueError(f"lr (the learning rate tuned for bs) must be a number, got {lr!r}")


@dataclass
class _Scaler:
    """A learning rate ``lr`` tuned for batch size ``bs``; subclasses say how it scales."""

    bs: int
    lr: float

    def __post_init__(self) -> None:
        _check(self.bs, self.lr)


@dataclass
class SquareRootScaler(_Scaler):
    """Square-root scaling: ``lr * sqrt(new_bs / bs)``.

    Args:
        bs: the batch size ``lr`` was tuned for.
        lr: the learning rate at ``bs``.
    """

    def compute_lr(self, new_bs: int) -> float:
        """The learning rate for batch size ``new_bs``."""
        return self.lr * math.sqrt(new_bs / self.bs)


@dataclass
class LinearScaler(_Scaler):
    """Linear scaling: ``lr * new_bs / bs``.

    Args:
        bs: the batch size ``lr`` was tuned for.
        lr: the learning rate at ``bs``.
    """

    def compute_lr(self, new_bs: int) -> float:
        """The learning rate for batch size ``new_bs``."""
        return self.lr * new_bs / self.bs
