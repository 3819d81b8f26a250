"""Pinned reference values from independent implementations and from mpmath at 40 digits.

Provenance
----------
* ``DPA``: Google ``dp_accounting`` 0.6.0 (PyPI), ``RdpAccountant`` with its default order grid
  ``DEFAULT_RDP_ORDERS`` (= ``dpcore.orders.DP_ACCOUNTING_ORDERS``) unless stated, ``compose(
  SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T))``,
  ``get_epsilon_and_optimal_order(δ)``; generated 2026-11-22 in a throwaway venv. At fractional
  orders dp_accounting 0.6 sums the *absolute values* of the MTZ19 series terms, which inflates
  the RDP (see ``_compute_log_a_frac``), so its ε is an upper bound that dpcore must not exceed;
  at integer orders it uses the exact binomial sum, so dpcore must agree closely.
* ``OPACUS``: Opacus 1.6.0, ``RDPAccountant`` with ``history = [(σ, q, T)]`` and
  ``get_privacy_spent(delta=δ)`` on its ``DEFAULT_ALPHAS`` grid (1.1, …, 10.9, 12, …, 63).
* ``MP40``: ε at the stated order by mpmath at 40 digits, computed independently of dpcore's
  series: D_α by the exact binomial sum (integer α) or by quadrature of
  E_{z∼N(0,σ²)}[(1−q+q e^{(2z−1)/(2σ²)})^α] (fractional α), times T, then the Balle et al. 2020
  conversion. dpcore's ε must be ≥ MP40 and within 1e-9 relative of it.
"""

import math

import numpy as np
import pytest

from dpcore.events import GaussianEvent, LaplaceEvent, PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent
from dpcore.orders import DP_ACCOUNTING_ORDERS
from dpcore.rdp_accountant import rdp_epsilon

OPACUS_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
INTEGER_ORDERS = list(range(2, 257))


def dp_sgd(q, sigma, steps):
    return SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), q), steps)


# (q, σ, T, δ, orders, DPA ε, DPA order, MP40 ε at that order or None, dpcore's optimal order)
POISSON = [
    # the headline setting: RDP ε ≈ 5.63199 on the usual grid
    (0.01, 1.1, 10_000, 1e-5, DP_ACCOUNTING_ORDERS, 5.632010670081592, 4.7, "5.631992368681801816674875", 4.7),
    (0.001, 0.9, 100_000, 1e-6, DP_ACCOUNTING_ORDERS, 2.4489275971972555, 9.7, "2.448927594213814786389694", 9.7),
    (0.1, 2.0, 1_000, 1e-5, DP_ACCOUNTING_ORDERS, 8.946956795817709, 3.5, "8.943850128067157216517651", 3.5),
    (0.02, 0.6, 500, 1e-5, DP_ACCOUNTING_ORDERS, 11.845616156468047, 2.4, "11.81707964912229296062641", 2.4),
    # large q: the absolute-value sum inflates dp_accounting's ε by 2.6 %
    (0.256, 4.0, 2_000, 1e-5, DP_ACCOUNTING_ORDERS, 17.61325541093575, 3.0, "17.16090511269815818735126", 2.6),
    # extreme: q = 1e-6, σ = 0.3, 10⁷ steps
    (1e-6, 0.3, 10_000_000, 1e-5, DP_ACCOUNTING_ORDERS, 9.678678478532738, 2.2, "9.677359635871817429112607", 2.2),
    # integer orders only: dp_accounting is exact here
    (0.01, 1.1, 10_000, 1e-5, INTEGER_ORDERS, 5.6543080001495145, 5, "5.654308000149488959756275", 5),
    (0.05, 1.5, 3_000, 1e-6, INTEGER_ORDERS, 12.443709437774121, 3, "12.4437094377741622999293", 3),
]


