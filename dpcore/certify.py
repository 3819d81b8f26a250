"""Certification of RDP-accountant results by an independent high-precision recomputation.

:func:`certify_rdp_epsilon` recomputes the total RDP of the event at the result's optimal order
with mpmath — for Poisson-subsampled Gaussian leaves the exact binomial sum at integer orders and
the *quadrature* form A_α = E_{z∼N(0,σ²)}[(1−q+q e^{(2z−1)/(2σ²)})^α] at fractional ones (Mironov,
Talwar, Zhang 2019), a route independent of the float series; α/(2σ²) for Gaussian leaves; truncated
Poisson steps as the direct sum of those (:mod:`dpcore.truncation`); other
leaves are re-evaluated by the fast code and listed in the result's details — and redoes the
composition and the RDP → DP conversion in mpmath. The fast ε must be an upper bound of the recomputed one (up to the
recomputation's own precision); otherwise :class:`CertificationError`. A fast ε *above* the
recomputation is valid and certified: several fast routes are deliberately looser than the exact
curve (the convexity chord of the integer orders for σ < 0.01, for fractional orders above 1024,
and where the float series is inaccurate: up to a few per cent), and how much looser is recorded
in ``details["certification"]["relative_gap"]``. A tightness requirement is opt-in (``rtol``).
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Set

import mpmath
import numpy as np

from ._validation import check_delta, check_positive, check_positive_int
from .events import GaussianEvent, PoissonSampledEvent, PrivacyEvent, TruncatedPoissonSampledEvent
from .rdp.quadrature import mixture_moment_minus_one
from .result import CertificationError, PrivacyResult

__all__ = ["certify_rdp_epsilon", "mp_rdp_to_epsilon"]

#: Agreement expected of the recomputation itself (quadrature error estimates are not rigorous).
_RECOMPUTE_RTOL = 1e-12


def mp_rdp_to_epsilon(order: mpmath.mpf, rdp: mpmath.mpf, delta: mpmath.mpf, method: str) -> mpmath.mpf:
    """ε of one conversion (``"mironov"``, ``"balle2020"`` or ``"kl_tv"``, see :mod:`dpcore.conversions`) in mpmath."""
    if method == "mironov":
        eps = rdp + mpmath.log(1 / delta) / (order - 1)
    elif method == "balle2020":
        eps = rdp + mpmath.log1p(-1 / order) - (mpmath.log(delta) + mpmath.log(order)) / (order - 1)
    elif method == "kl_tv":  # ε = 0 when the TV bound from KL ≤ D_α is ≤ δ (dpcore.conversions)
        tv = mpmath.sqrt(min(rdp / 2, -mpmath.expm1(-rdp)))
        return mpmath.mpf(0) if tv <= delta else mpmath.inf
    else:
        raise ValueError(f"method must be one of ('mironov', 'balle2020', 'kl_tv'); got {method!r}")
    return max(eps, mpmath.mpf(0))


def _mp_total_rdp(event: PrivacyEvent, order: float, dps: int, repeated: Set[str], repair: bool = False) -> mpmath.mpf:
    """Total RDP at one order in mpmath: compositions summed, each other node by :func:`_mp_node_rdp`.

    ``repair``: each such node's value is also taken from the default orders above ``order``, the least
    kept — the fast path's repair (``rdp_accountant._nondecreasing``: Rényi divergence is non-decreasing in
    α, so a bound at α' ≥ α holds at α), which lowers bounds that are not monotone in the order (e.g.
    Papernot & Steinke's log E[K]/(λ − 1) term). The sum of the nodes' repaired values is at most the fast
    path's value, which repairs the same nodes and their sums. One evaluation per order, so the caller asks
    for it only when the plain recomputation does not certify.
    """
    from .events import ComposedEvent, NoOpEvent, SelfComposedEvent

    if isinstance(event, SelfComposedEvent):
        return event.count * _mp_total_rdp(event.event, order, dps, repeated, repair)
    if isinstance(event, ComposedEvent):
        return mpmath.fsum(_mp_total_rdp(child, order, dps, repeated, repair) for child in event.events)
    if isinstance(event, NoOpEvent):
        return mpmath.mpf(0)
    if isinstance(event, PoissonSampledEvent) and event.sampling_rate == 1.0:
        return _mp_total_rdp(event.event, order, dps, repeated, repair)
    if not repair:
        return _mp_node_rdp(event, order, dps, repeated)
    from .rdp_accountant import DEFAULT_ORDERS

    above = [float(order)] + [float(a) for a in DEFAULT_ORDERS if a > order]
    return min(_mp_node_rdp(event, a, dps, repeated) for a in above)


def _mp_node_rdp(event: PrivacyEvent, order: float, dps: int, repeated: Set[str]) -> mpmath.mpf:
    """RDP of one non-composition node at one order in mpmath.

    Independent routes: Gaussian leaves α/(2σ²) in mpmath; Poisson-subsampled Gaussian leaves by the
    mpmath binomial sum (integer α) or quadrature (fractional α); truncated Poisson steps and
    repeat-and-select from their formulas, inner events recursively. Other leaves are re-evaluated by
    the fast code and their type names added to ``repeated``.
    """
    if isinstance(event, GaussianEvent):
        return mpmath.mpf(order) / (2 * mpmath.mpf(event.noise_multiplier) ** 2)
    if isinstance(event, TruncatedPoissonSampledEvent):  # the direct sum of its branches, in mpmath
        from .truncation import truncated_poisson_branches

        a = mpmath.mpf(order)
        terms = [mpmath.mpf(w) * mpmath.exp((a - 1) * _mp_total_rdp(step, order, dps, repeated))
                 for w, step in truncated_poisson_branches(event)]
        return max(mpmath.log(mpmath.fsum(terms)), mpmath.mpf(0)) / (a - 1)
    from .selection import RepeatAndSelectEvent, mp_repeat_and_select_rdp

    if isinstance(event, RepeatAndSelectEvent):  # Papernot & Steinke's formulas in mpmath, inner recursively
        return mp_repeat_and_select_rdp(event, order, lambda b: _mp_total_rdp(event.event, b, dps, repeated), dps)
    poisson_gaussian = (isinstance(event, PoissonSampledEvent) and isinstance(event.event, GaussianEvent)
                        and event.relation == "add_remove")
    if poisson_gaussian and not float(order).is_integer():
        s = mixture_moment_minus_one(event.sampling_rate, event.event.noise_multiplier, order, dps=dps)
        return mpmath.log1p(s) / (mpmath.mpf(order) - 1)
    if not poisson_gaussian:  # (integer orders of a Poisson-Gaussian leaf: the mpmath binomial sum below)
        inner = event.children()
        repeated.add(f"{type(event).__name__}({type(inner[0]).__name__})" if inner else type(event).__name__)
    from .rdp_accountant import compute_rdp_with_precision  # deferred: rdp_accountant re-exports us

    values, _ = compute_rdp_with_precision(event, np.array([order]), dps=dps)
    return mpmath.mpf(float(values[0]))


def certify_rdp_epsilon(
    event: PrivacyEvent, delta: float, result: PrivacyResult, *, dps: int = 50, rtol: Optional[float] = None
) -> PrivacyResult:
    """Confirm an RDP-accountant ε by an independent mpmath recomputation at ``result.order``.

    Parameters
    ----------
    event : PrivacyEvent
        The event the result was computed for.
    delta : float
        The δ of the result.
    result : PrivacyResult
        Output of :func:`dpcore.rdp_accountant.rdp_epsilon` (``accountant="rdp"``).
    dps : int
        mpmath digits of the recomputation (≥ 20).
    rtol : float, optional
        Opt-in tightness check: also refuse a fast ε that exceeds the recomputed one by more than
        ``rtol`` relative. Default ``None``: any valid upper bound is certified, however loose.

    Returns
    -------
    PrivacyResult
        ``result`` with ``certified=True`` and ``details["certification"]`` holding the recomputed
        ε, the gap (fast − recomputed), the relative gap, the route, ``dps`` and
        ``"recomputed_by_the_fast_code"``: the leaves with no independent mpmath route here (e.g.
        ``SampledWithoutReplacementEvent(GaussianEvent)``, Laplace, pure-DP or user curves), whose
        RDP was re-evaluated by the accountant's own code — for those only the composition and
        the RDP → DP conversion were checked independently.

    Raises
    ------
    CertificationError
        If the fast ε is below the recomputed one by more than the recomputation's own relative
        precision (1e-12): it is not an upper bound. With ``rtol`` given, also if it is above the
        recomputed one by more than ``rtol`` relative.
    """
    delta = check_delta("delta", delta)
    dps = check_positive_int("dps", dps, minimum=20)
    rtol = None if rtol is None else check_positive("rtol", rtol)
    if result.accountant != "rdp" or result.order is None:
        raise ValueError("result must come from the RDP accountant (accountant='rdp' with an order)")
    method = result.method.split(":", 1)[-1]
    with mpmath.workdps(dps):
        order = mpmath.mpf(result.order)
        repeated: Set[str] = set()
        rdp = _mp_total_rdp(event, result.order, dps, repeated)
        exact = mp_rdp_to_epsilon(order, rdp, mpmath.mpf(delta), method)
        if mpmath.mpf(result.epsilon) < exact * (1 - _RECOMPUTE_RTOL):  # the fast path's monotone repair?
            rdp = _mp_total_rdp(event, result.order, dps, repeated, repair=True)
            exact = mp_rdp_to_epsilon(order, rdp, mpmath.mpf(delta), method)
        gap = mpmath.mpf(result.epsilon) - exact
        rel = gap / exact if exact > 0 else gap
        info = {
            "dps": dps,
            "recomputed_epsilon": float(exact),
            "gap": float(gap),
            "relative_gap": float(rel),
            "rtol": rtol,
            "route": "mpmath: exact binomial sum (integer order) / quadrature (fractional order)",
            "recomputed_by_the_fast_code": sorted(repeated),
        }
        if rel < -_RECOMPUTE_RTOL:
            raise CertificationError(
                f"fast epsilon {result.epsilon!r} is below the {dps}-digit recomputation {mpmath.nstr(exact, 17)} "
                f"(relative gap {float(rel):.3g}); it is not an upper bound"
            )
        if rtol is not None and rel > rtol:
            raise CertificationError(
                f"fast epsilon {result.epsilon!r} exceeds the {dps}-digit recomputation {mpmath.nstr(exact, 17)} "
                f"by {float(rel):.3g} relative (> rtol={rtol:g})"
            )
    details = dict(result.details)
    details["certification"] = info
    return dataclasses.replace(result, certified=True, details=details)
