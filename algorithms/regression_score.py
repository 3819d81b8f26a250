"""The coefficient of determination R², computed without intermediate overflow.

``1 − Σwᵢ(yᵢ − pᵢ)² / Σwᵢ(yᵢ − ȳ)²`` squared residuals in target units: with a public ``target_bound`` near the
float64 limit (a regressor's noise, and so its predictions, scale with the bound) the squares overflowed to inf and
the score was −inf (or NaN) although the exact R² was a float (``target_bound=1e155``: R² ≈ −6.8e306). Here each sum
of squares is taken of values scaled by a power of two (exact) and the two exponents are combined at the end, so the
result is R² correctly rounded up to a few ulps; it is −inf only when the exact R² is below −1.8e308 (the IEEE
overflow of a value beyond the float range — ``target_bound=1e308`` with targets of order 1 gives exact R² ≈ −7e612).
No privacy guarantee attaches to a score: evaluate on public or held-out data.
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from dpcore._validation import check_real_array

__all__ = ["r2_score"]


def _finite_vector(name: str, value: object, n: Optional[int]) -> np.ndarray:
    """``value`` as a finite 1-D float64 array (of length ``n`` when given; a column (n, 1) is read as its one
    column, as scikit-learn's r2_score does); ``ValueError`` naming ``name``."""
    arr = check_real_array(name, value)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array; got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise ValueError(f"y and {name} must have the same length (one entry per target); got {n} and {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


def _mean_square(v: np.ndarray, w: np.ndarray) -> Tuple[float, int]:
    """``(m, e)`` with Σwᵢvᵢ²/Σwᵢ = m·4ᵉ: v is scaled by the power of two 2⁻ᵉ that brings max|v| into [½, 1)."""
    top = float(np.max(np.abs(v)))
    if top == 0.0:
        return 0.0, 0
    e = int(np.frexp(top)[1])
    return float(np.average(np.ldexp(v, -e) ** 2, weights=w)), e


def r2_score(y_true: object, y_pred: object, sample_weight: Optional[object] = None) -> float:
    """R² = 1 − Σwᵢ(yᵢ − pᵢ)²/Σwᵢ(yᵢ − ȳ)² (ȳ the weighted mean), free of intermediate overflow/underflow.

    The same value as :func:`sklearn.metrics.r2_score` wherever that one's sums of squares stay finite, and
    the same convention for constant targets (1.0 for a perfect prediction, else 0.0).

    Parameters
    ----------
    y_true, y_pred : array_like, shape (n,)
        Finite targets and predictions (target units).
    sample_weight : array_like, shape (n,), optional
        Finite weights ≥ 0 with a positive sum; default all 1.

    Returns
    -------
    float
        R² (dimensionless, ≤ 1); −inf only when the exact R² is below the float range.
    """
    y = _finite_vector("y", y_true, None)
    p = _finite_vector("y_pred", y_pred, y.size)
    if sample_weight is None:
        w = np.ones(y.size)
    else:
        w = _finite_vector("sample_weight", sample_weight, y.size)
        if np.any(w < 0) or not np.sum(w) > 0:
            raise ValueError("sample_weight must be >= 0 with a positive sum")
    # residuals y − p at the common scale 2^s ≥ max(|y|, |p|): |y/2^s − p/2^s| < 2, no overflow
    s = int(np.frexp(max(float(np.max(np.abs(y))), float(np.max(np.abs(p)))))[1])
    res, e_res = _mean_square(np.ldexp(y, -s) - np.ldexp(p, -s), w)
    # deviations from the mean at the targets' own scale 2^t (the predictions' scale would underflow them)
    t = int(np.frexp(float(np.max(np.abs(y))))[1])
    y_t = np.ldexp(y, -t)
    tot, e_tot = _mean_square(y_t - np.average(y_t, weights=w), w)
    if tot == 0.0:
        return 1.0 if res == 0.0 else 0.0
    with np.errstate(over="ignore"):
        ratio = np.ldexp(res / tot, 2 * (e_res + s - e_tot - t))
    return float(1.0 - ratio)
