"""k-ary randomized response: the ε-DP local randomizer of the shuffle model."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

import mpmath
import numpy as np

from dpcore import events as ev
from dpcore._validation import check_positive, check_positive_int, check_relation
from dpcore.result import round_up

from . import kernels
from .base import Mechanism, RngLike, as_generator, check_integer_array

__all__ = ["RandomizedResponse", "MAX_CATEGORIES"]

_WORD = 1 << 53  # one uniform draw: an integer below 2⁵³
_RESOLUTION = _WORD * _WORD  # the mixing probability is Q / 2¹⁰⁶, Q an integer
_EXP_CAP = 700.0  # e^ε − 1 is bounded below with ε capped here (no overflow; the cap only adds privacy)

#: Largest number of categories k (the uniform category is one int64 draw below k).
MAX_CATEGORIES = 1 << 62


class RandomizedResponse(Mechanism):
    """k-ary randomized response (Warner 1965; generalized: Kairouz, Oh, Viswanath 2014).

    Each report x ∈ {0, …, k−1} is kept with probability p = e^ε/(e^ε + k − 1) and otherwise
    replaced by one of the other k − 1 values uniformly, so P[y | x] / P[y | x′] ≤ e^ε: ε-DP for
    one user's report under replacement of that report (local DP), and tight.

    Sampler (exact, for every k and ε in the domain). The same channel written as a mixture: with
    probability q = Q/2¹⁰⁶ the output is uniform on all k values, otherwise it is x. Then
    P[y = x] = 1 − q + q/k and P[y = y′ ≠ x] = q/k, so the sampler's exact ε is

        ε_real = log(1 + k(2¹⁰⁶ − Q)/Q) ≥ 0,

    and Q is the least integer with k(2¹⁰⁶ − Q)/Q ≤ E, E a rational lower bound on e^ε − 1; hence
    ε_real ≤ ε whatever the rounding (:attr:`realised_epsilon`). The event [U < q] uses a 106-bit
    uniform integer U (two 53-bit draws compared lexicographically), so ε_real is within
    ≈ k(k + e^ε)/(2¹⁰⁶ e^ε) of ε: no loss for any practical k; for k approaching 2⁶² and tiny ε
    the channel is more private than requested, never less. The uniform category is one exact
    ``Generator.integers(0, k)`` draw.

    Parameters
    ----------
    epsilon : float
        Local ε in (0, ∞), nats.
    k : int
        Number of categories, in [2, 2⁶²] (:data:`MAX_CATEGORIES`).
    """

    noise_parameter = "epsilon"
    kernel = staticmethod(kernels.randomized_response_kernel)

    def __init__(self, epsilon: float, k: int = 2) -> None:
        self.epsilon = check_positive("epsilon", epsilon)
        self.k = check_positive_int("k", k, minimum=2)
        if self.k > MAX_CATEGORIES:
            raise ValueError(f"k must be an integer in [2, 2**62]; got {k!r}")
        # E ≤ e^ε − 1: expm1 is within a few ulps, so shaving 2⁻⁵⁰ makes the bound safe.
        bound = Fraction(math.expm1(min(self.epsilon, _EXP_CAP))) * (1 - Fraction(1, 2**50))
        num, den = bound.numerator, bound.denominator
        # least Q with k(R − Q)/Q ≤ num/den  ⇔  Q ≥ kR·den/(k·den + num)
        self._mix_numerator = -((-self.k * _RESOLUTION * den) // (self.k * den + num))

    @classmethod
    def calibrate(
        cls, epsilon: float, delta: Optional[float] = None, sensitivity: float = 1.0, *, k: int = 2
    ) -> "RandomizedResponse":
        """k-ary randomized response with local ε; ``delta`` must be omitted and ``sensitivity`` is 1
        (any change of the one report is covered)."""
        if delta is not None:
            raise ValueError(f"delta must be None: randomized response is pure epsilon-DP; got {delta!r}")
        if check_positive("sensitivity", sensitivity) != 1.0:
            raise ValueError(f"sensitivity must be 1 for randomized response (inputs are categories); got {sensitivity!r}")
        return cls(epsilon, k)

    @property
    def mixing_probability(self) -> Fraction:
        """q = Q/2¹⁰⁶: the exact probability that the output is drawn uniformly from all k values."""
        return Fraction(self._mix_numerator, _RESOLUTION)

    @property
    def keep_probability(self) -> float:
        """P[y = x] = 1 − q + q/k (nearest float to the exact rational)."""
        q = self.mixing_probability
        return float(1 - q + q / self.k)

    @property
    def realised_epsilon(self) -> float:
        """The sampler's exact ε, log(1 + k(2¹⁰⁶ − Q)/Q), rounded up; ≤ :attr:`epsilon`."""
        excess = Fraction(self.k * (_RESOLUTION - self._mix_numerator), self._mix_numerator)
        with mpmath.workprec(128):
            value = mpmath.log1p(mpmath.mpf(excess.numerator) / excess.denominator)
            return round_up(value * (1 + mpmath.mpf(2) ** -100))

    @property
    def pure_epsilon(self) -> float:
        """ε: the sampler's exact ε (:attr:`realised_epsilon`) is at most this value."""
        return self.epsilon

    def randomize(self, value: object, rng: RngLike = None) -> np.ndarray:
        """Randomize reports ``value`` (integers in {0, …, k−1}, any shape); returns int64."""
        x = check_integer_array("value", value)
        if x.dtype == object or not np.all((x >= 0) & (x < self.k)):
            raise ValueError(f"value must contain only integers in {{0, ..., k-1}} with k={self.k}")
        gen = as_generator(rng)
        q_high, q_low = divmod(self._mix_numerator, _WORD)
        high = gen.integers(0, _WORD, size=x.shape)
        low = gen.integers(0, _WORD, size=x.shape)
        uniform = (high < q_high) | ((high == q_high) & (low < q_low))  # 106-bit U < Q, exactly
        return np.where(uniform, gen.integers(0, self.k, size=x.shape), x)

    def kernel_args(self) -> tuple:
        """Arguments after ``rng`` and the reports of :func:`mechanisms.kernels.randomized_response_kernel`."""
        return (self.k, *divmod(self._mix_numerator, _WORD))

    def probabilities(self, value: int) -> np.ndarray:
        """Output distribution P[y | x = value], y = 0, …, k−1 (floats nearest the exact rationals)."""
        q = self.mixing_probability
        probs = np.full(self.k, float(q / self.k))
        probs[value] = self.keep_probability
        return probs

    def privacy_event(self, relation: str = "replace_one") -> ev.PureDpEvent:
        """``PureDpEvent(ε)`` of one report (local DP: the neighbouring relation replaces the report)."""
        return ev.PureDpEvent(self.pure_epsilon, check_relation("relation", relation))

    def shuffled_event(self, n: int) -> ev.ShuffledEvent:
        """``ShuffledEvent(ε₀, n)``: n users each send one report, shuffled (Feldman, McMillan, Talwar 2021)."""
        return ev.ShuffledEvent(self.pure_epsilon, check_positive_int("n", n, minimum=2))

    def __repr__(self) -> str:
        return f"RandomizedResponse(epsilon={self.epsilon!r}, k={self.k!r})"
