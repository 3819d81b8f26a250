"""Pure ε-DP continuous mechanisms: Laplace (ℓ1 sensitivity) and ℓ2-Laplace / Gamma-norm (ℓ2)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

import numpy as np

from dpcore import events as ev
from dpcore._validation import check_bool, check_dimension, check_nonnegative, check_positive, check_relation
from dpcore.result import round_up

from . import kernels
from .base import (
    Mechanism,
    RngLike,
    as_generator,
    check_calibrated_scale,
    check_finite_array,
    clamp_to_bound,
    convert_sensitivity,
    least_passing,
    value_bound,
)
from .exact_sampling import discrete_laplace_batch

__all__ = ["Laplace", "L2Laplace", "SECURE_SLACK"]

#: Relative sensitivity slack of the secure Laplace release: the lattice step g is chosen with
#: d·g ≤ SECURE_SLACK·Δ₁, and the mechanism accounts for Δ₁(1 + SECURE_SLACK).
SECURE_SLACK = Fraction(1, 2**20)


def _pure_scale(epsilon: object, delta: object, sensitivity: float, name: str, stated: object = None) -> float:
    """Least scale b with Δ/b ≤ ε as dpcore reads it (``round_up(1/(b/Δ))`` for a LaplaceEvent);
    ``stated``: the user's sensitivity for messages when Δ is derived from it (the secure slack)."""
    eps = check_positive("epsilon", epsilon)
    if delta is not None:
        raise ValueError(f"delta must be None: {name} is calibrated for pure epsilon-DP; got {delta!r}")
    scale = round_up(check_calibrated_scale("scale", Fraction(sensitivity) / Fraction(eps), epsilon=epsilon,
                                            sensitivity=sensitivity if stated is None else stated))
    return least_passing(scale, lambda b: round_up(1.0 / (b / sensitivity)) <= eps
                         and _exact_epsilon(sensitivity, b) <= eps)


def _accounted(sensitivity: float, secure: bool) -> float:
    """Δ₁(1 + SECURE_SLACK) rounded up if ``secure``, else Δ₁."""
    return round_up(Fraction(sensitivity) * (1 + SECURE_SLACK)) if secure else sensitivity


def _lattice_point(index: int, step: Fraction) -> float:
    """The float nearest index·step, ±inf beyond the float range (post-processing of the index)."""
    try:
        return float(index * step)
    except OverflowError:
        return math.inf if index > 0 else -math.inf


def _exact_epsilon(sensitivity: float, scale: float) -> float:
    """ε = Δ / b rounded up (exact rational arithmetic on the two floats)."""
    return round_up(Fraction(sensitivity) / Fraction(scale))


