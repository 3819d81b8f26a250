"""Issue 14 items 2–3: continuous order search by default (down to α = 1 + 1e-6), the exact
accountant by default ("auto"), and the KL → TV rule that gives ε = 0 where it is valid."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
from dpcore.conversions import rdp_to_delta, rdp_to_epsilon, tv_bound_from_kl
from dpcore.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dpcore.rdp_accountant import MIN_ORDER, rdp_epsilon


def sgm(q, sigma, steps):
    return SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), q), steps)


def test_default_is_auto_and_exact_for_unsampled_gaussians():
    event = SelfComposedEvent(GaussianEvent(1.1), 100)
    res = dpcore.get_epsilon(event, 1e-5)
    assert res.accountant == "analytic_gaussian"
    exact = dpcore.analytic_gaussian_epsilon(1.1 / 10.0, 1e-5)  # μ = 10/1.1: one Gaussian of σ = 1.1/10
    assert res.epsilon == pytest.approx(exact, rel=1e-12) and res.epsilon >= exact
    assert 79.2 < res.epsilon < 79.3  # the RDP accountant reports 83.10
    assert dpcore.get_epsilon(event, 1e-5, accountant="rdp").epsilon > 83.0


def test_continuous_order_below_the_grid():
    # q = 0.01, σ = 0.1, T = 100: the grid stops at 1.1 (ε = 1041); the optimum is near α = 1.046
    res = dpcore.get_epsilon(sgm(0.01, 0.1, 100), 1e-5, accountant="rdp")
    grid = dpcore.get_epsilon(sgm(0.01, 0.1, 100), 1e-5, accountant="rdp", optimize_order=False)
    assert grid.epsilon > 1040
    assert res.epsilon < 415 and 1.0 < res.order < 1.05
    # valid: the RDP curve at the reported order, converted in mpmath, is below the reported ε
    certified = dpcore.get_epsilon(sgm(0.01, 0.1, 100), 1e-5, accountant="rdp", certify=True)
    assert certified.certified and certified.epsilon == res.epsilon


def test_continuous_order_reaches_close_to_one():
    res = dpcore.get_epsilon(sgm(0.01, 0.05, 10_000), 1e-5, accountant="rdp")
    assert MIN_ORDER <= res.order < 1.01
    assert res.epsilon < dpcore.get_epsilon(sgm(0.01, 0.05, 10_000), 1e-5, accountant="rdp",
                                            optimize_order=False).epsilon / 10


def test_explicit_orders_are_not_refined_unless_asked():
    orders = [2.0, 4.0, 8.0, 16.0]
    res = dpcore.get_epsilon(sgm(0.01, 1.1, 1000), 1e-5, accountant="rdp", orders=orders)
    assert res.order in orders
    refined = dpcore.get_epsilon(sgm(0.01, 1.1, 1000), 1e-5, accountant="rdp", orders=orders, optimize_order=True)
    assert refined.epsilon <= res.epsilon


@settings(max_examples=25, deadline=None)
@given(q=st.floats(1e-4, 0.5), sigma=st.floats(0.3, 10.0), steps=st.integers(1, 10_000))
def test_refined_epsilon_never_worse_than_grid_and_get_delta_consistent(q, sigma, steps):
    event = sgm(q, sigma, steps)
    grid = dpcore.get_epsilon(event, 1e-5, accountant="rdp", optimize_order=False).epsilon
    res = dpcore.get_epsilon(event, 1e-5, accountant="rdp")
    assert res.epsilon <= grid
    if 0 < res.epsilon < 1e4:
        # the reported (ε, order) pair is consistent: δ at ε from that order alone is ≤ δ
        at_order = dpcore.get_delta(event, res.epsilon, accountant="rdp", orders=[res.order])
        assert at_order.delta <= 1e-5 * (1 + 1e-9)
        # and the continuous δ search is never worse than the grid
        refined = dpcore.get_delta(event, res.epsilon, accountant="rdp")
        assert refined.delta <= dpcore.get_delta(event, res.epsilon, accountant="rdp", optimize_order=False).delta


def test_kl_tv_rule_gives_zero_where_valid():
    # q = 1e-6, σ = 5, T = 1000: KL ≤ D_{1+1e-6} ≈ 2e-11, TV ≤ √(KL/2) ≈ 3.2e-6 < δ = 1e-5
    event = sgm(1e-6, 5.0, 1000)
    res = dpcore.get_epsilon(event, 1e-5, accountant="rdp", certify=True)
    assert res.epsilon == 0.0 and res.method == "rdp->dp:kl_tv" and res.certified
    assert dpcore.get_delta(event, 0.0, accountant="rdp").delta < 1e-5
    assert dpcore.get_epsilon(event, 1e-5).epsilon == 0.0  # the default (auto) too
    # not where the TV bound exceeds δ
    assert dpcore.get_epsilon(event, 1e-6).epsilon > 0.0


def test_tv_bound_from_kl():
    assert tv_bound_from_kl(0.0) == 0.0
    assert tv_bound_from_kl(math.inf) == 1.0
    for kl in (1e-12, 1e-3, 0.5, 2.0, 50.0):
        with mpmath.workdps(40):
            exact = mpmath.sqrt(min(mpmath.mpf(kl) / 2, -mpmath.expm1(-mpmath.mpf(kl))))
        assert tv_bound_from_kl(kl) >= exact and float(tv_bound_from_kl(kl) / exact - 1) < 1e-11
    # the rule only fires from "best" and reports itself
    orders, rdp = np.array([1.5, 2.0]), np.array([1e-12, 2e-12])
    assert rdp_to_epsilon(orders, rdp, 1e-5) == (0.0, 1.5, "kl_tv")
    assert rdp_to_epsilon(orders, rdp, 1e-5, method="balle2020")[0] > 0
    assert rdp_to_delta(orders, rdp, 0.0)[2] == "kl_tv"


def test_rdp_epsilon_keeps_grid_by_default():
    res = rdp_epsilon(sgm(0.01, 1.1, 1000), 1e-5)
    assert res.details["optimized_order"] is False and MIN_ORDER not in res.details["orders"]


def test_auto_never_drops_a_failed_certification(monkeypatch):
    from dpcore import certify as certify_module
    from dpcore.result import CertificationError

    def fail(*args, **kwargs):
        raise CertificationError("forced")

    monkeypatch.setattr("dpcore.rdp_accountant.certify_rdp_epsilon", fail)
    monkeypatch.setattr(certify_module, "certify_rdp_epsilon", fail)
    with pytest.raises(CertificationError):
        dpcore.get_epsilon(sgm(0.01, 1.1, 100), 1e-5, certify=True)
