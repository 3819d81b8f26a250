"""A privacy-loss distribution on the grid hℤ, stored in exponentially tilted coordinates.

:class:`GridPld` describes a *dominating* discrete PLD D (the law of the privacy loss under P, on
the losses ℓ_j = (start + j)·h, plus a mass at +∞). It stores the **tilted** masses

    m̃_j = p_j · exp(θ·ℓ_j − log_scale),           p_j the P-mass of D at ℓ_j,

for a tilt θ ≥ 0 and a scale ``log_scale``. Tilting commutes with convolution
(e^{θ(ℓ+ℓ')} = e^{θℓ}e^{θℓ'}), so compositions are computed on the tilted arrays, and every
error bound is an ℓ1 bound *in tilted units*. Read back at ε, an ℓ1 error e of the tilted array
changes δ(ε) = Σ_{ℓ_j > ε} p_j (1 − e^{ε−ℓ_j}) + p_∞ by at most exp(log_scale − θε)·e, because
e^{−θℓ_j} ≤ e^{−θε} on the entries that count. With θ near the saddle point of the composed loss
at ε, exp(log_scale − θε) is the Chernoff bound of P(L > ε) — within a small factor of δ(ε) — so
relative float errors of the tilted arrays become relative errors of δ, however small δ is and
however many steps are composed (with θ = 0 the bounds are absolute ℓ1 bounds, as in a plain PLD).

Error terms, each an upper bound on a distinct effect:

``err``
    ℓ1 (tilted) distance between ``pmf`` and D's tilted masses (float error of every FFT, of the
    characteristic-function powers, and of aliasing moved *down*). Added to the upper bound.
``moved`` / ``bias``
    ℓ1 (tilted) of deliberate *upward* changes that make D dominate the exact composition of the
    leaves' split pairs: mass moved up (wrap-around of a lower tail, truncation) and roundings
    directed up. D dominates, so the upper bound needs nothing; the lower bound subtracts them.
``inf_mass`` / ``inf_moved``
    P-mass at loss +∞ (untilted, an upper bound; charged to δ in full), and the part of it put
    there by truncation (subtracted by the lower bound).
``edge`` / ``count`` / ``spread`` / ``log_var`` / ``wide`` / ``wide_extra`` / ``wide_extra_var``
    Mass cut at the leaves (summed over leaf instances), the number of leaf instances, the sum of
    the squared widths w² of every connect-the-dots split (leaves and coarsenings), the sum of
    log(1 + sinh²(w/2)) over them, and the wide-tail-bin bookkeeping of the leaves
    (:func:`~dpcore.pld.discretize.discretize`); used by the optimistic bound (:mod:`~dpcore.pld.lower`).

Composition of two PLDs is the convolution of their P-distributions of the loss (Sommer, Meiser,
Mohammadi 2019; Koskela, Jälkö, Honkela 2020); ``count``-fold self-composition is computed from the
characteristic function (:mod:`dpcore.pld.charfn`). FFT errors follow Higham, "Accuracy and
Stability of Numerical Algorithms" (2nd ed.), Thm 24.2, with every FFT length a power of two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Optional, Tuple

import numpy as np
from scipy import fft as sfft

__all__ = ["GridPld", "fft_gamma", "log_split_factor", "split_variance"]

_U = 2.0**-53
#: log of the smallest tilted mass kept as a normal float (smaller ones are moved, never dropped)
LOG_TINY = -700.0


def fft_gamma(n: int) -> float:
    """Relative ℓ2 error bound γ = log₂(n)·8u of a radix-2 FFT of length n (Higham, Thm 24.2 with
    η = 8u: pocketfft's twiddles are accurate to about one ulp; its radix-4 passes are pairs of
    radix-2 stages whose inner twiddles ±1, ±i are exact)."""
    return math.log2(max(n, 2)) * 8.0 * _U


def split_variance(width: float) -> float:
    """Largest Var(e^{−D}) of one connect-the-dots split of width w: sinh²(w/2).

    A point at t ∈ [0, w] above the lower grid point moves to the upper one with probability
    (1 − e^{−t})/(1 − e^{−w}); e^{−D} takes the values e^{t−w} < 1 < e^{t} with mean 1, so its
    variance is (e^t − 1)(1 − e^{t−w}), largest at e^t = (e^w + 1)/2, where it is sinh²(w/2).
    """
    return math.sinh(0.5 * width) ** 2


def log_split_factor(width: float) -> float:
    """log(1 + sinh²(w/2)) = 2·log cosh(w/2): one split's factor in the Scarf variance bound
    Π(1 + sinh²(w/2)) (:func:`split_variance`), without overflow."""
    w = abs(width)
    return w + 2.0 * math.log1p(math.exp(-w)) - 2.0 * math.log(2.0)


def _sum_up(x: np.ndarray) -> float:
    """Σx for x ≥ 0, rounded up (pairwise summation: relative error ≤ log₂(n)·u)."""
    s = float(np.sum(x))
    return s * (1.0 + (math.log2(max(x.size, 2)) + 2.0) * _U)


def _convolve(a: np.ndarray, b: np.ndarray, same: bool) -> Tuple[np.ndarray, float]:
    """Linear convolution of non-negative a, b by a real FFT of power-of-two length, and a bound
    on the float error of every entry: 4(γ + u)(‖a‖₂‖b‖₁ + ‖a‖₁‖b‖₂) (Higham, Thm 24.2)."""
    n = a.size + b.size - 1
    nfft = 1 << max(n - 1, 1).bit_length()
    fa = sfft.rfft(a, nfft)
    fb = fa if same else sfft.rfft(b, nfft)
    c = sfft.irfft(fa * fb, nfft)[:n]
    sa, na = float(np.sum(np.abs(a))), math.sqrt(float(np.sum(a * a)))
    sb, nb = (sa, na) if same else (float(np.sum(np.abs(b))), math.sqrt(float(np.sum(b * b))))
    return c, 4.0 * (fft_gamma(nfft) + _U) * (na * sb + sa * nb) * (1.0 + 8.0 * _U)


@dataclass(frozen=True)
class GridPld:
    """Tilted P-masses of a dominating PLD on the grid (start + i)·h, plus +∞ mass and error terms
    (see the module docstring). With ``theta = log_scale = 0`` the masses are the plain P-masses."""

    h: float
    start: int
    pmf: np.ndarray
    inf_mass: float
    err: float
    moved: float
    edge: float
    count: int
    spread: float
    bias: float = 0.0
    wide: float = 0.0
    wide_extra: float = 0.0
    theta: float = 0.0
    log_scale: float = 0.0
    log_var: float = 0.0
    wide_extra_var: float = 0.0
    inf_moved: float = 0.0
    bias_entries: Optional[np.ndarray] = None  # a leaf's ``bias`` entry by entry (consumed by :meth:`with_tilt`)

    # ------------------------------------------------------------------ structure

    def losses(self) -> np.ndarray:
        """Loss value of every entry of ``pmf``, nats."""
        return (self.start + np.arange(self.pmf.size)) * self.h

    def tilted_total(self) -> float:
        """Σ pmf, rounded up."""
        return _sum_up(self.pmf)

    def normalized(self) -> "GridPld":
        """The same PLD with Σ pmf ≈ 1: the masses are divided by their sum S (rounded up, so the
        represented PLD can only grow: recorded in ``bias``) and log S is added to ``log_scale``
        (rounded up as well)."""
        s = float(np.sum(self.pmf))
        if not s > 0.0:
            return self
        inv = (1.0 / s) * (1.0 + 2.0 * _U)
        pmf = self.pmf * inv * (1.0 + _U)
        log_s = math.log(s)
        up = 4.0 * _U * (abs(log_s) + abs(self.log_scale) + 1.0)
        grow = math.exp(up) * (1.0 + 4.0 * _U)  # the rounded-up log_scale inflates every mass by at most this
        scale = inv * (1.0 + _U)
        return replace(self, pmf=pmf, log_scale=self.log_scale + log_s + up, err=self.err * scale,
                       moved=self.moved * scale, bias=(self.bias * scale + 4.0 * _U * _sum_up(pmf)) * grow
                       + (grow - 1.0) * _sum_up(pmf))

    def with_tilt(self, theta: float) -> "GridPld":
        """This untilted, exactly represented (``err == 0``) PLD — a leaf — in coordinates tilted by θ ≥ 0.

        m̃_j = exp(log p_j + θℓ_j − s), s = max_j(log p_j + θℓ_j), each rounded up by its float
        error (``bias``; the leaf's own roundings ``bias_entries`` are carried entry by entry).
        Entries whose tilted mass would fall below e^{−700} are not dropped: below the largest one
        they are moved up to the first kept entry (their P-mass rounded up, ``moved``); above it,
        to loss +∞ (``inf_mass``, ``inf_moved``).
        """
        if self.err != 0.0 or self.theta != 0.0 or self.log_scale != 0.0:
            raise ValueError("with_tilt needs an untilted, exactly represented PLD (a leaf)")
        nz = np.flatnonzero(self.pmf > 0.0)
        if nz.size == 0 or theta == 0.0:
            return replace(self, theta=float(theta), bias_entries=None)
        ell = (self.start + nz) * self.h
        p = self.pmf[nz]
        logt = np.log(p) + theta * ell
        s = float(np.max(logt))
        keep = np.flatnonzero(logt - s >= LOG_TINY)
        k0, k1 = int(keep[0]), int(keep[-1])
        lo, hi = int(nz[k0]), int(nz[k1])  # first and last kept entries of the pmf
        sel = slice(k0, k1 + 1)
        rel = 4.0 * _U * (3.0 + np.abs(logt[sel] - s) + abs(s) + theta * np.abs(ell[sel]))
        vals = np.exp(np.maximum(logt[sel] - s, LOG_TINY)) * (1.0 + rel)
        pmf = np.zeros(hi - lo + 1)
        pmf[nz[sel] - lo] = vals
        bias = 2.0 * float(np.sum(vals * rel))
        entries = self.bias_entries
        if entries is None and self.bias:
            raise ValueError("with_tilt needs bias_entries to carry a nonzero bias into tilted units")
        if entries is not None:  # the leaf's own roundings, entry by entry, in tilted units
            span = (self.start + np.arange(lo, hi + 1)) * self.h
            with np.errstate(under="ignore"):
                bias += _sum_up(entries[lo:hi + 1] * np.exp(np.minimum(theta * span - s, 700.0)))
        moved = 0.0
        if k0 > 0:  # P-mass below the first kept entry, moved up to it (with its roundings)
            below = (_sum_up(p[:k0]) + (_sum_up(entries[:lo]) if entries is not None else 0.0)) * (1.0 + 8.0 * _U)
            moved = below * math.exp(min(theta * ell[k0] - s, 700.0)) * (1.0 + 8.0 * _U)
            pmf[0] += moved
        above = 0.0
        if k1 + 1 < nz.size:
            above = (_sum_up(p[k1 + 1:]) + (_sum_up(entries[hi + 1:]) if entries is not None else 0.0)) * (1.0 + 8.0 * _U)
        return replace(self, start=self.start + lo, pmf=pmf, theta=float(theta), log_scale=s,
                       inf_mass=self.inf_mass + above, inf_moved=self.inf_moved + above,
                       moved=self.moved + moved, bias=bias, bias_entries=None)

    # ------------------------------------------------------------------ composition

    def compose(self, other: "GridPld", tail: float = 0.0) -> "GridPld":
        """PLD of the composition of the two pairs (linear FFT convolution of the tilted masses).

        Both must share the tilt; grids are nested (h0·2^j) and the finer one is coarsened first.
        ``tail`` > 0 moves the right end to +∞ while the moved P-mass (with its error bound) is
        ≤ ``tail`` (:meth:`truncate`).
        """
        if self.theta != other.theta:
            raise ValueError(f"cannot compose PLDs with different tilts ({self.theta}, {other.theta})")
        if self.h < other.h:
            return self.coarsen(int(round(other.h / self.h))).compose(other, tail)
        if other.h < self.h:
            return self.compose(other.coarsen(int(round(self.h / other.h))), tail)
        a, b = self.pmf, other.pmf
        same = other is self
        c, entry = _convolve(a, b, same)
        np.maximum(c, 0.0, out=c)  # the exact convolution is ≥ 0: clamping only brings c closer
        sa, sb = self.tilted_total(), other.tilted_total()
        sa_x, sb_x = sa + self.err, sb + other.err  # bounds on the exact arrays' sums
        l1 = math.sqrt(c.size) * entry
        out = replace(
            self, start=self.start + other.start, pmf=c,
            inf_mass=min(1.0, (self.inf_mass + other.inf_mass) * (1.0 + 2.0 * _U)),
            err=(self.err * sb_x + other.err * sa + l1) * (1.0 + 4.0 * _U),
            moved=(self.moved * sb_x + other.moved * sa_x) * (1.0 + 4.0 * _U),
            bias=(self.bias * sb_x + other.bias * sa_x) * (1.0 + 4.0 * _U),
            edge=self.edge + other.edge, count=self.count + other.count, spread=self.spread + other.spread,
            log_var=self.log_var + other.log_var, wide=(self.wide + other.wide) * (1.0 + 2.0 * _U),
            wide_extra=max(self.wide_extra, other.wide_extra),
            wide_extra_var=max(self.wide_extra_var, other.wide_extra_var),
            inf_moved=self.inf_moved + other.inf_moved, log_scale=self.log_scale + other.log_scale,
        ).normalized()
        return out.truncate(tail) if tail > 0.0 else out

    def truncate(self, tail: float) -> "GridPld":
        """Move the right end to +∞ while the P-mass moved — the computed masses plus the error
        bound exp(log_scale − θℓ)·err of the first entry moved — stays ≤ ``tail`` (a pessimistic
        move: the mass lands at +∞, ``inf_mass``; recorded in ``inf_moved``). Trailing zeros go."""
        nz = np.flatnonzero(self.pmf)
        if nz.size == 0:
            return self
        c = self.pmf[:int(nz[-1]) + 1]
        ell = (self.start + np.arange(c.size)) * self.h
        with np.errstate(over="ignore", under="ignore"):
            p_rev = (c * np.exp(self.log_scale - self.theta * ell))[::-1]
        mass = np.cumsum(p_rev) * (1.0 + (c.size + 4.0) * _U)
        with np.errstate(over="ignore", under="ignore"):
            slack = self.err * np.exp(self.log_scale - self.theta * ell[::-1])
        moved = mass + slack
        k = int(np.searchsorted(moved, tail, side="right"))  # entries moved from the right
        k = min(k, c.size - 1)
        if k == 0:
            return replace(self, pmf=c)
        add = float(moved[k - 1])
        return replace(self, pmf=c[:c.size - k].copy(), inf_mass=min(1.0, self.inf_mass + add),
                       inf_moved=self.inf_moved + add)

    def coarsen(self, factor: int) -> "GridPld":
        """The same PLD on the grid (factor·h)ℤ, split pessimistically ("connect the dots").

        A point ℓ between coarse points a < b goes to b with P-mass p(1 − e^{a−ℓ})/(1 − e^{a−b})
        and to a with the rest, preserving its P- and Q-mass: the coarse pair dominates the fine
        one (Doroshenko et al. 2022, Thm 3.3). In tilted units the two shares are multiplied by
        e^{θ(b−ℓ)} and e^{θ(a−ℓ)}. One split of width factor·h per instance of this PLD is added to
        ``spread`` / ``log_var``; float rounding is directed upwards (``bias``), and ``err`` /
        ``moved`` / ``bias`` grow by the largest total weight max_r(c_lo + c_hi) of a fine point.
        """
        if factor == 1:
            return self
        big = self.h * factor
        if not self.theta * big < 700.0:
            from ..events import UnsupportedEventError  # deferred: pmf is a leaf module

            raise UnsupportedEventError(
                f"the composed privacy loss needs a grid of {big:.3g} nats, too coarse for the tilt {self.theta:.3g} "
                "(its split weights overflow float64); the losses are too large for the 'pld' accountant")
        k0, r0 = divmod(self.start, factor)
        rows = -(-(r0 + self.pmf.size) // factor)
        fine = np.zeros(rows * factor)  # row j: the fine points r = 0 … factor − 1 above k0 + j
        fine[r0:r0 + self.pmf.size] = self.pmf
        fine = fine.reshape(rows, factor)
        r = np.arange(factor) * self.h
        w_hi = np.expm1(-r) / math.expm1(-big)  # (1 − e^{−r h}) / (1 − e^{−H})
        c_hi = w_hi * np.exp(self.theta * (big - r)) * (1.0 + 8.0 * _U)
        c_lo = (1.0 - w_hi) * np.exp(-self.theta * r) * (1.0 + 8.0 * _U)
        c_lo[0] = 1.0  # a point on the coarse grid stays where it is
        c_hi[0] = 0.0
        pmf = np.zeros(rows + 1)
        pmf[:-1] = fine @ c_lo
        pmf[1:] += fine @ c_hi
        pmf *= 1.0 + (2.0 * factor + 4.0) * _U  # ≤ 2·factor products and addends per coarse point
        if pmf[-1] == 0.0:
            pmf = pmf[:-1]
        growth = float(np.max(c_lo + c_hi)) * (1.0 + 4.0 * _U)
        bias = self.bias * growth + 2.0 * (2.0 * factor + 12.0) * _U * _sum_up(pmf)
        return replace(self, h=big, start=k0, pmf=pmf, spread=self.spread + big * big,
                       log_var=self.log_var + log_split_factor(big), err=self.err * growth,
                       moved=self.moved * growth, bias=bias)

    def self_compose(self, count: int, tail: float = 0.0, max_points: Optional[int] = None) -> "GridPld":
        """``count``-fold composition through the characteristic function (:func:`dpcore.pld.charfn.power`)."""
        from .charfn import DEFAULT_MAX_POINTS, compose_counts

        return compose_counts([(self, int(count))], max_points=max_points or DEFAULT_MAX_POINTS, tail=tail)

    # ------------------------------------------------------------------ δ(ε) and ε(δ)

    def error_scale(self, epsilon: float) -> float:
        """exp(log_scale − θ·ε): the factor turning tilted ℓ1 terms into δ at ε (capped at e^{700})."""
        return math.exp(min(700.0, self.log_scale - self.theta * epsilon))

    def log_p(self, j0: int, j1: int) -> np.ndarray:
        """log of the untilted P-masses of entries j0 … j1 − 1 (−inf for zeros)."""
        ell = (self.start + np.arange(j0, j1)) * self.h
        with np.errstate(divide="ignore"):
            return np.log(self.pmf[j0:j1]) + self.log_scale - self.theta * ell

    @cached_property
    def _first(self) -> int:
        """First entry whose loss can matter: below it the error term exp(log_scale − θℓ)·err alone is
        ≥ 1 (so δ_upper = 1 there) or the untilted masses would overflow (e^{700})."""
        if self.theta <= 0.0:
            return 0
        floor = math.log(self.err) if self.err > 0.0 else -700.0
        ell0 = (self.log_scale + max(floor, -700.0)) / self.theta
        return int(min(max(math.floor(ell0 / self.h) - self.start, 0), self.pmf.size))

    @cached_property
    def _curve(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(ℓ_j, A_j, C_j, rel_j) for the entries from :attr:`_first` on and one slot before them
        (ℓ = −∞): A_j = Σ_{k>j} p_k, C_j = Σ_{k>j} p_k e^{−ℓ_k} (suffix sums of the untilted masses,
        which are < e^{700} there), and a bound rel_j on their relative float error: the rounding of
        each p = m̃·exp(log_scale − θℓ) (u times |log_scale| + θ|ℓ| + 3) plus u per addend."""
        j0 = self._first
        ell = (self.start + np.arange(j0, self.pmf.size)) * self.h
        with np.errstate(under="ignore", over="ignore"):
            p = self.pmf[j0:] * np.exp(np.minimum(self.log_scale - self.theta * ell, 700.0))
            pe = p * np.exp(-ell)
        a = np.append(np.cumsum(p[::-1])[::-1], 0.0)
        c = np.append(np.cumsum(pe[::-1])[::-1], 0.0)
        terms = np.arange(ell.size + 1, 0, -1, dtype=float)
        big = 3.0 + abs(self.log_scale) + self.theta * float(np.max(np.abs(ell), initial=0.0))
        rel = (terms + 8.0) * _U + 4.0 * _U * big
        return np.concatenate(([-np.inf], ell)), a, c, rel

    def delta_grid(self, epsilon: float) -> Tuple[float, float]:
        """(computed Σ_{ℓ>ε} p·(1 − e^{ε−ℓ}) + inf_mass, bound on its rounding error), from the
        suffix sums: A_j − e^ε C_j for ε in [ℓ_j, ℓ_{j+1}); (1, 0) where only the entries the
        suffix leaves out could matter (there δ_upper is 1 anyway)."""
        ell, a, c, rel = self._curve
        j = self._slot(epsilon)
        if j == 0 and self._first > 0:
            return 1.0, 0.0
        ce = c[j] * math.exp(min(epsilon, 700.0)) if c[j] > 0.0 else 0.0
        value = float(a[j]) - ce + self.inf_mass
        return value, float(rel[j]) * (float(a[j]) + ce) + 4.0 * _U * self.inf_mass

    def _slot(self, epsilon: float) -> int:
        """Slot in :attr:`_curve` of the last grid loss ≤ ε (0: none, the −∞ slot); the grid is
        uniform, so the index is computed and then corrected against the float losses."""
        ell = self._curve[0]
        if not epsilon >= ell[1] if ell.size > 1 else True:
            return 0
        if epsilon >= ell[-1]:  # every grid loss ≤ ε (also ε far beyond the grid, e.g. 1e308)
            return ell.size - 1
        j = int(min(max(math.floor(epsilon / self.h) - self.start - self._first + 1, 0), ell.size - 1))
        while j + 1 < ell.size and ell[j + 1] <= epsilon:
            j += 1
        while j > 0 and ell[j] > epsilon:
            j -= 1
        return j

    def delta_upper(self, epsilon: float) -> float:
        """Upper bound on the exact δ(ε): the computed value plus its rounding and the tilted errors."""
        v, r = self.delta_grid(epsilon)
        return min(1.0, v + r + self.error_scale(epsilon) * self.err)

    def delta_bounds(self, epsilon: float) -> Tuple[float, float]:
        """(lower, upper) bounds on the exact δ(ε) of the composed pair (lower: :mod:`~dpcore.pld.lower`)."""
        from .lower import delta_lower

        upper = self.delta_upper(epsilon)
        return min(delta_lower(self, epsilon, upper), upper), upper

    @cached_property
    def _upper_at_grid(self) -> Tuple[np.ndarray, np.ndarray]:
        """(ℓ_j, :meth:`delta_upper` at ℓ_j) over the suffix of :attr:`_curve`, vectorised."""
        ell, a, c, rel = self._curve
        at = ell[1:]
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            ce = c[1:] * np.exp(np.minimum(at, 700.0))
            errs = self.err * np.exp(np.minimum(self.log_scale - self.theta * at, 700.0))
            out = a[1:] - ce + self.inf_mass + rel[1:] * (a[1:] + ce) + errs
        return at, np.where(np.isfinite(out), out, 2.0)

    def epsilon_upper(self, delta: float) -> float:
        """An ε ≥ 0, just above the grid root, whose :meth:`delta_upper` is ≤ δ (certified upper bound)."""
        if self.inf_mass >= delta:
            return math.inf
        if self.pmf.size == 0 or self.delta_upper(0.0) <= delta:
            return 0.0
        at, up = self._upper_at_grid
        ok = np.flatnonzero(up <= delta)
        if ok.size == 0:  # above the last point only the +∞ mass and the error terms are left
            lo = max(float(at[-1]), 0.0) if at.size else 0.0
            hi = lo + 1.0
            while self.delta_upper(hi) > delta:
                if hi - lo > 1e6:
                    return math.inf
                hi = lo + 2.0 * (hi - lo)
        else:
            j = int(ok[0])
            hi = max(float(at[j]), 0.0)
            lo = max(float(at[j - 1]), 0.0) if j > 0 else 0.0
        # bisection on the continuous, non-increasing δ_upper between the two points, where the sums
        # over the entries above ε are fixed (a scalar function of ε; the direct check follows)
        slot = self._slot(lo)
        _, a, c, rel = self._curve
        a_j, c_j, r_j = float(a[slot]), float(c[slot]), float(rel[slot])

        def upper(e: float) -> float:
            ce = c_j * math.exp(min(e, 700.0))
            return a_j - ce + self.inf_mass + r_j * (a_j + ce) + self.error_scale(e) * self.err

        for _ in range(80):
            if hi - lo <= 4e-16 * max(1.0, abs(hi)):
                break
            mid = 0.5 * (lo + hi)
            if upper(mid) <= delta:
                hi = mid
            else:
                lo = mid
        eps = hi
        step = max(abs(eps), 1.0) * 1e-15
        while self.delta_upper(eps) > delta:  # the direct evaluation is the certificate
            eps += step
            step *= 2.0
        return eps

    def epsilon_bounds(self, delta: float) -> Tuple[float, float]:
        """(lower, upper) bounds on the least ε ≥ 0 with δ_exact(ε) ≤ δ (see :meth:`delta_bounds`)."""
        from .lower import epsilon_lower

        upper = self.epsilon_upper(delta)
        return min(epsilon_lower(self, delta, upper), upper), upper
