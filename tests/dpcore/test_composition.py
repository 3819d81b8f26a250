"""Composition theorems: basic, advanced (DRV10) and the exact optimal profile (KOV15)."""

import itertools
import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.composition import (
    advanced_composition,
    basic_composition,
    optimal_composition_delta,
    optimal_composition_epsilon,
)


def brute_force_delta(eps, delta, k, eps_g):
    """Hockey-stick divergence of the k-fold product of the canonical (ε, δ) pair (KOV Thm 2.1),
    by enumerating all 4^k outcomes at 40 digits."""
    with mpmath.workdps(40):
        e, d = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(delta)
        p = [d, (1 - d) * e / (1 + e), (1 - d) / (1 + e), mpmath.mpf(0)]
        q = p[::-1]
        scale = mpmath.exp(mpmath.mpf(eps_g))
        total = mpmath.mpf(0)
        for x in itertools.product(range(4), repeat=k):
            px = mpmath.fprod(p[j] for j in x)
            qx = mpmath.fprod(q[j] for j in x)
            total += max(mpmath.mpf(0), px - scale * qx)
        return total


def kov_grid_delta(eps, delta, k, i):
    """KOV15 Thm 3.3 as printed: ((k−2i)ε, 1 − (1−δ)^k (1 − δ_i)),
    δ_i = Σ_{l<i} C(k,l)(e^{(k−l)ε} − e^{(k−2i+l)ε})/(1+e^ε)^k, at 40 digits."""
    with mpmath.workdps(40):
        e = mpmath.mpf(eps)
        di = mpmath.fsum(
            mpmath.binomial(k, l) * (mpmath.exp((k - l) * e) - mpmath.exp((k - 2 * i + l) * e)) for l in range(i)
        ) / (1 + mpmath.exp(e)) ** k
        return 1 - (1 - mpmath.mpf(delta)) ** k * (1 - di)


# ------------------------------------------------------------------------------------------- basic


def test_basic_composition_is_exact_and_rounded_up():
    eps, delta = basic_composition([0.1] * 10, [1e-7] * 10)
    assert Fraction(eps) >= 10 * Fraction(0.1)
    assert Fraction(delta) >= 10 * Fraction(1e-7)
    assert eps == pytest.approx(1.0, rel=1e-15) and delta == pytest.approx(1e-6, rel=1e-15)
    assert basic_composition([], []) == (0.0, 0.0)
    assert basic_composition([1.0, 0.0], [0.6, 0.6])[1] == 1.0  # δ capped at the trivial bound


def test_advanced_composition_formula():
    eps, delta = advanced_composition(0.01, 1e-8, 1000, 1e-6)
    expected = math.sqrt(2 * 1000 * math.log(1e6)) * 0.01 + 1000 * 0.01 * math.expm1(0.01)
    assert eps == pytest.approx(expected, rel=1e-14) and eps >= expected * (1 - 1e-15)
    assert delta == pytest.approx(1000 * 1e-8 + 1e-6, rel=1e-15)


# --------------------------------------------------------------------------------- KOV exact profile


@pytest.mark.parametrize(
    "eps,delta,k,eps_g",
    [
        (0.5, 0.01, 4, 0.3),  # between grid points 0 and 1.0
        (0.5, 0.01, 4, 1.0),  # on the grid
        (1.0, 0.0, 5, 0.0),
        (0.2, 1e-3, 6, 0.45),
        (0.3, 0.05, 3, 0.9),
        (0.3, 0.05, 3, 0.95),  # above kε: only the δ floor remains
        (2.0, 1e-4, 2, 0.7),
    ],
)
def test_kov_profile_matches_brute_force(eps, delta, k, eps_g):
    exact = brute_force_delta(eps, delta, k, eps_g)
    got = optimal_composition_delta(eps, delta, k, eps_g)
    assert mpmath.mpf(got) >= exact
    assert got == pytest.approx(float(exact), rel=1e-14)


