"""Numba kernels of a one-hidden-layer network: per-example gradients, clipped sums, training loops.

Model (the small stand-in for the CNNs of wang-jayaraman-evans-gu §7.2): ``a = W₁x + b₁``,
``z = tanh(a)``, ``o = W₂z + b₂``; K = 1 output with the logistic loss ``log(1 + e^{−y·o})``
(labels ±1) or K ≥ 3 outputs with softmax cross-entropy (labels 0..K−1). tanh keeps every
per-example gradient Lipschitz in the parameters on bounded data. Parameters are one flat vector
``θ = [W₁ (h×d, row-major), b₁ (h), W₂ (K×h), b₂ (K)]``, P = h(d + 1) + K(h + 1) entries.

Privacy needs nothing from the model beyond per-example clipping: every noisy release is a sum of
per-example vectors clipped by :func:`algorithms.clipping.clip_factor` at the threshold
:func:`algorithms.clipping.clip_margin` (those of the linear solvers' ``clip_vector_kernel``; the norm
is taken from the gradient's outer-product structure, never materialising it, and from the sensitivity
room's scaled norms — :func:`algorithms.clipping.outer_product_norm` — whenever a plain sum of squares
could have under- or overflowed), batches come from
:func:`algorithms.dp_sgd.fixed_batch_kernel`, noise from :func:`mechanisms.kernels.gaussian_noise_kernel`.
Training loops keep θ in a work layout (W₁ transposed, :func:`to_work_layout`) and X's rows in CSR form
(:func:`sparse_rows`) for the whole run.
"""

from __future__ import annotations

import math

import llvmlite
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from dpcore._jit import jit
from mechanisms.kernels import gaussian_noise_kernel

from ._mirror_pow import POW_FLAGS, _exp_neg
from .clipping import (
    below_normal_range, clip_factor, clip_margin, exact_scale_product, outer_product_norm, trusted_sum_of_squares,
    vector_norm,
)
from .dp_sgd import fixed_batch_kernel
from .dp_srm import bounded_step_kernel

__all__ = [
    "n_parameters", "example_gradient_kernel", "mlp_loss_kernel", "mlp_clipped_sum_kernel", "mlp_srm_query_kernel",
    "mlp_noisy_sgd_kernel", "mlp_dp_srm_kernel", "mlp_logits_kernel", "to_work_layout", "from_work_layout",
    "sparse_rows", "work_clipped_sum_kernel", "work_srm_query_kernel", "tanh_kernel", "prefetch",
]


# tanh as a rational function below 0.625 and through e^{−2|x|} above (the Cephes form, Moshier 1989), both
# computed and one selected: no branch and no call (e^{−2|x|} is algorithms._mirror_pow's branch-free exp,
# relative error < 2e-17 before rounding), so a loop over the hidden units compiles to AVX2 code (callers
# use ``error_model="numpy"``). Within 5e-16 relative of libm's tanh (pinned in tests); NaN stays NaN,
# ±inf → ±1.
_TP = (-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3)
_TQ = (1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3)


@jit(inline="always", **POW_FLAGS)
def tanh_kernel(x: float) -> float:
    """tanh(x) (the hidden activation of every kernel here); see the comment above."""
    ax = abs(x)
    s = x * x
    small = x + x * s * ((_TP[0] * s + _TP[1]) * s + _TP[2]) / (((s + _TQ[0]) * s + _TQ[1]) * s + _TQ[2])
    e = _exp_neg(-2.0 * ax)
    big = math.copysign((1.0 - e) / (1.0 + e), x)
    return small if ax < 0.625 else big


PREFETCH_DISTANCE = 8  # rows ahead whose CSR entries, label and norm are requested while one row is computed


