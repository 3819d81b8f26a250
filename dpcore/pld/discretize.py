"""Pessimistic discretisation of a privacy-loss model onto the grid hℤ ("connect the dots").

Every loss bin (a, a + h] of the pair (P, Q) is first merged into one atom — a post-processing,
so the merged pair is dominated by (P, Q) — and that atom is then split onto the two grid points
a and a + h with the P- and Q-masses preserved:

    p_{a+h} = ∫_bin (1 − e^{a−L}) dP / (1 − e^{−h}),    p_a = P(bin) − p_{a+h}.

The split pair's hockey-stick curve is the chord interpolation (in e^ε) of the true curve at the
grid points, so it dominates (P, Q) at every ε (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022,
"Connect the dots: tighter discrete approximations of privacy loss distributions", Thm 3.3); by
Zhu, Dong, Wang 2022 (Thm 10) compositions of dominating pairs dominate the composition.

Mass outside the cut range is moved pessimistically: loss beyond the upper cut goes to +∞ (it is
charged to δ in full), loss below the lower cut is rounded *up* to a grid point. Bin integrals are
composite Gauss–Legendre sums in the piece's variable x with panels no longer than a quarter of
the density's scale, so the split weights (1 − e^{a−L}) are evaluated pointwise without the
cancellation of distribution-function differences. Their quadrature error is bounded per panel
from the analytic continuation of the densities (:func:`_quadrature_error`, Trefethen 2008,
Thm 4.5) and added to the bin mass and its upper share like the float error below. The float64 error of the masses is bounded
per bin (:data:`_ERR_UNITS` unit roundoffs of the bin mass, plus as many roundoffs of the loss —
evaluated in extended precision — amplified by |loss|/(1 − e^{−h}) for the split weight). Every
bin mass and its upper share are then rounded *up* by that bound (the rest of the bin goes to the
lower point), so the grid PLD dominates the exact split one in the upper-set sense — more mass,
and moved up — which convolution preserves and which only increases δ(ε); the upper bound
therefore carries no leaf error (``err = 0``), and the ℓ1 size of the rounding is recorded in
``bias`` for the optimistic bound. Relative rather than absolute errors then reach δ: a k-fold
composition inflates δ by a factor ≈ 1 + k·(rounding), instead of adding k·(ℓ1 error).
"""

from __future__ import annotations

import math
from typing import List, Optional, Tuple

import numpy as np

from ..events import UnsupportedEventError
from .losses import LossModel, Piece
from .pmf import GridPld, _sum_up, log_split_factor

__all__ = ["cut", "discretize", "loss_span", "MAX_GRID_POINTS", "MAX_QUADRATURE_PANELS"]

_U = 2.0**-53
#: unit roundoff of the loss evaluation inside the split weights (x87 extended precision)
_U_LOSS = 2.0**-64 if np.finfo(np.longdouble).nmant >= 63 else _U
#: unit roundoffs charged per bin mass (pdf, quadrature sum and split weight each cost a few)
_ERR_UNITS = 16.0
#: Gauss–Legendre rules (n nodes) and the longest panel, in units of the piece's scale
_RULES = {n: np.polynomial.legendre.leggauss(n) for n in (2, 3, 4, 6, 8)}
_PANEL = 0.25
#: each panel uses the fewest nodes whose error factor (64/15)·ρ^{−2(n−1)}/(ρ² − 1) of
#: :func:`_quadrature_error` is below this (8 nodes otherwise); the error bound itself is added
_QUAD_FACTOR = 1e-20
#: where a density grows by more than e^GROWTH over :data:`_RADIUS`·scale (far in the other
#: distribution's tail: e^{a}·q at a large loss a), the bin's panels and their radius shrink by
#: powers of two (at most 2^MAX_SHRINK) until it does not — the quadrature bound scales with the
#: densities' envelope on the panel's square, e^{growth·radius} times their value at the centre
_GROWTH = 16.0
_MAX_SHRINK = 8
#: P-mass outside the x-range where the split weights use extended precision (float64 beyond:
#: the larger error term there multiplies at most this much mass)
_EXTENDED_TAIL = 1e-9
#: refuse grids larger than this many points (memory / time guard)
MAX_GRID_POINTS = 1 << 24
#: refuse a leaf whose cut x-range spans more than this many quadrature panels of length
#: :data:`_PANEL`·scale (time guard, checked before any quadrature: about a second of work). A
#: subsampled Gaussian with noise multiplier σ spans x ∈ [−O(σ), 1 + O(σ)] at scale σ, so this
#: refuses σ ≲ 4e-6 (ε in the millions per step and more), where other accountants apply; an
#: unsampled Gaussian's P-mass lies within O(σ) of x = 1 (:func:`cut` starts there), so it is not refused
MAX_QUADRATURE_PANELS = 1 << 20


