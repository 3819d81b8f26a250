"""Closed-form Rényi-DP curves of the unsampled base mechanisms.

All functions take orders α > 1 (dimensionless) and return D_α in nats, rounded up
(:func:`dpcore.rdp._numerics.inflate`), so every value is an upper bound of the exact divergence.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_orders, check_positive
from ._numerics import inflate

__all__ = ["gaussian_rdp", "laplace_rdp", "pure_dp_rdp"]


def gaussian_rdp(noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """RDP of the Gaussian mechanism: D_α = α / (2σ²) (Mironov 2017, Prop. 7; exact).

    Parameters
    ----------
    noise_multiplier : float
        σ / Δ₂ (dimensionless), in (0, ∞).
    orders : array_like
        Rényi orders α in (1, ∞).

    Returns
    -------
    numpy.ndarray
        D_α in nats, one per order, rounded up.
    """
    sigma = check_positive("noise_multiplier", noise_multiplier)
    alpha = check_orders("orders", orders)
    with np.errstate(over="ignore", divide="ignore"):
        value = inflate(alpha / (2.0 * sigma * sigma))
    return np.maximum(value, 5e-324)  # a positive divergence never rounds down to 0 (σ ≈ 1e308)


def laplace_rdp(noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """RDP of the Laplace mechanism with scale b = λΔ₁ (Mironov 2017, Prop. 6; exact):

    D_α = 1/(α−1) · log( α/(2α−1) · e^{(α−1)/λ} + (α−1)/(2α−1) · e^{−α/λ} ),

    evaluated in log space as
    [log(α/(2α−1)) + (α−1)/λ + log1p((α−1)/α · e^{−(2α−1)/λ})] / (α−1).

    Parameters
    ----------
    noise_multiplier : float
        λ = b / Δ₁ (dimensionless), in (0, ∞); the mechanism is (1/λ)-DP.
    orders : array_like
        Rényi orders α in (1, ∞).

    Returns
    -------
    numpy.ndarray
        D_α in nats, rounded up; never above the pure-DP bound 1/λ.
    """
    lam = check_positive("noise_multiplier", noise_multiplier)
    alpha = check_orders("orders", orders)
    am1 = alpha - 1.0
    # Large exponents: the log-space form has no cancellation.
    log_moment_big = (
        np.log(alpha / (2.0 * alpha - 1.0))
        + am1 / lam
        + np.log1p(am1 / alpha * np.exp(-(2.0 * alpha - 1.0) / lam))
    )
    # Small exponents: M − 1 = [α f((α−1)/λ) + (α−1) f(−α/λ)] / (2α−1) with f(x) = eˣ − 1 − x ≥ 0
    # (the first-order terms α(α−1)/λ − (α−1)α/λ cancel exactly), so log M = log1p(M − 1) is
    # computed without cancellation.
    small = am1 / lam < 50.0
    x1 = np.where(small, am1 / lam, 0.0)
    x2 = np.where(small, -alpha / lam, 0.0)
    m_minus_1 = (alpha * _expm1_minus_x(x1) + am1 * _expm1_minus_x(x2)) / (2.0 * alpha - 1.0)
    log_moment = np.where(small, np.log1p(m_minus_1), log_moment_big)
    return np.minimum(inflate(np.maximum(log_moment, 0.0) / am1), inflate(np.full_like(alpha, 1.0 / lam)))


def _expm1_minus_x(x: np.ndarray) -> np.ndarray:
    """eˣ − 1 − x, accurate for small |x| (Taylor series to x⁸ below |x| = 0.01)."""
    series = x * x * (
        1 / 2 + x * (1 / 6 + x * (1 / 24 + x * (1 / 120 + x * (1 / 720 + x * (1 / 5040 + x / 40320)))))
    )
    return np.where(np.abs(x) < 0.01, series, np.expm1(x) - x)


def _log_cosh_ratio(a: np.ndarray, b: float) -> np.ndarray:
    """log(cosh a / cosh b) for a ≥ b ≥ 0 without cancellation or overflow.

    Uses cosh a − cosh b = 2 sinh((a+b)/2) sinh((a−b)/2) where that does not overflow, else
    log cosh x = x + log1p(e^{−2x}) − log 2 (no cancellation when a ≫ b).
    """
    moderate = (a + b) / 2.0 < 300.0
    am = np.where(moderate, a, 0.0)
    ratio = 2.0 * np.sinh((am + b) / 2.0) * np.sinh((am - b) / 2.0) / np.cosh(b)
    log_cosh_b = b + np.log1p(np.exp(-2.0 * b)) - np.log(2.0)
    big = a + np.log1p(np.exp(-2.0 * a)) - np.log(2.0) - log_cosh_b
    return np.where(moderate, np.log1p(ratio), big)


def pure_dp_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """Tight RDP curve of an arbitrary ε-DP mechanism.

    Every pair of output distributions of an ε-DP mechanism is a post-processing of the binary
    randomized-response pair P = (e^ε, 1)/(1+e^ε), Q = (1, e^ε)/(1+e^ε) (Kairouz, Oh, Viswanath
    2015, Thm. 2.1), so by data processing its Rényi divergence is at most that of randomized
    response, which is attained:

    D_α = 1/(α−1) · log( (e^{αε} + e^{(1−α)ε}) / (1 + e^ε) )
        = [log cosh((α−½)ε) − log cosh(ε/2)] / (α−1).

    This is never above min(ε, αε²/2) (Bun & Steinke 2016, Prop. 3.3) and equals it asymptotically.

    Parameters
    ----------
    epsilon : float
        ε in (0, ∞), nats.
    orders : array_like
        Rényi orders α in (1, ∞).

    Returns
    -------
    numpy.ndarray
        D_α in nats, rounded up and capped at ε.
    """
    eps = check_positive("epsilon", epsilon)
    alpha = check_orders("orders", orders)
    value = _log_cosh_ratio((alpha - 0.5) * eps, eps / 2.0) / (alpha - 1.0)
    return np.minimum(inflate(np.maximum(value, 0.0)), inflate(np.full_like(alpha, eps)))
