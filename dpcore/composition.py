"""Composition theorems for (ε, δ)-DP mechanisms (adaptive composition; any neighbouring relation,
as long as every part is (ε_i, δ_i)-DP under the *same* relation). All ε in nats.

* :func:`basic_composition` — (Σε_i, Σδ_i); Dwork & Roth (2014), Thm 3.16.
* :func:`advanced_composition` — Dwork, Rothblum & Vadhan (2010), "Boosting and Differential
  Privacy", Thm III.3 (Dwork & Roth Thm 3.20): k-fold (ε, δ) ⇒
  (√(2k ln(1/δ′))·ε + kε(e^ε − 1), kδ + δ′) for every δ′ ∈ (0, 1).
* :func:`optimal_composition_delta` / :func:`optimal_composition_epsilon` — the exact privacy
  profile of the k-fold adaptive composition of (ε, δ)-DP mechanisms, Kairouz, Oh & Viswanath
  (2015), "The Composition Theorem for Differential Privacy", Thm 3.3 (see also Murtagh & Vadhan
  2016). Every (ε, δ)-DP mechanism is a post-processing of the canonical pair on {0, 1, 2, 3}

      P̃ = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0),   Q̃ = (0, (1−δ)/(1+e^ε), (1−δ)e^ε/(1+e^ε), δ)

  (KOV Thm 2.1), and the k-fold composition is dominated by — and attains — the product pair
  (KOV Thm 3.3). Its hockey-stick divergence at *any* ε_g ≥ 0 (not only at the grid (k − 2i)ε of
  Thm 3.3) is, with X ~ Bin(k, 1/(1+e^ε)) counting the "1/(1+e^ε)" coordinates,

      δ_g(ε_g) = 1 − (1−δ)^k + (1−δ)^k Σ_{i : (k−2i)ε > ε_g} P[X = i] (1 − e^{ε_g − (k−2i)ε}).

  The first part is the P̃-mass of outcomes containing a 0 (where Q̃ = 0); for outcomes in
  {1, 2}^k with i twos, P̃/Q̃ = e^{(k−2i)ε}, and Q̃(x) = P̃(x)e^{−(k−2i)ε}. The profile is
  symmetric in (P̃, Q̃), so this is the δ of both directions. At ε_g = (k−2i)ε it equals KOV's
  1 − (1−δ)^k (1 − δ_i). It is evaluated with mpmath (every summand is positive, so there is no
  cancellation; the precision grows with log10 k) over the i within a Bernstein window of the
  mean kp (p = 1/(1+e^ε)), the left-out binomial tails' mass (≤ 2e^{−800}) being added, and
  rounded up: O(√k) summands, so k = 10⁶ takes well under a second. The ε search runs on a
  vectorised float64 copy and the answer is re-checked against the mpmath value.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence, Tuple

import mpmath
import numpy as np
from scipy.optimize import brentq
from scipy.special import expit, logsumexp
from scipy.stats import binom

from ._validation import check_delta, check_nonnegative, check_positive, check_positive_int
from .events import UnsupportedEventError, check_count
from .result import round_up

__all__ = [
    "basic_composition",
    "advanced_composition",
    "optimal_composition_delta",
    "optimal_composition_epsilon",
]

_ULP = 2.0**-52
#: relative margin between the float search and the exact re-check (see optimal_composition_epsilon)
_SEARCH_MARGIN = 1e-10


def _check_delta_or_zero(name: str, value: object) -> float:
    """δ of a part: in [0, 1) (δ = 0 for pure DP)."""
    x = check_nonnegative(name, value)
    if not x < 1.0:
        raise ValueError(f"{name} must be in [0, 1); got {value!r}")
    return x


def _round_up_mp(value: mpmath.mpf, relative_slack: mpmath.mpf) -> float:
    """Round an mpmath value up to float64 after inflating it by its evaluation error."""
    return round_up(value * (1 + relative_slack))


# ------------------------------------------------------------------------------------- basic / DRV


def _as_list(name: str, values: object) -> list:
    """``values`` as a list, or ``ValueError`` naming ``name`` when it is not a sequence (a bare number)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} must be a sequence of numbers (one per part); got {values!r}")
    return list(values)


