"""DP-GD (wang-ye-xu-2017 Alg. 4): convergence with the noise off, output options, utility vs ε."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from algorithms.dp_gd import dp_gd
from algorithms.losses import get_loss
from algorithms.objective import objective_value, reference_minimizer
from algorithms.regularizers import Regularizer
from algorithms.synthetic import make_classification, make_regression

X, Y, _ = make_classification(500, 5, seed=1)
XR, YR, _ = make_regression(500, 5, seed=2)


@pytest.mark.parametrize(
    "loss, data, alpha, l1",
    [("logistic", (X, Y), 0.01, 0.0), ("smoothed_hinge", (X, Y), 0.05, 0.0), ("huber", (XR, YR), 0.01, 0.0),
     ("logistic", (X, Y), 0.01, 0.01)],
)
def test_noise_off_converges_to_the_scipy_optimum(loss, data, alpha, l1):
    """Noise off, the T-step schedule (tol=None) and the run to tolerance (default) both reach the
    L-BFGS-B optimum: objective within 1e-9, weights within 1e-4; the latter to gradient mapping ≤ 1e-9."""
    Xd, yd = data
    lobj, reg = get_loss(loss), Regularizer(alpha, l1)
    ref = reference_minimizer(Xd, yd, lobj, reg)
    res = dp_gd(Xd, yd, loss=loss, epsilon=math.inf, alpha=alpha, l1=l1, steps=3000, data_norm_bound=1.0, trace=True,
                tol=None)
    assert res.objective_trace[-1] <= objective_value(ref, Xd, yd, lobj, reg) + 1e-9
    np.testing.assert_allclose(res.weights, ref, atol=1e-4)
    assert res.grad_norm_trace[-1] < 1e-6
    assert res.n_gradient_evaluations == 3000 * 500
    fast = dp_gd(Xd, yd, loss=loss, epsilon=math.inf, alpha=alpha, l1=l1, data_norm_bound=1.0)
    assert fast.details["noise_off"]["gradient_mapping_norm"] <= 1e-9
    assert objective_value(fast.weights, Xd, yd, lobj, reg) <= objective_value(ref, Xd, yd, lobj, reg) + 1e-9


def test_noise_off_matches_scikit_learn():
    """sklearn's C = 1/(n·alpha) gives the same objective scaled by n (no intercept); weights to 1e-5."""
    alpha = 0.01
    res = dp_gd(X, Y, epsilon=math.inf, alpha=alpha, steps=3000, data_norm_bound=1.0)
    sk = LogisticRegression(C=1.0 / (len(Y) * alpha), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, Y)
    np.testing.assert_allclose(res.weights, sk.coef_.ravel(), atol=1e-5)


def test_noise_off_on_an_l2_ball_matches_constrained_scipy():
    res = dp_gd(X, Y, epsilon=math.inf, steps=3000, data_norm_bound=1.0, constraint="l2", radius=0.5)
    lobj = get_loss("logistic")
    cons = {"type": "ineq", "fun": lambda w: 0.25 - w @ w, "jac": lambda w: -2 * w}
    ref = minimize(lambda w: lobj.value(w, X, Y), np.zeros(5), jac=lambda w: lobj.gradient(w, X, Y),
                   constraints=[cons], method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000}).x
    np.testing.assert_allclose(res.weights, ref, atol=1e-5)
    assert np.linalg.norm(res.weights) <= 0.5 + 1e-12


def test_random_iterate_output_is_an_iterate():
    """§6.2 output x_m, m uniform on {0..T−1}: with the noise off it is the last iterate of an m-step run."""
    res = dp_gd(X, Y, epsilon=math.inf, steps=30, data_norm_bound=1.0, output="random", rng=4, tol=None)
    m = res.details["output_index"]
    assert 0 <= m < 30
    assert res.details["momentum"] == 0.0  # §6.2 analyses Alg. 4 itself
    ref = dp_gd(X, Y, epsilon=math.inf, steps=max(m, 1), data_norm_bound=1.0, tol=None,
                momentum=0.0).weights if m else np.zeros(5)
    np.testing.assert_allclose(res.weights, ref, atol=1e-15)


def test_excess_risk_decreases_as_epsilon_grows():
    """Mean excess empirical risk over 6 seeds at ε = 0.1, 1, 10 (δ = 1e-5) on a fixed problem."""
    Xs, Ys, _ = make_classification(1000, 5, seed=3)
    lobj, reg = get_loss("logistic"), Regularizer(0.01)
    best = objective_value(reference_minimizer(Xs, Ys, lobj, reg), Xs, Ys, lobj, reg)
    risks = []
    for eps in (0.1, 1.0, 10.0):
        r = [dp_gd(Xs, Ys, epsilon=eps, alpha=0.01, steps=50, data_norm_bound=1.0, rng=s, trace=False).weights
             for s in range(6)]
        risks.append(np.mean([objective_value(w, Xs, Ys, lobj, reg) - best for w in r]))
    assert risks[0] > risks[1] > risks[2] > 0


