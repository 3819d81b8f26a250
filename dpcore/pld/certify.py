"""Certification of PLD-accountant results by independent mpmath recomputation.

Two checks, both at ``dps`` decimal digits:

1. **Discretisation and tails of every leaf.** In exact arithmetic the connect-the-dots grid PLD
   of a leaf has the *same* δ as the leaf's pair at every grid point (Doroshenko et al. 2022,
   Thm 3.3), and the cuts only add δ. So at grid points spread over the leaf's range, the
   grid PLD's δ must be ≥ the pair's exact δ — computed here from the closed-form distribution
   functions in mpmath, a route independent of the float quadrature — minus the leaf's declared
   float-error bound ``err``. The largest shortfall is reported.
2. **The reported ε.** δ of the final composed grid PLD at ``epsilon_upper`` is re-summed
   (correctly rounded ``math.fsum`` of terms each within 4 ulps) and, with the declared error
   terms added, must be ≤ δ.

Grid-side sums use ``math.fsum`` with an explicit bound (4u per term); the exact side is mpmath.

The FFT error is not recomputed (it is a proven bound, see :mod:`dpcore.pld.pmf`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import List

import mpmath
import numpy as np

from ..events import PrivacyEvent
from ..result import CertificationError, PrivacyResult
from .discretize import discretize
from .pmf import GridPld

__all__ = ["certify_pld"]

#: grid points checked per leaf
CHECK_POINTS = 64


def _leaf_models(event: PrivacyEvent):
    """(distinct leaf pairs, the tail-bin setting the accountant discretises them with)."""
    from .accountant import _parts, wide_bins

    seen = {}
    parts = _parts(event)
    for part in parts:
        for m in part.models:
            seen[id(m)] = m
    return list(seen.values()), (wide_bins(sum(part.count for part in parts)) if parts else None)


def _leaf_shortfall(model, h: float, tail: float, dps: int, wide=None) -> float:
    """Largest (exact δ − grid δ − err) over checked grid points (≤ 0 when certified)."""
    leaf = discretize(model, h, tail, wide=wide)
    ell = leaf.losses()
    mass = np.cumsum(leaf.pmf[::-1])[::-1]
    inside = np.flatnonzero(mass > 1e-300)
    idx = np.unique(np.linspace(int(inside[0]), int(inside[-1]), CHECK_POINTS).astype(int))
    worst = -math.inf
    with mpmath.workdps(dps):
        for i in idx:
            eps = float(ell[i])
            exact = model.mp_profile(eps)
            grid = max(_grid_delta(leaf, eps), 0.0)  # a lower estimate of a δ, which is ≥ 0
            worst = max(worst, float(exact - mpmath.mpf(grid) - mpmath.mpf(leaf.err)))
    return worst


def _grid_delta(pld: GridPld, epsilon: float, upper: bool = False) -> float:
    """Σ p·(1 − e^{ε−ℓ}) over ℓ > ε plus the +∞ mass, by ``math.fsum``, moved by its error bound
    (down by default, up with ``upper``). The untilted masses are p = m̃·exp(log_scale − θℓ)
    (:mod:`~dpcore.pld.pmf`); each term is within u·(4 + 2|log_scale − θℓ| + 2|log_scale|) of its
    value (3u when the exponent is 0: a leaf)."""
    ell = pld.losses()
    above = (ell > epsilon) & (pld.pmf > 0.0)
    exponent = pld.log_scale - pld.theta * ell[above]
    with np.errstate(over="ignore", under="ignore"):
        terms = pld.pmf[above] * np.exp(np.minimum(exponent, 700.0)) * -np.expm1(epsilon - ell[above])
    total = math.fsum(terms.tolist()) + pld.inf_mass
    # each term: expm1 and the products within 3u; exp(x) adds 1u plus the error of x (≤ 2u·|x|)
    rel = 2.0**-53 * (3.0 + np.where(exponent != 0.0, 1.0 + 2.0 * (np.abs(exponent) + abs(pld.log_scale)), 0.0))
    slack = float(np.sum(terms * rel)) * (1.0 + 1e-12) + 2.0**-53 * pld.inf_mass + 1e-300
    return total + slack if upper else total - slack


def _final_delta(pld: GridPld, epsilon: float) -> float:
    return _grid_delta(pld, epsilon, upper=True) + pld.error_scale(epsilon) * pld.err


def certify_pld(event: PrivacyEvent, result: PrivacyResult, plds: List[GridPld], h: float, tail: float,
                *, dps: int = 30) -> PrivacyResult:
    """Confirm a :func:`~dpcore.pld.pld_epsilon` result (see the module docstring).

    Returns ``result`` with ``certified=True`` and ``details["certification"]``; raises
    :class:`~dpcore.result.CertificationError` if a leaf's grid PLD falls below its pair's exact δ
    by more than its error bound, or if the re-summed δ at ``result.epsilon`` exceeds δ.
    """
    leaf_tail = tail / 4.0
    models, wide = _leaf_models(event)
    shortfalls = [_leaf_shortfall(m, h, leaf_tail, dps, wide) for m in models]
    if shortfalls and max(shortfalls) > 0:
        raise CertificationError(
            f"a leaf's grid PLD is below its exact privacy profile by {max(shortfalls):.3g} beyond its error bound")
    deltas = [_final_delta(p, result.epsilon) for p in plds] if math.isfinite(result.epsilon) else [0.0]
    if max(deltas) > result.delta:
        raise CertificationError(
            f"re-summed delta {max(deltas):.6g} at epsilon={result.epsilon!r} exceeds delta={result.delta}")
    details = dict(result.details)
    details["certification"] = {
        "dps": dps,
        "leaf_shortfall": max(shortfalls) if shortfalls else 0.0,
        "final_delta": max(deltas),
        "route": "mpmath closed-form leaf profiles vs fsum of the leaf grid PLDs; fsum of the final grid PLD",
    }
    return dataclasses.replace(result, certified=True, details=details)
