"""General subsampling bounds: sampling without replacement (WBK19 Thm. 9), Poisson (Zhu–Wang 2019
Thm. 6), and the DP-SRM paper's Lemma 3.7 with its validity conditions."""

import math

import mpmath
import numpy as np
import pytest

from dpcore.rdp import (
    dp_srm_rdp_bound,
    gaussian_rdp,
    laplace_rdp,
    poisson_subsampled_gaussian_rdp,
    poisson_subsampled_rdp,
    pure_dp_rdp,
    sampled_without_replacement_rdp,
)

INT_ORDERS = np.array([2.0, 3.0, 5.0, 16.0, 64.0, 256.0])


def mp_wbk_thm9(gamma, eps_fn, alpha, eps_inf=None):
    """WBK19 Thm. 9 written out term by term in mpmath (integer α)."""
    with mpmath.workdps(50):
        g = mpmath.mpf(gamma)
        e = lambda j: mpmath.mpf(float(eps_fn(np.array([float(j)]))[0]))  # noqa: E731
        mix = lambda j: 2 if eps_inf is None else min(2, mpmath.expm1(eps_inf) ** j)  # noqa: E731
        total = 1 + g**2 * mpmath.binomial(alpha, 2) * min(4 * mpmath.expm1(e(2)), mpmath.exp(e(2)) * mix(2))
        total += mpmath.fsum(g**j * mpmath.binomial(alpha, j) * mpmath.exp((j - 1) * e(j)) * mix(j) for j in range(3, alpha + 1))
        return mpmath.log(total) / (alpha - 1)


@pytest.mark.parametrize("m, n, sigma", [(100, 10000, 2.0), (256, 60000, 1.1), (1, 10**6, 0.5)])
def test_without_replacement_matches_theorem9(m, n, sigma):
    base = lambda a: gaussian_rdp(sigma, a)  # noqa: E731
    values = sampled_without_replacement_rdp(m, n, base, INT_ORDERS)
    for a, v in zip(INT_ORDERS, values):
        exact = min(mp_wbk_thm9(m / n, base, int(a)), mpmath.mpf(a) / (2 * mpmath.mpf(sigma) ** 2))
        assert v >= exact and float((v - exact) / exact) < 1e-9


def test_without_replacement_pure_epsilon_tightens_and_matches_theorem9():
    base = lambda a: laplace_rdp(5.0, a)  # noqa: E731  (0.2-DP: (e^0.2 − 1)^j < 2 tightens every term)
    loose = sampled_without_replacement_rdp(50, 1000, base, INT_ORDERS)
    tight = sampled_without_replacement_rdp(50, 1000, base, INT_ORDERS, base_pure_epsilon=0.2)
    assert np.all(tight <= loose) and np.any(tight < loose)
    for a, v in zip(INT_ORDERS, tight):
        exact = min(mp_wbk_thm9(0.05, base, int(a), eps_inf=0.2), mpmath.mpf(float(base(np.array([a]))[0])))
        assert v >= exact and float((v - exact) / exact) < 1e-9


def test_fractional_orders_use_the_convexity_chord():
    base = lambda a: gaussian_rdp(1.0, a)  # noqa: E731
    lo, mid, hi = sampled_without_replacement_rdp(10, 1000, base, [3.0, 3.4, 4.0])
    chord = (0.6 * 2 * lo + 0.4 * 3 * hi) / 2.4
    assert mid == pytest.approx(chord, rel=1e-11)
    below_two = sampled_without_replacement_rdp(10, 1000, base, [1.5, 2.0])
    assert below_two[0] >= below_two[1] * (1 - 1e-12)  # (α−1)D_α ≤ (α−1)D_2 on (1, 2)


def test_full_batch_is_the_base_mechanism():
    base = lambda a: gaussian_rdp(1.3, a)  # noqa: E731
    np.testing.assert_allclose(sampled_without_replacement_rdp(7, 7, base, INT_ORDERS), gaussian_rdp(1.3, INT_ORDERS), rtol=1e-11)


