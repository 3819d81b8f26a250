"""How every kernel reads a row of the design matrix: dense, CSR, with a per-row scale and an intercept.

A solver's kernels see the features only through the row accessors below, so one compiled solver
serves three layouts (Numba compiles one version per layout):

* a C-contiguous float64 ``ndarray`` of shape (n, d) — rows as given;
* :class:`DenseRows` — the same array read with a per-row scale sᵢ (the public row-norm map of the
  estimators, ``clip_data``; length 0 = none) and an intercept: a virtual last column of constant
  value c (c = 0: none), so ``shape = (n, d + 1)`` without copying X;
* :class:`CSRRows` — a canonical CSR matrix (``data``, ``indices``, ``indptr``: sorted, no duplicate
  entries), with the same optional scale and intercept. Nothing is densified.

Row i is the vector ``(fl(sᵢ·xᵢⱼ))ⱼ`` followed by c: every accessor forms the product sᵢ·xᵢⱼ of each
entry before using it, so the kernels compute exactly what they would on the materialised row. Its ℓ2
norm (the one the clipping and the sensitivity use) is computed once by :mod:`algorithms._data` through
:func:`algorithms.clipping.vector_norm`: fl(sᵢ·‖xᵢ‖₂), combined with c as ‖(·, c)‖₂ — within a few
roundings of the materialised row's norm, which the clip margin :func:`algorithms.clipping.clip_margin`
(``(2d + 16)·2⁻⁵³``) and :func:`algorithms._data.admitted_norm_bound` include.

Accessors (usable only inside Numba kernels; the plain-Python versions serve ``ndarray`` only):

* :func:`row_dot` ⟨row i, w⟩ and :func:`row_axpy` ``out += a·row i`` (the two the solvers use);
* :func:`row_span` / :func:`row_entry` / :func:`row_scale` / :func:`row_intercept`: the stored entries
  of row i one by one (for the compensated sums of the residual certificate and the Hessian blocks);
  :func:`row_values` all of them as one view (for a norm of the row's entries).

Bulk kernels: :func:`margins_kernel` (X·w), :func:`rmatvec_kernel` (Xᵀr), :func:`hessian_vector_kernel`
(Xᵀ diag(h) X v), :func:`hessian_diagonal_kernel`, :func:`dense_block_kernel` (rows of diag(√h) X,
for a blocked XᵀDX in BLAS without an n×d temporary).
"""

from __future__ import annotations

from typing import NamedTuple, Tuple

import numpy as np
from numba import types
from numba.extending import overload

from dpcore._jit import jit

__all__ = [
    "DenseRows", "CSRRows", "row_dot", "row_axpy", "row_span", "row_entry", "row_values", "row_scale", "row_intercept",
    "margins_kernel", "rmatvec_kernel", "hessian_vector_kernel", "hessian_diagonal_kernel", "dense_block_kernel",
    "weighted_gram", "BLOCK_ROWS",
    "NO_SCALE", "FASTMATH",
]

# Reassociation lets LLVM vectorise the reductions (several partial sums); it changes rounding only.
FASTMATH = {"reassoc", "contract"}

#: the empty per-row scale: rows used as stored
NO_SCALE = np.empty(0)


class DenseRows(NamedTuple):
    """A dense (n, d₀) float64 C-array read with per-row scale and intercept column (module docstring)."""

    X: np.ndarray
    scale: np.ndarray
    intercept: float
    shape: Tuple[int, int]


