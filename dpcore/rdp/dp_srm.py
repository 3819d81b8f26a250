"""Closed-form RDP bound of Lemma 3.7 in Wang, Jayaraman, Evans, Gu, "Efficient Privacy-Preserving
Stochastic Nonconvex Optimization" (DP-SRM; ``/work/shared/papers/wang-jayaraman-evans-gu-dp-srm-
nonconvex.txt``), offered as ``calibration="paper"``.

Statement (Lemma 3.7): the Gaussian mechanism q(S) + N(0, σ²I) applied to a subset drawn by
uniform sampling *without replacement* with rate τ satisfies (α, 3.5 τ² Δ²(q) α / σ²)-RDP, given
σ'² = σ²/Δ²(q) ≥ 0.7 and α ≤ 2σ² log(1/(τα(1+σ'²)))/3 + 1. Neighbours differ in one element
(replace-one, Definition 3.5).

Parametrisation. dpcore's noise multiplier is σ' = σ/Δ (``DpSrmEvent.noise_multiplier``), so the
bound reads 3.5 τ² α / σ'². In the order condition the lemma writes σ² where Theorem 5.1 (which
applies the lemma) writes σ'²; for Δ = 1 they coincide, and we use the dimensionless σ'² so that the
condition is invariant to rescaling the query — i.e. α − 1 ≤ (2σ'²/3)·log(1/(τα(1+σ'²))).
``DpSrmEvent(noise_multiplier=σ', sampling_rate=τ, steps=T)`` is accounted as T-fold composition
of this bound (Mironov 2017, Prop. 1), as in the paper's proof of Theorem 5.1.

Integer orders. The lemma is stated for every α in its range, but its proof (like the moments
accountant it follows) expands the subsampled density ratio binomially, which is an argument for
integer α ≥ 2. We therefore only apply it at α̂ = max(2, ⌈α⌉): an order α is given the value
3.5 τ² α̂ / σ'², with the order condition checked at α̂. Rényi divergence is non-decreasing in α
(van Erven & Harremoës 2014, Thm 3), so D_α ≤ D_α̂ ≤ the lemma's bound at α̂: valid at every α > 1
without relying on the lemma at fractional orders.

This is the paper's bound, not a tight analysis: it is only ever used where its conditions hold,
and the condition on α restricts the usable orders.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_choice, check_orders, check_positive, check_sampling_rate

__all__ = ["dp_srm_rdp_bound", "dp_srm_order_limit_ok"]

_MIN_SIGMA2 = 0.7


def _integer_order(orders: np.ndarray) -> np.ndarray:
    """α̂ = max(2, ⌈α⌉): the integer order at which Lemma 3.7 is applied for α (module docstring)."""
    return np.maximum(2.0, np.ceil(orders))


def dp_srm_order_limit_ok(noise_multiplier: float, sampling_rate: float, orders: np.ndarray) -> np.ndarray:
    """Mask of orders α whose integer order α̂ = max(2, ⌈α⌉) satisfies
    α̂ ≤ (2σ'²/3)·log(1/(τα̂(1+σ'²))) + 1 (Lemma 3.7)."""
    orders = _integer_order(np.asarray(orders, dtype=float))
    s2 = noise_multiplier * noise_multiplier
    with np.errstate(divide="ignore"):
        limit = 2.0 * s2 / 3.0 * np.log(1.0 / (sampling_rate * orders * (1.0 + s2))) + 1.0
    return orders <= limit


def dp_srm_rdp_bound(
    noise_multiplier: float, sampling_rate: float, orders: np.ndarray, *, invalid: str = "raise"
) -> np.ndarray:
    """RDP bound 3.5 τ² α̂ / σ'² of one DP-SRM step at α̂ = max(2, ⌈α⌉) (Lemma 3.7 of the DP-SRM paper).

    Parameters
    ----------
    noise_multiplier : float
        σ' = σ/Δ (dimensionless), with Δ the ℓ2 sensitivity under replace-one; must satisfy
        σ'² ≥ 0.7.
    sampling_rate : float
        τ = b/n in (0, 1] (sampling without replacement).
    orders : array_like
        Rényi orders α > 1.
    invalid : {"raise", "inf"}
        What to do with orders whose α̂ violates α̂ ≤ (2σ'²/3)·log(1/(τα̂(1+σ'²))) + 1: raise
        ``ValueError`` or return ``inf`` there (no bound from this lemma).

    Returns
    -------
    numpy.ndarray
        RDP bound in nats at each order.

    Raises
    ------
    ValueError
        If σ'² < 0.7, or (``invalid="raise"``) an order violates the order condition.
    """
    sigma = check_positive("noise_multiplier", noise_multiplier)
    tau = check_sampling_rate("sampling_rate", sampling_rate)
    alpha = check_orders("orders", orders)
    check_choice("invalid", invalid, ("raise", "inf"))
    if sigma * sigma < _MIN_SIGMA2:
        raise ValueError(
            f"noise_multiplier must satisfy sigma'^2 >= 0.7 (Lemma 3.7 of the DP-SRM paper); got sigma'^2 = {sigma * sigma:.6g}"
        )
    ok = dp_srm_order_limit_ok(sigma, tau, alpha)
    if invalid == "raise" and not np.all(ok):
        bad = alpha[~ok]
        raise ValueError(
            "orders must satisfy alpha <= 2 sigma'^2 log(1/(tau alpha (1+sigma'^2)))/3 + 1 (Lemma 3.7 of the "
            f"DP-SRM paper); violated at {bad[:5].tolist()}"
        )
    value = 3.5 * tau * tau * _integer_order(alpha) / (sigma * sigma)
    value = np.nextafter(value * (1.0 + 2.0**-50), math.inf)
    return np.where(ok, value, np.inf)