@intrinsic
def prefetch(typingctx, arr, i):
    """A read hint for ``arr[i]`` (LLVM ``llvm.prefetch``: no effect on results, ``i`` must be in range).
    The batches of DP-SGD are random rows of X, so each row's CSR entries are a cache miss unless they
    are requested a few rows ahead."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        ary, idx = args
        aryty = signature.args[0]
        ptr = cgutils.get_item_pointer(context, builder, aryty, context.make_array(aryty)(context, builder, ary),
                                       [idx], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i8p, ir.IntType(32), ir.IntType(32), ir.IntType(32)])
        # the intrinsic's mangled name: p0i8 while llvmlite's IR layer writes typed pointers, p0 with opaque ones
        typed = getattr(llvmlite, "ir_layer_typed_pointers_enabled", True)
        name = "llvm.prefetch.p0i8" if typed else "llvm.prefetch.p0"
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        i32 = ir.IntType(32)
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(arr, i), codegen


@jit
def n_parameters(d: int, h: int, K: int) -> int:
    """P = h(d + 1) + K(h + 1)."""
    return h * (d + 1) + K * (h + 1)


@jit
def _forward(theta, X, i, d, h, K, z, o):
    """Hidden activations z (h) and outputs o (K) of row i."""
    hd = h * d
    for u in range(h):
        s = theta[hd + u]
        base = u * d
        for j in range(d):
            s += theta[base + j] * X[i, j]
        z[u] = tanh_kernel(s)
    off2 = hd + h
    off3 = off2 + K * h
    for k in range(K):
        s = theta[off3 + k]
        for u in range(h):
            s += theta[off2 + k * h + u] * z[u]
        o[k] = s


@jit
def _output_grad(o, yi, K, do):
    """dLoss/do into ``do``; returns the loss (nats)."""
    if K == 1:
        m = yi * o[0]
        e = math.exp(-abs(m))
        if m > 0.0:
            do[0] = -yi * e / (1.0 + e)
            return math.log1p(e)
        do[0] = -yi / (1.0 + e)
        return -m + math.log1p(e)
    mx = o[0]
    for k in range(1, K):
        mx = max(mx, o[k])
    tot = 0.0
    for k in range(K):
        do[k] = math.exp(o[k] - mx)
        tot += do[k]
    c = int(yi)
    loss = math.log(tot) + mx - o[c]
    for k in range(K):
        do[k] /= tot
    do[c] -= 1.0
    return loss


@jit
def example_gradient_kernel(theta, X, y, i, d, h, K, g, z, o, do):
    """∇_θ loss(θ; xᵢ, yᵢ) into ``g`` (length P); ``z``, ``o``, ``do`` are scratch (h, K, K). Returns the loss."""
    _forward(theta, X, i, d, h, K, z, o)
    loss = _output_grad(o, y[i], K, do)
    hd = h * d
    off2 = hd + h
    off3 = off2 + K * h
    for k in range(K):
        g[off3 + k] = do[k]
        for u in range(h):
            g[off2 + k * h + u] = do[k] * z[u]
    for u in range(h):
        s = 0.0
        for k in range(K):
            s += theta[off2 + k * h + u] * do[k]
        da = s * (1.0 - z[u] * z[u])
        g[hd + u] = da
        base = u * d
        for j in range(d):
            g[base + j] = da * X[i, j]
    return loss


@jit
def mlp_logits_kernel(theta, X, d, h, K):
    """Outputs o (n, K) for every row."""
    n = X.shape[0]
    out = np.empty((n, K))
    z = np.empty(h)
    o = np.empty(K)
    for i in range(n):
        _forward(theta, X, i, d, h, K, z, o)
        out[i] = o
    return out


@jit
def mlp_loss_kernel(theta, X, y, d, h, K, grad):
    """Mean loss over all rows; ``grad`` ← mean gradient (length P)."""
    n = X.shape[0]
    P = grad.shape[0]
    g = np.empty(P)
    z = np.empty(h)
    o = np.empty(K)
    do = np.empty(K)
    grad[:] = 0.0
    tot = 0.0
    for i in range(n):
        tot += example_gradient_kernel(theta, X, y, i, d, h, K, g, z, o, do)
        grad += g
    grad /= n
    return tot / n


@jit
def to_work_layout(theta, d, h, out):
    """``out`` ← θ with its W₁ block transposed to (d × h) row-major: the h weights of a feature are
    contiguous, so the sparse forward and backward passes run over h-long unit-stride rows."""
    for u in range(h):
        for j in range(d):
            out[j * h + u] = theta[u * d + j]
    out[h * d:] = theta[h * d:]


@jit
def from_work_layout(work, d, h, out):
    """Inverse of :func:`to_work_layout`."""
    for u in range(h):
        for j in range(d):
            out[u * d + j] = work[j * h + u]
    out[h * d:] = work[h * d:]


@jit
def sparse_rows(X, idx, count):
    """The non-zero features of rows ``idx[:count]`` of X in CSR form: (ptr, ind, val, sqnorm) with row k's
    features ``ind[ptr[k]:ptr[k+1]]`` (int32), values ``val[...]`` and squared norm ``sqnorm[k]``. One
    counting pass sizes the arrays (nnz + d entries); the filling pass is branch-free (every entry is
    written, the slot advances when it is non-zero)."""
    d = X.shape[1]
    nnz = 0
    for k in range(count):
        i = idx[k]
        for j in range(d):
            nnz += X[i, j] != 0.0
    ptr = np.empty(count + 1, np.int64)
    ind = np.empty(nnz + d, np.int32)
    val = np.empty(nnz + d)
    sqnorm = np.empty(count)
    m = 0
    ptr[0] = 0
    for k in range(count):
        i = idx[k]
        sq = 0.0
        for j in range(d):
            v = X[i, j]
            ind[m] = j
            val[m] = v
            sq += v * v
            m += v != 0.0
        ptr[k + 1] = m
        sqnorm[k] = sq
    return ptr, ind, val, sqnorm


@jit
def _scratch(h, K):
    """Per-example scratch of :func:`_work_backprop`: a, z (h), o, do (K), da (h)."""
    return np.empty(h), np.empty(h), np.empty(K), np.empty(K), np.empty(h)


@jit(inline="always")
def _prefetch_ahead(ptr, ind, val, sqnorm, y, rows, labels, k, count):
    """Read hints for the row PREFETCH_DISTANCE ahead (its CSR entries, norm and label) and for the
    ``ptr`` entry of the row twice as far."""
    if k + 2 * PREFETCH_DISTANCE < count:
        prefetch(ptr, rows[k + 2 * PREFETCH_DISTANCE])
    if k + PREFETCH_DISTANCE < count:
        r2 = rows[k + PREFETCH_DISTANCE]
        q0 = ptr[r2]
        q1 = max(q0, ptr[r2 + 1] - 1)
        prefetch(ind, q0)
        prefetch(ind, q1)
        prefetch(val, q0)
        prefetch(val, q1)
        prefetch(sqnorm, r2)
        prefetch(y, labels[k + PREFETCH_DISTANCE])


@jit(inline="always")
def _work_backprop(work, ind, val, p0, p1, yi, d, h, K, a, z, o, do, da):
    """One example (CSR entries ``p0:p1``, label ``yi``) through the network in the work layout:
    fills z (hidden activations), do = ∂loss/∂o and da = ∂loss/∂a (the gradient is δa ⊗ [x, 1] for
    W₁, b₁ and δo ⊗ [z, 1] for W₂, b₂); returns (‖δa‖², ‖z‖², ‖δo‖²)."""
    hd = h * d
    off2 = hd + h
    off3 = off2 + K * h
    # first layer over h contiguous weights per feature; unsigned indices (no negative-index wrap-around
    # select per element) let LLVM vectorise the loop over u
    hu = np.uint64(h)
    for u in range(hu):
        a[u] = work[np.uint64(hd) + u]
    for q in range(p0, p1):
        base = np.uint64(ind[q]) * hu
        v = val[q]
        for u in range(hu):
            a[u] += work[base + u] * v
    for u in range(h):
        z[u] = tanh_kernel(a[u])
    for c in range(K):
        s = work[off3 + c]
        for u in range(h):
            s += work[off2 + c * h + u] * z[u]
        o[c] = s
    _output_grad(o, yi, K, do)
    dasq = 0.0
    zsq = 0.0
    for u in range(h):
        s = 0.0
        for c in range(K):
            s += work[off2 + c * h + u] * do[c]
        da[u] = s * (1.0 - z[u] * z[u])
        dasq += da[u] * da[u]
        zsq += z[u] * z[u]
    dosq = 0.0
    for c in range(K):
        dosq += do[c] * do[c]
    return dasq, zsq, dosq


@jit(inline="always")
def _add_first_layer(out, ind, val, p0, p1, coef, d, h):
    """``out``'s W₁, b₁ blocks (work layout) += coef ⊗ [x, 1] over the example's non-zero features."""
    hd = np.uint64(h * d)
    hu = np.uint64(h)
    for u in range(hu):
        out[hd + u] += coef[u]
    for q in range(p0, p1):  # unsigned indices: vectorised over u (see _work_backprop)
        base = np.uint64(ind[q]) * hu
        v = val[q]
        for u in range(hu):
            out[base + u] += coef[u] * v


@jit(inline="always")
def _add_first_layer_exact(out, ind, val, p0, p1, g1, u1, g2, u2, d, h):
    """``out``'s W₁, b₁ blocks += (g1·u1 + g2·u2) ⊗ [x, 1] with each product g·u·x rounded once
    (:func:`algorithms.clipping.exact_scale_product`): the path of a record whose scaled coefficients g·u
    fall below the normal range (:func:`algorithms.clipping.below_normal_range`), where (g·u)·x would carry
    the subnormal's absolute error scaled up by a large feature."""
    hd = h * d
    for u in range(h):
        out[hd + u] += g1 * u1[u] + g2 * u2[u]
    for q in range(p0, p1):
        base = ind[q] * h
        v = val[q]
        for u in range(h):
            out[base + u] += exact_scale_product(g1, u1[u], v) + exact_scale_product(g2, u2[u], v)


