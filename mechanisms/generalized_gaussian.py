"""Generalized Gaussian (GG) mechanism over an ℓp norm: density ∝ exp(−‖z‖_p² / (2σ²)).

Sampling (exact, O(d)). A density that depends on z only through ‖z‖_p factorises as
z = R·θ with θ independent of R, θ distributed by the cone measure of the unit ℓp sphere, and
R = ‖z‖_p of density ∝ r^{d−1} exp(−r²/(2σ²)) (the volume of the ℓp ball of radius r is ∝ r^d).
θ = g/‖g‖_p with g_i i.i.d. of density ∝ exp(−|t|^p) (Schechtman & Zinn 1990; Barthe, Guédon,
Mendelson, Naor 2005), and R = σ·sqrt(2·Gamma(d/2)). No rejection step, so d = 10 000 takes
milliseconds. This is the distribution 𝒢𝒢_{‖·‖₊}(0, σ²) of Bassily, Guzmán, Nandi 2021 (Su, Zhao,
Wang, Def. 4), used by Su–Zhao–Wang Alg. 3, 4 and 7 with ‖·‖₊ = ℓp.

Privacy (Su, Zhao, Wang, Lemma 3 = Bassily, Guzmán, Nandi 2021): for a query with sensitivity s in
a κ-regular norm whose smooth norm is ‖·‖₊, adding 𝒢𝒢_{‖·‖₊}(0, σ²) with
σ² = 2κ log(1/δ) s²/ε² is (ε, δ)-DP. For the noise norm ℓp with 2 ≤ p < ∞ and s measured in ℓp,
½‖·‖_p² is (p − 1)-smooth w.r.t. ‖·‖_p, so κ = p − 1. (For sensitivity in ℓq with
q > 1 + 2 ln d, Su–Zhao–Wang take κ = 2 ln d with the noise in ℓr, r = 1 + 2 ln d, and
s_r ≤ d^{1/r − 1/q} s_q ≤ e^{1/2} s_q: ``calibrate(..., p=r, norm=q)`` does this conversion.)

Where the lemma can be checked exactly — p = 2, where 𝒢𝒢 is N(0, σ²I) and the analytic Gaussian
profile is exact — it holds for ε ≤ 1 and δ ≤ 1/2 but fails for larger ε (e.g. ε = 10, δ = 1e-5)
and for δ close to 1. We therefore use it only in that region: ε ≤ 1 and δ ≤ 1/2 (the papers'
theorems assume 0 < ε, δ < 1). For p = 2 this module uses the exact Gaussian accounting instead.
For p < 2 (½‖·‖_p² is not smooth) and p = ∞ no guarantee is stated and none is claimed: the
sampler works, ``calibrate`` and ``privacy_event`` raise ``ValueError``.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

import dpcore
from dpcore import events as ev
from dpcore._validation import check_delta, check_dimension, check_nonnegative, check_orders, check_positive, check_relation
from dpcore.result import round_up

from . import kernels
from .base import (
    Mechanism,
    RngLike,
    as_generator,
    check_approx_target,
    check_calibrated_scale,
    check_finite_array,
    check_norm_order,
    clamp_to_bound,
    convert_sensitivity,
    least_passing,
    value_bound,
)
from .gaussian import Gaussian

__all__ = ["GeneralizedGaussian", "lp_directions"]

#: Largest ε and δ at which Lemma 3 is used (see the module docstring).
LEMMA3_MAX_EPSILON = 1.0
LEMMA3_MAX_DELTA = 0.5


def lp_directions(gen: np.random.Generator, shape: tuple, p: float) -> np.ndarray:
    """Directions θ (last axis), ‖θ‖_p = 1, distributed by the cone measure of the ℓp sphere.

    NumPy twin of :func:`mechanisms.kernels.lp_direction_kernel`: |g_i| = G^{1/p}·U with
    G ~ Gamma(1 + 1/p), U ~ Uniform(0, 1) (= Gamma(1/p)^{1/p} in law), random signs.
    """
    mag = gen.random(shape)
    if not math.isinf(p):
        mag *= gen.gamma(1.0 + 1.0 / p, size=shape) ** (1.0 / p)
    g = np.where(gen.random(shape) < 0.5, mag, -mag)
    m = np.max(np.abs(g), axis=-1, keepdims=True)
    m[m == 0.0] = 1.0  # probability-zero all-zero draw: leave it, the norm below is then 1
    if math.isinf(p):
        return g / m
    s = np.sum((np.abs(g) / m) ** p, axis=-1, keepdims=True)
    s[s == 0.0] = 1.0
    return g / (m * s ** (1.0 / p))


class GeneralizedGaussian(Mechanism):
    """Add one 𝒢𝒢_{ℓp}(0, σ²) draw (density ∝ exp(−‖z‖_p²/(2σ²))) to each d-dimensional output.

    Parameters
    ----------
    p : float
        Order of the norm, in [1, ∞] (``math.inf`` for ℓ∞). Privacy is stated for p ∈ [2, ∞).
    sigma : float
        σ in (0, ∞), units of the query.
    dimension : int
        d ≥ 1.
    sensitivity : float
        s = sup ‖q(D) − q(D′)‖_p over neighbours under the relation passed to :meth:`privacy_event`.

    Notes
    -----
    Domain: every finite value; entries are clamped to ±:attr:`value_bound` = ±2⁴⁰σ (public,
    1-Lipschitz in every coordinate: the guarantee holds for every finite input, and the float sum
    cannot round the noise away).
    """

    noise_parameter = "sigma"
    kernel = staticmethod(kernels.generalized_gaussian_noise_kernel)

    def __init__(self, p: float, sigma: float, dimension: int, sensitivity: float = 1.0) -> None:
        self.p = check_norm_order("p", p)
        self.sigma = check_positive("sigma", sigma)
        self.value_bound = value_bound("sigma", self.sigma)
        self.dimension = check_dimension("dimension", dimension)
        self.sensitivity = check_positive("sensitivity", sensitivity)

    @property
    def kappa(self) -> float:
        """Regularity constant κ = p − 1 of (ℝ^d, ‖·‖_p), p ∈ [2, ∞) (smoothness of ½‖·‖_p²)."""
        _check_private_p(self.p)
        return self.p - 1.0

    @classmethod
    def calibrate(
        cls,
        epsilon: float,
        delta: Optional[float] = None,
        sensitivity: float = 1.0,
        *,
        p: float,
        dimension: int,
        norm: Optional[float] = None,
    ) -> "GeneralizedGaussian":
        """GG mechanism meeting (ε, δ)-DP for a sensitivity measured in ℓ_norm (default ℓp).

        p = 2: the least σ by the exact analytic Gaussian (GG is then N(0, σ²I)). p ∈ (2, ∞):
        σ = s·sqrt(2κ log(1/δ))/ε with κ = p − 1 (Su, Zhao, Wang, Lemma 3), the least σ that lemma
        certifies; requires ε ≤ 1 and δ ≤ 1/2 (module docstring).

        Parameters
        ----------
        epsilon : float
            Target ε, nats; in (0, 1] for p ≠ 2.
        delta : float
            Target δ in (0, 1); ≤ 1/2 for p ≠ 2.
        sensitivity : float
            s in (0, ∞), measured in ‖·‖_norm.
        p : float
            Norm order of the noise, in [2, ∞).
        dimension : int
            d ≥ 1.
        norm : float, optional
            Order q ∈ [1, ∞] of the norm ``sensitivity`` is measured in; default p. Converted to ℓp
            by :func:`mechanisms.base.convert_sensitivity` (e.g. q > 1 + 2 ln d with
            p = 1 + 2 ln d is Su–Zhao–Wang's choice, factor ≤ e^{1/2}).
        """
        p = _check_private_p(check_norm_order("p", p))
        eps, dlt = check_approx_target(epsilon, delta, "generalized Gaussian")
        norm = p if norm is None else norm
        sens = convert_sensitivity(check_positive("sensitivity", sensitivity), norm, p, dimension)
        if p == 2.0:
            return cls(2.0, Gaussian.calibrate(eps, dlt, sens).sigma, dimension, sens)
        if eps > LEMMA3_MAX_EPSILON:
            raise ValueError(f"epsilon must be in (0, {LEMMA3_MAX_EPSILON}] for p != 2 (Lemma 3 range); got {epsilon!r}")
        if dlt > LEMMA3_MAX_DELTA:
            raise ValueError(f"delta must be in (0, {LEMMA3_MAX_DELTA}] for p != 2 (Lemma 3 range); got {delta!r}")
        with np.errstate(over="ignore"):
            lemma3 = sens * math.sqrt(2.0 * (p - 1.0) * math.log(1.0 / dlt)) / eps * (1 + 2**-50)
        sigma = round_up(check_calibrated_scale("sigma", lemma3, epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                                                p=p))
        # dpcore inverts the profile numerically (with its own tolerance): step σ up until it agrees.
        sigma = least_passing(sigma, lambda s: _profile_epsilon(cls(p, s, dimension, sens), dlt) <= eps)
        return cls(p, sigma, dimension, sens)

    def randomize(self, value: object, rng: RngLike = None) -> np.ndarray:
        """``value`` (shape (..., d)) + one independent GG draw per output."""
        arr = clamp_to_bound(check_finite_array("value", value, last_axis=self.dimension), self.value_bound)
        gen = as_generator(rng)
        radius = self.sigma * np.sqrt(2.0 * gen.gamma(0.5 * self.dimension, size=arr.shape[:-1] + (1,)))
        return arr + radius * lp_directions(gen, arr.shape, self.p)

    def kernel_args(self) -> tuple:
        """Arguments after ``rng, d`` of :func:`mechanisms.kernels.generalized_gaussian_noise_kernel`."""
        return (self.p, self.sigma)

    def rdp(self, orders: object) -> np.ndarray:
        """p = 2 only: α s²/(2σ²) (it is the Gaussian mechanism)."""
        if self.p != 2.0:
            raise NotImplementedError("no RDP curve is known for the generalized Gaussian with p != 2")
        a = check_orders("orders", orders)
        return a * (self.sensitivity / self.sigma) ** 2 / 2.0

    def privacy_profile(self, epsilon: float) -> float:
        """Upper bound on δ(ε).

        p = 2: the exact analytic Gaussian δ(ε). p ∈ (2, ∞): Lemma 3 inverted,
        δ = exp(−ε²σ²/(2κ s²)) at ε' = min(ε, 1) (δ(ε) is non-increasing), and 1 (no claim) where
        that exceeds 1/2.
        """
        eps = check_nonnegative("epsilon", epsilon)
        if self.p == 2.0:
            return Gaussian(self.sigma, self.sensitivity).privacy_profile(eps)
        e = min(eps, LEMMA3_MAX_EPSILON)
        t = e * self.sigma / self.sensitivity
        d = math.exp(-(t * t) / (2.0 * self.kappa)) * (1 + 2**-50)  # t·t → inf (δ = 0), where t**2 would raise
        return round_up(d) if d <= LEMMA3_MAX_DELTA else 1.0

    def lemma3_epsilon(self, delta: float) -> float:
        """ε = s·sqrt(2κ log(1/δ))/σ certified by Lemma 3 at ``delta`` (p ∈ (2, ∞)), rounded up.

        Raises ``ValueError`` outside the range the lemma is used in (ε ≤ 1, δ ≤ 1/2).
        """
        dlt = check_delta("delta", delta)
        if dlt > LEMMA3_MAX_DELTA:
            raise ValueError(f"delta must be in (0, {LEMMA3_MAX_DELTA}] for Lemma 3; got {delta!r}")
        eps = round_up(self.sensitivity * math.sqrt(2.0 * self.kappa * math.log(1.0 / dlt)) / self.sigma * (1 + 2**-50))
        if eps > LEMMA3_MAX_EPSILON:
            raise ValueError(
                f"sigma={self.sigma} is too small for Lemma 3 at delta={dlt}: it would give epsilon={eps} > "
                f"{LEMMA3_MAX_EPSILON}, outside the lemma's range"
            )
        return eps

    def privacy_event(self, relation: str = "add_remove", delta: Optional[float] = None) -> ev.PrivacyEvent:
        """The dpcore event of one release.

        p = 2: ``GaussianEvent(σ/s)`` (exact at every δ; ``delta`` is not needed). p ∈ (2, ∞): with
        ``delta``, ``ApproxDpEvent(ε, δ)`` with ε from :meth:`lemma3_epsilon` (composition theorems
        can account for it); without, a ``MechanismEvent`` carrying the Lemma 3 profile
        :meth:`privacy_profile`.
        """
        check_relation("relation", relation)
        if _check_private_p(self.p) == 2.0:
            return ev.GaussianEvent(self.sigma / self.sensitivity, relation)
        if delta is not None:
            return ev.ApproxDpEvent(self.lemma3_epsilon(delta), delta, relation)
        return ev.MechanismEvent(name=repr(self), privacy_profile=self.privacy_profile, relation=relation)

    def __repr__(self) -> str:
        return (f"GeneralizedGaussian(p={self.p!r}, sigma={self.sigma!r}, dimension={self.dimension!r}, "
                f"sensitivity={self.sensitivity!r})")


def _check_private_p(p: float) -> float:
    if not 2.0 <= p < math.inf:
        raise ValueError(
            f"p must be in [2, inf) for a privacy guarantee of the generalized Gaussian mechanism "
            f"(Su, Zhao, Wang, Lemma 3 needs a smooth norm); got p={p!r}"
        )
    return p


def _profile_epsilon(mech: GeneralizedGaussian, delta: float) -> float:
    """ε that dpcore's profile accountant reports for one release of ``mech`` at ``delta``."""
    return dpcore.get_epsilon(mech.privacy_event(), delta, accountant="profile").epsilon
