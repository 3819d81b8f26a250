"""Planted bugs: the broken releases do what they claim to break, and every one is caught.

Statistical tests: every audit below uses a fixed seed. "Caught" means verdict "violated" at 95%
confidence; for a correct implementation that verdict has probability ≤ 5% (the audit's stated
false-alarm rate), and the correct twins below pass with their fixed seeds.
"""

import math
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorithms.clipping import clipped_sum_sensitivity
from audits import FunctionTarget, run_audit
from audits import planted_bugs as pb
from audits import targets as tg
from mechanisms import Gaussian, Laplace


# ------------------------------------------------------------------------------ the broken releases
def test_naive_float_laplace_support_recognises_its_own_outputs():
    rng = np.random.default_rng(0)
    y0 = pb.naive_float_laplace(0.0, 1.0, 20_000, rng)
    y1 = pb.naive_float_laplace(1.0, 1.0, 20_000, rng)
    assert pb.naive_float_laplace_support(y0, 0.0, 1.0).all()
    assert pb.naive_float_laplace_support(y1, 1.0, 1.0).all()
    # Mironov 2012: the supports differ — most outputs from 1 are impossible from 0
    assert pb.naive_float_laplace_support(y1, 0.0, 1.0).mean() < 0.6
    # and the sampler is a Laplace(1): mean |y − value| ≈ scale (sd of the mean ≈ 0.007)
    assert abs(np.mean(np.abs(y0)) - 1.0) < 0.04


@settings(max_examples=40, deadline=None)
@given(value=st.floats(-1e3, 1e3), scale=st.floats(1e-2, 1e2), seed=st.integers(0, 2**32 - 1))
def test_naive_float_laplace_support_is_complete(value, scale, seed):
    """Every output the naive sampler produces is recognised as reachable from its own value."""
    y = pb.naive_float_laplace(value, scale, 300, np.random.default_rng(seed))
    assert pb.naive_float_laplace_support(y, value, scale).all()


def test_half_noise_halves_the_scale():
    mech = Gaussian.calibrate(1.0, 1e-5, sensitivity=1.0)
    out = pb.half_noise(mech).randomize(np.zeros(40_000), np.random.default_rng(1))
    # sd estimate has relative error ≈ 0.35%; 5% margin
    assert np.std(out) == pytest.approx(mech.sigma / 2, rel=0.05)
    assert pb.half_noise(mech).privacy_event("replace_one") == mech.privacy_event("replace_one")
    with pytest.raises(ValueError, match="mechanism"):
        pb.half_noise("gaussian")


def test_reused_noise_makes_differences_noise_free():
    answers = np.array([[1.0, 0.0], [2.0, 5.0]])
    out = pb.reused_noise_release(answers, Gaussian(3.0), np.random.default_rng(2))
    assert np.allclose(out[:, 0] - out[:, 1], answers[:, 0] - answers[:, 1])
    assert not np.allclose(out, answers)


def test_double_release_draws_two_independent_noises():
    out = pb.double_release(np.zeros(20_000), Gaussian(2.0), np.random.default_rng(5))
    assert out.shape == (20_000, 2)
    # each column is N(0, 4); their correlation is ~N(0, 1/20000) (sd 0.007)
    assert np.std(out, axis=0) == pytest.approx([2.0, 2.0], rel=0.03)
    assert abs(np.corrcoef(out.T)[0, 1]) < 0.04


def test_clipping_and_sensitivity_bugs():
    records = np.array([[3.0, 4.0], [0.3, 0.0]])
    assert np.allclose(pb.unclipped_sum(records, 1.0), [3.3, 4.0])  # clipping skipped
    assert pb.add_remove_sensitivity(1.5, "replace_one") == 1.5
    assert clipped_sum_sensitivity(1.5, "replace_one") == 3.0  # what it should have been


def test_early_stopped_gd_stops_on_the_gradient_norm():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2)) / 2
    y = np.sign(X[:, 0] + 0.1)
    w_loose = pb.early_stopped_gd(X, y, alpha=1.0, tol=0.5)
    w_tight = pb.early_stopped_gd(X, y, alpha=1.0, tol=1e-8)
    assert not np.allclose(w_loose, w_tight)
    assert pb.exact_minimiser_sensitivity(1.0, 50, 0.5) == pytest.approx(0.08)


def test_catalogue():
    assert set(tg.PLANTED_BUGS) >= {"half-noise", "no-clipping", "reused-noise", "wrong-sampling-rate",
                                    "add-remove-sensitivity", "float-laplace", "early-stopped-output-perturbation",
                                    "double-spending"}
    for bug in pb.CATALOGUE.values():
        assert bug.kind in ("mechanism", "solver") and bug.trials >= 100
        assert bug.base in (tg.MECHANISM_NAMES if bug.kind == "mechanism" else tg.SOLVER_NAMES)


# ------------------------------------------------------------------------- caught within the budget
@pytest.mark.parametrize("name", list(pb.CATALOGUE))
def test_every_planted_bug_is_caught(name):
    bug = pb.CATALOGUE[name]
    build = tg.mechanism_target if bug.kind == "mechanism" else tg.solver_target
    target = build(bug.base, 1.0, 1e-5, planted=name)
    assert target.claimed_epsilon <= 1.0  # the buggy code claims the correct twin's ε
    result = run_audit(target, bug.trials, estimator=bug.estimator, seed=0)
    assert result.verdict == "violated", result
    assert result.p_value < 0.05


def test_half_noise_dp_gd_is_caught():
    """The solver variant: DP-GD at half its calibrated noise multiplier, claim kept."""
    bug = pb.CATALOGUE["half-noise"]
    target = tg.solver_target("dp_gd", 1.0, 1e-5, planted="half-noise")
    assert target.claimed_epsilon <= 1.0 and target.name == "dp_gd[half-noise]"
    result = run_audit(target, bug.solver_trials, estimator=bug.estimator, seed=0, batch_size=50)
    assert result.verdict == "violated", result


# ---------------------------------------------------------------- the correct twins, same attack
def _twin(sampler, family, relation="replace_one"):
    return FunctionTarget("twin", 1.0, 1e-5, sampler, relation, family)


def test_correct_twins_pass_the_same_attacks():
    """Fixing each bug makes the very same distinguisher pass (no cry-wolf in the attack itself)."""
    sigma2 = Gaussian.calibrate(1.0, 1e-5, sensitivity=math.sqrt(2.0)).sigma
    twins = [
        _twin(partial(tg._two_query_sampler, Gaussian(sigma2), False), "gaussian"),  # independent noise
        _twin(partial(tg._clipped_sum_sampler, Gaussian.calibrate(1.0, 1e-5, sensitivity=2.0), False), "gaussian"),
        _twin(partial(tg._additive_sampler, Laplace.calibrate(1.0, sensitivity=2.0), 1, -1.0, 2.0, "clipped", 1.0,
                      False), "laplace"),  # Δ = 2C for replace-one
        # the sampling rate that is accounted is the one used
        _twin(partial(tg._subsampled_sum_sampler, tg.mechanism_target("gaussian", 1.0, 1e-5,
                                                                      planted="wrong-sampling-rate").sampler.args[0],
                      tg._ACCOUNTED_RATE), "other", "add_remove"),
    ]
    for target in twins:
        result = run_audit(target, 5_000, estimator="clopper-pearson", seed=0)
        assert not result.violated, result
