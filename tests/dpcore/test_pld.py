"""The PLD accountant (dpcore.pld): bounds against exact oracles and refusals.

Oracles: the exact analytic Gaussian (Balle & Wang 2018) for (composed) Gaussians, the exact
optimal composition (Kairouz, Oh, Viswanath 2015, in mpmath) for randomized response / (ε, δ)
compositions, the closed-form Laplace profile, and a brute-force numerical integration of the
composed Poisson-subsampled Gaussian profile for T ≤ 3 (test_pld_subsampled.py).
"""

import math

import mpmath
import pytest

import dpcore
from dpcore import (
    ApproxDpEvent,
    ComposedEvent,
    DpSrmEvent,
    GaussianEvent,
    LaplaceEvent,
    MechanismEvent,
    NoOpEvent,
    PoissonSampledEvent,
    PureDpEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    ShuffledEvent,
    UnsupportedEventError,
)
from dpcore.composition import optimal_composition_delta
from dpcore.gaussian_mechanism import analytic_gaussian_epsilon, gaussian_privacy_profile
from dpcore.pld import pld_delta, pld_epsilon


def _mp_gaussian_delta(mu: float, epsilon: float) -> mpmath.mpf:
    """Exact δ(ε) of the μ-Gaussian pair in mpmath (the float64 closed form is off by ~4e-15 at
    ε = 2, more than the upper bound's slack where ε is a grid point)."""
    with mpmath.workdps(40):
        eps, mu = mpmath.mpf(epsilon), mpmath.mpf(mu)
        return +(mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2))


def _bounds(result):
    lo, up = result.details["bounds"]
    assert lo <= up
    return lo, up


@pytest.mark.parametrize("sigma,count,delta", [(1.0, 1, 1e-5), (0.7, 1, 1e-3), (5.0, 10, 1e-5),
                                               (2.0, 100, 1e-6), (20.0, 1000, 1e-5)])
def test_gaussian_bounds_bracket_analytic_gaussian(sigma, count, delta):
    event = GaussianEvent(sigma) if count == 1 else SelfComposedEvent(GaussianEvent(sigma), count)
    exact = analytic_gaussian_epsilon(sigma / math.sqrt(count), delta)
    res = pld_epsilon(event, delta)
    lo, up = _bounds(res)
    assert res.epsilon == up
    assert lo <= exact <= up
    assert up - exact <= 1e-4 * exact  # tight: the upper bound is the connect-the-dots value


def test_heterogeneous_gaussians_bracket_analytic_gaussian():
    event = ComposedEvent([GaussianEvent(2.0), SelfComposedEvent(GaussianEvent(3.0), 5), NoOpEvent()])
    mu = math.sqrt(1 / 4 + 5 / 9)
    for delta in (1e-3, 1e-7):
        lo, up = _bounds(pld_epsilon(event, delta))
        assert lo <= analytic_gaussian_epsilon(1 / mu, delta) <= up


@pytest.mark.parametrize("epsilon", [0.0, 0.5, 2.0])
def test_gaussian_delta_bounds_bracket_analytic_gaussian(epsilon):
    event = SelfComposedEvent(GaussianEvent(4.0), 16)
    lo, up = _bounds(pld_delta(event, epsilon))
    exact = _mp_gaussian_delta(1.0, epsilon)
    assert lo <= exact <= up
    assert up <= exact * (1 + 1e-4) + 1e-12


@pytest.mark.parametrize("eps0,count,composed", [(0.5, 3, 0.8), (0.1, 20, 0.5), (1.0, 5, 1.0), (0.3, 7, 0.0)])
def test_randomized_response_composition_brackets_kov15(eps0, count, composed):
    exact = optimal_composition_delta(eps0, 0.0, count, composed)  # mpmath, KOV15 Thm 3.3
    res = pld_delta(SelfComposedEvent(PureDpEvent(eps0), count), composed)
    lo, up = _bounds(res)
    assert lo <= exact <= up
    assert up - exact <= 1e-3 * exact + 1e-12


def test_approx_dp_composition_brackets_kov15():
    exact = optimal_composition_delta(0.4, 1e-6, 6, 1.2)
    lo, up = _bounds(pld_delta(SelfComposedEvent(ApproxDpEvent(0.4, 1e-6), 6), 1.2))
    assert lo <= exact <= up


