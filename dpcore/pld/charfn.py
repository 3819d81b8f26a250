"""Composition of many PLDs through the characteristic function, with rigorous error bounds.

The k-fold composition of a grid PLD x is its k-fold convolution; with φ = FFT(x) on a window of
N points it is IFFT(φ^k) — one transform each way and a pointwise power, whatever k is (Koskela,
Jälkö, Honkela 2020; Zhu, Dong, Wang 2022 compose in the characteristic function too). Several
parts compose as IFFT(Π φ_i^{k_i}). All arrays are tilted (:mod:`dpcore.pld.pmf`) and
normalised to mass ≈ 1, so |φ| ≤ 1 + O(u) and the bounds below are relative.

**Window and aliasing.** The result is cyclic: the window [a, a + N) receives every mass of the
composed distribution, the mass above a + N moved down by multiples of N (charged to ``err``:
2× its tilted mass) and the mass below a moved up (a pessimistic move, recorded in ``moved``).
The cyclic wrap keeps a moved mass's tilted value, which at its new place (N steps up) stands for
e^{−θNh} of its P-mass: the dominating PLD holds e^{θNh} times the stored value there, so the
tilted weight after the move, ≤ e^{θNh} times its own, is charged to ``err`` as well (it matters
when the block is composed further). Both are bounded by Chernoff bounds from the
parts' moment generating functions, computed on the parts themselves (exact dominating PLDs, so
the bounds are rigorous): P̃(S ≥ b) ≤ e^{−tb}·Π M_i(t)^{k_i}, and the tilted weight of the lower
tail E[e^{θ(a−S)}; S < a] ≤ e^{(θ+t)a}·Π M_i(−θ−t)^{k_i}.

**Float error** (ℓ1, in the normalised tilted units). With γ_N the relative ℓ2 error of a
length-N FFT (:func:`~dpcore.pld.pmf.fft_gamma`): ‖φ̂_i − φ_i‖₂ ≤ E_i = γ_N·√N·‖x_i‖₂ (Parseval);
|φ̂^k − φ^k| ≤ k·r^{k−1}·|φ̂ − φ| with r = S_i + E_i ≥ max(|φ|, |φ̂|), S_i ≥ Σx_i; the product's
rounding is ≤ ρ = (1 + √5u)^{2K+n} − 1 relative per frequency (binary powering, K = Σk_i; complex
multiplication within √5u, Brent, Percival, Zimmermann 2007); the inverse FFT adds γ_N·‖ĉ‖₂.
Parseval turns the frequency-domain ℓ2 errors into ℓ2 errors of the N outputs (÷√N), and
ℓ1 ≤ √N·ℓ2. Errors already in the parts grow k-fold (‖a^{*k} − b^{*k}‖₁ ≤ k‖a − b‖₁·max(‖a‖₁, ‖b‖₁)^{k−1}).

:func:`compose_counts` composes any counts with bounded work: when the whole composition does not
fit in ``max_points``, blocks of m steps are composed on the fine grid, coarsened by the largest
F = 2^j whose splits add at most half the remaining split-variance budget (the leaves' own, so
the optimistic bound's gap at most doubles) and keep 2·F·h·θ ≤ :data:`MAX_TILT_STEP`
(:meth:`~dpcore.pld.pmf.GridPld.coarsen`), and the blocks composed at the next level —
O(log k) levels of bounded size, at most :data:`MAX_LEVELS`. Window ends whose tilted mass is
below the aliasing budget are cut (their mass to ``err``); compositions of at most
:data:`DIRECT_LENGTH` points are convolved directly, with relative instead of absolute error.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

import numpy as np
from scipy import fft as sfft

from ..events import UnsupportedEventError
from .pmf import GridPld, _sum_up, fft_gamma, split_variance

__all__ = ["DEFAULT_MAX_POINTS", "compose_counts", "compose_powers", "powers", "window"]

_U = 2.0**-53
#: longest window of one characteristic-function composition (points, a power of two)
DEFAULT_MAX_POINTS = 1 << 20
#: relative tilted mass that may be aliased (each side) in one composition
ALIAS_BUDGET = 1e-10
#: largest count composed in one characteristic-function power (its float error grows with k)
MAX_POWER = 1 << 22
#: most levels of :func:`compose_counts` (each level multiplies the block size by ≥ 2)
MAX_LEVELS = 12
#: largest θ·(coarse grid step) a level may coarsen to: the tilted loss must stay resolved
MAX_TILT_STEP = 0.25
#: whole compositions up to this many points are done in one window
DIRECT_POINTS = 1 << 16
#: a level's window is the least that holds blocks of this many steps (:func:`_level_points`)
BLOCK_TARGET = 512
#: compositions of at most this many multiply-adds, and results of at most this many points, are
#: done by direct convolution (:func:`_direct`)
DIRECT_WORK = 1e7
DIRECT_LENGTH = 1 << 16


#: Chernoff exponents tried (per grid index; a fixed grid so that evaluations are shared)
_T_GRID = np.geomspace(2.0**-40, 2.0**10, 51)


class _Part:
    """A normalised tilted part x (Σx ≈ 1) with its count, moments and log-MGF (in grid index units)."""

    def __init__(self, pld: GridPld, count: int) -> None:
        self.pld = pld.normalized()
        self.count = int(count)
        x = self.pld.pmf
        self.total = _sum_up(x)
        keep = np.flatnonzero(x > 0.0)
        idx = keep.astype(float)
        s = float(np.sum(x))
        xs = x[keep]
        mean = float(np.sum(xs * idx)) / s if s > 0 else 0.0
        self.mean = self.pld.start + mean
        self.var = max(float(np.sum(xs * (idx - mean) ** 2)) / s, 0.0) if s > 0 else 0.0
        self.log_x = np.log(xs)
        self.idx = idx + self.pld.start
        self._mgf: dict = {}

    def log_mgf(self, ts: np.ndarray) -> np.ndarray:
        """log Σ_j x_j e^{t·j} (absolute index j) for each t, rounded up; memoised per t."""
        todo = [t for t in ts.tolist() if t not in self._mgf]
        if todo:
            top = float(np.max(np.abs(self.idx), initial=0.0))
            for chunk in range(0, len(todo), 16):
                t = np.array(todo[chunk:chunk + 16])
                z = self.log_x[None, :] + t[:, None] * self.idx[None, :]
                m = np.max(z, axis=1)
                v = m + np.log(np.sum(np.exp(z - m[:, None]), axis=1))
                v = v + 8.0 * _U * (np.abs(v) + 1.0) + 4.0 * _U * np.abs(t) * top + 4.0 * _U * self.idx.size
                self._mgf.update(zip(t.tolist(), v.tolist()))
        return np.array([self._mgf[t] for t in ts.tolist()])


def _exponents(parts: Sequence[_Part], sd: float, sign: float, shift: float = 0.0) -> Tuple[np.ndarray, np.ndarray]:
    """(s, Σ k_i·log M_i(sign·s)) for s = shift + t over the grid t ∈ [0.05/sd, 20/sd + 4·shift]
    (index units). The lower tail's condition e^{s·a + K(−s) + shift·N} ≤ budget puts the window's
    bottom near −shift·N/s: exponents up to 5·shift let it close where the tilted spread makes 20/sd
    small against the tilt (else every longer window asks for a still lower bottom)."""
    lo = min(int(np.searchsorted(_T_GRID, 5e-2 / sd)), _T_GRID.size - 1)
    hi = max(int(np.searchsorted(_T_GRID, 20.0 / sd + 4.0 * shift, side="right")), lo + 1)
    s = shift + _T_GRID[lo:hi]
    vals = sum(p.count * p.log_mgf(sign * s) for p in parts)
    return s, vals


def window(parts: Sequence[_Part], tilt: float, budget: float, size: Optional[int] = None) -> Tuple[int, int, float, float]:
    """(a, N, log of the aliased-above bound, log of the lower-tail weight bound) of a power-of-two
    window [a, a + N) whose aliased tilted masses are within ``budget`` — the upper tail
    P̃(S ≥ a + N) ≤ min_t e^{−t(a+N)}Π M_i(t)^{k_i}, and the lower tail after its gain
    e^{tilt·N}·min_s e^{s·a}Π M_i(−s)^{k_i} with s ≥ ``tilt`` (θ·h per index) — with N as small as
    the tabulated exponents allow (or N = ``size``). Each condition is linear in a (or a + N) for a
    fixed exponent, so the best end over the table is explicit. Raises ``ArithmeticError`` if no
    window is found."""
    mean = sum(p.count * p.mean for p in parts)
    var = sum(p.count * p.var for p in parts)
    sd = math.sqrt(var) if var > 0 else 1.0
    log_budget = math.log(budget)
    s_up, k_up = _exponents(parts, sd, 1.0)
    s_lo, k_lo = _exponents(parts, sd, -1.0, tilt)
    # e^{−s·b + K(s)} ≤ budget ⟺ b ≥ (K(s) − log budget)/s: the least such b over the table
    with np.errstate(invalid="ignore", over="ignore"):
        top = float(np.min((k_up - log_budget) / s_up))
    if not math.isfinite(top):
        raise ArithmeticError("the characteristic-function window does not close")
    top = max(top, mean)
    n = size or 1 << max(int(math.ceil(top - mean)) + 1, 1).bit_length()
    for _ in range(64):
        # e^{s·a + K(−s) + tilt·N} ≤ budget ⟺ a ≤ (log budget − tilt·N − K(−s))/s: the largest such a
        with np.errstate(invalid="ignore", over="ignore"):
            bottom = float(np.max((log_budget - tilt * n - k_lo) / s_lo))
        if not math.isfinite(bottom):
            raise ArithmeticError("the characteristic-function window does not close")
        bottom = min(bottom, mean)
        width = math.ceil(top) - math.floor(bottom) + 1
        if width <= n:
            a = math.floor(bottom) - (n - width) // 2
            b = a + n
            up = float(np.min(k_up - s_up * b))
            low = float(np.min(k_lo + s_lo * a)) + tilt * n
            return int(a), int(n), up, low
        if size:
            break
        n = 1 << max(int(width) - 1, 1).bit_length()
    raise ArithmeticError("could not find a characteristic-function window with the aliasing budget")


def _folded(x: np.ndarray, n: int) -> Tuple[np.ndarray, float]:
    """x summed cyclically into n points (entry j at j mod n), rounded up; and the rounding factor."""
    if x.size <= n:
        out = np.zeros(n)
        out[:x.size] = x
        return out, 1.0
    rows = -(-x.size // n)
    pad = np.zeros(rows * n)
    pad[:x.size] = x
    factor = 1.0 + (rows + 2.0) * _U
    return pad.reshape(rows, n).sum(axis=0) * factor, factor


def _power(z: np.ndarray, k: int) -> np.ndarray:
    """z**k elementwise by binary powering (complex multiplications only)."""
    result = None
    base = z
    while True:
        if k & 1:
            result = base.copy() if result is None else result * base
        k >>= 1
        if not k:
            return result
        base = base * base


def compose_powers(items: Sequence[Tuple[GridPld, int]], *, max_points: int = DEFAULT_MAX_POINTS,
                   alias: float = ALIAS_BUDGET, parts: Optional[List[_Part]] = None) -> Optional[GridPld]:
    """Π_i items[i]^{*k_i} by one characteristic-function window, or None if no window of at most
    ``max_points`` points keeps each aliased tilted mass within ``alias`` (relative). All items
    share h and θ. Small compositions are done exactly instead (:func:`_direct`)."""
    parts = parts or [_Part(p, k) for p, k in items if k > 0]
    first = parts[0].pld
    h, theta = first.h, first.theta
    if any(p.pld.h != h or p.pld.theta != theta for p in parts):
        raise ValueError("compose_powers needs parts on one grid with one tilt")
    if sum(p.count * p.pld.pmf.size for p in parts) <= DIRECT_LENGTH:
        out = _direct(parts, DIRECT_WORK)
        if out is not None:
            return out
    if sum(p.count for p in parts) > MAX_POWER * len(parts):
        return None
    try:
        a, n, log_up, log_low = window(parts, theta * h, alias)
    except ArithmeticError:
        return None
    if n > max_points:
        return None
    return _assemble(parts, a, n, log_up, log_low, alias)


def powers(pld: GridPld, counts: Sequence[int], *, max_points: int = DEFAULT_MAX_POINTS,
           alias: float = ALIAS_BUDGET) -> Optional[List[GridPld]]:
    """pld^{*k} for each k of ``counts``, all from one forward FFT (the window of the largest k,
    which every smaller k must fit too); None if no such window exists."""
    part = _Part(pld, max(counts))
    tilt = part.pld.theta * part.pld.h
    try:
        _, n, _, _ = window([part], tilt, alias)
    except ArithmeticError:
        return None
    if n > max_points or max(counts) > MAX_POWER:
        return None
    out = []
    for k in counts:
        part.count = k
        try:
            a, _, log_up, log_low = window([part], tilt, alias, size=n)
        except ArithmeticError:
            return None
        out.append(_assemble([part], a, n, log_up, log_low, alias))
    return out


def _spectrum(part: _Part, n: int) -> Tuple[np.ndarray, float, float, float]:
    """(φ̂ = FFT of the part folded into n points, E ≥ ‖φ̂ − φ‖₂ over the full spectrum, r ≥ max
    |φ|, |φ̂|, the fold's rounding factor), memoised per n."""
    memo = part.__dict__.setdefault("_spectra", {})
    if n not in memo:
        w, factor = _folded(part.pld.pmf, n)
        e = fft_gamma(n) * math.sqrt(n) * math.sqrt(float(np.sum(w * w))) * (1.0 + 8.0 * _U)
        memo[n] = (sfft.rfft(w), e, part.total * factor + e, factor)
    return memo[n]


def _assemble(parts: Sequence[_Part], a: int, n: int, log_up: float, log_low: float, trim: float) -> GridPld:
    """Π_i x_i^{*k_i} on the window [a, a + n) with every error term (module docstring); ends of
    total tilted mass ≤ ``trim`` are cut off (:func:`_cut_ends`)."""
    first = parts[0].pld
    h, theta = first.h, first.theta
    k_total = sum(p.count for p in parts)
    gamma = fft_gamma(n)
    spectrum = None
    fold_bias = 0.0
    radii = []
    for p in parts:
        phi, e, r, factor = _spectrum(p, n)
        fold_bias += p.count * (factor - 1.0) * p.total
        radii.append((e, r))
        powered = _power(phi, p.count)
        spectrum = powered if spectrum is None else spectrum * powered
    # Σ_i k_i·E_i·r_i^{k_i − 1}·Π_{j≠i} r_j^{k_j}: the frequency-domain ℓ2 error of the product
    log_all = sum(p.count * math.log(r) for p, (_, r) in zip(parts, radii))
    lin_err = sum(p.count * e * math.exp(log_all - math.log(r)) for p, (e, r) in zip(parts, radii))
    kappa = math.sqrt(5.0) * _U * (1.0 + 1e-9)
    rho = math.expm1((2.0 * k_total + len(parts)) * math.log1p(kappa))
    full_norm = math.sqrt(2.0 * float(np.sum(np.abs(spectrum) ** 2))) * (1.0 + 8.0 * _U)
    c = sfft.irfft(spectrum, n)
    np.maximum(c, 0.0, out=c)  # the exact cyclic result is ≥ 0: clamping only brings c closer
    c_norm = math.sqrt(float(np.sum(c * c))) * (1.0 + 8.0 * _U)
    fft_l1 = (lin_err + rho / (1.0 - rho) * full_norm + math.sqrt(n) * gamma / (1.0 - gamma) * c_norm) * (1.0 + 8.0 * _U)
    # place the cyclic result on the absolute window [a, a + n): linear index L (relative to
    # Σ k_i·start_i) sits at cyclic position L mod n
    base = sum(p.count * p.pld.start for p in parts)
    shift = (a - base) % n
    if shift:
        c = np.concatenate((c[shift:], c[:shift]))
    err, moved, bias = _grown_errors(parts)
    err += fft_l1 + 2.0 * math.exp(log_up) + math.exp(log_low)  # the wrapped lower tail's missing weight
    moved += math.exp(log_low)
    bias += fold_bias
    c, a, dropped = _cut_ends(c, a, trim)
    return _combined(parts, a, c, err + dropped, moved, bias).normalized()


def _cut_ends(c: np.ndarray, start: int, budget: float) -> Tuple[np.ndarray, int, float]:
    """Drop both ends of ``c`` while their total is ≤ ``budget``: (kept, new start, dropped mass).

    The window's ends hold FFT noise around masses too small to matter. Zeroing computed entries
    c_j changes the distance to the exact array by at most Σ|c_j| over them (the exact entries
    are within the error bound of the computed ones), which is added to ``err``; the arrays of the
    next level then cover the composition's support instead of the whole window."""
    if budget <= 0.0 or c.size < 2:
        return c, start, 0.0
    left = np.cumsum(c)
    right = np.cumsum(c[::-1])
    i0 = int(np.searchsorted(left, 0.5 * budget, side="right"))
    i1 = c.size - int(np.searchsorted(right, 0.5 * budget, side="right"))
    if i1 <= i0:
        return c, start, 0.0
    dropped = (float(left[i0 - 1]) if i0 else 0.0) + (float(right[c.size - i1 - 1]) if i1 < c.size else 0.0)
    return c[i0:i1].copy(), start + i0, dropped * (1.0 + c.size * 2.0**-52)


def _sparse_convolve(a: np.ndarray, b: np.ndarray, budget: float = math.inf
                     ) -> Tuple[Optional[np.ndarray], int, int]:
    """Direct convolution of non-negative a and b: (result, multiply-adds, most addends of an entry);
    the result is None, and nothing computed, when the multiply-adds would exceed ``budget``.
    Loops over the non-zero entries of the sparser factor when it has few (atoms on a lattice)."""
    na, nb = np.flatnonzero(a), np.flatnonzero(b)
    if na.size > nb.size:
        a, b, na, nb = b, a, nb, na
    if na.size <= 64:
        ops, terms = int(na.size) * b.size, int(na.size)
        if ops > budget:
            return None, ops, terms
        out = np.zeros(a.size + b.size - 1)
        for i in na.tolist():
            out[i:i + b.size] += a[i] * b
        return out, ops, terms
    ops, terms = a.size * b.size, min(a.size, b.size)
    return (np.convolve(a, b) if ops <= budget else None), ops, terms


def _direct(parts: Sequence[_Part], budget: float) -> Optional[GridPld]:
    """Π_i x_i^{*k_i} by direct convolution and binary powering, or None once ``budget``
    multiply-adds would be exceeded.

    Every entry of a convolution of non-negative arrays is a sum of m non-negative products, so
    its float value is within γ_{m+1} = (m+1)u/(1 − (m+1)u) *relative* error of the exact one
    (Higham, Lemma 3.1 / Thm 3.1) — no absolute error floor, unlike an FFT: at the top of a
    bounded loss (pure DP) nothing lies above ε and no tilt can make an absolute error small
    against δ. The result is rounded up by the product of all these factors, so it dominates the
    exact composition entrywise: the rounding goes to ``bias``, ``err`` carries the parts' own."""
    out = None
    factor = 1.0
    work = 0.0

    def conv(a: np.ndarray, b: np.ndarray) -> Optional[np.ndarray]:
        nonlocal factor, work
        c, ops, terms = _sparse_convolve(a, b, budget - work)  # None (not computed) beyond the budget
        work += ops
        factor *= 1.0 + (terms + 1) * _U / (1.0 - (terms + 1) * _U)
        return c if work <= budget else None

    start = 0
    for p in parts:
        base, k = p.pld.pmf, p.count
        start += k * p.pld.start
        power = None
        while True:
            if k & 1:
                power = base if power is None else conv(power, base)
                if power is None:
                    return None
            k >>= 1
            if not k:
                break
            base = conv(base, base)
            if base is None:
                return None
        out = power if out is None else conv(out, power)
        if out is None:
            return None
    factor *= 1.0 + 4.0 * _U
    c = out * factor
    err, moved, bias = _grown_errors(parts)
    bias += 2.0 * (factor - 1.0) * _sum_up(c)
    return _combined(parts, start, c, err, moved, bias).normalized()


def _grown_errors(parts: Sequence[_Part]) -> Tuple[float, float, float]:
    """(err, moved, bias) of the parts after composing them: each part's own terms grow k-fold,
    k·e·(the parts' exact totals)^{k−1} (‖a^{*k} − b^{*k}‖₁ ≤ k‖a − b‖₁·max(‖a‖₁, ‖b‖₁)^{k−1})."""
    log_totals = sum(q.count * math.log(q.total + q.pld.err) for q in parts)
    if log_totals > 700.0:  # (1 + float error)^count beyond float range: nothing certified is left
        raise UnsupportedEventError(
            f"the float-error bound of composing {sum(q.count for q in parts)} blocks grows beyond float range "
            "(too many steps for the 'pld' accountant); use accountant='rdp'")
    err = moved = bias = 0.0
    for p in parts:
        scale = p.count * math.exp(log_totals - math.log(p.total + p.pld.err))
        err += scale * p.pld.err
        moved += scale * p.pld.moved
        bias += scale * p.pld.bias
    return err, moved, bias


def _combined(parts: Sequence[_Part], start: int, c: np.ndarray, err: float, moved: float, bias: float) -> GridPld:
    """The composed GridPld with pmf ``c`` from ``start`` and the parts' bookkeeping combined."""
    first = parts[0].pld
    k_total = sum(p.count for p in parts)
    inf_mass = min(1.0, sum(-math.expm1(p.count * math.log1p(-min(p.pld.inf_mass, 1.0 - 1e-16))) for p in parts)
                   * (1.0 + 8.0 * _U))
    return _trimmed(GridPld(
        h=first.h, start=int(start), pmf=c, inf_mass=inf_mass, err=err * (1.0 + 8.0 * _U),
        moved=moved * (1.0 + 8.0 * _U), edge=sum(p.count * p.pld.edge for p in parts),
        count=sum(p.count * p.pld.count for p in parts), spread=sum(p.count * p.pld.spread for p in parts),
        bias=bias * (1.0 + 8.0 * _U), wide=sum(p.count * p.pld.wide for p in parts) * (1.0 + 8.0 * _U),
        wide_extra=max(p.pld.wide_extra for p in parts), theta=first.theta,
        log_scale=_log_scale_up(sum(p.count * p.pld.log_scale for p in parts), k_total),
        log_var=sum(p.count * p.pld.log_var for p in parts), wide_extra_var=max(p.pld.wide_extra_var for p in parts),
        inf_moved=sum(p.count * p.pld.inf_moved for p in parts),
    ))


def _divisor_near(count: int, m: int) -> int:
    """The largest divisor of ``count`` in [3m/4, m] if there is one (no remainder block to compose), else m."""
    for d in range(m, max(1, (3 * m) // 4) - 1, -1):
        if count % d == 0:
            return d
    return m


def _log_scale_up(value: float, terms: int) -> float:
    """A float ≥ the exact Σ k_i·log_scale_i whose computed value is ``value`` (each product and sum
    within u relative of its magnitude; the represented PLD can only grow)."""
    return value + (4.0 + 2.0 * math.log2(max(terms, 2))) * _U * (abs(value) + 1.0)


def _trimmed(pld: GridPld) -> GridPld:
    """Drop exactly-zero entries at both ends (no mass moves)."""
    nz = np.flatnonzero(pld.pmf)
    if nz.size == 0 or (nz[0] == 0 and nz[-1] == pld.pmf.size - 1):
        return pld
    return replace(pld, start=pld.start + int(nz[0]), pmf=pld.pmf[int(nz[0]):int(nz[-1]) + 1].copy())


def _block_size(part: _Part, tilt: float, max_points: int, alias: float, start: int = 1) -> int:
    """A power of two m ≤ the part's count (and :data:`MAX_POWER`), as large as found, whose m-fold
    composition fits a window of ``max_points``; 0 if not even ``start`` (a power of two) fits.

    The window width grows like its tail extent plus a multiple of √m standard deviations, so from
    the width at ``start`` a guess of the largest m is made, then halved until it fits (and doubled
    while the next one still fits)."""
    count = part.count
    top = 1 << (min(count, MAX_POWER).bit_length() - 1)

    def width(k: int) -> float:
        part.count = k
        try:
            return window([part], tilt, alias)[1]
        except ArithmeticError:
            return math.inf
        finally:
            part.count = count

    base = width(start)
    if base > max_points:
        return 0
    sd = math.sqrt(part.var) if part.var > 0 else 1.0
    spare = max_points - base  # room for the bulk to grow by ~16 sd per doubling of √m
    guess = start * max(1.0, (1.0 + spare / (16.0 * sd * math.sqrt(start))) ** 2)
    m = min(top, max(start, 1 << max(int(math.log2(guess)), 0)))
    while m > start and width(m) > max_points:
        m //= 2
    while m < top and width(2 * m) <= max_points:
        m *= 2
    return m


def compose_counts(items: Sequence[Tuple[GridPld, int]], *, max_points: int = DEFAULT_MAX_POINTS,
                   alias: float = ALIAS_BUDGET, spread_budget: float = 0.0, tail: float = 0.0,
                   _depth: int = 0) -> GridPld:
    """Π_i items[i]^{*k_i} for any counts, in O(log k) characteristic-function levels (module
    docstring). One window when the whole composition fits :data:`DIRECT_POINTS` points, or
    ``max_points`` when no level window at least four times shorter holds blocks of
    :data:`BLOCK_TARGET` steps; otherwise a level at the least window length that does
    (:func:`_next_level`). ``spread_budget`` is the
    Scarf variance (Σ sinh²(w/2)) the levels' coarsenings may add in all (halved at each level; a
    level coarsens by 2 at least). ``tail`` > 0: the result's right end is moved to +∞ up to that
    P-mass."""
    items = [(p, int(k)) for p, k in items if int(k) > 0]
    if not items:
        raise ValueError("compose_counts needs at least one part with a positive count")
    if len(items) == 1 and items[0][1] == 1:  # nothing to compose
        return items[0][0].truncate(tail) if tail > 0.0 else items[0][0]
    h = max(p.h for p, _ in items)
    items = [(p.coarsen(int(round(h / p.h))) if p.h < h else p, k) for p, k in items]
    parts = [_Part(p, k) for p, k in items]
    tilt = parts[0].pld.theta * h
    try:
        full = window(parts, tilt, alias)[1] if sum(p.count for p in parts) <= MAX_POWER * len(parts) else math.inf
    except ArithmeticError:
        full = math.inf
    out = None
    if full <= min(max_points, DIRECT_POINTS):
        out = compose_powers(items, max_points=max_points, alias=alias, parts=parts)
    else:
        # a level pays only when its windows are several times shorter than the direct one
        level = _level_points(parts, tilt, max_points, alias)
        if full <= max_points and (level is None or 4 * level > full):
            out = compose_powers(items, max_points=max_points, alias=alias, parts=parts)
        if out is None:
            if _depth >= MAX_LEVELS:
                raise UnsupportedEventError(
                    f"the composition needs more than {MAX_LEVELS} characteristic-function levels of {max_points} "
                    "points (its losses are too wide for the 'pld' accountant's grid); use accountant='rdp'")
            out = _next_level(parts, level or max_points, alias, spread_budget, _depth)
    return out.truncate(tail) if tail > 0.0 else out


def _level_points(parts: List[_Part], tilt: float, max_points: int, alias: float) -> Optional[int]:
    """Least window length (a power of two, at most ``max_points``) in which every part's block of
    min(count, :data:`BLOCK_TARGET`) steps fits; None if none does."""
    need = 1 << 12
    for p in parts:
        count = p.count
        p.count = min(count, BLOCK_TARGET)
        try:
            need = max(need, window([p], tilt, alias / count)[1])
        except ArithmeticError:
            return None
        finally:
            p.count = count
    return need if need <= max_points else None


def _next_level(parts: List[_Part], max_points: int, alias: float, budget: float, depth: int) -> GridPld:
    """Blocks of each part composed on the current grid, coarsened by the largest F = 2^j (≥ 2)
    whose splits add at most half the remaining ``budget``, then composed at the next level; a
    part too wide even alone is coarsened by F itself."""
    h = parts[0].pld.h
    tilt = parts[0].pld.theta * h
    # a block's errors (aliasing included) grow with the number of its copies above: ≤ its part's count
    sizes = [_block_size(p, tilt, max_points, alias / p.count, start=min(p.count, BLOCK_TARGET)) or
             _block_size(p, tilt, max_points, alias / p.count) for p in parts]
    instances = sum(p.count if m == 0 else -(-p.count // m) for p, m in zip(parts, sizes))
    theta = parts[0].pld.theta
    if 2.0 * h * theta > MAX_TILT_STEP:
        raise UnsupportedEventError(
            f"the composition needs a grid coarser than {h:.3g} nats, too coarse for the tilt {theta:.3g} (its tilted "
            "distribution would not be resolved); the losses are too large for the 'pld' accountant")
    factor = 2
    while (factor < 1 << 20 and 2 * factor * h * theta <= MAX_TILT_STEP and 2 * factor * h < 1.0
           and instances * split_variance(2 * factor * h) <= 0.5 * budget):
        factor *= 2
    items: List[Tuple[GridPld, int]] = []
    for p, m in zip(parts, sizes):
        if m == 0:
            items.append((p.pld.coarsen(factor), p.count))
            continue
        m = _divisor_near(p.count, m)
        whole, rest = divmod(p.count, m)
        blocks = powers(p.pld, [m, rest] if rest else [m], max_points=max_points, alias=alias / p.count)
        if blocks is None:
            raise ArithmeticError("a block whose window fits could not be composed")
        items.append((blocks[0].coarsen(factor), whole))
        if rest:
            items.append((blocks[1].coarsen(factor), 1))
    return compose_counts(items, max_points=max_points, alias=alias, spread_budget=0.5 * budget, _depth=depth + 1)
