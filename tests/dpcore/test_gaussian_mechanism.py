"""Gaussian mechanism: classic σ (Dwork & Roth Thm A.1) and the exact analytic Gaussian (Balle & Wang 2018)."""

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.gaussian_mechanism import (
    analytic_gaussian_delta,
    analytic_gaussian_epsilon,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_privacy_profile,
)


def exact_delta(sigma, epsilon, sensitivity=1.0, dps=60):
    """Balle & Wang Thm 8 at ``dps`` digits (independent of the float / fallback logic)."""
    with mpmath.workdps(dps):
        s, e, d = mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.mpf(sensitivity)
        return mpmath.ncdf(d / (2 * s) - e * s / d) - mpmath.exp(e) * mpmath.ncdf(-d / (2 * s) - e * s / d)


def integrated_delta(sigma, epsilon, sensitivity=1.0):
    """δ(ε) = ∫ [φ_σ(x) − e^ε φ_σ(x − Δ)]_+ dx by mpmath quadrature of the densities (40 digits).

    The integrand is positive exactly for x < Δ/2 − εσ²/Δ (privacy loss > ε).
    """
    with mpmath.workdps(40):
        s, e, d = mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.mpf(sensitivity)
        x0 = d / 2 - e * s * s / d
        dens = lambda x: mpmath.npdf(x, 0, s) - mpmath.exp(e) * mpmath.npdf(x, d, s)  # noqa: E731
        return mpmath.quad(dens, [-mpmath.inf, x0 - 10 * s, x0 - s, x0])


# ----------------------------------------------------------------------------------- pinned values


def test_analytic_sigma_reference_value():
    # Issue 2 reference: ε = 1, δ = 1e-5, Δ = 1 → σ = 3.73063163481594.
    sigma = analytic_gaussian_sigma(1.0, 1e-5)
    assert sigma == pytest.approx(3.73063163481594, rel=1e-12)
    with mpmath.workdps(40):
        root = mpmath.findroot(lambda s: exact_delta(s, 1.0, dps=40) - mpmath.mpf("1e-5"), 3.73)
    assert mpmath.mpf(sigma) >= root
    assert (sigma - root) / root < 1e-10
    assert analytic_gaussian_delta(sigma, 1.0) <= 1e-5


# dp-accounting 0.6.0 (pip, throwaway venv): GaussianPrivacyLoss(standard_deviation=σ,
# sensitivity=Δ).get_delta_for_epsilon(ε).
DP_ACCOUNTING_DELTAS = [
    (1.0, 1.0, 1.0, 0.12693673750664392),
    (3.73063163481594, 1.0, 1.0, 1.000000000000065e-05),
    (2.0, 1.0, 0.5, 0.05244032328766968),
    (0.5, 1.0, 4.0, 0.08495331867107113),
    (10.0, 2.0, 0.1, 0.04148168846071831),
    (1.0, 1.0, 0.0, 0.3829249225480263),
]


@pytest.mark.parametrize("sigma,sensitivity,epsilon,reference", DP_ACCOUNTING_DELTAS)
def test_delta_matches_dp_accounting(sigma, sensitivity, epsilon, reference):
    assert analytic_gaussian_delta(sigma, epsilon, sensitivity) == pytest.approx(reference, rel=1e-11)


# dp-accounting 0.6.0: pld.accountant.get_smallest_gaussian_noise(DifferentialPrivacyParameters(ε, δ), 1,
# sensitivity=Δ). Its search stops at ~1e-8 relative above the root, so ours must be ≤ and close.
DP_ACCOUNTING_SIGMAS = [
    (1.0, 1e-5, 1.0, 3.730631664679545),
    (0.5, 1e-6, 1.0, 8.057618494235985),
    (2.0, 1e-10, 3.0, 9.077380633855324),
    (8.0, 1e-5, 1.0, 0.6002290725849286),
]


@pytest.mark.parametrize("epsilon,delta,sensitivity,reference", DP_ACCOUNTING_SIGMAS)
def test_sigma_matches_dp_accounting(epsilon, delta, sensitivity, reference):
    sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    assert sigma <= reference
    assert sigma == pytest.approx(reference, rel=1e-7)