def test_zhu_wang_bounds_the_exact_poisson_gaussian_and_is_tight_at_two():
    base = lambda a: gaussian_rdp(1.1, a)  # noqa: E731
    general = poisson_subsampled_rdp(0.01, base, INT_ORDERS)
    exact = poisson_subsampled_gaussian_rdp(0.01, 1.1, INT_ORDERS)
    assert np.all(general >= exact * (1 - 1e-12))
    assert general[0] == pytest.approx(exact[0], rel=1e-9)


def test_zhu_wang_tiny_rate_keeps_relative_accuracy():
    # γ = 1e-7: the bracket is 1 + O(γ²); computed as log1p of non-negative terms it stays exact
    base = lambda a: pure_dp_rdp(1.0, a)  # noqa: E731
    v = poisson_subsampled_rdp(1e-7, base, [2.0])[0]
    with mpmath.workdps(50):
        e2 = mpmath.mpf(float(base(np.array([2.0]))[0]))
        exact = mpmath.log1p(mpmath.mpf(1e-7) ** 2 * mpmath.expm1(e2))
    assert v >= exact and float((v - exact) / exact) < 1e-9


def test_subsampling_never_exceeds_base():
    base = lambda a: laplace_rdp(0.2, a)  # noqa: E731
    orders = np.array([1.5, 2.0, 10.0, 1000.0])
    assert np.all(poisson_subsampled_rdp(0.9, base, orders) <= base(orders))
    assert np.all(sampled_without_replacement_rdp(90, 100, base, orders) <= base(orders))


def test_base_curve_is_validated():
    with pytest.raises(ValueError, match="base_rdp"):
        sampled_without_replacement_rdp(1, 10, lambda a: -a, [2.0])
    with pytest.raises(ValueError, match="batch_size"):
        sampled_without_replacement_rdp(11, 10, lambda a: a, [2.0])


# ----------------------------------------------------------------------------- DP-SRM, Lemma 3.7


def test_dp_srm_bound_value():
    orders = np.array([2.0, 4.0, 8.0])
    values = dp_srm_rdp_bound(2.0, 1e-4, orders)  # order limit ≈ 15.7 at α = 8
    np.testing.assert_allclose(values, 3.5 * 1e-4**2 * orders / 4.0, rtol=1e-12)
    assert np.all(values >= 3.5 * 1e-4**2 * orders / 4.0)


def test_dp_srm_sigma_condition():
    with pytest.raises(ValueError, match=r"sigma'\^2 >= 0.7"):
        dp_srm_rdp_bound(0.8, 0.01, [2.0])  # σ'² = 0.64


def test_dp_srm_order_condition():
    # σ' = 1, τ = 0.01: α ≤ (2/3)·log(1/(0.02 α)) + 1 holds at α = 2 (≈ 3.14), fails at α = 4
    with pytest.raises(ValueError, match="orders must satisfy alpha <= 2 sigma'"):
        dp_srm_rdp_bound(1.0, 0.01, [2.0, 4.0])
    values = dp_srm_rdp_bound(1.0, 0.01, [2.0, 4.0], invalid="inf")
    assert math.isfinite(values[0]) and math.isinf(values[1])


def test_dp_srm_bound_uses_integer_orders():
    # Lemma 3.7 is applied at α̂ = max(2, ⌈α⌉) (monotonicity of D_α): never below the integer-order value
    orders = np.array([1.000001, 1.5, 2.0, 2.5, 3.0])
    values = dp_srm_rdp_bound(2.0, 1e-4, orders)
    expected = 3.5 * 1e-4**2 * np.array([2.0, 2.0, 2.0, 3.0, 3.0]) / 4.0
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    assert np.all(values >= expected)
    # the order condition is checked at α̂: α = 3.1 → α̂ = 4 fails for σ' = 1, τ = 0.01
    assert math.isinf(dp_srm_rdp_bound(1.0, 0.01, [3.1], invalid="inf")[0])