@jit(inline="always")
def _visit_row(ptr, ind, val, sqnorm, y, rows, labels, k, count):
    """The k-th example of a batch: read hints for the rows ahead (:func:`_prefetch_ahead`), then its CSR
    row r = ``rows[k]`` and that row's entry range [p0, p1); returns (r, p0, p1)."""
    _prefetch_ahead(ptr, ind, val, sqnorm, y, rows, labels, k, count)
    r = rows[k]
    return r, ptr[r], ptr[r + 1]


@jit(inline="always")
def _clip_factor_of_norm(norm, margin):
    """:func:`algorithms.clipping.clip_factor` at threshold ``margin``; 0 when the norm is NaN or infinite,
    so the record contributes nothing."""
    return clip_factor(norm, margin) if norm < math.inf else 0.0


@jit(inline="always")
def _gradient_clip_factor(dasq, xsq, dosq, zsq, da, x, do, z, margin):
    """Clip factor of a per-example network gradient [δa ⊗ [x, 1], δo ⊗ [z, 1]] (first-layer and
    second-layer blocks). Fast path: ‖g‖² = ``dasq``·(``xsq`` + 1) + ``dosq``·(``zsq`` + 1) from the sums of
    squares the backward pass accumulated, when each is one :func:`algorithms.clipping.trusted_sum_of_squares`
    accepts; otherwise the blocks' norms from the sensitivity room,
    hypot(:func:`algorithms.clipping.outer_product_norm` (δa, x), ``outer_product_norm`` (δo, z)) — so a
    gradient of tiny or huge entries is never taken for a zero or infinite one (issue 21)."""
    s = dasq * (xsq + 1.0) + dosq * (zsq + 1.0)
    if trusted_sum_of_squares(dasq) and trusted_sum_of_squares(dosq) and trusted_sum_of_squares(s):
        return _clip_factor_of_norm(math.sqrt(s), margin)
    return _clip_factor_of_norm(math.hypot(outer_product_norm(da, x), outer_product_norm(do, z)), margin)


