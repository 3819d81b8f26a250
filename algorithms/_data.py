"""Validation of the training data (X, y) shared by every solver.

* ``X``: a finite 2-D float array (n ≥ 1 rows); NaN / inf raise ``ValueError``. A ``scipy.sparse``
  matrix (e.g. the CSR that ``sklearn.datasets.load_svmlight_file`` returns) is densified — the
  kernels stream dense rows — after checking that the dense copy fits in :data:`MAX_DENSE_BYTES`
  (``ValueError`` otherwise, naming the size).
* ``y`` for classification: labels in {−1, +1}, or in {0, 1} which are mapped to {−1, +1}
  (0 → −1, 1 → +1) and reported in :attr:`Data.label_mapping`; anything else raises.
  For regression: finite reals.
* Row-norm bound: when a solver derives its sensitivity from a bound R on ‖xᵢ‖₂ (no clipping), every
  row must satisfy ‖xᵢ‖₂ ≤ R, else ``ValueError`` — the bound is never enforced silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from dpcore._validation import check_positive, check_real_array

from .clipping import row_norms_kernel

__all__ = ["Data", "prepare_data", "validate_features", "validate_labels", "check_row_norms", "admitted_norm_bound",
           "MAX_DENSE_BYTES"]

LABELS_01 = "{0, 1} mapped to {-1, +1} (0 -> -1, 1 -> +1)"

MAX_DENSE_BYTES = 2**31  # 2 GiB: the largest dense float64 copy of a sparse X made without being asked


@dataclass(frozen=True)
class Data:
    """Validated training data.

    Attributes
    ----------
    X : ndarray, shape (n, d)
        float64, C-contiguous, finite.
    y : ndarray, shape (n,)
        float64; ±1 for classification.
    row_norms : ndarray, shape (n,)
        ‖xᵢ‖₂.
    label_mapping : str or None
        Description of the label mapping applied (``None`` when labels were used as given).
    """

    X: np.ndarray
    y: np.ndarray
    row_norms: np.ndarray
    label_mapping: Optional[str]

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def max_row_norm(self) -> float:
        return float(self.row_norms.max())


def validate_features(X: object) -> np.ndarray:
    """Return ``X`` as a finite C-contiguous float64 array of shape (n, d), n, d ≥ 1 (sparse input
    densified if it fits in :data:`MAX_DENSE_BYTES`)."""
    if hasattr(X, "toarray") and hasattr(X, "nnz"):  # scipy.sparse matrix or array
        shape = tuple(int(v) for v in X.shape)
        need = 8 * shape[0] * (shape[1] if len(shape) > 1 else 1)
        if need > MAX_DENSE_BYTES:
            raise ValueError(f"X is a sparse {shape[0]} x {shape[1]} matrix whose dense float64 copy needs {need} bytes "
                             f"> MAX_DENSE_BYTES={MAX_DENSE_BYTES}; reduce the features or densify it yourself")
        X = X.toarray()
    arr = np.ascontiguousarray(check_real_array("X", X))  # complex and strings refused, never made real
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"X must be a 2-D array with at least one row and column; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("X must contain only finite values (no NaN or inf)")
    return arr


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
    norm (relative error ≤ γ_{d+3}, Higham 2002 §3.1), so sensitivities computed for it hold for
    every accepted row."""
    return float(np.nextafter(bound * (1.0 + NORM_RTOL) * (1.0 + (2.0 * d + 16.0) * 2.0 ** -53), np.inf))


def prepare_data(X: object, y: object, task: str, data_norm_bound: Optional[float] = None) -> Data:
    """Validate (X, y) for ``task``; check ‖xᵢ‖₂ ≤ ``data_norm_bound`` when one is given."""
    Xv = validate_features(X)
    yv, mapping = validate_labels(y, Xv.shape[0], task)
    norms = row_norms_kernel(Xv)
    if data_norm_bound is not None:
        check_row_norms(norms, check_positive("data_norm_bound", data_norm_bound))
    return Data(Xv, yv, norms, mapping)
