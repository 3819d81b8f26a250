"""The ``"pld"`` accountant: certified two-sided (ε, δ) bounds from privacy-loss distributions.

Pipeline (each step keeps the result an upper bound of the exact value, see the submodules):

1. flatten the event tree into ``[(leaf, count)]`` (all un-sampled Gaussian leaves merged into one
   exact Gaussian pair, :func:`_merge_gaussians`) and map each leaf to its dominating pair(s)
   (:mod:`dpcore.pld.leaves`); Poisson sampling under add_remove gives two orders of neighbours,
   which are analysed separately and the larger ε (δ) is reported (Zhu, Dong, Wang 2022);
2. discretise each pair pessimistically on the loss grid hℤ (:mod:`dpcore.pld.discretize`; in
   long compositions the leaves' light tails on K·h-wide bins, :func:`wide_bins`), and tilt it by
   θ (:meth:`~dpcore.pld.pmf.GridPld.with_tilt`, θ near the saddle point of the composed loss at
   the answer, :mod:`dpcore.pld.tilt`), so that every later error is relative to δ;
3. compose all parts at once through their characteristic functions, in O(log count) levels of
   bounded size (:mod:`dpcore.pld.charfn`);
4. read off ε(δ) / δ(ε) with every float-error, aliasing and truncation term added to δ
   (:mod:`dpcore.pld.pmf`), and the optimistic companion (:mod:`dpcore.pld.lower`). When the error
   terms exceed :data:`REFINE_FRACTION` of δ (θ far from the saddle point), steps 2–3 are redone
   with θ chosen from the leaves' moment generating functions at the first answer.

The leaf grid spacing h (``discretization``) defaults to the h whose splits give the optimistic
bound the settings' target relative gap (:data:`DEFAULT_SETTINGS`, :data:`FAST_SETTINGS`;
:func:`_grid`, :func:`_variance_target`: V ≈ gap·ε/(KAPPA·hazard) with ε and the hazard estimated
from the RDP plan and the Gaussian approximation of the composed loss), so h follows δ, the
schedule and the sampling rate; an ε query whose measured gap still exceeds :data:`GAP_LIMIT`
times the target is redone once on a finer grid (δ queries likewise, in ε terms).
``max_points`` bounds the characteristic-function windows (the work of one level is
O(max_points·log max_points), whatever the counts). The loss tails are cut where the P-mass
beyond is ``tail_mass``/(4·steps) per leaf and side; ``tail_mass`` defaults to a fixed fraction
of δ (:data:`TAIL_FRACTION`) for ε queries, :data:`DEFAULT_TAIL_MASS` for δ queries.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import dataclasses
import math
from typing import Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .._validation import check_delta, check_nonnegative, check_positive, check_positive_int
from ..events import GaussianEvent, NoOpEvent, PrivacyEvent, UnsupportedEventError
from ..result import PrivacyResult, round_down, round_up
from .charfn import DEFAULT_MAX_POINTS, compose_counts
from .discretize import cut, discretize, loss_span
from .leaves import leaf_models
from .losses import LossModel
from .pmf import GridPld
from .random_allocation import dominated_pairs, has_dominated_pairs
from .tilt import TILTS, TiltPlan, leaf_tilt, rdp_tilt

__all__ = ["DEFAULT_MAX_POINTS", "DEFAULT_SETTINGS", "DEFAULT_TAIL_MASS", "FAST_SETTINGS", "Part", "composed_plds",
           "memoised", "pld_epsilon", "pld_delta", "untilted_plds"]

#: (target relative gap of the optimistic bound, longest characteristic-function window): the
#: grid is chosen so that the splits' Scarf variance V ≈ gap·ε/(KAPPA·θ) (:func:`_variance_target`)
DEFAULT_SETTINGS = (2e-3, DEFAULT_MAX_POINTS)
#: ``fast=True`` (the screen of ``accountant="auto"`` and the calibration proxy)
FAST_SETTINGS = (2e-2, 1 << 18)
#: settings of the screening pass that finds the order of neighbours with the largest bound
SCREEN_SETTINGS = (1e-1, 1 << 16)
#: measured constant of the optimistic bound's gap (:func:`_variance_target`); an ε query whose
#: measured gap still exceeds GAP_LIMIT times the target is redone once on a finer grid
KAPPA = 5.0
GAP_LIMIT = 2.5
#: grid points across 32 standard deviations of the composed tilted loss, at least (default settings)
MIN_POINTS = 1 << 14
#: the tilted aliasing allowed in a composition, as a fraction of δ (:func:`_alias`)
ALIAS_FRACTION = 1e-4
#: largest total upward rounding (relative, summed over the steps) of float64 leaf split weights
EXTENDED_BIAS = 1e-4
#: largest ±a of atom-only leaves put on the exact grid h = a (beyond: the general rule, which refuses)
MAX_ATOM_GRID = 1e6
#: atom-only leaves on a power-of-two lattice use its step when it is at least 1/LATTICE_REFINE
#: of the grid rule's h (:func:`_atom_lattice`)
LATTICE_REFINE = 64
#: :func:`untilted_plds`: measured constant of the optimistic bound's deficit (deficit ≈ KAPPA_CURVE·V·density)
#: the least leaf grid points per leaf loss standard deviation, and the least grid points across 32
#: standard deviations of the composed loss times the target gap (2¹⁶ points at 2e-4: few-step
#: compositions, whose loss is far from Gaussian, are cheap on a fine grid)
KAPPA_CURVE = 4.0
CURVE_POINTS_PER_SD = 4
CURVE_POINTS_GAP = 13.0
#: leaf grid points per (untilted) standard deviation when no RDP curve gives the tilt
FALLBACK_POINTS_PER_SD = 32
#: most grid points of one leaf with the default discretization (``fast``: the second value); the
#: grid is made coarser when a leaf's loss range needs more (e.g. very small sampling rates)
MAX_LEAF_POINTS = (1 << 19, 1 << 16)
#: total P-mass the leaf cuts may move in δ queries and curves
DEFAULT_TAIL_MASS = 1e-14
#: default ``tail_mass`` of ε queries, as a fraction of δ (the cut mass is charged to δ in full)
TAIL_FRACTION = 1e-4
_LEAST_NORMAL = 2.0 ** -1022
#: widest tail bins of a leaf, in leaf grid steps (:func:`wide_bins`)
WIDE_FACTOR = 16
#: expected number of leaf instances (over all steps) whose loss falls in a wide tail bin
WIDE_LAMBDA = 1e-2
#: the error terms may use at most this fraction of δ before the tilt is re-chosen (:func:`_composed`)
REFINE_FRACTION = 1e-2
#: δ queries: the variance target's gap is this fraction of the settings' (their upper bound is
#: then tighter than an ε query's at the same point, so δ(ε(δ)) ≤ δ in practice; the cost is ~1/√ of it)
DELTA_QUERY_GAP = 0.25
_U = 2.0**-53
_METHOD = ("privacy loss distribution: connect-the-dots discretisation (Doroshenko et al. 2022), "
           "tilted characteristic-function composition of dominating pairs (Zhu, Dong, Wang 2022)")


class Part(NamedTuple):
    """One flattened leaf of an event: the leaf event, its (remove, add) dominating pairs, its count."""

    event: PrivacyEvent
    models: Tuple[LossModel, LossModel]
    count: int


def _parts(event: PrivacyEvent) -> List[Part]:
    from ..accounting import _flatten  # deferred: accounting dispatches to this module

    models: Dict[PrivacyEvent, Tuple[LossModel, LossModel]] = {}

    def leaf(e: PrivacyEvent):
        if isinstance(e, NoOpEvent):
            return ()
        if e not in models:
            models[e] = leaf_models(e)
        return (e,)

    flat = [(key[0], count) for key, count in _flatten(event, leaf, "pld")]
    flat = _merge_gaussians(flat)
    for e, _ in flat:
        leaf(e)
    return [Part(e, models[e], count) for e, count in flat]


def _merge_gaussians(flat: List[Tuple[PrivacyEvent, int]]) -> List[Tuple[PrivacyEvent, int]]:
    """Replace all un-sampled Gaussian leaves by one: composing N(1, σᵢ²) vs N(0, σᵢ²) (cᵢ times
    each) is exactly the pair N(1, σ²) vs N(0, σ²) with 1/σ² = Σ cᵢ/σᵢ² (the composed pair is a
    Gaussian shift of norm μ = sqrt(Σ cᵢ/σᵢ²); Dong, Roth, Su 2022, Cor. 2.1). No FFT error and
    no discretisation error accumulate over those steps. σ is rounded down (pessimistic); if it
    is not a positive finite float the leaves are kept as they are."""
    gauss = [(e, c) for e, c in flat if type(e) is GaussianEvent]
    if len(gauss) < 2 and all(c == 1 for _, c in gauss):
        return flat
    with np.errstate(all="ignore"):
        mu2 = math.fsum(c / e.noise_multiplier / e.noise_multiplier for e, c in gauss) * (1.0 + 4.0 * _U)
    sigma = 1.0 / math.sqrt(mu2) * (1.0 - 4.0 * _U) if 0.0 < mu2 < math.inf else 0.0
    if not 0.0 < sigma < math.inf:
        return flat
    rest = [(e, c) for e, c in flat if type(e) is not GaussianEvent]
    return rest + [(GaussianEvent(sigma, relation=gauss[0][0].relation), 1)]


def _leaf_spread(model: LossModel, tail: float) -> float:
    """Standard deviation of one leaf's loss (memoised on the model, which lives for one call)."""
    memo = model.__dict__.setdefault("_spread", {})
    if tail not in memo:
        memo[tail] = _measure_spread(model, tail)
    return memo[tail]


