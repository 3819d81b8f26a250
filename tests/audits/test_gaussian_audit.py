"""End-to-end audits of textbook mechanisms: tightness, validity and power (issue 5, "Must hold").

Gaussian mechanism at (ε, δ) = (1, 1e-5), Δ = 1, analytic σ = 3.73063163481594: D → N(0, σ²),
D′ → N(1, σ²), the output is the distinguisher. Its true ε at δ = 1e-5 is 1 (the analytic Gaussian
is exactly 1/σ-GDP), so every ε_lb above 1 is an error of the audit.
"""

import numpy as np
import pytest
from scipy import stats

from audits import estimate, run_audit
from audits.target import shift_target

SIGMA_1_1E5 = 3.73063163481594  # analytic Gaussian σ for (1, 1e-5), Δ = 1 (issue 5)


def gaussian_target(sigma=SIGMA_1_1E5):
    return shift_target("gaussian", 1.0, 1e-5, noise="gaussian", scale=sigma)


def laplace_target():
    return shift_target("laplace", 1.0, 1e-5, noise="laplace", scale=1.0)


def no_noise_target():
    return shift_target("no-noise", 1.0, 1e-5, noise="none")


@pytest.mark.slow
def test_gaussian_eps_lb_is_tight_on_every_seed():
    # Issue 11.4: at 10⁵ trials per side, GDP ε_lb ≥ 0.9 and the (ε, δ) estimator ≥ 0.5 on EACH
    # of seeds 0–9, not just in the median. Measured 0.914–1.022 and 0.518–0.701 (before the
    # joint test: 0.868–0.969 and 0.474–0.560 on the same draws); held-out seeds 20–29 gave
    # 0.910–1.001 and 0.518–0.659. Both estimators see the same trials.
    gdp, cp = [], []
    for seed in range(10):
        r = run_audit(gaussian_target(), 10**5, estimator="gdp", seed=seed)
        gdp.append(r.eps_lower)
        cp.append(estimate("clopper-pearson", r.samples, delta=1e-5, claimed_epsilon=1.0).eps_lower)
    assert min(gdp) >= 0.9, gdp
    assert min(cp) >= 0.5, cp
    assert max(cp) <= 1.0  # the (ε, δ) region of the true ε is never rejected here (validity below)


@pytest.mark.slow
@pytest.mark.parametrize("estimator", ["gdp", "clopper-pearson"])
def test_gaussian_eps_lb_never_exceeds_true_eps_beyond_confidence(estimator):
    # 40 independent audits at 10⁴ trials, 95% confidence: if the bound is valid, the number of
    # audits with ε_lb > 1 is dominated by Bin(40, 0.05). Reject validity when that count has
    # binomial tail probability < 1e-3 (false-alarm rate of this test ≤ 1e-3). Measured: 0 of 40
    # (and 0–0.5% over 400 repeats at 300, 10³ and 10⁴ trials).
    results = [run_audit(gaussian_target(), 10**4, estimator=estimator, seed=1000 + s) for s in range(40)]
    exceed = sum(r.eps_lower > 1.0 for r in results)
    assert stats.binom.sf(exceed - 1, 40, 0.05) >= 1e-3
    assert sum(r.verdict == "violated" for r in results) == exceed


@pytest.mark.slow
def test_one_run_is_valid_and_sees_something():
    # Steinke et al. 2023: 20 one-run audits with 10⁴ canaries; same binomial validity test.
    results = [run_audit(gaussian_target(), 10**4, estimator="one-run", seed=s) for s in range(20)]
    eps = np.array([r.eps_lower for r in results])
    assert stats.binom.sf(np.sum(eps > 1.0) - 1, 20, 0.05) >= 1e-3
    assert np.median(eps) > 0.2  # measured 0.36


def test_half_noise_gaussian_is_flagged_within_1e4_trials_with_gdp():
    # σ halved: true ε ≈ 2.15 against a claim of 1. Flagged at every one of 5 seeds (measured
    # ε_lb 1.64–1.99 over 9 seeds; the notes' power table gives 100% at 10⁴ for GDP).
    for seed in range(5):
        r = run_audit(gaussian_target(sigma=SIGMA_1_1E5 / 2), 10**4, estimator="gdp", seed=seed)
        assert r.verdict == "violated" and r.violated
        assert r.p_value < 0.05
        assert 1.0 < r.eps_lower < 2.15


def test_correct_laplace_passes_and_is_audited_tightly():
    # Laplace with b = 1/ε (ε = 1, pure DP): CP gets close to the claim (measured 0.86–0.95 at
    # 10⁴) and never rejects it.
    for seed in range(3):
        r = run_audit(laplace_target(), 10**4, estimator="clopper-pearson", seed=seed)
        assert r.verdict == "pass"
        assert 0.7 < r.eps_lower <= 1.0
        assert r.p_value > 0.05
    # One-run at 4000 canaries: the most confident guesses of the Laplace mechanism are right with
    # probability exactly e/(1 + e), the q of the one-run bound, so each audit is a near-boundary
    # 95% test: false alarms ≤ 5% each (measured 3 of 20 seeds). Binomial check on 10 seeds: 4 or
    # more false alarms has probability < 1e-3 if the estimator is valid.
    alarms = sum(run_audit(laplace_target(), 4000, estimator="one-run", seed=s).violated for s in range(10))
    assert stats.binom.sf(alarms - 1, 10, 0.05) >= 1e-3


def test_gdp_estimator_refuses_a_laplace_claim():
    with pytest.raises(ValueError, match="gaussian"):
        run_audit(laplace_target(), 1000, estimator="gdp")


@pytest.mark.parametrize("estimator,floor", [("clopper-pearson", 6.5), ("one-run", 6.0)])
def test_no_noise_target_reports_a_large_eps_lb(estimator, floor):
    # A query released without noise: the attack is perfect; CP is capped near ln(5000/3.7) = 7.2.
    r = run_audit(no_noise_target(), 10**4, estimator=estimator)
    assert r.eps_lower > floor
    assert r.verdict == "violated"