def basic_composition(epsilons: Sequence[float], deltas: Sequence[float]) -> Tuple[float, float]:
    """Basic composition: (Σ ε_i, Σ δ_i) (Dwork & Roth 2014, Thm 3.16), summed exactly.

    Parameters
    ----------
    epsilons : sequence of float
        ε_i ≥ 0 of each part, in nats.
    deltas : sequence of float
        δ_i ∈ [0, 1) of each part, same length as ``epsilons``.

    Returns
    -------
    (float, float)
        (ε, δ) rounded up (δ capped at 1, the trivial bound).
    """
    eps_list, delta_list = _as_list("epsilons", epsilons), _as_list("deltas", deltas)
    if len(eps_list) != len(delta_list):
        raise ValueError(
            f"deltas must have the same length as epsilons ({len(eps_list)}); got {len(delta_list)}"
        )
    eps_sum = sum((Fraction(check_nonnegative(f"epsilons[{i}]", e)) for i, e in enumerate(eps_list)), Fraction(0))
    delta_sum = sum((Fraction(_check_delta_or_zero(f"deltas[{i}]", d)) for i, d in enumerate(delta_list)), Fraction(0))
    return round_up(eps_sum), min(1.0, round_up(delta_sum))


def advanced_composition(epsilon: float, delta: float, count: int, delta_prime: float) -> Tuple[float, float]:
    """Advanced composition (Dwork, Rothblum, Vadhan 2010, Thm III.3; Dwork & Roth Thm 3.20).

    k-fold adaptive composition of (ε, δ)-DP mechanisms is
    (√(2k ln(1/δ′))·ε + kε(e^ε − 1), kδ + δ′)-DP.

    Parameters
    ----------
    epsilon : float
        ε > 0 of each part, in nats.
    delta : float
        δ ∈ [0, 1) of each part.
    count : int
        Number k ≥ 1 of parts.
    delta_prime : float
        Slack δ′ ∈ (0, 1).

    Returns
    -------
    (float, float)
        (ε, δ) rounded up (δ capped at 1).
    """
    eps = check_positive("epsilon", epsilon)
    dlt = _check_delta_or_zero("delta", delta)
    k = check_count("count", count)
    dprime = check_delta("delta_prime", delta_prime)
    with mpmath.workdps(40):
        e = mpmath.mpf(eps)
        total = mpmath.sqrt(2 * k * mpmath.log(1 / mpmath.mpf(dprime))) * e + k * e * mpmath.expm1(e)
        eps_total = _round_up_mp(total, mpmath.mpf(10) ** -35)
    return eps_total, min(1.0, round_up(k * Fraction(dlt) + Fraction(dprime)))


# ------------------------------------------------------------------------------ KOV exact profile


def _kov_dps(count: int) -> int:
    """Working precision: 30 digits plus the digits the pmf recurrence can lose over k steps."""
    return 30 + int(math.ceil(math.log10(count + 1)))


#: Bernstein tail exponent of the summation window: each left-out tail of X ~ Bin(k, p) has mass
#: ≤ e^{−800}, which is added to δ_g (every left-out summand is at most its pmf).
_KOV_TAIL_LOG = 800.0
#: largest number of summands of the exact profile (memory and time)
_KOV_MAX_TERMS = 2_000_000


def _kov_window(epsilon: float, count: int) -> Tuple[int, int]:
    """[i_lo, i_hi]: the i with P[X = i] outside it sum to ≤ 2e^{−800} (Bernstein's inequality
    P[|X − kp| ≥ t] ≤ 2 exp(−t²/(2(kp(1−p) + t/3))), X ~ Bin(k, p), p = 1/(1 + e^ε))."""
    if count > 2**53:
        raise UnsupportedEventError(f"count must be <= 2**53 for the exact optimal composition; got {count} "
                         "(use advanced composition, method 'drv')")
    p = float(expit(-epsilon))
    mean = count * p
    var = count * p * (1.0 - p)
    t = _KOV_TAIL_LOG / 3.0 + math.sqrt((_KOV_TAIL_LOG / 3.0) ** 2 + 2.0 * _KOV_TAIL_LOG * var)
    t = t * (1.0 + 1e-9) + 1.0  # float rounding of the window ends
    lo, hi = max(0, int(math.ceil(mean - t))), min(count, int(math.floor(mean + t)))
    if hi - lo + 1 > _KOV_MAX_TERMS:
        raise UnsupportedEventError(
            f"count={count} is too large for the exact optimal composition at epsilon={epsilon!r} "
            f"({hi - lo + 1} summands, at most {_KOV_MAX_TERMS}); use advanced composition (method 'drv')"
        )
    return lo, hi