#: Gauss–Legendre rule of :func:`_measure_spread` (nodes, weights on [−1, 1])
_SPREAD_RULE = np.polynomial.legendre.leggauss(8)


def _measure_spread(model: LossModel, tail: float) -> float:
    """Standard deviation of one leaf's finite loss under P (it only sets the grid spacing).

    Composite 8-node Gauss–Legendre sums of p·L^k over each piece between its cuts at ``tail``
    (:func:`~dpcore.pld.discretize.cut`, the ones the discretisation uses), panels ≤ a quarter of
    the piece's scale (at most 4096), plus the finite atoms; at least 1e-9 nats.
    """
    nodes, weights = _SPREAD_RULE
    moments = np.zeros(3)
    for piece in model.pieces:
        x0, x1 = cut(piece, -1, tail), cut(piece, +1, tail)
        if not (math.isfinite(x0) and math.isfinite(x1) and x1 > x0):
            continue
        panels = min(4096, max(8, math.ceil((x1 - x0) / (0.25 * piece.scale))))
        half = 0.5 * (x1 - x0) / panels
        x = (x0 + half * (2.0 * np.arange(panels) + 1.0))[:, None] + half * nodes[None, :]
        with np.errstate(all="ignore"):
            w = (piece.pdf_p(x) * (half * weights[None, :])).ravel()
            ell = piece.loss(x).ravel()
        ok = np.isfinite(ell) & (w > 0)
        moments += [np.sum(w[ok]), np.sum(w[ok] * ell[ok]), np.sum(w[ok] * ell[ok] ** 2)]
    at = model.atoms
    p, ell = at.p[np.isfinite(at.loss) & (at.p > 0)], at.loss[np.isfinite(at.loss) & (at.p > 0)]
    with np.errstate(over="ignore", invalid="ignore"):
        moments += [np.sum(p), np.sum(p * ell), np.sum(p * ell**2)]
        if moments[0] <= 0.0:
            return 1e-9
        mean = moments[1] / moments[0]
        var = moments[2] / moments[0] - mean * mean
    if not math.isfinite(var):
        raise UnsupportedEventError("the leaf's losses overflow float64 when squared; no discretization of "
                                    "the loss can hold them")
    return max(math.sqrt(max(var, 0.0)), 1e-9)


