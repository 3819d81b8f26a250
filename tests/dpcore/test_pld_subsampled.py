"""PLD accountant on the Poisson-subsampled Gaussian: brute-force oracle and property tests.

Oracle: the composed profile of T ≤ 3 steps by numerical integration of the exact product
densities (independent of dpcore.pld). For the remove order (P = ⊗(qN(1,σ²) + (1−q)N(0,σ²)),
Q = ⊗N(0,σ²)) δ_A(ε) = E_Q[(Π r(x_i) − e^ε)_+] with r(x) = 1 − q + q e^{(2x−1)/(2σ²)}; for the
add order δ_B(ε) = E_Q[(1 − e^ε Π r(x_i))_+]. The last coordinate is integrated in closed form,
the others by quadrature (mpmath for T = 2, scipy for T = 3). The exact δ is max(δ_A, δ_B).
"""

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import ndtr

import dpcore
from dpcore import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dpcore.pld import pld_delta, pld_epsilon


def _threshold(c, q, s):
    """x with r(x) = c (−inf when c ≤ 1 − q)."""
    return -math.inf if c <= 1 - q else s * s * math.log((c - 1 + q) / q) + 0.5


def _last_remove(big_r, alpha, q, s):
    t = _threshold(alpha / big_r, q, s)
    return big_r * ((1 - q) * ndtr(-t / s) + q * ndtr((1 - t) / s)) - alpha * ndtr(-t / s)


def _last_add(big_r, alpha, q, s):
    t = _threshold(1.0 / (alpha * big_r), q, s)
    if t == -math.inf:
        return 0.0
    return ndtr(t / s) - alpha * big_r * ((1 - q) * ndtr(t / s) + q * ndtr((t - 1) / s))


def _r(x, q, s):
    return 1 - q + q * math.exp((2 * x - 1) / (2 * s * s))


def _brute_delta(sigma, q, steps, epsilon):
    alpha = math.exp(epsilon)
    phi = lambda x: math.exp(-0.5 * (x / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))  # noqa: E731
    out = []
    for last in (_last_remove, _last_add):
        if steps == 1:
            out.append(last(1.0, alpha, q, sigma))
        elif steps == 2:
            f = lambda x: phi(float(x)) * last(_r(float(x), q, sigma), alpha, q, sigma)  # noqa: E731
            with mpmath.workdps(20):
                pts = [-12 * sigma, -4 * sigma, 0, 0.5, 1, 4 * sigma + 1, 12 * sigma + 1]
                out.append(float(mpmath.quad(f, pts)))
        else:
            f = lambda y, x: phi(x) * phi(y) * last(_r(x, q, sigma) * _r(y, q, sigma), alpha, q, sigma)  # noqa: E731
            lo, hi = -12 * sigma, 12 * sigma + 1
            out.append(integrate.dblquad(f, lo, hi, lo, hi, epsabs=1e-14, epsrel=1e-10)[0])
    return max(out)


@pytest.mark.parametrize("sigma,q,steps,epsilon", [
    (1.0, 0.1, 1, 0.5), (0.8, 0.3, 1, 1.0), (1.1, 0.01, 1, 0.01),
    (1.0, 0.1, 2, 0.3), (2.0, 0.5, 2, 0.2), (0.9, 0.05, 2, 0.1),
    pytest.param(1.0, 0.2, 3, 0.5, marks=pytest.mark.slow),
])
def test_subsampled_gaussian_brackets_brute_force(sigma, q, steps, epsilon):
    exact = _brute_delta(sigma, q, steps, epsilon)
    event = PoissonSampledEvent(GaussianEvent(sigma), q)
    event = event if steps == 1 else SelfComposedEvent(event, steps)
    lo, up = pld_delta(event, epsilon).details["bounds"]
    tol = 1e-9 * exact + 1e-14  # quadrature accuracy
    assert lo - tol <= exact <= up + tol
    assert up - exact <= 1e-3 * exact + 1e-12


def test_subsampled_gaussian_epsilon_bounds_against_brute_force():
    sigma, q, steps, delta = 1.0, 0.1, 2, 1e-3
    res = pld_epsilon(SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), q), steps), delta)
    lo, up = res.details["bounds"]
    assert _brute_delta(sigma, q, steps, up) <= delta * (1 + 1e-9)
    assert _brute_delta(sigma, q, steps, lo) >= delta * (1 - 1e-9)


def _run(sigma, q, steps, delta=1e-5):
    return pld_epsilon(SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), q), steps), delta, fast=True)


def _check_order(small, large):
    """``small`` is the event with the smaller exact ε: the bounds must be consistent with that."""
    s_lo, s_up = small.details["bounds"]
    l_lo, l_up = large.details["bounds"]
    assert s_lo <= l_up
    assert s_up <= l_up + small.details["gap"]


@settings(max_examples=8, deadline=None)
@given(sigma=st.floats(0.6, 3.0), ratio=st.floats(1.01, 2.0), q=st.floats(1e-3, 0.3), steps=st.integers(1, 3000))
def test_monotone_in_sigma(sigma, ratio, q, steps):
    _check_order(_run(sigma * ratio, q, steps), _run(sigma, q, steps))


@settings(max_examples=8, deadline=None)
@given(sigma=st.floats(0.6, 3.0), q=st.floats(1e-3, 0.3), ratio=st.floats(1.01, 3.0), steps=st.integers(1, 3000))
def test_monotone_in_sampling_rate(sigma, q, ratio, steps):
    _check_order(_run(sigma, q, steps), _run(sigma, min(1.0, q * ratio), steps))


@settings(max_examples=8, deadline=None)
@given(sigma=st.floats(0.6, 3.0), q=st.floats(1e-3, 0.3), steps=st.integers(1, 3000), more=st.integers(1, 3000))
def test_monotone_in_steps(sigma, q, steps, more):
    _check_order(_run(sigma, q, steps), _run(sigma, q, steps + more))


@settings(max_examples=8, deadline=None)
@given(sigma=st.floats(0.6, 3.0), q=st.floats(1e-3, 0.3), steps=st.integers(1, 3000),
       log10_delta=st.floats(-9, -3))
def test_never_above_rdp_by_more_than_the_gap(sigma, q, steps, log10_delta):
    delta = 10.0**log10_delta
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), q), steps)
    res = pld_epsilon(event, delta, fast=True)
    assert res.epsilon <= dpcore.get_epsilon(event, delta, accountant="rdp").epsilon + res.details["gap"]