def cut(piece: Piece, side: int, tail: float) -> float:
    """x beyond which the piece's P-mass on that side (−1: left, +1: right) is at most ``tail``
    (memoised on the piece object, which lives for one accountant call)."""
    memo = piece.__dict__.setdefault("_cuts", {})
    if (side, tail) not in memo:
        memo[(side, tail)] = _search_cut(piece, side, tail)
    return memo[(side, tail)]


def _search_cut(piece: Piece, side: int, tail: float) -> float:
    end = piece.lo if side < 0 else piece.hi
    if math.isfinite(end):
        return end
    mass = (lambda x: float(piece.cdf_p(np.array([x]))[0])) if side < 0 else (
        lambda x: float(piece.sf_p(np.array([x]))[0]))
    inner = 0.0 if piece.lo < 0.0 < piece.hi else (piece.hi if side < 0 else piece.lo)
    if mass(inner) <= tail:  # the mass lies wholly on the other side of x = 0 (e.g. a tiny sigma)
        return _cut_towards_mass(piece, side, tail, inner, mass)
    step = piece.scale
    outer = inner + side * step
    while mass(outer) > tail:
        inner, step = outer, 2.0 * step
        outer = inner + side * step
    return _bisect_cut(mass, tail, outer, inner, 30)  # tighten: the cut nearest the mass found


def _bisect_cut(mass, tail: float, valid: float, invalid: float, rounds: int) -> float:
    """Bisect between ``valid`` (tail ``mass`` ≤ ``tail``) and ``invalid`` (> ``tail``) for at most
    ``rounds`` halvings; returns the last point that passed the test (a valid cut)."""
    for _ in range(rounds):
        mid = 0.5 * (valid + invalid)
        if mid in (valid, invalid):
            break
        if mass(mid) <= tail:
            valid = mid
        else:
            invalid = mid
    return valid


def _cut_towards_mass(piece: Piece, side: int, tail: float, valid: float, mass) -> float:
    """The cut of :func:`_search_cut` when ``valid`` (an x with tail ``mass`` ≤ ``tail`` on ``side``)
    lies beyond the piece's mass: walk towards the mass in doubling steps of ``scale`` while the
    tail stays ≤ ``tail``, then bisect. The result again has tail mass ≤ ``tail`` (only points
    that passed the test are returned), so it is as valid a cut as ``valid``, only nearer the mass:
    a Gaussian pair at noise 1.6e-4 had its left cut at x = 0, 6300 standard deviations from
    the P-mass, and the grid covered that empty range with millions of bins."""
    end = piece.hi if side < 0 else piece.lo
    with np.errstate(over="ignore", invalid="ignore"):
        if not mass(end) > tail:  # the piece's whole P-mass is within the allowance: keep the cut
            return valid
        step = piece.scale
        probe = valid - side * step
        while (probe < end if side < 0 else probe > end) and mass(probe) <= tail:
            valid, step = probe, 2.0 * step
            probe = valid - side * step
    if not (probe < end if side < 0 else probe > end):
        probe = end
    return _bisect_cut(mass, tail, valid, probe, 60)


def _piece_plan(piece: Piece, tail: float) -> Tuple[float, float, float, float, float, float]:
    """(x_left, x_right, loss_min, loss_max, mass below loss_min, mass above loss_max)."""
    x_left, x_right = cut(piece, -1, tail), cut(piece, +1, tail)
    left_mass = float(piece.cdf_p(np.array([x_left]))[0]) if x_left > piece.lo else 0.0
    right_mass = float(piece.sf_p(np.array([x_right]))[0]) if x_right < piece.hi else 0.0
    with np.errstate(all="ignore"):
        l_left, l_right = (float(v) for v in piece.loss(np.array([x_left, x_right])))
    if piece.increasing:
        return x_left, x_right, l_left, l_right, left_mass, right_mass
    return x_left, x_right, l_right, l_left, right_mass, left_mass