def test_parallel_opt_in_matches_the_serial_run():
    """Multi-threaded gradient sums change only the summation order, never the privacy."""
    Xb, Yb, _ = make_classification(3000, 6, seed=5)
    kw = dict(epsilon=1.0, alpha=0.01, steps=15, data_norm_bound=1.0, rng=4, trace=False)
    serial, threaded = dp_gd(Xb, Yb, **kw), dp_gd(Xb, Yb, parallel=True, **kw)
    assert threaded.event == serial.event and threaded.privacy.epsilon == serial.privacy.epsilon
    np.testing.assert_allclose(threaded.weights, serial.weights, rtol=1e-9, atol=1e-12)
    assert threaded.details["clipped"] == serial.details["clipped"]


def test_default_schedule_is_a_public_rule():
    """Defaults (benchmarks/bench_defaults.py): η = min(1.9, nε/(600√T))/β with β = c₂R² (never read off
    the data), T = min(100, max(10, ⌈nε/15⌉)) from the public n and ε, μ = 0.9 (classification, last
    iterate); regression losses keep η = 1.9/β and μ = 0."""
    from algorithms.dp_gd import default_step_factor, default_steps

    res = dp_gd(X, Y, epsilon=1.0, data_norm_bound=2.0, rng=0)
    assert res.details["steps"] == default_steps(500, 1.0) == 34
    assert res.details["learning_rate"] == pytest.approx(500 / (600 * math.sqrt(34)) / (0.25 * 4.0), rel=1e-15)
    assert res.details["momentum"] == 0.9
    assert default_step_factor(32561, 1.0, 100) == 1.9 and default_step_factor(32561, 0.1, 100) == pytest.approx(
        3256.1 / 6000, rel=1e-12) and default_step_factor(10, math.inf, 100) == 1.9
    reg = dp_gd(XR, YR, loss="huber", epsilon=1.0, data_norm_bound=2.0, rng=0)
    assert reg.details["learning_rate"] == pytest.approx(1.9 / 4.0, rel=1e-15) and reg.details["momentum"] == 0.0
    assert default_steps(32561, 0.1) == 100 and default_steps(100, 0.1) == 10 and default_steps(10, math.inf) == 100
    scaled = dp_gd(0.5 * X, Y, epsilon=1.0, data_norm_bound=2.0, rng=0)  # other data, same public inputs
    assert scaled.details["learning_rate"] == res.details["learning_rate"]


def test_momentum_post_processes_the_same_releases():
    """μ changes the iterates, never the event or the reported ε (the same T noisy gradient sums); μ = 0
    is Alg. 4 (x_{t+1} = x_t − η·g̃(x_t)/n, checked against a NumPy loop with the kernel's noise stream)."""
    kw = dict(epsilon=1.0, alpha=0.01, steps=12, data_norm_bound=1.0, rng=3)
    plain, heavy = dp_gd(X, Y, momentum=0.0, **kw), dp_gd(X, Y, momentum=0.5, **kw)
    assert plain.event == heavy.event and plain.privacy.epsilon == heavy.privacy.epsilon
    assert not np.allclose(plain.weights, heavy.weights)
    lobj, sig, eta = get_loss("logistic"), plain.sigma, plain.details["learning_rate"]
    for mu, res in ((0.0, plain), (0.5, heavy)):
        gen, w, prev = np.random.default_rng(3), np.zeros(5), np.zeros(5)
        for _ in range(12):
            u = w + mu * (w - prev)
            g = len(Y) * lobj.gradient(u, X, Y) + gen.normal(0.0, sig, 5)
            prev, w = w, (u - eta * g / len(Y)) / (1.0 + eta * 0.01)
        np.testing.assert_allclose(res.weights, w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 2.0, math.nan])
def test_momentum_out_of_range_is_refused(bad):
    with pytest.raises(ValueError, match="momentum"):
        dp_gd(X, Y, epsilon=1.0, data_norm_bound=1.0, momentum=bad)


@pytest.mark.parametrize("value", [-0.1, 1.0, 1e308, -math.inf])
def test_heavy_ball_coefficient_refusals_state_one_range(value):
    """Every out-of-range μ (DP-GD's momentum, DP-SVRG's, the MLP's heavy_ball, DP-SRM's extrapolation) names the
    same allowed range [0, 1); a negative value once reported [0, inf)."""
    from algorithms.dp_gd import check_heavy_ball

    with pytest.raises(ValueError, match=r"extrapolation must be in \[0, 1\)"):
        check_heavy_ball(value, "extrapolation")
    with pytest.raises(ValueError, match="must not be NaN"):
        check_heavy_ball(math.nan, "extrapolation")
    assert check_heavy_ball(0.0) == 0.0 and check_heavy_ball(0.9) == 0.9