class Laplace(Mechanism):
    """Laplace noise of scale b (density exp(−|x|/b)/(2b)) added to a query of ℓ1 sensitivity Δ₁.

    Scalar and vector queries alike (the noise has the shape of ``value``).

    **Secure (default): exact lattice release.** A textbook float Laplace sampler is not ε-DP in
    floating point: the set of outputs it can reach depends on the query value (Mironov 2012, "On
    significance of the least significant bits for differential privacy", CCS, §3 — the support
    attack of :func:`audits.targets.float_support_target`). With ``secure=True`` the release is
    instead the OpenDP-style lattice construction, computed exactly:

    1. g = the largest power of two with d·g ≤ :data:`SECURE_SLACK`·Δ₁, where d = ``value.size``
       (every entry counts as one coordinate of one query, the safe reading of a batch too; the
       shape of ``value`` must not depend on the data, so that neighbours share the lattice);
    2. k = round(value / g), exact (division by a power of two; for |value| ≥ 2⁵³·g the value is
       already a multiple of g and k is computed as a Python integer), so every finite value works;
    3. Z ~ discrete Laplace, P[z] ∝ exp(−|z|·g/b) on ℤᵈ, sampled exactly in integer arithmetic
       (Canonne, Kamath, Steinke 2020, Alg. 2; :func:`mechanisms.exact_sampling.discrete_laplace_batch`);
    4. output g·(k + Z) (a point of the lattice gℤᵈ; converting k + Z to float — rounding, or ±inf
       beyond the float range — is post-processing of k + Z and costs no privacy).

    Domain: every finite value of a public shape (no release fails or saturates because of the
    value; non-finite values violate every finite Δ₁ and are refused).

    Privacy (pure ε-DP, tight up to the slack): rounding moves each coordinate by ≤ g/2, so
    neighbours' lattice points satisfy ‖k − k′‖₁ ≤ Δ₁/g + d, and the discrete Laplace pmf ratio
    is ≤ exp(‖k − k′‖₁·g/b) ≤ exp((Δ₁ + d·g)/b) ≤ exp(Δ₁(1 + 2⁻²⁰)/b). The mechanism therefore
    accounts for the sensitivity Δ₁(1 + 2⁻²⁰) (:attr:`accounted_sensitivity`), whatever d;
    :meth:`calibrate` calibrates b for it. The discrete law is not in general dominated by the
    continuous Laplace privacy-loss curve (it puts mass 1/(1 + e^{−g/b}) > ½ on the largest loss), so :meth:`privacy_event` is a ``PureDpEvent`` (dpcore then uses
    the randomized-response worst case, sound for every ε-DP mechanism).

    **Float (``secure=False``): NOT floating-point safe.** ``value`` + ``Generator.laplace`` noise,
    the fast path, with entries clamped to ±:attr:`value_bound` = ±2⁴⁰b (public; 1-Lipschitz, so
    the guarantee holds for every finite value, and the float sum cannot round the noise away); ε = Δ₁/b holds only in real arithmetic (Dwork, McSherry, Nissim, Smith 2006;
    Dwork & Roth 2014, Thm 3.6), and :meth:`privacy_event` is the continuous ``LaplaceEvent``.
    The Numba :attr:`kernel` (for solvers' compiled loops) is this float sampler in both modes.

    Parameters
    ----------
    scale : float
        b in (0, ∞), units of the query.
    sensitivity : float
        Δ₁ = sup ‖q(D) − q(D′)‖₁ over neighbours under the relation passed to :meth:`privacy_event`.
    secure : bool
        Exact lattice release (default) or the float sampler.
    """

    noise_parameter = "scale"
    kernel = staticmethod(kernels.laplace_noise_kernel)

    def __init__(self, scale: float, sensitivity: float = 1.0, *, secure: bool = True) -> None:
        self.scale = check_positive("scale", scale)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.value_bound = value_bound("scale", self.scale)
        self.secure = check_bool("secure", secure)

    @classmethod
    def calibrate(
        cls,
        epsilon: float,
        delta: Optional[float] = None,
        sensitivity: float = 1.0,
        *,
        norm: float = 1.0,
        dimension: Optional[int] = None,
        secure: bool = True,
    ) -> "Laplace":
        """The least scale b (rounded up) giving ε-DP; ``delta`` must be omitted.

        b = Δ₁/ε for ``secure=False`` and b = Δ₁(1 + 2⁻²⁰)/ε for the secure lattice release (see the
        class notes). ``sensitivity`` is measured in ℓ_norm (default ℓ1); for norm > 1 it is
        converted to ℓ1 with the factor d^{1 − 1/norm} (:func:`mechanisms.base.convert_sensitivity`),
        which needs ``dimension``.
        """
        sens = convert_sensitivity(check_positive("sensitivity", sensitivity), norm, 1.0, dimension)
        return cls(_pure_scale(epsilon, delta, _accounted(sens, bool(secure)), "Laplace", sensitivity), sens,
                   secure=secure)

    @property
    def accounted_sensitivity(self) -> float:
        """Δ₁(1 + 2⁻²⁰) rounded up when secure (the lattice rounding is paid for), else Δ₁."""
        return _accounted(self.sensitivity, self.secure)

    @property
    def pure_epsilon(self) -> float:
        """ε = :attr:`accounted_sensitivity` / b, rounded up."""
        return _exact_epsilon(self.accounted_sensitivity, self.scale)

    def granularity(self, dimension: int) -> float:
        """g of the secure release of a ``dimension``-entry value: the largest 2^j with d·g ≤ 2⁻²⁰·Δ₁."""
        d = check_dimension("dimension", dimension)
        bound = Fraction(self.sensitivity) * SECURE_SLACK / d
        j = bound.numerator.bit_length() - bound.denominator.bit_length()
        if Fraction(2) ** j > bound:
            j -= 1
        if j < -1074:
            raise ValueError(f"sensitivity={self.sensitivity!r} is too small for a lattice release of "
                             f"dimension {d} (needs sensitivity * 2**-20 / dimension >= 2**-1074)")
        return math.ldexp(1.0, j)

    def delivered_epsilon(self, dimension: int) -> float:
        """ε actually delivered on a ``dimension``-entry value: (Δ₁ + d·g)/b secure, Δ₁/b float; rounded up."""
        d = check_dimension("dimension", dimension)
        if not self.secure:
            return self.pure_epsilon
        return round_up((Fraction(self.sensitivity) + d * Fraction(self.granularity(d))) / Fraction(self.scale))

    def randomize(self, value: object, rng: RngLike = None) -> np.ndarray:
        """``value`` + Laplace noise of the same shape: exact lattice release, or float if not ``secure``."""
        arr = check_finite_array("value", value)
        gen = as_generator(rng)
        if not self.secure:
            return clamp_to_bound(arr, self.value_bound) + gen.laplace(0.0, self.scale, size=arr.shape)
        g = self.granularity(max(arr.size, 1))
        t = Fraction(self.scale) / Fraction(g)  # discrete Laplace scale in lattice units
        noise = discrete_laplace_batch(gen, t.numerator, t.denominator, arr.size)
        flat = arr.ravel()
        small = np.abs(flat) < 2.0**53 * g  # then value/g is exact and below 2⁵³ (inf bound: all small)
        with np.errstate(over="ignore", under="ignore"):
            if noise.dtype != object and small.all():  # |k + Z| < 2⁵³ + 2⁶² fits int64
                released = (np.rint(flat / g).astype(np.int64) + noise).astype(np.float64) * g
            else:  # huge values or draws: exact Python integers, rounded once by the float conversion
                step = Fraction(g)
                released = np.array([_lattice_point(round(Fraction(float(v)) / step) + int(z), step)
                                     for v, z in zip(flat, noise)], dtype=np.float64)
        return released.reshape(arr.shape)

    def kernel_args(self) -> tuple:
        """Arguments after ``rng, d`` of :func:`mechanisms.kernels.laplace_noise_kernel` (the float sampler)."""
        return (self.scale,)

    def privacy_profile(self, epsilon: float) -> float:
        """δ(ε) of one release, rounded up.

        Float: the exact δ(ε) = max(0, 1 − exp((ε − ε₀)/2)), ε₀ = Δ₁/b, of a scalar query — the
        hockey-stick divergence between Lap(0, b) and Lap(Δ₁, b), checked against numerical
        integration in the tests. For a vector query it is the profile of neighbours whose
        difference lies on one coordinate; that this is the worst case is not claimed here, which
        is why :meth:`privacy_event` hands dpcore a ``LaplaceEvent`` rather than this profile.

        Secure: the randomized-response profile max(0, (e^{ε₀} − e^ε)/(1 + e^{ε₀})) at
        ε₀ = :attr:`pure_epsilon`, an upper bound for every ε₀-DP mechanism (Kairouz, Oh,
        Viswanath 2015, Thm 2.2).
        """
        eps = check_nonnegative("epsilon", epsilon)
        eps0 = self.pure_epsilon
        if eps >= eps0:
            return 0.0
        if self.secure:
            return round_up(-math.expm1(eps - eps0) / (1.0 + math.exp(-eps0)) * (1 + 2**-50))
        return round_up(-math.expm1((eps - eps0) / 2.0) * (1 + 2**-50))

    def privacy_event(self, relation: str = "add_remove") -> ev.PrivacyEvent:
        """``PureDpEvent(pure_epsilon, relation)`` when secure; ``LaplaceEvent(b/Δ₁, relation)`` for float."""
        rel = check_relation("relation", relation)
        if self.secure:
            return ev.PureDpEvent(self.pure_epsilon, rel)
        return ev.LaplaceEvent(self.scale / self.sensitivity, rel)

    def __repr__(self) -> str:
        return f"Laplace(scale={self.scale!r}, sensitivity={self.sensitivity!r}, secure={self.secure!r})"


