"""Regression tests for issue 13: each runs the attack that broke a solver or estimator and checks
that it now fails.
"""

import math
import warnings

import numpy as np
import pytest

from algorithms import DeterministicSeedWarning, DPHuberRegressor, DPLinearRegression, DPLogisticRegression
from algorithms.synthetic import make_classification, make_regression

X, Y, _ = make_classification(200, 3, seed=11)
XR, YR, _ = make_regression(200, 3, seed=12)

# ------------------------------------------------------------------ 1. deterministic default seed

ESTIMATORS = [
    (DPLogisticRegression, {"solver": "objective_perturbation"}, X, Y),
    (DPHuberRegressor, {"solver": "objective_perturbation", "target_bound": 10.0}, XR, YR),  # |YR| < 10
    (DPLinearRegression, {"solver": "dp_gd", "solver_params": {"steps": 20}, "target_bound": 10.0}, XR, YR),
]


@pytest.mark.parametrize("cls, kwargs, Xd, yd", ESTIMATORS)
def test_default_estimator_is_not_a_deterministic_function_of_the_data(cls, kwargs, Xd, yd):
    """The attack: fit twice with the default constructor; equal outputs identify the data set.
    With fresh entropy by default, two fits differ (continuous noise: equal with probability 0),
    and no DeterministicSeedWarning is raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeterministicSeedWarning)
        a = cls(**kwargs).fit(Xd, yd)
        b = cls(**kwargs).fit(Xd, yd)
    assert cls().random_state is None
    assert not np.array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("cls, kwargs, Xd, yd", ESTIMATORS)
def test_fixed_seed_warns_and_reproduces(cls, kwargs, Xd, yd):
    with pytest.warns(DeterministicSeedWarning, match="NOT differentially private"):
        a = cls(random_state=5, **kwargs).fit(Xd, yd)
    with pytest.warns(DeterministicSeedWarning):
        b = cls(random_state=5, **kwargs).fit(Xd, yd)
    assert np.array_equal(a.coef_, b.coef_)


def test_caller_generator_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeterministicSeedWarning)
        DPLogisticRegression(solver="objective_perturbation", random_state=np.random.default_rng()).fit(X, Y)


# ------------------------------------------------------------- 2. clipping bypass by norm underflow

from algorithms import dp_gd, dp_sgd, dp_svrg  # noqa: E402


def test_tiny_entry_row_with_huge_target_is_clipped():
    """The attack: a row of 1e-170 entries (‖x‖² underflows to 0, so the gradient was never clipped)
    with target 1e200 pushed the squared-loss coefficients to ~3e29 (ε ≥ 7.2 vs 1). Same seed on
    both neighbours, so the noise is shared: the two fits now differ by at most what the clipped
    record can move them — each step by lr·2C/n — far below the noise scale."""
    steps, lr, C = 20, 0.5, 1.0
    attack_X = np.vstack([XR, np.full((1, 3), 1e-170)])
    attack_y = np.append(YR, 1e200)
    base_X = np.vstack([XR, np.zeros((1, 3))])
    base_y = np.append(YR, 0.0)
    kw = dict(loss="squared", epsilon=1.0, delta=1e-5, clip_norm=C, learning_rate=lr, steps=steps)
    w1 = dp_gd(attack_X, attack_y, rng=7, **kw).weights
    w0 = dp_gd(base_X, base_y, rng=7, **kw).weights
    assert np.all(np.isfinite(w1)) and np.linalg.norm(w1) < 100.0
    # GD on the squared loss is non-expansive at this step size, so the per-step differences add up
    assert np.linalg.norm(w1 - w0) <= steps * lr * 2.0 * C / attack_X.shape[0] * (1 + 1e-9)


def test_target_bound_is_checked_and_named():
    with pytest.raises(ValueError, match="target_bound"):
        dp_gd(XR, np.append(YR[:-1], 1e200), loss="squared", epsilon=1.0, clip_norm=1.0, learning_rate=0.5,
              steps=5, loss_params={"target_bound": 10.0})
    res = dp_gd(XR, YR, loss="squared", epsilon=math.inf, learning_rate=0.5, steps=5, data_norm_bound=1.0,
                constraint="l2", radius=2.0, loss_params={"target_bound": 10.0})
    assert res.details["clip_norm"] == pytest.approx(1.0 * (1.0 * 2.0 + 10.0))  # L = R(R·radius + B)
    with pytest.raises(ValueError, match="target_bound"):
        dp_gd(X, Y, loss="logistic", epsilon=1.0, data_norm_bound=1.0, loss_params={"target_bound": 1.0})


# ------------------------------------------------------------- 3. one finite record -> NaN output


@pytest.mark.parametrize("loss", ["logistic", "huber", "squared", "smoothed_hinge"])
@pytest.mark.parametrize("solver", [dp_gd, dp_sgd, dp_svrg])
def test_extreme_record_gives_finite_output(loss, solver):
    """The attack: a record with entries 1e308 (finite) overflowed ⟨w, x⟩ to ±inf, the clip factor
    became 0 and inf·0 = NaN poisoned the model. Now every solver's output stays finite."""
    Xd, yd = (X, Y) if loss in ("logistic", "smoothed_hinge") else (XR, YR)
    ext = np.array([[1e308, -1e308, 1e308]])
    Xa, ya = np.vstack([Xd, ext]), np.append(yd, yd[0])
    kwargs = {"steps": 30} if solver is dp_gd else ({"batch_size": 40, "sampling_rate": 0.2, "steps": 30} if solver is dp_sgd
                                               else {"batch_size": 40, "epochs": 3})
    res = solver(Xa, ya, loss=loss, epsilon=1.0, delta=1e-5, clip_norm=1.0, learning_rate=0.5, rng=1, **kwargs)
    assert np.all(np.isfinite(res.weights))


