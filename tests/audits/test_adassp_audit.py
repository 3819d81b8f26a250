"""AdaSSP's audit target (Wang 2018 Alg. 2): the canary pair, the correct solver passes, the planted bug is caught.

False alarms: the "pass" and "violated" verdicts below are Clopper–Pearson tests at 95% confidence with fixed
seeds (a correct solver is flagged with probability ≤ 5% per seed; seed 0 is pinned, so the test is
deterministic). Measured at 400 trials per side on the row's canary (axes base, budget on Xᵀy): correct ε_lb = 0
for a claim of 1; planted ε_lb 2.06 / 2.58 / 2.05 on seeds 0–2 (1.34–1.60 with the earlier isolated-column base). The noise-off run (ε = ∞) and the quick-budget pass are covered
with every solver in tests/audits/test_targets.py.
"""

import math

import numpy as np
import pytest

from algorithms import sufficient_statistics as ss
from audits import planted_bugs as pb
from audits import targets as tg
from audits.library_audit import SOLVER_TRIALS
from audits.runner import run_audit
from audits.solver_targets import COMMON_SETTINGS, SOLVER_SETTINGS, canary_datasets

BUG = "adassp-unit-target-bound"


def _statistics(X, y):
    X = np.asarray(X, dtype=np.float64)
    XX = X.T @ X
    return float(np.linalg.eigvalsh(XX)[0]), XX, X.T @ np.asarray(y, dtype=np.float64)


def _row_datasets(name):
    """The (D, D′) the ``audit all`` row runs on (base records on the axes, audits.solver_targets.canary_datasets)."""
    return tg.solver_target(name, 1.0, 1e-5).sampler.datasets


def test_canary_pair_reaches_the_xty_sensitivity_and_leaves_the_other_releases_equal():
    (X, y), (Xp, yp) = _row_datasets("adassp")
    Y = SOLVER_SETTINGS["adassp"]["target_bound"]
    assert np.max(np.abs(y)) <= Y and np.max(np.abs(yp)) <= Y
    assert np.max(np.linalg.norm(Xp, axis=1)) <= COMMON_SETTINGS["data_norm_bound"]
    lam, XX, Xy = _statistics(X, y)
    lam_p, XX_p, Xy_p = _statistics(Xp, yp)
    _, _, delta_xty = ss.adassp_sensitivities(COMMON_SETTINGS["data_norm_bound"], Y, "replace_one")
    assert lam == pytest.approx(lam_p, abs=1e-12) and np.allclose(XX, XX_p, atol=1e-12)
    assert np.linalg.norm(Xy_p - Xy) == pytest.approx(delta_xty, rel=1e-12)  # 2X·Y: the worst case
    assert np.allclose(Xy_p - Xy, [0.0, 0.0, delta_xty])  # along the canary coordinate the score reads


def test_target_claim_is_the_solvers_own_epsilon():
    target = tg.solver_target("adassp", 1.0, 1e-5)
    _, (X, y) = target.sampler.datasets
    res = ss.adassp(X, y, epsilon=1.0, delta=1e-5, data_norm_bound=1.0, target_bound=10.0, rng=0,
                    budget_split=SOLVER_SETTINGS["adassp"]["budget_split"])
    assert target.claimed_epsilon == res.privacy.epsilon and target.claimed_epsilon <= 1.0
    # three un-sampled Gaussian releases: exactly μ-GDP, so the row may use the GDP estimator
    assert target.relation == "replace_one" and target.noise_family == "gaussian"
    assert "adassp" in tg.SOLVER_NAMES and SOLVER_TRIALS["adassp"][0] <= 400


def test_planted_run_shrinks_only_the_xty_noise_and_restores_the_solver():
    (X, y), _ = canary_datasets(100, 3, "replace_one")
    kwargs = dict(epsilon=1.0, delta=1e-5, data_norm_bound=1.0, target_bound=10.0, rng=0)
    good = ss.adassp(X, y, **kwargs)
    bad = pb.unit_target_bound_adassp_run(ss.adassp, X, y, **kwargs)
    s1, s2, s3 = good.details["sigmas"]
    b1, b2, b3 = bad.details["sigmas"]
    assert (b1, b2) == (s1, s2) and b3 == pytest.approx(s3 / 10.0, rel=1e-12)
    assert bad.privacy.epsilon == good.privacy.epsilon  # the claim is the correct twin's
    assert ss.adassp_sensitivities is pb.sufficient_statistics.adassp_sensitivities
    assert ss.adassp(X, y, **kwargs).details["sigmas"] == good.details["sigmas"]  # patch undone


@pytest.mark.slow
def test_correct_adassp_passes_and_planted_bug_is_caught_by_the_same_attack():
    """Same seed, same trials (400 per side, ≈ 8 s each), same distinguisher θ̂·e_d."""
    trials = pb.CATALOGUE[BUG].trials
    correct = run_audit(tg.solver_target("adassp", 1.0, 1e-5), trials, estimator="clopper-pearson", seed=0,
                        batch_size=50)
    assert not correct.violated and correct.eps_lower <= correct.claimed_epsilon
    target = tg.solver_target("adassp", 1.0, 1e-5, planted=BUG)
    assert target.name == f"adassp[{BUG}]" and target.claimed_epsilon == correct.claimed_epsilon
    planted = run_audit(target, trials, estimator=pb.CATALOGUE[BUG].estimator, seed=0, batch_size=50)
    assert planted.verdict == "violated" and planted.eps_lower > planted.claimed_epsilon, planted


