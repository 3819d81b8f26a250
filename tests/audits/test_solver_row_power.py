"""The solver rows of ``dpcore audit all`` test their claim at full strength (issue 25, item 4).

What each test pins (and what it catches):

* the rows calibrated with ``accountant="auto"`` claim the exact ε of the event they run (the RDP calibration
  left DP-GD's 20 Gaussian steps at a true ε of 0.915 for a claim of 1 — a release no attack could show at 1);
* the output-perturbation row's canary moves the noise-free minimiser by the full sensitivity its noise is
  calibrated to (Zhang et al.'s GD path, calibrated to Lemma 3, would reach only ~40 % of it);
* the Gaussian-DP estimator is chosen from the event (compositions of un-sampled Gaussians only);
* planted bugs on the rows whose canary, settings or estimator changed are caught by the row's own estimator:
  half the noise (DP-SGD, AdaSSP), the add/remove sensitivity L/(nα) under replace-one (output perturbation).

False alarms: every audit below runs at 95 % confidence with a pinned seed (deterministic); a correct solver is
flagged with probability ≤ 5 % per seed, a planted one missed with the probability measured in the comment.
"""

import dataclasses
from unittest import mock

import numpy as np
import pytest

import dpcore
from algorithms import output_perturbation as op
from audits import targets as tg
from audits.runner import run_audit
from audits.solver_targets import _TIGHT, SOLVER_SETTINGS
from dpcore.gaussian_mechanism import analytic_gaussian_epsilon
from dpcore.risk import exact_gdp_mu

EPS, DELTA = 1.0, 1e-5


def _row(name):
    return tg.with_solver_event(tg.solver_target(name, EPS, DELTA))


def _planted(target, **changes):
    """``target`` running its solver with ``changes`` to the sampler (a bug), the claim kept."""
    return dataclasses.replace(target, sampler=dataclasses.replace(target.sampler, **changes))


@pytest.mark.parametrize("name", ["dp_gd", "dp_accmd"])
def test_gaussian_rows_claim_the_exact_epsilon_of_their_release(name):
    """The release is exactly μ-GDP; its exact ε (analytic Gaussian) must be the claim, not 8 % below it."""
    target = _row(name)
    mu = exact_gdp_mu(target.event)
    exact = analytic_gaussian_epsilon(1.0 / mu, DELTA, 1.0)
    assert SOLVER_SETTINGS[name]["accountant"] == _TIGHT["accountant"]
    assert target.claimed_epsilon == pytest.approx(exact, rel=1e-6)  # RDP-calibrated: exact = 0.915
    assert target.noise_family == "gaussian"


def test_subsampled_row_claims_the_pld_epsilon_and_is_not_labelled_gaussian():
    """DP-SGD's Poisson-subsampled steps: the claim is the PLD's (RDP would be 12 % above it), and the GDP
    estimator, invalid for a subsampled curve, is not chosen."""
    target = _row("dp_sgd")
    pld = dpcore.get_epsilon(target.event, DELTA, accountant="pld").epsilon
    assert target.claimed_epsilon == pytest.approx(pld, rel=2e-3)
    assert target.noise_family == "other" and exact_gdp_mu(target.event) is None
    assert dict(target.sampler.kwargs)["accountant"] == "rdp"  # the trials report with the cheap accountant


def test_output_perturbation_canary_moves_the_minimiser_by_the_claimed_sensitivity():
    target = tg.solver_target("output_perturbation_gd", EPS, DELTA)
    kwargs = dict(target.sampler.kwargs)
    (X, y), (Xp, yp) = target.sampler.datasets
    claimed = op.output_perturbation_gd(Xp, yp, rng=0, **kwargs).details
    assert claimed["method"] == "minimizer"
    off = dict(kwargs, epsilon=float("inf"))
    w0 = op.output_perturbation_gd(X, y, rng=0, **off).weights
    w1 = op.output_perturbation_gd(Xp, yp, rng=0, **off).weights
    assert w1[-1] - w0[-1] == pytest.approx(claimed["sensitivity"], rel=1e-6)  # 2L/(nα): the canary is tight
    assert np.allclose(w1[:-1], w0[:-1], atol=1e-9)


def test_output_perturbation_row_has_power_and_catches_the_add_remove_sensitivity():
    """3 000 runs per side (the quick budget, ~3 s): the correct row reads ε_lb ≥ 0.3 (0.60 at seed 0); with
    Δ = L/(nα) — the add/remove sensitivity — under replace-one (true ε ≈ 2.2) the same audit reads 1.6."""
    target = _row("output_perturbation_gd")
    correct = run_audit(target, 3_000, estimator="gdp", seed=0, batch_size=500)
    assert correct.verdict == "pass" and 0.3 <= correct.eps_lower <= correct.claimed_epsilon, correct
    half = op.minimizer_sensitivity

    def add_remove_sensitivity(*args):
        return 0.5 * half(*args)

    with mock.patch.object(op, "minimizer_sensitivity", add_remove_sensitivity):
        planted = run_audit(target, 3_000, estimator="gdp", seed=0, batch_size=500)
    assert planted.verdict == "violated" and planted.eps_lower > target.claimed_epsilon, planted


def test_dp_sgd_row_catches_half_noise_with_its_curve_test():
    target = _row("dp_sgd")
    planted = run_audit(_planted(target, bug="half-noise"), 1_000, estimator="curve", seed=0, batch_size=250)
    assert planted.verdict == "violated" and planted.eps_lower > target.claimed_epsilon, planted


def test_adassp_rows_catch_half_noise_with_the_gdp_estimator():
    """AdaSSP (budget on Xᵀy) and its joint variant: every release at half its noise multiplier."""
    for name in ("adassp", "adassp_joint"):
        target = _row(name)
        assert target.noise_family == "gaussian"
        planted = run_audit(_planted(target, bug="half-noise"), 1_500, estimator="gdp", seed=0, batch_size=250)
        assert planted.verdict == "violated" and planted.eps_lower > target.claimed_epsilon, (name, planted)


@pytest.mark.slow
def test_adassp_rows_have_power_at_a_third_of_the_claim():
    """The axes base and the budget on Xᵀy make θ̂·e_d a Gaussian score at ≈ the claim's μ (0.266–0.280 at 10⁴ runs
    per side): ε_lb ≥ 0.3 at 4 000 runs per side at the table's level 1 − 0.05/30 (false alarm ≤ 0.17 %; at 95 %
    this tight release is flagged in ~5 % of seeds, seed 0 at 3 000 among them). Before: 0.00 (AdaSSP, 2 000) and
    0.22 (joint, 8 000); at the table's budgets now 0.55–0.88 on seeds 0–2 (RESULTS.md)."""
    for name in ("adassp", "adassp_joint"):
        result = run_audit(_row(name), 4_000, estimator="gdp", confidence=1 - 0.05 / 30, seed=0, batch_size=500)
        assert result.verdict == "pass" and 0.3 <= result.eps_lower <= result.claimed_epsilon, (name, result)
