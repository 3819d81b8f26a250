"""Unit tests of the count → ε statistics (audits.statistics)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from audits.statistics import (
    clopper_pearson_estimate,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_from_error_rates,
    error_counts,
    estimate,
    gdp_delta,
    gdp_epsilon,
    gdp_estimate,
    gdp_mu_from_error_rates,
    one_run_epsilon,
    one_run_estimate,
    one_run_p_value,
    roc_curve,
)

SIGMA = 3.73063163481594  # analytic Gaussian σ for (1, 1e-5), Δ = 1


def test_clopper_pearson_closed_forms():
    # k = 0: P[Bin(n, p) = 0] = (1 - p)^n = α  ⇒  upper = 1 - α^(1/n); k = n: lower = α^(1/n).
    n, a = 50, 0.025
    assert clopper_pearson_upper(0, n, a) == pytest.approx(1 - a ** (1 / n), rel=1e-12)
    assert clopper_pearson_lower(n, n, a) == pytest.approx(a ** (1 / n), rel=1e-12)
    assert clopper_pearson_upper(n, n, a) == 1.0
    assert clopper_pearson_lower(0, n, a) == 0.0


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.floats(1e-6, 0.4))
@settings(max_examples=60, deadline=None)
def test_clopper_pearson_brackets_and_tail_identity(kn, a):
    k, n = kn
    up, lo = float(clopper_pearson_upper(k, n, a)), float(clopper_pearson_lower(k, n, a))
    assert lo <= k / n <= up
    if k < n:  # definition: P[Bin(n, up) ≤ k] = α
        assert stats.binom.cdf(k, n, up) == pytest.approx(a, rel=1e-6, abs=1e-12)
    # smaller α ⇒ wider interval
    assert clopper_pearson_upper(k, n, a / 10) >= up


def test_clopper_pearson_coverage():
    # One-sided 97.5% upper bound: P[p > upper] ≤ 2.5%. 20 000 draws; the miss rate exceeds 3.2%
    # with probability < 1e-5 if the bound is right (binomial tail), so this can only fail on a bug.
    rng = np.random.default_rng(11)
    p, n = 0.07, 60
    k = rng.binomial(n, p, size=20_000)
    miss = np.mean(clopper_pearson_upper(k, n, 0.025) < p)
    assert miss <= 0.032


def test_counts_rejects_bad_input():
    with pytest.raises(ValueError, match="counts"):
        clopper_pearson_upper(5, 3, 0.05)
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson_upper(1, 3, 1.5)


@given(st.lists(st.floats(-5, 5), min_size=1, max_size=30), st.lists(st.floats(-5, 5), min_size=1, max_size=30),
       st.lists(st.floats(-6, 6), min_size=1, max_size=10))
@settings(max_examples=60, deadline=None)
def test_error_counts_match_brute_force(s0, s1, t):
    fp, fn = error_counts(np.array(s0), np.array(s1), np.array(t))
    for j, tj in enumerate(t):
        assert fp[j] == sum(x >= tj for x in s0)
        assert fn[j] == sum(x < tj for x in s1)


def test_epsilon_from_error_rates():
    assert epsilon_from_error_rates(0.01, 0.5, 0.0) == pytest.approx(math.log(50))
    assert epsilon_from_error_rates(0.01, 1.0, 0.0) == -np.inf


def test_gdp_curve_is_the_analytic_gaussian():
    # The analytic Gaussian mechanism (Balle & Wang 2018) with σ for (1, 1e-5) is exactly 1/σ-GDP:
    # the conversion must give back ε = 1 (from below: σ is the least σ rounded up).
    mu = 1 / SIGMA
    eps = gdp_epsilon(mu, 1e-5)
    assert 1 - 1e-6 < eps <= 1.0
    assert gdp_delta(eps, mu) >= 1e-5
    assert gdp_epsilon(0.0, 1e-5) == 0.0
    assert gdp_mu_from_error_rates(0.5, 0.5) == 0.0
    # symmetric in the two error orders
    assert gdp_mu_from_error_rates(0.1, 0.3) == pytest.approx(gdp_mu_from_error_rates(0.3, 0.1))


@given(st.floats(0.05, 5), st.floats(1e-9, 0.1))
@settings(max_examples=40, deadline=None)
def test_gdp_epsilon_inverts_delta(mu, delta):
    eps = gdp_epsilon(mu, delta)
    if eps > 0:
        assert gdp_delta(eps, mu) >= delta  # lower end of the bracket: never above the root
        assert gdp_delta(eps * (1 + 1e-9) + 1e-12, mu) <= delta * (1 + 1e-6)


def test_one_run_ceilings_from_the_paper():
    # Steinke et al. 2023 (and the notes): with all r guesses right, 95% confidence, δ = 0 gives
    # ε_lb = ln(q/(1-q)) with q^r = 0.05: 3.49 for r = 100, 5.81 for r = 1000.
    for r, expected in ((100, 3.49), (1000, 5.81)):
        q = 0.05 ** (1 / r)
        assert one_run_epsilon(r, r, r, 0.0, 0.95) == pytest.approx(math.log(q / (1 - q)), abs=1e-6)
        assert round(math.log(q / (1 - q)), 2) == expected


def test_one_run_p_value():
    # δ = 0 reduces to the binomial tail; the δ term only adds; monotone in ε.
    assert one_run_p_value(60, 100, 1000, 0.5, 0.0) == pytest.approx(stats.binom.sf(59, 100, 1 / (1 + math.exp(-0.5))))
    assert one_run_p_value(60, 100, 1000, 0.5, 1e-3) > one_run_p_value(60, 100, 1000, 0.5, 0.0)
    ps = [one_run_p_value(70, 100, 1000, e, 1e-5) for e in (0.0, 0.5, 1.0, 2.0)]
    assert ps == sorted(ps)
    with pytest.raises(ValueError):
        one_run_p_value(5, 3, 10, 1.0, 0.0)


def _gaussian_pairs(n, shift, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(0, SIGMA, n), rng.normal(shift, SIGMA, n)


def test_estimators_on_a_strong_attack_and_p_value_consistency():
    # σ-halved Gaussian (true ε ≈ 2.15): the claim ε = 1 is rejected and the p-value agrees.
    s0, s1 = _gaussian_pairs(100_000, 2.0, 3)
    for est in (clopper_pearson_estimate(s0, s1, 1e-5, 0.95, 1.0), gdp_estimate(s0, s1, 1e-5, 0.95, 1.0)):
        assert est.eps_lower > 1.0
        assert est.p_value < 0.05
        weak = est.eps_lower * 0.999
        again = (clopper_pearson_estimate if est.estimator == "clopper-pearson" else gdp_estimate)(
            s0, s1, 1e-5, 0.95, weak)
        assert again.p_value < 0.05  # ε_lb(0.05) > weak ⇒ p < 0.05
        strong = (clopper_pearson_estimate if est.estimator == "clopper-pearson" else gdp_estimate)(
            s0, s1, 1e-5, 0.95, est.eps_lower * 1.01 + 1e-9)
        assert strong.p_value >= 0.05 * (1 - 1e-6)  # ε_lb(0.05) < claim ⇒ p ≥ 0.05


def test_no_signal_gives_zero_and_pass():
    rng = np.random.default_rng(5)
    s = rng.normal(size=(2, 4000))
    for name in ("clopper-pearson", "gdp"):
        est = estimate(name, (s[0], s[1]), delta=1e-5, claimed_epsilon=1.0, noise_family="gaussian")
        assert est.eps_lower < 0.3
        assert est.p_value == 1.0 or est.p_value > 0.05


def test_one_run_estimate_detects_leak_and_not_noise():
    rng = np.random.default_rng(8)
    inc = rng.random(4000) < 0.5
    leak = one_run_estimate(inc, inc + rng.normal(0, 0.01, 4000), 1e-5, 0.95, claimed_epsilon=1.0)
    assert leak.eps_lower > 4 and leak.p_value < 0.05
    noise = one_run_estimate(inc, rng.normal(size=4000), 1e-5, 0.95, claimed_epsilon=1.0)
    assert noise.eps_lower < 0.5 and noise.p_value > 0.05
    fixed = one_run_estimate(inc, inc * 1.0, 1e-5, guesses=100)
    assert fixed.details["guesses"] == 100 and fixed.details["correct"] == 100


def test_gdp_refused_for_non_gaussian_claims():
    s0, s1 = _gaussian_pairs(100, 1.0, 0)
    for family in ("laplace", "pure", "other"):
        with pytest.raises(ValueError, match="gaussian"):
            estimate("gdp", (s0, s1), delta=1e-5, noise_family=family)
    with pytest.raises(ValueError, match="estimator"):
        estimate("bayes", (s0, s1), delta=1e-5)


def test_bad_inputs_name_the_argument():
    s0, s1 = _gaussian_pairs(100, 1.0, 0)
    with pytest.raises(ValueError, match="delta"):
        clopper_pearson_estimate(s0, s1, 0.0)
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson_estimate(s0, s1, 1e-5, confidence=1.0)
    with pytest.raises(ValueError, match="scores0"):
        clopper_pearson_estimate(s0[:2], s1, 1e-5)
    with pytest.raises(ValueError, match="scores1"):
        gdp_estimate(s0, np.full(100, np.nan), 1e-5)
    with pytest.raises(ValueError, match="guesses"):
        one_run_estimate(s0 > 0, s1, 1e-5, guesses=1000)


def test_roc_curve_endpoints():
    fpr, tpr = roc_curve(np.array([0.0, 1.0]), np.array([2.0, 3.0]))
    assert fpr[0] == 0 and tpr[0] == 0 and fpr[-1] == 1 and tpr[-1] == 1
    assert np.all(np.diff(fpr) >= 0)


def test_p_value_with_overwhelming_evidence_is_the_nuisance_level():
    """A perfect attack: the Berger–Boos p-value is γ (the nuisance set's level) plus a tail that
    is 0 up to the float-rounding allowance, never 0 and never above α."""
    from audits.joint_errors import NUISANCE_SHARE

    s0 = np.zeros(5000)
    s1 = np.ones(5000)
    est = clopper_pearson_estimate(s0, s1, 1e-5, 0.95, claimed_epsilon=3.0)
    assert 0.05 * NUISANCE_SHARE <= est.p_value < 0.05 * NUISANCE_SHARE * (1 + 1e-6)