@jit(error_model="numpy")  # no fastmath: the norm and the clip factor stay plain IEEE arithmetic
def work_clipped_sum_kernel(work, ptr, ind, val, sqnorm, y, rows, labels, count, clip, d, h, K, out, a, z, o, do, da):
    """``out ← Σ_{k<count} clip_C(∇loss(θ; x, y))`` in the work layout (:func:`to_work_layout`) for the
    CSR rows ``rows[k]`` (:func:`sparse_rows`) with labels ``y[labels[k]]``; ``a``, ``z``, ``da`` (h),
    ``o``, ``do`` (K) are scratch. Returns how many were clipped.

    Fused: the per-example gradient is never materialised. Its W₁ block is the outer product
    δa ⊗ x and its W₂ block δo ⊗ z, so ‖g‖² = ‖δa‖²(‖x‖² + 1) + ‖δo‖²(‖z‖² + 1) costs O(h + K) after
    the forward pass (Goodfellow 2015), and the clipped gradient is accumulated as f·δa ⊗ x over the
    non-zero features only. The norm and the clip factor are computed in plain IEEE arithmetic (no
    fast-math), with :func:`algorithms.clipping.clip_margin`'s rounding margin; when a sum of squares
    leaves the range where it is exact to rounding, the norm comes from the sensitivity room's scaled
    norms instead (:func:`_gradient_clip_factor`).
    """
    off2 = h * d + h
    off3 = off2 + K * h
    # the computed clipped vector (off3 + K parameters) keeps norm <= C despite rounding (clipping.clip_margin)
    margin = clip_margin(clip, off3 + K)
    out[:] = 0.0
    clipped = 0
    for k in range(count):
        r, p0, p1 = _visit_row(ptr, ind, val, sqnorm, y, rows, labels, k, count)
        dasq, zsq, dosq = _work_backprop(work, ind, val, p0, p1, y[labels[k]], d, h, K, a, z, o, do, da)
        f = _gradient_clip_factor(dasq, sqnorm[r], dosq, zsq, da, val[p0:p1], do, z, margin)
        if f < 1.0:
            clipped += 1
        if f == 0.0:  # a NaN or infinite gradient contributes nothing (NaN·0 would still reach ``out``)
            continue
        if f < 1.0 and below_normal_range(f, da):
            _add_first_layer_exact(out, ind, val, p0, p1, f, da, 0.0, da, d, h)
        else:
            for u in range(h):
                da[u] *= f
            _add_first_layer(out, ind, val, p0, p1, da, d, h)
        for c in range(K):  # second layer: (f·δo)·z with |z| ≤ 1 never scales a rounding error up
            g = f * do[c]
            for u in range(h):
                out[off2 + c * h + u] += g * z[u]
            out[off3 + c] += g
    return clipped