def _grid(parts: List[Part], discretization: Optional[float], tail: float, steps: int,
          plan: Optional[TiltPlan], gap: float, max_points: int) -> float:
    """Leaf grid spacing h: ``discretization``; else from the plan, the h whose leaf splits have
    half the target Scarf variance (steps·h²/4 = V/2, :func:`_variance_target`), but at least two
    points per leaf spread and :data:`MIN_POINTS` across 32 composed spreads (both relaxed with the
    settings' gap) — the spread of a leaf being its tilted standard deviation, or its untilted one
    over :data:`FALLBACK_POINTS_PER_SD` where that is wider (a bounded loss tilted far sits on one
    atom); without a plan, the smallest untilted leaf spread over :data:`FALLBACK_POINTS_PER_SD`.
    Made coarser if a leaf's loss range needs more than ``max_points`` points. Atom-only leaves
    whose non-zero losses are all ±a get h = a, and atom-only leaves on a power-of-two lattice
    (:func:`_atom_lattice`; random allocation's dominating pair) its step when that is at least
    1/:data:`LATTICE_REFINE` of the rule's h and within ``max_points``: such a grid holds them
    exactly (no split, nothing to pay in either bound)."""
    if discretization is not None:
        return check_positive("discretization", discretization)
    if all(not m.pieces for part in parts for m in part.models):
        mags = {abs(float(x)) for part in parts for m in part.models for x in m.atoms.loss
                if math.isfinite(x) and x != 0.0}
        if len(mags) == 1 and max(mags) <= MAX_ATOM_GRID:
            return mags.pop()
    if plan is None:
        h = min(_leaf_spread(part.models[0], tail) for part in parts) / FALLBACK_POINTS_PER_SD
    else:
        composed = math.sqrt(sum(part.count * sd * sd for part, sd in zip(parts, plan.spreads) if math.isfinite(sd)))
        h = math.sqrt(2.0 * _variance_target(plan, gap, composed) / steps)
        spreads = [sd if math.isfinite(sd) and 0.5 * sd >= h else
                   max(sd if math.isfinite(sd) else 0.0, _leaf_spread(part.models[0], tail) / FALLBACK_POINTS_PER_SD)
                   for part, sd in zip(parts, plan.spreads)]
        relax = gap / DEFAULT_SETTINGS[0]
        width = 32.0 * math.sqrt(sum(part.count * sd * sd for part, sd in zip(parts, spreads)))
        h = min(h, 0.5 * math.sqrt(relax) * min(spreads), width / (MIN_POINTS / relax))
    return _bounded_grid(parts, h, tail, max_points)


def _bounded_grid(parts: List[Part], h: float, tail: float, max_points: int) -> float:
    """``h`` made coarser if a leaf's loss range needs more than ``max_points`` points, or the
    lattice step of atom-only leaves (:func:`_atom_lattice`) when it is at least
    1/:data:`LATTICE_REFINE` of ``h`` and within ``max_points``."""
    span = max(loss_span(m, tail) for part in parts for m in part.models)
    lattice = _atom_lattice(parts)
    if lattice is not None and lattice * LATTICE_REFINE >= h and span <= lattice * max_points:
        return lattice
    return max(h, span / max_points)


def _atom_lattice(parts: List[Part]) -> Optional[float]:
    """The largest power of two a with every finite loss of every pair in aℤ, when all pairs are
    atom-only (random allocation's dominating pair lives on 2^−m·ℤ), else None. Read off the
    binary expansions: |ℓ| = M·2^(e−53) with M a 53-bit integer, whose lowest set bit gives the
    largest power of two dividing ℓ."""
    if any(m.pieces for part in parts for m in part.models):
        return None
    losses = np.concatenate([m.atoms.loss[np.isfinite(m.atoms.loss) & (m.atoms.p > 0)]
                             for part in parts for m in part.models])
    losses = np.abs(losses[losses != 0.0])
    if losses.size == 0:
        return None
    mantissa, exponent = np.frexp(losses)  # |ℓ| = mantissa·2^exponent, mantissa in [0.5, 1)
    whole = np.ldexp(mantissa, 53).astype(np.int64)  # exact: a 53-bit integer
    low_bit = np.log2((whole & -whole).astype(float)).astype(np.int64)  # exact: a power of two
    return math.ldexp(1.0, int(np.min(exponent - 53 + low_bit)))