@pytest.mark.parametrize("b,epsilon", [(0.7, 0.3), (2.0, 0.1), (0.5, 1.5)])
def test_laplace_single_release_brackets_closed_form(b, epsilon):
    exact = max(0.0, 1.0 - math.exp((epsilon - 1.0 / b) / 2.0))  # profile of Lap(0,b) vs Lap(1,b)
    lo, up = _bounds(pld_delta(LaplaceEvent(b), epsilon))
    assert lo <= exact <= up
    assert up - exact <= 1e-6


def test_pure_dp_single_release_is_its_epsilon():
    res = pld_epsilon(PureDpEvent(0.7), 1e-9)
    lo, up = _bounds(res)
    # δ(ε) = e^0.7/(1 + e^0.7)·(1 − e^{ε−0.7}) below 0.7; the grid runs through ±0.7 (no split)
    exact = 0.7 + math.log1p(-1e-9 * (1 + math.exp(-0.7)))
    assert lo <= exact <= up <= exact + 1e-12


def test_profile_event_is_an_upper_bound_of_the_gaussian():
    mech = MechanismEvent("gauss-profile", privacy_profile=gaussian_privacy_profile(3.0))
    res = pld_epsilon(SelfComposedEvent(mech, 9), 1e-5)
    exact = analytic_gaussian_epsilon(1.0, 1e-5)
    assert exact <= res.epsilon <= exact * 1.02


def test_profile_event_rejects_out_of_range_values():
    mech = MechanismEvent("bad", privacy_profile=lambda e: 1.5)
    with pytest.raises(ValueError, match="privacy_profile"):
        pld_epsilon(mech, 1e-5)


@pytest.mark.parametrize("event", [
    SampledWithoutReplacementEvent(GaussianEvent(1.0), 10, 100),  # add_remove: γ not fixed
    SampledWithoutReplacementEvent(SelfComposedEvent(GaussianEvent(1.0, "replace_one"), 2), 10, 100),
    ShuffledEvent(1.0, 1000),
    DpSrmEvent(1.0, 0.1, 10),
    PoissonSampledEvent(GaussianEvent(1.0, "replace_one"), 0.1),
    PoissonSampledEvent(SelfComposedEvent(GaussianEvent(1.0), 2), 0.1),
    MechanismEvent("rdp-only", rdp=lambda a: a / 2.0),
])
def test_unsupported_events_raise(event):
    with pytest.raises(UnsupportedEventError):
        dpcore.get_epsilon(event, 1e-5, accountant="pld")
    with pytest.raises(UnsupportedEventError):
        dpcore.get_delta(event, 1.0, accountant="pld")


def test_auto_skips_pld_for_unsupported_events():
    event = SelfComposedEvent(MechanismEvent("rdp-only", rdp=lambda a: a / 2.0), 5)
    assert dpcore.get_epsilon(event, 1e-5, accountant="auto").accountant != "pld"


def test_auto_uses_pld_for_dp_sgd():
    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.1), 0.01), 1000)
    auto = dpcore.get_epsilon(event, 1e-5)
    rdp = dpcore.get_epsilon(event, 1e-5, accountant="rdp")
    assert auto.accountant == "pld" and auto.epsilon < rdp.epsilon
    assert auto.details["bounds"][1] == auto.epsilon


def test_bad_inputs():
    with pytest.raises(ValueError, match="discretization"):
        pld_epsilon(GaussianEvent(1.0), 1e-5, discretization=-1.0)
    with pytest.raises(ValueError, match="delta"):
        pld_epsilon(GaussianEvent(1.0), 1.5)
    with pytest.raises(ValueError, match="epsilon"):
        pld_delta(GaussianEvent(1.0), -1.0)
    with pytest.raises(UnsupportedEventError, match="grid points"):
        pld_epsilon(GaussianEvent(0.05), 1e-5, discretization=1e-7)


def test_noop_is_zero():
    res = pld_epsilon(NoOpEvent(), 1e-5)
    assert res.epsilon == 0.0 and res.details["bounds"] == (0.0, 0.0)


