"""One-sided Clopper–Pearson bounds of a binomial proportion (Clopper, Pearson 1934), shared by the
audit estimators (:mod:`audits.statistics`) and the joint test's nuisance interval
(:mod:`audits.joint_errors`)."""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np
from scipy import stats

from dpcore._validation import check_open_unit

__all__ = ["clopper_pearson_upper", "clopper_pearson_lower"]


def clopper_pearson_upper(k: Any, n: Any, alpha: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bound of a binomial proportion (Clopper, Pearson 1934).

    Parameters
    ----------
    k, n : int or array of int
        Successes and trials, 0 ≤ k ≤ n, n ≥ 1 (broadcast together).
    alpha : float
        Error probability in (0, 1): ``P[p > bound] ≤ alpha``.

    Returns
    -------
    ndarray of float64
        ``BetaISF(alpha; k + 1, n − k)``, and 1 where ``k == n``.
    """
    k, n = _check_counts(k, n)
    alpha = check_open_unit("alpha", alpha)
    full = k >= n
    with np.errstate(divide="ignore", invalid="ignore"):
        out = stats.beta.isf(alpha, k + 1.0, np.where(full, 1.0, n - k))
    return np.where(full, 1.0, out)


def clopper_pearson_lower(k: Any, n: Any, alpha: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower bound: ``BetaPPF(alpha; k, n − k + 1)``, 0 where ``k == 0``."""
    k, n = _check_counts(k, n)
    alpha = check_open_unit("alpha", alpha)
    empty = k <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = stats.beta.ppf(alpha, np.where(empty, 1.0, k), n - k + 1.0)
    return np.where(empty, 0.0, out)


def _check_counts(k: Any, n: Any) -> Tuple[np.ndarray, np.ndarray]:
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n) or np.any(k != np.floor(k)):
        raise ValueError("counts must be integers with 0 <= k <= n and n >= 1")
    return np.broadcast_arrays(k, n)