def wide_bins(steps: int) -> Optional[Tuple[float, int]]:
    """(τ, K) for :func:`~dpcore.pld.discretize.discretize`'s ``wide`` in a composition of
    ``steps`` leaf instances, or None (all bins h wide).

    Tail bins K·h wide beyond P-mass τ = :data:`WIDE_LAMBDA`/(4·steps) on each side of a piece
    (so about WIDE_LAMBDA instances in all fall in one). They cost the upper bound practically
    nothing; the optimistic bound allows k ≈ 3 wide splits of extra squared width (K² − 1)h²
    (:meth:`~dpcore.pld.pmf.GridPld._shift`), so K is the largest power of two ≤
    :data:`WIDE_FACTOR` with 3(K² − 1) ≤ steps/10 — at most ~10 % more squared split width than
    the steps·h² of the leaf splits, i.e. ≤ 5 % on the optimistic bound's shift.
    """
    factor = WIDE_FACTOR
    while factor > 1 and 3 * (factor * factor - 1) > 0.1 * steps:
        factor //= 2
    return (WIDE_LAMBDA / (4.0 * steps), factor) if factor > 1 else None


def composed_plds(
    event: PrivacyEvent,
    *,
    discretization: Optional[float] = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    max_points: Optional[int] = None,
    fast: bool = False,
    orders: Optional[Sequence[int]] = None,
    settings: Optional[Tuple[float, int]] = None,
    delta: Optional[float] = None,
    epsilon: Optional[float] = None,
) -> Tuple[List[GridPld], float]:
    """Composed grid PLDs of ``event``, one per order of neighbours, and the leaf grid spacing h.

    ``settings`` = (target gap, max window points) overrides :data:`DEFAULT_SETTINGS` /
    :data:`FAST_SETTINGS` (``fast``); an explicit ``discretization`` / ``max_points`` overrides
    either value. The tilt is chosen for the ε query at ``delta`` or the δ query at ``epsilon``
    (:mod:`~dpcore.pld.tilt`; default: an ε query at δ = 1e-5). ``orders`` selects which orders of
    neighbours to compose (default: all; index 0 is the remove order).
    Raises :class:`~dpcore.events.UnsupportedEventError` for events without a dominating pair
    here, whose grid would exceed :data:`~dpcore.pld.discretize.MAX_GRID_POINTS` points, or whose
    leaf quadrature would exceed :data:`~dpcore.pld.discretize.MAX_QUADRATURE_PANELS` panels
    (subsampled Gaussian noise multipliers ≲ 4e-6).
    """
    parts = _parts(event)
    target = (1e-5 if delta is None and epsilon is None else delta, epsilon)
    return _compose_parts(parts, discretization=discretization, tail_mass=tail_mass, max_points=max_points,
                          fast=fast, orders=orders, settings=settings, target=target)


def _resolved(fast: bool, settings: Optional[Tuple[float, int]], max_points: Optional[int]) -> Tuple[float, int]:
    gap, points = settings or (FAST_SETTINGS if fast else DEFAULT_SETTINGS)
    return gap, (max_points if max_points is not None else points)


def _variance_target(plan: TiltPlan, gap: float, spread: float) -> float:
    """Scarf variance V of all splits for a relative gap ``gap`` of the optimistic bound: the gap in ε
    is ≈ the density of the loss at ε over its tail mass (the hazard, ≈ max(θ, 1/sd) with sd the
    composed tilted standard deviation ``spread`` or the untilted one) times V, relative to ε —
    estimated by the smaller of the plan's ε and its Gaussian approximation's:
    V = gap·ε/(KAPPA·hazard)."""
    hazard = max(plan.theta, 1.0 / spread if spread > 0.0 else 0.0, 1.0 / plan.gaussian_spread, 0.5)
    eps = min(plan.epsilon, plan.gaussian_epsilon)
    return gap * max(eps, 1.0 / hazard) / (KAPPA * hazard)


def _alias(plan: Optional[TiltPlan], delta: Optional[float]) -> float:
    """Relative tilted aliasing allowed in all: :data:`ALIAS_FRACTION` of δ read at the estimated PLD
    ε (a tilted ℓ1 error e costs e·exp(Λ(θ) − θε) of δ there, more than at the plan's RDP ε where
    the RDP bound is loose, e.g. at small sampling rates); for δ queries, 1e-2 of the Chernoff bound."""
    if plan is None:
        return ALIAS_FRACTION * 1e-6
    target = math.log(delta) if delta is not None else plan.log_chernoff - math.log(100.0)
    # read at the estimated PLD ε (10 % below the smaller estimate), exp(Λ(θ) − θε) is this much larger
    estimate = 0.9 * min(plan.epsilon, plan.gaussian_epsilon) if delta is not None else plan.epsilon
    at = plan.log_chernoff + plan.theta * max(plan.epsilon - estimate, 0.0)
    log_alias = math.log(ALIAS_FRACTION) + min(0.0, target - at)
    return math.exp(max(log_alias, -690.0))


def _leaves(parts: List[Part], h: float, leaf_tail: float, order: int, cache: dict) -> List[Tuple[GridPld, int]]:
    """The parts' pairs of one order discretised on hℤ (memoised in ``cache`` per pair). The split
    weights are evaluated in float64 unless the upward roundings this costs, summed over the
    steps, would exceed :data:`EXTENDED_BIAS` of the mass; then in extended precision."""
    steps = sum(part.count for part in parts)
    wide = wide_bins(steps)
    out = []
    for part in parts:
        model = part.models[order]
        if id(model) not in cache:
            leaf = discretize(model, h, leaf_tail, extended=False, wide=wide)
            if steps * leaf.bias > EXTENDED_BIAS:
                leaf = discretize(model, h, leaf_tail, extended=True, wide=wide)
            cache[id(model)] = leaf
        out.append((cache[id(model)], part.count))
    return out


