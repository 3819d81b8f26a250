"""The privacy curve δ(ε) of an event from one PLD composition, with certified two-sided bounds.

:func:`delta_curve` composes the event's privacy-loss distributions once (per order of
neighbours, :func:`dpcore.pld.accountant.composed_plds`) and reads δ at every requested ε
(:meth:`~dpcore.pld.pmf.GridPld.delta_bounds`): at each ε the upper value is a certified upper
bound of the exact δ(ε) of the stated dominating pairs (every float, quadrature, FFT and
truncation error added), the lower value an optimistic companion, as in
:func:`~dpcore.pld.pld_delta`. Unlike :func:`~dpcore.pld.pld_delta` every order of neighbours is
composed with the requested settings (which order is the larger can change along the curve).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .._validation import check_nonnegative, check_positive
from ..events import PrivacyEvent
from ..result import round_down, round_up
from .accountant import DEFAULT_TAIL_MASS, _compose_parts, _parts, _points
from .random_allocation import dominated_pairs, has_dominated_pairs

__all__ = ["DeltaCurve", "delta_curve"]


@dataclass(frozen=True)
class DeltaCurve:
    """δ(ε) bounds on a grid of ε: ``delta_lower[i] ≤ δ_exact(epsilon[i]) ≤ delta_upper[i]``.

    Attributes
    ----------
    epsilon : numpy.ndarray
        The requested ε values (nats), in the order given.
    delta_lower, delta_upper : numpy.ndarray
        Optimistic and certified-pessimistic δ at each ε (the maximum over orders of neighbours).
    relation : str
        The neighbouring relation the bounds hold for.
    discretization : float
        Leaf loss-grid spacing h (nats).
    """

    epsilon: np.ndarray
    delta_lower: np.ndarray
    delta_upper: np.ndarray
    relation: str
    discretization: float


def delta_curve(
    event: PrivacyEvent,
    epsilons: Sequence[float],
    *,
    discretization: Optional[float] = None,
    tail_mass: Optional[float] = None,
    fast: bool = False,
    max_points: Optional[int] = None,
) -> DeltaCurve:
    """Certified δ(ε) bounds of ``event`` at every ε of ``epsilons`` from one composition.

    Parameters
    ----------
    event : PrivacyEvent
        The event tree (see :mod:`dpcore.pld.leaves` for what is supported).
    epsilons : sequence of float
        ε values ≥ 0 (nats); at least one.
    discretization, tail_mass, fast, max_points
        As in :func:`dpcore.pld.pld_epsilon` (``tail_mass`` default
        :data:`~dpcore.pld.DEFAULT_TAIL_MASS`).

    Returns
    -------
    DeltaCurve
    """
    eps = np.asarray(epsilons, dtype=float).reshape(-1)
    if eps.size == 0:
        raise ValueError("epsilons must contain at least one value >= 0")
    for e in eps:
        check_nonnegative("epsilons", float(e))
    tail = DEFAULT_TAIL_MASS if tail_mass is None else check_positive("tail_mass", tail_mass)
    kw = dict(tail_mass=tail, fast=fast, orders=None, settings=None, max_points=_points(max_points),
              target=(None, float(np.max(eps))))
    # the tilt is chosen for the smallest δ on the curve (at the largest ε)
    plds, h = _compose_parts(_parts(event), discretization=discretization, **kw)
    low_plds = plds
    if has_dominated_pairs(event):  # lower bounds from dominated pairs (random allocation), on the same grid
        with dominated_pairs():
            low_plds, _ = _compose_parts(_parts(event), discretization=h, **kw)
    lower = np.zeros(eps.size)
    upper = np.zeros(eps.size)
    for i, e in enumerate(eps):
        pairs = [p.delta_bounds(float(e)) for p in plds]
        if pairs:
            low = max(p.delta_bounds(float(e))[0] for p in low_plds)
            lower[i] = round_down(low if low_plds is not plds else max(b[0] for b in pairs))
            upper[i] = round_up(max(b[1] for b in pairs))
    return DeltaCurve(eps.copy(), lower, upper, event.relation, h)
