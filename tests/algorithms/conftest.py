"""Independent privacy computations for the solver tests (issue 21, item 5).

A solver's reported ε compared with ``dpcore.get_epsilon(result.event)`` only shows that it reports the
accountant's value for the event it built itself. The tests compare it instead with an ε computed here,
from the public parameters of the run (noise multiplier, number of releases, sampling rate), by routes
that share no code with dpcore's accountants:

* :func:`gaussian_epsilon` — the exact ε of a Gaussian mechanism of μ = Δ/σ (a composition of Gaussians
  is one of μ = √Σ 1/zᵢ², Dong–Roth–Su 2019 Cor. 3.3): Balle & Wang 2018 Thm 8,
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), inverted by bisection in mpmath at 40 digits;
* :func:`kov_epsilon` — the optimal k-fold composition of (ε₀, δ₀)-DP releases (Kairouz, Oh, Viswanath
  2015, Thm 3.3): δ(ε) = 1 − (1 − δ₀)^k (1 − H_{e^ε}(k-fold randomized response)), in mpmath;
* :func:`objective_delta` — the objective-perturbation profile (``algorithms._objective_privacy``'s bound,
  re-derived: ∫₀^∞ δ_G(ε − ε_J − 2μ² − 2μr; μ₂)·r e^{−r²/2} dr) by mpmath quadrature;
* :func:`pld_bounds` — dpcore's PLD accountant (FFT of privacy-loss distributions, a different algorithm
  from the RDP accountant the solvers report with): its certified lower bound must not exceed a
  reported upper bound.
"""

import mpmath
import pytest

import dpcore

_MP = mpmath.mp.clone()
_MP.dps = 40


def _bisect_epsilon(delta_of, delta: float, hi: float = 1.0) -> float:
    """The least ε ≥ 0 with ``delta_of(ε) ≤ delta`` (decreasing profile) from below: a value within 1e-13 relative
    under it (``delta_of`` still exceeds δ there), so a correct upper bound is never below what is returned."""
    target = _MP.mpf(delta)
    if delta_of(_MP.mpf(0)) <= target:
        return 0.0
    hi = _MP.mpf(hi)
    while delta_of(hi) > target:
        hi *= 2
    lo = _MP.mpf(0)
    while hi - lo > 1e-13 * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of(mid) > target else (lo, mid)
    return float(lo)


def gaussian_delta(epsilon, mu):
    """Balle & Wang 2018 Thm 8: δ(ε) of the Gaussian mechanism with μ = Δ/σ."""
    e, m = _MP.mpf(epsilon), _MP.mpf(mu)
    return _MP.ncdf(-e / m + m / 2) - _MP.exp(e) * _MP.ncdf(-e / m - m / 2)


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Exact ε of the Gaussian mechanism with μ = Δ/σ at δ (from below, 1e-13 relative)."""
    return _bisect_epsilon(lambda e: gaussian_delta(e, mu), delta)


def kov_delta(epsilon, epsilon0: float, delta0: float, k: int):
    e0, e = _MP.mpf(epsilon0), _MP.mpf(epsilon)
    norm = (1 + _MP.exp(e0)) ** k
    rr = _MP.fsum(_MP.binomial(k, l) * max(0, _MP.exp((k - l) * e0) - _MP.exp(e + l * e0)) for l in range(k + 1))
    return 1 - (1 - _MP.mpf(delta0)) ** k * (1 - rr / norm)


def kov_epsilon(epsilon0: float, delta0: float, k: int, delta: float) -> float:
    """Least ε with the optimal k-fold composition of (ε₀, δ₀)-DP at most δ (KOV15 Thm 3.3; from below, 1e-13
    relative)."""
    return _bisect_epsilon(lambda e: kov_delta(e, epsilon0, delta0, k), delta, hi=k * epsilon0)


def objective_delta(epsilon: float, m1: float, m2: float, eps_j: float):
    """The objective-perturbation privacy profile (module docstring) at ε, multipliers m₁ = σ/(2L) of the objective
    noise, m₂ = σ₂/Δ₂ of the output noise (0: none), Jacobian term ε_J."""
    mu = 1 / (2 * _MP.mpf(m1))
    ep = _MP.mpf(epsilon) - _MP.mpf(eps_j)
    if m2 == 0:
        def inner(r):
            return max(0, 1 - _MP.exp(ep - 2 * mu * mu - 2 * mu * r))
    else:
        mu2 = 1 / _MP.mpf(m2)

        def inner(r):
            return max(0, gaussian_delta(ep - 2 * mu * mu - 2 * mu * r, mu2))
    r_c = max(0, (ep - 2 * mu * mu) / (2 * mu))
    cuts = sorted({_MP.mpf(0), *[max(0, r_c + k) for k in (-10, -3, -1, 0, 1, 3, 10, 40)]})
    return _MP.fsum(_MP.quad(lambda r: inner(r) * r * _MP.exp(-r * r / 2), [a, b]) for a, b in zip(cuts, cuts[1:]))


def pld_bounds(event, delta: float):
    """(lower, upper) ε of dpcore's PLD accountant for ``event`` at δ."""
    return dpcore.get_epsilon(event, delta, accountant="pld").details["bounds"]


class Independent:
    gaussian_epsilon = staticmethod(gaussian_epsilon)
    kov_epsilon = staticmethod(kov_epsilon)
    objective_delta = staticmethod(objective_delta)
    pld_bounds = staticmethod(pld_bounds)


@pytest.fixture
def independent():
    """The independent routes of this module (see its docstring)."""
    return Independent
