"""The sensitivity room: every norm and clip factor that a sensitivity depends on, and the clipped-sum kernels.

Every solver and kernel of :mod:`algorithms` takes the norms its privacy rests on from here — the
ℓ2 row norms (:func:`row_norms_kernel`), the ℓq dual norms of the mirror-descent solvers for any
q ≥ 1 including very large q (:func:`lq_row_norms_kernel`), the norm of a network gradient built
from outer products (:func:`outer_product_norm`) — and decides clipping and truncation here
(:func:`clipped_coefficient`, :func:`truncated_coefficient`, :func:`clip_factor`, :func:`clip_margin`).
Never ``np.linalg.norm`` for a sensitivity: ``np.linalg.norm(x, ord=q)`` raises entries to the power
q unscaled, so at q = 1001 (p = 1.001) every entry below ≈ 0.47 underflows and a non-zero row gets
norm 0 — its gradient then escapes the clip (issue 21).

Clipping (Abadi et al. 2016, Alg. 1 "clip gradient"): ``ḡᵢ = gᵢ · min(1, C/‖gᵢ‖₂)``. For the
generalized linear losses of :mod:`algorithms.losses` the per-example gradient is ``gᵢ = cᵢ·xᵢ`` with
``cᵢ = ℓ'(zᵢ, yᵢ)``, so its norm is ``|cᵢ|·‖xᵢ‖₂`` and clipping costs one comparison per example once
the row norms are known (``row_norms_kernel``).

Floating-point safety (issue 13): the clip must bound the norm of the vector that is actually
added, for every finite input.

* Norms are computed without underflow or overflow (:func:`vector_norm`): the plain Σx² is used
  only when it lies far inside the normal range, else the entries are rescaled by a power of two
  (exact) first — rows of entries ~1e-170 get their true norm, not 0, so their gradients are clipped.
  ℓq norms (:func:`lq_norm`) are always scaled by the largest magnitude m: ‖x‖_q = m·(Σ(|xⱼ|/m)^q)^{1/q},
  where the sum lies in [1, d], so no q overflows it and the terms that underflow are below 2⁻¹⁰²²
  against a sum ≥ 1. A non-zero vector never gets norm 0 (‖x‖ ≥ m > 0 in both).
* The comparison is made in coefficient space, ``|cᵢ| > C′/‖xᵢ‖`` (no product that can overflow),
  and a clipped coefficient is ``±C′/‖xᵢ‖`` (rounded towards 0 where it is subnormal), so the added
  vector ``c̄ᵢ·xᵢ`` has norm ≤ C. ``C′ = C·(1 − (2d + 16)·2⁻⁵³)`` absorbs the rounding of the norm,
  the quotient and the products (Higham 2002, §3.1: relative error ≤ γ_{d+2} for a norm of d terms).
* A non-finite coefficient — the margin ``zᵢ = ⟨w, xᵢ⟩`` overflowed — is treated by sign: ``±inf``
  (squared loss, ``|zᵢ − yᵢ|`` beyond the float range) is clipped like any large finite value;
  ``NaN`` (partial sums of opposite signs overflowed, the sign is unknown) contributes the zero
  vector. A row whose norm itself overflows (‖xᵢ‖ > 1.8e308) also contributes zero. A zero
  contribution has norm 0 ≤ C, so the sensitivity below holds whatever the record; the decision
  uses only that record and w.

The sum Σᵢ ḡᵢ has ℓ2 sensitivity ``C`` under ``add_remove`` (one term appears or disappears) and
``2C`` under ``replace_one`` (one term changes, each of norm ≤ C): :func:`clipped_sum_sensitivity`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from dpcore._jit import jit
from dpcore._validation import check_positive, check_relation

from .losses import loss_deriv, row_axpy, row_dot

__all__ = [
    "clipped_sum_sensitivity",
    "vector_norm",
    "lq_norm",
    "outer_product_norm",
    "augmented_norm_bound",
    "trusted_sum_of_squares",
    "truncated_coefficient",
    "exact_scale_product",
    "below_normal_range",
    "lq_row_norms_kernel",
    "clip_margin",
    "clipped_coefficient",
    "clip_factor",
    "clip_vector_kernel",
    "row_norms_kernel",
    "clipped_gradient_sum_kernel",
    "clipped_gradient_sum_parallel_kernel",
    "clipped_batch_gradient_sum_kernel",
    "clipped_batch_difference_sum_kernel",
    "snapshot_gradient_sum_kernel",
]


def clipped_sum_sensitivity(clip_norm: float, relation: str) -> float:
    """ℓ2 sensitivity of a sum of vectors each clipped to norm ``clip_norm``.

    Parameters
    ----------
    clip_norm : float
        C > 0 (gradient units).
    relation : {"add_remove", "replace_one"}

    Returns
    -------
    float
        ``C`` for ``add_remove``, ``2C`` for ``replace_one``.
    """
    c = check_positive("clip_norm", clip_norm)
    return c if check_relation("relation", relation) == "add_remove" else 2.0 * c


_U = 2.0 ** -53  # unit roundoff of float64
_TINY = 2.0 ** -1022  # least normal float64
_HUGE = 1.7976931348623157e308  # largest float64
_SUBNORMAL_STEP = 5e-324  # 2⁻¹⁰⁷⁴: the spacing of float64 below 2⁻¹⁰²²
# Σx² is trusted only inside [2⁻⁹⁰⁰, 2⁹⁰⁰]: there no square overflows and the squares that
# underflow (each < 2⁻¹⁰²²) change the sum by a relative amount far below the rounding error.
_SUMSQ_LO, _SUMSQ_HI = 2.0 ** -900, 2.0 ** 900


@jit
def vector_norm(g: np.ndarray) -> float:
    """‖g‖₂ without spurious underflow or overflow (scaled by a power of two when Σg² leaves
    [2⁻⁹⁰⁰, 2⁹⁰⁰]); ``inf`` only when the true norm exceeds the float range, NaN when an entry is NaN
    (never 0: a NaN vector must not pass a clip as a zero one). Any 1-D layout (rows
    of X, iterates; also the ℓ2-ball projection and gauges of :mod:`algorithms.constraints`)."""
    d = g.shape[0]
    s = 0.0
    for j in range(d):
        s += g[j] * g[j]
    if _SUMSQ_LO <= s <= _SUMSQ_HI:
        return math.sqrt(s)
    if s != s:  # a NaN entry (inf² + … is inf, never NaN): the caller drops the vector
        return s
    m = 0.0
    for j in range(d):
        m = max(m, abs(g[j]))
    if m == 0.0 or not m < math.inf:
        return m
    e = math.frexp(m)[1]  # m = f·2^e, f in [0.5, 1): x·2^−e is exact unless it underflows
    s = 0.0
    for j in range(d):
        t = math.ldexp(g[j], -e)
        s += t * t
    return math.ldexp(math.sqrt(s), e)  # inf only if ‖x‖ itself exceeds the float range


@jit
def lq_norm(g: np.ndarray, q: float) -> float:
    """‖g‖_q for any q ≥ 1 (``math.inf`` for the max norm) without underflow or overflow.

    Scaled by m = max|gⱼ|: ``m·(Σ(|gⱼ|/m)^q)^{1/q}`` (:func:`vector_norm` for q = 2). The sum lies in
    [1, d], so nothing overflows at any q, and a term that underflows is below 2⁻¹⁰²² against a sum
    ≥ 1. Relative error (u = 2⁻⁵³, pow within one ulp ≤ 2u): each quotient's error (≤ u) is raised to
    q and the sum to 1/q, so it comes back as ≤ u; the terms' pow rounding (2u) and the summation
    (≤ γ_{d−1}) are divided by q; the last pow and the product with m add 3u — in all
    ≤ (4 + (d + 2)/q)·u ≤ (d + 6)·u for q ≥ 1, inside :func:`clip_margin`'s (2d + 16)·u. ``NaN`` when an entry is NaN (the caller then drops the
    record), ``inf`` when an entry is infinite or the true norm exceeds the float range.
    """
    if q == 2.0:
        return vector_norm(g)
    d = g.shape[0]
    m = 0.0
    for j in range(d):
        a = abs(g[j])
        if a != a:
            return a
        m = max(m, a)
    if m == 0.0 or not m < math.inf or q == math.inf:
        return m
    s = 0.0
    for j in range(d):
        s += (abs(g[j]) / m) ** q
    return m * s ** (1.0 / q)  # s ≥ 1: the largest entry's term is exactly 1


@jit
def lq_row_norms_kernel(X: np.ndarray, q: float) -> np.ndarray:
    """‖xᵢ‖_q of every row (:func:`lq_norm`): the dual norms of the mirror-descent solvers, a per-example
    gradient ℓ'·xᵢ having dual norm |ℓ'|·‖xᵢ‖_q."""
    n = X.shape[0]
    out = np.empty(n)
    for i in range(n):
        out[i] = lq_norm(X[i], q)
    return out


@jit(inline="always")
def trusted_sum_of_squares(s: float) -> bool:
    """Whether a plain Σx² (no scaling) gives its vector's ℓ2 norm to rounding: it lies in
    [2⁻⁹⁰⁰, 2⁹⁰⁰], where no square overflowed and the squares that underflowed are negligible.
    A fused kernel that accumulates Σx² on the fly uses it and falls back to :func:`vector_norm` /
    :func:`outer_product_norm` when it fails."""
    return _SUMSQ_LO <= s <= _SUMSQ_HI


@jit
def outer_product_norm(u: np.ndarray, x: np.ndarray) -> float:
    """‖u ⊗ [x, 1]‖₂ = ‖u‖₂·√(‖x‖₂² + 1) without underflow or overflow: the norm of a layer's weight and
    bias gradient (``u`` the layer's output derivative, ``x`` its input), never materialised.
    ``inf`` when the true norm exceeds the float range, NaN when an entry is NaN."""
    return vector_norm(u) * math.hypot(vector_norm(x), 1.0)


def augmented_norm_bound(bound: float, intercept: float) -> float:
    """An upper bound on √(R² + c²), the ℓ2 norm bound of a row of norm ≤ R (``bound``, feature units)
    with the constant intercept feature c (``intercept``) appended: ``math.hypot`` (within one ulp, and
    without the underflow / overflow of R·R + c·c — at R = 1e-160 that sum loses digits and the bound
    fell below the rows' norm; at R = 1e308 it overflows) rounded up by one ulp."""
    return math.nextafter(math.hypot(bound, intercept), math.inf)


@jit(inline="always")
def exact_scale_product(a: float, b: float, c: float) -> float:
    """a·b·c computed on the factors' mantissas and exponents separately (``frexp`` / ``ldexp``): the only
    roundings are the mantissa products (relative ≤ 2u) and, if the result is subnormal, the final one — no
    intermediate product can underflow. For a clipped coefficient times a feature, (f·δ)·x: when f·δ is
    subnormal it carries few significant bits, and a large x scales that error up (issue 21)."""
    ma, ea = math.frexp(a)
    mb, eb = math.frexp(b)
    mc, ec = math.frexp(c)
    return math.ldexp(ma * mb * mc, ea + eb + ec)


@jit(inline="always")
def below_normal_range(coef: float, v: np.ndarray) -> bool:
    """Whether ``coef``·vⱼ falls below the normal range (2⁻¹⁰²²) for a non-zero entry vⱼ: the product
    would then carry an absolute, not a relative, rounding error (use :func:`exact_scale_product`)."""
    for j in range(v.shape[0]):
        if v[j] != 0.0 and abs(v[j]) * coef < _TINY:
            return True
    return False


@jit
def clip_margin(clip: float, d: int) -> float:
    """C′ = C·(1 − (2d + 16)·2⁻⁵³) − (d + 1)·2⁻¹⁰⁷⁴ (at least 0): the threshold that keeps the *computed*
    clipped vector of dimension d at norm ≤ C despite rounding of its norm, the quotient and the products.
    The relative part covers normal-range arithmetic; the absolute part the subnormal range, where a
    product's rounding error is up to 2⁻¹⁰⁷⁵ per entry (≤ (d + 1)·2⁻¹⁰⁷⁵ in any ℓq norm, q ≥ 1) and a
    relative margin rounds away (for C ≥ 1e-290 it changes no bit of C′)."""
    return max(0.0, clip * (1.0 - (2.0 * d + 16.0) * _U) - (d + 1.0) * _SUBNORMAL_STEP)


@jit
def clipped_coefficient(c: float, row_norm: float, clip_safe: float) -> float:
    """The coefficient c̄ with ‖c̄·x‖₂ ≤ C of the clipped per-example gradient ``clip_C(c·x)``.

    ``row_norm`` = ‖x‖₂ (from :func:`vector_norm`), ``clip_safe`` = :func:`clip_margin`. Returns
    ``c`` when ``|c| ≤ C′/‖x‖``, else ``±C′/‖x‖`` (rounded towards 0 if subnormal). ``NaN`` (overflowed
    margin of unknown sign) and an overflowed row norm give 0; ``±inf`` is clipped by its sign.
    """
    if c != c or not row_norm < math.inf:
        return 0.0
    if row_norm == 0.0:
        return 0.0 if abs(c) == math.inf else c  # the gradient c·0 is the zero vector
    q = clip_safe / row_norm
    if abs(c) <= q and abs(c) < math.inf:
        return c
    q = min(q, _HUGE)  # only reachable for c = ±inf and a subnormal row norm
    if q < _TINY:
        q = np.nextafter(q, 0.0)  # the quotient's rounding error is absolute here: step below it
    return q if c > 0.0 else -q


@jit
def truncated_coefficient(c: float, row_norm: float, tau_safe: float) -> float:
    """The coefficient of a truncated per-example gradient (Su–Zhao–Wang's truncation, Alg. 4 / 7):
    ``c`` when ‖c·x‖ ≤ τ, else 0 — decided in coefficient space, |c| ≤ τ′/‖x‖, like
    :func:`clipped_coefficient` (``row_norm`` = ‖x‖ in the truncation's norm, ``tau_safe`` =
    :func:`clip_margin` of τ), so no product overflows and the kept vector's computed norm is ≤ τ.
    NaN, an infinite coefficient on a non-zero row and an overflowed row norm give 0."""
    if c != c or not row_norm < math.inf or abs(c) == math.inf:
        return 0.0
    if row_norm == 0.0 or abs(c) <= tau_safe / row_norm:
        return c
    return 0.0


@jit
def clip_factor(norm: float, clip: float) -> float:
    """min(1, C/norm) (1 when norm = 0)."""
    if norm > clip:
        return clip / norm
    return 1.0


@jit
def clip_vector_kernel(g: np.ndarray, clip: float) -> float:
    """In place: scale ``g`` to norm ≤ ``clip`` (:func:`vector_norm`, threshold :func:`clip_margin`);
    returns the norm before clipping (``inf`` if it overflows: ``g`` is then zeroed)."""
    nrm = vector_norm(g)
    if not nrm < math.inf:
        g[:] = 0.0
        return nrm
    f = clip_factor(nrm, clip_margin(clip, g.shape[0]))
    if f < 1.0:
        for j in range(g.shape[0]):
            g[j] *= f
    return nrm


@jit
def row_norms_kernel(X: np.ndarray) -> np.ndarray:
    """‖xᵢ‖₂ of every row (:func:`vector_norm`: no underflow for tiny entries, no overflow for huge ones)."""
    n = X.shape[0]
    out = np.empty(n)
    for i in range(n):
        out[i] = vector_norm(X[i])
    return out


_BLOCK = 16  # rows per block: their dot products are independent, so they pipeline (L1-resident)


@jit
def _clipped_sum(kind, param, X, y, row_norms, w, ref, mode, idx, use_idx, count, clip, out) -> int:
    """Shared core: ``out ← Σ_k clip_C(cₖ·x_{i_k})`` over rows i_k = idx[k] (or k), k < count, with
    cₖ = ℓ'(⟨w, x⟩, y) clipped by :func:`clipped_coefficient`. ``mode`` 1: also store the raw cₖ in ``ref[i_k]``; mode 2: use
    cₖ − ref[i_k] instead (a stored snapshot derivative). Two phases per block of rows —
    coefficients, then the accumulation — so consecutive rows' dot products overlap.
    Returns the number of clipped terms."""
    out[:] = 0.0
    coef = np.empty(_BLOCK)
    clipped = 0
    clip_safe = clip_margin(clip, X.shape[1])
    for start in range(0, count, _BLOCK):
        stop = min(count, start + _BLOCK)
        for k in range(start, stop):
            i = idx[k] if use_idx else k
            c = loss_deriv(kind, param, row_dot(X, i, w), y[i])
            if mode == 1:
                ref[i] = c
            elif mode == 2:
                c -= ref[i]
            cbar = clipped_coefficient(c, row_norms[i], clip_safe)
            if cbar != c:
                clipped += 1
            coef[k - start] = cbar
        for k in range(start, stop):
            row_axpy(coef[k - start], X, idx[k] if use_idx else k, out)
    return clipped


_NO_INDEX = np.empty(0, np.int64)


@jit
def clipped_gradient_sum_kernel(
    kind: int, param: float, X: np.ndarray, y: np.ndarray, row_norms: np.ndarray, w: np.ndarray,
    clip: float, out: np.ndarray,
) -> int:
    """``out ← Σᵢ clip_C(∇ℓ(w; xᵢ, yᵢ))`` over all rows (one pass); returns how many were clipped."""
    return _clipped_sum(kind, param, X, y, row_norms, w, out, 0, _NO_INDEX, False, X.shape[0], clip, out)


#: Row chunks of the multi-threaded full-gradient sum. Fixed (not the thread count) so that the
#: floating-point summation order, hence the result, does not depend on how many threads run.
_PARALLEL_CHUNKS = 64


@jit(parallel=True)
def clipped_gradient_sum_parallel_kernel(
    kind: int, param: float, X: np.ndarray, y: np.ndarray, row_norms: np.ndarray, w: np.ndarray,
    clip: float, out: np.ndarray,
) -> int:
    """Multi-threaded :func:`clipped_gradient_sum_kernel` (opt-in): the rows are cut into a fixed
    number of chunks summed in parallel, then the partial sums are added in chunk order. The
    clipped sum — hence its sensitivity — is the same; only the rounding order differs."""
    n, d = X.shape
    chunks = max(1, min(_PARALLEL_CHUNKS, n // 256))
    rows = np.arange(n)
    partial = np.zeros((chunks, d))
    counts = np.zeros(chunks, np.int64)
    for c in prange(chunks):
        lo = c * n // chunks
        hi = (c + 1) * n // chunks
        counts[c] = _clipped_sum(kind, param, X, y, row_norms, w, out, 0, rows[lo:hi], True, hi - lo, clip,
                                 partial[c])
    out[:] = 0.0
    for c in range(chunks):
        out += partial[c]
    return counts.sum()


@jit
def snapshot_gradient_sum_kernel(
    kind: int, param: float, X: np.ndarray, y: np.ndarray, row_norms: np.ndarray, w: np.ndarray,
    clip: float, out: np.ndarray, derivs: np.ndarray,
) -> int:
    """As :func:`clipped_gradient_sum_kernel`, also storing ``derivs[i] = ℓ'(⟨w, xᵢ⟩, yᵢ)`` (the
    snapshot of DP-SVRG, whose inner steps then need one dot product per example, not two)."""
    return _clipped_sum(kind, param, X, y, row_norms, w, derivs, 1, _NO_INDEX, False, X.shape[0], clip, out)


@jit
def clipped_batch_gradient_sum_kernel(
    kind: int, param: float, X: np.ndarray, y: np.ndarray, row_norms: np.ndarray, w: np.ndarray,
    idx: np.ndarray, count: int, clip: float, out: np.ndarray,
) -> int:
    """``out ← Σ_{k<count} clip_C(∇ℓ(w; x_{idx[k]}, y_{idx[k]}))``; returns how many were clipped."""
    return _clipped_sum(kind, param, X, y, row_norms, w, out, 0, idx, True, count, clip, out)


@jit
def clipped_batch_difference_sum_kernel(
    kind: int, param: float, X: np.ndarray, y: np.ndarray, row_norms: np.ndarray, w: np.ndarray,
    ref_derivs: np.ndarray, idx: np.ndarray, count: int, clip: float, out: np.ndarray,
) -> int:
    """``out ← Σ_k clip_C(∇ℓ(w; x_k, y_k) − ∇ℓ(w_ref; x_k, y_k))`` over the batch ``idx[:count]``.

    The variance-reduced term of DP-SVRG (wang-ye-xu-2017 Alg. 1 line 6); for a GLM it is
    ``(ℓ'(⟨w,x⟩) − ℓ'(⟨w_ref,x⟩))·x`` with ``ref_derivs[i] = ℓ'(⟨w_ref, xᵢ⟩, yᵢ)`` stored by
    :func:`snapshot_gradient_sum_kernel`. Returns how many terms were clipped.
    """
    return _clipped_sum(kind, param, X, y, row_norms, w, ref_derivs, 2, idx, True, count, clip, out)
