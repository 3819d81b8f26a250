"""f-DP auditing in one run (Mahloujifar, Melis, Chaudhuri 2024, arXiv 2410.22235) against any claimed curve.

Setup (as for :func:`audits.statistics.one_run_estimate`): m canaries, each included independently
with probability ½; the auditor guesses "in" for the k₊ highest scores and "out" for the k₋
lowest (k = k₊ + k₋ guesses), abstaining on the rest, and C of its guesses are right.

**The bound** (their Thm 9 / the ``audit_rh_with_cap`` recursion). Let the release be f-DP with
respect to each canary (given the others), and B a concave, non-decreasing majorant of the TPR
bound 1 − f of both directions. For i ≥ 1 let r_i = E[C·1{C ≥ i}]/m and h_i = E[(k − C)·1{C ≥ i}]/m.
For canary j the event X_j = {guess "in" for j, C₋ⱼ ≥ i − 1} (C₋ⱼ: correct guesses on the other
canaries) is a test of canary j's membership given the others, so P[X_j | in] ≤ B(P[X_j | out]),
and the same for Y_j = {guess "out", C₋ⱼ ≥ i − 1} with the roles swapped. "j guessed right and
C ≥ i" is X_j under "in" and Y_j under "out"; "j guessed wrong and C₋ⱼ ≥ i − 1" is X_j under
"out" and Y_j under "in". Averaging over the ½/½ inclusion and over j with Jensen (B concave):

    r_i ≤ B(h_{i−1}),      i.e. h_{i−1} ≥ B⁻¹(r_i),

and r_{i−1} − r_i = (i − 1)·P[C = i − 1]/m, h_{i−1} − h_i = (k − i + 1)·P[C = i − 1]/m, while
r_0 + h_0 = k/m for any distribution of C. Mahloujifar et al. show that if P[C ≥ c] ≥ α these
constraints cannot all hold when the recursion started at (r_c, h_c) = (αc/m, α(k − c)/m) — all of
that mass at C = c, the extreme case — and taking at each level the least h allowed ends with
r_0 + h_0 > k/m. Observing c right guesses then rejects the claim at level α. (tests/audits/
test_fdp.py checks the rejection region against a direct maximisation of P[C ≥ c] over every
distribution of C meeting the constraints, for small k.) The recursion runs in a Numba kernel
(:func:`_chain_rejects`) on the majorant's vertices (:meth:`audits.fdp_claim.ClaimedCurve.hull`).

**Choices.** The claimed curve is the certified one of the target's event (any event dpcore's PLD
supports). The number of guesses k is chosen *before* the data are seen, from the claimed curve:
for each fraction of guesses on a grid, the count an optimal attack on a release exactly at the
claim would get, and the fraction whose predicted ε_lb is largest — so every canary is used for
the bound (the (ε, δ) one-run estimator spends half of them choosing k).

**Tighter, slower: ``analysis="lp"``.** The recursion uses only the tests "guess on j and the
others' right guesses ≥ i − 1". :mod:`audits.fdp_one_run_lp` uses every "… ∈ S" at once (a linear
program over the distribution of C, containing the recursion's constraints and, for a pure-DP claim,
Steinke et al.'s binomial bound exactly): valid, never looser, 1–2 % more ε_lb on the Gaussian at
m = 2·10⁴, seconds to minutes per audit instead of milliseconds — so the recursion stays the
default. ε_lb is reported in the
noise-scaled family of the claim (:class:`audits.fdp_claim.CurveFamily`; for a Gaussian release
the μ-GDP family of the paper); the verdict (the claim itself rejected) needs no family.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from dpcore._jit import jit
from dpcore._validation import check_delta, check_open_unit, check_positive_int

from .fdp_claim import SCALE_RANGE, ClaimedCurve, CurveFamily
from .fdp_one_run_lp import lp_rejects, lp_tail_bound
from .statistics import Estimate, _guess_counts, _round_down, _round_up

__all__ = ["fdp_one_run_estimate", "fdp_one_run_rejects", "GUESS_FRACTIONS", "ANALYSES"]

#: the bounds on P[C ≥ c] an f-DP one-run audit can use (:func:`fdp_one_run_estimate`)
ANALYSES = ("recursion", "lp")

#: fractions k/m of canaries guessed on, among which k is chosen from the claimed curve
GUESS_FRACTIONS = (0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.4, 1.0)
_P_VALUE_STEPS = 40


@jit
def _chain_rejects(hx, hy, m, k, c, alpha):  # pragma: no cover - compiled
    """True when c right guesses of k (m canaries) reject the curve with concave majorant
    (hx, hy) at level alpha (the recursion of the module docstring)."""
    if c <= 0:
        return False
    r = alpha * c / m
    h = alpha * (k - c) / m
    top = hy[hy.size - 1]
    for i in range(c - 1, -1, -1):
        # B⁻¹(r): least x with B(x) ≥ r on the piecewise-linear majorant, rounded down
        if r <= hy[0]:
            inv = 0.0
        elif r > top:
            return True
        else:
            j = np.searchsorted(hy, r) - 1  # hy[j] < r ≤ hy[j + 1]
            span = hy[j + 1] - hy[j]
            inv = hx[j] if span <= 0.0 else hx[j] + (r - hy[j]) * (hx[j + 1] - hx[j]) / span
            inv *= 1.0 - 1e-12
        h_new = h if h >= inv else inv
        if h_new == h:
            break
        r = r + (i / (k - i)) * (h_new - h)
        if r > 1.0:
            r = 1.0
        h = h_new
    return r + h > (k / m) * (1.0 + 1e-9)


def fdp_one_run_rejects(curve: ClaimedCurve, canaries: int, guesses: int, correct: int, alpha: float) -> bool:
    """Whether ``correct`` right guesses of ``guesses`` (of ``canaries`` canaries) reject ``curve`` at ``alpha``."""
    hx, hy = curve.hull()
    return bool(_chain_rejects(hx, hy, float(canaries), float(guesses), int(correct), float(alpha)))


def _p_value(curve: ClaimedCurve, m: int, k: int, c: int) -> float:
    """Least α at which the claim is rejected (bisection, upper end: a safe p-value)."""
    lo, hi = 0.0, 1.0
    if not fdp_one_run_rejects(curve, m, k, c, 1.0):
        return 1.0
    for _ in range(_P_VALUE_STEPS):
        mid = 0.5 * (lo + hi)
        if fdp_one_run_rejects(curve, m, k, c, mid):
            hi = mid
        else:
            lo = mid
    return _round_up(hi)


def _predicted_correct(curve: ClaimedCurve, fraction: float, k: int) -> int:
    """Right guesses of an optimal attack on a release exactly at the claim (guessing the top and
    bottom fraction/2 of the scores): the guessed mass ½(TPR(a) + a) = fraction/2, precision TPR/(TPR + a)."""
    a_grid = curve.x
    mass = 0.5 * (curve.y + a_grid)
    i = min(int(np.searchsorted(mass, fraction / 2.0)), a_grid.size - 1)
    a, t = a_grid[i], curve.y[i]
    precision = t / (t + a) if t + a > 0 else 0.5
    return int(round(k * precision))


def _choose_guesses(family: CurveFamily, m: int, alpha: float) -> int:
    """k from the claimed curve alone (module docstring), before any score is looked at."""
    claim = family(1.0)
    scales = np.geomspace(0.25, 1.0, 13)
    best, best_k = -1.0, max(2, int(round(0.05 * m)))
    for fraction in GUESS_FRACTIONS:
        k = min(m, max(2, int(round(fraction * m))))
        c = _predicted_correct(claim, fraction, k)
        reached = max((s for s in scales if fdp_one_run_rejects(family(float(s)), m, k, c, alpha)), default=0.0)
        if reached > best:
            best, best_k = reached, k
    return best_k


def _largest_lp_rejected(family: CurveFamily, m: int, k: int, c: int, alpha: float, s_recursion: float) -> float:
    """s* of the LP: it rejects wherever the recursion does, so bisect upwards from the recursion's s*
    (to a relative 1 %; an s* beyond twice the recursion's is reported as twice it, conservatively)."""
    if s_recursion <= 0:
        lo = SCALE_RANGE[0]
        if not lp_rejects(family(lo), m, k, c, alpha):
            return 0.0
    else:
        lo = s_recursion
    hi = min(SCALE_RANGE[1], 2.0 * lo)
    if lp_rejects(family(hi), m, k, c, alpha):
        return hi
    while hi / lo > 1.01:
        mid = math.sqrt(lo * hi)
        if lp_rejects(family(mid), m, k, c, alpha):
            lo = mid
        else:
            hi = mid
    return lo


def fdp_one_run_estimate(
    included: Any,
    scores: Any,
    family: CurveFamily,
    delta: float,
    confidence: float = 0.95,
    guesses: Optional[int] = None,
    analysis: str = "recursion",
) -> Estimate:
    """f-DP one-run audit of a claimed curve (module docstring).

    Parameters
    ----------
    included : array of bool, shape (m,)
        Inclusion bits of the canaries (each drawn with probability ½).
    scores : array of float, shape (m,)
        Score of each canary (larger = "looks included").
    family : CurveFamily
        The claim's event and its noise-scaled family.
    delta : float
        δ in (0, 1) at which ε_lb is reported.
    confidence : float
        1 − α, in (0, 1).
    guesses : int, optional
        Fixed k (1 ≤ k ≤ m); default: chosen from the claimed curve.
    analysis : {"recursion", "lp"}
        ``"recursion"`` (default): Mahloujifar et al.'s bound, milliseconds. ``"lp"``: the
        privacy-profile LP of :mod:`audits.fdp_one_run_lp` — every per-canary test at once, never
        looser, 1–2 % more ε_lb on the Gaussian at m = 2·10⁴ (RESULTS.md, "f-DP audits") for
        seconds to minutes per audit; ε_lb to a relative 1 % in the noise scale.

    Returns
    -------
    Estimate
        ``estimator="fdp-one-run"``; ``p_value`` of the claim itself; ``details["rejected"]``,
        the guesses, right guesses, s* and the family.
    """
    delta = check_delta("delta", delta)
    confidence = check_open_unit("confidence", confidence)
    alpha = 1.0 - confidence
    if analysis not in ANALYSES:
        raise ValueError(f"analysis must be one of {ANALYSES}; got {analysis!r}")
    inc = np.asarray(included, dtype=bool).reshape(-1)
    sc = np.asarray(scores, dtype=np.float64).reshape(-1)
    if inc.shape != sc.shape:
        raise ValueError(f"included and scores must have the same length; got {inc.size} and {sc.size}")
    if sc.size < 2:
        raise ValueError(f"the f-DP one-run audit needs at least 2 canaries; got {sc.size}")
    if np.isnan(sc).any():
        raise ValueError("scores must not contain NaN")
    m = sc.size
    if guesses is None:
        k = _choose_guesses(family, m, alpha)
    else:
        k = check_positive_int("guesses", guesses)
        if k > m:
            raise ValueError(f"guesses must be in [1, {m}] (the number of canaries); got {guesses}")
    correct, k = _guess_counts(inc, sc, k)
    s_star = family.largest_rejected(lambda curve: fdp_one_run_rejects(curve, m, k, correct, alpha))
    if analysis == "lp":
        s_star = _largest_lp_rejected(family, m, k, correct, alpha, s_star)
        p = _round_up(lp_tail_bound(family(1.0), m, k, correct))
    else:
        p = _p_value(family(1.0), m, k, correct)
    eps = _round_down(family.epsilon_lower(s_star, delta)) if s_star > 0 else 0.0
    details = {"canaries": int(m), "guesses": int(k), "correct": int(correct), "scale_lower": s_star,
               "analysis": analysis,
               "rejected": bool(p <= alpha), "family": "claimed event with noise scaled by 1/s",
               "eps_lower_assumes": "the release is the claimed mechanism with some noise scale"}
    return Estimate("fdp-one-run", max(eps, 0.0), confidence, p, details)
