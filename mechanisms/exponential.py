"""The exponential mechanism over a finite candidate set, sampled exactly by rejection."""

from __future__ import annotations

from fractions import Fraction
from typing import Optional, Tuple

import numpy as np

from dpcore import events as ev
from dpcore._validation import check_bool, check_positive, check_relation
from dpcore.result import round_down

from .base import Mechanism, RngLike, as_generator, check_finite_array
from .exact_sampling import uniform_below_exp

__all__ = ["ExponentialMechanism"]

_WORD = 2**53  # first draw of the uniform U of an acceptance test: 53 bits
_ULP_WORD = 2.0**-53
_BLOCK = 64  # proposals drawn per pending selection and round
_GAP_REL = 2.0**-50  # relative error bound on the float gap (two roundings of 2⁻⁵³ each, with room)
_EXP_REL = 2.0**-45  # relative error bound on NumPy's exp (a few ulps, with ample room)
_TINY = 2.0**-1074


class ExponentialMechanism(Mechanism):
    """Select candidate r with probability ∝ exp(ε·u(D, r)/(2Δu)) (McSherry & Talwar 2007).

    Δu = max over candidates r and neighbours D ~ D′ of |u(D, r) − u(D′, r)|. The mechanism is ε-DP
    (Dwork & Roth 2014, Thm 3.10): the numerator changes by a factor ≤ e^{ε/2} and the normaliser by
    another ≤ e^{ε/2}. When the utilities are *monotone* — for every neighbour pair all u(D, r)
    move in the same direction (e.g. counts under add/remove) — the two factors cannot both occur
    and exp(ε·u/Δu) is already ε-DP (McSherry & Talwar 2007; Dwork & Roth 2014, remark after
    Thm 3.10), so ``monotone=True`` halves the temperature. Using it for non-monotone utilities
    would only give 2ε-DP; the flag is the caller's claim.

    Sampling (exact). Let f = ε/(2Δu) (ε/Δu if monotone) rounded down to a float, so that
    f·2Δu ≤ ε exactly, and γ_r = f·(max_s u_s − u_r) ≥ 0 in exact rational arithmetic on the input
    floats. Propose r uniformly from the m candidates and accept with probability e^{−γ_r}; the first
    accepted r has law ∝ e^{−γ_r} ∝ exp(f·u_r) exactly — the softmax with no truncation: a candidate
    1000 nats below the best keeps its probability (a float Gumbel-max sampler, by contrast, gives
    probability 0 to candidates more than ≈ 40 nats below the best, an ε = ∞ event for neighbours).
    Each acceptance test compares a 53-bit uniform draw with rigorous float bounds on e^{−γ_r}
    (:meth:`acceptance_bounds`); a
    draw within those bounds (probability ≈ 2⁻⁴⁴ per test, or 2⁻⁵³ when e^{−γ_r} underflows) is
    resolved exactly by :func:`mechanisms.exact_sampling.uniform_below_exp`. The realised ε is
    therefore exactly f·2Δu ≤ ε (f·Δu ≤ ε if monotone) for every finite utility vector. Expected
    proposals per selection: m / Σ_r e^{−γ_r} ≤ m.

    Timing. The number of proposals depends on the utilities (one candidate far above the rest:
    ≈ m proposals; all equal: 1), so the *running time* is a side channel the ε above does not
    cover — as for the rejection samplers of the discrete mechanisms (Canonne, Kamath, Steinke 2020).
    Where an adversary can time the release, run it where timing is not observable.

    Parameters
    ----------
    epsilon : float
        ε in (0, ∞), nats.
    sensitivity : float
        Δu in (0, ∞), units of the utility.
    monotone : bool
        Whether the utilities are monotone (see above).

    Notes
    -----
    Domain: any finite utilities, shape (..., m) with m ≥ 1 public (non-finite utilities violate
    every finite Δu and are refused). f must lie in [2⁻¹⁰⁷³, 2¹⁰²²) (refused otherwise).
    """

    noise_parameter = "epsilon"

    def __init__(self, epsilon: float, sensitivity: float = 1.0, monotone: bool = False) -> None:
        self.epsilon = check_positive("epsilon", epsilon)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.monotone = check_bool("monotone", monotone)
        # Utilities are multiplied by this factor; rounded down so the realised ε never exceeds ε.
        denominator = Fraction(self.sensitivity) * (1 if self.monotone else 2)
        ratio = Fraction(self.epsilon) / denominator
        if not Fraction(2) ** -1073 <= ratio < Fraction(2) ** 1022:
            raise ValueError(f"epsilon/sensitivity must lie in [2**-1073, 2**1021]; got epsilon={epsilon!r}, "
                             f"sensitivity={sensitivity!r}")
        self._factor = round_down(ratio)

    @classmethod
    def calibrate(
        cls, epsilon: float, delta: Optional[float] = None, sensitivity: float = 1.0, *, monotone: bool = False
    ) -> "ExponentialMechanism":
        """Exponential mechanism with privacy ε for utility sensitivity Δu; ``delta`` must be omitted."""
        if delta is not None:
            raise ValueError(f"delta must be None: the exponential mechanism is pure epsilon-DP; got {delta!r}")
        return cls(epsilon, sensitivity, monotone)

    @property
    def temperature(self) -> float:
        """2Δu/ε (or Δu/ε when monotone): utilities are divided by it before the softmax."""
        return 1.0 / self._factor

    @property
    def realised_epsilon(self) -> Fraction:
        """The sampler's exact ε: f·2Δu (f·Δu if monotone), a rational ≤ :attr:`epsilon`."""
        return Fraction(self._factor) * Fraction(self.sensitivity) * (1 if self.monotone else 2)

    @property
    def pure_epsilon(self) -> float:
        """ε."""
        return self.epsilon

    def _utilities(self, value: object) -> np.ndarray:
        arr = check_finite_array("value", value)
        if arr.ndim == 0 or arr.shape[-1] == 0:
            raise ValueError(f"value must be an array of utilities with at least one candidate on its last axis; got shape {arr.shape}")
        return arr

    def _gaps(self, top: np.ndarray, u: np.ndarray) -> np.ndarray:
        """f·(top − u) in float (halves first: no overflow for finite inputs; inf only where γ > 1.7e308)."""
        with np.errstate(over="ignore", under="ignore"):
            return (top * 0.5 - u * 0.5) * (2.0 * self._factor)

    def acceptance_bounds(self, top: np.ndarray, u: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Floats p_low ≤ e^{−γ} ≤ p_high with γ = f·(top − u) exact, for finite top ≥ u (broadcast).

        The float gap has relative error ≤ 2⁻⁵² (two roundings) plus an absolute error ≤ 2⁻¹⁰⁷⁴·2f
        from subnormal halves; both are covered by 2⁻⁵⁰ relative plus 2⁻¹⁰⁷⁰·max(1, 2f) absolute,
        and NumPy's exp (a few ulps) by 2⁻⁴⁵ relative plus one subnormal.
        """
        gap = self._gaps(top, u)
        slack = 2.0**-1070 * max(1.0, 2.0 * self._factor)
        with np.errstate(over="ignore", under="ignore"):
            p_high = np.minimum(np.exp(-np.maximum(gap * (1 - _GAP_REL) - slack, 0.0)) * (1 + _EXP_REL) + _TINY, 1.0)
            p_low = np.maximum(np.exp(-(gap * (1 + _GAP_REL) + slack)) * (1 - _EXP_REL) - _TINY, 0.0)
        return p_low, p_high

    def probabilities(self, value: object) -> np.ndarray:
        """Selection probabilities softmax(ε u/(2Δu)) along the last axis of the utilities ``value`` (floats)."""
        u = self._utilities(value)
        w = np.exp(-self._gaps(u.max(axis=-1, keepdims=True), u))
        return w / w.sum(axis=-1, keepdims=True)

    def randomize(self, value: object, rng: RngLike = None) -> np.ndarray:
        """Index of the selected candidate for utilities ``value`` of shape (..., m); returns shape (...)."""
        u = self._utilities(value)
        gen = as_generator(rng)
        m = u.shape[-1]
        rows = u.reshape(-1, m)
        top = rows.max(axis=1)
        out = np.empty(rows.shape[0], dtype=np.int64)
        live = np.arange(rows.shape[0])
        block = min(m, _BLOCK)
        while live.size:
            proposal = gen.integers(0, m, size=(live.size, block))
            p_low, p_high = self.acceptance_bounds(top[live, None], rows[live[:, None], proposal])
            draw = gen.integers(0, _WORD, size=proposal.shape)
            accept = (draw + 1) * _ULP_WORD <= p_low  # U < (draw + 1)/2⁵³ ≤ e^{−γ}
            unsure = ~accept & (draw * _ULP_WORD < p_high)  # neither certainly below nor certainly above
            for i, j in zip(*np.nonzero(unsure)):
                row = live[i]
                gamma = (Fraction(top[row]) - Fraction(rows[row, proposal[i, j]])) * Fraction(self._factor)
                accept[i, j] = uniform_below_exp(gen, gamma, int(draw[i, j]), 53)
            hit = accept.any(axis=1)
            out[live[hit]] = proposal[hit, accept[hit].argmax(axis=1)]
            live = live[~hit]
        return out.reshape(u.shape[:-1])

    def privacy_event(self, relation: str = "add_remove") -> ev.PureDpEvent:
        """``PureDpEvent(ε, relation)``."""
        return ev.PureDpEvent(self.epsilon, check_relation("relation", relation))

    def __repr__(self) -> str:
        return f"ExponentialMechanism(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, monotone={self.monotone!r})"