def test_planted_bug_names():
    with pytest.raises(ValueError, match="planted"):
        tg.solver_target("dp_gd", 1.0, 1e-5, planted=BUG)
    with pytest.raises(ValueError, match="planted"):
        tg.solver_target("adassp", math.inf, 1e-5, planted=BUG)


def test_adassp_noise_multiplier_hook_reproduces_the_calibrated_run():
    """The audit reuses one calibration: ``noise_multiplier=z`` is the same release and reports the same ε."""
    (X, y), _ = canary_datasets(100, 3, "replace_one")
    kwargs = dict(delta=1e-5, data_norm_bound=1.0, target_bound=10.0, rng=3)
    calibrated = ss.adassp(X, y, epsilon=1.0, **kwargs)
    reused = ss.adassp(X, y, epsilon=None, noise_multiplier=calibrated.noise_multiplier, **kwargs)
    assert np.array_equal(reused.weights, calibrated.weights)
    assert reused.privacy.epsilon == calibrated.privacy.epsilon
    with pytest.raises(ValueError, match="noise_multiplier"):
        ss.adassp(X, y, epsilon=1.0, noise_multiplier=calibrated.noise_multiplier, **kwargs)
    with pytest.raises(ValueError, match="noise_multiplier"):
        ss.adassp(X, y, epsilon=None, noise_multiplier=-1.0, **kwargs)
    with pytest.raises(ValueError, match="epsilon"):
        ss.adassp(X, y, epsilon=None, **kwargs)


# ------------------------------------------------------------------ variant="joint" (target adassp_joint)
JOINT_BUG = "adassp-joint-unit-target-bound"


def _joint_matrix(X, y, k):
    Z = np.hstack([np.asarray(X, dtype=np.float64), k * np.asarray(y, dtype=np.float64)[:, None]])
    return Z.T @ Z


def test_canary_pair_reaches_the_joint_sensitivity():
    """The mirror pair moves G = ZᵀZ by the joint release's full replace-one sensitivity √2·(2X²)."""
    (X, y), (Xp, yp) = _row_datasets("adassp_joint")
    Y = SOLVER_SETTINGS["adassp_joint"]["target_bound"]
    k = COMMON_SETTINGS["data_norm_bound"] / Y
    diff = _joint_matrix(Xp, yp, k) - _joint_matrix(X, y, k)
    bound = math.sqrt(2.0) * COMMON_SETTINGS["data_norm_bound"]
    assert np.linalg.norm(diff) == pytest.approx(ss.joint_sensitivity(bound, "replace_one"), rel=1e-12)
    assert np.count_nonzero(np.abs(diff) > 1e-12) == 2  # only the two cross entries (canary coordinate, label)


def test_joint_target_claim_is_the_solvers_own_epsilon():
    target = tg.solver_target("adassp_joint", 1.0, 1e-5)
    _, (X, y) = target.sampler.datasets
    res = ss.adassp(X, y, epsilon=1.0, delta=1e-5, data_norm_bound=1.0, target_bound=10.0, variant="joint", rng=0)
    assert target.claimed_epsilon == res.privacy.epsilon and target.claimed_epsilon <= 1.0
    assert target.name == "adassp_joint" and target.relation == "replace_one"


def test_joint_planted_run_scales_labels_for_unit_bound_and_restores_the_solver():
    (X, y), _ = canary_datasets(100, 3, "replace_one")
    kwargs = dict(epsilon=1.0, delta=1e-5, data_norm_bound=1.0, target_bound=10.0, variant="joint", rng=0)
    good = ss.adassp(X, y, **kwargs)
    bad = pb.unit_target_bound_joint_adassp_run(ss.adassp, X, y, **kwargs)
    assert good.details["target_weight"] == pytest.approx(0.1) and bad.details["target_weight"] == pytest.approx(1.0)
    assert bad.details["sigma"] == good.details["sigma"]  # noise calibrated for the wrong rows
    assert bad.privacy.epsilon == good.privacy.epsilon  # the claim is the correct twin's
    assert ss.adassp(X, y, **kwargs).details["target_weight"] == good.details["target_weight"]  # patch undone


@pytest.mark.slow
def test_correct_joint_adassp_passes_and_planted_bug_is_caught_by_the_same_attack():
    """2 000 trials per side (≈ 30 s each on a shared 2-core machine). Measured on the row's canary (axes base,
    θ̂·e_d ≈ the noisy cross entry over n/d): correct ε_lb 0.18 / 0.25 / 0.27 on seeds 0–2 (claim 1); planted
    3.32 / 3.39 / 3.58 (1.19–1.83 with the earlier isolated-column base, whose θ̂·e_d divided by a noisy 1)."""
    trials = pb.CATALOGUE[JOINT_BUG].trials
    correct = run_audit(tg.solver_target("adassp_joint", 1.0, 1e-5), trials, estimator="clopper-pearson", seed=0,
                        batch_size=100)
    assert not correct.violated and correct.eps_lower <= correct.claimed_epsilon
    planted = run_audit(tg.solver_target("adassp_joint", 1.0, 1e-5, planted=JOINT_BUG), trials,
                        estimator="clopper-pearson", seed=0, batch_size=100)
    assert planted.verdict == "violated" and planted.eps_lower > planted.claimed_epsilon, planted