def _compose_parts(parts: List[Part], *, discretization: Optional[float], tail_mass: float,
                   max_points: Optional[int], fast: bool, orders: Optional[Sequence[int]],
                   settings: Optional[Tuple[float, int]], target: Tuple[Optional[float], Optional[float]],
                   ) -> Tuple[List[GridPld], float]:
    """:func:`composed_plds` on the flattened parts of an event."""
    tail_mass = check_positive("tail_mass", tail_mass)
    if not parts:
        return [], 0.0
    steps = sum(part.count for part in parts)
    leaf_tail = tail_mass / (4.0 * steps)
    gap, points = _resolved(fast, settings, max_points)
    points = check_positive_int("max_points", points, minimum=64)
    if target[0] is None:
        gap *= DELTA_QUERY_GAP
    plan = rdp_tilt([part.event for part in parts], [part.count for part in parts], *target)
    if plan is not None and target[0] is not None and steps > 1 and plan.theta <= TILTS[0] and plan.epsilon > 100.0:
        # an ε query whose Chernoff-optimal tilt is below the smallest tried: the composed loss of
        # many steps spreads over more than ~1e3 nats and its ε is in the thousands or more
        spread = math.sqrt(sum(part.count * sd * sd for part, sd in zip(parts, plan.spreads) if math.isfinite(sd)))
        raise UnsupportedEventError(
            f"count={steps}: the composed privacy loss spreads over ~{spread:.3g} nats (RDP epsilon ~{plan.epsilon:.3g}), "
            "beyond the range of the 'pld' accountant's grid; use accountant='rdp' or 'auto'")
    h = _grid(parts, discretization, leaf_tail, steps, plan, gap, MAX_LEAF_POINTS[1 if fast else 0])
    cache: Dict[int, GridPld] = {}
    out = []
    for order in (orders if orders is not None else range(number_of_orders(parts))):
        leaves = _leaves(parts, h, leaf_tail, order, cache)
        theta = plan.theta if plan is not None else leaf_tilt(leaves, *target)
        out.append(_compose_tilted(leaves, theta, points, _alias(plan, target[0]), target))
    return out, h


def _compose_tilted(leaves: List[Tuple[GridPld, int]], theta: float, points: int, alias: float,
                    target: Tuple[Optional[float], Optional[float]]) -> GridPld:
    """All leaves composed at tilt θ, the coarsenings allowed as much split variance as the leaves'
    own splits; redone once — θ from the leaves' own moment generating functions at the first
    answer, aliasing budget 1e-4 times smaller — when the error terms exceed
    :data:`REFINE_FRACTION` of δ."""
    budget = sum(count * math.expm1(min(leaf.log_var, 700.0)) for leaf, count in leaves)
    delta, epsilon = target
    infinite = _composed_inf_mass(leaves)
    if delta is not None and infinite >= delta:  # δ(ε) ≥ the +∞ mass for every ε: no finite ε
        first = leaves[0][0]
        return GridPld(first.h, 0, np.zeros(1), infinite, 0.0, 0.0, sum(c * leaf.edge for leaf, c in leaves),
                       sum(c for _, c in leaves), 0.0, theta=theta)

    def run(t: float, a: float) -> GridPld:
        return compose_counts([(leaf.with_tilt(t), count) for leaf, count in leaves], max_points=points,
                              alias=a, spread_budget=budget)

    pld = run(theta, alias)
    if delta is not None:
        at = pld.epsilon_upper(delta)
        scale = delta
        if not math.isfinite(at):
            at = _grid_root(pld, delta)
    else:
        at = epsilon
        scale = max(pld.delta_upper(epsilon), 1e-300)
    errors = pld.err + pld.moved + pld.bias
    if not math.isfinite(at) or pld.error_scale(at) * errors <= REFINE_FRACTION * scale:
        return pld
    return run(leaf_tilt(leaves, None, at), 1e-4 * alias)


