"""Output-perturbation gradient descent (Zhang, Zheng, Mou, Wang 2017, Alg. 1, Lemmas 2-3)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
from algorithms import output_perturbation_gd
from algorithms._perturbation import calibrate_gaussian_parts
from algorithms.losses import get_loss
from algorithms.objective import reference_minimizer
from algorithms.output_perturbation import gd_kernel, gd_sensitivity
from algorithms.regularizers import Regularizer
from algorithms.synthetic import make_classification

X, Y, _ = make_classification(400, 4, seed=3)
LOGISTIC = get_loss("logistic")


def test_noise_off_reaches_scipy_optimum():
    """Strongly convex GD (κ = 6) converges linearly: after 2 000 steps ‖∇F‖ < 1e-12 and the
    weights agree with scipy's L-BFGS-B optimum to 1e-6 (scipy's own accuracy is ~1e-8)."""
    alpha = 0.05
    res = output_perturbation_gd(X, Y, epsilon=math.inf, delta=1e-5, alpha=alpha, steps=2000, trace=True)
    w_ref = reference_minimizer(X, Y, LOGISTIC, Regularizer(alpha))
    assert np.max(np.abs(res.weights - w_ref)) < 1e-6
    assert np.linalg.norm(LOGISTIC.gradient(res.weights, X, Y) + alpha * res.weights) < 1e-12
    assert res.privacy.epsilon == math.inf
    assert res.objective_trace[-1] <= res.objective_trace[0]


def test_sensitivity_lemmas():
    L, beta, n = 1.0, 0.25, 100
    assert gd_sensitivity(L, beta, 0.0, n, 10, 2.0) == pytest.approx(3 * L * 10 * 2.0 / n)  # Lemma 2
    mu = 0.1
    b = beta + mu
    lemma3 = 5 * L * (mu + b) / (n * mu * b)
    assert gd_sensitivity(L, b, mu, n, 10_000, 1 / (b + mu)) == pytest.approx(lemma3)  # Lemma 3 caps T
    assert gd_sensitivity(L, b, mu, n, 1, 1 / (b + mu)) == pytest.approx(3 * L / (n * (b + mu)))
    with pytest.raises(ValueError, match="step_size"):
        gd_sensitivity(L, beta, 0.0, n, 10, 1.1 / beta)


@pytest.mark.parametrize("alpha", [0.0, 0.05])
def test_empirical_sensitivity_below_lemma_bound(alpha):
    """Noiseless GD on neighbouring datasets (row 0 replaced by a unit-norm row with the opposite
    margin sign) moves (by more than 0.1% of it) but never beyond the lemma's bound."""
    n = X.shape[0]
    beta = LOGISTIC.smoothness(1.0) + alpha
    eta = 1.0 / (beta + alpha) if alpha > 0 else 1.0 / beta
    X2, Y2 = X.copy(), Y.copy()
    X2[0], Y2[0] = X[0] / np.linalg.norm(X[0]), -Y[0]
    for T in (10, 200):
        w, _ = gd_kernel(LOGISTIC.kind, LOGISTIC.param, X, Y, alpha, eta, T, T)
        w2, _ = gd_kernel(LOGISTIC.kind, LOGISTIC.param, X2, Y2, alpha, eta, T, T)
        bound = gd_sensitivity(1.0, beta, alpha, n, T, eta)
        assert 1e-3 * bound < np.linalg.norm(w - w2) <= bound


@pytest.mark.parametrize("calibration", ["tight", "paper"])
def test_reported_privacy_is_the_exact_epsilon_of_the_noise_run(calibration, independent):
    eps, delta, alpha, T = 1.0, 1e-5, 0.0, 37
    res = output_perturbation_gd(X, Y, epsilon=eps, delta=delta, alpha=alpha, steps=T, rng=1, calibration=calibration)
    n, L, beta = X.shape[0], res.details["L"], res.details["beta"]  # for R = 1 plus check_row_norms' slack
    assert L == pytest.approx(1.0, rel=2e-9) and beta == pytest.approx(LOGISTIC.smoothness(L), rel=1e-15)
    sens = gd_sensitivity(L, beta, 0.0, n, T, 1.0 / beta)
    assert res.details["steps"] == T and res.n_gradient_evaluations == T * n
    assert res.details["sensitivity"] == sens
    assert isinstance(res.event, dpcore.GaussianEvent) and res.event.relation == "replace_one"
    assert res.event.noise_multiplier == pytest.approx(res.sigma / sens, rel=1e-12)
    exact = independent.gaussian_epsilon(sens / res.sigma, delta)  # Balle–Wang in mpmath, μ = Δ/σ
    assert exact <= res.privacy.epsilon <= exact * (1 + 1e-9)
    assert res.privacy.epsilon <= eps
    if calibration == "paper":  # Alg. 1 line 7: σ = Δ √(2 log(2/δ)) / ε
        assert res.sigma == pytest.approx(sens * math.sqrt(2 * math.log(2 / delta)) / eps, rel=1e-12)
    else:
        assert res.privacy.epsilon == pytest.approx(eps, rel=1e-6)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.05, 8.0), delta=st.floats(1e-10, 1e-2), share=st.floats(0.01, 0.99))
