"""Does an audit at this budget have power? A prediction from the claimed curve, before any trial runs.

An audit that passes says "this attack, at this budget, found no violation" — worthless when the
budget could not have found one. :func:`predicted_power` estimates, for a two-sample audit with
``trials`` runs per side, the probability that the row's estimator flags a release with **half
the claimed noise** (the claim's family member E(2), :class:`audits.fdp_claim.CurveFamily`: σ/2
for Gaussian and Laplace noise, 2ε for pure-DP leaves) — the most common real bug class
(auditing notes §3, row 1). It assumes the attack is the likelihood-ratio test of that release
(the Neyman–Pearson-optimal score, which the library's targets use) and a normal approximation
of the error counts at the best threshold:

    z(a) = (c₂(a) − b(a)) / sqrt(c₂(1 − c₂)/n₁ + b′(a)²·a(1 − a)/n₀),   power ≈ Φ(max_a z(a) − z_{1−α′}),

with c₂ the TPR of E(2) at FPR a, b the null bound the estimator tests (the claimed curve for
``"curve"``, Φ(Φ⁻¹(a) + μ) of the claimed (ε, δ)'s μ for ``"gdp"``, the (ε, δ) region for
``"clopper-pearson"``), n₀, n₁ the evaluation trials (after the estimator's selection share)
and α′ its per-test level. It is a planning estimate, not a guarantee; the audit's verdict does
not depend on it.

:func:`label_power` applies the power rule to an audit's result — :func:`audits.run_audit` does it for
every audit (single audits, ``dpcore audit mechanism|solver`` and every row of ``dpcore audit all``): a
"pass" without evidence becomes :data:`NO_POWER`. Evidence means the attack separated D from D′ at all
(ε_lb > 0 — an attack that shows nothing on a correct release would not show a broken one either,
whatever an ideal attack could do) and, where the target carries a privacy event and the estimator is
``"gdp"``, ``"clopper-pearson"`` or ``"curve"``, a predicted power ≥ :data:`POWER_THRESHOLD`. A
*targeted* audit (the norm-stress rows :data:`audits.solver_targets.NORM_STRESS_NAMES` and the
robustness rows :data:`audits.robustness_checks.ROBUSTNESS_NAMES`: one specific attack whose correct
outcome is ε_lb = 0, whose power its planted variant shows) is exempt.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import special

from dpcore.risk import dp_tpr_bound, gdp_tpr_bound

from .fdp_claim import CurveFamily
from .report import NO_POWER, AuditResult

__all__ = ["predicted_power", "label_power", "POWER_THRESHOLD", "HALF_NOISE", "NO_POWER"]

#: rows with a smaller predicted power are labelled "no power at this budget"
POWER_THRESHOLD = 0.5
#: the alternative the power is predicted against: the claim's family member E(s) at this s
HALF_NOISE = 2.0
#: evaluation share of each estimator (1 − its selection share) and its number of tested points
_EVALUATED = {"gdp": 0.95, "clopper-pearson": 0.8, "curve": 0.8}
_POINTS = {"gdp": 1, "clopper-pearson": 1, "curve": 4}


def _gdp_mu(epsilon: float, delta: float) -> float:
    """μ of the least private μ-GDP mechanism meeting (ε, δ) (the Gaussian-DP estimator's null)."""
    from .statistics import gdp_delta

    lo, hi = 0.0, 1.0
    while gdp_delta(epsilon, hi) <= delta:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gdp_delta(epsilon, mid) <= delta else (lo, mid)
    return hi


def predicted_power(estimator: str, family: CurveFamily, claimed_epsilon: float, delta: float, trials: int,
                    level: float) -> float:
    """Predicted probability that ``estimator`` flags the half-noise release E(2) (module docstring).

    Parameters
    ----------
    estimator : str
        ``"gdp"``, ``"clopper-pearson"`` or ``"curve"``.
    family : CurveFamily
        The claim's event and its noise-scaled family.
    claimed_epsilon, delta : float
        The claim.
    trials : int
        Runs per side.
    level : float
        The row's significance level α (per row; the estimator's own split over points is applied).

    Returns
    -------
    float
        In [0, 1].
    """
    n = trials * _EVALUATED[estimator]
    alpha = level / _POINTS[estimator]
    a = np.geomspace(max(1.0 / n, 1e-9), 0.5, 400)
    alt = family(HALF_NOISE).tpr(a)
    if estimator == "curve":
        null = family(1.0).tpr(a)
    elif estimator == "gdp":
        null = gdp_tpr_bound(a, _gdp_mu(claimed_epsilon, delta))
    else:
        null = dp_tpr_bound(a, claimed_epsilon, delta)
    slope = np.gradient(null, a)
    var = alt * (1.0 - alt) / n + slope**2 * a * (1.0 - a) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, (alt - null) / np.sqrt(var), -math.inf)
    best = float(np.max(z))
    if not math.isfinite(best):
        return 0.0
    return float(special.ndtr(best - special.ndtri(1.0 - alpha)))


def label_power(result: AuditResult, target: object, targeted: bool = False) -> AuditResult:
    """``result`` with the power rule applied (module docstring): ``details["power"]`` (the predicted power, or
    None) and ``details["power_basis"]`` (which rule applied) recorded, and the verdict :data:`NO_POWER` for a
    pass without evidence. A violation is never relabelled.

    Parameters
    ----------
    result : AuditResult
        An audit of ``target`` (its ``trials`` per side and ``confidence`` give the budget and the level).
    target : AuditTarget
        The audited target; its ``event`` (if any) gives the claimed curve the power is predicted from.
    targeted : bool
        A targeted attack whose correct outcome is ε_lb = 0 (norm-stress, robustness rows): not labelled.
    """
    if targeted:
        return dataclasses.replace(result, details=dict(
            result.details, power=None, power_basis="targeted attack: its planted variant must read VIOLATED "
                                                    "(audits.robustness_checks, audits.solver_targets)"))
    event = getattr(target, "event", None)
    weak = result.eps_lower <= 0.0
    if event is not None and result.estimator in _EVALUATED:
        power = predicted_power(result.estimator, CurveFamily(event), result.claimed_epsilon, result.delta,
                                result.trials, 1.0 - result.confidence)
        basis = ("eps_lb > 0 and the predicted probability of flagging a release with half the claimed noise "
                 f">= {POWER_THRESHOLD} (audits.power)")
        weak = weak or power < POWER_THRESHOLD
    else:
        power, basis = None, "no privacy event to predict from: eps_lb > 0"
    details = dict(result.details, power=power, power_basis=basis)
    verdict = NO_POWER if weak and not result.violated else result.verdict
    return dataclasses.replace(result, verdict=verdict, details=details)
