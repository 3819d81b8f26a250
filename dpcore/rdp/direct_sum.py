"""RDP of a direct sum of pairs: an experiment that reveals which of several pairs ran.

For Σᵢ wᵢ·(Pᵢ, Qᵢ) with Σ wᵢ ≤ 1 (the branch drawn with probability wᵢ and revealed),

    e^{(α−1)·D_α} = Σᵢ wᵢ ∫ pᵢ^α qᵢ^{1−α} = Σᵢ wᵢ·e^{(α−1)·D_α(Pᵢ‖Qᵢ)},

so upper bounds Dᵢ(α) of the branches' divergences (in either order of neighbours) give
D_α ≤ (1/(α−1))·log Σᵢ wᵢ·e^{(α−1)·Dᵢ(α)} for every α > 1, exactly when the Dᵢ are exact. Used for
truncated Poisson sampling (:mod:`dpcore.truncation`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.special import logsumexp

from ._numerics import inflate

__all__ = ["direct_sum_rdp"]


def direct_sum_rdp(weights: Sequence[float], curves: Sequence[np.ndarray], orders: np.ndarray) -> np.ndarray:
    """(1/(α−1))·log Σᵢ wᵢ·e^{(α−1)·Dᵢ(α)} at each order α > 1 (module docstring), rounded up.

    Parameters
    ----------
    weights : sequence of float
        Branch probabilities wᵢ > 0 (upper bounds), Σ wᵢ ≤ 1 up to rounding.
    curves : sequence of numpy.ndarray
        Dᵢ(α) ≥ 0 at ``orders`` (upper bounds, ``inf`` allowed).
    orders : numpy.ndarray
        Rényi orders α > 1.

    The log-sum-exp m + log Σ wᵢ·e^{xᵢ − m} (xᵢ = (α−1)·Dᵢ, m their largest) is within
    u·(|m| + 2n + 4) of its exact value (n + 2 roundings of terms in [0, Σw] before the log, one
    of the sum m + log): 8u·(|m| + n + 2) is added before dividing by α − 1 — an absolute margin,
    which near α = 1 the division magnifies (5e-9 at α = 1 + 1e-6) — and the relative margin of
    :func:`~dpcore.rdp._numerics.inflate` after it. A negative sum (Σ wᵢ < 1) is raised to 0.
    """
    alpha = np.asarray(orders, dtype=float)
    scaled = np.stack([(alpha - 1.0) * np.asarray(c, dtype=float) for c in curves]) * (1.0 + 2.0**-52)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        total = logsumexp(scaled, axis=0, b=np.asarray(weights, dtype=float)[:, None])
        margin = 8.0 * 2.0**-53 * (np.max(np.abs(scaled), axis=0) + len(curves) + 2.0)
        out = np.maximum(total + margin, 0.0) / (alpha - 1.0)
    out = np.where(np.isnan(out), np.inf, out)
    return inflate(out)
