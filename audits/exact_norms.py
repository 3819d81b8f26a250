"""Norms and mirror maps of the sensitivity-conformance harness, in mpmath: nothing shared with the solvers.

The solvers compute every norm a sensitivity depends on in float64 (``algorithms/clipping.py``, the ℓq
dual norms of the mirror solvers, the fused network kernels). The harness that checks them
(:mod:`audits.conformance`) must not reuse that code, or a bug in it would be checked against itself.
Here every float64 input is converted exactly (``mpmath.mpf(x)`` is the float's exact value) and the
arithmetic runs at :data:`DIGITS` significant decimal digits with mpmath's unbounded exponent range, so
no intermediate quantity underflows or overflows: ‖x‖_q of a row of 0.4's at q = 1001 is 0.4·d^{1/1001},
not 0, and ‖x‖₂ of entries 1e-200 is not 0.

Results are mpmath numbers; :func:`rounded_up` turns one into a float64 upper bound for reports.
"""

from __future__ import annotations

import math
from typing import Iterable, List, Sequence

import mpmath
import numpy as np

__all__ = ["DIGITS", "exact", "lp_norm", "mirror_gradient", "rounded_up", "rounded_down"]

#: Significant decimal digits of the harness's arithmetic (float64 has 15.9).
DIGITS = 60

_CTX = mpmath.mp.clone()
_CTX.dps = DIGITS


def exact(values: Iterable[float]) -> List[mpmath.mpf]:
    """The exact values of float64 numbers (any array shape, flattened) as mpmath numbers."""
    return [_CTX.mpf(float(v)) for v in np.ravel(np.asarray(values, dtype=np.float64))]


def lp_norm(values: Sequence[mpmath.mpf], order: float) -> mpmath.mpf:
    """‖v‖_order = (Σ|vⱼ|^order)^{1/order} for order ≥ 1, max|vⱼ| for order = inf (mpmath, no scaling needed).

    Parameters
    ----------
    values : sequence of mpmath numbers (or floats, converted exactly)
    order : float
        The norm's order in [1, inf].
    """
    if not (order >= 1.0):
        raise ValueError(f"order must be in [1, inf]; got {order!r}")
    v = [abs(_CTX.mpf(x)) for x in values]
    if not v:
        return _CTX.mpf(0)
    if math.isinf(order):
        return max(v)
    a = _CTX.mpf(order)
    total = _CTX.fsum(x**a for x in v if x != 0)
    return total ** (1 / a) if total != 0 else _CTX.mpf(0)


def mirror_gradient(w: Sequence[mpmath.mpf], s: float, kappa: float) -> List[mpmath.mpf]:
    """∇Φ(w) = κ‖w‖_s^{2−s}·sign(w)|w|^{s−1} of Φ(w) = (κ/2)‖w‖_s² (Su, Zhao, Wang, the mirror map of
    Algorithms 3, 4, 7), the inverse of the solvers' ∇Φ*: it maps a released iterate back to the dual point
    θ the Bregman step was taken from.

    Parameters
    ----------
    w : sequence of mpmath numbers (or floats)
        The primal point (weight units).
    s, kappa : float
        The mirror-map exponent s > 1 and κ > 0 (``algorithms.mirror_maps.lp_geometry``).
    """
    v = [_CTX.mpf(x) for x in w]
    nrm = lp_norm(v, s)
    if nrm == 0:
        return [_CTX.mpf(0)] * len(v)
    k, e = _CTX.mpf(kappa), _CTX.mpf(s) - 1
    return [k * nrm * _CTX.sign(x) * (abs(x) / nrm) ** e if x != 0 else _CTX.mpf(0) for x in v]


def rounded_up(x: mpmath.mpf) -> float:
    """The least float64 ≥ x (inf beyond the float range)."""
    f = float(x)
    if math.isinf(f) or _CTX.mpf(f) >= x:
        return f
    return math.nextafter(f, math.inf)


def rounded_down(x: mpmath.mpf) -> float:
    """The greatest float64 ≤ x (0 for a non-positive x below the smallest subnormal is still ≤ x)."""
    f = float(x)
    if math.isinf(f) and f > 0:
        return 1.7976931348623157e308
    if _CTX.mpf(f) <= x:
        return f
    return math.nextafter(f, -math.inf)