def test_certify_confirms_subsampled_gaussian_and_laplace():
    for event in (SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.5), 0.05), 50),
                  SelfComposedEvent(LaplaceEvent(3.0), 10)):
        plain = pld_epsilon(event, 1e-5)
        res = pld_epsilon(event, 1e-5, certify=True)
        assert res.certified and res.epsilon == plain.epsilon
        cert = res.details["certification"]
        assert cert["leaf_shortfall"] <= 0.0 and cert["final_delta"] <= 1e-5


def test_certify_detects_an_optimistic_leaf(monkeypatch):
    import dataclasses

    import dpcore.pld.certify as cert

    real = cert.discretize

    def shifted_down(model, h, tail, extended=True, wide=None):  # every loss one grid point too small
        leaf = real(model, h, tail, extended, wide)
        return dataclasses.replace(leaf, start=leaf.start - 1)

    monkeypatch.setattr(cert, "discretize", shifted_down)
    with pytest.raises(dpcore.CertificationError):
        pld_epsilon(SelfComposedEvent(GaussianEvent(2.0), 4), 1e-5, certify=True)


@pytest.mark.slow
def test_calibration_with_pld_meets_the_target_and_beats_rdp():
    kw = dict(sampling_rate=0.02, steps=300)
    cal = dpcore.calibrate_noise_multiplier(1.0, 1e-5, accountant="pld", **kw)
    assert cal.privacy.accountant == "pld" and cal.privacy.epsilon <= 1.0
    step = lambda s: SelfComposedEvent(PoissonSampledEvent(GaussianEvent(s), 0.02), 300)  # noqa: E731
    assert pld_epsilon(step(cal.value), 1e-5).epsilon <= 1.0  # re-checked independently
    assert pld_epsilon(step(cal.value * 0.999), 1e-5).epsilon > 1.0  # the root, not a bracket end
    assert cal.value < dpcore.calibrate_noise_multiplier(1.0, 1e-5, accountant="rdp", **kw).value


def test_cli_pld_prints_both_bounds(capsys):
    import json

    from dpcore.cli import main

    assert main(["epsilon", "--noise-multiplier", "1.5", "--sampling-rate", "0.05", "--steps", "100",
                 "--delta", "1e-5", "--accountant", "pld", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    lo, up = out["bounds"]
    assert out["accountant"] == "pld" and lo <= up == out["epsilon"]
    assert out["gap"] == pytest.approx(up - lo)


def test_delta_curve_brackets_the_analytic_gaussian_and_matches_pld_delta():
    from dpcore.pld import delta_curve

    event = SelfComposedEvent(GaussianEvent(4.0), 16)
    eps = [0.0, 0.5, 1.0, 2.0, 4.0]
    curve = delta_curve(event, eps)
    assert list(curve.epsilon) == eps and curve.relation == "add_remove"
    for e, lo, up in zip(eps, curve.delta_lower, curve.delta_upper):
        exact = _mp_gaussian_delta(1.0, e)
        assert lo <= exact <= up <= exact * (1 + 1e-4) + 1e-12
    assert all(a >= b for a, b in zip(curve.delta_upper, curve.delta_upper[1:]))  # δ(ε) decreasing


def test_delta_curve_takes_the_larger_order_of_neighbours():
    from dpcore.pld import delta_curve

    event = SelfComposedEvent(PoissonSampledEvent(GaussianEvent(0.9), 0.2), 3)
    curve = delta_curve(event, [0.1, 1.0, 3.0])
    for e, up in zip(curve.epsilon, curve.delta_upper):
        assert up >= pld_delta(event, float(e)).details["bounds"][0]
    with pytest.raises(ValueError, match="epsilons"):
        delta_curve(event, [])
    with pytest.raises(ValueError, match="epsilons"):
        delta_curve(event, [1.0, -0.5])


def test_cli_curve_prints_the_delta_curve_bounds(capsys):
    import json

    from dpcore.cli import main
    from dpcore.pld import delta_curve

    assert main(["curve", "--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--steps", "200",
                 "--epsilons", "0.5", "2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["curve"]
    ref = delta_curve(SelfComposedEvent(PoissonSampledEvent(GaussianEvent(1.1), 0.01), 200), [0.5, 2.0])
    assert [r["delta_upper"] for r in rows] == list(ref.delta_upper)
    assert all(r["delta_lower"] <= r["delta_upper"] for r in rows)
    assert main(["curve", "--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--steps", "5",
                 "--epsilons", "-1"]) == 2
    assert "epsilons" in capsys.readouterr().err
