"""Cost metrics (Zeus's ``zeus.utils.metric``)."""

from __future__ import annotations

from zeus import _native


def zeus_cost(energy: float, time: float, eta_knob: float, max_power: float) -> float:
    """The Zeus cost ``eta_knob * energy + (1 - eta_knob) * max_power * time``.

    ``energy`` in J, ``time`` in s, ``max_power`` in W (the highest power limit times the number of GPUs).
    Computed by the native ``zeus::optimizer::ZeusCost``, the formula the optimizers use.

    Difference from Zeus, on purpose: ``eta_knob`` outside [0, 1] (or NaN) raises ``ValueError`` instead of
    returning a meaningless cost (Zeus does not check it).

    Raises:
        ValueError: ``eta_knob`` is not within [0, 1].
    """
    return _native.power_limit.zeus_cost(float(energy), float(time), float(eta_knob), float(max_power))
