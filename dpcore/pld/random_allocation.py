"""Certified privacy-loss distribution of random allocation (balls-in-bins) with a Gaussian step.

**The pair.** One epoch of t steps, each record used in exactly one step chosen uniformly at
random, a Gaussian of noise multiplier σ at every step, add/remove neighbours. A dominating pair
is P = (1/t) Σᵢ N(eᵢ, σ²I_t), Q = N(0, σ²I_t) for the removal order and (Q, P) for the addition
order (Chua et al. 2025, "Balls-and-bins sampling for DP-SGD", the pair (P_B, Q_B); Feldman &
Shenfeld 2025, "Privacy amplification by random allocation"; its PLD is Feldman & Shenfeld 2026,
"Efficient privacy loss accounting for subsampling and random allocation", Alg. 1–2,
``rand-alloc-rem`` / ``rand-alloc-add``). Its likelihood ratio is

    dP/dQ(y) = S/t,    S = Σᵢ Xᵢ,    Xᵢ = exp(yᵢ/σ² − 1/(2σ²)),

with X₁ … X_t i.i.d. log-normal under Q (log Xᵢ ~ N(−μ²/2, μ²), μ = 1/σ). Both orders are read off
the law of S under Q: the removal PLD (loss log(S/t) under P) has P-mass (s/t)·Q(S = s), the
addition PLD (loss −log(S/t) under Q) the Q-masses themselves.

**Upper bound (a dominating pair).** S is computed on the grid {e^{kh}} by a binary tree of sums
of independent partial sums, and every value that falls between two grid points is *split* onto
them with its mean preserved (:func:`~dpcore.pld._geometric_kernels.convolve_split`), including
the first discretisation of each Xᵢ (which is connect-the-dots, Doroshenko et al. 2022, Thm 3.3, on
the log-normal) and the final division by t. Mean-preserving splits of independent summands give
a variable S̃ with E[S̃ | S] = S, hence E[φ(S̃)] ≥ E[φ(S)] for every convex φ; both hockey-stick
curves of the pair, E_Q[(S/t − α)₊] (removal, α = e^ε ≥ 1) and E_Q[(1 − αS/t)₊] (the rest of the
curve), are convex in S. So (P̃, Q̃) built from S̃ — a genuine pair, E[S̃/t] = 1 — dominates (P, Q)
for every α ≥ 0 and composes (Zhu, Dong, Wang 2022, Thm 10). Tails: values below the grid are
split onto {0, e^{kh}} and values above onto {e^{kh}, +∞} (the mean above becomes P-mass at loss
+∞), both mean-preserving.

**Lower bound (a dominated pair).** The same tree, but each output index keeps the mass *and
the exact first moment* of the values grouped there
(:func:`~dpcore.pld._geometric_kernels.convolve_merge`). Revealing only the group of a partial sum
is a post-processing of the mechanism's output (which group each partial sum falls in is a
function of the output), and the group's likelihood ratio is its conditional mean of S/t
(P(group)/Q(group) = E_Q[S/t | group], since S/t is dP/dQ). So the grouped pair is dominated by
(P, Q) and the PLD accountant's *lower* bound of its composition is a lower bound of the true ε.

**Floating point.** Every mass is a sum of products of non-negative numbers (the one difference,
in :func:`~dpcore.pld._geometric_kernels.convolve_split`'s far pairs, has a subtrahend at most
half its minuend, and is bounded from both of its terms). Split weights are rounded *up* (each
share at least its exact value: extra mass only raises δ). Each law carries a relative error
bound ``rel`` (sums of at most n positive terms: n·u; products: the sum of the factors' bounds);
at the end the upper pair's masses are divided by (1 − rel) and the lower pair's P-masses
multiplied by (1 − rel), its Q-masses divided by (1 − rel). The Gaussian bins are 4-node
Gauss–Legendre sums whose error is bounded by Cauchy's estimate on a disc of radius 1
(:func:`gaussian_bins`).

**Grids.** h = 2^{−m}. A partial sum of s of the t summands is held on the grid
h_s = h_t·2^{⌊log₂ √(t/s)⌋}: splitting a value V that is about s/t of the total with relative
spacing h_s adds variance ≈ (s/t)²h_s²/4 to S/t, and there are t/s of them, so every level of the
tree costs about h_t²/4 — the coarse grids of the early levels (wide laws, many pieces) cost no
more than the fine one of the last. Grids are nested (a coarse point is a fine point).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Dict, Iterator, Tuple

import mpmath
import numpy as np

from ..events import GaussianEvent, PrivacyEvent, RandomAllocationEvent, UnsupportedEventError
from ._geometric_kernels import convolve_merge, convolve_split
from .losses import Atoms, LossModel

__all__ = ["random_allocation_models", "gaussian_bins", "allocation_grid", "dominated_pairs", "pair_side",
           "has_dominated_pairs", "RA_POINTS_PER_SD", "MAX_POINTS"]

_U = 2.0**-53
_LONG = np.finfo(np.longdouble)
_U_LONG = float(_LONG.eps) / 2.0
#: grid points per (estimated) standard deviation of one epoch's privacy loss (final grid)
RA_POINTS_PER_SD = 32
#: finest and coarsest grid exponents (h = 2^{−m})
_FINEST, _COARSEST = 16, 5
#: Q-mass of each tail of one log-normal cut off at the base (moved pessimistically)
_BASE_TAIL = 1e-18
#: refuse events whose partial-sum laws need more grid points than this (time and memory guard:
#: the sums cost (points)² each)
MAX_POINTS = 1 << 15
#: Gauss–Legendre rule on [0, 1] (nodes, weights) and its error constant (n!)^4/((2n+1)((2n)!)^2)
_GL_N = 4
_GL_NODES = 0.5 * (np.polynomial.legendre.leggauss(_GL_N)[0] + 1.0)
_GL_WEIGHTS = 0.5 * np.polynomial.legendre.leggauss(_GL_N)[1]
_GL_CONST = math.factorial(_GL_N) ** 4 / ((2 * _GL_N + 1) * math.factorial(2 * _GL_N) ** 2)


# ----------------------------------------------------------------------------------- grid tables


@dataclass(frozen=True)
class _Table:
    """Split destinations and (rounded-up) weights for sums on the grid {e^{kh}}, h = 2^{−m}."""

    m: int
    far: int  # D
    f: np.ndarray  # f[d], d < D
    w_lo: np.ndarray
    w_hi: np.ndarray
    hi_far: float  # e^{−Dh}/(e^h − 1), rounded up
    decay: float  # e^{−h}, rounded up

    @property
    def h(self) -> float:
        return 2.0**-self.m


@lru_cache(maxsize=24)
def _table(m: int) -> _Table:
    """Tables for h = 2^{−m}: for a pair at index distance d < D, the sum e^{Hh}(1 + e^{−dh}) lies
    in [e^{(H+f)h}, e^{(H+f+1)h}) with f = ⌊L/h⌋, L = log(1 + e^{−dh}); its mean-preserving split
    sends w_hi = expm1(L − fh)/expm1(h) up and w_lo = 1 − w_hi to H + f. Computed in extended
    precision; each weight is rounded up by a bound on its error (so each share is at least
    exact), and the few d whose L/h is within 1e-9 of an integer are done in mpmath."""
    h = 2.0**-m
    em1 = math.expm1(h)
    far = int(math.ceil(math.log(2.0 / em1) / h)) + 1
    d = np.arange(far, dtype=np.longdouble)
    hl = np.longdouble(h)
    big_l = np.log1p(np.exp(-d * hl))
    ratio = big_l / hl
    f = np.floor(ratio).astype(np.int64)
    frac = ratio - f
    resid = big_l - f.astype(np.longdouble) * hl  # fh exact (h a power of two)
    w_hi = np.expm1(resid) / np.expm1(hl)
    w_lo = (np.expm1(hl) - np.expm1(resid)) / np.expm1(hl)
    slack = 16.0 * _U_LONG * (float(big_l[0]) + 1.0) / em1 + 4.0 * _U
    w_hi = np.asarray(w_hi, dtype=float) * (1.0 + 2.0 * _U) + slack
    w_lo = np.asarray(w_lo, dtype=float) * (1.0 + 2.0 * _U) + slack
    for i in np.flatnonzero((frac < 1e-9) | (frac > 1.0 - 1e-9)):
        with mpmath.workdps(40):
            lm = mpmath.log1p(mpmath.exp(-int(i) * mpmath.mpf(h)))
            fi = int(mpmath.floor(lm / h))
            wh = mpmath.expm1(lm - fi * mpmath.mpf(h)) / mpmath.expm1(mpmath.mpf(h))
        f[i] = fi
        w_hi[i] = float(wh) * (1.0 + 2.0 * _U) + 4.0 * _U
        w_lo[i] = float(1 - wh) * (1.0 + 2.0 * _U) + 4.0 * _U
    w_hi, w_lo = np.minimum(w_hi, 1.0 + 8.0 * _U), np.minimum(w_lo, 1.0 + 8.0 * _U)
    hi_far = math.exp(-far * h) / em1 * (1.0 + 8.0 * _U)
    decay = math.exp(-h) * (1.0 + 2.0 * _U)
    return _Table(m, far, f, w_lo, w_hi, hi_far, decay)


# -------------------------------------------------------------------------------- laws on grids


@dataclass(frozen=True)
class _SplitLaw:
    """Q-law of a partial sum on {e^{kh}}: masses ``q`` at k = start + i, a Q-atom at 0, and the
    mean moved to +∞. ``rel``: relative error bound of every stored number (module docstring)."""

    m: int
    start: int
    q: np.ndarray
    zero: float
    inf_mean: float
    rel: float

    def refined(self, m: int) -> "_SplitLaw":
        if m == self.m:
            return self
        step = 1 << (m - self.m)
        q = np.zeros((self.q.size - 1) * step + 1)
        q[::step] = self.q
        return replace(self, m=m, start=self.start * step, q=q)


@dataclass(frozen=True)
class _MergeLaw:
    """Grouped law of a partial sum: per index the Q-mass ``mass`` and the first moment ``moment``
    (Σ Q-mass × value) of the group. Two runs with the same grouping: ``low`` from lower-bounded
    inputs, ``high`` from upper-bounded ones (module docstring)."""

    m: int
    start: int
    mass_low: np.ndarray
    moment_low: np.ndarray
    mass_high: np.ndarray
    moment_high: np.ndarray
    rel: float

    def refined(self, m: int) -> "_MergeLaw":
        if m == self.m:
            return self
        step = 1 << (m - self.m)

        def spread(v):
            out = np.zeros((v.size - 1) * step + 1)
            out[::step] = v
            return out

        return _MergeLaw(m, self.start * step, spread(self.mass_low), spread(self.moment_low),
                         spread(self.mass_high), spread(self.moment_high), self.rel)


def _gamma(terms: float) -> float:
    """Relative error bound of a sum of ``terms`` non-negative float64 addends (with slack)."""
    return 2.0 * (terms + 8.0) * _U


# ------------------------------------------------------------------------------- the log-normal


def _mills_tail(a: float) -> float:
    """Upper bound of the standard normal tail Φ(−a), a > 0: φ(a)/a (rounded up)."""
    return math.exp(-0.5 * a * a) / (a * math.sqrt(2.0 * math.pi)) * (1.0 + 8.0 * _U)


def _tail_point(tail: float) -> float:
    """a > 1 with φ(a)/a ≤ ``tail``."""
    a = 1.0
    while _mills_tail(a) > tail:
        a += 0.25
    return a


def gaussian_bins(mu: float, m: int, tail: float) -> Tuple[int, np.ndarray, np.ndarray, float, dict]:
    """The log-normal X = exp(μZ − μ²/2), Z ~ N(0, 1), on the bins [kh, (k+1)h] of log X.

    Returns (k0, lower, upper, rel, tails): for bin k0 + i, the Q-masses its mean-preserving split
    sends to e^{(k0+i)h} (``lower[i]``) and to e^{(k0+i+1)h} (``upper[i]``):

        upper = w ∫₀¹ φ(z_k + ws)·g(s) ds,   lower = w ∫₀¹ φ(z_k + ws)·(1 − g(s)) ds,

    w = h/μ, z_k = (kh + μ²/2)/μ, g(s) = expm1(hs)/expm1(h) (the bin's log X is kh + hs). Both
    integrands are non-negative; 4-node Gauss–Legendre. Error: on the disc |ζ − ξ| ≤ 1 around a
    point of the bin the integrand is bounded by M = e^{1/2}φ(x₀)·(e^{μ(w+1)} + 2)/expm1(h) with x₀
    the distance from 0 of the disc's real range, so the n-node rule errs by at most
    w^{2n+1}(n!)^4/((2n+1)((2n)!)^2)·M (Cauchy's estimate for the (2n)-th derivative in the
    classical remainder). ``rel`` bounds the relative error of every returned mass (float
    evaluation, node positions and the quadrature bound). ``tails``: upper bounds of the Q- and
    P-masses below the first bin and above the last (Mills' ratio), each ≤ ``tail``.
    """
    h = 2.0**-m
    w = h / mu
    a = _tail_point(tail)
    z_lo, z_hi = -a, mu + a  # Φ(z_lo) ≤ tail (Q, left); Φ̄(z_hi − μ) ≤ tail (P, right)
    k0 = int(math.floor((mu * z_lo - 0.5 * mu * mu) / h))
    k1 = int(math.ceil((mu * z_hi - 0.5 * mu * mu) / h))
    k = np.arange(k0, k1, dtype=float)
    z = (k * h + 0.5 * mu * mu) / mu
    pts = (k[:, None] * h + 0.5 * mu * mu + h * _GL_NODES[None, :]) / mu
    dens = np.exp(-0.5 * pts * pts) * (1.0 / math.sqrt(2.0 * math.pi))
    g = np.expm1(h * _GL_NODES) / math.expm1(h)
    g_low = np.exp(h * _GL_NODES) * np.expm1(h * (1.0 - _GL_NODES)) / math.expm1(h)  # 1 − g without cancellation
    upper = w * (dens @ (_GL_WEIGHTS * g))
    lower = w * (dens @ (_GL_WEIGHTS * g_low))
    # quadrature bound (absolute), made relative to the smaller of the two parts of the bin
    x0 = np.maximum(0.0, np.maximum(z - 1.0, -(z + w + 1.0)))
    bound_m = math.exp(0.5) / math.sqrt(2.0 * math.pi) * np.exp(-0.5 * x0 * x0) * \
        (math.exp(mu * (w + 1.0)) + 2.0) / math.expm1(h)
    quad = w ** (2 * _GL_N + 1) * _GL_CONST * bound_m
    smallest = np.minimum(upper, lower)
    with np.errstate(divide="ignore", invalid="ignore"):
        quad_rel = float(np.max(np.where(smallest > 0, quad / smallest, 0.0)))
    if not quad_rel < 1e-6:
        raise UnsupportedEventError(
            f"random allocation: the Gaussian bins cannot be integrated to a certified accuracy at "
            f"noise_multiplier={1.0 / mu:.3g} (relative quadrature bound {quad_rel:.3g})")
    # node positions: |error| ≤ 4u(|kh| + μ²/2 + h)/μ in z, moving φ by |z|·that relatively
    zmax = float(np.max(np.abs(pts)))
    pos_rel = 4.0 * _U * (max(abs(k0), abs(k1)) * h + 0.5 * mu * mu + h) / mu * (zmax + 1.0)
    rel = quad_rel + pos_rel + 64.0 * _U
    tails = {
        "q_left": _mills_tail(-z_lo if z_lo < 0 else 1.0),
        "p_left": _mills_tail(mu - z_lo),
        "q_right": _mills_tail(z_hi),
        "p_right": _mills_tail(z_hi - mu),
    }
    return k0, lower, upper, rel, tails


def _base_split(mu: float, m: int, tail: float) -> _SplitLaw:
    """The Q-law of one Xᵢ, split onto the grid (upper pair)."""
    k0, lower, upper, rel, tails = gaussian_bins(mu, m, tail)
    n = lower.size
    q = np.zeros(n + 1)
    q[:n] += lower
    q[1:] += upper
    rel += _gamma(2)
    h = 2.0**-m
    # left tail → {0, e^{k0 h}}: the point gets (P-mass below)/e^{k0 h}, 0 gets at most the Q-mass
    q[0] += tails["p_left"] * math.exp(-k0 * h) * (1.0 + 4.0 * _U + 2.0 * abs(k0) * h * _U)
    # right tail → {e^{k1 h}, ∞}: the point gets its Q-mass, ∞ at most the P-mass above
    q[-1] += tails["q_right"]
    return _SplitLaw(m, k0, q, tails["q_left"], tails["p_right"], rel)


def _base_merge(mu: float, m: int, tail: float) -> _MergeLaw:
    """The grouped law of one Xᵢ: each bin [kh, (k+1)h] one group (lower pair)."""
    k0, lower, upper, rel, tails = gaussian_bins(mu, m, tail)
    h = 2.0**-m
    x = np.exp((k0 + np.arange(lower.size + 1)) * h)
    mass = lower + upper
    moment = x[:-1] * lower + x[1:] * upper
    rel += _gamma(3) + 2.0 * (abs(k0) + lower.size + 1) * h * _U  # e^{kh}: u|kh| from the rounded argument
    mass_high, moment_high = mass.copy(), moment.copy()
    # tails: lower run leaves them out (0 ≤ exact); upper run puts their upper bounds in the end groups
    mass_high[0] += tails["q_left"]
    moment_high[0] += tails["p_left"]
    mass_high[-1] += tails["q_right"]
    moment_high[-1] += tails["p_right"]
    return _MergeLaw(m, k0, mass, moment, mass_high, moment_high, rel)


# ------------------------------------------------------------------------------- sums of laws


def _out_range(sa: int, na: int, sb: int, nb: int, table: _Table) -> Tuple[int, int]:
    start = max(sa, sb)
    stop = max(sa + na - 1, sb + nb - 1) + int(table.f[0]) + 2
    if stop - start + 1 > MAX_POINTS:
        raise UnsupportedEventError(
            f"random allocation: a partial sum needs {stop - start + 1} grid points, more than "
            f"MAX_POINTS={MAX_POINTS} (noise multiplier too small for this many steps per epoch); "
            "use another sampler or more noise")
    return start, stop - start + 1


def _sum_split(a: _SplitLaw, b: _SplitLaw, m: int, budget: float) -> _SplitLaw:
    """Law of the sum of independent partial sums (mean-preserving splits), tails trimmed."""
    a, b = a.refined(m), b.refined(m)
    t = _table(m)
    start, size = _out_range(a.start, a.q.size, b.start, b.q.size, t)
    if a.zero or b.zero:  # 0 + W lands at W's own indices
        low = min(a.start, b.start)
        start, size = low, size + start - low
    out = convolve_split(a.q, a.start, b.q, b.start, t.far, t.f, t.w_lo, t.w_hi, t.decay, t.hi_far, start, size)
    terms = 4.0 * t.far + 4.0 + a.q.size + b.q.size
    rel = a.rel + b.rel + a.rel * b.rel + 3.0 * _gamma(terms)
    # a zero atom adds the other law unchanged
    if a.zero or b.zero:
        out[b.start - start:b.start - start + b.q.size] += a.zero * b.q
        out[a.start - start:a.start - start + a.q.size] += b.zero * a.q
        rel += _gamma(3)
    total_a, total_b = math.fsum(a.q) + a.zero, math.fsum(b.q) + b.zero
    inf_mean = (a.inf_mean * total_b + b.inf_mean * total_a) * (1.0 + 8.0 * _U)
    law = _SplitLaw(m, start, out, a.zero * b.zero, inf_mean, rel)
    return _trim_split(law, budget)


def _trim_split(law: _SplitLaw, budget: float) -> _SplitLaw:
    """Cut the ends (both splits mean-preserving): below, the entries under :data:`_FLOOR` and a
    Q-mass of at most 1e-16·``budget`` are split onto {0, first kept point}; above, the entries
    under the floor and a mean of at most ``budget`` onto {last kept point, +∞}. No entry of the
    result is in (0, _FLOOR), so no product of two masses and a weight is subnormal."""
    big = np.flatnonzero(law.q >= _FLOOR)
    if big.size == 0:
        return law
    q = law.q.copy()
    h = 2.0**-law.m
    start = law.start
    i0 = max(int(np.searchsorted(np.cumsum(q), 1e-16 * budget, side="right")), int(big[0]))
    x_rel = np.exp((np.arange(q.size) - q.size + 1) * h)  # e^{(k − last)h}
    right = np.cumsum((q * x_rel)[::-1])[::-1] * math.exp((start + q.size - 1) * h)  # mean from k on
    above = np.flatnonzero(right <= budget)
    i1 = int(above[0]) - 1 if above.size else q.size - 1
    i1 = max(min(i1, int(big[-1])), i0)
    zero, inf_mean = law.zero, law.inf_mean
    if i0 > 0:
        lag = (np.arange(i0) - i0) * h  # e^{lag}: the share kept at the cut point
        q[i0] += float(np.sum(q[:i0] * np.exp(lag))) * (1.0 + _gamma(i0 + 4))
        zero += float(np.sum(q[:i0] * -np.expm1(lag))) * (1.0 + _gamma(i0 + 4))
    if i1 < q.size - 1:
        tail = q[i1 + 1:]
        q[i1] += float(np.sum(tail)) * (1.0 + _gamma(tail.size))
        x_cut = math.exp((start + i1) * h)
        inf_mean += x_cut * float(np.sum(tail * np.expm1(np.arange(1, tail.size + 1) * h))) * (1.0 + _gamma(tail.size + 8))
    q = q[i0:i1 + 1]
    q[(q > 0) & (q < _FLOOR)] = 0.0  # interior (never below the floor in practice): see _flush
    return _SplitLaw(law.m, start + i0, q, zero, inf_mean, law.rel + _gamma(q.size))


def _sum_merge(a: _MergeLaw, b: _MergeLaw, m: int, budget: float) -> _MergeLaw:
    """Grouped law of the sum (both runs, same grouping), ends merged into the end groups."""
    a, b = a.refined(m), b.refined(m)
    t = _table(m)
    start, size = _out_range(a.start, a.mass_low.size, b.start, b.mass_low.size, t)
    low = convolve_merge(a.mass_low, a.moment_low, a.start, b.mass_low, b.moment_low, b.start, t.far, t.f,
                         start, size)
    high = convolve_merge(a.mass_high, a.moment_high, a.start, b.mass_high, b.moment_high, b.start, t.far, t.f,
                          start, size)
    terms = 2.0 * t.far + 4.0 + a.mass_low.size + b.mass_low.size
    rel = a.rel + b.rel + a.rel * b.rel + _gamma(2 * terms)
    law = _MergeLaw(m, start, low[0], low[1], high[0], high[1], rel)
    return _trim_merge(law, budget)


def _trim_merge(law: _MergeLaw, budget: float) -> _MergeLaw:
    """Merge the ends into the end groups (a post-processing; the same groups in both runs): the
    upper run's entries under :data:`_FLOOR`, a Q-mass ≤ 1e-16·``budget`` below and a moment ≤
    ``budget`` above. Lower-run entries under the floor are then set to 0, which only lowers the
    lower run (the safe side for it)."""
    mass = law.mass_high
    big = np.flatnonzero(mass >= _FLOOR)
    if big.size == 0:
        return law
    i0 = max(int(np.searchsorted(np.cumsum(mass), 1e-16 * budget, side="right")), int(big[0]))
    right = np.cumsum(law.moment_high[::-1])[::-1]
    above = np.flatnonzero(right <= budget)
    i1 = int(above[0]) - 1 if above.size else mass.size - 1
    i1 = max(min(i1, int(big[-1])), i0)
    arrays = []
    for v_all in (law.mass_low, law.moment_low, law.mass_high, law.moment_high):
        v = v_all[i0:i1 + 1].copy()
        if i0:
            v[0] += float(np.sum(v_all[:i0]))
        if i1 < v_all.size - 1:
            v[-1] += float(np.sum(v_all[i1 + 1:]))
        arrays.append(v)
    for v in arrays[:2]:
        v[v < _FLOOR] = 0.0
    high_mass = arrays[2]
    high_mass[(high_mass > 0) & (high_mass < _FLOOR)] = _FLOOR  # rounded up (upper run): interior, in practice never
    return _MergeLaw(law.m, law.start + i0, *arrays, law.rel + _gamma(mass.size))


# --------------------------------------------------------------------------------- the tree


def allocation_grid(sigma: float, num_steps: int) -> Dict[int, int]:
    """Grid exponent m (h = 2^{−m}) for each partial-sum size of the binary tree (module docstring)."""
    mu = 1.0 / sigma
    var = math.expm1(min(mu * mu, 700.0)) / num_steps
    sd = min(math.sqrt(var), mu)
    m_final = int(math.ceil(-math.log2(sd / RA_POINTS_PER_SD)))
    m_final = min(max(m_final, _COARSEST + 2), _FINEST)
    grids = {}
    size = 1
    sizes = {1}
    while size * 2 <= num_steps:
        size *= 2
        sizes.add(size)
    acc = 0
    for bit in range(num_steps.bit_length()):
        if num_steps >> bit & 1:
            acc += 1 << bit
            sizes.add(acc)
    for s in sizes:
        coarser = int(math.floor(math.log2(math.sqrt(num_steps / s)))) if s < num_steps else 0
        grids[s] = max(m_final - max(coarser, 0), _COARSEST)
    return grids


def _tree(base, combine, num_steps: int, grids: Dict[int, int], budget: float):
    """Σ of ``num_steps`` i.i.d. copies by repeated squaring; ``combine(a, b, m, budget)``."""
    powers = [(1, base)]
    while powers[-1][0] * 2 <= num_steps:
        size, law = powers[-1]
        powers.append((2 * size, combine(law, law, grids[2 * size], budget * 2 * size / num_steps)))
    total, law_total = 0, None
    for size, law in powers:
        if num_steps & size:
            if law_total is None:
                total, law_total = size, law
            else:
                total += size
                law_total = combine(law_total, law, grids[total], budget * total / num_steps)
    return law_total


def _final_shift(num_steps: int, m: int) -> Tuple[int, float, float]:
    """S/t = e^{(k − g)h}, g = log(t)/h: the point lands at (k − c, k − c + 1), c = ⌈g⌉, with the
    (rounded-up) shares (w_lo, w_hi) of its mean-preserving split, computed in mpmath."""
    h = mpmath.mpf(2) ** -m
    with mpmath.workdps(40):
        g = mpmath.log(num_steps) / h
        c = int(mpmath.ceil(g))
        r = (c - g) * h  # the point is e^{(k−c)h}·e^{r}, r ∈ [0, h): upper share (e^r − 1)/(e^h − 1)
        w_hi = mpmath.expm1(r) / mpmath.expm1(h)
        w_lo = 1 - w_hi
    up = lambda v: float(v) * (1.0 + 2.0 * _U) + (2.0 * _U if v else 0.0)
    return c, up(w_lo), up(w_hi)


def _upper_models(sigma: float, num_steps: int, grids: Dict[int, int], budget: float) -> Tuple[LossModel, LossModel]:
    mu = 1.0 / sigma
    tail = _BASE_TAIL / num_steps
    law = _tree(_base_split(mu, grids[1], tail), _sum_split, num_steps, grids, budget)
    m = law.m
    h = 2.0**-m
    c, w_lo, w_hi = _final_shift(num_steps, m)
    q = np.zeros(law.q.size + 1)
    q[:-1] += law.q * w_lo
    q[1:] += law.q * w_hi
    rel = law.rel + _gamma(3)
    q = q / (1.0 - rel) * (1.0 + 4.0 * _U)  # every Q-mass at least its exact value
    k = law.start - c + np.arange(q.size)
    keep = q > 0
    k, q = k[keep], q[keep]
    loss = k * h
    p = q * np.exp(loss) * (1.0 + 4.0 * _U + 2.0 * _U * np.abs(loss))
    inf_p = law.inf_mean / num_steps / (1.0 - rel) * (1.0 + 8.0 * _U)
    zero_q = law.zero / (1.0 - rel) * (1.0 + 8.0 * _U)
    atoms = Atoms(np.concatenate([loss, [math.inf, -math.inf]]), np.concatenate([p, [inf_p, 0.0]]),
                  np.concatenate([q, [0.0, zero_q]]))
    remove = LossModel((), atoms)
    return remove, remove.reverse()


def _lower_models(sigma: float, num_steps: int, grids: Dict[int, int], budget: float) -> Tuple[LossModel, LossModel]:
    mu = 1.0 / sigma
    tail = _BASE_TAIL / num_steps
    law = _tree(_base_merge(mu, grids[1], tail), _sum_merge, num_steps, grids, budget)
    rel = law.rel + _gamma(4)
    p = law.moment_low / num_steps * (1.0 - rel) * (1.0 - 4.0 * _U)  # P-mass at most its exact value
    q = law.mass_high / (1.0 - rel) * (1.0 + 4.0 * _U)  # Q-mass at least its exact value
    keep = (p > 0) & (q > 0)
    loss = np.log(p[keep] / q[keep])
    atoms = Atoms(loss, p[keep], q[keep])
    remove = LossModel((), atoms)
    return remove, remove.reverse()


#: entries below this are merged / split into the ends of a law, so that no product is subnormal
_FLOOR = 1e-130
#: per-epoch mean (times t) that may be moved to loss +∞ by the upper pair's trims
_TRIM_BUDGET = 1e-15

_CACHE: Dict[tuple, Tuple[LossModel, LossModel]] = {}
_CACHE_SIZE = 64


def random_allocation_models(event: RandomAllocationEvent, side: str = "upper") -> Tuple[LossModel, LossModel]:
    """(removal pair, addition pair) of one epoch of ``event`` (``num_selected`` must be 1).

    ``side="upper"``: the dominating pair (certified upper bounds); ``side="lower"``: the
    dominated grouped pair (for certified lower bounds). Cached per (σ, t, side).
    """
    if not isinstance(event.event, GaussianEvent):
        raise UnsupportedEventError(
            "the 'pld' accountant analyses RandomAllocationEvent with a GaussianEvent inside; got "
            f"{type(event.event).__name__}")
    if event.relation != "add_remove":
        raise UnsupportedEventError(
            "random allocation is analysed for relation='add_remove' (Chua et al. 2025; Feldman & "
            "Shenfeld 2025); for replace_one use group privacy: an add_remove (eps, delta) gives "
            f"(2 eps, (1 + e^eps) delta); got relation={event.relation!r}")
    if event.num_selected != 1:
        raise UnsupportedEventError("compose RandomAllocationEvent.decomposed() for num_selected > 1")
    sigma, t = event.event.noise_multiplier, event.num_steps
    if not 1e-2 <= sigma <= 1e6:
        raise UnsupportedEventError(
            f"the 'pld' accountant analyses random allocation with noise_multiplier in [0.01, 1e6]; got {sigma!r}")
    key = (sigma, t, side)
    if key in _CACHE:
        return _CACHE[key]
    grids = allocation_grid(sigma, t)
    builder = _upper_models if side == "upper" else _lower_models
    models = builder(sigma, t, grids, _TRIM_BUDGET * t)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = models
    return models


_SIDE: contextvars.ContextVar[str] = contextvars.ContextVar("dpcore_pld_pair_side", default="upper")


@contextlib.contextmanager
def dominated_pairs() -> Iterator[None]:
    """Within the block, leaves whose dominating pair is not exact (random allocation) give their
    *dominated* pair instead, so that the PLD accountant's lower bound is a lower bound of the true
    ε (:func:`dpcore.pld.pld_epsilon` runs the composition once more in this block)."""
    token = _SIDE.set("lower")
    try:
        yield
    finally:
        _SIDE.reset(token)


def pair_side() -> str:
    """``"upper"`` (dominating pairs, the default) or ``"lower"`` (inside :func:`dominated_pairs`)."""
    return _SIDE.get()


def has_dominated_pairs(event: PrivacyEvent) -> bool:
    """Whether the tree has a leaf whose lower bound needs a separate, dominated pair."""
    if isinstance(event, RandomAllocationEvent):
        return True
    return any(has_dominated_pairs(c) for c in event.children())
