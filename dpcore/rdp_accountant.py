"""The RDP accountant: walks a privacy-event tree, adds RDP curves, converts to (ε, δ).

Composition adds RDP at every order (Mironov 2017, Prop. 1); ``SelfComposedEvent`` multiplies by
the count. Leaves and wrappers map to:

========================================  ===================================================  ============
event                                     RDP curve                                            relation
========================================  ===================================================  ============
GaussianEvent                             α/(2σ²)  (Mironov 2017, Prop. 7)                     either
LaplaceEvent                              Mironov 2017, Prop. 6                                either
PureDpEvent / MechanismEvent(pure_ε)      randomized-response worst case (≤ Bun–Steinke 16)    either
MechanismEvent(rdp=…)                     the supplied curve (min with the pure-ε curve)       either
PoissonSampled(Gaussian)                  Mironov, Talwar, Zhang 2019 (exact)                  add_remove
PoissonSampled(other)                     Zhu & Wang 2019, Thm. 6                              add_remove
SampledWithoutReplacement(Gaussian)       Wang, Balle, Kasiviswanathan 2019, Thm. 27           replace_one
SampledWithoutReplacement(other)          Wang, Balle, Kasiviswanathan 2019, Thm. 9            replace_one
TruncatedPoissonSampled(Gaussian)         direct sum of two Poisson-Gaussian branches          add_remove
                                          (dpcore.truncation, dpcore.rdp.direct_sum)
RandomAllocation(any), one epoch          num_selected × the step's curve (no amplification:   add_remove
                                          each record is in exactly that many steps; the
                                          amplified bound is the PLD's)
DpSrmEvent                                DP-SRM paper Lemma 3.7 × steps (conditions checked)  replace_one
RepeatAndSelectEvent (dpcore.selection)   Papernot & Steinke 2022, Thms 2 (TNB) / 6 (Poisson)  inner's
NoOpEvent / NonPrivateEvent               0 / ∞                                                either
ApproxDpEvent, ShuffledEvent,             refused (no RDP curve)                               —
MechanismEvent(privacy_profile only)
========================================  ===================================================  ============

Refusals raise :class:`dpcore.events.UnsupportedEventError` (a ``ValueError``).
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Set, Tuple

import numpy as np
from scipy.optimize import minimize_scalar

from ._validation import MAX_SUMMED_ORDER, check_delta, check_nonnegative, check_orders, check_positive_int
from .conversions import epsilon_at_orders, log_delta_at_orders, rdp_to_delta, rdp_to_epsilon
from .events import (
    ApproxDpEvent,
    ComposedEvent,
    DpSrmEvent,
    GaussianEvent,
    LaplaceEvent,
    MechanismEvent,
    NonPrivateEvent,
    NoOpEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomAllocationEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ShuffledBatchesEvent,
    check_count,
    ShuffledEvent,
    TruncatedPoissonSampledEvent,
    UnsupportedEventError,
)
from .orders import DEFAULT_ORDERS
from .rdp._numerics import add_up, mul_up
from .rdp.direct_sum import direct_sum_rdp
from .rdp.dp_srm import dp_srm_rdp_bound
from .rdp.gaussian import gaussian_rdp, laplace_rdp, pure_dp_rdp
from .rdp.poisson_gaussian import poisson_subsampled_gaussian_rdp_with_precision
from .rdp.poisson_general import poisson_subsampled_rdp
from .rdp.without_replacement import sampled_without_replacement_rdp
from .rdp.wor_gaussian import sampled_without_replacement_gaussian_rdp
from .result import PrivacyResult
from .selection import RepeatAndSelectEvent, repeat_and_select_rdp
from .truncation import truncated_poisson_branches

__all__ = ["compute_rdp", "compute_rdp_with_precision", "rdp_epsilon", "rdp_delta", "certify_rdp_epsilon"]


def _pure_epsilon_of(event: PrivacyEvent) -> Optional[float]:
    """ε if the event is known to be pure ε-DP (used to tighten WBK19 Thm. 9)."""
    if isinstance(event, PureDpEvent):
        return event.epsilon
    if isinstance(event, LaplaceEvent):
        return 1.0 / event.noise_multiplier
    if isinstance(event, MechanismEvent):
        return event.pure_epsilon
    return None


def _mechanism_rdp(event: MechanismEvent, alpha: np.ndarray) -> np.ndarray:
    if event.rdp is None:
        if event.pure_epsilon is None:
            raise UnsupportedEventError(
                f"MechanismEvent {event.name!r} supplies only a privacy profile; the RDP accountant needs rdp= or pure_epsilon="
            )
        return pure_dp_rdp(event.pure_epsilon, alpha)
    values = np.asarray(event.rdp(alpha.copy()), dtype=float)
    if values.shape != alpha.shape or np.any(np.isnan(values)) or np.any(values < 0):
        raise ValueError(f"MechanismEvent {event.name!r}: rdp(orders) must return one value in [0, inf] per order")
    if event.pure_epsilon is not None:
        values = np.minimum(values, pure_dp_rdp(event.pure_epsilon, alpha))
    return values


def _require(event: PrivacyEvent, relation: str, analysis: str) -> None:
    if event.relation != relation:
        raise UnsupportedEventError(
            f"{type(event).__name__} is analysed by {analysis} only for relation={relation!r}; got relation={event.relation!r}"
        )


def _nondecreasing(alpha: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Replace the value at each order by the least value computed at an order ≥ it.

    Rényi divergence is non-decreasing in α (van Erven & Harremoës 2014, Thm 3), so is the
    supremum over neighbouring pairs, and an upper bound at α' ≥ α is one at α. This repairs
    bounds that are loose at some orders (e.g. the subsampled-Gaussian chord path near α = 1)
    using the other orders of the same call; it never increases a value.
    """
    order = np.argsort(alpha, kind="stable")
    out = np.empty_like(values)
    out[order] = np.minimum.accumulate(values[order][::-1])[::-1]
    return out


