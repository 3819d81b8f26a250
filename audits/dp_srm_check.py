"""DP-SRM's sensitivity check of §6.1 (wang-jayaraman-evans-gu, eq. (6.1)): the released sum of a
later step, ``Σᵢ [γ·clip_{C₁}(∇ℓᵢ(θᵗ)) + (1 − γ)·clip_{C₂}(∇ℓᵢ(θᵗ) − ∇ℓᵢ(θᵗ⁻¹))]``, must move by at most
``2(γC₁ + (1 − γ)C₂)`` when one record is replaced — whatever θᵗ, θᵗ⁻¹ are.

:func:`dp_srm_sensitivity_check` runs :func:`audits.sensitivity.sensitivity_check` (adversarial
search: the boundary candidates alone cannot find the worst pair, because the gradient difference
(ℓ'(⟨θᵗ, x⟩) − ℓ'(⟨θᵗ⁻¹, x⟩))·x is even in x and nearly label-independent; the local moves then push
one record off the step direction) on
:func:`algorithms.dp_srm.dp_srm_query` (the solver's own kernel) at a fixed pair θᵗ⁻¹, θᵗ that
differ by a step of norm 1 along the coordinate no base record uses, so that the difference clip C₂
binds for the search's "Dirac" records (for the logistic loss their gradient difference is
|ℓ'(0) − ℓ'(1)| ≈ 0.23 ≫ C₂). ``planted="unclipped-difference"`` runs
the same query with the C₂ clip removed while the declared bound keeps C₂ — the bug the check must
flag (a concrete witness pair of neighbours whose sums differ by more than the declared Δ).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from algorithms.dp_srm import dp_srm_query, dp_srm_sensitivities
from dpcore._validation import check_positive_int

from .sensitivity import SensitivityReport, sensitivity_check

__all__ = ["dp_srm_sensitivity_check", "DP_SRM_PLANTED"]

DP_SRM_PLANTED = ("unclipped-difference",)
_C1, _C2, _GAMMA = 1.0, 0.01, 0.01  # the paper's a9a setting (§7.1: C₁ = 1, C₂ = γ = 0.01)


def dp_srm_sensitivity_check(planted: Optional[str] = None, *, n: int = 20, d: int = 3, budget: int = 200,
                             seed: int = 0) -> SensitivityReport:
    """Adversarial sensitivity search on DP-SRM's later-step query against (6.1)'s bound.

    Parameters
    ----------
    planted : {None, "unclipped-difference"}
        None: the library's query (expect "not falsified"); ``"unclipped-difference"``: C₂ = ∞ in the
        query, C₂ = 0.01 in the declared bound (expect "violated").
    n, d : int
        Base dataset size (records, ‖x‖ ≤ 1, logistic labels ±1) and dimension.
    budget : int
        Query evaluations the search may spend.
    seed : int
        Seed of the base dataset, θᵗ⁻¹, θᵗ and the search.

    Returns
    -------
    SensitivityReport
        ``declared`` = 2(γC₁ + (1 − γ)C₂) with C₁ = 1, C₂ = γ = 0.01.
    """
    if planted is not None and planted not in DP_SRM_PLANTED:
        raise ValueError(f"planted must be None or one of {DP_SRM_PLANTED}; got {planted!r}")
    n = check_positive_int("n", n, minimum=3)
    d = check_positive_int("d", d, minimum=2)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, -1] = 0.0  # the last coordinate is the Dirac records' (sensitivity_check's structured search)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(X @ rng.normal(size=d) >= 0, 1.0, -1.0)
    w_prev = rng.normal(size=d)
    w_prev[-1] = 0.0
    w = w_prev.copy()
    w[-1] = 1.0  # a step of norm 1 along the Dirac coordinate: a Dirac record's gradient moves by ≈ 0.23
    c2 = math.inf if planted == "unclipped-difference" else _C2

    def query(Xq: np.ndarray, yq: np.ndarray) -> np.ndarray:
        return dp_srm_query(Xq, yq, w, w_prev, clip_norm=_C1, diff_clip_norm=c2, momentum=_GAMMA)

    declared = dp_srm_sensitivities(_C1, _C2, _GAMMA)[1]
    return sensitivity_check(query, (X, y), declared, relation="replace_one", search="adversarial", budget=budget,
                             rng=rng, radius=1.0, min_size=n)