def _kov_delta_mpmath(epsilon: float, delta: float, count: int, composed_epsilon: float) -> float:
    """KOV exact δ_g(ε_g) (module docstring) in mpmath over the window of :func:`_kov_window`,
    plus the bound on the left-out tails, rounded up to float64."""
    dps = _kov_dps(count)
    lo, hi = _kov_window(epsilon, count)
    with mpmath.workdps(dps):
        e = mpmath.mpf(epsilon)
        g = mpmath.mpf(composed_epsilon)
        ratio = mpmath.exp(-e)  # P[X = i+1]/P[X = i] = (k−i)/(i+1) · e^{−ε}
        log_p = -mpmath.log1p(mpmath.exp(e))  # log 1/(1+e^ε)
        log_1mp = -mpmath.log1p(ratio)  # log e^ε/(1+e^ε)
        pmf = mpmath.exp(mpmath.loggamma(count + 1) - mpmath.loggamma(lo + 1) - mpmath.loggamma(count - lo + 1)
                         + lo * log_p + (count - lo) * log_1mp)
        total = 2 * mpmath.exp(-_KOV_TAIL_LOG) if (lo > 0 or hi < count) else mpmath.mpf(0)
        for i in range(lo, hi + 1):
            gap = (count - 2 * i) * e - g
            if gap <= 0:
                break
            total += pmf * -mpmath.expm1(-gap)
            pmf = pmf * (count - i) / (i + 1) * ratio
        log_survive = count * mpmath.log1p(-mpmath.mpf(delta))  # ln (1−δ)^k
        value = -mpmath.expm1(log_survive) + mpmath.exp(log_survive) * total
        return min(1.0, _round_up_mp(value, mpmath.mpf(10) ** (10 - dps)))


def _kov_floor(delta: float, count: int) -> mpmath.mpf:
    """1 − (1 − δ)^k at 50 digits: the δ_g reached only at ε_g ≥ kε (P̃-mass of outcomes with a 0)."""
    with mpmath.workdps(50):
        return -mpmath.expm1(count * mpmath.log1p(-mpmath.mpf(delta)))


class _KovFloat:
    """Vectorised float64 copy of the KOV profile over the window, for the root search only
    (never reported)."""

    def __init__(self, epsilon: float, delta: float, count: int) -> None:
        self.epsilon = epsilon
        self.count = count
        lo, hi = _kov_window(epsilon, count)
        i = np.arange(lo, hi + 1)
        self.log_pmf = binom.logpmf(i, count, float(expit(-epsilon)))
        self.grid = (count - 2 * i) * epsilon  # privacy loss (k − 2i)ε of i twos
        log_survive = count * math.log1p(-delta)
        self.floor = -math.expm1(log_survive)
        self.survive = math.exp(log_survive)

    def delta(self, composed_epsilon: float) -> float:
        m = int(np.count_nonzero(self.grid > composed_epsilon))  # grid is decreasing in i
        if m == 0:
            return self.floor
        gap = composed_epsilon - self.grid[:m]
        s = math.exp(logsumexp(self.log_pmf[:m] + np.log(-np.expm1(gap))))
        return self.floor + self.survive * s


def _check_total(eps: float, k: int) -> None:
    """kε must be a finite float (the profile's support ends at kε)."""
    if not k * eps <= 1e300:
        raise UnsupportedEventError(f"epsilon * count must be <= 1e300 for the optimal composition; got epsilon={eps!r}, count={k}")