def _check_counts(event: PrivacyEvent, mult: int = 1) -> None:
    """Refuse (``ValueError`` naming count) nested compositions whose product of counts exceeds
    :data:`dpcore.events.MAX_COUNT`."""
    if isinstance(event, SelfComposedEvent):
        mult = check_count("count", mult * event.count)
    for child in event.children():
        _check_counts(child, mult)


def _walk(event: PrivacyEvent, alpha: np.ndarray, dps: Optional[int], precisions: Set[str]) -> np.ndarray:
    """RDP curve of ``event`` at ``alpha``, made non-increasing towards α → 1 (:func:`_nondecreasing`)."""
    return _nondecreasing(alpha, _node(event, alpha, dps, precisions))


def _node(event: PrivacyEvent, alpha: np.ndarray, dps: Optional[int], precisions: Set[str]) -> np.ndarray:
    if isinstance(event, NoOpEvent):
        return np.zeros_like(alpha)
    if isinstance(event, NonPrivateEvent):
        return np.full_like(alpha, np.inf)
    if isinstance(event, GaussianEvent):
        return gaussian_rdp(event.noise_multiplier, alpha)
    if isinstance(event, LaplaceEvent):
        return laplace_rdp(event.noise_multiplier, alpha)
    if isinstance(event, PureDpEvent):
        return pure_dp_rdp(event.epsilon, alpha)
    if isinstance(event, MechanismEvent):
        return _mechanism_rdp(event, alpha)
    if isinstance(event, (ApproxDpEvent, ShuffledEvent)):
        other = "shuffle" if isinstance(event, ShuffledEvent) else "composition"
        raise UnsupportedEventError(f"{type(event).__name__} has no RDP curve; use the {other!r} accountant")
    if isinstance(event, DpSrmEvent):
        _require(event, "replace_one", "Lemma 3.7 of the DP-SRM paper (sampling without replacement)")
        # Lemma 3.7 holds at some order iff it holds at the least one it is applied at (α̂ = 2): if not,
        # raise its message; otherwise orders outside its range get inf (an order search probes those)
        dp_srm_rdp_bound(event.noise_multiplier, event.sampling_rate, np.array([2.0]), invalid="raise")
        per_step = dp_srm_rdp_bound(event.noise_multiplier, event.sampling_rate, alpha, invalid="inf")
        return mul_up(event.steps, per_step)
    if isinstance(event, PoissonSampledEvent):
        _require(event, "add_remove", "Poisson subsampling (Mironov-Talwar-Zhang 2019; Zhu-Wang 2019)")
        inner = event.event
        if event.sampling_rate == 1.0 or isinstance(inner, NoOpEvent):
            return _walk(inner, alpha, dps, precisions)
        if isinstance(inner, GaussianEvent):
            values, precision = poisson_subsampled_gaussian_rdp_with_precision(
                event.sampling_rate, inner.noise_multiplier, alpha, dps=dps
            )
            precisions.add(precision)
            return values
        return poisson_subsampled_rdp(event.sampling_rate, lambda a: _walk(inner, a, dps, precisions), alpha)
    if isinstance(event, SampledWithoutReplacementEvent):
        _require(event, "replace_one", "sampling without replacement (Wang-Balle-Kasiviswanathan 2019)")
        inner = event.event
        if event.batch_size == event.dataset_size:
            return _walk(inner, alpha, dps, precisions)
        if isinstance(inner, GaussianEvent):
            return sampled_without_replacement_gaussian_rdp(
                event.batch_size, event.dataset_size, inner.noise_multiplier, alpha)
        return sampled_without_replacement_rdp(
            event.batch_size,
            event.dataset_size,
            lambda a: _walk(inner, a, dps, precisions),
            alpha,
            base_pure_epsilon=_pure_epsilon_of(inner),
        )
    if isinstance(event, TruncatedPoissonSampledEvent):  # a direct sum of Poisson-subsampled Gaussians
        branches = truncated_poisson_branches(event)
        if len(branches) == 1:  # no batch reaches the cap: the Poisson step itself
            return _walk(branches[0][1], alpha, dps, precisions)
        return direct_sum_rdp([w * (1.0 + 8.0 * 2.0**-53) for w, _ in branches],
                              [_walk(step, alpha, dps, precisions) for _, step in branches], alpha)
    if isinstance(event, RandomAllocationEvent):
        # no amplification: given the allocation, a record enters exactly num_selected steps, the
        # others being the same mechanism on the same data; the allocation's law is the same under
        # both neighbours, and Rényi divergence is jointly quasi-convex (van Erven & Harremoës 2014, Thm 13)
        _require(event, "add_remove", "random allocation (Chua et al. 2025; Feldman & Shenfeld 2025)")
        return mul_up(event.num_selected, _walk(event.event, alpha, dps, precisions))
    if isinstance(event, SelfComposedEvent):
        return mul_up(event.count, _walk(event.event, alpha, dps, precisions))  # nested products: _check_counts
    if isinstance(event, ShuffledBatchesEvent):  # one epoch: no amplification claimed (see the event)
        return _walk(event.dominating_event(), alpha, dps, precisions)
    if isinstance(event, ComposedEvent):
        total = np.zeros_like(alpha)
        for child in event.events:
            total = add_up(total, _walk(child, alpha, dps, precisions))
        return total
    if isinstance(event, RepeatAndSelectEvent):  # Papernot & Steinke 2022, Thms 2 / 6 (dpcore.selection)
        return repeat_and_select_rdp(event, alpha, lambda a: _walk(event.event, a, dps, precisions))
    raise UnsupportedEventError(f"the RDP accountant cannot analyse {type(event).__name__}")