def untilted_plds(event: PrivacyEvent, *, gap: float, tail_mass: float, max_points: Optional[int] = None,
                  discretization: Optional[float] = None, orders: Optional[Sequence[int]] = None,
                  ) -> Tuple[List[GridPld], float]:
    """Composed grid PLDs of ``event`` at tilt θ = 0, one per order of neighbours (``orders``:
    default all), and the leaf grid spacing h — for curves read at every real ε (trade-off curves,
    :mod:`dpcore.pld.tradeoff`).

    At θ = 0 every error term of :class:`~dpcore.pld.pmf.GridPld` is an absolute ℓ1 bound on the
    P-masses, valid at every ε alike (a tilt makes them relative to δ at one ε and large below it).
    The grid (``discretization`` unless given) is the one whose splits' Scarf variance is
    V = gap·√(2π)·sd/:data:`KAPPA_CURVE` (sd: the composed loss's standard deviation under P, from
    the leaves' untilted spreads), half of it for the leaf splits (steps·h²/4 = V/2) and half for
    the levels' coarsenings: the optimistic bound's deficit at any ε is ≈ KAPPA_CURVE·V times the
    loss density there, about 1/(√(2π)·sd) at most (:func:`~dpcore.pld.lower.interval_deficit`).
    At least :data:`CURVE_POINTS_PER_SD` points per leaf spread and :data:`CURVE_POINTS_GAP`/gap
    across 32 composed spreads; when every finite atom of the leaves has one magnitude a (Laplace,
    randomized response), h divides a, so that the atoms sit on grid points; coarser or on the
    atoms' lattice as in :func:`_bounded_grid`. ``tail_mass`` is the total P-mass the leaf cuts move and each
    composition's aliasing budget (both absolute).
    """
    gap = check_positive("gap", gap)
    tail_mass = check_positive("tail_mass", tail_mass)
    points = check_positive_int("max_points", max_points if max_points is not None else DEFAULT_MAX_POINTS,
                                minimum=64)
    parts = _parts(event)
    if not parts:
        return [], 0.0
    steps = sum(part.count for part in parts)
    leaf_tail = tail_mass / (4.0 * steps)
    if discretization is not None:
        h = check_positive("discretization", discretization)
    else:
        spreads = [_leaf_spread(part.models[0], leaf_tail) for part in parts]
        composed = math.sqrt(sum(part.count * sd * sd for part, sd in zip(parts, spreads)))
        variance = gap * math.sqrt(2.0 * math.pi) * composed / KAPPA_CURVE
        h = min(math.sqrt(2.0 * variance / steps), min(spreads) / CURVE_POINTS_PER_SD,
                32.0 * composed * gap / CURVE_POINTS_GAP)
        mags = {abs(float(x)) for part in parts for m in part.models for x in m.atoms.loss[m.atoms.p > 0]
                if math.isfinite(x) and x != 0.0}
        if len(mags) == 1:  # atoms on grid points: a split atom moves the curve by O(h), a split density by O(h²)
            a = mags.pop()
            h = a / math.ceil(a / h)
        h = _bounded_grid(parts, h, leaf_tail, MAX_LEAF_POINTS[0])
    cache: Dict[int, GridPld] = {}
    out = []
    for order in (orders if orders is not None else range(number_of_orders(parts))):
        leaves = _leaves(parts, h, leaf_tail, order, cache)
        budget = sum(count * math.expm1(min(leaf.log_var, 700.0)) for leaf, count in leaves)
        out.append(compose_counts([(leaf.with_tilt(0.0), count) for leaf, count in leaves], max_points=points,
                                  alias=tail_mass, spread_budget=budget))
    return out, h


def _composed_inf_mass(leaves: List[Tuple[GridPld, int]]) -> float:
    """P-mass at loss +∞ of the composition, 1 − Π(1 − p∞)^k, rounded up."""
    log_keep = sum(count * math.log1p(-min(leaf.inf_mass, 1.0)) if leaf.inf_mass < 1.0 else -math.inf
                   for leaf, count in leaves)
    return min(1.0, -math.expm1(log_keep) * (1.0 + 1e-12)) if math.isfinite(log_keep) else 1.0


def _grid_root(pld: GridPld, delta: float) -> float:
    """Least grid loss whose computed δ (without the error terms) is ≤ δ — a point estimate."""
    ell, a, c, _ = pld._curve
    at = ell[1:]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        vals = a[1:] - c[1:] * np.exp(np.minimum(at, 700.0)) + pld.inf_mass
    ok = np.flatnonzero(vals <= delta)
    return float(at[ok[0]]) if ok.size else math.inf


def number_of_orders(parts: List[Part]) -> int:
    """1 when every leaf pair is symmetric (one PLD), else 2 (remove and add orders)."""
    return 1 if all(part.models[0] is part.models[1] for part in parts) else 2


def _query_upper(pld: GridPld, delta: Optional[float], epsilon: float) -> float:
    return pld.epsilon_upper(delta) if delta is not None else pld.delta_upper(epsilon)


def _composed(event: PrivacyEvent, delta: Optional[float], epsilon: float = 0.0, **kw) -> Tuple[List[GridPld], float]:
    """:func:`composed_plds` for an ε query at ``delta`` (or a δ query at ``epsilon``, ``delta=None``).

    With two orders of neighbours (Poisson sampling) and the default (not ``fast``) settings, the
    remove order is composed with the requested settings and the add order first on a coarse grid
    (:data:`SCREEN_SETTINGS`), then on the ``fast`` one, then with the requested settings, stopping
    as soon as its upper bound is not above the remove order's. Every returned PLD is a certified
    upper bound for its order, so the maximum of their upper bounds is the refined one whenever a
    screening PLD is kept.
    """
    parts = _parts(event)
    kw = dict(dict(discretization=None, tail_mass=DEFAULT_TAIL_MASS, max_points=None, fast=False, orders=None,
                   settings=None), **kw)
    kw["target"] = (delta, None if delta is not None else epsilon)
    if kw["fast"] or number_of_orders(parts) == 1 or not parts:
        return _compose_parts(parts, **kw)
    plds, h = _compose_parts(parts, **dict(kw, orders=[0]))
    bound = _query_upper(plds[0], delta, epsilon)
    for screen in (SCREEN_SETTINGS, FAST_SETTINGS, None):  # ever finer, until below the remove order
        add, _ = _compose_parts(parts, **dict(kw, orders=[1]) if screen is None else dict(
            kw, settings=screen, discretization=None, max_points=None, orders=[1]))
        if _query_upper(add[0], delta, epsilon) <= bound:
            break
    return plds + add, h