class CSRRows(NamedTuple):
    """A canonical CSR matrix of d₀ columns read with per-row scale and intercept column (module docstring)."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    scale: np.ndarray
    intercept: float
    shape: Tuple[int, int]


def _kind(X) -> str:
    """"array", "dense" or "csr" for a Numba type; None for anything else."""
    if isinstance(X, types.Array) and X.ndim == 2:
        return "array"
    if isinstance(X, types.BaseNamedTuple):
        fields = getattr(X, "fields", ())
        if "indptr" in fields:
            return "csr"
        if "X" in fields:
            return "dense"
    return None


# ------------------------------------------------------------------------------------------ row_dot


def row_dot(X: np.ndarray, i: int, w: np.ndarray) -> float:
    """⟨row i of X, w⟩ (kernels: any layout of the module docstring; Python: ndarray only)."""
    return float(np.asarray(X)[i] @ w)


@overload(row_dot, jit_options={"fastmath": FASTMATH})
def _row_dot(X, i, w):
    kind = _kind(X)
    if kind == "array":
        def impl(X, i, w):  # 2-D indexing: no row view, hence no reference counting in the hot loop
            s = 0.0
            for j in range(w.shape[0]):
                s += X[i, j] * w[j]
            return s
        return impl
    if kind == "dense":
        def impl(X, i, w):
            A = X.X
            d0 = A.shape[1]
            s = 0.0
            if X.scale.shape[0] > 0:
                sc = X.scale[i]
                for j in range(d0):
                    s += (sc * A[i, j]) * w[j]
            else:
                for j in range(d0):
                    s += A[i, j] * w[j]
            if X.intercept != 0.0:
                s += X.intercept * w[d0]
            return s
        return impl
    if kind == "csr":
        def impl(X, i, w):
            s = 0.0
            if X.scale.shape[0] > 0:
                sc = X.scale[i]
                for k in range(X.indptr[i], X.indptr[i + 1]):
                    s += (sc * X.data[k]) * w[X.indices[k]]
            else:
                for k in range(X.indptr[i], X.indptr[i + 1]):
                    s += X.data[k] * w[X.indices[k]]
            if X.intercept != 0.0:
                s += X.intercept * w[X.shape[1] - 1]
            return s
        return impl
    return None


# ----------------------------------------------------------------------------------------- row_axpy


def row_axpy(a: float, X: np.ndarray, i: int, out: np.ndarray) -> None:
    """``out += a·(row i of X)`` (kernels: any layout; Python: ndarray only)."""
    out += a * np.asarray(X)[i]


@overload(row_axpy, jit_options={"fastmath": FASTMATH})
def _row_axpy(a, X, i, out):
    kind = _kind(X)
    if kind == "array":
        def impl(a, X, i, out):
            for j in range(out.shape[0]):
                out[j] += a * X[i, j]
        return impl
    if kind == "dense":
        def impl(a, X, i, out):
            A = X.X
            d0 = A.shape[1]
            if X.scale.shape[0] > 0:
                sc = X.scale[i]
                for j in range(d0):
                    out[j] += a * (sc * A[i, j])
            else:
                for j in range(d0):
                    out[j] += a * A[i, j]
            if X.intercept != 0.0:
                out[d0] += a * X.intercept
        return impl
    if kind == "csr":
        def impl(a, X, i, out):
            if X.scale.shape[0] > 0:
                sc = X.scale[i]
                for k in range(X.indptr[i], X.indptr[i + 1]):
                    out[X.indices[k]] += a * (sc * X.data[k])
            else:
                for k in range(X.indptr[i], X.indptr[i + 1]):
                    out[X.indices[k]] += a * X.data[k]
            if X.intercept != 0.0:
                out[X.shape[1] - 1] += a * X.intercept
        return impl
    return None


# ----------------------------------------------------------------------------- entry-wise row access


def row_span(X, i):
    """(start, stop) of the stored entries of row i (excluding the intercept)."""
    raise TypeError("row_span is a Numba kernel helper")


@overload(row_span)
def _row_span(X, i):
    kind = _kind(X)
    if kind == "array":
        return lambda X, i: (0, X.shape[1])
    if kind == "dense":
        return lambda X, i: (0, X.X.shape[1])
    if kind == "csr":
        return lambda X, i: (X.indptr[i], X.indptr[i + 1])
    return None


def row_entry(X, i, k):
    """(column, stored value) of entry k of row i (k from :func:`row_span`; before the row scale: the
    entry of the row is ``row_scale(X, i) * value``)."""
    raise TypeError("row_entry is a Numba kernel helper")


@overload(row_entry)
def _row_entry(X, i, k):
    kind = _kind(X)
    if kind == "array":
        return lambda X, i, k: (k, X[i, k])
    if kind == "dense":
        return lambda X, i, k: (k, X.X[i, k])
    if kind == "csr":
        return lambda X, i, k: (X.indices[k], X.data[k])
    return None


def row_values(X, i):
    """The stored entries of row i as a 1-D view (before the row scale; zeros of a CSR row left out)."""
    raise TypeError("row_values is a Numba kernel helper")


@overload(row_values)
def _row_values(X, i):
    kind = _kind(X)
    if kind == "array":
        return lambda X, i: X[i]
    if kind == "dense":
        return lambda X, i: X.X[i]
    if kind == "csr":
        return lambda X, i: X.data[X.indptr[i]:X.indptr[i + 1]]
    return None


def row_scale(X, i):
    """sᵢ of row i (1.0 without a scale)."""
    raise TypeError("row_scale is a Numba kernel helper")


@overload(row_scale)
def _row_scale(X, i):
    if _kind(X) == "array":
        return lambda X, i: 1.0
    if _kind(X) in ("dense", "csr"):
        return lambda X, i: X.scale[i] if X.scale.shape[0] > 0 else 1.0
    return None


def row_intercept(X):
    """c of the intercept column (0.0: none; it is then not part of the shape)."""
    raise TypeError("row_intercept is a Numba kernel helper")


@overload(row_intercept)
def _row_intercept(X):
    if _kind(X) == "array":
        return lambda X: 0.0
    if _kind(X) in ("dense", "csr"):
        return lambda X: X.intercept
    return None


# ------------------------------------------------------------------------------------- bulk kernels


@jit
def margins_kernel(X, w: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = ⟨row i, w⟩`` for every row (X·w without a temporary)."""
    for i in range(X.shape[0]):
        out[i] = row_dot(X, i, w)