@pytest.mark.parametrize("q, sigma, steps, delta, orders, dpa, dpa_order, mp40, order", POISSON)
def test_poisson_subsampled_gaussian_against_dp_accounting_and_mpmath(q, sigma, steps, delta, orders, dpa, dpa_order, mp40, order):
    result = rdp_epsilon(dp_sgd(q, sigma, steps), delta, orders=orders)
    assert math.isfinite(result.epsilon)
    assert result.order == order
    exact = float(mp40)
    assert result.epsilon >= exact
    assert (result.epsilon - exact) / exact < 1e-9
    # never looser than dp_accounting; equal to it where dp_accounting is exact (integer orders)
    assert result.epsilon <= dpa * (1 + 1e-9)
    if float(dpa_order).is_integer() and all(float(a).is_integer() for a in orders):
        assert result.epsilon == pytest.approx(dpa, rel=1e-9)


# (q, σ, T, δ, Opacus ε, Opacus order, MP40 ε at that order)
OPACUS = [
    (0.01, 1.1, 10_000, 1e-5, 5.63199236854841, 4.7, "5.631992368681801816674875"),
    (0.004, 1.0, 60_000, 1e-5, 6.418567430009001, 4.4, "6.418567430454299568363234"),
]


@pytest.mark.parametrize("q, sigma, steps, delta, opacus, order, mp40", OPACUS)
def test_against_opacus(q, sigma, steps, delta, opacus, order, mp40):
    # Opacus evaluates the same signed series in float64 and lands ~1e-11 *below* the exact value;
    # dpcore agrees to 1e-9 and stays on the safe side of the 40-digit value.
    result = rdp_epsilon(dp_sgd(q, sigma, steps), delta, orders=OPACUS_ORDERS)
    assert result.order == order
    assert result.epsilon == pytest.approx(opacus, rel=1e-9)
    assert result.epsilon >= float(mp40)


# dp_accounting 0.6.0, RdpAccountant(None, NeighboringRelation.REPLACE_ONE),
# SelfComposedDpEvent(SampledWithoutReplacementDpEvent(n, m, GaussianDpEvent(σ)), T). Both use the
# Gaussian-specific Theorem 27 of WBK19 (dpcore evaluates its χ_k sums exactly and rounds up):
# dpcore's ε must be ≥ dp_accounting's and agree to 1e-9.
WOR = [
    (60_000, 256, 1.1, 10_000, 1e-5, 4.333408054180159, 1e-9),
    (10_000, 100, 2.0, 1_000, 1e-5, 1.445298242121019, 1e-9),
]


@pytest.mark.parametrize("n, m, sigma, steps, delta, dpa, slack", WOR)
def test_sampling_without_replacement_against_dp_accounting(n, m, sigma, steps, delta, dpa, slack):
    event = SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(sigma, "replace_one"), m, n), steps)
    eps = rdp_epsilon(event, delta, orders=DP_ACCOUNTING_ORDERS).epsilon
    assert dpa * (1 - 1e-12) <= eps <= dpa * (1 + slack)


# dp_accounting 0.6.0, RdpAccountant(), SelfComposedDpEvent(LaplaceDpEvent(b), T): Mironov Prop. 6.
LAPLACE = [(10.0, 100, 1e-5, 4.532685704039354, 5.8), (1.0, 10, 1e-6, 9.998981367929638, 1024.0)]


@pytest.mark.parametrize("b, steps, delta, dpa, order", LAPLACE)
def test_laplace_against_dp_accounting(b, steps, delta, dpa, order):
    result = rdp_epsilon(SelfComposedEvent(LaplaceEvent(b), steps), delta, orders=DP_ACCOUNTING_ORDERS)
    assert result.order == order
    assert result.epsilon == pytest.approx(dpa, rel=1e-9)
    assert result.epsilon >= dpa * (1 - 1e-12)


def test_default_grid_is_dp_accounting_grid_plus_large_orders():
    from dpcore.orders import DEFAULT_ORDERS

    assert DP_ACCOUNTING_ORDERS.size == 156
    np.testing.assert_array_equal(DEFAULT_ORDERS[:156], DP_ACCOUNTING_ORDERS)
    assert np.any(DEFAULT_ORDERS != np.floor(DEFAULT_ORDERS))
