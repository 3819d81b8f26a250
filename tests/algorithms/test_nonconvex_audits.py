"""Audits of the non-convex solvers: canary targets for DP-SRM and RRPSGD, and DP-SRM's §6.1
sensitivity check with the planted bug (gradient-difference clip removed)."""

import math

import numpy as np
import pytest

from audits.dp_srm_check import dp_srm_sensitivity_check
from audits.runner import run_audit
from audits.solver_targets import SOLVER_NAMES, solver_target


def test_dp_srm_query_respects_the_6_1_bound():
    report = dp_srm_sensitivity_check()
    assert report.verdict == "not falsified"
    assert report.declared == pytest.approx(2 * (0.01 * 1.0 + 0.99 * 0.01))
    assert report.ratio <= 1.0 + 1e-9


def test_planted_unclipped_gradient_difference_is_flagged():
    """Without the C₂ clip a Dirac record's gradient difference (≈ 0.23) exceeds Δ = 0.0398 by ~6×."""
    report = dp_srm_sensitivity_check("unclipped-difference")
    assert report.verdict == "violated"
    assert report.ratio > 3.0


def test_bad_planted_name():
    with pytest.raises(ValueError, match="planted"):
        dp_srm_sensitivity_check("no-noise")


@pytest.mark.parametrize("name", ["dp_srm", "rrpsgd"])
def test_targets_pass_at_their_claim_and_separate_without_noise(name):
    assert name in SOLVER_NAMES  # hence part of `dpcore audit all`
    target = solver_target(name, 1.0, 1e-5)
    assert target.relation == "replace_one" and target.claimed_epsilon <= 1.0 + 1e-9
    assert run_audit(target, 150, estimator="clopper-pearson", seed=0).verdict != "violated"
    off = solver_target(name, math.inf, 1e-5)  # noise off: the canary projection separates D from D′
    rng = np.random.default_rng(0)
    assert off.sample(0, 50, rng).max() < 0.0 < off.sample(1, 50, rng).min()
