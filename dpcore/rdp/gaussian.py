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


def _log_cosh_ratio(b: float, d: np.ndarray) -> np.ndarray:
    """log(cosh(b + d) / cosh b) for b ≥ 0, d ≥ 0, without cancellation or overflow.

    The difference d of the two arguments is passed, not their sum, so that it carries no rounding
    error of its own (computing (b + d) − b in floats loses log2(b/d) bits). Uses
    cosh a − cosh b = 2 sinh((a+b)/2) sinh(d/2) where that does not overflow, else
    log cosh a − log cosh b = d + log1p(e^{−2a}) − log1p(e^{−2b}) (a = b + d).
    """
    with np.errstate(over="ignore"):
        a = b + d
    moderate = (a + b) / 2.0 < 300.0
    half_sum = np.where(moderate, b + d / 2.0, 0.0)
    ratio = 2.0 * np.sinh(half_sum) * np.sinh(np.where(moderate, d, 0.0) / 2.0) / np.cosh(b)
    big = d + np.log1p(np.exp(-2.0 * a)) - np.log1p(np.exp(-2.0 * b))
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
    # D_α = log(cosh(ε/2 + (α−1)ε) / cosh(ε/2)) / (α−1); (α−1)ε beyond the float range (ε near 1e308)
    # gives inf, i.e. the cap ε
    with np.errstate(over="ignore", invalid="ignore"):
        value = _log_cosh_ratio(eps / 2.0, (alpha - 1.0) * eps) / (alpha - 1.0)
    value = np.where(np.isfinite(value), value, np.inf)
    return np.minimum(inflate(np.maximum(value, 0.0)), inflate(np.full_like(alpha, eps)))
