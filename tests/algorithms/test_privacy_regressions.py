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
