"""Numerical range of the PLD accountant: no float overflow, extreme parameters refused or bounded.

A RuntimeWarning from dpcore is an error under the project's pytest configuration, so calling a
path that used to overflow is itself the check; the values are checked against closed forms.
"""

import math

import numpy as np
import pytest

from dpcore import ApproxDpEvent, GaussianEvent, MechanismEvent, PureDpEvent, UnsupportedEventError
from dpcore.cli import main
from dpcore.pld import pld_epsilon
from dpcore.pld.leaves import PROFILE_MAX_EPSILON, PROFILE_SAMPLES, profile_model


def _heavy_profile(eps: float) -> float:
    """δ̂(ε) = e^{−ε/10}: still above 1e-300 at ε = 1e3, so the sampled range hits its cap."""
    return math.exp(-eps / 10.0)


def test_profile_model_caps_the_sampled_range_without_overflow():
    model = profile_model(_heavy_profile, "heavy")
    at = model.atoms
    finite = at.loss[at.loss < math.inf]
    assert finite.max() <= PROFILE_MAX_EPSILON + 1e-9
    # the profile's value at the cap is charged to δ in full (an atom at loss +∞)
    assert at.p[at.loss == math.inf].sum() == pytest.approx(_heavy_profile(PROFILE_MAX_EPSILON), rel=1e-12)
    # at the sampled ε the hull lies on or below the samples; the pair's masses are finite
    grid = np.linspace(0.0, PROFILE_MAX_EPSILON, PROFILE_SAMPLES)
    for eps in grid[[0, 12, 200, 781]]:
        assert model.profile(eps) <= _heavy_profile(eps) * (1 + 1e-9) + 1e-15
    assert math.isfinite(at.p.sum()) and math.isfinite(at.q.sum())


def test_heavy_profile_event_gives_a_finite_epsilon():
    res = pld_epsilon(MechanismEvent("heavy", privacy_profile=_heavy_profile), 1e-5)
    assert 0.0 < res.epsilon < 10.0 * math.log(1e5) + 1.0


@pytest.mark.parametrize("sigma", [1e308, 1e-300])
def test_extreme_gaussian_is_refused_not_overflowed(sigma):
    with pytest.raises(UnsupportedEventError, match="noise_multiplier"):
        pld_epsilon(GaussianEvent(sigma), 1e-5)


@pytest.mark.parametrize("event", [PureDpEvent(1e308), ApproxDpEvent(1e308, 1e-9)])
def test_huge_atom_loss_is_refused_not_overflowed(event):
    with pytest.raises(UnsupportedEventError, match="discretization"):
        pld_epsilon(event, 1e-5)


def test_pure_dp_beyond_exp_range_is_a_valid_bound():
    # e^800 overflows float64; the randomized-response masses come from a logistic instead.
    # Exact: δ(ε) = (1 − e^{ε−800})/(1 + e^{−800}) for ε < 800, so ε(δ) = 800 + log(1 − δ) (to 1e-340)
    res = pld_epsilon(PureDpEvent(800.0), 1e-5)
    lo, up = res.details["bounds"]
    assert lo <= 800.0 + math.log1p(-1e-5) <= up == res.epsilon <= 800.0 + res.details["discretization"]


@pytest.mark.parametrize("sigma", ["1e308", "1e-300"])
def test_cli_extreme_noise_multiplier_exits_2(sigma, capsys):
    code = main(["epsilon", "--accountant", "pld", "--noise-multiplier", sigma, "--sampling-rate", "0.01",
                 "--steps", "10", "--delta", "1e-5"])
    assert code == 2
    assert "--noise-multiplier" in capsys.readouterr().err  # the flag, not the library parameter (issue 22)


# --- tiny δ: the float-error terms must stay below δ (they used to make ε = inf) -----------------


def _kov15_epsilon(eps0: float, count: int, delta: float, lo: float, hi: float) -> float:
    """Exact ε(δ) of ``count`` × ε0-DP (KOV15 in mpmath) by bisection in [lo, hi]."""
    from scipy.optimize import brentq

    from dpcore.composition import optimal_composition_delta

    if optimal_composition_delta(eps0, 0.0, count, lo) <= delta:
        return lo
    return brentq(lambda e: optimal_composition_delta(eps0, 0.0, count, e) - delta, lo, hi, xtol=1e-12)


@pytest.mark.parametrize("eps0,count", [(5.0, 3), (0.01, 200)])
def test_pure_dp_composition_at_tiny_delta_brackets_kov15(eps0, count):
    from dpcore import SelfComposedEvent

    res = pld_epsilon(SelfComposedEvent(PureDpEvent(eps0), count), 1e-12)
    lo, up = res.details["bounds"]
    assert math.isfinite(up)
    exact = _kov15_epsilon(eps0, count, 1e-12, 0.0, eps0 * count)
    assert lo <= exact <= up
    assert up - exact <= 1e-2 * exact


def test_many_gaussians_at_tiny_delta_bracket_analytic_gaussian():
    from dpcore import ComposedEvent, SelfComposedEvent
    from dpcore.gaussian_mechanism import analytic_gaussian_epsilon

    exact = analytic_gaussian_epsilon(0.5, 1e-12)  # σ = 50 / sqrt(10⁴); 15.641125779…
    assert exact == pytest.approx(15.641125779, abs=1e-8)
    res = pld_epsilon(SelfComposedEvent(GaussianEvent(50.0), 10**4), 1e-12)
    lo, up = res.details["bounds"]
    assert lo <= exact <= up <= exact * (1 + 1e-5)
    # heterogeneous: the un-sampled Gaussians merge into one pair, the sampled leaf is composed
    mixed = ComposedEvent([SelfComposedEvent(GaussianEvent(50.0), 5000), SelfComposedEvent(GaussianEvent(25.0), 1250)])
    lo, up = pld_epsilon(mixed, 1e-12).details["bounds"]
    assert lo <= exact <= up <= exact * (1 + 1e-5)


def test_precise_fallback_keeps_the_float_error_below_delta():
    from dpcore import SelfComposedEvent
    from dpcore.pld.accountant import PRECISE_FRACTION

    res = pld_epsilon(SelfComposedEvent(PureDpEvent(5.0), 3), 1e-12)
    assert max(res.details["float_error"]) <= PRECISE_FRACTION * 1e-12