def _details(plds: List[GridPld], h: float, bounds: Tuple[float, float], tail_mass: float, at: float) -> dict:
    """Result details; the error terms are reported as their contribution to δ at ε = ``at``."""
    lo, up = bounds
    at = at if math.isfinite(at) else 0.0
    return {
        "bounds": (lo, up),
        "gap": up - lo,
        "relative_gap": (up - lo) / up if up > 0 and math.isfinite(up) else 0.0,
        "discretization": h,
        "tail_mass": tail_mass,
        "orders": len(plds),
        "grid_points": [int(p.pmf.size) for p in plds],
        "tilt": [p.theta for p in plds],
        "float_error": [p.error_scale(at) * p.err for p in plds],
        "truncated_mass": [p.error_scale(at) * p.moved + p.inf_moved for p in plds],
        "leaf_cut_mass": [p.edge for p in plds],
    }


_MEMO: contextvars.ContextVar[Optional[Dict[tuple, PrivacyResult]]] = contextvars.ContextVar("pld_memo", default=None)


@contextlib.contextmanager
def memoised() -> Iterator[None]:
    """Within the block, a repeated :func:`pld_epsilon` query (same event, δ and options) returns
    the stored result instead of recomputing it (the computation is deterministic; each call gets
    its own copy of ``details``).

    Calibration uses it: its ``fast`` proxy and ``accountant="auto"`` (which runs the ``fast``
    PLD) evaluate the same events. The store lives for the block only (nested blocks share it).
    """
    token = _MEMO.set(_MEMO.get() if _MEMO.get() is not None else {})
    try:
        yield
    finally:
        _MEMO.reset(token)


def pld_epsilon(
    event: PrivacyEvent,
    delta: float,
    *,
    discretization: Optional[float] = None,
    tail_mass: Optional[float] = None,
    certify: bool = False,
    fast: bool = False,
    max_points: Optional[int] = None,
) -> PrivacyResult:
    """Least ε (certified upper bound) with ``event`` (ε, δ)-DP, with an optimistic lower bound.

    Parameters
    ----------
    event : PrivacyEvent
        The event tree (see :mod:`dpcore.pld.leaves` for what is supported).
    delta : float
        Target δ in (0, 1).
    discretization : float, optional
        Loss-grid spacing h in nats (smaller: tighter and slower). Default: automatic.
    tail_mass : float, optional
        Total P-mass the leaf cuts may move (default :data:`TAIL_FRACTION`·δ: charged to δ in full).
    certify : bool
        Re-check the leaf discretisation and the final δ in mpmath
        (:func:`dpcore.pld.certify.certify_pld`); raises ``CertificationError`` on failure.
    fast : bool
        Coarser grid and shorter windows (:data:`FAST_SETTINGS`): a few times faster, still a
        certified upper bound, less tight (``accountant="auto"`` screens with it).
    max_points : int, optional
        Longest characteristic-function window (≥ 64; default from the settings); larger lets
        the grid stay finer over more steps.

    Returns
    -------
    PrivacyResult
        ``epsilon`` is the upper bound; ``details["bounds"] = (epsilon_lower, epsilon_upper)``
        brackets the exact ε of the stated dominating pairs, ``details["gap"]`` their difference.
    """
    delta = check_delta("delta", delta)
    memo = _MEMO.get()
    key = (event, delta, discretization, tail_mass, certify, fast, max_points)
    try:
        hash(key)
    except TypeError:  # an unhashable option (e.g. a NumPy array): validated by the computation, not memoised
        memo = None
    if memo is not None and key in memo:
        return _unshared(memo[key])
    result = _pld_epsilon(event, delta, discretization, tail_mass, certify, fast, max_points)
    if memo is not None:
        memo[key] = result
        return _unshared(result)
    return result


def _unshared(result: PrivacyResult) -> PrivacyResult:
    """A memoised result with its own copy of ``details`` (a caller editing it leaves the memo intact)."""
    return dataclasses.replace(result, details=copy.deepcopy(result.details))


def _pld_epsilon(event: PrivacyEvent, delta: float, discretization: Optional[float], tail_mass: Optional[float],
                 certify: bool, fast: bool, max_points: Optional[int]) -> PrivacyResult:
    """:func:`pld_epsilon` without the memo (``delta`` already checked)."""
    if tail_mass is None and TAIL_FRACTION * delta < _LEAST_NORMAL:  # was "tail_mass must be in (0, inf); got 0.0"
        raise UnsupportedEventError(f"the 'pld' accountant needs delta >= {_LEAST_NORMAL / TAIL_FRACTION:.4g} (its tail "
                                    f"mass {TAIL_FRACTION:g}·delta must be a normal float), or an explicit tail_mass; "
                                    f"got delta={delta!r}")
    tail = TAIL_FRACTION * delta if tail_mass is None else check_positive("tail_mass", tail_mass)
    points = _points(max_points)
    plds, h = _composed(event, delta, discretization=discretization, tail_mass=tail, fast=fast, max_points=points)
    if not plds:
        return PrivacyResult(0.0, delta, event.relation, "pld", "no private release", details={"bounds": (0.0, 0.0), "gap": 0.0})
    pairs = [p.epsilon_bounds(delta) for p in plds]
    bounds = (round_down(max(b[0] for b in pairs)), round_up(max(b[1] for b in pairs)))
    target = (FAST_SETTINGS if fast else DEFAULT_SETTINGS)[0]
    if discretization is None and 0.0 < bounds[1] < math.inf and bounds[1] - bounds[0] > GAP_LIMIT * target * bounds[1]:
        # the grid model misjudged this case: once more, finer by the measured factor (the
        # optimistic bound's gap is about proportional to the split variance, ∝ h²)
        relative = (bounds[1] - bounds[0]) / bounds[1]
        finer = _refined_grid(event, h, h * max(math.sqrt(target / relative), 1.0 / 16.0), tail, fast)
        if finer is not None:
            plds, h = _composed(event, delta, discretization=finer, tail_mass=tail, fast=fast, max_points=points)
            pairs = [p.epsilon_bounds(delta) for p in plds]
            bounds = (round_down(max(b[0] for b in pairs)), round_up(max(b[1] for b in pairs)))
    lower = _dominated_lower(event, bounds[0], lambda p: p.epsilon_bounds(delta)[0], delta, discretization=h,
                             tail_mass=tail, fast=fast, max_points=points)
    bounds = (round_down(lower), bounds[1])
    result = PrivacyResult(bounds[1], delta, event.relation, "pld", _METHOD,
                           precision=f"float64 grid h={h:.3g} nats", details=_details(plds, h, bounds, tail, bounds[1]))
    if certify:
        from .certify import certify_pld

        result = certify_pld(event, result, plds, h, tail)
    return result


