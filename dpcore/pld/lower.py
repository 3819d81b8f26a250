"""The optimistic companion of the PLD accountant: a lower bound on the exact δ(ε) and ε(δ).

The grid PLD D (:class:`~dpcore.pld.pmf.GridPld`) is built from the *merged* pairs — each loss bin
of a leaf merged into one atom, a post-processing of the leaf, so their composition is dominated
by the exact one — by connect-the-dots splits (every leaf bin, every coarsening of a composed
block): a split moves a loss by D in a window of width w with E[e^{−D} | past] = 1. Let S be the
merged composition's loss, Z the sum of all moves (S' = S + Z is the split composition's loss),
v = e^{−Z} and u = e^{ε−S}. Since E[v | S] = 1,

    δ_split(ε) − δ_merged(ε) = E[gap(S)],   gap(S) = E[(uv − 1)_+ | S] − (u − 1)_+

(the linear part u(1 − v) has mean zero given S). Given S this is the Jensen gap of a hinge:

* with Var(v | S) ≤ V = Π(1 + sinh²(w/2)) − 1 (:func:`~dpcore.pld.pmf.split_variance`), Scarf's
  bound on E[(v − k)_+] over laws of given mean and variance (Scarf 1958; it is attained) gives
  gap ≤ ½(√(V·Y² + (1 − Y)²) − |1 − Y|) with Y = u;
* each move has range w and conditional mean in [0, w²/8] (Jensen; Hoeffding's lemma), so
  E[e^{−aZ} | S] ≤ e^{a²W/8} with W = Σw²: for S > ε, gap ≤ u^a·E[v^a] ≤ e^{−2x²/W}
  (x = S − ε, a = 4x/W ≥ 1; e^{−x+W/8} below that); for S < ε, gap ≤ P(Z > −x | S) ≤
  e^{−2(−x − W/8)²/W} (Azuma–Hoeffding).

Call g the least of these (and 1). Only S' is known, so g is widened: with m₂ ≥ E[Z² | S]
((√(W/4) + W/8)², a martingale with drift ≤ W/8) and r = ρ√m₂, Chebyshev gives
P(|Z| ≤ r | S) ≥ 1 − 1/ρ², hence for ĝ(s) = K·sup_{|z|≤r} g(s − z), K = 1/(1 − 1/ρ²),
E[ĝ(S') | S] ≥ K·g(S)·P(|Z| ≤ r | S) ≥ g(S), and

    δ_exact(ε) ≥ δ_merged(ε) ≥ δ_D(ε) − E_D[ĝ] − (error, move and rounding terms) − edge − φ.

The gap is second order in the split widths (O(V) where a Hoeffding shift is O(√(W·log(1/η)))),
so the bracket closes as the grid is refined. With wide leaf tail bins the number N of wide
splits is random (total mean λ = ``wide``); on N ≤ k, V and W grow by k wide splits, and
φ = P(N > k) ≤ λ^{k+1}/(k + 1)! is added.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Tuple

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .pmf import GridPld

__all__ = ["delta_lower", "epsilon_lower", "interval_deficit", "interval_deficits", "split_terms"]

#: Chebyshev window radii tried, in units of √m₂ (the best lower bound is kept)
RHOS = (2.2,)
#: wide-split failure probability allowed, as a fraction of δ
FAIL_FRACTION = 1e-4
#: relative precision of the optimistic ε (it brackets the answer; it is not the answer)
EPSILON_TOLERANCE = 1e-4
_U = 2.0**-53


def split_terms(pld: "GridPld", allowed: float) -> Tuple[float, float, float]:
    """(V, W, φ): the Scarf variance bound and the sum of squared split widths on the event that
    at most k wide leaf splits happened, and φ ≥ P(more than k), with k the least (≤ 12) whose
    φ ≤ ``allowed``."""
    k, fail = 0, 0.0
    if pld.wide > 0.0 and (pld.wide_extra > 0.0 or pld.wide_extra_var > 0.0):
        term = pld.wide
        while term > allowed and k < 12:
            k += 1
            term *= pld.wide / (k + 1)
        fail = term * (1.0 + 1e-12)
    log_v = pld.log_var + k * pld.wide_extra_var
    v = math.expm1(log_v) * (1.0 + 1e-12) if log_v < 700.0 else math.inf
    w = (pld.spread + k * pld.wide_extra) * (1.0 + 1e-12)
    return v, w, fail


def _log_g_hat(x: np.ndarray, v: float, w: float, r: float) -> np.ndarray:
    """log of sup_{|z|≤r} g(x − z) (x = s − ε), from monotone envelopes of each bound on the window."""
    out = np.zeros(x.shape)
    if v <= 0.0 or w <= 0.0:
        return np.full(x.shape, -np.inf)
    if not (math.isfinite(v) and math.isfinite(w)):
        return out  # no usable bound: ĝ ≤ 1
    sv = math.sqrt(v)
    lo, hi = x - r, x + r
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        # Scarf: decreasing for s > ε (Y < 1); elsewhere ≤ ½√V·Y and, left of ε, ≤ ½V·Y²/(2(Y − 1))
        scarf = np.empty(x.shape)
        right = lo >= 0.0
        y = np.exp(-lo[right])
        scarf[right] = np.log(0.5 * v * y * y) - np.log(np.sqrt(v * y * y + (1.0 - y) ** 2) + (1.0 - y))
        rest = ~right
        log_y_max = -lo[rest]
        scarf[rest] = math.log(0.5 * sv) + log_y_max
        left = hi < 0.0
        y_min_minus_1 = np.expm1(-hi[left])
        scarf_left = math.log(0.25 * v) + 2.0 * (-lo[left]) - np.log(y_min_minus_1)
        scarf[left] = np.minimum(scarf[left], scarf_left)
        # sub-Gaussian tails of the moves
        tail = np.zeros(x.shape)
        t_right = lo[right]
        tail[right] = np.where(t_right >= w / 4.0, -2.0 * t_right * t_right / w, -t_right + w / 8.0)
        t_left = -hi[left] - w / 8.0
        tail[left] = np.where(t_left > 0.0, -2.0 * t_left * t_left / w, 0.0)
        out = np.minimum(np.minimum(scarf, tail), 0.0)
    return out


def _grid_index(rounding, x: float, lo: int, hi: int) -> int:
    """``rounding(x)`` clamped to [lo, hi], for any float x (ε far beyond the grid, e.g. 1e308, gives
    x = ±inf, which ``int`` cannot take)."""
    if not x > lo:
        return lo
    if x >= hi:
        return hi
    return min(max(int(rounding(x)), lo), hi)


def _g_bound(pld: "GridPld", epsilon: float, v: float, w: float, rho: float,
             widen: float = 0.0) -> Tuple[float, float]:
    """(E_D[ĝ] over the grid, max_j e^{log_scale − θℓ_j}·ĝ(ℓ_j)) for one Chebyshev radius, summing
    only the entries within a window around ε and bounding the rest analytically. ``widen`` ≥ 0
    enlarges the sup window of ĝ to r + widen (:func:`interval_deficit`)."""
    if not (math.isfinite(v) and math.isfinite(w)):
        return math.inf, math.inf
    if w <= 0.0:  # no split moved any loss: the split composition is the merged one
        return 0.0, 0.0
    m2 = (math.sqrt(w / 4.0) + w / 8.0) ** 2
    r = rho * math.sqrt(m2) + widen
    log_k = -math.log1p(-1.0 / (rho * rho))
    theta, h = pld.theta, pld.h
    # beyond R on either side ĝ ≤ K·e^{−2(R − r − W/8)²/W}, small against the tilt e^{θR}
    reach = r + w / 8.0 + math.sqrt(w) * (6.0 + theta * math.sqrt(w)) + theta * w
    size = pld.pmf.size
    j0 = _grid_index(math.floor, (epsilon - reach) / h - pld.start, 0, size)
    j1 = _grid_index(math.ceil, (epsilon + reach) / h - pld.start + 1, j0, size)
    ell = (pld.start + np.arange(j0, j1)) * h
    log_g = log_k + _log_g_hat(ell - epsilon, v, w, r)
    logp = pld.log_p(j0, j1)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        expected = float(np.sum(np.exp(np.minimum(logp + log_g, 700.0))))
        weight = pld.log_scale - theta * ell + log_g
    m_g = float(np.max(weight, initial=-np.inf))
    # the entries outside [j0, j1): tilted masses ≤ Σ pmf, each weighted by e^{log_scale − θℓ}·ĝ(ℓ)
    t = max(reach - r - w / 8.0, 0.0)
    log_outside = log_k - 2.0 * t * t / w + pld.log_scale - theta * (epsilon - reach)
    m_g = max(m_g, log_outside)
    outside = pld.tilted_total() * math.exp(min(700.0, log_outside)) if (j0 > 0 or j1 < pld.pmf.size) else 0.0
    return expected * (1.0 + 1e-12) + outside, math.exp(min(700.0, m_g))


def delta_lower(pld: "GridPld", epsilon: float, upper: float) -> float:
    """Lower bound on the exact δ(ε) of the composed pair (module docstring; ``upper`` ≈ δ sets the
    allowed wide-split failure probability)."""
    v, w, fail = split_terms(pld, FAIL_FRACTION * max(upper, 1e-300))
    value, rounding = pld.delta_grid(epsilon)
    fixed = (value - rounding - pld.error_scale(epsilon) * (pld.err + pld.moved + pld.bias)
             - 2.0 * pld.inf_moved - pld.edge - fail)
    best = 0.0
    for rho in RHOS:
        expected, m_g = _g_bound(pld, epsilon, v, w, rho)
        best = max(best, fixed - expected - (pld.err + pld.moved) * m_g)
    return best


def interval_deficit(pld: "GridPld", center: float, half_width: float, allowed: float) -> float:
    """D ≥ 0 with δ_exact(ε) ≥ δ_grid(ε) − (rounding of δ_grid(ε)) − D for *every* ε in
    [center − half_width, center + half_width] (δ_grid: :meth:`~dpcore.pld.pmf.GridPld.delta_grid`).

    The terms :func:`delta_lower` subtracts, made uniform over the interval: for ε = center + t,
    |t| ≤ half_width, ĝ_ε(s) = K·sup_{|z|≤r} g(s − ε − z) ≤ K·sup_{|z'|≤r+half_width} g(s − center − z')
    (z' = z + t), so E_D[ĝ_ε] and its float error are bounded by those of the widened ĝ
    (:func:`_g_bound` with ``widen``); the error scale exp(log_scale − θε) is largest at the left
    end. ``allowed``: the wide-split failure probability φ (:func:`split_terms`). Rounded up.
    """
    v, w, fail = split_terms(pld, allowed)
    fixed = (pld.error_scale(center - half_width) * (pld.err + pld.moved + pld.bias) + 2.0 * pld.inf_moved
             + pld.edge + fail)
    best = math.inf
    for rho in RHOS:
        expected, m_g = _g_bound(pld, center, v, w, rho, widen=half_width)
        best = min(best, expected + (pld.err + pld.moved) * m_g)
    return (fixed + best) * (1.0 + 1e-12)


def interval_deficits(pld: "GridPld", first: int, step: int, count: int, allowed: float) -> np.ndarray:
    """:func:`interval_deficit` of the ``count`` intervals [ℓ_{first+k·step}, ℓ_{first+(k+1)·step}]
    (ℓ_j the loss of ``pld.pmf[j]``) at once, for an untilted PLD (θ = 0).

    All of them have the half-width step·h/2 and centres step·h apart on the grid, so the widened
    ĝ of each is one kernel κ on the grid offsets, and the window sums Σ_j p_j·ĝ(ℓ_j − centre) are
    the correlation of the P-masses with κ at the intervals' left edges: one FFT convolution, with
    its entrywise float error bound (:func:`~dpcore.pld.pmf._convolve`) added. The masses beyond
    the kernel's reach are bounded as in :func:`_g_bound`; the window is widened by a further
    8u·max|ℓ| + 1e-12 nats against the float error of the offsets.
    """
    from .pmf import _convolve

    if pld.theta != 0.0:
        raise ValueError("interval_deficits needs an untilted PLD (theta = 0)")
    v, w, fail = split_terms(pld, allowed)
    fixed = pld.error_scale(0.0) * (pld.err + pld.moved + pld.bias) + 2.0 * pld.inf_moved + pld.edge + fail
    if not (math.isfinite(v) and math.isfinite(w)):
        return np.full(count, math.inf)
    if w <= 0.0:  # no split moved any loss (:func:`_g_bound`)
        return np.full(count, fixed * (1.0 + 1e-12))
    h, n = pld.h, pld.pmf.size
    half = 0.5 * step * h
    top = (abs(pld.start) + n + abs(first) + (count + 1) * step) * h
    m2 = (math.sqrt(w / 4.0) + w / 8.0) ** 2
    scale = pld.error_scale(0.0)
    masses = pld.pmf * (scale * (1.0 + (2.0 * abs(pld.log_scale) + 4.0) * _U))  # P-masses, rounded up
    best = np.full(count, math.inf)
    for rho in RHOS:
        r = rho * math.sqrt(m2) + half + 8.0 * _U * top + 1e-12
        log_k = -math.log1p(-1.0 / (rho * rho))
        reach = r + w / 8.0 + 6.0 * math.sqrt(w)
        span = int(math.ceil(reach / h)) + 1
        offsets = np.arange(-span, span + step + 1)  # j − (left edge) over the window
        kernel = np.exp(log_k + _log_g_hat(offsets * h - half, v, w, r))
        # padded[i] = p_{i − span}: the window sum of the interval with left edge e is
        # Σ_t padded[e + t]·κ[t] = (padded ∗ reversed κ)[e + len(κ) − 1]
        padded = np.concatenate([np.zeros(span), masses, np.zeros(max(0, first + count * step + span + 1 - n))])
        conv, entry = _convolve(padded, kernel[::-1].copy(), same=False)
        left = first + np.arange(count) * step
        expected = conv[left + kernel.size - 1] * (1.0 + 2.0 * kernel.size * _U) + entry + 1e-300 * kernel.size
        t = max(reach - r - w / 8.0, 0.0)
        log_outside = log_k - 2.0 * t * t / w + pld.log_scale
        m_g = max(float(np.max(kernel)) * scale, math.exp(min(700.0, log_outside)))
        outside = pld.tilted_total() * math.exp(min(700.0, log_outside))
        best = np.minimum(best, expected + outside + (pld.err + pld.moved) * m_g)
    return (fixed + best) * (1.0 + 1e-12)


def epsilon_lower(pld: "GridPld", delta: float, upper: float) -> float:
    """An ε with δ_lower(ε) > δ, as large as found (δ_exact is non-increasing, so ε_exact ≥ it); 0 if none.

    Secant steps on δ_lower(ε) − δ (smooth and decreasing in practice) from just below ``upper`` (the
    certified upper bound), keeping a bracket [ε with δ_lower > δ, ε without]; stops within
    :data:`EPSILON_TOLERANCE` relative. Only points where δ_lower(ε) > δ was evaluated are returned.
    """
    if not math.isfinite(upper) or upper <= 0.0:
        return 0.0

    def excess(eps: float) -> float:
        return delta_lower(pld, eps, delta) - delta

    hi, f_hi = upper, excess(upper)  # δ_lower(upper) ≤ δ_upper(upper) ≤ δ: f_hi ≤ 0
    lo, f_lo = None, None
    step = max(1e-9, 1e-3 * upper)
    while lo is None:
        x = upper - step
        if x <= 0.0:
            return 0.0 if excess(0.0) <= 0.0 else 0.0
        fx = excess(x)
        if fx > 0.0:
            lo, f_lo = x, fx
        else:
            hi, f_hi = x, fx
            step *= 4.0
    for _ in range(30):
        if hi - lo <= EPSILON_TOLERANCE * hi:
            break
        x = lo + (hi - lo) * f_lo / (f_lo - f_hi) if f_lo > f_hi else 0.5 * (lo + hi)
        x = min(max(x, lo + 0.05 * (hi - lo)), hi - 0.05 * (hi - lo))  # stay well inside the bracket
        fx = excess(x)
        if fx > 0.0:
            lo, f_lo = x, fx
        else:
            hi, f_hi = x, fx
    return lo
