"""The Gaussian mechanism (ℓ2 sensitivity), with analytic, classic and Zhang et al. calibrations."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

import dpcore
from dpcore import events as ev
from dpcore._validation import check_choice, check_orders, check_positive, check_relation
from dpcore.result import round_up

from . import kernels
from .base import (
    Mechanism,
    RngLike,
    as_generator,
    check_approx_target,
    check_finite_array,
    clamp_to_bound,
    convert_sensitivity,
    greatest_noise_multiplier,
    least_passing,
    value_bound,
)

__all__ = ["Gaussian", "GAUSSIAN_CALIBRATIONS"]

GAUSSIAN_CALIBRATIONS = ("analytic", "classic", "zhang2017")


class Gaussian(Mechanism):
    """Add i.i.d. N(0, σ²) noise to every coordinate of a query of ℓ2 sensitivity Δ₂.

    Parameters
    ----------
    sigma : float
        Standard deviation σ of each coordinate's noise, in the units of the query; in (0, ∞).
    sensitivity : float
        Δ₂ = sup ‖q(D) − q(D′)‖₂ over neighbours under the relation later passed to
        :meth:`privacy_event`; in (0, ∞).

    Notes
    -----
    Domain: every finite value. Entries are clamped to ±:attr:`value_bound` = ±2⁴⁰σ (public; a
    1-Lipschitz map, so Δ₂ and the guarantee hold for every finite input) so that the float sum
    never rounds the noise away (unclamped, 1e308 + N(0, σ²) == 1e308 would release the value).
    This is a float sampler, not floating-point safe in Mironov's sense (use
    :class:`mechanisms.DiscreteGaussian` where that matters).

    Privacy: the exact privacy profile is the analytic Gaussian δ(ε) (Balle & Wang 2018, Thm 8) and
    the RDP curve is αΔ²/(2σ²) (Mironov 2017, Prop. 7); dpcore receives a
    :class:`~dpcore.events.GaussianEvent` with noise multiplier σ/Δ₂.
    """

    noise_parameter = "sigma"
    kernel = staticmethod(kernels.gaussian_noise_kernel)

    def __init__(self, sigma: float, sensitivity: float = 1.0) -> None:
        self.sigma = check_positive("sigma", sigma)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.value_bound = value_bound("sigma", self.sigma)

    @classmethod
    def calibrate(
        cls,
        epsilon: float,
        delta: Optional[float] = None,
        sensitivity: float = 1.0,
        *,
        method: str = "analytic",
        norm: float = 2.0,
        dimension: Optional[int] = None,
    ) -> "Gaussian":
        """Gaussian mechanism meeting (ε, δ)-DP for ℓ2 sensitivity ``sensitivity``.

        Parameters
        ----------
        epsilon : float
            Target ε in (0, ∞), nats.
        delta : float
            Target δ in (0, 1).
        sensitivity : float
            Δ₂ in (0, ∞), units of the query.
        method : {"analytic", "classic", "zhang2017"}
            ``"analytic"`` (default): the least σ, from the exact analytic-Gaussian profile
            (Balle & Wang 2018; ``dpcore.analytic_gaussian_sigma``). ``"classic"``:
            σ = Δ₂·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1; only for ε < 1).
            ``"zhang2017"``: the output-perturbation noise of Zhang, Zheng, Mou, Wang 2017, Alg. 1
            line 7, density ∝ exp(−ε²‖z‖²/(4 log(2/δ) Δ²)), i.e. σ = Δ₂·sqrt(2 log(2/δ))/ε.
            That formula is not (ε, δ)-DP for every ε (at δ = 1e-5 it fails for ε ≳ 8), so it is
            checked against the exact profile and refused where it does not meet the target.
        norm : float
            Order q ∈ [1, ∞] of the norm ``sensitivity`` is measured in (default 2); a bound in
            ℓq is converted to ℓ2 (:func:`mechanisms.base.convert_sensitivity`; q > 2 needs
            ``dimension``).
        dimension : int, optional
            d, for that conversion.
        """
        method = check_choice("method", method, GAUSSIAN_CALIBRATIONS)
        eps, dlt = check_approx_target(epsilon, delta, "Gaussian")
        sens = convert_sensitivity(check_positive("sensitivity", sensitivity), norm, 2.0, dimension)
        if method == "analytic":
            sigma = dpcore.analytic_gaussian_sigma(eps, dlt, sens)
        elif method == "classic":
            sigma = dpcore.classic_gaussian_sigma(eps, dlt, sens)
        else:
            sigma = round_up(sens * math.sqrt(2.0 * math.log(2.0 / dlt)) / eps)
            achieved = dpcore.analytic_gaussian_delta(sigma, eps, sens)
            if not achieved <= dlt:
                raise ValueError(
                    f"method='zhang2017' (Zhang et al. 2017, Alg. 1) is not ({eps}, {dlt})-DP: its sigma="
                    f"{sigma} gives delta={achieved} at epsilon={eps}; use method='analytic'"
                )
        # dpcore accounts for GaussianEvent(σ/Δ₂ rounded down); step σ up by ulps if that loses the target.
        sigma = least_passing(sigma, lambda s: _analytic_epsilon(greatest_noise_multiplier(s, sens), dlt) <= eps)
        return cls(sigma, sens)

    @property
    def noise_multiplier(self) -> float:
        """σ / Δ₂ (dimensionless), rounded down (:func:`mechanisms.base.greatest_noise_multiplier`)."""
        return greatest_noise_multiplier(self.sigma, self.sensitivity)

    def randomize(self, value: object, rng: RngLike = None) -> np.ndarray:
        """``value`` (clamped to ±:attr:`value_bound`) + N(0, σ²) noise of the same shape."""
        arr = clamp_to_bound(check_finite_array("value", value), self.value_bound)
        return arr + as_generator(rng).normal(0.0, self.sigma, size=arr.shape)

    def kernel_args(self) -> tuple:
        """Arguments after ``rng, d`` of :func:`mechanisms.kernels.gaussian_noise_kernel`."""
        return (self.sigma,)

    def rdp(self, orders: object) -> np.ndarray:
        """α Δ² / (2σ²) nats (Mironov 2017, Prop. 7)."""
        a = check_orders("orders", orders)
        return a / (2.0 * self.noise_multiplier**2)

    def privacy_profile(self, epsilon: float) -> float:
        """Exact δ(ε) of the analytic Gaussian (Balle & Wang 2018, Thm 8)."""
        return dpcore.analytic_gaussian_delta(self.sigma, epsilon, self.sensitivity)

    def privacy_event(self, relation: str = "add_remove") -> ev.GaussianEvent:
        """``GaussianEvent(σ/Δ₂, relation)``."""
        return ev.GaussianEvent(self.noise_multiplier, check_relation("relation", relation))

    def __repr__(self) -> str:
        return f"Gaussian(sigma={self.sigma!r}, sensitivity={self.sensitivity!r})"


def _analytic_epsilon(noise_multiplier: float, delta: float) -> float:
    """ε that dpcore's exact (analytic Gaussian) accountant reports for one Gaussian release."""
    event = ev.GaussianEvent(noise_multiplier)
    return dpcore.get_epsilon(event, delta, accountant="analytic_gaussian").epsilon