def optimal_composition_delta(epsilon: float, delta: float, count: int, composed_epsilon: float) -> float:
    """Exact δ of the k-fold composition of (ε, δ)-DP at any ε_g (Kairouz, Oh, Viswanath 2015).

    See the module docstring for the formula; computed with mpmath and rounded up. At the grid
    ε_g = (k − 2i)ε it equals KOV Thm 3.3's 1 − (1−δ)^k(1 − δ_i); in between it is the exact
    (piecewise-smooth) profile of the dominating product pair, not the next grid value.

    Parameters
    ----------
    epsilon : float
        ε > 0 of each part, in nats.
    delta : float
        δ ∈ [0, 1) of each part (0 for pure DP).
    count : int
        Number k ≥ 1 of adaptively composed parts.
    composed_epsilon : float
        ε_g ≥ 0 of the composition, in nats.

    Returns
    -------
    float
        δ_g(ε_g), rounded up.
    """
    eps = check_positive("epsilon", epsilon)
    dlt = _check_delta_or_zero("delta", delta)
    k = check_count("count", count)
    eps_g = check_nonnegative("composed_epsilon", composed_epsilon)
    _check_total(eps, k)
    return _kov_delta_mpmath(eps, dlt, k, eps_g)


def optimal_composition_epsilon(epsilon: float, delta: float, count: int, target_delta: float) -> float:
    """Least ε_g ≥ 0 with δ_g(ε_g) ≤ ``target_delta`` for k-fold composition of (ε, δ)-DP.

    Kairouz, Oh, Viswanath (2015), Thm 3.3, on the exact profile (not only the grid points):
    Brent's method on a float64 copy of δ_g (continuous and strictly decreasing on [0, kε]),
    then the root is rounded up and re-checked against the mpmath profile (nudged up if needed).

    Parameters
    ----------
    epsilon : float
        ε > 0 of each part, in nats.
    delta : float
        δ ∈ [0, 1) of each part.
    count : int
        Number k ≥ 1 of parts.
    target_delta : float
        Target δ in (0, 1); must exceed 1 − (1 − δ)^k, which no ε_g can go below.

    Returns
    -------
    float
        ε_g in nats, rounded up (at most kε, the basic-composition value).
    """
    eps = check_positive("epsilon", epsilon)
    dlt = _check_delta_or_zero("delta", delta)
    k = check_count("count", count)
    target = check_delta("target_delta", target_delta)
    _check_total(eps, k)
    floor = _kov_floor(dlt, k)
    if not target > floor:
        raise ValueError(
            f"target_delta must be in (1 - (1 - delta)^count, 1) = ({float(floor):.17g}, 1), the smallest "
            f"delta k-fold composition can reach; got {target_delta!r}"
        )

    def ok(eps_g: float) -> bool:
        return _kov_delta_mpmath(eps, dlt, k, eps_g) <= target

    profile = _KovFloat(eps, dlt, k)
    # Search for the float profile's root at a target lowered by _SEARCH_MARGIN (far above the
    # float copy's ~1e-13 relative error) so that the mpmath re-check normally passes at once.
    aim = target * (1.0 - _SEARCH_MARGIN)
    if profile.delta(0.0) <= aim and ok(0.0):
        return 0.0
    hi = k * eps
    # δ_g(kε) = floor < aim (target − floor ≫ target·_SEARCH_MARGIN, else the nudge below finishes
    # the job); δ_g(0) > aim: a sign change on [0, kε].
    if profile.delta(hi) >= aim:
        root = hi
    else:
        root = brentq(lambda g: profile.delta(g) / aim - 1.0, 0.0, hi, xtol=1e-300, rtol=4 * _ULP, maxiter=300)
    eps_g = round_up(root)
    step = 1.0
    while not ok(eps_g):
        if eps_g >= hi:  # at ε_g ≥ kε the sum vanishes and δ_g = floor < target exactly
            return round_up(mpmath.mpf(eps) * k)
        eps_g = eps_g + max(eps_g, 5e-324) * _SEARCH_MARGIN * step
        step *= 2.0
    return eps_g
