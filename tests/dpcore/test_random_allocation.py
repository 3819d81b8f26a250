"""Random allocation (balls-in-bins) with a Gaussian step: certified PLD bounds.

The exact δ(ε) of one epoch is computed here independently of dpcore's PLD code: the pair is
P = (1/t)Σᵢ N(eᵢ, σ²I), Q = N(0, σ²I), whose likelihood ratio is S/t with S a sum of t i.i.d.
log-normals X = exp(μZ − μ²/2) (μ = 1/σ). With R the sum of t − 1 of them,

    δ_remove(ε) = E_Q[(S/t − e^ε)₊] = (1/t)·E[C(t e^ε − R)],
    δ_add(ε)    = E_Q[(1 − e^ε S/t)₊] = (e^ε/t)·E[P(t e^{−ε} − R)],

C(c) = E[(X − c)₊] and P(c) = E[(c − X)₊] in closed form (the log-normal call and put), and the
outer expectation over R by scipy quadrature (one- and two-dimensional for t = 2, 3).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import ndtr

import dpcore
from dpcore import GaussianEvent, RandomAllocationEvent, SelfComposedEvent, UnsupportedEventError
from dpcore.pld import random_allocation


def _call(c, mu):
    if c <= 0:
        return 1.0 - c
    d1 = (0.5 * mu * mu - math.log(c)) / mu
    return float(ndtr(d1) - c * ndtr(d1 - mu))


def _put(c, mu):
    if c <= 0:
        return 0.0
    d1 = (0.5 * mu * mu - math.log(c)) / mu
    return float(c * ndtr(mu - d1) - ndtr(-d1))


def _lognormal(z, mu):
    return math.exp(mu * z - 0.5 * mu * mu)


def _expect_over_rest(fn, t, mu):
    """E[fn(R)], R the sum of t − 1 log-normals (t ≤ 3), by scipy quadrature."""
    phi = lambda z: math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    opts = dict(epsabs=1e-14, epsrel=1e-11, limit=400)
    if t == 1:
        return fn(0.0)
    if t == 2:
        return integrate.quad(lambda z: phi(z) * fn(_lognormal(z, mu)), -14, 14, **opts)[0]
    inner = lambda z1: integrate.quad(lambda z2: phi(z2) * fn(_lognormal(z1, mu) + _lognormal(z2, mu)), -14, 14,
                                      epsabs=1e-14, epsrel=1e-11, limit=200)[0]
    return integrate.quad(lambda z1: phi(z1) * inner(z1), -14, 14, epsabs=1e-13, epsrel=1e-10, limit=200)[0]


def exact_delta(sigma, t, eps):
    mu = 1.0 / sigma
    rem = _expect_over_rest(lambda r: _call(t * math.exp(eps) - r, mu), t, mu) / t
    add = math.exp(eps) / t * _expect_over_rest(lambda r: _put(t * math.exp(-eps) - r, mu), t, mu)
    return max(rem, add)


def pld_delta_bounds(event, eps):
    res = dpcore.get_delta(event, eps, accountant="pld")
    return res.details["bounds"]


CASES = [(0.8, 2, 0.3), (0.8, 2, 1.5), (1.5, 3, 0.1), (1.5, 3, 0.8), (1.0, 1, 1.0), (1.0, 3, 2.0)]


@pytest.mark.parametrize("sigma,t,eps", CASES)
def test_bounds_bracket_exact_delta(sigma, t, eps):
    exact = exact_delta(sigma, t, eps)
    lower, upper = pld_delta_bounds(RandomAllocationEvent(GaussianEvent(sigma), t), eps)
    assert lower <= exact <= upper, (lower, exact, upper)
    # tight: the upper bound within 0.1 %; the lower one (the dominated pair's optimistic PLD bound) within 1 %
    assert upper - exact <= 1e-3 * exact + 1e-12 and exact - lower <= 1e-2 * exact + 1e-12


def test_planted_bug_swapped_split_weights_is_caught(monkeypatch):
    """A construction that is not a dominating pair (upper and lower split shares swapped, so the
    splits are no longer mean-preserving) must fall below the exact δ somewhere."""
    original = random_allocation._table

    def broken(m):
        tab = original(m)
        return random_allocation._Table(tab.m, tab.far, tab.f, tab.w_hi, tab.w_lo, tab.hi_far, tab.decay)

    monkeypatch.setattr(random_allocation, "_table", broken)
    random_allocation._CACHE.clear()
    try:
        violated = False
        for sigma, t, eps in [(0.8, 2, 0.3), (1.5, 3, 0.1), (1.0, 3, 2.0)]:
            _, upper = pld_delta_bounds(RandomAllocationEvent(GaussianEvent(sigma), t), eps)
            violated |= upper < exact_delta(sigma, t, eps)
        assert violated
    finally:
        random_allocation._CACHE.clear()


def test_one_step_is_the_gaussian():
    for eps in (0.0, 0.5, 2.0):
        lower, upper = pld_delta_bounds(RandomAllocationEvent(GaussianEvent(1.3), 1), eps)
        exact = dpcore.analytic_gaussian_delta(1.3, eps)
        assert lower <= exact <= upper and upper - exact < 1e-4 * exact


def test_epsilon_bounds_and_auto():
    run = SelfComposedEvent(RandomAllocationEvent(GaussianEvent(1.0), 100), 10)
    pld = dpcore.get_epsilon(run, 1e-5, accountant="pld")
    lower, upper = pld.details["bounds"]
    assert lower <= upper == pld.epsilon and upper - lower < 0.01 * upper
    auto = dpcore.get_epsilon(run, 1e-5)
    assert auto.details["auto"]["chosen"] == "pld" and auto.epsilon >= lower
    poisson = dpcore.get_epsilon(
        SelfComposedEvent(dpcore.PoissonSampledEvent(GaussianEvent(1.0), 0.01), 1000), 1e-5, accountant="pld")
    assert upper < poisson.details["bounds"][0]  # balls-in-bins beats Poisson here (Feldman & Shenfeld 2026)


def test_num_selected_decomposes_and_refusals():
    two_of_six = RandomAllocationEvent(GaussianEvent(1.0), 6, num_selected=2)
    one_of_three_twice = SelfComposedEvent(RandomAllocationEvent(GaussianEvent(1.0), 3), 2)
    a = dpcore.get_epsilon(two_of_six, 1e-5, accountant="pld").epsilon
    b = dpcore.get_epsilon(one_of_three_twice, 1e-5, accountant="pld").epsilon
    assert a == b
    with pytest.raises(UnsupportedEventError, match="add_remove"):
        dpcore.get_epsilon(RandomAllocationEvent(GaussianEvent(1.0, relation="replace_one"), 4), 1e-5,
                           accountant="pld")
    with pytest.raises(UnsupportedEventError, match="GaussianEvent"):
        dpcore.get_epsilon(RandomAllocationEvent(dpcore.LaplaceEvent(1.0), 4), 1e-5, accountant="pld")
    with pytest.raises(ValueError, match="num_selected"):
        RandomAllocationEvent(GaussianEvent(1.0), 3, num_selected=4)
    with pytest.raises(ValueError, match="num_steps"):
        RandomAllocationEvent(GaussianEvent(1.0), 0)


def _bounds(sigma, t, epochs):
    return dpcore.get_epsilon(SelfComposedEvent(RandomAllocationEvent(GaussianEvent(sigma), t), epochs), 1e-5,
                              accountant="pld").details["bounds"]


@settings(max_examples=6, deadline=None, derandomize=True)
@given(sigma=st.floats(0.7, 3.0), t=st.integers(1, 6), epochs=st.integers(1, 4))
def test_monotone_in_sigma_steps_and_epochs(sigma, t, epochs):
    """The true ε decreases with σ and with the steps per epoch and grows with the epochs, so a
    lower bound on one side never exceeds the upper bound on the other."""
    lo, up = _bounds(sigma, t, epochs)
    assert 0.0 <= lo <= up
    assert _bounds(sigma * 1.25, t, epochs)[0] <= up
    assert _bounds(sigma, t + 1, epochs)[0] <= up
    assert lo <= _bounds(sigma, t, epochs + 1)[1]
