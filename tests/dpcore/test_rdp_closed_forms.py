"""Closed-form RDP curves: Gaussian, Laplace (Mironov 2017 Prop. 6), pure ε-DP (randomized response)."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.rdp import gaussian_rdp, laplace_rdp, pure_dp_rdp

ORDERS = np.array([1.0001, 1.01, 1.1, 1.5, 2.0, 3.7, 10.0, 64.0, 1000.0, 10000.0])


def _mp_laplace(lam, alpha):
    with mpmath.workdps(50):
        a, lam = mpmath.mpf(alpha), mpmath.mpf(lam)
        inner = a / (2 * a - 1) * mpmath.exp((a - 1) / lam) + (a - 1) / (2 * a - 1) * mpmath.exp(-a / lam)
        return mpmath.log(inner) / (a - 1)


def _mp_randomized_response(eps, alpha):
    with mpmath.workdps(50):
        a, e = mpmath.mpf(alpha), mpmath.mpf(eps)
        p, q = mpmath.exp(e) / (1 + mpmath.exp(e)), 1 / (1 + mpmath.exp(e))
        return mpmath.log(p**a * q ** (1 - a) + q**a * p ** (1 - a)) / (a - 1)


def test_gaussian_rdp_is_alpha_over_two_sigma_squared_rounded_up():
    values = gaussian_rdp(1.3, ORDERS)
    exact = [mpmath.mpf(a) / (2 * mpmath.mpf(1.3) ** 2) for a in ORDERS]
    for v, e in zip(values, exact):
        assert v >= e
        assert float((v - e) / e) < 1e-11


def _assert_tight_upper_bounds(values, exact_at):
    for a, v in zip(ORDERS, values):
        exact = exact_at(a)
        assert v >= exact
        assert float((v - exact) / exact) < 1e-9


@pytest.mark.parametrize("lam", [0.05, 0.5, 1.0, 10.0, 1000.0])
def test_laplace_rdp_matches_mironov_prop6_and_is_an_upper_bound(lam):
    values = laplace_rdp(lam, ORDERS)
    _assert_tight_upper_bounds(values, lambda a: _mp_laplace(lam, a))
    assert np.all(values <= 1.0 / lam * (1 + 1e-11))


@pytest.mark.parametrize("eps", [1e-6, 0.1, 1.0, 5.0, 50.0])
def test_pure_dp_rdp_is_the_randomized_response_divergence(eps):
    values = pure_dp_rdp(eps, ORDERS)
    _assert_tight_upper_bounds(values, lambda a: _mp_randomized_response(eps, a))
    # Bun & Steinke 2016 Prop. 3.3: never above min(ε, αε²/2)
    assert np.all(values <= np.minimum(eps, ORDERS * eps * eps / 2) * (1 + 1e-9))


@pytest.mark.parametrize("eps", [1e-3, 0.7, 1.0, 5.0, 600.0, 1e5])
@pytest.mark.parametrize("alpha", [1 + 1e-6, 1 + 3e-6, 1.0001, 1.001])
def test_pure_dp_rdp_never_below_the_exact_value_near_order_one(eps, alpha):
    # the order search reaches 1 + 1e-6, where (α−½)ε − ε/2 cancelled to ~1e-10 relative (found below the
    # exact value by 2.7e-11); the difference (α−1)ε is now passed directly
    value = pure_dp_rdp(eps, [alpha])[0]
    with mpmath.workdps(60):
        exact = min(_mp_randomized_response(eps, alpha), mpmath.mpf(eps))
        assert mpmath.mpf(value) >= exact


def test_pure_dp_rdp_at_the_float_limit():
    values = pure_dp_rdp(1e308, [1.5, 2.0, 1e6])  # the cap ε (rounded up); no overflow warning
    assert np.all(np.isfinite(values)) and np.all(values >= 1e308) and np.all(values <= 1e308 * (1 + 1e-11))


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 50.0), st.floats(1.001, 500.0))
def test_laplace_below_its_pure_dp_curve(lam, alpha):
    # the Laplace mechanism is (1/λ)-DP, so its RDP cannot exceed the worst ε-DP curve
    assert laplace_rdp(lam, [alpha])[0] <= pure_dp_rdp(1.0 / lam, [alpha])[0] * (1 + 1e-9)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: gaussian_rdp(0.0, [2.0]), "noise_multiplier"),
        (lambda: laplace_rdp(-1.0, [2.0]), "noise_multiplier"),
        (lambda: pure_dp_rdp(math.inf, [2.0]), "epsilon"),
        (lambda: gaussian_rdp(1.0, [1.0]), "orders"),
        (lambda: gaussian_rdp(1.0, [np.nan]), "orders"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