def _bin_piece(piece: Piece, x_left: float, x_right: float, grid: np.ndarray, h: float,
               ext_range: Tuple[float, float]):
    """Bins (g_{j}·h, g_{j+1}·h] between consecutive grid indices ``grid`` (increasing integers):
    (lower index, upper index, P(bin), ∫_bin (1 − e^{a−L}) dP with a = g_j·h, extended?, and the
    two quadrature error bounds). Bins of zero P-width are dropped.

    The loss in the split weight is evaluated in extended precision for panels inside
    ``ext_range`` (an x-interval; empty for none) and in float64 elsewhere.
    """
    edges = grid * h
    lo_l, hi_l = (float(v) for v in sorted(piece.loss(np.array([x_left, x_right]))))
    with np.errstate(all="ignore"):
        xe = piece.loss_inv(np.clip(edges, lo_l, hi_l))
    xe = np.clip(xe, x_left, x_right)
    xe[edges <= lo_l] = x_left if piece.increasing else x_right
    xe[edges >= hi_l] = x_right if piece.increasing else x_left
    xs, xt = np.minimum(xe[:-1], xe[1:]), np.maximum(xe[:-1], xe[1:])
    width = xt - xs
    keep = width > 0
    k_lo, k_hi = grid[:-1][keep], grid[1:][keep]
    shrink = _shrink(piece, xe, width)[keep]
    xs, width = xs[keep], width[keep]
    panels = np.maximum(1, np.ceil(width * 2.0**shrink / (_PANEL * piece.scale))).astype(np.int64)
    owner = np.repeat(np.arange(k_lo.size), panels)
    first = np.repeat(np.cumsum(panels) - panels, panels)
    pos = np.arange(owner.size) - first
    pw = width[owner] / panels[owner]
    p0 = xs[owner] + pos * pw
    ext_panel = (p0 + pw >= ext_range[0]) & (p0 <= ext_range[1])
    ext_bin = np.bincount(owner, weights=ext_panel, minlength=k_lo.size) > 0
    mass = np.zeros(k_lo.size)
    up = np.zeros(k_lo.size)
    level = shrink[owner]
    n_nodes = _node_counts(_RADIUS * piece.scale * 2.0**-level / (0.5 * pw))
    quad_mass, quad_up = _quadrature_error(piece, p0 + 0.5 * pw, 0.5 * pw, n_nodes, k_lo[owner] * h, owner,
                                           k_lo.size, level)
    cap = -np.expm1(-(k_hi - k_lo) * h)  # largest split weight of each bin, 1 − e^{−width}
    for n, (nodes_std, weights_std) in _RULES.items():
        sel = n_nodes == n
        for wide in (np.longdouble, np.float64):
            part = sel & (ext_panel if wide is np.longdouble else ~ext_panel)
            if not np.any(part):
                continue
            o = owner[part]
            nodes = p0[part][:, None] + 0.5 * pw[part][:, None] * (nodes_std[None, :] + 1.0)
            dens = piece.pdf_p(nodes) * (0.5 * pw[part][:, None] * weights_std[None, :])
            a_low = k_lo[o].astype(wide) * wide(h)
            with np.errstate(all="ignore"):  # loss − a to ~u·|loss| absolute (it is compared with h)
                gain = (-np.expm1(a_low[:, None] - piece.loss(nodes.astype(wide)))).astype(float)
            gain = np.clip(np.nan_to_num(gain, nan=0.0), 0.0, cap[o][:, None])
            mass += np.bincount(o, weights=dens.sum(axis=1), minlength=k_lo.size)
            up += np.bincount(o, weights=(dens * gain).sum(axis=1), minlength=k_lo.size)
    return k_lo, k_hi, mass, up, ext_bin, quad_mass, quad_up


