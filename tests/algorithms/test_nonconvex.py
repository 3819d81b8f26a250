"""The non-convex penalty λΣⱼwⱼ²/(1 + wⱼ²) (wang-jayaraman-evans-gu §7.1) across the first-order
solvers, DP-GD's Theorem 6.1 calibration (wang-ye-xu-2017, eq. (11)) and the estimator integration."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorithms import DPLogisticRegression
from algorithms.dp_gd import dp_gd, dp_gd_paper_sigma
from algorithms.dp_sgd import dp_sgd
from algorithms.losses import get_loss
from algorithms.objective import reference_minimizer
from algorithms.regularizers import Regularizer, nonconvex_gradient_kernel
from algorithms.synthetic import make_classification
from dpcore.events import GaussianEvent, SelfComposedEvent

X, Y, _ = make_classification(500, 5, seed=1)


def _grad_norm(w, lam):
    return float(np.linalg.norm(get_loss("logistic").gradient(w, X, Y) + Regularizer(nonconvex=lam).smooth_gradient(w)))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=6), st.floats(0.0, 3.0))
def test_penalty_gradient_matches_central_differences(w, lam):
    w = np.array(w)
    reg = Regularizer(nonconvex=lam)
    h = 1e-6
    fd = np.array([(reg.value(w + h * e) - reg.value(w - h * e)) / (2 * h) for e in np.eye(len(w))])
    np.testing.assert_allclose(reg.smooth_gradient(w), fd, atol=1e-6 * (1 + lam))


def test_penalty_value_gradient_and_constants():
    reg = Regularizer(nonconvex=2.0)
    w = np.array([1.0, 0.0, -3.0])
    assert reg.value(w) == pytest.approx(2.0 * (0.5 + 0.0 + 0.9))
    np.testing.assert_allclose(reg.smooth_gradient(w), 2.0 * 2 * w / (1 + w * w) ** 2)
    assert reg.smoothness == 4.0 and reg.name == "nonconvex"
    assert Regularizer(0.1, 0.0, 1.0).name == "nonconvex+l2"
    g = np.ones(3)
    nonconvex_gradient_kernel(2.0, w, 10.0, g)  # g += scale·∇
    np.testing.assert_allclose(g, 1.0 + 10.0 * 2.0 * 2 * w / (1 + w * w) ** 2)
    with pytest.raises(ValueError, match="nonconvex"):
        Regularizer(nonconvex=-1.0)


def test_reference_minimizer_reaches_a_stationary_point_of_the_nonconvex_objective():
    w = reference_minimizer(X, Y, get_loss("logistic"), Regularizer(nonconvex=0.05))
    assert _grad_norm(w, 0.05) < 1e-7


@pytest.mark.parametrize("output", ["last", "random"])
def test_dp_gd_noise_off_reaches_a_stationary_point(output):
    """§6.1 last iterate: ‖∇F‖ < 1e-8; §6.2 random iterate x_m is one of the iterates (so the last
    iterate of an m-step run)."""
    res = dp_gd(X, Y, epsilon=math.inf, alpha=0.05, penalty="nonconvex", steps=2000, data_norm_bound=1.0,
                output=output, rng=3, trace=False, tol=None)  # tol=None: the T-step schedule itself
    if output == "last":
        assert _grad_norm(res.weights, 0.05) < 1e-8
    else:
        m = res.details["output_index"]
        ref = dp_gd(X, Y, epsilon=math.inf, alpha=0.05, penalty="nonconvex", steps=max(m, 1), data_norm_bound=1.0,
                    trace=False, tol=None).weights if m else np.zeros(5)
        np.testing.assert_allclose(res.weights, ref, atol=1e-12)


def test_dp_sgd_noise_off_drives_the_gradient_norm_down():
    """b = 50 of 500, 100 epochs at η = 1/β: ‖∇F‖ < 0.01 (0.079 at 0)."""
    res = dp_sgd(X, Y, epsilon=math.inf, alpha=1e-3, penalty="nonconvex", batch_size=50, epochs=100,
                 sampling="without_replacement", data_norm_bound=1.0, rng=0, trace=False, tol=None)
    assert _grad_norm(np.zeros(5), 1e-3) > 0.07
    assert _grad_norm(res.weights, 1e-3) < 0.01


def test_penalty_changes_the_solution():
    a = dp_gd(X, Y, epsilon=math.inf, alpha=0.5, steps=500, data_norm_bound=1.0, trace=False).weights
    b = dp_gd(X, Y, epsilon=math.inf, alpha=0.5, penalty="nonconvex", steps=500, data_norm_bound=1.0,
              trace=False).weights
    assert np.max(np.abs(a - b)) > 1e-3


def test_dp_gd_paper_sigma_hand_computed():
    """eq. (11) with c = 16, G = 1, T = 100, n = 500, ε = 1, δ = 1e-5: σ² = 16·100·ln(1e5)/500² = 0.0736827."""
    s = dp_gd_paper_sigma(1.0, 1e-5, n=500, steps=100, lipschitz=1.0)
    assert s * s == pytest.approx(16 * 100 * math.log(1e5) / 500**2, rel=1e-14)
    assert s * s == pytest.approx(0.0736827, rel=1e-6)
    assert dp_gd_paper_sigma(1.0, 1e-5, n=500, steps=100, lipschitz=2.0, paper_constant=4.0) == pytest.approx(s)


def test_dp_gd_paper_calibration_reports_an_upper_bound_of_the_exact_epsilon(independent):
    res = dp_gd(X, Y, epsilon=1.0, steps=100, data_norm_bound=1.0, calibration="paper", rng=0, trace=False)
    sigma = dp_gd_paper_sigma(1.0, 1e-5, n=500, steps=100, lipschitz=1.0)
    z = 500 * sigma / 2.0  # replace-one sensitivity 2G of the sum; the sum's noise is nσ
    assert res.noise_multiplier == pytest.approx(z, rel=1e-14)
    assert res.event == SelfComposedEvent(GaussianEvent(res.noise_multiplier, "replace_one"), 100)
    exact = independent.gaussian_epsilon(math.sqrt(100) / z, 1e-5)  # 100 Gaussian releases, Balle–Wang in mpmath
    assert exact <= res.privacy.epsilon <= min(1.0, 1.1 * exact)
    assert res.sigma == pytest.approx(500 * sigma)


def test_dp_gd_paper_calibration_is_refused_when_the_constant_is_too_small():
    with pytest.raises(ValueError, match="paper_constant"):
        dp_gd(X, Y, epsilon=1.0, steps=100, data_norm_bound=1.0, calibration="paper", paper_constant=0.5)
    with pytest.raises(ValueError, match="paper_constant"):
        dp_gd(X, Y, epsilon=1.0, steps=100, data_norm_bound=1.0, calibration="paper", paper_constant=-1.0)
    with pytest.raises(ValueError, match="finite epsilon"):
        dp_gd(X, Y, epsilon=math.inf, steps=10, data_norm_bound=1.0, calibration="paper")


@pytest.mark.parametrize("fn", [dp_gd, dp_sgd])
def test_bad_penalty_is_refused(fn):
    with pytest.raises(ValueError, match="penalty"):
        fn(X, Y, epsilon=1.0, data_norm_bound=1.0, penalty="scad")


@pytest.mark.parametrize("solver, params", [
    ("dp_srm", {"epochs": 200}), ("rrpsgd", {"max_epochs": 20, "batch_size": 10}), ("dp_gd", {"steps": 50}),
    ("dp_sgd", {"epochs": 5, "batch_size": 50, "sampling": "without_replacement"})])
def test_estimator_runs_the_nonconvex_penalty(solver, params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPLogisticRegression(solver=solver, penalty="nonconvex", alpha=1e-3, epsilon=math.inf,
                                   random_state=0, solver_params=params, keep_diagnostics=True).fit(X, Y)
    assert est.result_.details["regularizer"] == "nonconvex"
    Xi = np.hstack([X, np.ones((500, 1))])
    ref = reference_minimizer(Xi, Y, get_loss("logistic"), Regularizer(nonconvex=1e-3))
    assert est.score(X, Y) >= np.mean(np.sign(Xi @ ref) == Y) - 0.03  # 0.682 at the reference point
    assert math.isinf(est.privacy_.epsilon)


def test_estimator_refuses_the_penalty_for_a_solver_without_it():
    with pytest.raises(ValueError, match="penalty"):
        DPLogisticRegression(solver="dp_svrg", penalty="nonconvex").fit(X, Y)


def test_estimator_clone_keeps_the_penalty():
    from sklearn.base import clone

    est = clone(DPLogisticRegression(solver="dp_srm", penalty="nonconvex"))
    assert est.get_params()["penalty"] == "nonconvex" and est.get_params()["solver"] == "dp_srm"