@jit(error_model="numpy")  # no fastmath: the norm and the clip factor stay plain IEEE arithmetic
def work_srm_query_kernel(work, work_prev, ptr, ind, val, sqnorm, y, rows, labels, count, gamma, clip1, clip2, d, h,
                          K, out, a, z, zp, o, do, dop, da, dap):
    """DP-SRM's later-step sum (wang-jayaraman-evans-gu §6.1, eq. (6.1)) in the work layout:
    ``out ← Σ_k [γ·clip_{C₁}(gₖ(θ)) + (1 − γ)·clip_{C₂}(gₖ(θ) − gₖ(θ_prev))]`` (θ = ``work``,
    θ_prev = ``work_prev``; rows, labels and scratch as :func:`work_clipped_sum_kernel`, ``zp``, ``dap`` (h),
    ``dop`` (K) for θ_prev). Returns (clipped gradients, clipped differences).

    Fused like :func:`work_clipped_sum_kernel`: both gradients share x, so the difference's W₁, b₁ blocks
    are (δa − δa′) ⊗ [x, 1] with squared norm ‖δa − δa′‖²(‖x‖² + 1); its W₂, b₂ blocks
    δoₖz − δo′ₖz′ and δo − δo′ are formed entry by entry (O(Kh)), the same expressions in the norm and in
    the sum, and the record's contribution to W₁ is one outer product
    (γf₁δa + (1 − γ)f₂(δa − δa′)) ⊗ x.
    """
    off2 = h * d + h
    off3 = off2 + K * h
    margin1 = clip_margin(clip1, off3 + K)
    margin2 = clip_margin(clip2, off3 + K)
    diff2 = np.empty(K * (h + 1))  # the gradient difference's second-layer blocks (W₂ then b₂)
    out[:] = 0.0
    c1 = 0
    c2 = 0
    for k in range(count):
        r, p0, p1 = _visit_row(ptr, ind, val, sqnorm, y, rows, labels, k, count)
        yi = y[labels[k]]
        dasq, zsq, dosq = _work_backprop(work, ind, val, p0, p1, yi, d, h, K, a, z, o, do, da)
        _work_backprop(work_prev, ind, val, p0, p1, yi, d, h, K, a, zp, o, dop, dap)
        f1 = _gradient_clip_factor(dasq, sqnorm[r], dosq, zsq, da, val[p0:p1], do, z, margin1)
        ddsq = 0.0
        for u in range(h):
            dap[u] = da[u] - dap[u]  # δa − δa′
            ddsq += dap[u] * dap[u]
        w2sq = 0.0
        for c in range(K):
            for u in range(h):
                e = do[c] * z[u] - dop[c] * zp[u]
                diff2[c * h + u] = e
                w2sq += e * e
            e = do[c] - dop[c]
            diff2[K * h + c] = e
            w2sq += e * e
        # the difference's first-layer blocks are (δa − δa′) ⊗ [x, 1]; its second-layer blocks (diff2) are
        # not an outer product: their norm comes from the room's vector_norm when the plain sum is not trusted
        s2 = ddsq * (sqnorm[r] + 1.0) + w2sq
        if trusted_sum_of_squares(ddsq) and trusted_sum_of_squares(w2sq) and trusted_sum_of_squares(s2):
            f2 = _clip_factor_of_norm(math.sqrt(s2), margin2)
        else:
            f2 = _clip_factor_of_norm(math.hypot(outer_product_norm(dap, val[p0:p1]), vector_norm(diff2)), margin2)
        if f1 < 1.0:
            c1 += 1
        if f2 < 1.0:
            c2 += 1
        if f1 == 0.0 or f2 == 0.0:  # a non-finite gradient or difference: the record contributes nothing
            continue
        g1 = gamma * f1
        g2 = (1.0 - gamma) * f2
        if below_normal_range(g1, da) or below_normal_range(g2, dap):
            _add_first_layer_exact(out, ind, val, p0, p1, g1, da, g2, dap, d, h)
        else:
            for u in range(h):
                da[u] = g1 * da[u] + g2 * dap[u]
            _add_first_layer(out, ind, val, p0, p1, da, d, h)
        for c in range(K):
            for u in range(h):
                out[off2 + c * h + u] += g1 * (do[c] * z[u]) + g2 * (do[c] * z[u] - dop[c] * zp[u])
            out[off3 + c] += g1 * do[c] + g2 * (do[c] - dop[c])
    return c1, c2


