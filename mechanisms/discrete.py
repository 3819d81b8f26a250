"""Discrete Gaussian and discrete Laplace mechanisms for integer-valued queries, sampled exactly
(Canonne, Kamath, Steinke 2020 — "CKS20"; samplers in :mod:`mechanisms.exact_sampling`).

Both take an integer query and an integer sensitivity Δ (a count changes by at most Δ between
neighbours under the relation passed to ``privacy_event``) and release an integer. Domain: every
integer (int arrays, Python integers, integer-valued floats), of any magnitude — the sum is exact
(int64, or Python integers beyond ±2⁶²), so no release fails or saturates because of the value.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Optional

import numpy as np

import dpcore
from dpcore import events as ev
from dpcore.calibration import MIN_NOISE_MULTIPLIER
from dpcore._validation import check_nonnegative, check_orders, check_positive, check_positive_int, check_relation
from dpcore.result import round_up

from ._int64 import in_int64_safe_range, integer_array
from .base import Mechanism, RngLike, as_generator, check_approx_target, check_calibrated_scale, check_integer_array
from .exact_sampling import RandomBits, discrete_gaussian, discrete_laplace_batch
from .laplace import _exact_epsilon, _pure_scale

__all__ = ["DiscreteGaussian", "DiscreteLaplace", "discrete_gaussian_delta"]

_U = np.finfo(float).eps / 2  # unit roundoff of float64
_TAIL = 39.0  # exp(−x²/2σ²) underflows to 0 in float64 beyond |x| ≈ 38.6σ
#: Most terms :func:`discrete_gaussian_delta` sums one by one (σ up to about 1 700); wider sums are
#: bounded by integrals (:func:`_wide_delta`), so an evaluation costs O(1) instead of O(σ).
MAX_SUMMED_TERMS = 2**17


def _add(value: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """value + noise exactly: int64 when both stay below 2⁶² in magnitude, else Python integers."""
    small = (value.dtype != object and noise.dtype != object
             and in_int64_safe_range(value) and in_int64_safe_range(noise))
    if small:
        return value + noise.reshape(value.shape)
    return (value.astype(object).ravel() + noise.astype(object)).reshape(value.shape)


def _noisy(value: object, rng: RngLike, draw: Callable[[RandomBits], int]) -> np.ndarray:
    arr = check_integer_array("value", value)
    bits = RandomBits(as_generator(rng))
    draws = [draw(bits) for _ in range(arr.size)]
    return _add(arr, integer_array(draws))


def _gaussian_weights(lo: int, hi: int, sigma: float) -> np.ndarray:
    x = np.arange(lo, hi + 1, dtype=np.float64)
    return np.exp(-(x * x) / (2.0 * sigma * sigma))


def discrete_gaussian_delta(sigma: float, epsilon: float, sensitivity: int) -> float:
    """Exact privacy profile of the discrete Gaussian mechanism, rounded up (CKS20, Thm 7).

    δ(ε) = P[X > εσ²/Δ − Δ/2] − e^ε P[X > εσ²/Δ + Δ/2], X ~ N_ℤ(0, σ²), which is tight.
    With x₀ = ⌊εσ²/Δ − Δ/2⌋ + 1 (computed in exact rationals) and w(x) = exp(−x²/(2σ²)),
    δ = [Σ_{x₀ ≤ x < x₀+Δ} w(x) − (e^ε − 1) Σ_{x ≥ x₀+Δ} w(x)] / Σ_x w(x).
    The sums are truncated where w underflows; dropping the negative tail and shrinking the
    normaliser both increase the result, so truncation errs on the safe side. The float64 sums are
    then inflated by an explicit bound on their rounding error (terms: exp of an argument ≤ A has
    relative error ≤ (A + 2)u; pairwise sums of n terms add ≤ log₂(n)·u). Beyond
    :data:`MAX_SUMMED_TERMS` terms the sums are bounded by integrals instead (:func:`_wide_delta`).

    Parameters
    ----------
    sigma : float
        σ > 0 of N_ℤ(0, σ²) (the variance parameter, not the standard deviation of the pmf).
    epsilon : float
        ε ≥ 0, nats.
    sensitivity : int
        Δ ≥ 1, integer.
    """
    sigma = check_positive("sigma", sigma)
    eps = check_nonnegative("epsilon", epsilon)
    sens = check_positive_int("sensitivity", sensitivity)
    threshold = Fraction(eps) * Fraction(sigma) ** 2 / sens - Fraction(sens, 2)
    x0 = math.floor(threshold) + 1
    x1 = x0 + sens
    reach = math.ceil(_TAIL * sigma) + 1
    if 2 * reach + 1 > MAX_SUMMED_TERMS or sens > MAX_SUMMED_TERMS:
        return _wide_delta(sigma, eps, x0, x1)
    s1_terms = _gaussian_weights(x0, x1 - 1, sigma)
    s2_terms = _gaussian_weights(x1, max(x1, reach), sigma)
    z_terms = _gaussian_weights(-reach, reach, sigma)
    s1, s2, z = float(np.sum(s1_terms)), float(np.sum(s2_terms)), float(np.sum(z_terms))
    c = math.expm1(eps)
    numerator = s1 - c * s2
    n = max(len(s1_terms), len(s2_terms), len(z_terms))
    worst_arg = max(x0 * x0, (x1 - 1) ** 2, max(x1, reach) ** 2, reach * reach) / (2.0 * sigma * sigma)
    eta = (min(worst_arg, 800.0) + math.log2(n) + 8.0) * _U
    subnormal = n * 2.0**-1074  # absolute error of terms that underflow to subnormals
    upper = (numerator + 3 * eta * (s1 + c * s2) + 3 * subnormal) / (z * (1.0 - 2 * eta))
    return min(1.0, max(0.0, round_up(upper)))


def _wide_delta(sigma: float, eps: float, x0: int, x1: int) -> float:
    """Upper bound on the δ of :func:`discrete_gaussian_delta` from integrals, in O(1) (mpmath, 40 digits).

    With w(t) = exp(−t²/(2σ²)) and I(a, b) = ∫_a^b w = σ·sqrt(π/2)·(erfc(a/(σ√2)) − erfc(b/(σ√2))):

    * Z = Σ_x w(x) = σ√(2π)·Σ_k exp(−2π²σ²k²) ≥ σ√(2π) (Poisson summation; all terms positive);
    * S2 = Σ_{x ≥ x₁} w(x) ≥ I(x₁, ∞) + w(x₁)/2 when w is convex on [x₁, ∞) (x₁ ≥ σ: the trapezoid
      rule overestimates the integral of a convex function), else ≥ I(x₁, ∞) (w decreasing; x₁ > 0);
    * S1 = Σ_{x₀ ≤ x < x₁} w(x) ≤ I(x₀ − ½, x₁ − ½) when w is convex on that range (x₀ − ½ ≥ σ: the
      midpoint rule underestimates the integral), else ≤ I(x₀, x₁ − 1) + max w on [x₀, x₁ − 1]
      (w unimodal).

    δ ≤ (S1 − (e^ε − 1)·S2)/Z with the bounds in the safe direction; the mpmath values (relative
    error ~1e-40) are inflated by 1e-30 of the sums before the final rounding up. The second-order
    rules are tight to O(x/σ²)² relative; tests compare with the exact sums where both are computable.
    """
    import mpmath

    with mpmath.workdps(40):
        s, x0m, x1m = mpmath.mpf(sigma), mpmath.mpf(x0), mpmath.mpf(x1)
        scale = s * mpmath.sqrt(mpmath.pi / 2)
        root2s = s * mpmath.sqrt(2)

        def integral(a, b):  # ∫_a^b w, computed where it does not cancel
            if a >= 0:
                return scale * (mpmath.erfc(a / root2s) - (mpmath.erfc(b / root2s) if b != mpmath.inf else 0))
            return scale * (mpmath.erf(b / root2s) - mpmath.erf(a / root2s))

        def w(t):
            return mpmath.exp(-t * t / (2 * s * s))

        z_low = 2 * scale
        s2_low = integral(x1m, mpmath.inf) + (w(x1m) / 2 if x1m >= s else 0)
        if x0m - mpmath.mpf(0.5) >= s:
            s1_up = integral(x0m - mpmath.mpf(0.5), x1m - mpmath.mpf(0.5))
        else:
            peak = min(max(mpmath.mpf(0), x0m), x1m - 1)
            s1_up = integral(x0m, x1m - 1) + w(peak)
        c = mpmath.expm1(mpmath.mpf(eps))
        upper = (s1_up - c * s2_low + mpmath.mpf(10) ** -30 * (s1_up + c * s2_low)) / z_low
        return min(1.0, max(0.0, round_up(upper)))


class DiscreteGaussian(Mechanism):
    """Add discrete Gaussian noise N_ℤ(0, σ²), P[y] ∝ exp(−y²/(2σ²)) on ℤ, to an integer query.

    Parameters
    ----------
    sigma : float
        σ > 0. The sampler uses σ² = Fraction(sigma)² exactly.
    sensitivity : int
        Δ ≥ 1: integer ℓ1/ℓ2 change of a scalar count between neighbours (the ℓ2 change of a vector
        query with ``privacy_event(vector=True)``).

    Notes
    -----
    Privacy: the exact profile of CKS20 Thm 7 (:func:`discrete_gaussian_delta`, scalar queries) and
    (Δ²/(2σ²))-zCDP, i.e. RDP α Δ²/(2σ²) (CKS20 Thm 4) — the same curve as the continuous Gaussian.
    dpcore receives a :class:`~dpcore.events.MechanismEvent` carrying both.
    """

    noise_parameter = "sigma"

    def __init__(self, sigma: float, sensitivity: int = 1) -> None:
        self.sigma = check_positive("sigma", sigma)
        self.sensitivity = check_positive_int("sensitivity", sensitivity)
        self._sigma_squared = Fraction(self.sigma) ** 2

    @classmethod
    def calibrate(
        cls, epsilon: float, delta: Optional[float] = None, sensitivity: int = 1, *, accountant: str = "auto"
    ) -> "DiscreteGaussian":
        """Least σ for which ``dpcore.get_epsilon(event, δ, accountant)`` ≤ ε (via ``dpcore.calibrate``).

        Parameters
        ----------
        epsilon : float
            Target ε in (0, ∞), nats.
        delta : float
            Target δ in (0, 1).
        sensitivity : int
            Δ ≥ 1.
        accountant : str
            dpcore accountant; ``"auto"`` takes the best curve dpcore can use.

        σ is searched from ``sensitivity`` × :data:`dpcore.calibration.MIN_NOISE_MULTIPLIER` up; a target
        met there already (ε of hundreds of thousands) returns that floor.
        """
        eps, dlt = check_approx_target(epsilon, delta, "discrete Gaussian")
        sens = check_positive_int("sensitivity", sensitivity)
        guess = check_calibrated_scale("sigma", sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps, epsilon=epsilon,
                                       delta=delta, sensitivity=sensitivity)
        floor = sens * MIN_NOISE_MULTIPLIER  # as dpcore's noise calibration: a looser target returns the floor
        lower = max(guess / 4.0, floor)
        result = dpcore.calibrate(
            lambda s: cls(s, sens).privacy_event(), "sigma", eps, dlt,
            lower=lower, upper=max(guess, 4.0 * lower), increasing=False, accountant=accountant,
            bounds=(floor, math.inf),
        )
        return cls(result.value, sens)

    def randomize(self, value: object, rng: RngLike = None) -> np.ndarray:
        """Integer ``value`` (scalar or array, any magnitude) + i.i.d. exact N_ℤ(0, σ²) noise.

        int64, or Python integers (dtype object) where a value or a draw reaches ±2⁶².
        """
        return _noisy(value, rng, lambda bits: discrete_gaussian(bits, self._sigma_squared))

    def rdp(self, orders: object) -> np.ndarray:
        """α Δ²/(2σ²) nats (CKS20, Thm 4: (Δ²/(2σ²))-zCDP)."""
        return check_orders("orders", orders) * (self.sensitivity / self.sigma) ** 2 / 2.0

    def privacy_profile(self, epsilon: float) -> float:
        """Exact δ(ε), rounded up (CKS20, Thm 7; :func:`discrete_gaussian_delta`)."""
        return discrete_gaussian_delta(self.sigma, epsilon, self.sensitivity)

    def privacy_event(self, relation: str = "add_remove", *, vector: bool = False) -> ev.MechanismEvent:
        """``MechanismEvent`` of one release.

        For a scalar query (default) it carries the zCDP/RDP curve and the exact profile of CKS20
        Thm 7. For a vector query whose ℓ2 sensitivity is Δ (``vector=True``) the scalar profile is
        not the worst case, and the event carries only the RDP curve, which the multivariate
        discrete Gaussian satisfies (CKS20 Thm 14: (Δ₂²/(2σ²))-concentrated DP).
        """
        return ev.MechanismEvent(name=repr(self), rdp=self.rdp,
                                 privacy_profile=None if vector else self.privacy_profile,
                                 relation=check_relation("relation", relation))

    def __repr__(self) -> str:
        return f"DiscreteGaussian(sigma={self.sigma!r}, sensitivity={self.sensitivity!r})"


class DiscreteLaplace(Mechanism):
    """Add discrete Laplace noise, P[y] ∝ exp(−|y|/scale) on ℤ, to an integer query.

    ε-DP with ε = Δ/scale (the pmf ratio of two shifts by ≤ Δ is ≤ e^{Δ/scale}; tight), sampled
    exactly (CKS20, Alg. 2) with scale = Fraction(scale).

    Parameters
    ----------
    scale : float
        In (0, ∞).
    sensitivity : int
        Δ ≥ 1.
    """

    noise_parameter = "scale"

    def __init__(self, scale: float, sensitivity: int = 1) -> None:
        self.scale = check_positive("scale", scale)
        self.sensitivity = check_positive_int("sensitivity", sensitivity)
        self._scale = Fraction(self.scale)

    @classmethod
    def calibrate(cls, epsilon: float, delta: Optional[float] = None, sensitivity: int = 1) -> "DiscreteLaplace":
        """The least scale Δ/ε (rounded up) giving ε-DP; ``delta`` must be omitted."""
        sens = check_positive_int("sensitivity", sensitivity)
        # Δ as a float rounded *up*: float(10**16 + 1) rounds down to 1e16, and the scale calibrated for it gave
        # ε = (10**16 + 1)/1e16 > the target
        return cls(_pure_scale(epsilon, delta, round_up(Fraction(sens)), "DiscreteLaplace"), sens)

    @property
    def pure_epsilon(self) -> float:
        """ε = Δ / scale, rounded up."""
        return _exact_epsilon(self.sensitivity, self.scale)

    def randomize(self, value: object, rng: RngLike = None) -> np.ndarray:
        """Integer ``value`` (scalar or array, any magnitude) + i.i.d. exact discrete Laplace noise.

        Drawn by the batched sampler :func:`mechanisms.exact_sampling.discrete_laplace_batch` (the
        same exact CKS20 Alg. 2); a value or a draw beyond ±2⁶² (draws that large need astronomical
        scales) makes the result an array of Python integers (dtype object).
        """
        arr = check_integer_array("value", value)
        noise = discrete_laplace_batch(as_generator(rng), self._scale.numerator, self._scale.denominator, arr.size)
        return _add(arr, noise)

    def privacy_event(self, relation: str = "add_remove") -> ev.PureDpEvent:
        """``PureDpEvent(Δ/scale, relation)``."""
        return ev.PureDpEvent(self.pure_epsilon, check_relation("relation", relation))

    def __repr__(self) -> str:
        return f"DiscreteLaplace(scale={self.scale!r}, sensitivity={self.sensitivity!r})"
