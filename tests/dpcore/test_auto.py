"""``accountant="auto"`` (issue 22): never looser than any accountant it includes at that accountant's
default settings, and ``details["auto"]`` says which one won, which refused or failed, and why others were
not run. Oracles: each accountant's own default-settings result, computed independently."""

import math
import warnings

import pytest

import dpcore
from dpcore import (
    ApproxDpEvent,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    MechanismEvent,
    PoissonSampledEvent,
    PureDpEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)
from dpcore.accounting import ACCOUNTANTS
from dpcore.gaussian_mechanism import gaussian_privacy_profile

EVENTS = {
    "dp-sgd": SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.2), 0.05), 200),
    "two-phase": ComposedEvent([SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.0), 0.01), 1000),
                                SelfComposedEvent(PoissonSampledEvent(GaussianEvent(2.0), 0.02), 500)]),
    "gaussians": SelfComposedEvent(GaussianEvent(4.0), 9),
    "pure": SelfComposedEvent(PureDpEvent(0.3), 12),
    "laplace": SelfComposedEvent(LaplaceEvent(5.0), 8),
    "approx": SelfComposedEvent(ApproxDpEvent(0.2, 1e-9), 20),
    "wor": SelfComposedEvent(SampledWithoutReplacementEvent(GaussianEvent(1.5, "replace_one"), 20, 1000), 100),
    "profile": MechanismEvent("gauss", privacy_profile=gaussian_privacy_profile(2.0)),
}


def _others(event, delta):
    out = {}
    for name in ACCOUNTANTS:
        if name == "auto":
            continue
        try:
            out[name] = dpcore.get_epsilon(event, delta, accountant=name).epsilon
        except ValueError:  # UnsupportedEventError included
            pass
    return out


@pytest.mark.parametrize("name", sorted(EVENTS))
@pytest.mark.parametrize("delta", [1e-6, 1e-9])
def test_auto_is_never_above_an_included_accountant(name, delta):
    event = EVENTS[name]
    auto = dpcore.get_epsilon(event, delta)
    others = _others(event, delta)
    assert others and all(auto.epsilon <= value for value in others.values()), (auto.epsilon, others)
    assert auto.epsilon == min(others.values())  # and it is the best of them


def test_heterogeneous_schedule_at_small_delta_is_the_pld_not_rdp():
    """The issue's case: with the PLD bound infinite, auto fell back to RDP silently (3.650 against 3.2646)."""
    event = EVENTS["two-phase"]
    auto = dpcore.get_epsilon(event, 1e-9)
    pld = dpcore.get_epsilon(event, 1e-9, accountant="pld")
    assert auto.accountant == "pld" and auto.epsilon <= pld.epsilon < 3.2560
    assert auto.details["auto"]["bounds"]["rdp"] > 3.6


def test_details_say_who_won_and_why_others_were_not_run():
    details = dpcore.get_epsilon(EVENTS["dp-sgd"], 1e-6).details["auto"]
    assert details["chosen"] == "pld"
    assert set(details["bounds"]) == {"rdp", "pld"}
    assert "composition" in details["unsupported"] and not details["failed"]
    assert "never larger" in details["skipped"]["moments"]
    fast, default = details["pld"]["fast"], details["pld"]["default"]
    assert default["bounds"][1] == details["bounds"]["pld"] <= fast["bounds"][1]


def test_the_default_pld_is_skipped_only_when_the_fast_lower_bound_loses(monkeypatch):
    """A fast PLD whose lower bound is above the RDP bound: no upper bound of the same pairs can win, so the
    default-settings PLD is not run and the reason is recorded."""
    import dpcore.accounting as accounting

    calls = []
    real = accounting._pld_epsilon

    def spy(event, delta, certify, fast):
        calls.append(fast)
        result = real(event, delta, certify, fast)
        if fast:  # planted: a (valid) but loose fast run whose lower bound is already above RDP
            import dataclasses
            return dataclasses.replace(result, epsilon=100.0, details=dict(result.details, bounds=(99.0, 100.0)))
        return result

    monkeypatch.setattr(accounting, "_pld_epsilon", spy)
    res = dpcore.get_epsilon(EVENTS["dp-sgd"], 1e-6)
    assert calls == [True] and res.accountant == "rdp"
    assert "not needed" in res.details["auto"]["skipped"]["pld (default settings)"]


def test_the_fast_pld_alone_would_be_looser_than_the_default_pld():
    """Why auto refines: its former PLD (the fast grid alone) is above the default-settings PLD."""
    event = EVENTS["two-phase"]
    fast = dpcore.pld.pld_epsilon(event, 1e-9, fast=True).epsilon
    default = dpcore.pld.pld_epsilon(event, 1e-9).epsilon
    assert fast > default == dpcore.get_epsilon(event, 1e-9).epsilon


def test_a_failing_component_is_reported_with_a_warning(monkeypatch):
    import dpcore.accounting as accounting

    def broken(*args, **kwargs):
        raise FloatingPointError("planted overflow")

    monkeypatch.setattr(accounting, "_rdp_epsilon", broken)
    with pytest.warns(accounting.AccountantFailureWarning, match="rdp"):
        res = dpcore.get_epsilon(EVENTS["dp-sgd"], 1e-6)
    assert "planted overflow" in res.details["auto"]["failed"]["rdp"] and res.accountant == "pld"


def test_delta_queries_follow_the_same_rule():
    event = EVENTS["dp-sgd"]
    auto = dpcore.get_delta(event, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pld = dpcore.get_delta(event, 1.0, accountant="pld").delta
        rdp = dpcore.get_delta(event, 1.0, accountant="rdp").delta
    assert auto.delta <= min(pld, rdp) and math.isfinite(auto.delta)