@jit
def mlp_clipped_sum_kernel(theta, X, y, idx, count, clip, d, h, K, out):
    """``out ← Σ_{k<count} clip_C(∇loss(θ; x_{idx[k]}))`` (θ and ``out`` in the parameter layout of the
    module docstring); returns how many were clipped. One call of :func:`work_clipped_sum_kernel` on
    the CSR form of the ``count`` rows; training loops keep θ in the work layout and the CSR form of
    X across steps instead (:func:`mlp_noisy_sgd_kernel`)."""
    P = theta.shape[0]
    work = np.empty(P)
    acc = np.empty(P)
    to_work_layout(theta, d, h, work)
    ptr, ind, val, sqnorm = sparse_rows(X, idx, count)
    rows = np.arange(count)
    a, z, o, do, da = _scratch(h, K)
    clipped = work_clipped_sum_kernel(work, ptr, ind, val, sqnorm, y, rows, idx, count, clip, d, h, K, acc, a, z, o,
                                      do, da)
    from_work_layout(acc, d, h, out)
    return clipped


@jit
def mlp_srm_query_kernel(theta, theta_prev, X, y, idx, count, gamma, clip1, clip2, d, h, K, out):
    """DP-SRM's later-step sum (wang-jayaraman-evans-gu §6.1, eq. (6.1)) for the network:
    ``out ← Σ_k [γ·clip_{C₁}(gₖ(θ)) + (1 − γ)·clip_{C₂}(gₖ(θ) − gₖ(θ_prev))]`` over rows ``idx[:count]``
    (parameter layout of the module docstring). Returns (clipped gradients, clipped differences). One
    call of :func:`work_srm_query_kernel` on the CSR form of the rows."""
    P = theta.shape[0]
    work = np.empty(P)
    work_prev = np.empty(P)
    acc = np.empty(P)
    to_work_layout(theta, d, h, work)
    to_work_layout(theta_prev, d, h, work_prev)
    ptr, ind, val, sqnorm = sparse_rows(X, idx, count)
    a, z, o, do, da = _scratch(h, K)
    _, zp, _, dop, dap = _scratch(h, K)
    c1, c2 = work_srm_query_kernel(work, work_prev, ptr, ind, val, sqnorm, y, np.arange(count), idx, count, gamma,
                                   clip1, clip2, d, h, K, acc, a, z, zp, o, do, dop, da, dap)
    from_work_layout(acc, d, h, out)
    return c1, c2


