"""The RDP accountant's curves are non-decreasing in the order within one call.

Rényi divergence is non-decreasing in α (van Erven & Harremoës 2014, Thm 3), so the accountant
replaces each value by the least one computed at a larger order of the same call. Reference: the
subsampled-Gaussian KL divergence (α → 1) by numerical integration, and the chord path's raw values
(which were not monotone near α = 1 before this post-processing).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from dpcore import ComposedEvent, GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dpcore.rdp.poisson_gaussian import poisson_subsampled_gaussian_rdp_with_precision
from dpcore.rdp_accountant import compute_rdp


def _kl_mixture(q: float, sigma: float) -> float:
    """KL((1−q)N(0,σ²) + qN(1,σ²) ‖ N(0,σ²)) by quadrature (the RDP at α → 1, remove order)."""
    def integrand(x):
        p = (1 - q) * stats.norm.pdf(x, 0, sigma) + q * stats.norm.pdf(x, 1, sigma)
        return p * math.log1p(q * math.expm1((2 * x - 1) / (2 * sigma**2)))
    return integrate.quad(integrand, -40 * sigma, 1 + 40 * sigma, limit=400)[0]


@pytest.mark.parametrize("q,sigma", [(0.5, 5.0), (0.9, 0.5)])
def test_subsampled_gaussian_near_order_one_is_repaired(q, sigma):
    alpha = np.array([1 + 1e-6, 1.0001, 1.1, 2.0])
    raw = poisson_subsampled_gaussian_rdp_with_precision(q, sigma, alpha)[0]
    curve = compute_rdp(PoissonSampledEvent(GaussianEvent(sigma), q), alpha)
    assert raw[0] > np.min(raw[1:])  # the raw chord value is loose there
    assert np.all(np.diff(curve) >= 0)
    assert np.all(curve <= raw)
    assert curve[0] == pytest.approx(np.min(raw), rel=0, abs=0)
    assert curve[0] >= _kl_mixture(q, sigma)  # still an upper bound of the divergence at α → 1


@settings(max_examples=25, deadline=None)
@given(q=st.floats(0.01, 1.0), sigma=st.floats(0.3, 20.0), steps=st.integers(1, 50),
       alpha=st.lists(st.floats(1.000001, 200.0), min_size=2, max_size=8))
def test_curve_is_nondecreasing_in_any_order_array(q, sigma, steps, alpha):
    alpha = np.array(alpha)
    event = ComposedEvent([SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), q), steps), GaussianEvent(3.0)])
    curve = compute_rdp(event, alpha)
    srt = np.argsort(alpha)
    assert np.all(np.diff(curve[srt]) >= 0)
    # never above the single-order values at any order ≥ it (the unsorted input order is kept)
    single = np.array([compute_rdp(event, np.array([a]))[0] for a in alpha])
    for i, a in enumerate(alpha):
        assert curve[i] <= np.min(single[alpha >= a])
