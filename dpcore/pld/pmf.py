"""A privacy-loss distribution on the grid hℤ with the bookkeeping that keeps its bounds rigorous.

:class:`GridPld` holds the P-masses of the loss values (start + i)·h, the mass at +∞, and three
error terms, each an upper bound on a distinct effect:

``err``
    ℓ1 bound on the float64 error of ``pmf`` (discretisation arithmetic and every FFT).
``moved``
    Mass moved by tail truncation *after* discretisation (left tail rounded up to the first kept
    point, right tail sent to +∞). Moving loss up only increases δ(ε) = E_P[(1 − e^{ε−L})_+] (a
    coupling argument), so the upper bound needs nothing; the lower bound subtracts it.
``bias``
    ℓ1 bound on deliberate *upward* rounding (the leaf masses are rounded up by their error
    bounds, mass moved up the grid — :func:`~dpcore.pld.discretize.discretize`): the rounded PLD
    dominates the exact one entrywise in the upper-set sense, which convolution preserves, so
    the upper bound needs nothing; the lower bound subtracts it.
``edge`` / ``count`` / ``spread``
    Mass cut at the leaves (summed over leaf instances), the number of leaf instances, and the
    sum of the squared widths of every pessimistic split (one per leaf instance at the leaf grid,
    one per block instance at each coarsening); used by the optimistic bound
    (:meth:`GridPld.delta_bounds`).
``wide`` / ``wide_extra``
    Leaves discretised with wide tail bins (:func:`~dpcore.pld.discretize.discretize`, ``wide``):
    the sum over leaf instances of the P-mass of their wide bins (λ, the expected number of
    instances whose split is wide), and the largest extra squared width of one wide split beyond
    the h² already in ``spread``; also used only by the optimistic bound.

Composition is the convolution of the P-distributions of the loss (Sommer, Meiser, Mohammadi 2019;
Koskela, Jälkö, Honkela 2020), computed with a real FFT. The FFT error follows Higham, "Accuracy
and Stability of Numerical Algorithms" (2nd ed.), Thm 24.2: with γ = log₂(n)·η, η = 8u (pocketfft
twiddles accurate to about one ulp), every entry of the computed convolution is within
``4(γ + u)(‖a‖₂‖b‖₁ + ‖a‖₁‖b‖₂)`` of the exact one. The theorem is for radix-2 FFTs, so every
FFT length is a power of two: pocketfft then runs radix-4 passes — each a pair of radix-2 stages
whose inner twiddles (±1, ±i) are exact, with one rounded twiddle multiplication per element
instead of two — and at most one radix-2 pass, i.e. log₂ n stages each within Higham's
per-stage constant; √n times that bound is charged to ``err``,
and negative entries are set to 0 with their size charged too. A convolution of distributions
with long light tails is split into bulk × bulk (small; extended precision where the result is
reused often) and the tail terms (full length, float64, but with an error bound proportional to
the tail mass; when the result's ends are light, as a cyclic convolution of half the length
whose folded-over ends are bounded and charged, :func:`_wrap_window`). Extended-precision
results are rounded *up* to float64 (and the float64 sums and
splits that follow are directed upwards too), so those roundings go to ``bias``, not ``err``:
only the FFT's own two-sided error accumulates in ``err``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Optional, Tuple

import numpy as np
from scipy import fft as sfft

__all__ = ["GridPld", "hoeffding_shift"]

_U = 2.0**-53
_U_EXTENDED = 2.0**-64 if np.finfo(np.longdouble).nmant >= 63 else _U
#: entries below this fraction of the FFT's worst-case entrywise error are treated as noise when
#: choosing where to truncate (a speed heuristic only: whatever is cut is moved pessimistically
#: and accounted in ``moved``); observed FFT errors are ~2000x below the worst case
_NOISE_FRACTION = 1.0 / 4096.0
#: a convolution is split into bulk × bulk (in the requested precision) and the terms with a tail
#: of at most this mass on either side (float64; more after a trim by :data:`_TRIM_SLACK`): the
#: FFT error bound scales with the norms of the factors, so the long, light tails of the early
#: squarings no longer need extended precision
_BULK_TAIL = 1e-5
#: a self-square's bulk of m entries with 2m − 1 ≤ this factor × P, P the largest power of two
#: ≤ 2m − 2, is trimmed to P/2 entries, so its transform has length P rather than 2P; the trimmed
#: entries (at most ~10 % of the bulk, possibly more than :data:`_BULK_TAIL` of mass) join the
#: float64 tail terms, whose error bound is computed from their actual norms
_TRIM_SLACK = 1.1
#: shortest transform worth the wrapped-FFT bookkeeping (:func:`_wrap_window`)
_WRAP_MIN = 8192


def hoeffding_shift(spread: float, eta: float) -> float:
    """Shift c with P(Σ splitting moves > c) ≤ η, for splits whose squared widths sum to ``spread``.

    Each split moves a loss by D ∈ [a − ℓ, a + w − ℓ] with E[e^{−D} | past] = 1, hence
    E[D | past] ≤ w²/8 (Hoeffding's lemma); the centred sum exceeds sqrt(spread·ln(1/η)/2) with
    probability at most η (Azuma–Hoeffding inequality, Hoeffding 1963 Thm 2).
    """
    return spread / 8.0 + math.sqrt(spread * math.log(1.0 / eta) / 2.0)


def _wrap_window(x: np.ndarray, y: np.ndarray, budget: float) -> Optional[Tuple[int, int, float, float]]:
    """A shorter FFT for the convolution of two non-negative arrays whose product has light ends.

    Returns (s, L, w_low, w_high) or None. L is the power of two just above the longer factor,
    used when it is shorter than the linear convolution's FFT; the cyclic convolution of length L
    holds, at position j − s, the sum of the linear entries j' ≡ j (mod L), so the window
    [s, s + L) receives every entry: those in [s − L, s) moved up by L, those below s − L (when
    s > L) up by 2L, and those from s + L on (all below 2L) down by L. w_low and w_high bound the masses of those two parts (rounded-up sums of
    non-negative terms Σ_i x_i·Y(·), Y the cumulative sums of y from either end). An upward move
    of P-mass only increases δ(ε) (recorded in ``moved``, as a truncation); a downward one is
    charged as an ℓ1 error of 2·w_high (``err``: the mass is missing at its true place and extra
    at the wrapped one). The start s is the sum of the first indices where each factor's
    cumulative mass exceeds ``budget``/4, and the window is used only when both w_low and w_high
    are ≤ ``budget``.
    """
    n = x.size + y.size - 1
    size = 1 << max(x.size, y.size).bit_length()
    if size < _WRAP_MIN or size >= 1 << max(n - 1, 1).bit_length():
        return None
    cy = _prefix_sums(y, 0.25 * budget)  # cy[m] = Σ_{k≤m} y_k: non-negative terms, relative error ≤ y.size·u
    start = (int(np.searchsorted(_prefix_sums(x, 0.25 * budget), 0.25 * budget, side="right"))
             + int(np.searchsorted(cy, 0.25 * budget, side="right")))
    if start > cy.size:
        cy = np.cumsum(y)
    # below s: Σ_{i<s} x_i·Σ_{k<s−i} y_k
    lo = np.arange(min(start, x.size))
    w_low = float(np.sum(x[lo] * np.where(start - lo - 1 < y.size, cy[np.minimum(start - lo - 1, y.size - 1)], cy[-1])))
    # from s + L on: Σ_i x_i·Σ_{k≥s+L−i} y_k, non-zero only for i > s + L − y.size (and s + L − i ≥ 1)
    i0 = max(0, start + size - y.size + 1)
    if i0 < x.size:
        tail = np.cumsum(y[::-1])[::-1]  # tail[m] = Σ_{k≥m} y_k, again a sum of non-negative terms
        w_high = float(np.sum(x[i0:] * tail[start + size - i0:start + size - x.size:-1]))
    else:
        w_high = 0.0
    # every factor is a sum of non-negative terms (relative error ≤ (x.size + y.size)·u), so is each total
    slack = 1.0 + 2.0 * (x.size + y.size + 8.0) * _U
    w_low, w_high = w_low * slack, w_high * slack
    if w_low > budget or w_high > budget:
        return None
    return start, size, w_low, w_high


def _convolve(a: np.ndarray, b: np.ndarray, extended: bool, same: bool,
              window: Optional[Tuple[int, int]] = None) -> Tuple[np.ndarray, float, float]:
    """Linear convolution by real FFT: (result, ℓ2 bound on its error, upward-rounding ℓ1 bias).

    The error bound is Higham, Thm 24.2, in the FFT's precision. In extended precision the result
    is rounded *up* to float64 entrywise (``nextafter`` where the cast went down), so the cast is
    a one-sided (pessimistic) change, returned as the third value (≤ 2u·‖c‖₁) instead of being
    added to the two-sided error; in float64 the third value is 0. With ``window`` = (s, L)
    (:func:`_wrap_window`) the result is the cyclic convolution of length L, entries s … s + L − 1
    of the wrapped linear one; the bound is the same theorem for the length-L transform.
    """
    n = a.size + b.size - 1
    nfft = 1 << max(n - 1, 1).bit_length() if window is None else window[1]  # radix-2 bound applies
    u = _U_EXTENDED if extended else _U
    dtype = np.longdouble if extended else np.float64
    fa = sfft.rfft(a.astype(dtype, copy=False), nfft)
    fb = fa if same else sfft.rfft(b.astype(dtype, copy=False), nfft)
    c_wide = sfft.irfft(fa * fb, nfft)
    c_wide = c_wide[:n] if window is None else np.roll(c_wide, -window[0]) if window[0] else c_wide
    c = c_wide.astype(np.float64, copy=False)
    bias = 0.0
    if extended:
        down = c < c_wide
        c[down] = np.nextafter(c[down], np.inf)
        bias = 2.0 * _U * float(np.sum(np.abs(c)))
    sa, na = float(np.sum(np.abs(a))), math.sqrt(float(np.sum(a * a)))
    sb, nb = (sa, na) if same else (float(np.sum(np.abs(b))), math.sqrt(float(np.sum(b * b))))
    gamma = math.log2(max(nfft, 2)) * 8.0 * u
    return c, 4.0 * (gamma + u) * (na * sb + sa * nb) * (1.0 + _U), bias


def _prefix_sums(c: np.ndarray, limit: float) -> np.ndarray:
    """The cumulative sums of ``c`` up to (at least) the first one above ``limit``, or all of them:
    a prefix of ``np.cumsum(c)`` (the same sequential sums), computed on growing heads."""
    size = 256
    while True:
        sums = np.cumsum(c[:size])
        if size >= c.size or sums[-1] > limit:
            return sums
        size *= 8


def _quantiles(p: np.ndarray, mass: float) -> Tuple[int, int]:
    """(first index whose cumulative sum from the left exceeds ``mass``, last index whose sum from
    the right does), each clipped to the array; from sums over the ends only (:func:`_prefix_sums`)."""
    i0 = int(np.searchsorted(_prefix_sums(p, mass), mass, side="right"))
    i1 = p.size - 1 - int(np.searchsorted(_prefix_sums(p[::-1], mass), mass, side="right"))
    return min(i0, p.size - 1), max(i1, 0)


def _bulk(p: np.ndarray, total: float) -> Tuple[int, int]:
    """Index window holding all but ≤ _BULK_TAIL of the mass ``total`` on each side."""
    i0, i1 = _quantiles(p, _BULK_TAIL * total)
    return i0, max(i1, i0)


@dataclass(frozen=True)
class GridPld:
    """P-masses of the loss on the grid (start + i)·h, plus +∞ mass and error terms (see module)."""

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

    # ------------------------------------------------------------------ composition

    def losses(self) -> np.ndarray:
        """Loss value of every entry of ``pmf``, nats."""
        return (self.start + np.arange(self.pmf.size)) * self.h

    def mass(self) -> float:
        """Total mass, +∞ included (1 up to rounding)."""
        return float(np.sum(self.pmf)) + self.inf_mass

    def compose(self, other: "GridPld", tail: float, extended: bool = False) -> "GridPld":
        """PLD of the composition of the two pairs, then tail-truncated (each side ≤ ``tail``).

        ``extended``: the accurate mode, used where the result is reused many times (early
        squarings, whose error is multiplied by the number of uses): the bulk × bulk product runs
        in x87 extended precision (``np.longdouble``, unit roundoff 2⁻⁶⁴) and the tail terms in
        float64 (their error bound is proportional to the tail mass).
        """
        if self.h < other.h:  # grids are nested (h0·2^j): bring both to the coarser one
            return self.coarsen(int(round(other.h / self.h))).compose(other, tail, extended)
        if other.h < self.h:
            return self.compose(other.coarsen(int(round(self.h / other.h))), tail, extended)
        a, b = self.pmf, other.pmf
        n = a.size + b.size - 1
        same = other is self
        sa = float(np.sum(a))
        sb = sa if same else float(np.sum(b))
        ia0, ia1, ib0, ib1 = 0, a.size - 1, 0, b.size - 1  # the bulk windows matter only when extended
        if extended:
            ia0, ia1 = _bulk(a, sa)
            ib0, ib1 = (ia0, ia1) if same else _bulk(b, sb)
        if same and extended:  # a bulk just over half a power of two: trim it to fit (the rest grows)
            size = ia1 - ia0 + 1
            half = 1 << max(2 * size - 2, 1).bit_length() - 1
            if 2 * size - 1 <= _TRIM_SLACK * half:
                cut = size - (half + 1) // 2
                ia0, ia1 = ia0 + cut // 2, ia1 - (cut - cut // 2)
                ib0, ib1 = ia0, ia1
        offset, w_low, w_high = 0, 0.0, 0.0
        if not extended or ia1 - ia0 + ib1 - ib0 + 2 >= n // 2:  # one float64 / short convolution
            wrap = None if extended else _wrap_window(a, b, tail)
            if wrap is not None:
                offset, _, w_low, w_high = wrap
            c, entry, bias = _convolve(a, b, extended, same, None if wrap is None else wrap[:2])
            l1 = math.sqrt(c.size) * entry + (0.0 if extended else _U * sa * sb)  # + the float64 cast
        else:
            # a*b = Ba*Bb + (a*b − Ba*Bb): the bulk product in the requested precision, the rest —
            # every term of which carries a tail (mass ≤ _BULK_TAIL before a trim) — in float64 at full length
            ra, rb = a.copy(), b.copy()
            ra[ia0:ia1 + 1] = 0.0
            rb[ib0:ib1 + 1] = 0.0
            bulk, e_bulk, bias = _convolve(a[ia0:ia1 + 1], b[ib0:ib1 + 1], extended, same)
            if same:  # 2·Ba*Ra + Ra*Ra = (2a − Ra)*Ra
                x = 2.0 * a - ra
                wrap = _wrap_window(x, ra, tail)
                if wrap is not None and not wrap[0] <= ia0 + ib0 <= ia0 + ib0 + bulk.size <= wrap[0] + wrap[1]:
                    wrap = None  # the bulk product must land inside the window
                if wrap is not None:
                    offset, _, w_low, w_high = wrap
                c, e_rest, _ = _convolve(x, ra, False, False, None if wrap is None else wrap[:2])
            else:  # Ba*Rb + Ra*b
                c, e1, _ = _convolve(a - ra, rb, False, False)
                c2, e2, _ = _convolve(ra, b, False, False)
                c += c2
                e_rest = e1 + e2 + _U * float(np.max(np.abs(c)))
            # float64 cast of the rest (ℓ1 ≤ u·Σ|rest|, from the rest's own sum whatever its tails' mass)
            e_cast = _U * float(np.sum(np.abs(c)))
            window = slice(ia0 + ib0 - offset, ia0 + ib0 - offset + bulk.size)
            c[window] += bulk
            c[window] *= 1.0 + 4.0 * _U  # the addition's rounding, directed up (see ``bias``)
            bias += 8.0 * _U * float(np.sum(np.abs(c[window])))
            entry = e_bulk + e_rest + _U * float(np.max(bulk))
            l1 = math.sqrt(bulk.size) * e_bulk + math.sqrt(c.size) * e_rest + e_cast
        negative = c < 0.0
        clamped = -float(np.sum(c[negative]))
        c[negative] = 0.0
        mass_a, mass_b = max(1.0, sa + self.inf_mass), max(1.0, sb + other.inf_mass)  # mass(), already summed
        err = self.err * mass_b + other.err * mass_a + l1 + clamped + 2.0 * w_high
        bias += self.bias * mass_b + other.bias * mass_a
        inf_mass = (self.inf_mass * (sb + other.inf_mass) + sa * other.inf_mass) * (1.0 + 8.0 * _U)
        out = GridPld(self.h, self.start + other.start + offset, c, inf_mass, err, self.moved + other.moved + w_low,
                      self.edge + other.edge, self.count + other.count, self.spread + other.spread, bias,
                      (self.wide + other.wide) * (1.0 + 2.0 * _U), max(self.wide_extra, other.wide_extra))
        return out.truncate(tail, noise=entry * _NOISE_FRACTION)

    def truncate(self, tail: float, noise: float = 0.0) -> "GridPld":
        """Move the left end up to the first kept point and the right end to +∞ (both pessimistic
        moves, recorded in ``moved``). Kept: from the first to the last entry above ``noise``
        (the FFT's entrywise error bound), narrowed while each cut end holds ≤ ``tail``."""
        c = self.pmf
        nz = np.flatnonzero(c > noise)
        if nz.size == 0:
            return replace(self, pmf=np.zeros(1))
        left = _prefix_sums(c, tail)
        i0 = int(np.searchsorted(left, tail, side="right"))
        right = _prefix_sums(c[::-1], tail)
        i1 = c.size - 1 - int(np.searchsorted(right, tail, side="right"))
        i0, i1 = min(max(i0, int(nz[0])), int(nz[-1])), max(min(i1, int(nz[-1])), int(nz[0]))
        if i1 < i0:
            i1 = i0
        if i0 > left.size:  # the clamp to the first entry above ``noise`` went past the prefix
            left = np.cumsum(c[:i0])
        if c.size - 1 - i1 > right.size:
            right = np.cumsum(c[::-1][:c.size - 1 - i1])
        moved_left = float(left[i0 - 1]) if i0 > 0 else 0.0
        moved_right = float(right[c.size - 2 - i1]) if i1 < c.size - 1 else 0.0
        kept = c[i0:i1 + 1].copy()
        kept[0] += moved_left
        return replace(self, start=self.start + i0, pmf=kept, inf_mass=self.inf_mass + moved_right,
                       moved=self.moved + moved_left + moved_right)

    def coarsen(self, factor: int) -> "GridPld":
        """The same PLD on the grid (factor·h)ℤ, split pessimistically ("connect the dots").

        A point ℓ between coarse points a < b goes to b with P-mass p(1 − e^{a−ℓ})/(1 − e^{a−b})
        and to a with the rest, preserving its P- and Q-mass: the coarse pair dominates the fine
        one (Doroshenko et al. 2022, Thm 3.3). One split of width factor·h per block instance is
        added to ``spread``. Float rounding is directed upwards (recorded in ``bias``, not ``err``).
        """
        if factor == 1:
            return self
        big = self.h * factor
        k0, r0 = divmod(self.start, factor)
        rows = -(-(r0 + self.pmf.size) // factor)
        fine = np.zeros(rows * factor)  # row j: the fine points r = 0 … factor − 1 above k0 + j
        fine[r0:r0 + self.pmf.size] = self.pmf
        fine = fine.reshape(rows, factor)
        w_hi = np.expm1(-np.arange(factor) * self.h) / math.expm1(-big)  # (1 − e^{−r h}) / (1 − e^{−H})
        # rounded up (the split map is stochastically monotone, so it keeps the upper-set
        # dominance of the input): the upper share by its few-ulp error, each sum by its addends
        hi = np.minimum(fine * (w_hi * (1.0 + 8.0 * _U)), fine)
        lo = fine - hi
        pmf = np.zeros(rows + 1)
        for r in range(factor):  # column by column (factor is small)
            pmf[:-1] += lo[:, r]
            pmf[1:] += hi[:, r]
        pmf *= 1.0 + (2.0 * factor + 4.0) * _U  # ≤ 2·factor addends per coarse point
        if pmf[-1] == 0.0:
            pmf = pmf[:-1]
        bias = self.bias + 2.0 * (2.0 * factor + 12.0) * _U * float(np.sum(self.pmf))
        return replace(self, h=big, start=k0, pmf=pmf, spread=self.spread + big * big, bias=bias)

    def bulk_points(self) -> int:
        """Grid points between the 1e-3 and 1 − 1e-3 quantiles of the finite mass."""
        lo, hi = _quantiles(self.pmf, 1e-3 * float(np.sum(self.pmf)))
        return max(hi - lo, 0) + 1

    def self_compose(self, count: int, tail: float, max_bulk: int = 0, extended_uses: int = 8) -> "GridPld":
        """``count``-fold composition by repeated squaring (⌊log₂ count⌋ squarings).

        ``tail`` is the mass all truncations together may move: a squared block that is used m
        times in the product may move ``tail / (2·levels·m)``. Squarings whose result is used
        ≥ ``extended_uses`` times run in extended precision (with ``extended_uses`` ≤ 1, every
        convolution, the final products included). With ``max_bulk`` > 0 a squared block
        is coarsened by 2 while its bulk (:meth:`bulk_points`) exceeds ``max_bulk`` points, so
        array sizes stay bounded as the distribution widens.
        """
        share = tail / (2.0 * max(1, count.bit_length()))
        result = None
        base = self
        while True:
            if count & 1:
                result = base if result is None else result.compose(base, share, extended=extended_uses <= 1)
            count >>= 1
            if not count:
                return result
            base = base.compose(base, share / count, extended=count >= extended_uses)
            while max_bulk and base.bulk_points() > max_bulk:
                base = base.coarsen(2)

    # ------------------------------------------------------------------ δ(ε) and ε(δ)

    def _delta_float(self, epsilon: float) -> Tuple[float, float]:
        """(computed Σ pmf·(1 − e^{ε−ℓ})_+ + inf_mass, bound on its rounding error)."""
        ell = self.losses()
        m = ell > epsilon
        v = float(np.sum(self.pmf[m] * -np.expm1(epsilon - ell[m]))) + self.inf_mass
        return v, (int(np.count_nonzero(m)) + 8) * _U * v

    def _etas(self, delta: float):
        return [delta * f for f in (0.3, 0.1, 0.03, 0.01, 1e-3)]

    def _shift(self, eta: float) -> Tuple[float, float]:
        """(c, φ): the splitting moves sum to more than c with probability at most η + φ.

        Without wide leaf bins φ = 0 and c = :func:`hoeffding_shift` (``spread``, η). With them:
        conditioned on which leaf bin every instance falls in, the moves are still a martingale
        of the kind :func:`hoeffding_shift` needs, with squared widths summing to ``spread`` +
        N·``wide_extra``, N the number of instances in a wide bin. N is a sum of independent
        Bernoulli variables with total mean λ = ``wide``, so P(N ≥ k + 1) ≤ e_{k+1}(p) ≤
        λ^{k+1}/(k + 1)! (elementary symmetric sum, each term a product of k + 1 of the means);
        k is the least one (≤ 12) with that bound ≤ η/10, and c is the Hoeffding shift for
        ``spread`` + k·``wide_extra``.
        """
        if self.wide <= 0.0 or self.wide_extra <= 0.0:
            return hoeffding_shift(self.spread, eta), 0.0
        k, term = 0, self.wide
        while term > 0.1 * eta and k < 12:
            k += 1
            term *= self.wide / (k + 1)
        return hoeffding_shift(self.spread + k * self.wide_extra, eta), term * (1.0 + 1e-12)

    def delta_bounds(self, epsilon: float) -> Tuple[float, float]:
        """(lower, upper) bounds on the exact δ(ε) of the composed pair.

        Upper: the computed value plus its rounding and ``err`` (the discretisation is
        pessimistic). Lower: the split leaves differ from the merged (dominated) pair by
        independent moves D of width h with E[e^{−D}] = 1, so with probability ≥ 1 − η their sum is
        ≤ c(η) (:func:`hoeffding_shift`; with wide leaf bins, except on an event of probability φ,
        :meth:`_shift`); hence δ_exact(ε) ≥ δ_grid(ε + c) − η − φ − edge − moved − err − bias.
        """
        upper = self.delta_upper(epsilon)
        best = 0.0
        for eta in self._etas(max(upper, 1e-300)):
            c, fail = self._shift(eta)
            w, s = self._delta_float(epsilon + c)
            best = max(best, w - s - self.err - self.bias - self.moved - self.edge - eta - fail)
        return best, upper

    def delta_upper(self, epsilon: float) -> float:
        """Upper bound on the exact δ(ε): the computed value plus its rounding and ``err``."""
        v, r = self._delta_float(epsilon)
        return min(1.0, v + r + self.err)

    @cached_property
    def _curve(self) -> Tuple[np.ndarray, ...]:
        """(ℓ_j, log C_{j−1}, log C_j, A_j, δ at the grid points) for :meth:`_root` (computed once)."""
        ell = self.losses()
        with np.errstate(divide="ignore"):
            logc = np.logaddexp.accumulate((np.log(self.pmf) - ell)[::-1])[::-1]
        log_ctail = np.append(logc[1:], -np.inf)
        tail = np.append(np.cumsum(self.pmf[::-1])[::-1][1:], 0.0) + self.inf_mass
        return ell, logc, log_ctail, tail, tail - np.exp(ell + log_ctail)

    def _root(self, d: float) -> float:
        """Least ε with the computed δ(ε) ≤ d (float estimate; +inf if the +∞ mass exceeds d).

        δ(ε) = A_j − e^ε C_j on [ℓ_j, ℓ_{j+1}) with A_j = Σ_{k>j} p_k + p_∞ and
        C_j = Σ_{k>j} p_k e^{−ℓ_k}; log C_j is accumulated with ``logaddexp`` (no overflow).
        """
        if d <= self.inf_mass:
            return math.inf
        ell, logc, log_ctail, tail, dj = self._curve
        j = int(np.argmax(dj <= d))
        if j == 0:
            num, logc_j = float(np.sum(self.pmf)) + self.inf_mass - d, float(logc[0])
        else:
            num, logc_j = float(tail[j - 1]) - d, float(log_ctail[j - 1])
        if num <= 0 or not math.isfinite(logc_j):
            return float(ell[j])
        return math.log(num) - logc_j

    def epsilon_bounds(self, delta: float) -> Tuple[float, float]:
        """(lower, upper) bounds on the least ε ≥ 0 with δ_exact(ε) ≤ δ (see :meth:`delta_bounds`)."""
        upper = self.epsilon_upper(delta)
        lower = 0.0
        for eta in self._etas(delta):
            c, fail = self._shift(eta)
            target = delta + self.err + self.bias + self.moved + self.edge + eta + fail
            eps = self._root(target * (1.0 + 1e-12))
            if not math.isfinite(eps):
                continue
            # move down until the computed δ (minus its rounding) provably exceeds the target
            step = max(abs(eps), 1.0) * 1e-14
            while eps > -math.inf:
                w, s = self._delta_float(eps)
                if w - s > target:
                    break
                eps -= step
                step *= 2.0
            lower = max(lower, eps - c)
        return max(0.0, lower), upper

    def epsilon_upper(self, delta: float) -> float:
        """An ε ≥ 0, just above the grid root, whose :meth:`delta_upper` is ≤ δ (certified upper bound)."""
        d = delta - self.err
        if d <= 0:
            return math.inf
        eps = self._root(d * (1.0 - 1e-12))
        if not math.isfinite(eps):
            return math.inf
        eps = max(eps, 0.0)
        step = max(abs(eps), 1.0) * 1e-14
        while True:
            v, r = self._delta_float(eps)
            if v + r + self.err <= delta:
                return eps
            eps += step
            step *= 2.0