def _precision_label(precisions: Set[str], dps: Optional[int]) -> str:
    if dps is not None and precisions:
        return f"mpmath:{dps} digits"
    mp = sorted(p for p in precisions if "mpmath" in p)
    return mp[-1] if mp else "float64"


#: Largest ``dps`` :func:`compute_rdp` accepts: mpmath's working precision is a float of the digit count
#: (10**400 digits was an OverflowError), and 10⁴ digits already take minutes per order.
MAX_DPS = 10_000


def compute_rdp_with_precision(
    event: PrivacyEvent, orders: np.ndarray, *, dps: Optional[int] = None
) -> Tuple[np.ndarray, str]:
    """:func:`compute_rdp` plus the precision label of the computation."""
    if not isinstance(event, PrivacyEvent):
        raise ValueError(f"event must be a PrivacyEvent; got {event!r}")
    alpha = check_orders("orders", orders)
    if dps is not None:
        dps = check_positive_int("dps", dps, minimum=15, maximum=MAX_DPS)
    _check_counts(event)
    precisions: Set[str] = set()
    values = _walk(event, alpha, dps, precisions)
    return values, _precision_label(precisions, dps)


def compute_rdp(event: PrivacyEvent, orders: np.ndarray, *, dps: Optional[int] = None) -> np.ndarray:
    """RDP curve (nats) of an event tree at the given orders; every value is an upper bound.

    Parameters
    ----------
    event : PrivacyEvent
        What was done (see the module table for what is supported under which relation).
    orders : array_like
        Rényi orders α > 1.
    dps : int, optional
        Force mpmath at this many digits (15 to :data:`MAX_DPS`) for the Poisson-subsampled Gaussian.

    Raises
    ------
    UnsupportedEventError
        For events (or relations) the RDP accountant cannot analyse.
    """
    return compute_rdp_with_precision(event, orders, dps=dps)[0]