class L2Laplace(Mechanism):
    """Gamma-norm ("ℓ2-Laplace") noise: density ∝ exp(−‖b‖₂/scale) in ℝ^d, ℓ2 sensitivity Δ₂.

    Sampled exactly as a uniform direction on the Euclidean sphere times a radius
    ‖b‖₂ ~ Gamma(shape=d, scale). ε-DP with ε = Δ₂/scale (the log-density ratio of two shifts is
    |‖z − Δ‖₂ − ‖z‖₂|/scale ≤ ‖Δ‖₂/scale by the triangle inequality; tight along the shift).
    Used for ε-DP output perturbation (Zhang, Zheng, Mou, Wang 2017, Alg. 1 line 5: density
    ∝ exp(−ε‖z‖/Δ)) and ε-DP objective perturbation (lecture 14, Alg. 1: exp(−ε‖b‖/(2L)), i.e.
    ``sensitivity=2L``).

    Domain: every finite value; entries are clamped to ±:attr:`value_bound` = ±2⁴⁰·scale (public,
    1-Lipschitz: the guarantee holds for every finite input, and the noise is never rounded away).

    Parameters
    ----------
    scale : float
        In (0, ∞), units of the query.
    sensitivity : float
        Δ₂ under the relation passed to :meth:`privacy_event`.
    dimension : int, optional
        d; if given, :meth:`randomize` checks the last axis of ``value`` against it, otherwise d is
        read from that axis (a scalar value means d = 1).
    """

    noise_parameter = "scale"
    kernel = staticmethod(kernels.l2_laplace_noise_kernel)

    def __init__(self, scale: float, sensitivity: float = 1.0, dimension: Optional[int] = None) -> None:
        self.scale = check_positive("scale", scale)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.value_bound = value_bound("scale", self.scale)
        self.dimension = None if dimension is None else check_dimension("dimension", dimension)

    @classmethod
    def calibrate(
        cls,
        epsilon: float,
        delta: Optional[float] = None,
        sensitivity: float = 1.0,
        *,
        dimension: Optional[int] = None,
        norm: float = 2.0,
    ) -> "L2Laplace":
        """The least scale Δ₂/ε (rounded up) giving ε-DP; ``delta`` must be omitted.

        ``sensitivity`` is measured in ℓ_norm (default ℓ2), converted to ℓ2 as in
        :func:`mechanisms.base.convert_sensitivity` (norm > 2 needs ``dimension``).
        """
        sens = convert_sensitivity(check_positive("sensitivity", sensitivity), norm, 2.0, dimension)
        return cls(_pure_scale(epsilon, delta, sens, "L2Laplace"), sens, dimension)

    @property
    def pure_epsilon(self) -> float:
        """ε = Δ₂ / scale, rounded up."""
        return _exact_epsilon(self.sensitivity, self.scale)

    def randomize(self, value: object, rng: RngLike = None) -> np.ndarray:
        """``value`` + one Gamma-norm draw per output; ``value`` has shape (..., d) or is a scalar."""
        arr = clamp_to_bound(check_finite_array("value", value, last_axis=self.dimension), self.value_bound)
        shape = arr.shape if arr.ndim else (1,)
        gen = as_generator(rng)
        z = gen.standard_normal(shape)
        norms = np.sqrt(np.einsum("...i,...i->...", z, z))[..., None]
        radius = gen.gamma(shape[-1], self.scale, size=shape[:-1] + (1,))
        return arr + (z * (radius / norms)).reshape(arr.shape)

    def kernel_args(self) -> tuple:
        """Arguments after ``rng, d`` of :func:`mechanisms.kernels.l2_laplace_noise_kernel`."""
        return (self.scale,)

    def privacy_event(self, relation: str = "add_remove") -> ev.PureDpEvent:
        """``PureDpEvent(Δ₂/scale, relation)``."""
        return ev.PureDpEvent(self.pure_epsilon, check_relation("relation", relation))

    def __repr__(self) -> str:
        return f"L2Laplace(scale={self.scale!r}, sensitivity={self.sensitivity!r}, dimension={self.dimension!r})"
