"""The ceiling of every analysis of the one-run count (:func:`audits.fdp_one_run_adversary.count_audit_ceiling`).

The adversary behind it, :class:`~audits.fdp_one_run_adversary.CountRelease`, is checked from outside its own
formulas: its privacy profile against a brute-force enumeration of its outputs, its tail bound against
simulated runs scored by the auditor's own guessing rule. Then it is used as an attack on analyses: the
valid ones (the LP, the recursion) must never reject a claim the release is within, and an analysis known
to be invalid for one run (a binomial at the claim's own precision, as if the canaries were independent)
must be caught.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import dpcore
from audits.fdp_claim import CurveFamily
from audits.fdp_one_run import _choose_guesses, _predicted_correct, fdp_one_run_estimate
from audits.fdp_one_run_adversary import (
    CountRelease,
    count_audit_ceiling,
    count_test_power_bound,
    gaussian_profile,
    strongest_count_release,
)
from audits.fdp_one_run_lp import lp_least_rejected_count
from audits.statistics import _guess_counts

DELTA = 1e-5
SIGMA = dpcore.analytic_gaussian_sigma(2.0, DELTA, 1.0)
CANARIES = 2000


def _enumerated_profile(release: CountRelease, others: tuple, gammas: np.ndarray) -> np.ndarray:
    """H_γ(output | canary 0 in, others' bits ‖ output | canary 0 out, others' bits) by listing every output:
    the marked set and the side ("in" = True) of each marked canary; with the bits fixed, the right marked
    canaries are those on their bit's side, so P(output | bits) = p_{c′} / (C(m, k) · C(k, c′))."""
    m, k, p = release.canaries, release.marked, np.asarray(release.counts)
    laws = []
    for first in (True, False):
        bits = (first,) + others
        law = []
        for marked in itertools.combinations(range(m), k):
            for sides in itertools.product((True, False), repeat=k):
                right = sum(sides[i] == bits[j] for i, j in enumerate(marked))
                law.append(p[right] / (math.comb(m, k) * math.comb(k, right)))
        laws.append(np.array(law))
    assert all(abs(law.sum() - 1.0) < 1e-12 for law in laws)
    return np.array([np.maximum(laws[0] - g * laws[1], 0.0).sum() for g in gammas])


def _sign_guess_count(included: np.ndarray, scores: np.ndarray, k: int) -> int:
    """Right guesses of the auditor that guesses the sign of its k largest |scores| (a score > 0 means "in")."""
    top = np.argsort(np.abs(scores))[-k:]
    return int(np.sum((scores[top] > 0) == included[top]))


@pytest.mark.parametrize("seed", [0, 1])
def test_count_release_profile_matches_a_brute_force_enumeration(seed):
    rng = np.random.default_rng(seed)
    counts = rng.dirichlet(np.full(4, 0.7))
    release = CountRelease(5, 3, tuple(counts))
    log_gamma = np.array([0.0, 0.3, 1.0, 2.0])
    formula = release.profile(log_gamma)
    for others in [(True, True, False, False), (False, False, False, True)]:  # the same for any other bits
        direct = _enumerated_profile(release, others, np.exp(log_gamma))
        np.testing.assert_allclose(formula, direct, rtol=1e-12, atol=1e-15)
    # the test can fail: the "wrong − γ right" part of the formula matters for these counts
    right, wrong = release._pairs()
    forward_only = np.maximum(right - np.exp(log_gamma)[:, None] * wrong, 0.0).sum(axis=1) / release.canaries
    assert np.max(np.abs(forward_only - direct)) > 1e-3


