"""Validation of the training data (X, y) shared by every solver, and the validated design matrix.

* ``X``: a finite 2-D real array (n, d ≥ 1) or a ``scipy.sparse`` matrix; NaN / inf / complex values
  raise ``ValueError``. :func:`as_design` validates it once and returns a :class:`Design`: the rows in
  the layout the kernels read (:mod:`algorithms.rows`: the dense array as given — no copy when it is
  already C-contiguous float64 — or canonical CSR, never densified) and the ℓ2 norm of every row,
  computed once (:func:`algorithms.clipping.row_norms_kernel` / :func:`algorithms.clipping.vector_norm`).
  The checks stream the data: no n×d temporary. Solvers whose code reads dense arrays only get a dense
  copy (``prepare_data(..., layouts=False)``), refused beyond :data:`MAX_DENSE_BYTES` (``ValueError``
  naming the size).
* ``y`` for classification: labels in {−1, +1}, or in {0, 1} which are mapped to {−1, +1}
  (0 → −1, 1 → +1) and reported in :attr:`Data.label_mapping`; anything else raises.
  For regression: finite reals.
* Row-norm bound: when a solver derives its sensitivity from a bound R on ‖xᵢ‖₂ (no clipping), every
  row must satisfy ‖xᵢ‖₂ ≤ R, else ``ValueError`` — the bound is never enforced silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional, Union

import numpy as np

from dpcore._jit import jit
from dpcore._validation import check_positive, check_real_array

from .clipping import lq_norm, lq_row_norms_kernel, row_norms_kernel, vector_norm
from .rows import NO_SCALE, CSRRows, DenseRows, margins_kernel, row_intercept, row_scale, row_values

__all__ = ["Data", "Design", "DataTypeError", "as_design", "lq_row_norms", "prepare_data", "validate_features", "validate_labels", "validate_class_codes",
           "check_row_norms",
           "admitted_norm_bound", "MAX_DENSE_BYTES"]

LABELS_01 = "{0, 1} mapped to {-1, +1} (0 -> -1, 1 -> +1)"

MAX_DENSE_BYTES = 2**31  # 2 GiB: the largest dense float64 copy of a sparse X made without being asked

Rows = Union[np.ndarray, DenseRows, CSRRows]


# ------------------------------------------------------------------------------------------ kernels


@jit
def _first_nonfinite(a: np.ndarray) -> int:
    """Index of the first NaN / ±inf of the 1-D array ``a`` (−1 if none); one streaming pass."""
    for k in range(a.shape[0]):
        if not math.isfinite(a[k]):
            return k
    return -1


@jit
def _csr_row_norms(data: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """‖xᵢ‖₂ of every CSR row from its stored entries (:func:`vector_norm`)."""
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for i in range(n):
        out[i] = vector_norm(data[indptr[i]:indptr[i + 1]])
    return out


@jit
def _with_intercept_norms(norms: np.ndarray, c: float) -> np.ndarray:
    """‖(xᵢ, c)‖₂ = ‖(‖xᵢ‖₂, c)‖₂ (:func:`vector_norm` of the pair; the extra rounding is within the clip
    margin of dimension d + 1)."""
    pair = np.empty(2)
    out = np.empty(norms.shape[0])
    pair[1] = c
    for i in range(norms.shape[0]):
        pair[0] = norms[i]
        out[i] = vector_norm(pair)
    return out


@jit
def _layout_lq_row_norms(X, q: float) -> np.ndarray:
    """‖row i‖_q of a row layout (:mod:`algorithms.rows`) from the room's :func:`algorithms.clipping.lq_norm`: of
    the stored entries (a CSR row's zeros add nothing), times the row scale (one rounding), and with an
    intercept c as ‖(‖sᵢxᵢ‖_q, c)‖_q — exact in reals, a few roundings within the clip margin of dimension d."""
    n = X.shape[0]
    out = np.empty(n)
    pair = np.empty(2)
    c = row_intercept(X)
    for i in range(n):
        v = lq_norm(row_values(X, i), q) * row_scale(X, i)
        if c != 0.0:
            pair[0] = v
            pair[1] = c
            v = lq_norm(pair, q)
        out[i] = v
    return out


def lq_row_norms(X, q: float) -> np.ndarray:
    """‖xᵢ‖_q of every row of any layout: :func:`algorithms.clipping.lq_row_norms_kernel` for a plain array, the
    composition of :func:`_layout_lq_row_norms` (same ``lq_norm``) for CSR / row-scale / intercept layouts."""
    if isinstance(X, np.ndarray):
        return lq_row_norms_kernel(X, q)
    return _layout_lq_row_norms(X, q)


# ------------------------------------------------------------------------------------------- Design


@dataclass(frozen=True)
class Design:
    """Validated features: the kernels' row layout and every row's ℓ2 norm.

    Attributes
    ----------
    rows : ndarray, DenseRows or CSRRows
        What the kernels read (:mod:`algorithms.rows`); shape (n, d) including an intercept column.
    row_norms : ndarray, shape (n,)
        ‖row i‖₂ of the rows as the kernels see them (scaled, intercept included).
    x_norms : ndarray, shape (n,)
        ‖sᵢ·xᵢ‖₂ of the rows without the intercept column.
    """

    rows: Rows
    row_norms: np.ndarray
    x_norms: np.ndarray

    @property
    def n(self) -> int:
        return int(self.rows.shape[0])

    @property
    def d(self) -> int:
        return int(self.rows.shape[1])

    @property
    def sparse(self) -> bool:
        return isinstance(self.rows, CSRRows)

    @property
    def intercept(self) -> float:
        return 0.0 if isinstance(self.rows, np.ndarray) else float(self.rows.intercept)

    @property
    def scale(self) -> np.ndarray:
        return NO_SCALE if isinstance(self.rows, np.ndarray) else self.rows.scale

    def _rebuild(self, scale: np.ndarray, intercept: float) -> Rows:
        r = self.rows
        if isinstance(r, np.ndarray):
            if scale.shape[0] == 0 and intercept == 0.0:
                return r
            return DenseRows(r, scale, intercept, (r.shape[0], r.shape[1] + (1 if intercept else 0)))
        d0 = r.shape[1] - (1 if r.intercept else 0)
        shape = (r.shape[0], d0 + (1 if intercept else 0))
        if isinstance(r, DenseRows):
            if scale.shape[0] == 0 and intercept == 0.0:
                return r.X
            return DenseRows(r.X, scale, intercept, shape)
        return CSRRows(r.data, r.indices, r.indptr, scale, intercept, shape)

    def with_row_scale(self, scale: np.ndarray, scaled_norms: np.ndarray) -> "Design":
        """The rows sᵢ·xᵢ (a per-record map; X is not copied) with ``scaled_norms`` = ‖sᵢ·xᵢ‖₂."""
        if self.scale.shape[0]:
            raise ValueError("the rows already carry a scale")
        c = self.intercept
        rows = self._rebuild(np.ascontiguousarray(scale, dtype=np.float64), c)
        norms = _with_intercept_norms(scaled_norms, c) if c else scaled_norms
        return replace(self, rows=rows, row_norms=norms, x_norms=scaled_norms)

    def with_intercept(self, c: float) -> "Design":
        """Rows (xᵢ, c): a virtual constant last column of value c > 0 (X is not copied)."""
        c = float(c)
        return replace(self, rows=self._rebuild(self.scale, c), row_norms=_with_intercept_norms(self.x_norms, c))

    def row_values(self, i: int) -> np.ndarray:
        """The stored entries of row i as given (before scale and intercept)."""
        r = self.rows
        if isinstance(r, CSRRows):
            return r.data[r.indptr[i]:r.indptr[i + 1]]
        return (r.X if isinstance(r, DenseRows) else r)[i]

    def scales_to_norm(self, rows: np.ndarray, bound: float) -> tuple[np.ndarray, np.ndarray]:
        """(sᵢ, ‖sᵢ·xᵢ‖₂) for the given rows so that the scaled row has computed norm ≤ ``bound``: sᵢ = R/‖xᵢ‖₂,
        stepped down while fl(sᵢ·‖xᵢ‖₂) > R. A row whose norm overflows float64 is first scaled by 2⁻ᵉ
        (exact; 2ᵉ above its largest entry), so it too gets its true scale."""
        nrm = self.x_norms[rows].copy()
        e = np.zeros(rows.shape[0], dtype=np.int64)
        for k in np.flatnonzero(~np.isfinite(nrm)):  # rare: a norm beyond float64
            x = self.row_values(int(rows[k]))
            e[k] = math.frexp(float(np.max(np.abs(x))))[1]
            nrm[k] = vector_norm(np.ldexp(x, -e[k]))
        scale = np.ldexp(bound / nrm, -e)
        while True:  # ldexp(s, e)·nrm = fl(s·‖x‖) without overflow (a subnormal s: its own rounding counts)
            scaled = np.ldexp(scale, e) * nrm
            high = scaled > bound
            if not high.any():
                return scale, scaled
            scale[high] = np.nextafter(scale[high], 0.0)

    @property
    def shape(self) -> tuple:
        return (self.n, self.d)

    def __matmul__(self, w: np.ndarray) -> np.ndarray:
        """X @ w: the margins (:meth:`margins`)."""
        return self.margins(w)

    def margins(self, w: np.ndarray) -> np.ndarray:
        """⟨row i, w⟩ for every row (w of length d)."""
        out = np.empty(self.n)
        margins_kernel(self.rows, np.ascontiguousarray(w, dtype=np.float64), out)
        return out

    def toarray(self) -> np.ndarray:
        """The rows as a dense float64 array (a copy unless the rows are the given array); ``ValueError``
        beyond :data:`MAX_DENSE_BYTES`."""
        if isinstance(self.rows, np.ndarray):
            return self.rows
        need = 8 * self.n * self.d
        if need > MAX_DENSE_BYTES:
            raise ValueError(f"X is a {'sparse ' if self.sparse else ''}{self.n} x {self.d} matrix whose dense float64 "
                             f"copy needs {need} bytes > MAX_DENSE_BYTES={MAX_DENSE_BYTES}; this solver reads dense "
                             "rows only: reduce the features, or use a solver that keeps X sparse")
        from .rows import dense_block_kernel  # noqa: PLC0415

        out = np.empty((self.n, self.d))
        dense_block_kernel(self.rows, 0, np.ones(self.n), out)
        return out


class DataTypeError(ValueError, TypeError):
    """X holds something that is not a real number (a ``ValueError``, and a ``TypeError`` as NumPy's
    conversion error is)."""


def _refuse_complex(dtype: np.dtype) -> None:
    if np.issubdtype(dtype, np.complexfloating):
        raise ValueError(f"X must contain only real numbers; got complex numbers (dtype {dtype}; the imaginary part is "
                         "never dropped silently) — Complex data not supported: pass a real feature map")


def _check_shape(shape: tuple) -> None:
    """n ≥ 1 rows and d ≥ 1 columns (scikit-learn's wording)."""
    if len(shape) == 1:
        raise ValueError(f"X must be a 2-D array; got shape {shape}. Reshape your data either using "
                         "X.reshape(-1, 1) if it has a single feature or X.reshape(1, -1) if it is a single sample")
    if len(shape) != 2:
        raise ValueError(f"X must be a 2-D array (n rows, d features); got shape {shape}")
    if shape[0] < 1:
        raise ValueError(f"Found array with 0 sample(s) (shape={shape}) while a minimum of 1 is required (X)")
    if shape[1] < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required (X)")


def _sparse_rows(X) -> CSRRows:
    """Canonical float64 CSR of a scipy.sparse matrix (copies only what is not already so)."""
    _refuse_complex(X.dtype)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D matrix; got a sparse array of shape {X.shape}")
    if X.format != "csr":
        X = X.tocsr()
    if X.dtype != np.float64:
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"X must hold real numbers; got dtype {X.dtype}") from exc
    if not X.has_canonical_format:  # duplicates would be summed by arithmetic but not by the row norms
        X = X.copy()
        X.sum_duplicates()
    indptr, indices = X.indptr, X.indices
    if indptr.dtype != indices.dtype:
        indptr = indptr.astype(indices.dtype)
    return CSRRows(np.ascontiguousarray(X.data), np.ascontiguousarray(indices), np.ascontiguousarray(indptr),
                   NO_SCALE, 0.0, (int(X.shape[0]), int(X.shape[1])))


def _is_sparse(X: object) -> bool:
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def as_design(X: object, keep_sparse: bool = True) -> Design:
    """Validate ``X`` once (module docstring) and compute its row norms.

    Parameters
    ----------
    X : array-like of shape (n, d), scipy.sparse matrix or Design
        Features (feature units). A :class:`Design` is returned as is.
    keep_sparse : bool
        Keep sparse input as CSR (True) or densify it, refused beyond :data:`MAX_DENSE_BYTES`.
    """
    if isinstance(X, Design):
        return X
    if _is_sparse(X):
        _check_shape(tuple(int(v) for v in X.shape))
        rows = _sparse_rows(X)
        bad = _first_nonfinite(rows.data)
        if bad >= 0:
            raise ValueError("X must contain only finite values (no NaN or inf)")
        norms = _csr_row_norms(rows.data, rows.indptr)
        design = Design(rows, norms, norms)
        if keep_sparse:
            return design
        return as_design(design.toarray())
    arr = validate_features(X)
    norms = row_norms_kernel(arr)
    return Design(arr, norms, norms)


def validate_features(X: object) -> np.ndarray:
    """Return ``X`` as a finite C-contiguous float64 array of shape (n, d), n, d ≥ 1 (a copy only when X
    is not already one; sparse input and :class:`Design` densified if they fit in :data:`MAX_DENSE_BYTES`)."""
    if isinstance(X, Design):
        return X.toarray()
    if _is_sparse(X):
        return as_design(X).toarray()
    dtype = getattr(X, "dtype", None)
    if dtype is not None:
        _refuse_complex(np.dtype(dtype))
    try:  # complex, strings and non-numbers refused, never made real (dpcore's check_real_array)
        arr = np.ascontiguousarray(check_real_array("X", X), dtype=np.float64)
    except ValueError as exc:
        if "complex" in str(exc):
            raise ValueError(f"{exc} — Complex data not supported") from exc
        raise DataTypeError(f"{exc} (a float() argument must be a string or a real number)") from exc
    _check_shape(arr.shape)
    if _first_nonfinite(arr.reshape(-1)) >= 0:
        raise ValueError("X must contain only finite values (no NaN or inf)")
    return arr


# ------------------------------------------------------------------------------------------- labels


@dataclass(frozen=True)
class Data:
    """Validated training data.

    Attributes
    ----------
    X : ndarray, DenseRows or CSRRows
        The rows as the kernels read them (:mod:`algorithms.rows`), shape (n, d); a C-contiguous
        float64 array unless the solver accepts other layouts.
    y : ndarray, shape (n,)
        float64; ±1 for classification.
    row_norms : ndarray, shape (n,)
        ‖xᵢ‖₂.
    label_mapping : str or None
        Description of the label mapping applied (``None`` when labels were used as given).
    """

    X: Rows
    y: np.ndarray
    row_norms: np.ndarray
    label_mapping: Optional[str]

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def max_row_norm(self) -> float:
        return float(self.row_norms.max())


def validate_labels(y: object, n: int, task: str) -> tuple[np.ndarray, Optional[str]]:
    """Return (labels as float64, mapping note) for ``task`` in {"classification", "regression"}."""
    arr = check_real_array("y", y).ravel()
    if arr.shape[0] != n:
        raise ValueError(f"y must have one label per row of X ({n}); got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("y must contain only finite values (no NaN or inf)")
    if task == "regression":
        return np.ascontiguousarray(arr), None
    values = set(np.unique(arr).tolist())
    if values <= {-1.0, 1.0}:
        return np.ascontiguousarray(arr), None
    if values <= {0.0, 1.0}:
        return np.where(arr > 0.5, 1.0, -1.0), LABELS_01
    raise ValueError(
        f"y must have labels in {{-1, +1}} or {{0, 1}} for classification; got values {sorted(values)[:5]}"
    )


def validate_class_codes(y: object, n: int, k: int) -> np.ndarray:
    """Labels of a k-class fit as float64 codes in {0, …, k − 1} (``ValueError`` otherwise)."""
    arr, _ = validate_labels(y, n, "regression")
    if not np.all((arr >= 0) & (arr < k) & (arr == np.floor(arr))):
        raise ValueError(f"y must hold class codes 0..{k - 1} for classes={k}; got values "
                         f"{sorted(set(np.unique(arr).tolist()))[:5]}")
    return arr


NORM_RTOL = 1e-9


def check_row_norms(row_norms: np.ndarray, bound: float) -> None:
    """Raise ``ValueError`` if some computed ‖xᵢ‖₂ exceeds ``bound·(1 + 1e-9)``.

    The relative slack forgives rounding of rows normalised to the bound. The gradient solvers clip
    every per-example gradient, so their privacy does not rest on it; the solvers that use the
    bound itself for their sensitivity (output / objective perturbation, AMP, App-ObjP) compute
    their constants for :func:`admitted_norm_bound`, the largest true row norm this check admits.
    """
    worst = int(np.argmax(row_norms))
    if row_norms[worst] > bound * (1.0 + NORM_RTOL):
        raise ValueError(
            f"data_norm_bound={bound!r} is violated: row {worst} has norm {row_norms[worst]!r}; "
            "rescale X, raise data_norm_bound, or pass clip_norm to clip per-example gradients"
        )


def admitted_norm_bound(bound: float, d: int) -> float:
    """Largest exact ‖x‖₂ of a d-entry row that :func:`check_row_norms` admits for ``bound``:
    ``bound·(1 + 1e-9)·(1 + (2d + 16)·2⁻⁵³)`` rounded up — the slack plus the rounding of the computed
    norm (relative error ≤ γ_{d+3}, Higham 2002 §3.1; a row scale or intercept adds three roundings),
    so sensitivities computed for it hold for every accepted row."""
    return float(np.nextafter(bound * (1.0 + NORM_RTOL) * (1.0 + (2.0 * d + 16.0) * 2.0 ** -53), np.inf))


def prepare_data(X: object, y: object, task: str, data_norm_bound: Optional[float] = None,
                 layouts: bool = False, classes: Optional[int] = None) -> Data:
    """Validate (X, y) for ``task``; check ‖xᵢ‖₂ ≤ ``data_norm_bound`` when one is given.

    ``layouts=True``: the solver's kernels read every layout of :mod:`algorithms.rows` (CSR, row scale,
    intercept column), so ``Data.X`` keeps it; otherwise ``Data.X`` is a dense array (copied from such a
    layout, with its row norms recomputed). ``classes=k``: labels are class codes 0..k−1 (a softmax fit).
    """
    design = as_design(X, keep_sparse=layouts)
    if not layouts and not isinstance(design.rows, np.ndarray):
        design = as_design(design.toarray())
    if classes is None:
        yv, mapping = validate_labels(y, design.n, task)
    else:
        yv, mapping = validate_class_codes(y, design.n, classes), None
    if data_norm_bound is not None:
        check_row_norms(design.row_norms, check_positive("data_norm_bound", data_norm_bound))
    return Data(design.rows, yv, design.row_norms, mapping)