# ---------------------------------------------------------------------- exactness and safe rounding

GRID = [
    (1.0, 1.0, 1.0),
    (3.0, 0.5, 2.0),
    (0.3, 10.0, 1.0),  # large ε, small σ
    (1e6, 1e-7, 1.0),  # σ huge, ε tiny: the two terms cancel (mpmath fallback)
    (1e3, 1e-7, 1.0),
    (20.0, 0.05, 1.0),
    (1.0, 30.0, 1.0),  # δ ≈ 1e-120: far below float64's normal range for the naive formula
    (5.0, 2.0, 0.5),
    (0.05, 0.0, 1.0),  # δ(0) = 2Φ(10) − 1, just below 1
]


@pytest.mark.parametrize("sigma,epsilon,sensitivity", GRID)
def test_delta_is_an_upper_bound_within_1e_10(sigma, epsilon, sensitivity):
    got = analytic_gaussian_delta(sigma, epsilon, sensitivity)
    exact = exact_delta(sigma, epsilon, sensitivity)
    assert mpmath.mpf(got) >= exact
    assert (mpmath.mpf(got) - exact) / exact < 1e-10


@pytest.mark.parametrize("sigma,epsilon,sensitivity", [(1.0, 1.0, 1.0), (2.0, 0.3, 1.0), (0.7, 2.5, 1.5), (4.0, 0.0, 1.0)])
def test_delta_matches_numerical_integration_of_the_densities(sigma, epsilon, sensitivity):
    got = analytic_gaussian_delta(sigma, epsilon, sensitivity)
    assert got == pytest.approx(float(integrated_delta(sigma, epsilon, sensitivity)), rel=1e-12)


def test_underflowing_delta_is_rounded_up_not_to_zero():
    # δ(ε) = exp(−(b−a)²/2)·… with b = εσ = 3000: about e^{−4.5e6}, below the smallest float.
    assert analytic_gaussian_delta(100.0, 30.0) == 5e-324
    assert analytic_gaussian_delta(1e8, 1.0) > 0.0
    assert analytic_gaussian_delta(1.0, 1e300) == 5e-324  # far outside mpmath's comfortable range


def test_delta_near_one_is_capped_at_one():
    assert analytic_gaussian_delta(1e-300, 1.0) == 1.0  # δ = 1 − (something below 1e-300)
    assert analytic_gaussian_delta(0.01, 0.0) == 1.0


def test_profile_is_the_unit_sensitivity_delta():
    profile = gaussian_privacy_profile(2.5)
    for eps in (0.0, 0.1, 1.0, 5.0):
        assert profile(eps) == analytic_gaussian_delta(2.5, eps, 1.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        gaussian_privacy_profile(0.0)


@pytest.mark.parametrize("sigma,delta,sensitivity", [(1.0, 1e-5, 1.0), (0.5, 1e-10, 1.0), (100.0, 1e-5, 1.0),
                                                     (1e-3, 1e-12, 1.0), (6.0, 1e-6, 2.0)])
def test_epsilon_is_the_least_safe_root(sigma, delta, sensitivity):
    eps = analytic_gaussian_epsilon(sigma, delta, sensitivity)
    assert exact_delta(sigma, eps, sensitivity) <= delta
    assert exact_delta(sigma, eps * (1 - 1e-10), sensitivity) > delta
    assert analytic_gaussian_delta(sigma, eps, sensitivity) <= delta


def test_epsilon_zero_when_total_variation_already_below_delta():
    # δ(0) = 2Φ(1/(2σ)) − 1 ≈ 0.133 for σ = 3.
    assert analytic_gaussian_epsilon(3.0, 0.4) == 0.0
    assert analytic_gaussian_epsilon(3.0, 0.1) > 0.0


# --------------------------------------------------------------------------------- classic formula


def test_classic_sigma_formula_and_validity():
    sigma = classic_gaussian_sigma(0.5, 1e-5, 2.0)
    assert sigma == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5, rel=1e-15)
    # the classic σ is a valid (ε, δ) calibration for ε < 1, so it is ≥ the least (analytic) σ
    for eps, delta in [(0.1, 1e-5), (0.5, 1e-8), (0.99, 1e-3)]:
        classic = classic_gaussian_sigma(eps, delta)
        assert classic >= analytic_gaussian_sigma(eps, delta)
        assert analytic_gaussian_delta(classic, eps) <= delta