def test_count_release_tail_matches_simulated_runs_of_the_auditor():
    """The tail bound against 3000 simulated runs guessed by audits.statistics._guess_counts (k = 30 of 300):
    within 4 standard errors (false-alarm rate below 1e-4 per comparison)."""
    k, m = 30, 300
    counts = 0.6 * stats.binom.pmf(np.arange(k + 1), k, 0.8) + 0.4 * stats.binom.pmf(np.arange(k + 1), k, 0.6)
    release = CountRelease(m, k, tuple(counts / math.fsum(counts)))
    rng = np.random.default_rng(2025)
    runs = [release.sample(rng) for _ in range(3000)]
    seen = np.array([_guess_counts(included, scores, k)[0] for included, scores in runs])
    signs = np.array([_sign_guess_count(included, scores, k) for included, scores in runs])
    for c in (18, 22, 25):
        for counts_seen, rule in ((seen, "halves"), (signs, "any")):
            expected = release.tail(c, rule)
            se = math.sqrt(expected * (1.0 - expected) / counts_seen.size)
            assert abs(np.mean(counts_seen >= c) - expected) <= 4.0 * se + 1e-3, (rule, c, expected)
    # a reserve: 6 more marked canaries fill a short half instead of coin flips (the auditor still guesses on 30)
    reserve = CountRelease(m, k + 6, tuple(stats.binom.pmf(np.arange(k + 7), k + 6, 0.75)))
    seen_reserve = np.array([_guess_counts(*reserve.sample(rng), k)[0] for _ in range(3000)])
    for c in (22, 25):
        expected = reserve.tail(c, "halves", k)
        se = math.sqrt(expected * (1.0 - expected) / seen_reserve.size)
        assert abs(np.mean(seen_reserve >= c) - expected) <= 4.0 * se + 1e-3, ("reserve", c, expected)
    # the auditor's forced half/half split costs the release right guesses: the plain tail of C′ is higher
    plain = float(counts[22:].sum() / counts.sum())
    assert release.tail(22) < plain - 4.0 * math.sqrt(plain * (1 - plain) / seen.size)


def test_strongest_count_release_is_within_its_claim_and_tight():
    mu = 0.9 / SIGMA
    k = 200
    release = strongest_count_release(mu, CANARIES, k, 175)
    assert release.within(mu)
    assert not release.within(0.97 * mu)  # tight: a slightly stronger claim refuses it
    log_gamma = np.linspace(0.0, 6.0, 601)
    assert np.all(release.profile(log_gamma) <= gaussian_profile(mu, log_gamma))
    assert release.tail(175, guesses=k) > 0.0
    strongest_any = strongest_count_release(mu, CANARIES, k, 175, guessing="any")
    assert strongest_any.tail(175, "any") > release.tail(175, guesses=k)
    with pytest.raises(ValueError, match="guessing"):
        release.tail(175, "bogus")


def test_valid_analyses_stay_below_the_count_ceiling_and_an_invalid_one_is_caught():
    """At a claim E(s): the LP (the tightest valid count analysis we have) rejects from c* right guesses, so no
    release within the claim may reach c* w.p. ≥ 5 % — the strongest count release must not. The binomial at
    the claim's own precision (valid only for independent canaries) rejects from fewer, and the release
    reaches that count w.p. above 5 %: one run's canaries can be correlated."""
    family = CurveFamily(dpcore.GaussianEvent(SIGMA))
    k = _choose_guesses(family, CANARIES, 0.05)
    s = 0.85
    c_lp = lp_least_rejected_count(family(s), CANARIES, k, 0.05)
    assert c_lp <= k
    valid = strongest_count_release(s / SIGMA, CANARIES, k, c_lp)
    assert valid.tail(c_lp, guesses=k) < 0.05
    precision = _predicted_correct(family(s), k / CANARIES, k) / k
    c_independent = int(stats.binom.isf(0.05, k, precision)) + 1  # least c with P[Bin ≥ c] < 0.05
    assert stats.binom.sf(c_independent - 1, k, precision) < 0.05
    assert c_independent < c_lp
    attack = strongest_count_release(s / SIGMA, CANARIES, k, c_independent)
    assert attack.tail(c_independent, guesses=k) > 0.05


