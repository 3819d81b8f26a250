"""Privacy curves the mechanisms hand to dpcore, checked against independent computations."""

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate

import dpcore
from mechanisms import DiscreteGaussian, Gaussian, GeneralizedGaussian, Laplace
from mechanisms.discrete import discrete_gaussian_delta


@pytest.mark.parametrize("eps0", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("frac", [0.0, 0.3, 0.9, 1.2])
def test_laplace_profile_is_the_hockey_stick_divergence(eps0, frac):
    # δ(ε) = ∫ (p(x) − e^ε q(x))₊ dx for p = Lap(0, b), q = Lap(Δ, b), by quadrature.
    b, sens = 1.3, 1.3 * eps0
    eps = frac * eps0
    p = lambda x: math.exp(-abs(x) / b) / (2 * b)  # noqa: E731
    q = lambda x: math.exp(-abs(x - sens) / b) / (2 * b)  # noqa: E731
    kink = (sens - eps * b) / 2  # where p = e^ε q inside [0, Δ]
    ref = integrate.quad(lambda x: max(0.0, p(x) - math.exp(eps) * q(x)), -60, 60,
                         points=[0.0, kink, sens], limit=400, epsabs=1e-15, epsrel=1e-13)[0]
    got = Laplace(b, sens, secure=False).privacy_profile(eps)  # the continuous law's profile
    assert got >= ref - 1e-12
    assert got == pytest.approx(ref, abs=1e-10)


def _dg_delta_mpmath(sigma, eps, sens):
    """CKS20 Thm 7 summed term by term at 60 digits."""
    with mp.workdps(60):
        s = mp.mpf(sigma)
        reach = int(60 * sigma) + 60
        w = [mp.exp(-mp.mpf(x) ** 2 / (2 * s * s)) for x in range(-reach, reach + 1)]
        z = mp.fsum(w)
        a = mp.mpf(eps) * s * s / sens - mp.mpf(sens) / 2
        tail = lambda t: mp.fsum(w[x + reach] for x in range(int(mp.floor(t)) + 1, reach + 1)) / z  # noqa: E731
        return tail(a) - mp.exp(eps) * tail(a + sens)


@pytest.mark.parametrize("sigma, eps, sens", [(0.5, 0.5, 1), (1.0, 1.0, 1), (3.5, 1.0, 1), (3.5, 0.1, 2), (10.0, 0.3, 3), (2.0, 0.0, 1)])
def test_discrete_gaussian_profile_matches_mpmath(sigma, eps, sens):
    ref = _dg_delta_mpmath(sigma, eps, sens)
    got = discrete_gaussian_delta(sigma, eps, sens)
    assert got >= ref  # safe side
    assert got == pytest.approx(float(ref), rel=1e-9)


@pytest.mark.parametrize("sigma, eps, sens", [
    (40.0, 1.0, 11),  # the calibration regime: eps*sigma/sens ~ 3.7, convex branches
    (40.0, 0.3, 3),
    (40.0, 0.0, 1),  # x0 = 0: the non-convex branch of S1 (max term), x1 < sigma: decreasing-only S2
    (25.0, 0.05, 40),  # sens > sigma: S1 straddles the mode
    (60.0, 2.0, 100),
])
def test_wide_discrete_gaussian_profile_bounds_the_exact_sum(monkeypatch, sigma, eps, sens):
    # issue 22: the O(sigma) sums made a calibration at --sensitivity 1000 take 68 s and 1e6 hang; past
    # MAX_SUMMED_TERMS the sums are bounded by integrals. Forced here where mpmath can sum exactly.
    import mechanisms.discrete as discrete

    monkeypatch.setattr(discrete, "MAX_SUMMED_TERMS", 0)
    ref = _dg_delta_mpmath(sigma, eps, sens)
    got = discrete_gaussian_delta(sigma, eps, sens)
    assert got >= ref  # an upper bound, never below the exact profile
    assert got <= ref * (1 + 0.02) + 1e-300  # and tight: second-order quadrature rules at small sigma


def test_wide_discrete_gaussian_profile_is_tight_at_large_sigma():
    # past MAX_SUMMED_TERMS, against the term-by-term float sum (itself an upper bound within ~1e-13)
    import mechanisms.discrete as discrete

    for sigma, eps, sens in ((2000.0, 1.0, 541), (5000.0, 0.3, 405), (2000.0, 3.0, 3000)):
        wide = discrete_gaussian_delta(sigma, eps, sens)
        limit, discrete.MAX_SUMMED_TERMS = discrete.MAX_SUMMED_TERMS, 10**7
        try:
            summed = discrete_gaussian_delta(sigma, eps, sens)
        finally:
            discrete.MAX_SUMMED_TERMS = limit
        assert summed * (1 - 1e-12) <= wide <= summed * (1 + 1e-4)


def test_discrete_gaussian_calibration_at_a_huge_sensitivity_is_quick_and_tends_to_the_gaussian():
    # sigma/sensitivity -> the continuous analytic Gaussian's 3.73063163481594 (eps 1, delta 1e-5)
    sigma = DiscreteGaussian.calibrate(1.0, 1e-5, sensitivity=10**6, accountant="profile").sigma
    assert 3.73063163481594 <= sigma / 1e6 <= 3.73063163481594 * (1 + 1e-9)


def test_discrete_gaussian_profile_close_to_continuous_for_large_sigma():
    # For σ ≫ Δ the discrete and continuous Gaussian profiles agree closely (CKS20, Sec. 2.2).
    d = DiscreteGaussian(25.0).privacy_profile(0.1)
    c = Gaussian(25.0).privacy_profile(0.1)
    assert d == pytest.approx(c, rel=1e-2)


def test_discrete_gaussian_rdp_is_zcdp_line():
    mech = DiscreteGaussian(2.0, 3)
    np.testing.assert_allclose(mech.rdp([2.0, 10.0]), np.array([2.0, 10.0]) * 9 / 8)


def test_gaussian_rdp_matches_dpcore():
    mech = Gaussian(1.7, 0.5)
    orders = np.array([1.5, 2.0, 8.0, 64.0])
    np.testing.assert_allclose(mech.rdp(orders), dpcore.compute_rdp(mech.privacy_event(), orders), rtol=1e-12)


def test_lemma3_region_checked_at_p2_against_exact_gaussian():
    # Where GG reduces to the Gaussian (p = 2, κ = 1), Lemma 3's σ = s sqrt(2 log(1/δ))/ε meets
    # the exact analytic profile throughout the region the module uses it in (ε ≤ 1, δ ≤ 1/2) ...
    for eps in np.linspace(0.02, 1.0, 15):
        for delta in np.logspace(-12, math.log10(0.5), 15):
            sigma = math.sqrt(2 * math.log(1 / delta)) / eps
            assert Gaussian(sigma).privacy_profile(eps) <= delta
    # ... but not outside it, which is why the module refuses ε > 1 for p ≠ 2.
    assert Gaussian(math.sqrt(2 * math.log(1e5)) / 10.0).privacy_profile(10.0) > 1e-5


def test_generalized_gaussian_profile_is_monotone_and_capped():
    mech = GeneralizedGaussian(p=4.0, sigma=20.0, dimension=3)
    eps = np.linspace(0.0, 3.0, 31)
    deltas = np.array([mech.privacy_profile(e) for e in eps])
    assert np.all(np.diff(deltas) <= 0)
    assert deltas[0] == 1.0  # no claim at ε = 0
    assert deltas[-1] == mech.privacy_profile(1.0)  # constant beyond the lemma's range


@pytest.mark.parametrize("p, d", [(3.0, 2), (3.0, 10), (6.0, 5)])
def test_lemma3_sigma_is_private_by_monte_carlo(p, d):
    # Monte Carlo estimate of the hockey-stick divergence δ(ε) = E_{z~P}[(1 − e^{ε − L(z)})₊],
    # L(z) = (‖z − Δ‖_p² − ‖z‖_p²)/(2σ²), for shifts Δ with ‖Δ‖_p = s along an axis and a
    # diagonal, at the Lemma 3 σ. The estimate plus 5 standard errors (one-sided false-alarm rate
    # < 3e-7 per assertion) must stay below the δ the lemma certifies.
    eps, delta = 1.0, 0.2
    mech = GeneralizedGaussian.calibrate(eps, delta, 1.0, p=p, dimension=d)
    z = mech.randomize(np.zeros((50_000, d)), rng=123)
    norm = lambda x: np.sum(np.abs(x) ** p, axis=1) ** (1 / p)  # noqa: E731
    for shift in (np.eye(d)[0], np.full(d, d ** (-1 / p))):
        loss = (norm(z - shift) ** 2 - norm(z) ** 2) / (2 * mech.sigma**2)
        terms = np.maximum(0.0, -np.expm1(eps - loss))
        assert terms.mean() + 5 * terms.std() / math.sqrt(len(terms)) <= delta


def test_discrete_gaussian_vector_release_uses_only_the_multivariate_rdp_curve():
    import dpcore
    from mechanisms import DiscreteGaussian

    mech = DiscreteGaussian(3.0, 1)
    scalar, vector = mech.privacy_event(), mech.privacy_event(vector=True)
    assert scalar.privacy_profile is not None and vector.privacy_profile is None
    # Without the scalar-only profile, the vector release is accounted by RDP (CKS20 Thm 14).
    assert dpcore.get_epsilon(vector, 1e-5, accountant="auto").accountant == "rdp"
    assert dpcore.get_epsilon(vector, 1e-5, accountant="auto").epsilon >= dpcore.get_epsilon(
        scalar, 1e-5, accountant="auto").epsilon