def _grid(orders: Optional[np.ndarray]) -> np.ndarray:
    return np.array(DEFAULT_ORDERS) if orders is None else check_orders("orders", orders)


#: Smallest order the continuous search reaches (ε(α) → ∞ as α → 1, so it is never the optimum
#: of a finite curve; the KL → TV rule uses the RDP value there).
MIN_ORDER = 1.0 + 1e-6


def _refine_order(event: PrivacyEvent, grid: np.ndarray, order: float, dps: Optional[int],
                  bound_at: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> float:
    """Minimise ``bound_at(orders, rdp)`` (ε or log δ per order) continuously near ``order``.

    Between the grid neighbours of ``order`` (down to α = 1 + 1e-6 below the grid, up to 2α above
    it) a 17-point geometric scan in log(α − 1) (one vectorised RDP evaluation; robust to the
    plateaus of a clipped bound) narrows the bracket, then bounded Brent refines it. Returns the
    order found; callers recompute their bound there, so the result is valid whatever the
    optimiser did."""
    srt = np.unique(grid)
    pos = int(np.searchsorted(srt, order))
    lo = max(float(srt[pos - 1]) if pos > 0 else MIN_ORDER, MIN_ORDER)
    hi = float(srt[pos + 1]) if pos + 1 < srt.size else max(order, min(2.0 * order, MAX_SUMMED_ORDER))
    ts = np.linspace(math.log(lo - 1.0), math.log(hi - 1.0), 17)
    scan = 1.0 + np.exp(ts)
    values = bound_at(scan, compute_rdp_with_precision(event, scan, dps=dps)[0])
    best = int(np.argmin(values))
    t_lo, t_hi = ts[max(best - 1, 0)], ts[min(best + 1, ts.size - 1)]

    def objective(t: float) -> float:
        a = np.array([1.0 + math.exp(t)])
        return float(bound_at(a, compute_rdp_with_precision(event, a, dps=dps)[0])[0])

    res = minimize_scalar(objective, bounds=(t_lo, t_hi), method="bounded", options={"xatol": 1e-6})
    t = float(res.x) if res.fun <= values[best] else float(ts[best])
    return 1.0 + math.exp(t)


def _with_min_order(grid: np.ndarray, optimize_order: bool) -> np.ndarray:
    """The grid, plus α = 1 + 1e-6 (whose RDP value feeds the KL → TV rule) when optimising."""
    if optimize_order and np.min(grid) > MIN_ORDER:
        return np.concatenate([[MIN_ORDER], grid])
    return grid


def _result(event: PrivacyEvent, eps: float, delta: float, method: str, order: float, precision: str, details: dict) -> PrivacyResult:
    return PrivacyResult(
        epsilon=eps,
        delta=delta,
        relation=event.relation,
        accountant="rdp",
        method=f"rdp->dp:{method}",
        order=order,
        precision=precision,
        details=details,
    )


def rdp_epsilon(
    event: PrivacyEvent,
    delta: float,
    *,
    orders: Optional[np.ndarray] = None,
    optimize_order: bool = False,
    dps: Optional[int] = None,
) -> PrivacyResult:
    """ε for a target δ by the RDP accountant (best of the Mironov and Balle et al. 2020 conversions).

    Parameters
    ----------
    event : PrivacyEvent
        The event tree.
    delta : float
        Target δ in (0, 1).
    orders : array_like, optional
        Rényi orders; default :data:`dpcore.orders.DEFAULT_ORDERS`.
    optimize_order : bool
        Also minimise ε over a continuous order (bounded Brent in log(α − 1) between the grid
        neighbours of the best grid order, down to α = 1 + 1e-6; the order 1 + 1e-6 is added to
        the grid for the KL → TV rule); the reported ε is recomputed at that order, so it remains
        an upper bound, and is used only if it improves on the grid. (:func:`dpcore.get_epsilon`
        turns this on by default.)
    dps : int, optional
        Force mpmath at this many digits for the subsampled-Gaussian RDP.

    Returns
    -------
    PrivacyResult
        ``accountant="rdp"``, ``method="rdp->dp:<conversion>"``, the optimal ``order``, the
        precision, and ``details`` with the orders and total RDP curve.
    """
    delta = check_delta("delta", delta)
    grid = _with_min_order(_grid(orders), optimize_order)
    rdp, precision = compute_rdp_with_precision(event, grid, dps=dps)
    eps, order, method = rdp_to_epsilon(grid, rdp, delta)
    details = {"orders": grid, "rdp": rdp, "optimized_order": False}
    if optimize_order and math.isfinite(eps) and eps > 0.0:
        order2 = _refine_order(event, grid, order, dps,
                               lambda a, r: epsilon_at_orders(a, r, delta, "balle2020"))
        values, _ = compute_rdp_with_precision(event, np.array([order2]), dps=dps)
        eps2, _, method2 = rdp_to_epsilon(np.array([order2]), values, delta)
        if eps2 < eps:
            eps, order, method = eps2, order2, method2
            details["optimized_order"] = True
    return _result(event, eps, delta, method, order, precision, details)


def rdp_delta(
    event: PrivacyEvent, epsilon: float, *, orders: Optional[np.ndarray] = None, optimize_order: bool = False,
    dps: Optional[int] = None,
) -> PrivacyResult:
    """δ for a target ε by the RDP accountant (best conversion over the orders).

    Parameters
    ----------
    event : PrivacyEvent
    epsilon : float
        Target ε ≥ 0, nats.
    orders : array_like, optional
        Rényi orders; default :data:`dpcore.orders.DEFAULT_ORDERS`.
    optimize_order : bool
        Also minimise δ over a continuous order, as in :func:`rdp_epsilon`.
    dps : int, optional
        Force mpmath at this many digits for the subsampled-Gaussian RDP.

    Returns
    -------
    PrivacyResult
        ``accountant="rdp"`` with δ an upper bound (rounded up).
    """
    epsilon = check_nonnegative("epsilon", epsilon)
    grid = _with_min_order(_grid(orders), optimize_order)
    rdp, precision = compute_rdp_with_precision(event, grid, dps=dps)
    delta, order, method = rdp_to_delta(grid, rdp, epsilon)
    details = {"orders": grid, "rdp": rdp, "optimized_order": False}
    if optimize_order and 0.0 < delta < 1.0:
        start = float(grid[int(np.argmin(log_delta_at_orders(grid, rdp, epsilon, "balle2020")))])
        order2 = _refine_order(event, grid, start, dps,
                               lambda a, r: log_delta_at_orders(a, r, epsilon, "balle2020"))
        values, _ = compute_rdp_with_precision(event, np.array([order2]), dps=dps)
        delta2, _, method2 = rdp_to_delta(np.array([order2]), values, epsilon)
        if delta2 < delta:
            delta, order, method = delta2, order2, method2
            details["optimized_order"] = True
    return _result(event, epsilon, delta, method, order, precision, details)


# Certification lives in dpcore.certify (it recomputes through this module); re-exported here.
from .certify import certify_rdp_epsilon  # noqa: E402