@jit
def mlp_noisy_sgd_kernel(theta0, X, y, d, h, K, steps, batch, lr, clip, sigma, alpha, rng, heavy_ball=0.0,
                         cosine=False, adam=False, beta2=0.999, adam_eps=1e-8):
    """``steps`` noisy clipped steps with uniform b-subsets (b = n: DP-GD; DP-SGD without replacement;
    RRPSGD for R steps): ``g̃ = (Σ_B clip_C(gᵢ) + N(0, σ²I))/b + alpha·θ`` and ηₜ = ``lr``, or
    ``lr·(1 + cos(πt/T))/2`` when ``cosine`` (t = 0..T−1). Heavy ball (``adam`` false): ``v ← μ·v + g̃``,
    ``θ ← θ − ηₜ·v`` with μ = ``heavy_ball`` (0: plain SGD). ``adam`` (Kingma & Ba 2015, Alg. 1, on the
    noisy g̃ — DP-Adam): ``m ← μm + (1 − μ)g̃``, ``v ← β₂v + (1 − β₂)g̃²``,
    ``θ ← θ − ηₜ·(m/(1 − μᵗ⁺¹))/(√(v/(1 − β₂ᵗ⁺¹)) + ε_a)`` with β₂ = ``beta2``, ε_a = ``adam_eps``.
    Either update post-processes the releases. Returns (θ, releases, clipped count)."""
    n = X.shape[0]
    P = theta0.shape[0]
    theta = np.empty(P)  # θ in the work layout (to_work_layout) for the whole run; the updates are elementwise
    to_work_layout(theta0, d, h, theta)
    s = np.empty(P)
    vel = np.zeros(P)
    sq = np.zeros(P)
    idx = np.arange(n)
    ptr, ind, val, sqnorm = sparse_rows(X, idx, n)  # CSR form of X, built once
    a, z, o, do, da = _scratch(h, K)
    releases = 0
    clipped = 0
    c1 = 1.0
    c2 = 1.0
    inv_batch = 1.0 / batch
    for t in range(steps):
        if batch < n:
            fixed_batch_kernel(rng, idx, batch)
        clipped += work_clipped_sum_kernel(theta, ptr, ind, val, sqnorm, y, idx, idx, batch, clip, d, h, K, s, a, z,
                                           o, do, da)
        if sigma > 0.0:
            s += gaussian_noise_kernel(rng, P, sigma)
        releases += 1
        eta = lr * 0.5 * (1.0 + math.cos(math.pi * t / steps)) if cosine else lr
        if adam:
            c1 *= heavy_ball
            c2 *= beta2
            m_step = eta / (1.0 - c1)  # one division per step instead of four per coordinate
            v_scale = 1.0 / (1.0 - c2)
            for j in range(P):
                g = s[j] * inv_batch + alpha * theta[j]
                vel[j] = heavy_ball * vel[j] + (1.0 - heavy_ball) * g
                sq[j] = beta2 * sq[j] + (1.0 - beta2) * g * g
                theta[j] -= m_step * vel[j] / (math.sqrt(sq[j] * v_scale) + adam_eps)
        else:
            for j in range(P):
                vel[j] = heavy_ball * vel[j] + s[j] * inv_batch + alpha * theta[j]
                theta[j] -= eta * vel[j]
    out = np.empty(P)
    from_work_layout(theta, d, h, out)
    return out, releases, clipped


