"""DP-SRM's default accountant ("auto", the PLD) on a minibatch release, against an exact ε computed here.

The minibatch route of ``dp_srm`` reports through dpcore's PLD model of a without-replacement subsampled
Gaussian. ``test_dp_srm.test_reported_privacy_bounds_the_event_run`` compares that report with the *same* PLD's
lower bound, which moves with any error in the PLD's subsampling model. Here one release (T = 1, b₀ = b of n,
replace-one) is checked against its exact ε from closed forms evaluated in mpmath, sharing no code with dpcore.

Under replace-one, sampling b of n without replacement and adding N(0, (zΔ)²) to a sum of replace-one
sensitivity Δ is tightly dominated by the pair P = (1 − γ)N(0, 1) + γN(μ, 1), Q = N(0, 1) in both orders,
γ = b/n, μ = 1/z (Balle, Barthe, Gaboardi 2018, Thm 10; Zhu, Dong, Wang 2022, Thm 11 — and attained: all other
records at the replaced record's new gradient). The likelihood ratio P/Q = 1 − γ + γe^{μx − μ²/2} is monotone in
x, so each hockey-stick divergence is a closed form in Φ:

    δ_PQ(ε) = (1 − γ)Φ̄(x₁) + γΦ̄(x₁ − μ) − e^ε Φ̄(x₁),        x₁ = (log((e^ε − 1 + γ)/γ) + μ²/2)/μ,
    δ_QP(ε) = Φ(x₂) − e^ε((1 − γ)Φ(x₂) + γΦ(x₂ − μ)),        x₂ = (log((e^{−ε} − 1 + γ)/γ) + μ²/2)/μ
              (0 when e^{−ε} ≤ 1 − γ).
"""

import mpmath
import numpy as np
import pytest

from algorithms.dp_srm import dp_srm
from algorithms.synthetic import make_classification

_MP = mpmath.mp.clone()
_MP.dps = 40
X, Y, _ = make_classification(400, 5, seed=1)


def swor_gaussian_delta(epsilon, z: float, gamma: float):
    """δ(ε) of one without-replacement subsampled Gaussian release (replace-one), max over both orders."""
    e, mu, g = _MP.mpf(epsilon), 1 / _MP.mpf(z), _MP.mpf(gamma)
    x1 = (_MP.log((_MP.exp(e) - 1 + g) / g) + mu * mu / 2) / mu
    d_pq = (1 - g) * _MP.ncdf(-x1) + g * _MP.ncdf(mu - x1) - _MP.exp(e) * _MP.ncdf(-x1)
    inner = _MP.exp(-e) - 1 + g
    if inner <= 0:
        return d_pq
    x2 = (_MP.log(inner / g) + mu * mu / 2) / mu
    d_qp = _MP.ncdf(x2) - _MP.exp(e) * ((1 - g) * _MP.ncdf(x2) + g * _MP.ncdf(x2 - mu))
    return max(d_pq, d_qp)


def swor_gaussian_epsilon(z: float, gamma: float, delta: float) -> float:
    """The least ε with δ(ε) ≤ δ, from below (bisection to 1e-13 relative in mpmath)."""
    target, lo, hi = _MP.mpf(delta), _MP.mpf(0), _MP.mpf(1)
    if swor_gaussian_delta(0, z, gamma) <= target:
        return 0.0
    while swor_gaussian_delta(hi, z, gamma) > target:
        hi *= 2
    while hi - lo > 1e-13 * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if swor_gaussian_delta(mid, z, gamma) > target else (lo, mid)
    return float(lo)


def test_closed_form_reduces_to_the_gaussian_mechanism_at_full_batch():
    """γ = 1: Balle & Wang's exact ε of the Gaussian mechanism with μ = 1/z = 1 at δ = 1e-5 (4.377178…, also
    test_dp_srm's 10 releases at z = 2: μ = √10/2 → 7.511276)."""
    assert swor_gaussian_epsilon(1.0, 1.0, 1e-5) == pytest.approx(4.3771781, rel=1e-6)
    assert swor_gaussian_epsilon(2.0 / np.sqrt(10.0), 1.0, 1e-5) == pytest.approx(7.511276, rel=1e-6)


@pytest.mark.parametrize("batch, epsilon", [(40, 1.0), (100, 0.3), (4, 2.0)])
def test_default_accountant_on_one_minibatch_release_bounds_its_exact_epsilon(batch, epsilon):
    """T = 1 release on b of n = 400 (C₁ = G there): the reported ε (accountant "auto") is ≥ the exact ε of the
    release at the calibrated z and within 1 % of it; so is the RDP report (≥)."""
    res = dp_srm(X, Y, epsilon=epsilon, delta=1e-5, data_norm_bound=1.0, steps=1, batch_size=batch, rng=0)
    exact = swor_gaussian_epsilon(res.noise_multiplier, batch / 400, 1e-5)
    assert exact <= res.privacy.epsilon <= epsilon
    assert res.privacy.epsilon <= 1.01 * exact
    rdp = dp_srm(X, Y, noise_multiplier=res.noise_multiplier, delta=1e-5, data_norm_bound=1.0, steps=1,
                 batch_size=batch, rng=0, accountant="rdp").privacy.epsilon
    assert exact <= rdp
