"""Branch-free powers t^a for 0 < t ≤ 1 that LLVM vectorises, for the mirror step's power sums.

The ℓ1-ball / simplex Bregman step (:mod:`algorithms.mirror_maps`) evaluates Σ tⱼ^{r−2},
Σ tⱼ^{r−1}, Σ tⱼ^r over the active coordinates several times per step. Numba lowers ``math.exp`` /
``math.log`` to scalar libm calls (this llvmlite has no SVML), which keeps such a loop scalar at
~13 ns per element. :func:`unit_pow` is pure arithmetic on the float's bits — exponent and mantissa
split by bit casts, ln of the mantissa by the atanh series, 2^n rebuilt in the exponent field — with
no branch and no call, so a loop over it compiles to AVX2 code. :func:`unit_pows` fills an array in
two such loops — a·ln tᵢ, then e^{a·ln tᵢ} in place — with results bit-identical to :func:`unit_pow`
in one loop but ~1.4× faster (2.6 against 3.6 ns per element here): one loop body's dependency chain
(two divisions and both polynomials, ~100 cycles) is longer than the out-of-order window hides, two
shorter bodies overlap more iterations.

Accuracy. ln m for m ∈ [√½, √2) is 2s·P(s²), s = (m − 1)/(m + 1), |s| ≤ 0.1716, P a degree-7
Chebyshev fit of atanh(s)/s (error < 3e-18); e^g for |g| ≤ ln2/2 is a degree-11 Chebyshev fit
(relative error < 2e-17); both evaluated by Estrin's scheme. As with ``exp(a·log t)`` the error is
dominated by the rounding of y = a·ln t, so the relative error of t^a is ≲ 2^-53·(c + |y|); the
tests pin ``|unit_pow(t, a) − t**a| ≤ 2^-50·(1 + |a ln t|)·t**a`` for t^a ≥ 1e-300 (the same order
as libm's ``exp(a*log(t))``). Results below e^{−708} (≈ 3e-308) are returned as a number of that size
(absolute error < 4e-308), and t is raised to 2^{−1022} first (absolute error ≤ (2^{−1022})^a); in
the mirror step every sum holds a term equal to 1, so neither is visible in double precision.

Valid for 0 < t ≤ 1 (t ≤ 0 is the caller's to mask) and 0 < a ≤ 700. Compile callers with
``error_model="numpy"`` (Python's ZeroDivisionError checks keep a loop scalar) and without
``reassoc`` (it would fold the round-to-integer shift): ``fastmath={"contract"}`` is safe.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from dpcore._jit import jit

__all__ = ["unit_pow", "unit_pows", "POW_FLAGS"]

#: Compile options of a loop that calls :func:`unit_pow` (module docstring).
POW_FLAGS = {"fastmath": {"contract"}, "error_model": "numpy"}

_LN2 = math.log(2.0)
_INV_LN2 = 1.0 / _LN2
_SQRT2 = math.sqrt(2.0)
_SHIFT = 6755399441055744.0  # 1.5·2^52: adding it rounds |x| < 2^51 to an integer in the low mantissa bits
_EXP_BIAS = 4503599627371519.0  # 2^52 + 1023
_TINY = 2.0**-1022  # smallest normal float
# Chebyshev (near-minimax) fits computed at 50 digits with mpmath.chebyfit, rounded to double:
# atanh(√z)/√z on [0, 0.02944] (degree 7, error < 3e-18) and e^g on [−ln2/2, ln2/2] (degree 11,
# relative error < 2e-17); tests/algorithms/test_mirror_pow.py checks the bound end to end.
_L0, _L1, _L2, _L3, _L4, _L5, _L6, _L7 = (
    1.0, 0.33333333333333826, 0.19999999999650955, 0.1428571438036914, 0.11111098523202137,
    0.09091816120808513, 0.0765625655736915, 0.07404933786156531)
_E0, _E1, _E2, _E3, _E4, _E5, _E6, _E7, _E8, _E9, _E10, _E11 = (
    1.0, 1.0, 0.5000000000000019, 0.1666666666666668, 0.0416666666664881, 0.008333333333319601,
    0.0013888888952314775, 0.00019841269890047113, 2.4801485482328494e-05, 2.755724091857897e-06,
    2.763263963904103e-07, 2.5110037605963777e-08)


@intrinsic
def _bits(typingctx, x):
    """The IEEE-754 bits of a float64 as int64 (a bit cast, vectorisable)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _float(typingctx, x):
    """The float64 with the given int64 bits (a bit cast, vectorisable)."""
    if x != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@jit(inline="always", **POW_FLAGS)
def _unit_log(t: float) -> float:
    """ln t for a normal float t > 0: t = 2^k·m, m ∈ [√½, √2), ln m by the atanh series."""
    bits = _bits(t)
    k = _float((bits >> 52) | 0x4330000000000000) - _EXP_BIAS  # biased exponent − 1023, exact
    m = _float((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)  # mantissa in [1, 2)
    big = m > _SQRT2
    m = m * 0.5 if big else m
    k = k + 1.0 if big else k
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    z2 = z * z
    p = ((_L0 + _L1 * z) + (_L2 + _L3 * z) * z2) + ((_L4 + _L5 * z) + (_L6 + _L7 * z) * z2) * (z2 * z2)
    return k * _LN2 + 2.0 * s * p


@jit(inline="always", **POW_FLAGS)
def _exp_neg(y: float) -> float:
    """e^y for y ≤ 0 (y below −708 is taken as −708): y = n·ln2 + g, |g| ≤ ln2/2, e^g by Taylor."""
    y = max(y, -708.0)
    shifted = y * _INV_LN2 + _SHIFT
    n = _bits(shifted) - _bits(_SHIFT)  # round(y/ln2) as an integer
    nf = shifted - _SHIFT  # the same integer as a float (exact)
    g = y - nf * _LN2
    g2 = g * g
    g4 = g2 * g2
    q = (((_E0 + _E1 * g) + (_E2 + _E3 * g) * g2) + ((_E4 + _E5 * g) + (_E6 + _E7 * g) * g2) * g4) \
        + ((_E8 + _E9 * g) + (_E10 + _E11 * g) * g2) * (g4 * g4)
    return q * _float((n + 1023) << 52)


@jit(inline="always", **POW_FLAGS)
def unit_pow(t: float, a: float) -> float:
    """t^a for 0 < t ≤ 1 and 0 < a ≤ 700, branch-free (module docstring for the error bound)."""
    return _exp_neg(a * _unit_log(max(t, _TINY)))


@jit(**POW_FLAGS)
def unit_pows(va: np.ndarray, k: int, nu: float, m: float, a: float, out: np.ndarray) -> None:
    """out[i] ← tᵢ^a with tᵢ = (va[i] − ν)/m ≤ 1 for i < k, 0 where va[i] ≤ ν; equal bit for bit to
    ``unit_pow(tᵢ, a)``, in two vectorised loops (module docstring)."""
    for i in range(k):
        out[i] = a * _unit_log(max((va[i] - nu) / m, _TINY))
    for i in range(k):
        c = _exp_neg(out[i])
        out[i] = c if va[i] > nu else 0.0