# ------------------------------------------------- 5. non-private diagnostics released by default

import inspect  # noqa: E402

import algorithms  # noqa: E402


@pytest.mark.parametrize("name", sorted(algorithms.SOLVERS))
def test_traces_are_off_by_default(name):
    """The attack read F(w) on the raw data off ``objective_trace`` (ε ≥ 4.39 vs 1): every solver
    now computes it only on request."""
    param = inspect.signature(algorithms.SOLVERS[name]).parameters["trace"]
    assert param.default is False


@pytest.mark.parametrize("cls, kwargs, Xd, yd", ESTIMATORS)
def test_estimators_keep_only_private_outputs_by_default(cls, kwargs, Xd, yd):
    """By default a fitted estimator holds no objective values, traces or gradient-evaluation
    counts; ``keep_diagnostics=True`` is the documented, non-private opt-in."""
    m = cls(**kwargs).fit(Xd, yd)
    assert not hasattr(m, "result_") and not hasattr(m, "n_gradient_evaluations_")
    assert {"coef_", "intercept_", "privacy_"} <= set(vars(m))
    m = cls(keep_diagnostics=True, **kwargs).fit(Xd, yd)
    assert m.result_.objective_trace.size > 0 and m.n_gradient_evaluations_ > 0


# ------------------------------------- 6. objective perturbation: approximate minimiser, row slack

from fractions import Fraction  # noqa: E402

import mpmath  # noqa: E402

from algorithms import approximate_minima_perturbation, objective_perturbation  # noqa: E402
from algorithms._data import admitted_norm_bound  # noqa: E402
from algorithms._residual import certified_gradient_norm  # noqa: E402
from algorithms.losses import get_loss  # noqa: E402


