"""The ``"pld"`` accountant: certified two-sided (ε, δ) bounds from privacy-loss distributions.

Pipeline (each step keeps the result an upper bound of the exact value, see the submodules):

1. flatten the event tree into ``[(leaf, count)]`` (all un-sampled Gaussian leaves merged into one
   exact Gaussian pair, :func:`_merge_gaussians`) and map each leaf to its dominating pair(s)
   (:mod:`dpcore.pld.leaves`); Poisson sampling under add_remove gives two orders of neighbours,
   which are analysed separately and the larger ε (δ) is reported (Zhu, Dong, Wang 2022);
2. discretise each pair pessimistically on the loss grid hℤ (:mod:`dpcore.pld.discretize`; in
   long compositions the leaves' light tails on K·h-wide bins, :func:`wide_bins`);
3. compose: ``count``-fold by repeated FFT squaring, different leaves by FFT convolution, with
   tail truncation that only moves loss up (:mod:`dpcore.pld.pmf`);
4. read off ε(δ) / δ(ε) with every float-error and truncation term added to δ, and the
   optimistic companion from the Hoeffding bound on the discretisation moves. When the float
   error bound exceeds :data:`PRECISE_FRACTION` of δ (tiny δ), steps 2–3 are redone with every
   FFT in extended precision (:func:`_composed`).

The leaf grid spacing h (``discretization``) defaults to the smallest leaf standard deviation
divided by :data:`LEAF_POINTS_PER_SD`. While self-composing, a block whose central 99.8 % spans
more than ``max_bulk`` (default :data:`DEFAULT_MAX_BULK`) grid points is moved to a grid twice as
coarse by the same pessimistic split (:meth:`~dpcore.pld.pmf.GridPld.coarsen`): array sizes stay
bounded whatever the number of steps, and each coarsening adds one split per block instance — the
same total spread per level as the leaf grid when the block's width doubles every two levels.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import dataclasses
import math
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .._validation import check_delta, check_nonnegative, check_positive, check_positive_int
from ..events import GaussianEvent, NoOpEvent, PrivacyEvent, UnsupportedEventError
from ..result import PrivacyResult, round_down, round_up
from .discretize import cut, discretize, loss_span
from .leaves import leaf_models
from .losses import LossModel
from .pmf import GridPld
from .random_allocation import dominated_pairs, has_dominated_pairs

__all__ = ["DEFAULT_MAX_BULK", "DEFAULT_TAIL_MASS", "LEAF_POINTS_PER_SD", "composed_plds", "memoised", "pld_epsilon",
           "pld_delta"]

#: leaf grid points per standard deviation of the leaf's loss (default discretisation)
LEAF_POINTS_PER_SD = 192
#: grid points across the central 99.8 % of a block before it is coarsened
DEFAULT_MAX_BULK = 4096
#: squared blocks reused at least this often are computed with extended-precision FFTs
EXTENDED_USES = 128
#: ``fast=True`` (used by ``accountant="auto"``): (leaf points per sd, max bulk, extended uses)
FAST_SETTINGS = (32, 1024, 1024)
#: most grid points of one leaf with the default discretisation (``fast``: the second value); the
#: grid is made coarser when a leaf's loss range needs more (e.g. very small sampling rates)
MAX_LEAF_POINTS = (1 << 19, 1 << 16)
#: total P-mass the tail truncations may move (default of δ queries and curves)
DEFAULT_TAIL_MASS = 1e-14
#: default of ε queries: ``min(EPSILON_TAIL_MASS, 1e-6·δ)`` — at most a millionth of δ (for
#: DP-SGD the shorter arrays also lower the float-error bound by more than the tails add)
EPSILON_TAIL_MASS = 1e-11
#: widest tail bins of a leaf, in leaf grid steps (:func:`wide_bins`)
WIDE_FACTOR = 16
#: expected number of leaf instances (over all steps) whose loss falls in a wide tail bin
WIDE_LAMBDA = 1e-2
_U = 2.0**-53
_METHOD = ("privacy loss distribution: connect-the-dots discretisation (Doroshenko et al. 2022), "
           "FFT composition of dominating pairs (Zhu, Dong, Wang 2022)")


def _parts(event: PrivacyEvent) -> List[Tuple[Tuple[LossModel, LossModel], int]]:
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
    return [(models[e], count) for e, count in flat]


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


def _grid(parts, discretization: Optional[float], tail: float, per_sd: int, max_points: int) -> float:
    if discretization is not None:
        return check_positive("discretization", discretization)
    h = min(_leaf_spread(models[0], tail) for models, _ in parts) / per_sd
    span = max(loss_span(m, tail) for models, _ in parts for m in models)
    h = max(h, span / max_points)
    # atom-only leaves whose finite non-zero losses are all ±a (randomized response, (ε, δ) pairs
    # and their subsampled forms): a grid through ±a carries them without any discretisation error
    if all(not m.pieces for models, _ in parts for m in models):
        mags = {abs(float(x)) for models, _ in parts for m in models for x in m.atoms.loss
                if math.isfinite(x) and x != 0.0}
        if len(mags) == 1:
            a = mags.pop()
            h = a / max(1, math.ceil(a / h))
    return h


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
    max_bulk: int = DEFAULT_MAX_BULK,
    fast: bool = False,
    precise: bool = False,
    orders: Optional[Sequence[int]] = None,
    settings: Optional[Tuple[int, int, int]] = None,
) -> Tuple[List[GridPld], float]:
    """Composed grid PLDs of ``event``, one per order of neighbours, and the leaf grid spacing h.

    ``fast`` selects :data:`FAST_SETTINGS` (coarser grid, float64 FFTs) unless ``discretization``
    / ``max_bulk`` are given explicitly; ``settings`` = (leaf points per sd, max bulk, extended
    uses) overrides both. ``precise`` runs every FFT in extended precision (2048× smaller error
    bound; used when the float64 bound would be too large for the requested δ). ``orders``
    selects which orders of neighbours to compose (default: all; index 0 is the remove order).
    Raises :class:`~dpcore.events.UnsupportedEventError` for events without a dominating pair
    here, whose grid would exceed :data:`~dpcore.pld.discretize.MAX_GRID_POINTS` points, or whose
    leaf quadrature would exceed :data:`~dpcore.pld.discretize.MAX_QUADRATURE_PANELS` panels
    (Gaussian noise multipliers ≲ 4e-6).
    """
    return _compose_parts(_parts(event), discretization=discretization, tail_mass=tail_mass, max_bulk=max_bulk,
                          fast=fast, precise=precise, orders=orders, settings=settings)


def _compose_parts(parts, *, discretization: Optional[float], tail_mass: float, max_bulk: int, fast: bool,
                   precise: bool, orders: Optional[Sequence[int]], settings: Optional[Tuple[int, int, int]],
                   ) -> Tuple[List[GridPld], float]:
    """:func:`composed_plds` on the flattened ``[(pair models, count)]`` of an event."""
    tail_mass = check_positive("tail_mass", tail_mass)
    if not parts:
        return [], 0.0
    steps = sum(c for _, c in parts)
    leaf_tail = tail_mass / (4.0 * steps)
    default = FAST_SETTINGS if fast else (LEAF_POINTS_PER_SD, max_bulk, EXTENDED_USES)
    per_sd, own_bulk, extended_uses = settings or default
    if precise:
        extended_uses = 1
    if (fast or settings) and max_bulk == DEFAULT_MAX_BULK:
        max_bulk = own_bulk
    h = _grid(parts, discretization, leaf_tail, per_sd, MAX_LEAF_POINTS[1 if fast else 0])
    trunc_tail = tail_mass / (4.0 * len(parts))  # per block (self_compose shares it out) and per join
    wide = wide_bins(steps)
    cache: Dict[int, GridPld] = {}
    out = []
    for order in (orders if orders is not None else range(number_of_orders(parts))):
        total: Optional[GridPld] = None
        for models, count in parts:
            model = models[order]
            if id(model) not in cache:
                cache[id(model)] = discretize(model, h, leaf_tail, extended=precise or not (fast or settings),
                                              wide=wide)
            block = cache[id(model)].self_compose(count, trunc_tail, max_bulk=max_bulk, extended_uses=extended_uses)
            total = block if total is None else total.compose(block, trunc_tail, extended=precise)
        out.append(total)
    return out, h


def number_of_orders(parts) -> int:
    """1 when every leaf pair is symmetric (one PLD), else 2 (remove and add orders)."""
    return 1 if all(m[0] is m[1] for m, _ in parts) else 2


#: the float64 FFT error bound may use at most this fraction of δ before the composition is
#: redone with extended-precision FFTs (``precise``)
PRECISE_FRACTION = 1e-2
#: settings of the screening pass that finds the order of neighbours with the largest bound
#: (leaf points per sd, max bulk, extended uses): cheap, still a certified upper bound
SCREEN_SETTINGS = (8, 256, 1 << 30)


def _query_upper(pld: GridPld, delta: Optional[float], epsilon: float) -> float:
    return pld.epsilon_upper(delta) if delta is not None else pld.delta_upper(epsilon)


def _composed(event: PrivacyEvent, delta: Optional[float], epsilon: float = 0.0, **kw) -> Tuple[List[GridPld], float]:
    """:func:`composed_plds`, redone with ``precise=True`` when the float error is large for δ.

    ``delta`` is the target of an ε query; for a δ query (``delta=None``) the comparison is with
    the computed δ(``epsilon``) upper bound. With two orders of neighbours (Poisson sampling) and
    the default (not ``fast``) settings, the remove order is composed with the requested
    settings and the add order first on a coarse grid (:data:`SCREEN_SETTINGS`); the add order is
    recomputed with the requested settings only if its coarse upper bound exceeds the remove
    order's. Every returned PLD is a certified upper bound for its order, so the maximum of their
    upper bounds is the refined one whenever the coarse PLD is kept. (The remove order is the
    larger one for Poisson-subsampled Gaussians over q ∈ [0.001, 0.9], σ ∈ [0.5, 5],
    T ∈ [1, 10⁴] at δ = 1e-5, so it is refined without a screen of its own.)
    """
    parts = _parts(event)
    kw = dict(dict(discretization=None, tail_mass=DEFAULT_TAIL_MASS, max_bulk=DEFAULT_MAX_BULK, fast=False,
                   precise=False, orders=None, settings=None), **kw)
    if kw["fast"] or number_of_orders(parts) == 1:
        return _refined(parts, delta, epsilon, None, kw)
    plds, h = _refined(parts, delta, epsilon, [0], kw)
    coarse, _ = _compose_parts(parts, **dict(kw, settings=SCREEN_SETTINGS, discretization=None,
                                             max_bulk=DEFAULT_MAX_BULK, precise=False, orders=[1]))
    if _query_upper(coarse[0], delta, epsilon) > _query_upper(plds[0], delta, epsilon):
        coarse, _ = _refined(parts, delta, epsilon, [1], kw)
    return plds + coarse, h


def _refined(parts, delta, epsilon, orders, kw) -> Tuple[List[GridPld], float]:
    plds, h = _compose_parts(parts, **dict(kw, orders=orders))
    if not plds:
        return plds, h
    err = max(p.err for p in plds)
    scale = delta if delta is not None else max(p.delta_bounds(epsilon)[1] for p in plds)
    if err > PRECISE_FRACTION * scale:
        plds, h = _compose_parts(parts, **dict(kw, orders=orders, precise=True))
    return plds, h


def _details(plds: List[GridPld], h: float, bounds: Tuple[float, float], tail_mass: float) -> dict:
    lo, up = bounds
    return {
        "bounds": (lo, up),
        "gap": up - lo,
        "relative_gap": (up - lo) / up if up > 0 and math.isfinite(up) else 0.0,
        "discretization": h,
        "tail_mass": tail_mass,
        "orders": len(plds),
        "grid_points": [int(p.pmf.size) for p in plds],
        "float_error": [p.err for p in plds],
        "truncated_mass": [p.moved for p in plds],
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
    max_bulk: int = DEFAULT_MAX_BULK,
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
        Total mass the truncations may move (default ``min(1e-11, 1e-6·δ)``).
    certify : bool
        Re-check the leaf discretisation and the final δ in mpmath
        (:func:`dpcore.pld.certify.certify_pld`); raises ``CertificationError`` on failure.
    fast : bool
        Coarser default grid and float64 FFTs (:data:`FAST_SETTINGS`): a few times faster, still a
        certified upper bound, slightly less tight (``accountant="auto"`` uses it).
    max_bulk : int
        Grid points across a block's central 99.8 % before it is moved to a coarser grid
        (larger: tighter and slower).

    Returns
    -------
    PrivacyResult
        ``epsilon`` is the upper bound; ``details["bounds"] = (epsilon_lower, epsilon_upper)``
        brackets the exact ε of the stated dominating pairs, ``details["gap"]`` their difference.
    """
    delta = check_delta("delta", delta)
    memo = _MEMO.get()
    key = (event, delta, discretization, tail_mass, certify, fast, max_bulk)
    try:
        hash(key)
    except TypeError:  # an unhashable option (e.g. a NumPy array): validated by the computation, not memoised
        memo = None
    if memo is not None and key in memo:
        return _unshared(memo[key])
    result = _pld_epsilon(event, delta, discretization, tail_mass, certify, fast, max_bulk)
    if memo is not None:
        memo[key] = result
        return _unshared(result)
    return result