def _dominated_lower(event: PrivacyEvent, lower: float, read, delta: Optional[float], **kw) -> float:
    """The lower bound to report: ``lower`` (from the dominating pairs) unless the event has leaves
    whose dominating pair is not exact (random allocation): then the bound ``read`` from the
    composition of their dominated pairs, or 0 with ``fast`` (the fast grid reports the upper bound only)."""
    if not has_dominated_pairs(event):
        return lower
    if kw["fast"]:
        return 0.0
    with dominated_pairs():
        low_plds, _ = _composed(event, delta, **kw)
    return max(read(p) for p in low_plds)


def pld_delta(
    event: PrivacyEvent,
    epsilon: float,
    *,
    discretization: Optional[float] = None,
    tail_mass: Optional[float] = None,
    fast: bool = False,
    max_points: Optional[int] = None,
) -> PrivacyResult:
    """Least δ (certified upper bound) with ``event`` (ε, δ)-DP; ``details["bounds"]`` = (δ_lower, δ_upper).

    Parameters as in :func:`pld_epsilon`; ``epsilon`` ≥ 0 in nats.
    """
    eps = check_nonnegative("epsilon", epsilon)
    tail = DEFAULT_TAIL_MASS if tail_mass is None else check_positive("tail_mass", tail_mass)
    plds, h = _composed(event, None, discretization=discretization, tail_mass=tail, fast=fast,
                        max_points=_points(max_points), epsilon=eps)
    if not plds:
        return PrivacyResult(eps, 0.0, event.relation, "pld", "no private release", details={"bounds": (0.0, 0.0), "gap": 0.0})
    pairs = [p.delta_bounds(eps) for p in plds]
    bounds = (round_down(max(b[0] for b in pairs)), round_up(max(b[1] for b in pairs)))
    target = (FAST_SETTINGS if fast else DEFAULT_SETTINGS)[0] * DELTA_QUERY_GAP
    relative = _epsilon_gap(plds, eps, bounds)
    if discretization is None and relative > GAP_LIMIT * target:  # as in pld_epsilon, in ε terms
        finer = _refined_grid(event, h, h * max(math.sqrt(target / relative), 1.0 / 16.0), tail, fast)
        if finer is not None:
            plds, h = _composed(event, None, discretization=finer, tail_mass=tail, fast=fast,
                                max_points=_points(max_points), epsilon=eps)
            pairs = [p.delta_bounds(eps) for p in plds]
            bounds = (round_down(max(b[0] for b in pairs)), round_up(max(b[1] for b in pairs)))
    lower = _dominated_lower(event, bounds[0], lambda p: p.delta_bounds(eps)[0], None, discretization=h,
                             tail_mass=tail, fast=fast, max_points=_points(max_points), epsilon=eps)
    bounds = (round_down(lower), bounds[1])
    return PrivacyResult(eps, bounds[1], event.relation, "pld", _METHOD,
                         precision=f"float64 grid h={h:.3g} nats", details=_details(plds, h, bounds, tail, eps))


def _refined_grid(event: PrivacyEvent, h: float, finer: float, tail_mass: float, fast: bool) -> Optional[float]:
    """The grid spacing of the refining pass: ``finer``, made coarser as the first pass's grid is
    (:func:`_bounded_grid`) when a leaf's loss range would need more than :data:`MAX_LEAF_POINTS`
    points; ``None`` when that leaves nothing finer than ``h``. Without the bound, a query whose
    optimistic bound is limited by float error rather than by h (ε in the millions and more) asked
    for 16× finer leaves of millions of points each, for no gain (σ = 1e-5 composed 1000 times: 42 s)."""
    parts = _parts(event)
    steps = sum(part.count for part in parts)
    bounded = _bounded_grid(parts, finer, tail_mass / (4.0 * steps), MAX_LEAF_POINTS[1 if fast else 0])
    return bounded if bounded < h else None


def _epsilon_gap(plds: List[GridPld], epsilon: float, bounds: Tuple[float, float]) -> float:
    """A δ query's gap in ε terms, relative to ε: how far above ``epsilon`` the upper bound
    comes down to the lower bound δ_lower (0 when there is nothing to measure)."""
    lower = bounds[0]
    if not (epsilon > 0.0 and 0.0 < lower < bounds[1] < 1.0):
        return 0.0
    shifted = max(p.epsilon_upper(lower) for p in plds)
    return (shifted - epsilon) / epsilon if math.isfinite(shifted) else 0.0


def _points(max_points: Optional[int]) -> Optional[int]:
    return None if max_points is None else check_positive_int("max_points", max_points, minimum=64)