@jit
def mlp_dp_srm_kernel(theta0, X, y, d, h, K, steps, b0, b, gamma, clip1, clip2, sigma0, sigma, lr, step_bound, alpha,
                      out_index, rng):
    """wang-jayaraman-evans-gu Alg. 1 on the network (as :func:`algorithms.dp_srm.dp_srm_kernel`):
    T releases and updates; returns (θ_{out_index}, releases, clipped gradients, clipped differences).
    θ stays in the work layout and X in CSR form for the whole run (as :func:`mlp_noisy_sgd_kernel`)."""
    n = X.shape[0]
    P = theta0.shape[0]
    theta = np.empty(P)
    to_work_layout(theta0, d, h, theta)
    prev = np.empty(P)
    s = np.empty(P)
    u = np.empty(P)
    direction = np.empty(P)
    idx = np.arange(n)
    ptr, ind, val, sqnorm = sparse_rows(X, idx, n)  # CSR form of X, built once
    a, z, o, do, da = _scratch(h, K)
    _, zp, _, dop, dap = _scratch(h, K)
    kept = theta.copy()
    fixed_batch_kernel(rng, idx, b0)
    c1 = work_clipped_sum_kernel(theta, ptr, ind, val, sqnorm, y, idx, idx, b0, clip1, d, h, K, s, a, z, o, do, da)
    c2 = 0
    if sigma0 > 0.0:
        s += gaussian_noise_kernel(rng, P, sigma0)
    u[:] = s / b0
    releases = 1
    for t in range(steps):
        for j in range(P):
            direction[j] = u[j] + alpha * theta[j]
        bounded_step_kernel(theta, prev, direction, lr, step_bound)
        if t + 1 == out_index:
            kept[:] = theta
        if t + 1 < steps:
            fixed_batch_kernel(rng, idx, b)
            a1, a2 = work_srm_query_kernel(theta, prev, ptr, ind, val, sqnorm, y, idx, idx, b, gamma, clip1, clip2, d,
                                           h, K, s, a, z, zp, o, do, dop, da, dap)
            c1 += a1
            c2 += a2
            if sigma > 0.0:
                s += gaussian_noise_kernel(rng, P, sigma)
            for j in range(P):
                u[j] = (1.0 - gamma) * u[j] + s[j] / b
            releases += 1
    out = np.empty(P)
    from_work_layout(kept, d, h, out)
    return out, releases, c1, c2