def _shrink(piece: Piece, edges: np.ndarray, width: np.ndarray) -> np.ndarray:
    """Per bin (between consecutive x ``edges``, ``width`` apart), the least j ≤ :data:`_MAX_SHRINK`
    with growth·radius ≤ :data:`_GROWTH` for radius = :data:`_RADIUS`·scale/2^j, growth the larger
    secant slope of log p and log q over the bin (the slope at its middle for a Gaussian; 0 where a
    density vanishes). Only the panels' size depends on it: the quadrature bound holds for any."""
    with np.errstate(all="ignore"):
        g = np.zeros(width.shape)
        for pdf in (piece.pdf_p, piece.pdf_q):
            log_d = np.log(pdf(edges))
            slope = np.abs(np.diff(log_d)) / width
            g = np.maximum(g, np.nan_to_num(slope, nan=0.0, posinf=0.0))
        need = np.ceil(np.log2(np.maximum(g * _RADIUS * piece.scale / _GROWTH, 1.0)))
    return np.clip(need, 0, _MAX_SHRINK).astype(np.int64)


def _log_factor(rho: np.ndarray, nodes) -> np.ndarray:
    """log of (64/15)·ρ^{−2(N−1)}/(ρ² − 1) for an N-node rule (Trefethen 2008, Thm 4.5, which is
    stated for the (n+1)-point rule with ρ^{−2n}); +∞ for ρ ≤ 1."""
    with np.errstate(all="ignore"):
        out = math.log(64.0 / 15.0) - 2.0 * (nodes - 1) * np.log(rho) - np.log(rho * rho - 1.0)
    return np.where(rho > 1.0, out, math.inf)


def _rho_threshold(n: int) -> float:
    """Least ρ (to bisection accuracy, rounded up) with error factor ≤ :data:`_QUAD_FACTOR`."""
    lo, hi = 1.0, 1e300
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if _log_factor(np.array([mid]), n)[0] <= math.log(_QUAD_FACTOR):
            hi = mid
        else:
            lo = mid
    return hi


def _node_counts(rho: np.ndarray) -> np.ndarray:
    """Fewest nodes per panel with error factor ≤ :data:`_QUAD_FACTOR` (8 when none is); the
    factor decreases in ρ, so this is a threshold on ρ per rule."""
    counts = np.full(rho.shape, 8, dtype=np.int64)
    for n, threshold in sorted(_THRESHOLDS.items(), reverse=True):
        counts = np.where(rho >= threshold, n, counts)
    return counts


#: the complex square around each panel on which the densities are bounded, in units of scale
_RADIUS = 2.0
_THRESHOLDS = {n: _rho_threshold(n) for n in _RULES if n < 8}