def _unshared(result: PrivacyResult) -> PrivacyResult:
    """A memoised result with its own copy of ``details`` (a caller editing it leaves the memo intact)."""
    return dataclasses.replace(result, details=copy.deepcopy(result.details))


def _pld_epsilon(event: PrivacyEvent, delta: float, discretization: Optional[float], tail_mass: Optional[float],
                 certify: bool, fast: bool, max_bulk: int) -> PrivacyResult:
    """:func:`pld_epsilon` without the memo (``delta`` already checked)."""
    tail = min(EPSILON_TAIL_MASS, 1e-6 * delta) if tail_mass is None else check_positive("tail_mass", tail_mass)
    plds, h = _composed(event, delta, discretization=discretization, tail_mass=tail, fast=fast,
                        max_bulk=check_positive_int("max_bulk", max_bulk, minimum=16))
    if not plds:
        return PrivacyResult(0.0, delta, event.relation, "pld", "no private release", details={"bounds": (0.0, 0.0), "gap": 0.0})
    pairs = [p.epsilon_bounds(delta) for p in plds]
    lower = _dominated_lower(event, max(b[0] for b in pairs), lambda p: p.epsilon_bounds(delta)[0],
                             delta, discretization=discretization, tail_mass=tail, fast=fast, max_bulk=max_bulk)
    bounds = (round_down(lower), round_up(max(b[1] for b in pairs)))
    result = PrivacyResult(bounds[1], delta, event.relation, "pld", _METHOD,
                           precision=f"float64 grid h={h:.3g} nats", details=_details(plds, h, bounds, tail))
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
    max_bulk: int = DEFAULT_MAX_BULK,
) -> PrivacyResult:
    """Least δ (certified upper bound) with ``event`` (ε, δ)-DP; ``details["bounds"]`` = (δ_lower, δ_upper).

    Parameters as in :func:`pld_epsilon`; ``epsilon`` ≥ 0 in nats.
    """
    eps = check_nonnegative("epsilon", epsilon)
    tail = DEFAULT_TAIL_MASS if tail_mass is None else check_positive("tail_mass", tail_mass)
    plds, h = _composed(event, None, discretization=discretization, tail_mass=tail, fast=fast,
                        max_bulk=check_positive_int("max_bulk", max_bulk, minimum=16), epsilon=eps)
    if not plds:
        return PrivacyResult(eps, 0.0, event.relation, "pld", "no private release", details={"bounds": (0.0, 0.0), "gap": 0.0})
    pairs = [p.delta_bounds(eps) for p in plds]
    lower = _dominated_lower(event, max(b[0] for b in pairs), lambda p: p.delta_bounds(eps)[0], None,
                             discretization=discretization, tail_mass=tail, fast=fast, max_bulk=max_bulk, epsilon=eps)
    bounds = (round_down(lower), round_up(max(b[1] for b in pairs)))
    return PrivacyResult(eps, bounds[1], event.relation, "pld", _METHOD,
                         precision=f"float64 grid h={h:.3g} nats", details=_details(plds, h, bounds, tail))
