"""Multi-threshold test of empirical trade-off points against a claimed curve, with family-wise validity.

Two-sample design (n₀ runs on D, n₁ on D′). A claim with a trade-off curve (the target's event,
:mod:`audits.fdp_claim`) bounds every test's error pair: TPR ≤ B(FPR), B the certified TPR bound
(either direction). This estimator tests several points of the empirical trade-off curve at once:

1. On the first ``selection_fraction`` of each side's trials, for both error orders ("D′ iff
   score ≥ t" and "D iff score ≤ t"), the 64 pooled-quantile candidates of
   :func:`audits.statistics._candidate_thresholds` are scored by how far their empirical point
   lies above the claimed curve, in standard errors (probit scale, penalised for selection noise
   as :func:`audits.statistics._selection_criterion`); the ``thresholds`` best (order, threshold)
   pairs are kept. Nothing of the evaluation trials is looked at.
2. On the remaining trials each kept threshold's (false positives, true positives) is tested
   exactly against c(a) = B(a) by the Berger–Boos joint test of :class:`audits.joint_errors.JointTest`
   at level α/J (J = ``thresholds``). By the union bound the probability that *any* of the J tests
   rejects a true claim is ≤ α (family-wise validity); the claim's p-value is min(1, J·min_j p_j).
3. ε_lb: the largest s for which some threshold rejects the noise-scaled claim E(s) at α/J
   (:meth:`audits.fdp_claim.CurveFamily.largest_rejected`), reported as the certified lower PLD
   bound of ε(E(s), δ). The verdict is the rejection of the claim itself (s = 1), valid for any
   release; ε_lb reads the rejection in the claim's family.

The curve comes from the target's own event, so subsampled, clipped and composed releases get a
curve-based test — the Gaussian-DP estimator's μ-GDP curve is valid only for unsampled Gaussians.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np
from scipy import special

from dpcore._validation import check_delta, check_open_unit, check_positive_int

from .clopper_pearson import clopper_pearson_lower, clopper_pearson_upper
from .fdp_claim import ClaimedCurve, CurveFamily
from .joint_errors import NUISANCE_SHARE, JointTest
from .statistics import (
    _SELECTION_PENALTY,
    Estimate,
    _candidate_thresholds,
    _check_scores,
    _round_down,
    _round_up,
    _split,
    error_counts,
)

__all__ = ["curve_test_estimate", "DEFAULT_THRESHOLDS"]

#: thresholds tested jointly (Bonferroni over them); chosen by benchmarks/bench_audit_tightness.py
DEFAULT_THRESHOLDS = 4
#: points of the claimed curve kept in the details (for plots)
_CURVE_POINTS = 400


def _criterion(curve: ClaimedCurve, fp, tp, n0, n1, m0, m1, alpha_j) -> np.ndarray:
    """Predicted evaluation excess of each candidate over the claimed curve, in probit units,
    minus z-standard errors at the evaluation sizes and the selection penalty at the selection sizes."""
    a = (fp + 0.5) / (n0 + 1.0)
    c = (tp + 0.5) / (n1 + 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        claimed = np.clip(curve.tpr(a), 1e-300, 1.0 - 1e-16)
        excess = special.ndtri(c) - special.ndtri(claimed)
        # delta method: Var Φ⁻¹(ĉ) = c(1−c)/(n φ(Φ⁻¹ c)²); the curve moves with â by its slope
        phi_c = np.exp(-0.5 * special.ndtri(c) ** 2) / np.sqrt(2 * np.pi)
        vc = c * (1 - c) / np.maximum(phi_c, 1e-300) ** 2
        slope = (curve.tpr(np.minimum(a * 1.01, 1.0)) - claimed) / np.maximum(0.01 * a, 1e-300)
        phi_b = np.exp(-0.5 * special.ndtri(claimed) ** 2) / np.sqrt(2 * np.pi)
        va = a * (1 - a) * (slope / np.maximum(phi_b, 1e-300)) ** 2
        crit = (excess - special.ndtri(1 - alpha_j) * np.sqrt(vc / m1 + va / m0)
                - _SELECTION_PENALTY["gdp"] * np.sqrt(vc / n1 + va / n0))
    return np.where(np.isfinite(crit), crit, -np.inf)


def curve_test_estimate(
    scores0: Any,
    scores1: Any,
    family: CurveFamily,
    delta: float,
    confidence: float = 0.95,
    thresholds: int = DEFAULT_THRESHOLDS,
    selection_fraction: float = 0.2,
) -> Estimate:
    """Test the empirical trade-off points at several thresholds against the claimed curve.

    Parameters
    ----------
    scores0, scores1 : array of float
        Scores of runs on D and D′ (≥ 4 each; larger = "looks like D′").
    family : CurveFamily
        The claim's event and its noise-scaled family.
    delta : float
        δ in (0, 1) at which ε_lb is reported.
    confidence : float
        1 − α: the family-wise confidence of all tests together, in (0, 1).
    thresholds : int
        J, the number of (order, threshold) pairs tested (≥ 1).
    selection_fraction : float
        Share of each side's trials (the first ones) used to choose the thresholds, in (0, 1).

    Returns
    -------
    Estimate
        ``estimator="curve"``; ``p_value`` of the claim (Bonferroni over the J tests);
        ``details["rejected"]``, ``details["points"]`` (each tested point with its confidence
        box at level α/J) and ``details["claimed_curve"]``.
    """
    delta = check_delta("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    fraction = check_open_unit("selection_fraction", selection_fraction)
    j_tests = check_positive_int("thresholds", thresholds)
    s0, s1 = _check_scores(scores0, scores1)
    alpha = 1.0 - confidence
    alpha_j = alpha / j_tests
    claim = family(1.0)
    candidates: List[Tuple[float, int, float]] = []
    data = []
    for order, (a0, a1) in enumerate(((s0, s1), (-s1, -s0))):
        sel0, ev0 = _split(a0, fraction)
        sel1, ev1 = _split(a1, fraction)
        data.append((ev0, ev1))
        cand = _candidate_thresholds(sel0, sel1)
        fp, fn = error_counts(sel0, sel1, cand)
        crit = _criterion(claim, fp, sel1.size - fn, sel0.size, sel1.size, ev0.size, ev1.size, alpha_j)
        candidates += [(float(cr), order, float(t)) for cr, t in zip(crit, cand)]
    candidates.sort(key=lambda item: -item[0])
    chosen = candidates[:j_tests]
    tests, points = [], []
    gamma = NUISANCE_SHARE * alpha_j
    for _, order, t in chosen:
        ev0, ev1 = data[order]
        (x,), (fn,) = error_counts(ev0, ev1, np.array([t]))
        y = int(ev1.size - fn)
        tests.append(JointTest(int(x), ev0.size, y, ev1.size, "gdp", delta, gamma))
        points.append({
            "order": ("fpr", "fnr")[order], "threshold": t if order == 0 else -t,
            "fpr": int(x) / ev0.size, "tpr": y / ev1.size, "trials": [int(ev0.size), int(ev1.size)],
            "fpr_interval": [float(clopper_pearson_lower(int(x), ev0.size, alpha_j / 2)),
                             float(clopper_pearson_upper(int(x), ev0.size, alpha_j / 2))],
            "tpr_interval": [float(clopper_pearson_lower(y, ev1.size, alpha_j / 2)),
                             float(clopper_pearson_upper(y, ev1.size, alpha_j / 2))],
        })
    p_each = [test.p_value(claim.tpr) for test in tests]
    for point, p in zip(points, p_each):
        point["p_value"] = _round_up(p)
    p_value = _round_up(min(1.0, j_tests * min(p_each)))

    def rejects(curve: ClaimedCurve) -> bool:
        return any(test.rejects(curve.tpr, alpha_j) for test in tests)

    s_star = family.largest_rejected(rejects)
    eps = _round_down(family.epsilon_lower(s_star, delta)) if s_star > 0 else 0.0
    keep = np.unique(np.linspace(0, claim.x.size - 1, _CURVE_POINTS).astype(int))
    details: Dict[str, Any] = {
        "rejected": bool(p_value <= alpha), "thresholds": j_tests, "level_per_test": alpha_j,
        "points": points, "scale_lower": s_star, "family": "claimed event with noise scaled by 1/s",
        "eps_lower_assumes": "the release is the claimed mechanism with some noise scale",
        "claimed_curve": {"fpr": claim.x[keep].tolist(), "tpr": claim.y[keep].tolist()},
    }
    return Estimate("curve", max(eps, 0.0), confidence, p_value, details)
