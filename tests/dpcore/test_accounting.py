"""The accountant dispatcher: each accountant, 'auto', relations, user-defined mechanisms."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
from dpcore.events import (
    ComposedEvent,
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


def test_analytic_gaussian_accountant_is_exact_for_gaussian_compositions():
    # T Gaussians with multiplier s compose to one Gaussian with multiplier s / sqrt(T).
    event = ComposedEvent([SelfComposedEvent(GaussianEvent(4.0), 15), GaussianEvent(2.0)])
    mu = math.sqrt(15 / 16 + 1 / 4)
    res = dpcore.get_epsilon(event, 1e-5, accountant="analytic_gaussian")
    assert res.epsilon == pytest.approx(dpcore.analytic_gaussian_epsilon(1 / mu, 1e-5), rel=1e-12)
    # It is tight, so the RDP route can never beat it.
    assert dpcore.get_epsilon(event, 1e-5, accountant="rdp").epsilon >= res.epsilon


def test_auto_returns_the_smallest_valid_epsilon():
    event = SelfComposedEvent(GaussianEvent(3.0), 10)
    auto = dpcore.get_epsilon(event, 1e-6, accountant="auto")
    rdp = dpcore.get_epsilon(event, 1e-6, accountant="rdp")
    ana = dpcore.get_epsilon(event, 1e-6, accountant="analytic_gaussian")
    assert auto.epsilon == min(rdp.epsilon, ana.epsilon)
    assert auto.accountant == "analytic_gaussian"


def test_auto_records_what_it_tried():
    event = SelfComposedEvent(GaussianEvent(3.0), 10)
    auto = dpcore.get_epsilon(event, 1e-6)
    tried = auto.details["auto"]
    assert tried["chosen"] == auto.accountant == "analytic_gaussian"
    assert set(tried["bounds"]) == {"rdp", "analytic_gaussian"}
    assert "exact" in tried["skipped"]["pld"]  # no bound of the same pairs can be below the exact value
    pld = dpcore.get_epsilon(event, 1e-6, accountant="pld")
    assert pld.details["bounds"][0] <= auto.epsilon <= pld.epsilon  # the exact value is inside the PLD's bracket
    assert tried["bounds"]["analytic_gaussian"] == auto.epsilon == min(tried["bounds"].values())
    assert set(tried["unsupported"]) == {"composition", "shuffle", "profile"}
    assert "ShuffledEvent" in tried["unsupported"]["shuffle"] and tried["failed"] == {}
    assert "auto" in auto.to_dict()["details"]


def test_auto_reports_an_accountant_whose_numerics_failed(monkeypatch):
    """A numerical failure (ArithmeticError) of one accountant is skipped visibly: warning + details."""
    import dpcore.accounting as accounting

    def broken(*args, **kwargs):
        raise OverflowError("math range error (planted)")

    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.0), 0.02), 100)
    clean = dpcore.get_epsilon(event, 1e-5)
    assert clean.accountant == "pld"
    pld_epsilon = accounting._pld_epsilon
    monkeypatch.setattr(accounting, "_pld_epsilon", broken)
    with pytest.warns(accounting.AccountantFailureWarning, match=r"pld \(OverflowError: math range error \(planted\)\)"):
        res = dpcore.get_epsilon(event, 1e-5)
    assert res.details["auto"]["failed"] == {"pld": "OverflowError: math range error (planted)"}
    assert res.accountant == res.details["auto"]["chosen"] == "rdp"
    assert res.epsilon == dpcore.get_epsilon(event, 1e-5, accountant="rdp").epsilon > clean.epsilon
    monkeypatch.setattr(accounting, "_pld_delta", broken)
    with pytest.warns(accounting.AccountantFailureWarning, match="pld"):
        d = dpcore.get_delta(event, 2.0)
    assert d.accountant == "rdp" and "pld" in d.details["auto"]["failed"]
    # when every accountant that supports the event fails, the failure itself is raised
    monkeypatch.setattr(accounting, "_rdp_epsilon", broken)
    with pytest.raises(OverflowError, match="planted"):
        dpcore.get_epsilon(event, 1e-5)
    # a certification failure is never skipped
    def uncertified(*args, **kwargs):
        raise dpcore.CertificationError("planted")

    monkeypatch.setattr(accounting, "_rdp_epsilon", uncertified)
    monkeypatch.setattr(accounting, "_pld_epsilon", pld_epsilon)  # pld would give a bound
    with pytest.raises(dpcore.CertificationError, match="planted"):
        dpcore.get_epsilon(event, 1e-5, certify=True)


def test_composition_accountant_uses_optimal_composition_for_homogeneous_parts():
    event = SelfComposedEvent(PureDpEvent(0.1), 50)
    res = dpcore.get_epsilon(event, 1e-6, accountant="composition")
    assert res.epsilon <= 50 * 0.1
    assert res.epsilon == pytest.approx(dpcore.optimal_composition_epsilon(0.1, 0.0, 50, 1e-6), rel=1e-6)


def test_laplace_event_is_pure_dp_in_composition():
    res = dpcore.get_epsilon(ComposedEvent([LaplaceEvent(2.0), PureDpEvent(0.25)]), 1e-5, accountant="composition")
    assert res.epsilon == pytest.approx(0.75)


def test_nonprivate_release_reports_infinite_epsilon():
    res = dpcore.get_epsilon(ComposedEvent([GaussianEvent(1.0), NonPrivateEvent()]), 1e-5)
    assert math.isinf(res.epsilon)


def test_noop_costs_nothing():
    e = SelfComposedEvent(GaussianEvent(2.0), 3)
    with_noop = ComposedEvent([e, NoOpEvent()])
    assert dpcore.get_epsilon(with_noop, 1e-5).epsilon == dpcore.get_epsilon(e, 1e-5).epsilon


def test_relations_are_enforced():
    with pytest.raises(UnsupportedEventError):
        dpcore.get_epsilon(PoissonSampledEvent(GaussianEvent(1.0, "replace_one"), 0.1), 1e-5)
    with pytest.raises(UnsupportedEventError):
        dpcore.get_epsilon(SampledWithoutReplacementEvent(GaussianEvent(1.0, "add_remove"), 10, 100), 1e-5)
    with pytest.raises(UnsupportedEventError):
        dpcore.get_epsilon(ShuffledEvent(1.0, 1000, relation="add_remove"), 1e-6, accountant="shuffle")


def test_shuffled_event_through_auto():
    res = dpcore.get_epsilon(ShuffledEvent(2.0, 10_000), 1e-6, accountant="auto")
    assert res.accountant == "shuffle" and 0 < res.epsilon < 2.0


def test_user_defined_mechanism_composes_with_builtins():
    sigma = 2.0

    def my_rdp(orders):  # a user's Gaussian, written outside dpcore
        return np.asarray(orders, dtype=float) / (2 * sigma**2)

    mine = MechanismEvent("my-gaussian", rdp=my_rdp)
    both = ComposedEvent([SelfComposedEvent(mine, 5), SelfComposedEvent(GaussianEvent(sigma), 5)])
    ref = SelfComposedEvent(GaussianEvent(sigma), 10)
    assert dpcore.get_epsilon(both, 1e-5, accountant="rdp").epsilon == pytest.approx(
        dpcore.get_epsilon(ref, 1e-5, accountant="rdp").epsilon, rel=1e-9)


@pytest.mark.parametrize("bad", [0.0, 1.0, -1e-5, math.nan])
def test_bad_delta(bad):
    with pytest.raises(ValueError, match="delta"):
        dpcore.get_epsilon(GaussianEvent(1.0), bad)


def test_bad_accountant_name():
    with pytest.raises(ValueError, match="accountant"):
        dpcore.get_epsilon(GaussianEvent(1.0), 1e-5, accountant="magic")


@pytest.mark.parametrize("bad", ["no", "yes", 1, None])
def test_certify_must_be_a_bool(bad):
    """certify="no" is truthy: it was read as certify=True (and "yes" / 1 / None by their truth values)."""
    with pytest.raises(ValueError, match="certify must be True or False"):
        dpcore.get_epsilon(GaussianEvent(1.0), 1e-5, certify=bad)
    assert dpcore.get_epsilon(GaussianEvent(1.0), 1e-5, certify=np.bool_(False)).epsilon > 0


def test_get_delta_inverts_get_epsilon():
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.0), 0.02), 500)
    eps = dpcore.get_epsilon(event, 1e-5).epsilon
    assert dpcore.get_delta(event, eps).delta <= 1e-5 * (1 + 1e-6)


@pytest.mark.parametrize("sigma,q,steps,delta", [(0.8, 0.01, 1000, 1e-9), (1.0, 1e-3, 10_000, 1e-5),
                                                 (1.0, 1e-4, 100_000, 1e-9), (0.7, 0.2, 20, 1e-5)])
def test_get_delta_at_get_epsilon_is_consistent(sigma, q, steps, delta):
    # δ and ε queries choose their own grids, so δ(ε(δ)) ≤ δ holds only up to the δ query's own
    # precision; what is certified is that its lower bound is ≤ δ (the exact δ at ε(δ) is)
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(sigma), q), steps)
    eps = dpcore.get_epsilon(event, delta, accountant="pld").epsilon
    res = dpcore.get_delta(event, eps, accountant="pld")
    lower, upper = res.details["bounds"]
    assert lower <= delta
    assert upper <= delta * (1 + res.details["relative_gap"])


@settings(max_examples=25, deadline=None)
@given(
    s1=st.floats(0.6, 5.0), s2=st.floats(0.6, 5.0),
    q=st.floats(1e-3, 0.5), t=st.integers(1, 2000),
)
def test_composition_is_never_cheaper_than_a_part(s1, s2, q, t):
    a = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(s1), q), t)
    b = PoissonSampledEvent(GaussianEvent(s2), q)
    both = dpcore.get_epsilon(ComposedEvent([a, b]), 1e-5).epsilon
    for part in (a, b):
        res = dpcore.get_epsilon(part, 1e-5)
        # a numerical (PLD) upper bound may move within its reported bounds from one grid to another
        assert both >= res.details.get("bounds", (res.epsilon,))[0]


def test_profile_accountant_inverts_a_user_privacy_profile():
    from dpcore.gaussian_mechanism import analytic_gaussian_delta, analytic_gaussian_epsilon

    mech = MechanismEvent("profile-only gaussian", privacy_profile=lambda e: analytic_gaussian_delta(2.0, e))
    res = dpcore.get_epsilon(mech, 1e-6, accountant="profile")
    exact = analytic_gaussian_epsilon(2.0, 1e-6)
    assert exact <= res.epsilon <= exact * (1 + 1e-12)
    assert dpcore.get_epsilon(mech, 1e-6, accountant="auto").accountant == "profile"
    with pytest.raises(UnsupportedEventError):
        dpcore.get_epsilon(SelfComposedEvent(mech, 2), 1e-6, accountant="profile")


def test_auto_skips_an_accountant_beyond_its_range():
    # exact optimal composition refuses 1e12 counts (UnsupportedEventError): auto answers with RDP
    event = SelfComposedEvent(PureDpEvent(1.0), 10**12)
    result = dpcore.get_epsilon(event, 1e-6)
    assert math.isfinite(result.epsilon) and result.method.startswith("rdp")


def test_get_delta_at_minus_zero_reports_plus_zero():
    # epsilon=-0.0 is epsilon 0; the result echoed -0.0 and `dpcore delta --epsilon -0.0` printed "epsilon -0"
    from dpcore import GaussianEvent, get_delta
    res = get_delta(GaussianEvent(1.0), -0.0)
    assert res.epsilon == 0.0 and math.copysign(1.0, res.epsilon) == 1.0
    assert res.delta == get_delta(GaussianEvent(1.0), 0.0).delta