@pytest.mark.parametrize("name", ["logistic", "huber", "smoothed_hinge"])
def test_certificate_bounds_the_exact_gradient_norm(name):
    """certified_gradient_norm ≥ ‖∇J(w)‖₂ evaluated in 60-digit arithmetic at the same float inputs,
    and within 1e-12 of it (it is a rounding bound, not a loose one)."""
    loss = get_loss(name)
    gen = np.random.default_rng(5)
    Xd = gen.normal(size=(40, 3))
    Xd /= np.linalg.norm(Xd, axis=1).max()
    yd = np.sign(gen.normal(size=40)) if loss.task == "classification" else gen.normal(size=40)
    w, lin, ridge = gen.normal(size=3) * 3, gen.normal(size=3) * 1e-3, 0.01
    mpmath.mp.dps = 60
    g = [mpmath.mpf(0)] * 3
    for xi, yi in zip(Xd, yd):
        z = sum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(xi, w))
        if name == "logistic":
            c = -mpmath.mpf(yi) / (1 + mpmath.exp(mpmath.mpf(yi) * z))
        elif name == "huber":
            c = max(-1, min(1, z - mpmath.mpf(yi)))
        else:
            m = mpmath.mpf(yi) * z
            h = mpmath.mpf(loss.param)
            c = 0 if m >= 1 + h else (-yi if m <= 1 - h else -yi * (1 + h - m) / (2 * h))
        g = [gj + c * mpmath.mpf(xj) / len(yd) for gj, xj in zip(g, xi)]
    g = [gj + mpmath.mpf(ridge) * mpmath.mpf(wj) + mpmath.mpf(lj) for gj, wj, lj in zip(g, w, lin)]
    exact = mpmath.sqrt(sum(gj**2 for gj in g))
    cert = certified_gradient_norm(loss, Xd, yd, w, ridge, lin, 1.0)
    assert exact <= cert <= exact + 1e-12


def test_objective_perturbation_refuses_an_uncertified_point(monkeypatch):
    """The attack surface: the proof covers the exact minimiser, the solver returns an iterate. Now
    the release carries noise for a certified residual, and an inner solver that stops early (here
    after one Newton step) is refused instead of being released as if it were the minimiser."""
    import sys

    from algorithms._perturbation import newton_solve

    op = sys.modules["algorithms.objective_perturbation"]  # the module (the package re-exports the function)

    res = objective_perturbation(X, Y, epsilon=1.0, delta=1e-5)
    assert res.details["certified_grad_norm"] <= 1e-10 and res.details["sigma_residual"] > 0
    assert res.event.privacy_profile.output_multiplier > 0  # the residual stage is in the accounted event
    pure = objective_perturbation(X, Y, epsilon=1.0, delta=0.0)
    assert pure.privacy.epsilon <= 1.0 + 1e-15 and pure.details["sigma_residual"] > 0

    def early(*args, **kwargs):
        return newton_solve(*args, **dict(kwargs, tol=1.0, max_iter=1))

    monkeypatch.setattr(op, "newton_solve", early)
    for delta in (0.0, 1e-5):
        with pytest.raises(RuntimeError, match="certified gradient norm"):
            op.objective_perturbation(X, Y, epsilon=1.0, delta=delta)


def test_amp_certifies_its_gradient_tolerance():
    res = approximate_minima_perturbation(X, Y, epsilon=1.0, delta=1e-5, gradient_tol=1e-8)
    assert res.details["gradient_norm"] <= 1e-8


def test_row_norm_slack_is_covered_by_the_sensitivity():
    """check_row_norms admits rows up to R(1 + 1e-9); the perturbation solvers' L now covers every
    admitted row (checked exactly in rational arithmetic) instead of assuming ‖x‖ ≤ R."""
    Xs = X.copy()
    Xs[0] *= (1.0 + 9e-10) / np.linalg.norm(Xs[0])  # computed norm 1 + 9e-10: admitted for R = 1
    res = objective_perturbation(Xs, Y, epsilon=1.0, delta=1e-5, data_norm_bound=1.0)
    L = Fraction(res.details["L"])  # logistic: L = R' with R' the admitted bound
    assert L * L >= sum(Fraction(float(v)) ** 2 for v in Xs[0])
    assert res.details["L"] == admitted_norm_bound(1.0, 3) > 1.0 + 1e-9


def test_output_perturbation_minimizer_certifies_its_gradient_tolerance():
    from algorithms import output_perturbation_gd

    res = output_perturbation_gd(X, Y, epsilon=1.0, delta=1e-5, alpha=0.01, gradient_tol=1e-9)
    assert res.details["method"] == "minimizer" and res.details["gradient_norm"] <= 1e-9
