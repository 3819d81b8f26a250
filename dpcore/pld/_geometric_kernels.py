"""Numba kernels: sums of independent non-negative variables whose laws live on the grid {e^{kh}}.

Used by :mod:`dpcore.pld.random_allocation`. Two variables V, W with masses ``a`` on e^{(sa+i)h}
and ``b`` on e^{(sb+j)h}; a pair of indices (I, J), d = |I − J|, H = max(I, J) sums to
e^{Hh}(1 + e^{−dh}). Two ways of putting that sum back on the grid:

* :func:`convolve_split` — split it onto the two grid points around it with its mean preserved
  (weights ``w_lo[d]``, ``w_hi[d]`` onto H + f[d] and H + f[d] + 1, ``f[d] = ⌊log(1 + e^{−dh})/h⌋``);
  a mean-preserving spread, so the result is larger in convex order than the exact sum;
* :func:`convolve_merge` — keep, per output index, the mass ``m`` and the first moment ``M``
  (Σ mass·value) of every pair grouped there (group H + f[d]); the exact values are kept through
  ``M``, so grouping is a post-processing (a garbling) of the exact sum.

Pairs with d ≥ D (``e^{−Dh}/(e^h − 1) ≤ 1/2``: the smaller term moves the sum by less than one
grid step) are summed in O(n) with running sums (``x_far``: Σ b_J e^{(J−m)h}, updated as
``x·e^{−h} + b``). Every mass is a sum of products of non-negative numbers, except the lower share
of a far split, a difference whose subtrahend is at most half the minuend (see the module
:mod:`dpcore.pld.random_allocation` for the error bound).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

__all__ = ["convolve_split", "convolve_merge"]


@jit
def convolve_split(a, sa, b, sb, far, f, w_lo, w_hi, decay, hi_far, out_start, out_len):
    """Mean-preserving grid split of the law of V + W (masses only; see the module docstring).

    ``far`` = D, ``decay`` = e^{−h}, ``hi_far`` = e^{−Dh}/(e^h − 1) (the share sent one point up by
    a pair at distance exactly D; distance D + r sends ``hi_far·e^{−rh}``). Near pairs are visited
    by distance d (outer loop), so the inner loop runs over contiguous, equally offset slices.
    """
    out = np.zeros(out_len)
    _near_split(a, sa, b, sb, far, f, w_lo, w_hi, out, out_start, True)
    _near_split(b, sb, a, sa, far, f, w_lo, w_hi, out, out_start, False)
    _far_split(a, sa, b, sb, far, decay, hi_far, out, out_start)
    _far_split(b, sb, a, sa, far, decay, hi_far, out, out_start)
    return out


@jit
def _overlap(sa, na, sb, nb, d):
    """[lo, hi): the indices I with I ∈ [sa, sa + na) and I − d ∈ [sb, sb + nb)."""
    return max(sa, sb + d), min(sa + na, sb + nb + d)


@jit
def _near_split(a, sa, b, sb, far, f, w_lo, w_hi, out, out_start, with_diagonal):
    """Pairs I (in ``a``) ≥ J = I − d (in ``b``), 0 ≤ d < D (d = 0 only ``with_diagonal``)."""
    for d in range(0 if with_diagonal else 1, far):
        lo_i, hi_i = _overlap(sa, a.size, sb, b.size, d)
        if lo_i >= hi_i:
            continue
        wl, wh = w_lo[d], w_hi[d]
        k0 = lo_i + f[d] - out_start
        ia, ib = lo_i - sa, lo_i - d - sb
        n = hi_i - lo_i
        for r in range(n):  # two passes: no dependence between iterations (vectorisable)
            out[k0 + r] += a[ia + r] * b[ib + r] * wl
        for r in range(n):
            out[k0 + 1 + r] += a[ia + r] * b[ib + r] * wh


@jit
def _far_split(a, sa, b, sb, far, decay, hi_far, out, out_start):
    """Pairs with I (in ``a``) ≥ J (in ``b``) + D: mass a_I·b_J goes to I and I + 1."""
    na, nb = a.size, b.size
    mass = 0.0  # Σ_{J ≤ m} b_J
    moment = 0.0  # Σ_{J ≤ m} b_J e^{(J − m)h}
    m = sb - 1  # last index of b summed so far
    for i in range(na):
        big_i = sa + i
        limit = big_i - far
        while m < limit and m - sb + 1 < nb:
            m += 1
            moment = moment * decay + b[m - sb]
            mass += b[m - sb]
        if m < sb or a[i] == 0.0:
            continue
        # moment is at index m ≤ limit: Σ b_J e^{(J − I)h} = moment·e^{(m − I)h}; the share sent up
        # by J is e^{(J − I)h}/(e^h − 1) = hi_far·e^{(J − limit)h}
        up = moment * hi_far * decay ** (limit - m)
        k = big_i - out_start
        out[k + 1] += a[i] * up
        out[k] += a[i] * (mass - up)


@jit
def convolve_merge(ma, big_ma, sa, mb, big_mb, sb, far, f, out_start, out_len):
    """Grouped law of V + W: per output index the mass and the first moment (module docstring)."""
    m_out = np.zeros(out_len)
    big_out = np.zeros(out_len)
    _near_merge(ma, big_ma, sa, mb, big_mb, sb, far, f, m_out, big_out, out_start, True)
    _near_merge(mb, big_mb, sb, ma, big_ma, sa, far, f, m_out, big_out, out_start, False)
    _far_merge(ma, big_ma, sa, mb, big_mb, sb, far, m_out, big_out, out_start)
    _far_merge(mb, big_mb, sb, ma, big_ma, sa, far, m_out, big_out, out_start)
    return m_out, big_out


@jit
def _near_merge(ma, big_ma, sa, mb, big_mb, sb, far, f, m_out, big_out, out_start, with_diagonal):
    """Pairs I (first law) ≥ J = I − d (second law), grouped at I + f[d]."""
    for d in range(0 if with_diagonal else 1, far):
        lo_i, hi_i = _overlap(sa, ma.size, sb, mb.size, d)
        if lo_i >= hi_i:
            continue
        k0 = lo_i + f[d] - out_start
        ia, ib = lo_i - sa, lo_i - d - sb
        n = hi_i - lo_i
        for r in range(n):
            m_out[k0 + r] += ma[ia + r] * mb[ib + r]
        for r in range(n):
            big_out[k0 + r] += ma[ia + r] * big_mb[ib + r] + big_ma[ia + r] * mb[ib + r]


@jit
def _far_merge(ma, big_ma, sa, mb, big_mb, sb, far, m_out, big_out, out_start):
    """Pairs with I (in the first law) ≥ J + D, grouped at I."""
    na, nb = ma.size, mb.size
    mass = 0.0
    moment = 0.0
    m = sb - 1
    for i in range(na):
        limit = sa + i - far
        while m < limit and m - sb + 1 < nb:
            m += 1
            mass += mb[m - sb]
            moment += big_mb[m - sb]
        if m < sb or ma[i] == 0.0:
            continue
        k = sa + i - out_start
        m_out[k] += ma[i] * mass
        big_out[k] += big_ma[i] * mass + ma[i] * moment
