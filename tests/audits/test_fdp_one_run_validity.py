"""Validity of the f-DP one-run audits against a correlated release exactly at its claim
(:mod:`audits.fdp_one_run_adversary`), and the ceiling of any valid one-run audit.

The release's membership in its claim is cross-checked by a direct computation of its trade-off
curve (the module checks privacy profiles). The audits must not reject such a release, exactly at
its claim, more often than their level; the same harness must reject a release outside its claim
(half the claim's noise) in most runs.
"""

import math

import numpy as np
import pytest
from scipy import special

import dpcore
from audits.fdp_claim import CurveFamily
from audits.fdp_one_run import _choose_guesses, fdp_one_run_rejects
from audits.fdp_one_run_adversary import FlagRelease, any_audit_ceiling, strongest_release
from audits.fdp_one_run_lp import lp_least_rejected_count
from audits.statistics import _guess_counts

DELTA = 1e-5
SIGMA = dpcore.analytic_gaussian_sigma(2.0, DELTA, 1.0)  # the claim: ε = 2, i.e. μ = 1/σ
MU = 1.0 / SIGMA
CANARIES = 2000
RELEASES = [(0.1, 2.0), (0.2, 3.0)]  # (weight, clip L)


def _mixture_curve(release: FlagRelease, a: np.ndarray) -> np.ndarray:
    """TPR of the flag-revealed mixture at FPR a = w·a₁ + (1 − w)·a₂: a + max over feasible a₁ of
    w·(g(a₁) − a₁), g the revealing channel's curve; g − id is concave, so the maximum is at its peak
    clipped to the feasible interval [(a − (1 − w))/w, a/w]."""
    w = release.weight
    grid = np.linspace(0.0, 1.0, 200_001)
    peak = grid[np.argmax(release._clipped_curve(grid) - grid)]
    a1 = np.clip(peak, np.clip((a - (1.0 - w)) / w, 0.0, 1.0), np.clip(a / w, 0.0, 1.0))
    return a + w * (release._clipped_curve(a1) - a1)


def _claim_curve(a: np.ndarray, mu: float = MU) -> np.ndarray:
    return special.ndtr(special.ndtri(a) + mu)


@pytest.mark.parametrize("weight, clip", RELEASES)
def test_flag_release_is_within_the_claim_by_a_direct_computation_of_its_curve(weight, clip):
    release = strongest_release(MU, weight, clip)
    assert release.mu_reveal > MU  # its revealing runs leak more than the claim's own channel
    a = np.concatenate([np.geomspace(1e-6, 0.5, 60), 1.0 - np.geomspace(1e-6, 0.5, 60)])
    assert np.all(_mixture_curve(release, a) <= _claim_curve(a) + 1e-12)
    louder = FlagRelease(weight, release.mu_reveal * 1.05, clip)  # planted: 5 % more shift
    assert not louder.within(MU)
    assert np.any(_mixture_curve(louder, a) > _claim_curve(a))


@pytest.mark.parametrize("weight, clip", RELEASES + [(1.0, math.inf)])
def test_one_run_audits_hold_against_a_correlated_release_at_its_claim(weight, clip):
    """400 runs of a release audited at the estimator's k. At its claim (the strongest flag release of
    this weight and clip): the recursion and the LP reject at most 30 times (a valid level-5 % test:
    P[Bin(400, 0.05) > 30] ≈ 0.012; observed: 0). Planted bug, (1.0, inf): the claim's own channel
    with half its noise (μ_r = 2μ), outside the claim: the same harness rejects it in most runs."""
    family = CurveFamily(dpcore.GaussianEvent(SIGMA))
    k = _choose_guesses(family, CANARIES, 0.05)
    release = FlagRelease(1.0, 2.0 * MU, clip) if weight == 1.0 else strongest_release(MU, weight, clip)
    c_lp = lp_least_rejected_count(family(1.0), CANARIES, k, 0.05)
    rng = np.random.default_rng(25)
    runs, recursion, lp = 400, 0, 0
    for _ in range(runs):
        included, scores = release.sample(CANARIES, rng)
        c, _ = _guess_counts(included, scores, k)
        recursion += fdp_one_run_rejects(family(1.0), CANARIES, k, c, 0.05)
        lp += c >= c_lp
    if weight == 1.0:
        assert recursion > runs / 2 and lp >= recursion, (recursion, lp)
    else:
        assert recursion <= 30 and lp <= 30, (recursion, lp)


def test_any_audit_ceiling_at_two_times_ten_to_the_four_canaries():
    """ε = 2, m = 2·10⁴: the flag release (w = 0.11) of the mechanism clipped where m·Φ(−L) = 0.005 is
    within 0.935·μ (pinned), so no valid audit rejects that claim with probability above
    0.05/0.11 + m·(Φ(−L) + Φ(−L − μ)) < 0.47. Independent route: the release's curve, computed directly, lies below the
    0.935·μ curve; planted bug: 2 % below that claim, the direct curve exceeds it."""
    mu_s, p = any_audit_ceiling(MU, 20_000)
    assert mu_s / MU == pytest.approx(0.935, abs=0.005) and 0.05 / 0.11 + 0.005 < p < 0.47
    release = FlagRelease(0.11, MU, -float(special.ndtri(0.005 / 20_000)))
    a = np.concatenate([np.geomspace(1e-10, 0.5, 90), 1.0 - np.geomspace(1e-10, 0.5, 90)])
    assert np.all(_mixture_curve(release, a) <= _claim_curve(a, mu_s) + 1e-12)
    assert np.any(_mixture_curve(release, a) > _claim_curve(a, 0.98 * mu_s))