@pytest.mark.parametrize("eps", [1.0, 2.0, math.inf])
def test_classic_refuses_epsilon_at_least_one(eps):
    with pytest.raises(ValueError, match="epsilon"):
        classic_gaussian_sigma(eps, 1e-5)


# ----------------------------------------------------------------------------- property tests

@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    epsilon=st.floats(0.01, 20.0),
    log10_delta=st.floats(-12.0, -0.5),
    sensitivity=st.floats(0.1, 10.0),
)
def test_calibration_meets_target_and_is_least(epsilon, log10_delta, sensitivity):
    delta = 10.0**log10_delta
    sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    assert analytic_gaussian_delta(sigma, epsilon, sensitivity) <= delta
    assert exact_delta(sigma * (1 - 1e-10), epsilon, sensitivity) > delta


@settings(max_examples=25, deadline=None, derandomize=True)
@given(sigma=st.floats(0.05, 50.0), eps=st.floats(0.0, 10.0), factor=st.floats(1.001, 3.0))
def test_delta_monotone_in_epsilon_and_sigma(sigma, eps, factor):
    d = analytic_gaussian_delta(sigma, eps)
    assert analytic_gaussian_delta(sigma, eps * factor + 1e-3) <= d
    assert analytic_gaussian_delta(sigma * factor, eps) <= d


# -------------------------------------------------------------------------------------- bad input

NAN = float("nan")


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: analytic_gaussian_delta(0.0, 1.0), "sigma"),
        (lambda: analytic_gaussian_delta(-1.0, 1.0), "sigma"),
        (lambda: analytic_gaussian_delta(NAN, 1.0), "sigma"),
        (lambda: analytic_gaussian_delta(1.0, -0.1), "epsilon"),
        (lambda: analytic_gaussian_delta(1.0, NAN), "epsilon"),
        (lambda: analytic_gaussian_delta(1.0, 1.0, 0.0), "sensitivity"),
        (lambda: analytic_gaussian_epsilon(1.0, 0.0), "delta"),
        (lambda: analytic_gaussian_epsilon(1.0, 1.0), "delta"),
        (lambda: analytic_gaussian_epsilon(1.0, NAN), "delta"),
        (lambda: analytic_gaussian_epsilon(math.inf, 1e-5), "sigma"),
        (lambda: analytic_gaussian_sigma(0.0, 1e-5), "epsilon"),
        (lambda: analytic_gaussian_sigma(-1.0, 1e-5), "epsilon"),
        (lambda: analytic_gaussian_sigma(1.0, 1.5), "delta"),
        (lambda: analytic_gaussian_sigma(1.0, 1e-5, -2.0), "sensitivity"),
        (lambda: classic_gaussian_sigma(0.0, 1e-5), "epsilon"),
        (lambda: classic_gaussian_sigma(0.5, 0.0), "delta"),
        (lambda: classic_gaussian_sigma(0.5, 1e-5, NAN), "sensitivity"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(eps=st.floats(0.01, 30.0), log10_delta=st.floats(-12, -1))
def test_epsilon_of_calibrated_sigma_never_exceeds_the_target(eps, log10_delta):
    """Round trip ε → σ → ε stays on the safe side (mechanisms re-check through this route)."""
    delta = 10.0**log10_delta
    sigma = analytic_gaussian_sigma(eps, delta)
    assert analytic_gaussian_epsilon(sigma, delta) <= eps


def test_epsilon_beyond_float_range_is_inf():
    # σ/Δ = 1e-320: the doubling search for ε reached inf and brentq failed on NaN ("The function value at
    # x=inf is NaN"); the docstring promises inf (a valid upper bound)
    assert analytic_gaussian_epsilon(1e-320, 1e-5) == math.inf
    assert analytic_gaussian_epsilon(1e-150, 1e-5) == pytest.approx(5e299, rel=1e-9)  # ≈ 1/(2σ²), still finite
