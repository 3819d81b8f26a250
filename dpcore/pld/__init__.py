"""Privacy-loss-distribution (PLD) accounting with certified two-sided bounds.

``dpcore.get_epsilon(event, delta, accountant="pld")`` lands in :func:`pld_epsilon`. Submodules:
:mod:`~dpcore.pld.losses` (dominating pairs of the leaves), :mod:`~dpcore.pld.leaves` (events →
pairs), :mod:`~dpcore.pld.discretize` (pessimistic grid), :mod:`~dpcore.pld.pmf` (the tilted grid
PLD and its ε/δ read-out with error terms), :mod:`~dpcore.pld.charfn` (composition through the
characteristic function), :mod:`~dpcore.pld.lower` (the optimistic bound),
:mod:`~dpcore.pld.accountant` (the pipeline),
:mod:`~dpcore.pld.certify` (mpmath re-check) and :mod:`~dpcore.pld.curve` (δ(ε) curves).
"""

from .accountant import DEFAULT_MAX_POINTS, DEFAULT_TAIL_MASS, composed_plds, pld_delta, pld_epsilon
from .curve import DeltaCurve, delta_curve

__all__ = ["pld_epsilon", "pld_delta", "delta_curve", "DeltaCurve", "composed_plds", "DEFAULT_MAX_POINTS",
           "DEFAULT_TAIL_MASS"]