@jit
def rmatvec_kernel(X, r: np.ndarray, out: np.ndarray) -> None:
    """``out = Σᵢ rᵢ·row i`` (Xᵀr)."""
    out[:] = 0.0
    for i in range(X.shape[0]):
        if r[i] != 0.0:
            row_axpy(r[i], X, i, out)


@jit
def hessian_vector_kernel(X, h: np.ndarray, v: np.ndarray, out: np.ndarray) -> None:
    """``out = Σᵢ hᵢ⟨row i, v⟩·row i`` (Xᵀ diag(h) X v) in one pass over the rows."""
    out[:] = 0.0
    for i in range(X.shape[0]):
        if h[i] != 0.0:
            row_axpy(h[i] * row_dot(X, i, v), X, i, out)


@jit
def hessian_diagonal_kernel(X, h: np.ndarray, out: np.ndarray) -> None:
    """``out[j] = Σᵢ hᵢ·(row i)ⱼ²`` (the diagonal of Xᵀ diag(h) X)."""
    out[:] = 0.0
    d = X.shape[1]
    c = row_intercept(X)
    for i in range(X.shape[0]):
        hi = h[i]
        if hi == 0.0:
            continue
        s = row_scale(X, i)
        a, b = row_span(X, i)
        for k in range(a, b):
            j, v = row_entry(X, i, k)
            t = s * v
            out[j] += hi * t * t
        if c != 0.0:
            out[d - 1] += hi * c * c


@jit
def dense_block_kernel(X, start: int, weights: np.ndarray, out: np.ndarray) -> Tuple[int, int]:
    """Rows ``start, start+1, …`` of diag(weights)·X into the dense block ``out`` (b × d), as many as fit
    (rows of zero weight skipped). Returns (index after the last row read, rows written r): ``XᵀDX`` is
    the sum of ``out[:r]ᵀout[:r]`` over blocks (weights = √hᵢ) — BLAS speed, memory b·d."""
    n, d = X.shape
    c = row_intercept(X)
    b = out.shape[0]
    r = 0
    i = start
    while i < n and r < b:
        wi = weights[i]
        if wi != 0.0:
            for j in range(d):
                out[r, j] = 0.0
            s = wi * row_scale(X, i)
            lo, hi = row_span(X, i)
            for k in range(lo, hi):
                j, v = row_entry(X, i, k)
                out[r, j] = s * v
            if c != 0.0:
                out[r, d - 1] = wi * c
            r += 1
        i += 1
    return i, r


#: rows per block of :func:`weighted_gram` (the block is BLOCK_ROWS × d floats)
BLOCK_ROWS = 2048


def weighted_gram(X, sqrt_weights: np.ndarray) -> np.ndarray:
    """``Σᵢ wᵢ·(row i)(row i)ᵀ`` (XᵀDX, d × d) for ``sqrt_weights`` = √wᵢ ≥ 0, by blocks of rows in BLAS
    (``blockᵀblock``): memory BLOCK_ROWS·d + d², any layout."""
    d = X.shape[1]
    gram = np.zeros((d, d))
    buf = np.empty((min(BLOCK_ROWS, X.shape[0]), d))
    i = 0
    while i < X.shape[0]:
        i, r = dense_block_kernel(X, i, sqrt_weights, buf)
        if r:
            blk = buf[:r]
            gram += blk.T @ blk
    return gram