def test_gaussian_parts_compose_to_the_target(eps, delta, share):
    """Safe side and tight: ε(target·(1 − 1e-6)) < composed ε ≤ target."""
    m1, m2 = calibrate_gaussian_parts(eps, delta, [1 - share, share], "replace_one")
    ev = dpcore.ComposedEvent([dpcore.GaussianEvent(m1, "replace_one"), dpcore.GaussianEvent(m2, "replace_one")])
    got = dpcore.get_epsilon(ev, delta, accountant="analytic_gaussian").epsilon
    assert eps * (1 - 1e-6) < got <= eps
    assert (1 / m2**2) / (1 / m1**2 + 1 / m2**2) == pytest.approx(share, rel=1e-9)


def test_more_steps_more_noise_in_the_convex_case():
    a = output_perturbation_gd(X, Y, epsilon=1.0, delta=1e-5, steps=10, rng=0)
    b = output_perturbation_gd(X, Y, epsilon=1.0, delta=1e-5, steps=20, rng=0)
    assert b.details["sensitivity"] == pytest.approx(2 * a.details["sensitivity"])
    assert b.sigma > 1.9 * a.sigma


def test_pure_dp_gamma_noise():
    res = output_perturbation_gd(X, Y, epsilon=0.5, delta=0.0, alpha=0.05, rng=2)
    assert isinstance(res.event, dpcore.PureDpEvent)
    assert res.privacy.delta == 0.0 and res.privacy.epsilon == pytest.approx(0.5, rel=1e-12)
    assert res.sigma == pytest.approx(res.details["sensitivity"] / 0.5, rel=1e-12)  # scale Δ/ε


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"relation": "add_remove"}, "relation"),
        ({"loss": "squared"}, "Lipschitz"),
        ({"step_size": 10.0}, "step_size"),
        ({"data_norm_bound": 0.5}, "data_norm_bound"),
        ({"calibration": "loose"}, "calibration"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    args = {"epsilon": 1.0, "delta": 1e-5, "steps": 5, **kwargs}
    with pytest.raises(ValueError, match=match):
        output_perturbation_gd(X, Y, **args)


def test_bad_data_raise():
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        output_perturbation_gd(Xn, Y, epsilon=1.0, delta=1e-5, steps=5)
    with pytest.raises(ValueError, match="labels"):
        output_perturbation_gd(X, Y + 2.0, epsilon=1.0, delta=1e-5, steps=5)


def test_minimizer_method_noise_off_and_accounting():
    """method='minimizer' (auto with alpha > 0): noise off it is the optimum of F to 1e-10 in the
    gradient; private, Δ = 2L/(n·alpha) + 2γ/alpha (Chaudhuri et al. 2011 Cor. 8 + residual)."""
    from algorithms.output_perturbation import minimizer_sensitivity

    alpha, n = 0.01, X.shape[0]
    off = output_perturbation_gd(X, Y, epsilon=math.inf, delta=1e-5, alpha=alpha)
    assert off.details["method"] == "minimizer"
    assert np.linalg.norm(LOGISTIC.gradient(off.weights, X, Y) + alpha * off.weights) <= 1e-10
    w_ref = reference_minimizer(X, Y, LOGISTIC, Regularizer(alpha))
    assert np.max(np.abs(off.weights - w_ref)) < 1e-6
    res = output_perturbation_gd(X, Y, epsilon=1.0, delta=1e-5, alpha=alpha, rng=2, gradient_tol=1e-9)
    sens = minimizer_sensitivity(res.details["L"], alpha, n, 1e-9)
    assert res.details["sensitivity"] == sens >= 2.0 / (n * alpha) + 2e-9 / alpha
    assert res.event.noise_multiplier == pytest.approx(res.sigma / sens, rel=1e-12)
    assert res.privacy.epsilon <= 1.0
    assert output_perturbation_gd(X, Y, epsilon=1.0, delta=1e-5, alpha=alpha, steps=5).details["method"] == "gd"
    with pytest.raises(ValueError, match="alpha"):
        output_perturbation_gd(X, Y, epsilon=1.0, delta=1e-5, alpha=0.0, method="minimizer")


def test_minimizer_empirical_sensitivity_below_bound():
    """Exact minimisers of neighbouring datasets move, but by at most 2L/(n·alpha)."""
    alpha = 0.05
    X2, Y2 = X.copy(), Y.copy()
    X2[0], Y2[0] = X[0] / np.linalg.norm(X[0]), -Y[0]
    w = output_perturbation_gd(X, Y, epsilon=math.inf, delta=1e-5, alpha=alpha).weights
    w2 = output_perturbation_gd(X2, Y2, epsilon=math.inf, delta=1e-5, alpha=alpha).weights
    bound = 2.0 / (X.shape[0] * alpha)
    assert 1e-3 * bound < np.linalg.norm(w - w2) <= bound
