"""PLD accountant on the Gaussian sampled without replacement (replace-one neighbours).

Oracles, all by mpmath quadrature of closed-form densities, independent of dpcore.pld:

* the symmetrised pair (A*, B*) of (A, B) = (γN(1, σ²) + (1−γ)N(0, σ²), N(0, σ²))
  (dpcore.pld.leaves.without_replacement_model): for T = 1 and ε ≥ 0 its δ is γ·δ_G(σ; ε̃),
  ε̃ = log(1 + (e^ε − 1)/γ); for T = 2, δ₂(ε) = E_{ℓ∼PLD(A*)}[f(ε − ℓ)] with f(t) = H_{e^t}(A*‖B*)
  (= δ₁(t) for t ≥ 0 and 1 − e^t + e^t δ₁(−t) for t < 0), the PLD of A* being the loss of (A, B)
  on x > 1/2 under A, its mirror under B, and an atom at 0 of mass (1 − γ)(1 − 2Φ(−1/(2σ)));
* a concrete mechanism instance (record i of a sum query moves from 1 to 0, the rest are 0):
  T-fold (A, B) in both orders, which the upper bound must never undercut.
"""

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
from dpcore import GaussianEvent, SampledWithoutReplacementEvent, SelfComposedEvent, UnsupportedEventError
from dpcore.gaussian_mechanism import analytic_gaussian_epsilon
from dpcore.pld import pld_delta, pld_epsilon


def _wor(sigma, m, n, steps=1):
    e = SampledWithoutReplacementEvent(GaussianEvent(sigma, "replace_one"), m, n)
    return e if steps == 1 else SelfComposedEvent(e, steps)


def _ncdf(x):
    return mpmath.ncdf(x)


def _delta_gauss(sigma, eps):
    """δ of N(1, σ²) vs N(0, σ²) at ε (any real ε)."""
    s = mpmath.mpf(sigma)
    return _ncdf(1 / (2 * s) - eps * s) - mpmath.exp(eps) * _ncdf(-1 / (2 * s) - eps * s)


def _hockey_ab(sigma, gamma, alpha):
    """H_α(A‖B) for (A, B) = (γN(1,σ²) + (1−γ)N(0,σ²), N(0,σ²)), any α ≥ 0."""
    if alpha <= 1 - gamma:
        return 1 - alpha
    s = mpmath.mpf(sigma)
    xt = s * s * mpmath.log((alpha - 1 + gamma) / gamma) + mpmath.mpf(0.5)
    return gamma * _ncdf((1 - xt) / s) + (1 - gamma - alpha) * _ncdf(-xt / s)


def _hockey_ba(sigma, gamma, alpha):
    """H_α(B‖A) = 1 − α + α H_{1/α}(A‖B)."""
    return 1 - alpha + alpha * _hockey_ab(sigma, gamma, 1 / alpha)


def _delta1_sym(sigma, gamma, t):
    """H_{e^t}(A*‖B*) of the symmetrised pair, any real t."""
    if t >= 0:
        return gamma * _delta_gauss(sigma, mpmath.log(1 + mpmath.expm1(t) / gamma))
    return -mpmath.expm1(t) + mpmath.exp(t) * _delta1_sym(sigma, gamma, -t)


def _loss(sigma, gamma, x):
    return mpmath.log(1 - gamma + gamma * mpmath.exp((2 * x - 1) / (2 * mpmath.mpf(sigma) ** 2)))


def _pdf(x, mu, sigma):
    return mpmath.npdf(x, mu, sigma)


def _delta2_sym(sigma, gamma, eps):
    """δ of the 2-fold symmetrised pair (module docstring)."""
    s = mpmath.mpf(sigma)
    a = lambda x: gamma * _pdf(x, 1, s) + (1 - gamma) * _pdf(x, 0, s)  # noqa: E731
    kink = s * s * mpmath.log((mpmath.expm1(eps) + gamma) / gamma) + mpmath.mpf(0.5)  # L(x) = ε
    pts = sorted({mpmath.mpf(0.5), kink, mpmath.mpf(1), 1 + 4 * s, 1 + 12 * s, 1 + 40 * s})
    up = mpmath.quad(lambda x: a(x) * _delta1_sym(sigma, gamma, eps - _loss(sigma, gamma, x)), pts)
    mirror = mpmath.quad(lambda x: _pdf(x, 0, s) * _delta1_sym(sigma, gamma, eps + _loss(sigma, gamma, x)), pts)
    zero = (1 - gamma) * (1 - 2 * _ncdf(-1 / (2 * s)))
    return up + mirror + zero * _delta1_sym(sigma, gamma, eps)


def _delta2_instance(sigma, gamma, eps, reverse):
    """δ of (A⊗A, B⊗B) (or its reverse) — a real mechanism instance."""
    s = mpmath.mpf(sigma)
    alpha = mpmath.exp(eps)
    pts = [-40 * s, -4 * s, 0, 0.5, 1, 1 + 4 * s, 1 + 40 * s]
    if not reverse:
        a = lambda x: gamma * _pdf(x, 1, s) + (1 - gamma) * _pdf(x, 0, s)  # noqa: E731
        return mpmath.quad(lambda x: a(x) * _hockey_ab(sigma, gamma, alpha * mpmath.exp(-_loss(sigma, gamma, x))), pts)
    b = lambda x: _pdf(x, 0, s) * _hockey_ba(sigma, gamma, alpha * mpmath.exp(_loss(sigma, gamma, x)))  # noqa: E731
    return mpmath.quad(b, pts)