def _quadrature_error(piece: Piece, center: np.ndarray, half: np.ndarray, nodes: np.ndarray,
                      a_low: np.ndarray, owner: np.ndarray, bins: int,
                      level: Optional[np.ndarray] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Per-bin bounds on the Gauss–Legendre error of P(bin) and of ∫_bin (1 − e^{a−L}) dP.

    On a panel [c − w, c + w] an n-node Gauss–Legendre rule integrates a function analytic inside
    the Bernstein ellipse E_ρ (foci c ± w, semi-axes w(ρ ± 1/ρ)/2) and bounded there by M with
    error at most (64/15)·M·w·ρ^{−2(n−1)}/(ρ² − 1) (Trefethen 2008, "Is Gauss quadrature better
    than Clenshaw–Curtis?", SIAM Rev. 50, Thm 4.5, whose I_n is the (n+1)-point rule; scaled from
    [−1, 1]). With ρ = r/w, r = 2·scale/2^level (:func:`_shrink`),
    E_ρ lies in the square |Re z − c| ≤ r, |Im z| ≤ r, where :meth:`Piece.envelope` bounds the
    densities (called once per level, with a float radius). The split integrand
    p(x)(1 − e^{a−L(x)}) equals p(x) − e^{a}q(x) on the real line (e^{−L} dP = dQ), so the rule's
    error on it is at most E_p + e^{a}E_q.
    """
    level = np.zeros(center.shape, dtype=np.int64) if level is None else level
    radius = _RADIUS * piece.scale * 2.0**-level
    m_p, m_q = np.empty(center.shape), np.empty(center.shape)
    for j in np.unique(level).tolist():
        sel = level == j
        m_p[sel], m_q[sel] = piece.envelope(center[sel], _RADIUS * piece.scale * 2.0**-j)
    with np.errstate(all="ignore"):
        log_factor = np.log(half) + _log_factor(radius / half, nodes)
        e_p = np.exp(np.log(m_p) + log_factor)
        e_q = np.exp(np.log(m_q) + log_factor + a_low)
    e_p, e_q = np.nan_to_num(e_p, nan=0.0), np.nan_to_num(e_q, nan=0.0)
    quad_mass = np.bincount(owner, weights=e_p, minlength=bins) * (1.0 + 8.0 * _U)
    quad_up = np.bincount(owner, weights=e_p + e_q, minlength=bins) * (1.0 + 8.0 * _U)
    return quad_mass, quad_up


def loss_span(model: LossModel, tail: float) -> float:
    """Width (nats) of the loss range :func:`discretize` covers with cut mass ``tail``."""
    plans = [_piece_plan(p, tail) for p in model.pieces]
    finite = model.atoms.loss[np.isfinite(model.atoms.loss) & (model.atoms.p > 0)]
    lows = [pl[2] for pl in plans] + list(finite)
    highs = [pl[3] for pl in plans] + list(finite)
    return max(highs) - min(lows) if lows else 0.0


def _piece_grid(piece: Piece, x_left: float, x_right: float, l_min: float, l_max: float, h: float,
                wide: Optional[Tuple[float, int]]) -> np.ndarray:
    """Increasing grid indices whose consecutive pairs are the bins of one piece.

    Without ``wide``: every index from just below ``l_min``/h to just above ``l_max``/h (bins of
    width h). With ``wide`` = (τ, K): bins of width h only over the losses of the piece's central
    part (P-mass ≤ τ beyond it on each side, :func:`cut`), widened to multiples of K; outside it,
    bins of width K·h between multiples of K.
    """
    k_a, k_b = int(math.floor(l_min / h)) - 1, int(math.ceil(l_max / h)) + 1
    if wide is None or wide[1] <= 1:
        return np.arange(k_a, k_b + 1)
    tau, factor = wide
    xs = np.clip(np.array([cut(piece, -1, tau), cut(piece, +1, tau)]), x_left, x_right)
    with np.errstate(all="ignore"):
        f_lo, f_hi = (float(v) for v in sorted(piece.loss(xs)))
    lo_al, hi_al = factor * (k_a // factor), -factor * (-k_b // factor)
    f0 = min(max(factor * ((int(math.floor(f_lo / h)) - 1) // factor), lo_al), hi_al)
    f1 = min(max(-factor * (-(int(math.ceil(f_hi / h)) + 1) // factor), f0), hi_al)
    return np.concatenate([np.arange(lo_al, f0, factor), np.arange(f0, f1), np.arange(f1, hi_al + 1, factor)])


def _check_panels(model: LossModel, plans) -> None:
    """Refuse (:class:`~dpcore.events.UnsupportedEventError`) a model whose pieces' cut x-ranges
    need more than :data:`MAX_QUADRATURE_PANELS` panels of :func:`_bin_piece` in all."""
    panels = math.fsum((x_right - x_left) / (_PANEL * piece.scale)
                       for piece, (x_left, x_right, *_rest) in zip(model.pieces, plans))
    if not panels <= MAX_QUADRATURE_PANELS:
        raise UnsupportedEventError(
            f"the leaf's densities vary on x-scales down to {min(p.scale for p in model.pieces):.3g} over a range "
            f"that needs {panels:.3g} quadrature panels, more than MAX_QUADRATURE_PANELS={MAX_QUADRATURE_PANELS} "
            "(e.g. a noise_multiplier this small); use accountant='rdp' or 'auto'")


def discretize(model: LossModel, h: float, tail: float, extended: bool = True,
               wide: Optional[Tuple[float, int]] = None) -> GridPld:
    """Pessimistic grid PLD of ``model`` on hℤ (see the module docstring).

    Parameters
    ----------
    model : LossModel
        The dominating pair.
    h : float
        Grid spacing of the privacy loss, nats, > 0.
    tail : float
        P-mass allowed outside the cut range on each side of each piece (moved pessimistically).
    extended : bool
        Evaluate the loss inside the split weights in extended precision (``np.longdouble``);
        otherwise in float64, with the correspondingly larger error term.
    wide : (float, int), optional
        (τ, K): outside the central part of each piece (P-mass ≤ τ on each side) the bins are K·h
        wide, split onto their two end points (multiples of K·h) by the same connect-the-dots rule
        — a dominating pair again, the grid points being any finite set (Doroshenko et al. 2022,
        Thm 3.3). This leaves the pessimism of the upper bound practically unchanged (the split of
        a bin of P-mass m and width w raises δ by O(m·w²), and m ≤ τ) but cuts the work on long,
        light tails K-fold. The optimistic bound pays for the wider splits through
        :attr:`GridPld.wide` (P-mass of the wide bins) and :attr:`GridPld.wide_extra`
        ((K² − 1)·h², the extra squared width of one wide split); see :meth:`GridPld.delta_bounds`.

    Returns
    -------
    GridPld
        ``pmf`` on the grid, ``inf_mass`` (loss +∞), ``err`` (ℓ1 float-error bound),
        ``edge`` (mass moved by the cuts) and ``count=1`` (one split leaf).
    """
    plans = [_piece_plan(p, tail) for p in model.pieces]
    at = model.atoms
    if np.any(at.p[np.isneginf(at.loss)] > 0):
        raise ValueError("an atom with loss -inf cannot carry P-mass")
    finite = np.isfinite(at.loss) & (at.p > 0)
    lows = [pl[2] for pl in plans] + list(at.loss[finite])
    highs = [pl[3] for pl in plans] + list(at.loss[finite])
    if not lows:  # only infinite-loss mass
        return GridPld(h, 0, np.zeros(1), float(np.sum(at.p[np.isposinf(at.loss)])), 0.0, 0.0, 0.0, 1, h * h)
    k_lo, k_hi = float(min(lows)) / h, float(max(highs)) / h  # Python floats: ∞ on overflow
    if not (abs(k_lo) < 2.0**62 and abs(k_hi) < 2.0**62 and k_hi - k_lo + 5.0 <= MAX_GRID_POINTS):
        raise UnsupportedEventError(
            f"discretization={h} cannot hold the leaf's losses [{min(lows):.3g}, {max(highs):.3g}] nats "
            f"in {MAX_GRID_POINTS} grid points for one step; use a larger discretization")
    _check_panels(model, plans)
    ext_all: List[np.ndarray] = []
    qm_all: List[np.ndarray] = []
    qu_all: List[np.ndarray] = []
    lo_all: List[np.ndarray] = []
    hi_all: List[np.ndarray] = []
    mass_all: List[np.ndarray] = []
    up_all: List[np.ndarray] = []
    inf_mass = float(np.sum(at.p[np.isposinf(at.loss)]))
    edge = 0.0
    extra_at: List[Tuple[int, float]] = []
    for piece, (x_left, x_right, l_min, l_max, below, above) in zip(model.pieces, plans):
        ext_range = (cut(piece, -1, _EXTENDED_TAIL), cut(piece, +1, _EXTENDED_TAIL)) if extended else (1.0, 0.0)
        grid = _piece_grid(piece, x_left, x_right, l_min, l_max, h, wide)
        k_a, k_b, mass, up, ext, q_mass, q_up = _bin_piece(piece, x_left, x_right, grid, h, ext_range)
        for arrays, value in ((ext_all, ext), (qm_all, q_mass), (qu_all, q_up), (lo_all, k_a), (hi_all, k_b),
                              (mass_all, mass), (up_all, up)):
            arrays.append(value)
        if below > 0:  # losses ≤ l_min, rounded up to the grid point above l_min
            extra_at.append((int(math.ceil(l_min / h)), below))
        inf_mass += above
        edge += below + above
    if np.any(finite):
        la = at.loss[finite]
        ks = np.ceil(la / h).astype(np.int64)
        lo_all.append(ks - 1)
        hi_all.append(ks)
        ext_all.append(np.zeros(ks.size, dtype=bool))
        qm_all.append(np.zeros(ks.size))
        qu_all.append(np.zeros(ks.size))
        mass_all.append(at.p[finite])
        up_all.append(at.p[finite] * np.clip(-np.expm1((ks - 1) * h - la), 0.0, -math.expm1(-h)))
    k_lo_idx, k_hi_idx = np.concatenate(lo_all), np.concatenate(hi_all)
    every = np.concatenate([k_lo_idx, k_hi_idx, np.array([k for k, _ in extra_at], dtype=np.int64)])
    k0, k1 = int(every.min()), int(every.max())
    lo_i, hi_i = k_lo_idx - k0, k_hi_idx - k0
    mass = np.concatenate(mass_all)
    up = np.concatenate(up_all)
    widths = (k_hi_idx - k_lo_idx) * h
    denom = -np.expm1(-widths)
    a = np.abs(k_lo_idx * h)
    u_loss = np.where(np.concatenate(ext_all), _U_LOSS, _U)
    # per-bin bound on the error of both the bin mass and its upper share p_hi
    bound = _ERR_UNITS * mass * (_U + u_loss * (a + widths) / denom)
    q_mass, q_up = np.concatenate(qm_all), np.concatenate(qu_all) / denom  # quadrature error bounds
    # round up (module docstring): mass and p_hi each by their float and quadrature bounds, then
    # 4 ulps for the float64 operations here, so that p_hi ≥ exact p_hi and p_hi + p_lo ≥ exact
    # bin mass
    m_up = (mass + bound + q_mass) * (1.0 + 4.0 * _U)
    p_hi = np.minimum((up / denom + bound + q_up) * (1.0 + 4.0 * _U), m_up)
    p_lo = m_up - p_hi
    size = k1 - k0 + 1
    extra = np.zeros(size)
    for k, m in extra_at:
        extra[k - k0] += m
    terms = np.bincount(hi_i, minlength=size) + np.bincount(lo_i, minlength=size) + 1  # addends per entry
    extra *= 1.0 + (_ERR_UNITS + 4.0) * _U
    pmf = np.bincount(hi_i, weights=p_hi, minlength=size) + np.bincount(lo_i, weights=p_lo, minlength=size) + extra
    pmf *= 1.0 + (float(np.max(terms)) + 2.0) * _U  # the summation's rounding, upwards
    inf_mass *= 1.0 + (_ERR_UNITS + 4.0) * _U
    # ℓ1 distance to the exact split masses, entry by entry: |Δp_hi| + |Δp_lo| ≤ 4·bound per bin
    # (2·bound to each of its two points) plus the quadrature bounds, plus the scalings
    per_bin = 2.0 * bound + (q_mass + q_up)
    bias_entries = (np.bincount(hi_i, weights=per_bin, minlength=size) + np.bincount(lo_i, weights=per_bin, minlength=size)
                    + 2.0 * (float(np.max(terms)) + _ERR_UNITS + 8.0) * _U * pmf) * (1.0 + 8.0 * _U)
    inf_rounding = 2.0 * (float(np.max(terms)) + _ERR_UNITS + 8.0) * _U * inf_mass
    # P-mass of the wide bins (rounded-up masses, summed upwards) and one wide split's extra squared width
    is_wide = (k_hi_idx - k_lo_idx) > 1
    wide_mass = wide_extra = 0.0
    if np.any(is_wide):
        wide_mass = float(np.sum(m_up[is_wide])) * (1.0 + (is_wide.size + 4.0) * _U)
        wide_extra = (float(np.max((k_hi_idx - k_lo_idx)[is_wide])) ** 2 - 1.0) * h * h * (1.0 + 4.0 * _U)
    wide_var = 0.0
    if np.any(is_wide):
        widest = float(np.max((k_hi_idx - k_lo_idx)[is_wide])) * h
        wide_var = (log_split_factor(widest) - log_split_factor(h)) * (1.0 + 4.0 * _U)
    nz = np.flatnonzero(pmf)
    if nz.size:  # drop the empty ends (exact)
        lo_nz, hi_nz = int(nz[0]), int(nz[-1]) + 1
        k0, pmf, bias_entries = k0 + lo_nz, pmf[lo_nz:hi_nz], bias_entries[lo_nz:hi_nz]
    # atoms exactly on the grid are not split (all their mass stays on their point): no move to account
    on_grid = not plans and bool(np.all(at.loss[finite] == np.ceil(at.loss[finite] / h) * h))
    split = 0.0 if on_grid else h
    return GridPld(h, k0, pmf, inf_mass, 0.0, 0.0, edge, 1, split * split, _sum_up(bias_entries), wide_mass, wide_extra,
                   log_var=log_split_factor(split), wide_extra_var=wide_var, inf_moved=inf_rounding,
                   bias_entries=bias_entries)