@pytest.mark.slow
def test_count_ceiling_bounds_the_lp_estimate():
    """ε_lb of the LP analysis on a Gaussian run ≤ the ceiling's ε: the LP rejects from c* right guesses (an upper
    set), so it cannot reject μ_c, whose release reaches c w.p. ≥ 5 %; its ε_lb is the certified lower ε of a claim it
    rejected, below μ_c's exact ε, below the analytic ε the ceiling reports (rounded up)."""
    family = CurveFamily(dpcore.GaussianEvent(SIGMA))
    k = _choose_guesses(family, CANARIES, 0.05)
    rng = np.random.default_rng(7)
    included = rng.random(CANARIES) < 0.5
    scores = rng.normal(included.astype(float), SIGMA)
    lp = fdp_one_run_estimate(included, scores, family, DELTA, guesses=k, analysis="lp")
    mu_c, release = count_audit_ceiling(1.0 / SIGMA, CANARIES, k, lp.details["correct"], tolerance=1e-2)
    assert release.within(mu_c) and release.tail(lp.details["correct"], guesses=k) >= 0.05
    ceiling = dpcore.analytic_gaussian_epsilon(1.0 / mu_c, DELTA)
    assert lp.eps_lower <= ceiling, (lp.eps_lower, ceiling)  # no slack: both ends are bracketed the safe way


@pytest.mark.parametrize("kwargs, match", [
    (dict(canaries=10, marked=0, counts=(1.0,)), "marked"),
    (dict(canaries=10, marked=2, counts=(0.5, 0.5)), "marked \\+ 1"),
    (dict(canaries=10, marked=2, counts=(0.5, 0.6, -0.1)), "non-negative"),
    (dict(canaries=10, marked=2, counts=(0.5, 0.5, 0.5)), "sum to 1"),
])
def test_count_release_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CountRelease(**kwargs)


def test_count_ceiling_of_an_extreme_count_lies_above_the_mechanisms_own_claim():
    """Every one of 40 guesses right: valid analyses may reject even the mechanism's own claim (a false alarm
    they are allowed 5 % of the time), so the search goes above μ, and the release found is within μ_c."""
    mu = 1.0 / SIGMA
    mu_c, release = count_audit_ceiling(mu, CANARIES, 40, 40, tolerance=2e-2, guessing="any")
    assert mu_c > mu
    assert release.within(mu_c) and release.tail(40, "any") >= 0.05
    assert strongest_count_release(mu, CANARIES, 40, 40, "any").tail(40, "any") < 0.05


@pytest.mark.slow
def test_count_test_power_bound_is_the_level_on_the_release_and_above_a_valid_tests_power():
    """Neyman–Pearson against the release: on counts drawn from the release itself no test beats its level (power
    ≈ α, 4 standard errors, plus 0.01 for the upward bias of fitting the test to the sample); on the Gaussian
    mechanism's counts the bound is at least the power of the LP's
    upper-set test at the same claim (a valid test, so its power cannot exceed the bound — a planted check: a
    bound below it would mean a wrong null distribution)."""
    family = CurveFamily(dpcore.GaussianEvent(SIGMA))
    k, s = 200, 0.85
    c_lp = lp_least_rejected_count(family(s), CANARIES, k, 0.05)
    release = strongest_count_release(s / SIGMA, CANARIES, k, c_lp - 8)
    rng = np.random.default_rng(11)
    runs = 1000
    null = -np.diff([release.tail(c, guesses=k) for c in range(k + 2)])  # the count's law, checked by simulation above
    own = rng.choice(k + 1, size=20 * runs, p=np.maximum(null, 0.0) / np.maximum(null, 0.0).sum())
    own_power = count_test_power_bound(release, own, 0.05, guesses=k)
    assert 0.05 - 0.01 <= own_power <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / own.size) + 0.01  # + overfitting
    gaussian = []
    for _ in range(runs):
        included = rng.random(CANARIES) < 0.5
        gaussian.append(_guess_counts(included, rng.normal(included.astype(float), SIGMA), k)[0])
    gaussian = np.array(gaussian)
    bound = count_test_power_bound(release, gaussian, 0.05, guesses=k)
    assert np.mean(gaussian >= c_lp) <= bound < 1.0
    with pytest.raises(ValueError, match="observed"):
        count_test_power_bound(release, np.array([k + 1]), guesses=k)
