"""Approximate minima perturbation (lecture14 AMP box; Iyengar et al. 2019, Alg. 1)."""

import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
from algorithms import approximate_minima_perturbation
from algorithms._objective_privacy import calibrate_objective_noise, objective_delta, objective_event
from algorithms.losses import get_loss
from algorithms.objective import reference_minimizer
from algorithms.regularizers import Regularizer
from algorithms.synthetic import make_classification

X, Y, _ = make_classification(400, 4, seed=3)
N = X.shape[0]
LOGISTIC = get_loss("logistic")


def test_noise_off_meets_the_gradient_tolerance_at_the_optimum():
    alpha, gamma = 0.01, 1e-9
    res = approximate_minima_perturbation(X, Y, epsilon=math.inf, delta=1e-5, alpha=alpha, gradient_tol=gamma)
    assert res.details["Lambda"] == pytest.approx(N * alpha)
    assert np.linalg.norm(LOGISTIC.gradient(res.weights, X, Y) + alpha * res.weights) <= gamma
    assert np.max(np.abs(res.weights - reference_minimizer(X, Y, LOGISTIC, Regularizer(alpha)))) < 1e-6
    assert res.privacy.epsilon == math.inf


def test_tight_privacy_is_the_profile_of_both_gaussian_stages_plus_jacobian(independent):
    eps, delta, gamma = 1.0, 1e-5, 1e-6
    res = approximate_minima_perturbation(X, Y, epsilon=eps, delta=delta, alpha=1e-3, gradient_tol=gamma, rng=0)
    d = res.details
    assert d["gradient_norm"] <= gamma
    assert d["output_sensitivity"] == pytest.approx(2 * N * gamma / d["Lambda"], rel=1e-12)
    # L = R', β = R'²/4 for the admitted row norm R' = 1 + 1e-9 + rounding (check_row_norms' slack)
    assert d["L"] == pytest.approx(1.0, rel=2e-9) and d["beta"] == pytest.approx(0.25 * d["L"] ** 2, rel=1e-15)
    assert d["jacobian_epsilon"] == pytest.approx(math.log1p(2 * d["beta"] / d["Lambda"]), rel=1e-12)
    m1, m2 = d["sigma1"] * N / (2.0 * d["L"]), d["sigma2"] / d["output_sensitivity"]  # b₁: sensitivity 2L/n
    assert isinstance(res.event, dpcore.MechanismEvent) and res.event.relation == "replace_one"
    profile = res.event.privacy_profile
    assert profile.objective_multiplier == pytest.approx(m1, rel=1e-12)
    assert profile.output_multiplier == pytest.approx(m2, rel=1e-12)
    assert profile.eps_jacobian == d["jacobian_epsilon"]
    # the profile of the noise that ran, re-derived and integrated in mpmath (tests/algorithms/conftest.py): the
    # reported ε meets δ there and is tight (δ is exceeded 1e-6 below it)
    assert independent.objective_delta(res.privacy.epsilon, m1, m2, d["jacobian_epsilon"]) <= delta * (1 + 1e-9)
    assert independent.objective_delta(res.privacy.epsilon * (1 - 1e-6), m1, m2, d["jacobian_epsilon"]) > delta
    e = res.privacy.epsilon  # dpcore's inversion: δ(ε) ≤ δ at ε, not at 1e-12 below it
    assert profile(e) <= delta < profile(e * (1 - 1e-12))
    assert dpcore.get_epsilon(res.event, delta, accountant="auto").epsilon == e  # only "profile" applies
    assert pickle.loads(pickle.dumps(res.event)).privacy_profile(e) == profile(e)  # usable across processes
    assert res.privacy.epsilon <= eps and res.privacy.epsilon == pytest.approx(eps, rel=1e-6)


@settings(max_examples=25, deadline=None)
@given(eps=st.floats(0.1, 8.0), delta=st.floats(1e-10, 1e-2), share=st.sampled_from([0.0, 0.01, 0.3, 0.9]),
       jac=st.floats(0.0, 0.05))
def test_objective_noise_calibration_is_safe_and_tight(eps, delta, share, jac):
    """target·(1 − 1e-6) < dpcore's ε of the calibrated noise ≤ target, μ² is split as asked, and a
    repeat call (memoised) returns the same noise."""
    m1, m2 = calibrate_objective_noise(eps, delta, jac, share)
    got = dpcore.get_epsilon(objective_event(m1, m2, jac), delta, accountant="profile").epsilon
    assert eps * (1 - 1e-6) < got <= eps
    assert objective_delta(eps, m1 * (1 - 1e-6), m2 * (1 - 1e-6), jac) > delta  # least noise: less breaks δ
    assert calibrate_objective_noise(eps, delta, jac, share) == (m1, m2)
    if share > 0:
        assert (1 / m2**2) / (1 / m1**2 + 1 / m2**2) == pytest.approx(share, rel=1e-9)


def test_paper_constants(independent):
    eps, delta, gamma, share, frac = 1.0, 1e-5, 1e-6, 0.05, 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = approximate_minima_perturbation(X, Y, epsilon=eps, delta=delta, gradient_tol=gamma, rng=0,
                                              calibration="paper", output_share=share, jacobian_fraction=frac)
    eps2 = share * eps
    eps1 = eps - eps2
    eps3 = eps1 - min(frac * eps1, 0.99)
    lam = 2 * res.details["beta"] / (eps1 - eps3)  # Λ = rβ/(ε₁ − ε₃), r = min(d, 2)
    tail = 1 + math.sqrt(2 * math.log(2 / delta))  # δ₁ = δ₂ = δ/2
    assert res.details["Lambda"] == pytest.approx(lam, rel=1e-12)
    assert res.details["sigma1"] == pytest.approx((2.0 * res.details["L"] / N) * tail / eps3, rel=1e-12)
    assert res.details["sigma2"] == pytest.approx((N * gamma / lam) * tail / eps2, rel=1e-12)
    d = res.details
    m1, m2 = d["sigma1"] * N / (2.0 * d["L"]), d["sigma2"] / d["output_sensitivity"]
    # the profile of the noise that ran, re-derived and integrated in mpmath (tests/algorithms/conftest.py): the
    # reported ε meets δ there and is tight (δ is exceeded 1e-6 below it)
    assert independent.objective_delta(res.privacy.epsilon, m1, m2, d["jacobian_epsilon"]) <= delta * (1 + 1e-9)
    assert independent.objective_delta(res.privacy.epsilon * (1 - 1e-6), m1, m2, d["jacobian_epsilon"]) > delta


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"delta": 0.0}, "delta"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"gradient_tol": 0.0}, "gradient_tol"),
        ({"output_share": 1.0}, "output_share"),
        ({"jacobian_fraction": 0.0}, "jacobian_fraction"),
        ({"loss": "squared"}, "Lipschitz"),
        ({"epsilon": math.inf, "alpha": 0.0}, "alpha"),
        ({"relation": "add_remove"}, "relation"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        approximate_minima_perturbation(X, Y, **{"epsilon": 1.0, "delta": 1e-5, **kwargs})
