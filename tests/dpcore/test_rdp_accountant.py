"""The RDP accountant over the event tree: composition, relations, refusals, order optimisation,
certification, and the property tests of issue 2."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from dpcore.accounting import get_epsilon
from dpcore.certify import certify_rdp_epsilon
from dpcore.events import (
    ApproxDpEvent,
    ComposedEvent,
    DpSrmEvent,
    GaussianEvent,
    LaplaceEvent,
    MechanismEvent,
    NonPrivateEvent,
    NoOpEvent,
    PoissonSampledEvent,
    PureDpEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ShuffledEvent,
    UnsupportedEventError,
)
from dpcore.orders import DEFAULT_ORDERS
from dpcore.rdp import gaussian_rdp, laplace_rdp, poisson_subsampled_gaussian_rdp, pure_dp_rdp
from dpcore.rdp_accountant import compute_rdp, rdp_delta, rdp_epsilon
from dpcore.result import CertificationError


def dp_sgd(q, sigma, steps, relation="add_remove"):
    return SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma, relation), q), steps)


def analytic_gaussian_epsilon(sigma, delta):
    """Exact ε(δ) of the Gaussian mechanism with Δ = 1 (Balle & Wang 2018, Thm. 8)."""

    def excess(eps):
        return norm.cdf(1 / (2 * sigma) - eps * sigma) - math.exp(eps) * norm.cdf(-1 / (2 * sigma) - eps * sigma) - delta

    return 0.0 if excess(0.0) <= 0 else brentq(excess, 0.0, 500.0, xtol=1e-13)


ORDERS = np.array([1.5, 2.0, 3.25, 8.0, 32.0])


def test_composition_adds_and_self_composition_multiplies():
    a, b = dp_sgd(0.01, 1.0, 1).event, LaplaceEvent(3.0)
    composed = compute_rdp(ComposedEvent([a, SelfComposedEvent(b, 4)]), ORDERS)
    expected = poisson_subsampled_gaussian_rdp(0.01, 1.0, ORDERS) + 4 * laplace_rdp(3.0, ORDERS)
    assert np.all(composed >= expected)
    np.testing.assert_allclose(composed, expected, rtol=1e-10)


def test_leaves():
    np.testing.assert_array_equal(compute_rdp(NoOpEvent(), ORDERS), 0.0)
    assert np.all(np.isinf(compute_rdp(NonPrivateEvent(), ORDERS)))
    np.testing.assert_array_equal(compute_rdp(GaussianEvent(2.0), ORDERS), gaussian_rdp(2.0, ORDERS))
    np.testing.assert_array_equal(compute_rdp(PureDpEvent(0.5), ORDERS), pure_dp_rdp(0.5, ORDERS))
    assert rdp_epsilon(NonPrivateEvent(), 1e-5).epsilon == math.inf


def test_mechanism_event_curve_and_pure_epsilon():
    curve = MechanismEvent("half-gaussian", rdp=lambda a: a / 2.0)
    np.testing.assert_allclose(compute_rdp(curve, ORDERS), ORDERS / 2.0)
    capped = MechanismEvent("capped", rdp=lambda a: a / 2.0, pure_epsilon=1.0)
    assert np.all(compute_rdp(capped, ORDERS) <= 1.0 + 1e-9)
    np.testing.assert_array_equal(compute_rdp(MechanismEvent("pure", pure_epsilon=0.3), ORDERS), pure_dp_rdp(0.3, ORDERS))
    with pytest.raises(UnsupportedEventError, match="privacy profile"):
        compute_rdp(MechanismEvent("profile", privacy_profile=lambda e: 0.0), ORDERS)
    with pytest.raises(ValueError, match="rdp"):
        compute_rdp(MechanismEvent("bad", rdp=lambda a: -a), ORDERS)


def test_poisson_sampling_of_a_general_mechanism_uses_zhu_wang():
    event = PoissonSampledEvent(LaplaceEvent(2.0), 0.05)
    values = compute_rdp(event, ORDERS)
    assert np.all(values > 0) and np.all(values <= laplace_rdp(2.0, ORDERS))


@pytest.mark.parametrize(
    "event, message",
    [
        (dp_sgd(0.01, 1.0, 10, relation="replace_one"), "add_remove"),
        (SampledWithoutReplacementEvent(GaussianEvent(1.0), 10, 100), "replace_one"),
        (DpSrmEvent(1.0, 0.01, 10, relation="add_remove"), "replace_one"),
        (ApproxDpEvent(1.0, 1e-6), "no RDP curve"),
        (ShuffledEvent(1.0, 1000), "no RDP curve"),
    ],
)
def test_refuses_events_whose_analysis_does_not_hold(event, message):
    with pytest.raises(UnsupportedEventError, match=message):
        rdp_epsilon(event, 1e-5)
    assert issubclass(UnsupportedEventError, ValueError)


def test_dp_srm_event_is_steps_times_lemma_3_7_on_valid_orders():
    event = DpSrmEvent(noise_multiplier=4.0, sampling_rate=0.001, steps=1000)
    values = compute_rdp(event, ORDERS)
    # α = 32 violates α ≤ (2·16/3)·log(1/(0.001·α·17)) + 1: no bound there
    # (Lemma 3.7 is applied at the integer order max(2, ⌈α⌉))
    integer_orders = np.maximum(2.0, np.ceil(ORDERS))
    expected = np.where(integer_orders < 32, 1000 * 3.5 * 0.001**2 * integer_orders / 16.0, np.inf)
    np.testing.assert_allclose(values, expected, rtol=1e-10)
    result = rdp_epsilon(event, 1e-5)
    assert math.isfinite(result.epsilon)
    with pytest.raises(ValueError, match="0.7"):
        rdp_epsilon(DpSrmEvent(0.5, 0.01, 10), 1e-5)
    with pytest.raises(ValueError, match="orders must satisfy"):
        rdp_epsilon(DpSrmEvent(0.9, 0.9, 10), 1e-5)  # no order satisfies the condition


def test_result_records_provenance():
    r = rdp_epsilon(dp_sgd(0.01, 1.1, 1000), 1e-5)
    assert r.accountant == "rdp" and r.relation == "add_remove"
    assert r.method in ("rdp->dp:balle2020", "rdp->dp:mironov")
    assert r.order in DEFAULT_ORDERS and r.precision == "float64"
    assert len(r.details["orders"]) == len(r.details["rdp"]) == len(DEFAULT_ORDERS)
    d = rdp_delta(dp_sgd(0.01, 1.1, 1000), r.epsilon)
    assert d.delta <= 1e-5 * (1 + 1e-6)


def test_optimize_order_improves_and_remains_certified():
    event = dp_sgd(0.01, 1.1, 10000)
    grid = rdp_epsilon(event, 1e-5)
    fine = rdp_epsilon(event, 1e-5, optimize_order=True)
    assert fine.epsilon <= grid.epsilon
    assert fine.details["optimized_order"] and fine.order not in DEFAULT_ORDERS
    certified = certify_rdp_epsilon(event, 1e-5, fine)
    assert certified.certified and certified.details["certification"]["gap"] >= 0


def test_certification_catches_a_result_that_is_not_an_upper_bound():
    event = dp_sgd(0.02, 0.9, 500)
    result = rdp_epsilon(event, 1e-6)
    ok = certify_rdp_epsilon(event, 1e-6, result, dps=40)
    assert ok.certified and 0 <= ok.details["certification"]["relative_gap"] < 1e-6
    with pytest.raises(CertificationError, match="not an upper bound"):
        certify_rdp_epsilon(event, 1e-6, dataclasses.replace(result, epsilon=result.epsilon * (1 - 1e-8)))
    # a looser report is still an upper bound: certified, its looseness recorded
    loose = certify_rdp_epsilon(event, 1e-6, dataclasses.replace(result, epsilon=result.epsilon * (1 + 1e-4)), dps=40)
    assert loose.certified and loose.details["certification"]["relative_gap"] == pytest.approx(1e-4, rel=1e-3)
    # ... unless a tightness requirement is asked for
    with pytest.raises(CertificationError, match="rtol"):
        certify_rdp_epsilon(event, 1e-6, dataclasses.replace(result, epsilon=result.epsilon * (1 + 1e-4)), rtol=1e-6)


@pytest.mark.parametrize("sigma, q", [(0.005, 0.01), (0.009, 0.5)])
def test_certify_accepts_the_looser_chord_path_and_catches_an_under_report(sigma, q):
    """σ < 0.01 takes the convexity chord at fractional orders: a valid bound, 0.4-6 % above the
    mpmath quadrature here. certify=True certifies it (it used to raise CertificationError); a
    value just below the recomputation is refused."""
    event = dp_sgd(q, sigma, 10)
    result = rdp_epsilon(event, 1e-5, optimize_order=True)
    assert not float(result.order).is_integer()
    ok = certify_rdp_epsilon(event, 1e-5, result)
    cert = ok.details["certification"]
    assert ok.certified and 1e-3 < cert["relative_gap"] < 0.1
    assert cert["recomputed_epsilon"] < result.epsilon
    under = dataclasses.replace(result, epsilon=cert["recomputed_epsilon"] * (1 - 1e-9))
    with pytest.raises(CertificationError, match="not an upper bound"):
        certify_rdp_epsilon(event, 1e-5, under)
    # the public entry point, accountant 'rdp' and the default 'auto', no longer raises
    assert get_epsilon(event, 1e-5, accountant="rdp", certify=True).certified
    assert get_epsilon(event, 1e-5, certify=True).epsilon <= result.epsilon


def test_forced_precision_is_reported():
    r = rdp_epsilon(dp_sgd(0.01, 1.1, 100), 1e-5, orders=[2.0, 4.5, 9.0], dps=30)
    assert r.precision == "mpmath:30 digits"


def test_ten_million_steps_of_the_extreme_setting_is_finite():
    r = rdp_epsilon(dp_sgd(1e-6, 0.3, 10**7), 1e-5, orders=np.concatenate([DEFAULT_ORDERS, [10000.0]]))
    assert math.isfinite(r.epsilon) and 9.0 < r.epsilon < 10.0


@settings(max_examples=25, deadline=None)
@given(sigma=st.floats(0.3, 20.0), log_delta=st.floats(-25.0, -3.0))
def test_rdp_never_below_exact_analytic_gaussian(sigma, log_delta):
    delta = math.exp(log_delta)
    eps = rdp_epsilon(GaussianEvent(sigma), delta).epsilon
    assert eps >= analytic_gaussian_epsilon(sigma, delta) - 1e-9


@settings(max_examples=25, deadline=None)
@given(
    q=st.floats(1e-4, 0.5),
    sigma=st.floats(0.5, 5.0),
    steps=st.integers(1, 10**5),
    factor=st.floats(1.01, 3.0),
)
def test_epsilon_monotone_in_sigma_q_steps(q, sigma, steps, factor):
    eps = rdp_epsilon(dp_sgd(q, sigma, steps), 1e-5).epsilon
    assert rdp_epsilon(dp_sgd(q, sigma * factor, steps), 1e-5).epsilon <= eps
    assert rdp_epsilon(dp_sgd(min(1.0, q * factor), sigma, steps), 1e-5).epsilon >= eps
    assert rdp_epsilon(dp_sgd(q, sigma, int(steps * factor) + 1), 1e-5).epsilon >= eps


@settings(max_examples=20, deadline=None)
@given(q=st.floats(1e-3, 0.3), sigma=st.floats(0.5, 4.0), b=st.floats(0.5, 50.0), steps=st.integers(1, 1000))
def test_composition_never_cheaper_than_a_part(q, sigma, b, steps):
    part_a = dp_sgd(q, sigma, steps)
    part_b = LaplaceEvent(b)
    both = rdp_epsilon(ComposedEvent([part_a, part_b]), 1e-5).epsilon
    assert both >= rdp_epsilon(part_a, 1e-5).epsilon
    assert both >= rdp_epsilon(part_b, 1e-5).epsilon


def test_bad_input():
    with pytest.raises(ValueError, match="delta"):
        rdp_epsilon(GaussianEvent(1.0), 0.0)
    with pytest.raises(ValueError, match="orders"):
        rdp_epsilon(GaussianEvent(1.0), 1e-5, orders=[0.5])
    with pytest.raises(ValueError, match="event"):
        compute_rdp("gaussian", ORDERS)
    with pytest.raises(ValueError, match="epsilon"):
        rdp_delta(GaussianEvent(1.0), -1.0)


def test_certification_names_the_leaves_it_could_not_recompute_independently():
    poisson = ComposedEvent([dp_sgd(0.01, 1.1, 100), SelfComposedEvent(GaussianEvent(5.0), 3)])
    ok = certify_rdp_epsilon(poisson, 1e-5, rdp_epsilon(poisson, 1e-5))
    assert ok.details["certification"]["recomputed_by_the_fast_code"] == []
    wor = ComposedEvent([SelfComposedEvent(GaussianEvent(5.0, "replace_one"), 3),
                         SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(2.0, "replace_one"), 10, 1000), 5)])
    cert = certify_rdp_epsilon(wor, 1e-5, rdp_epsilon(wor, 1e-5))
    assert cert.certified
    assert cert.details["certification"]["recomputed_by_the_fast_code"] == ["SampledWithoutReplacementEvent(GaussianEvent)"]


def test_huge_dps_refused_naming_it():
    from dpcore.rdp_accountant import compute_rdp
    with pytest.raises(ValueError, match=r"^dps must be an integer in \[15, 1e\+04\]"):  # was OverflowError
        compute_rdp(PoissonSampledEvent(GaussianEvent(1.0), 0.01), [2.0], dps=10**400)