@pytest.mark.parametrize("sigma,m,n", [(1.0, 10, 100), (0.5, 1, 50), (3.0, 30, 40)])
@pytest.mark.parametrize("eps", [0.0, 0.3, 1.5])
def test_one_step_brackets_the_exact_profile(sigma, m, n, eps):
    with mpmath.workdps(30):
        exact = float(_delta1_sym(sigma, m / n, mpmath.mpf(eps)))
    lo, up = pld_delta(_wor(sigma, m, n), eps).details["bounds"]
    assert lo <= exact <= up
    assert up - exact <= 1e-3 * exact + 1e-15


@pytest.mark.parametrize("sigma,m,n", [(1.0, 10, 100), (2.0, 1, 4)])
@pytest.mark.parametrize("eps", [0.0, 0.8, 2.0])
def test_two_steps_bracket_the_quadrature(sigma, m, n, eps):
    gamma = mpmath.mpf(m) / n
    with mpmath.workdps(20):
        exact = float(_delta2_sym(sigma, gamma, mpmath.mpf(eps)))
        instance = max(float(_delta2_instance(sigma, gamma, mpmath.mpf(eps), r)) for r in (False, True))
    lo, up = pld_delta(_wor(sigma, m, n, 2), eps).details["bounds"]
    assert lo <= exact <= up
    assert instance <= up  # a real pair of neighbouring datasets never beats the bound
    assert up - exact <= 1e-2 * exact + 1e-14  # tightness of the default grid


def test_full_batch_is_the_unsampled_gaussian():
    lo, up = pld_epsilon(_wor(2.0, 100, 100, 3), 1e-6).details["bounds"]
    assert lo <= analytic_gaussian_epsilon(2.0 / math.sqrt(3), 1e-6) <= up


@pytest.mark.parametrize("sigma,m,n,steps", [(1.0, 10, 100, 10), (1.1, 100, 10000, 1000), (0.7, 5, 1000, 200),
                                             (4.0, 500, 1000, 50)])
def test_never_above_rdp(sigma, m, n, steps):
    event = _wor(sigma, m, n, steps)
    res = pld_epsilon(event, 1e-5)
    rdp = dpcore.get_epsilon(event, 1e-5, accountant="rdp").epsilon
    assert res.details["bounds"][0] <= res.epsilon <= rdp


def test_auto_uses_pld_for_wor():
    event = _wor(1.0, 10, 100, 5)
    auto = dpcore.get_epsilon(event, 1e-5)
    assert auto.accountant == "pld"
    assert auto.epsilon <= dpcore.get_epsilon(event, 1e-5, accountant="rdp").epsilon


def test_add_remove_is_refused():
    event = SampledWithoutReplacementEvent(GaussianEvent(1.0), 10, 100)
    with pytest.raises(UnsupportedEventError, match="replace_one"):
        pld_epsilon(event, 1e-5)


@settings(max_examples=8, deadline=None)
@given(sigma=st.floats(0.6, 3.0), m=st.integers(1, 50), steps=st.integers(1, 40),
       factor=st.floats(1.05, 2.0))
def test_monotone_in_sigma_batch_and_steps(sigma, m, steps, factor):
    n = 200
    base = pld_epsilon(_wor(sigma, m, n, steps), 1e-5, fast=True)
    lo = base.details["bounds"][0]
    for other in (_wor(sigma * factor, m, n, steps), _wor(sigma, max(1, m // 2), n, steps),
                  _wor(sigma, m, n, max(1, steps // 2))):
        # a more private event: exact ε(other) ≤ exact ε(base) ≤ base's upper bound
        res = pld_epsilon(other, 1e-5, fast=True)
        o_lo, o_up = res.details["bounds"]
        assert o_lo <= base.epsilon
        assert o_up <= base.epsilon + (o_up - o_lo)
        assert lo <= base.epsilon


@pytest.mark.parametrize("eps0,m,n,steps,composed", [(1.0, 10, 100, 1, 0.0), (1.0, 10, 100, 6, 0.3), (2.0, 1, 8, 4, 1.0)])
def test_pure_dp_leaf_is_within_the_amplified_kov15_bound(eps0, m, n, steps, composed):
    # BBG18: WOR of an ε₀-DP leaf is ε′-DP, ε′ = log(1 + γ(e^ε₀ − 1)); the symmetrised pair is a
    # mixture of RR(ε′) and a null pair, so its composed δ never exceeds KOV15's for RR(ε′)
    from dpcore import PureDpEvent
    from dpcore.composition import optimal_composition_delta

    gamma = m / n
    amplified = math.log1p(gamma * math.expm1(eps0))
    event = SampledWithoutReplacementEvent(PureDpEvent(eps0, "replace_one"), m, n)
    event = event if steps == 1 else SelfComposedEvent(event, steps)
    lo, up = pld_delta(event, composed).details["bounds"]
    kov = optimal_composition_delta(amplified, 0.0, steps, composed)
    assert lo <= up <= kov * (1 + 1e-9) + 1e-15
    if steps == 1:  # δ(0) = γ·TV(RR(ε₀)) exactly
        exact = gamma * math.tanh(eps0 / 2)
        assert lo <= exact <= up <= exact * (1 + 1e-12) + 1e-15


def test_a_linear_small_order_rdp_curve_does_not_force_a_coarse_grid():
    # the without-replacement RDP curve is linear at small orders: the grid's Gaussian approximation
    # reads μ² = 2Λ(θ)/(θ(θ+1)) off the curve's values (a differenced Λ'' ≈ 0 once made h ~ 1e-6,
    # coarsened by the loss span to a grid the tilt refused)
    res = pld_epsilon(_wor(4.0, 32, 200, 5), 1e-5)
    lo, up = res.details["bounds"]
    assert 0.0 < up < 1.0 and (up - lo) / up <= 5e-3
