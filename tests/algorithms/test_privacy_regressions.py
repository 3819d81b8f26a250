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
    (DPHuberRegressor, {"solver": "objective_perturbation"}, XR, YR),
    (DPLinearRegression, {"solver": "dp_gd", "solver_params": {"steps": 20}}, XR, YR),
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
    with target 1e200 pushed the squared-loss coefficients to ~3e29. Noise off (the attack is on
    the deterministic part): each step moves w by at most lr·C, so ‖w‖ ≤ steps·lr·C, and the
    neighbouring fits differ by at most what the sensitivity allows."""
    steps, lr, C = 20, 0.5, 1.0
    attack_X = np.vstack([XR, np.full((1, 3), 1e-170)])
    attack_y = np.append(YR, 1e200)
    w1 = dp_gd(attack_X, attack_y, loss="squared", epsilon=math.inf, clip_norm=C, learning_rate=lr, steps=steps).weights
    w0 = dp_gd(attack_X[:-1].copy(), attack_y[:-1].copy(), loss="squared", epsilon=math.inf, clip_norm=C,
               learning_rate=lr, steps=steps).weights
    assert np.all(np.isfinite(w1)) and np.linalg.norm(w1) <= steps * lr * C
    assert np.linalg.norm(w1 - w0) < 1.0  # the record's clipped gradient is tiny-normed after /n


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