@pytest.mark.parametrize("eps,delta,k", [(0.1, 1e-6, 30), (0.05, 0.0, 200), (1.0, 1e-3, 11)])
def test_kov_profile_matches_the_printed_grid_of_thm_3_3(eps, delta, k):
    for i in range(0, k // 2 + 1, max(1, k // 20)):
        grid = kov_grid_delta(eps, delta, k, i)
        got = optimal_composition_delta(eps, delta, k, (k - 2 * i) * eps)
        assert got == pytest.approx(float(grid), rel=1e-12)


def test_kov_epsilon_is_least_and_safe_including_large_k():
    for eps, delta, k, target in [(0.1, 0.0, 50, 1e-6), (0.01, 1e-10, 10_000, 1e-5), (0.5, 1e-5, 20, 1e-3)]:
        eps_g = optimal_composition_epsilon(eps, delta, k, target)
        assert optimal_composition_delta(eps, delta, k, eps_g) <= target
        assert optimal_composition_delta(eps, delta, k, eps_g * (1 - 1e-8)) > target
        assert eps_g <= k * eps


def test_kov_epsilon_between_grid_points_beats_the_grid():
    # The exact profile interpolates; the least grid point meeting the target is larger.
    eps, delta, k, target = 0.1, 1e-6, 30, 1e-3
    eps_g = optimal_composition_epsilon(eps, delta, k, target)
    grid = min((k - 2 * i) * eps for i in range(k // 2 + 1) if kov_grid_delta(eps, delta, k, i) <= target)
    assert eps_g < grid
    assert optimal_composition_delta(eps, delta, k, eps_g) <= target


@pytest.mark.parametrize("eps,delta,k,delta_prime", [(0.01, 1e-8, 1000, 1e-6), (0.05, 1e-9, 400, 1e-5),
                                                     (0.1, 0.0, 10_000, 1e-6)])
def test_kov_below_advanced_below_basic(eps, delta, k, delta_prime):
    drv_eps, drv_delta = advanced_composition(eps, delta, k, delta_prime)
    basic_eps, _ = basic_composition([eps] * k, [delta] * k)
    kov_eps = optimal_composition_epsilon(eps, delta, k, drv_delta)
    assert kov_eps <= drv_eps <= basic_eps


def test_unreachable_target_delta_raises():
    # 1 − (1 − 1e-4)^100 ≈ 0.00995: no ε_g gets δ below it
    with pytest.raises(ValueError, match="target_delta"):
        optimal_composition_epsilon(0.1, 1e-4, 100, 1e-3)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(
    eps=st.floats(0.01, 2.0),
    log10_delta=st.floats(-10, -3),
    k=st.integers(1, 60),
    g1=st.floats(0.0, 1.0),
    g2=st.floats(0.0, 1.0),
)
def test_kov_profile_monotone_and_composition_never_cheaper_than_a_part(eps, log10_delta, k, g1, g2):
    delta = 10.0**log10_delta
    lo, hi = sorted((g1 * k * eps, g2 * k * eps))
    assert optimal_composition_delta(eps, delta, k, hi) <= optimal_composition_delta(eps, delta, k, lo)
    target = min(0.5, 1 - (1 - delta) ** (k + 1) + 1e-3)
    assert optimal_composition_epsilon(eps, delta, k + 1, target) >= optimal_composition_epsilon(eps, delta, k, target)


# -------------------------------------------------------------------------------------- bad input

NAN = float("nan")


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: basic_composition([0.1, -0.1], [0.0, 0.0]), r"epsilons\[1\]"),
        (lambda: basic_composition([0.1], [1.0]), r"deltas\[0\]"),
        (lambda: basic_composition([0.1, 0.2], [0.0]), "deltas"),
        (lambda: advanced_composition(0.0, 1e-6, 10, 1e-6), "epsilon"),
        (lambda: advanced_composition(0.1, 1.0, 10, 1e-6), "delta"),
        (lambda: advanced_composition(0.1, 1e-6, 0, 1e-6), "count"),
        (lambda: advanced_composition(0.1, 1e-6, 10, 0.0), "delta_prime"),
        (lambda: optimal_composition_delta(NAN, 0.0, 10, 1.0), "epsilon"),
        (lambda: optimal_composition_delta(0.1, -1e-3, 10, 1.0), "delta"),
        (lambda: optimal_composition_delta(0.1, 0.0, 2.5, 1.0), "count"),
        (lambda: optimal_composition_delta(0.1, 0.0, 10, -1.0), "composed_epsilon"),
        (lambda: optimal_composition_epsilon(0.1, 0.0, 10, 0.0), "target_delta"),
        (lambda: optimal_composition_epsilon(0.1, 0.0, 10, 1.0), "target_delta"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_basic_composition_beyond_the_float_range_is_inf():
    # the exact sum 2e308 was an OverflowError in round_up; inf is the safe upper bound
    assert basic_composition([1e308, 1e308], [0.0, 0.0]) == (math.inf, 0.0)


@pytest.mark.parametrize("call, name", [
    (lambda: basic_composition(1.0, [0.0]), "epsilons"),       # was TypeError: 'float' object is not iterable
    (lambda: basic_composition([1.0], 0.0), "deltas"),
    (lambda: advanced_composition(1.0, 1e-5, 10**400, 1e-5), "count"),      # were OverflowError
    (lambda: optimal_composition_epsilon(1.0, 1e-5, 10**400, 1e-5), "count"),
    (lambda: optimal_composition_delta(1.0, 0.0, 10**400, 1.0), "count"),
])
def test_composition_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        call()
