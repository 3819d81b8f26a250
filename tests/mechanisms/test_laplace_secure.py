"""The secure (default) Laplace release: exact lattice output, exact discrete Laplace law, ε accounted.

Statistical tests use fixed seeds; each has false-alarm rate ALPHA = 1e-3 under a correct sampler.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpcore
from dpcore import events as ev
from mechanisms import Laplace
from mechanisms.exact_sampling import discrete_laplace_batch
from mechanisms.laplace import SECURE_SLACK

ALPHA = 1e-3
N = 20_000


def _discrete_laplace_chi2_pvalue(z, scale: Fraction) -> float:
    """χ² goodness of fit of integer draws z to P[z] ∝ exp(−|z|/scale).

    Cells: each integer in (−r, r) and the two tails |z| ≥ r, with r the largest cut-off whose
    tail P[Z ≥ r] = q^r/(1 + q), q = e^{−1/scale}, still expects ≥ 5 draws (χ² validity).
    """
    z = np.asarray(z, dtype=object).astype(np.int64)
    q = math.exp(-1 / scale)
    r = max(1, math.floor(math.log(5 * (1 + q) / z.size) / math.log(q)))
    tail = q**r / (1 + q)
    probs = [tail] + [(1 - q) / (1 + q) * q ** abs(y) for y in range(-r + 1, r)] + [tail]
    counts = [np.sum(z <= -r)] + [np.sum(z == y) for y in range(-r + 1, r)] + [np.sum(z >= r)]
    return stats.chisquare(counts, np.asarray(probs) * z.size).pvalue


@pytest.mark.parametrize("t, s", [(1, 1), (7, 10), (5, 2), (3, 1), (2**61 + 1, 2**61)],
                         ids=["1", "0.7", "2.5", "3", "object-path"])
def test_batch_sampler_matches_discrete_laplace_law(t, s):
    z = discrete_laplace_batch(np.random.default_rng(100 + s % 97), t, s, N)
    assert z.shape == (N,)
    assert _discrete_laplace_chi2_pvalue(z, Fraction(t, s)) > ALPHA


def test_batch_sampler_large_scale_falls_back_to_the_scalar_sampler():
    t, s = 2**62 + 3, 2**61  # scale ≈ 2: beyond int64-safe numerators, the CKS20 scalar sampler runs
    z = discrete_laplace_batch(np.random.default_rng(5), t, s, 4_000)
    assert _discrete_laplace_chi2_pvalue(z, Fraction(t, s)) > ALPHA


@pytest.mark.parametrize("lattice_scale", [Fraction(3), Fraction(5, 2)])
def test_secure_output_is_lattice_plus_exact_discrete_laplace(lattice_scale):
    # Δ = 2²⁰ makes the slack 1: g = largest 2^j ≤ 1/d = 2^-15 for d = N, and b = t·g
    mech = Laplace(float(lattice_scale) * 2.0**-15, sensitivity=2.0**20)
    g = mech.granularity(N)
    assert g == 2.0**-15
    value = np.linspace(-3.3, 7.1, N)
    out = mech.randomize(value, rng=7)
    lattice = out / g
    assert np.array_equal(lattice, np.round(lattice))  # every output lies on gℤ
    z = lattice - np.rint(value / g)
    assert _discrete_laplace_chi2_pvalue(z, lattice_scale) > ALPHA


def test_calibrated_secure_noise_is_laplace_to_within_the_lattice():
    # t = b/g ≈ 2³⁵: the discrete law's CDF is within ~1e-10 of Lap(b), far below KS resolution at N
    mech = Laplace.calibrate(0.5, sensitivity=2.0)
    out = mech.randomize(np.full(N, 1.25), rng=3)
    g = mech.granularity(N)
    assert np.array_equal(out / g, np.round(out / g))
    assert stats.kstest(out - 1.25, stats.laplace(scale=mech.scale).cdf).pvalue > ALPHA


def test_tiny_sensitivity_takes_the_exact_big_integer_path():
    # b/g ≈ 2¹⁰⁶⁰ lattice steps: Python-integer draws, scaled back exactly to outputs of size ≈ b
    mech = Laplace(1.0, sensitivity=1e-300)
    out = mech.randomize(np.zeros(200), rng=9)
    assert np.all(np.isfinite(out)) and 0.5 < np.mean(np.abs(out)) < 1.5  # E|Z|·g ≈ b = 1 (sd 0.07)


def test_secure_release_is_reproducible_from_a_seed():
    mech = Laplace.calibrate(1.0)
    value = np.array([[0.1, -2.0, 3.5], [1e6, 0.0, -7.25]])
    a = mech.randomize(value, rng=11)
    assert a.shape == value.shape and a.dtype == np.float64
    np.testing.assert_array_equal(a, mech.randomize(value, rng=np.random.default_rng(11)))
    assert not np.array_equal(a, mech.randomize(value, rng=12))
    assert np.ndim(mech.randomize(2.0, rng=1)) == 0


def test_float_path_is_the_numpy_sampler():
    mech = Laplace.calibrate(1.0, secure=False)
    value = np.arange(5.0)
    expected = value + np.random.default_rng(4).laplace(0.0, mech.scale, size=5)
    np.testing.assert_array_equal(mech.randomize(value, rng=4), expected)
    assert mech.pure_epsilon <= 1.0 and isinstance(mech.privacy_event(), ev.LaplaceEvent)


@settings(max_examples=60, deadline=None)
@given(epsilon=st.floats(1e-3, 50.0), sensitivity=st.floats(1e-6, 1e6), d=st.integers(1, 10**7))
def test_delivered_epsilon_is_accounted_for_every_dimension(epsilon, sensitivity, d):
    mech = Laplace.calibrate(epsilon, sensitivity=sensitivity)
    g = Fraction(mech.granularity(d))
    slack_delta = SECURE_SLACK * Fraction(sensitivity)
    assert d * g <= slack_delta < 2 * d * g  # the largest power of two allowed
    assert g.numerator == 1 or g.denominator == 1  # a power of two
    delivered = (Fraction(sensitivity) + d * g) / Fraction(mech.scale)
    assert delivered <= mech.delivered_epsilon(d) <= mech.pure_epsilon <= epsilon
    assert mech.privacy_event() == ev.PureDpEvent(mech.pure_epsilon, "add_remove")
    assert dpcore.get_epsilon(mech.privacy_event("replace_one"), 1e-6, accountant="composition").epsilon <= epsilon


@settings(max_examples=100, deadline=None)
@given(x=st.floats(-1e4, 1e4), move=st.floats(-1.0, 1.0), sensitivity=st.floats(1e-3, 1e3),
       d=st.integers(1, 1000))
def test_rounded_neighbours_stay_within_the_accounted_sensitivity(x, move, sensitivity, d):
    # Rounding to gℤ (np.rint, as randomize does) moves a coordinate pair apart by at most g, so the
    # pmf ratio exp(|k − k′|·g/b) of the released lattice points is ≤ exp(pure_epsilon).
    mech = Laplace.calibrate(1.0, sensitivity=sensitivity)
    g = mech.granularity(d)
    x2 = x + move * sensitivity
    while abs(Fraction(x2) - Fraction(x)) > Fraction(sensitivity):  # undo a rounding past Δ
        x2 = math.nextafter(x2, x)
    k, k2 = np.rint(x / g), np.rint(x2 / g)
    assert abs(Fraction(int(k)) - Fraction(int(k2))) * Fraction(g) / Fraction(mech.scale) <= mech.pure_epsilon


def test_secure_profile_is_the_pure_dp_worst_case():
    mech = Laplace.calibrate(1.0)
    eps0 = mech.pure_epsilon
    assert mech.privacy_profile(eps0) == 0.0
    for eps in (0.0, 0.3, 0.9):
        rr = (math.exp(eps0) - math.exp(eps)) / (1 + math.exp(eps0))
        assert rr <= mech.privacy_profile(eps) <= rr * (1 + 1e-12)
        assert mech.privacy_profile(eps) >= Laplace(mech.scale, secure=False).privacy_profile(eps)


@pytest.mark.parametrize("bad", [np.nan, [1.0, np.inf]])
def test_bad_values_raise_naming_value(bad):
    with pytest.raises(ValueError, match="value"):
        Laplace.calibrate(1.0).randomize(bad, rng=0)


def test_bad_arguments_raise_naming_them():
    with pytest.raises(ValueError, match="secure"):
        Laplace(1.0, secure="yes")
    with pytest.raises(ValueError, match="sensitivity"):
        Laplace(1.0, sensitivity=5e-324).randomize(np.zeros(10), rng=0)  # g would be below 2⁻¹⁰⁷⁴
    with pytest.raises(ValueError, match="dimension"):
        Laplace(1.0).granularity(0)
