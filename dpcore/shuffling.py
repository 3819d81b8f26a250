"""Amplification by shuffling: n users each run an ε0-DP local randomizer, the reports are shuffled.

Feldman, McMillan & Talwar (2021), "Hiding Among the Clones: A Simple and Nearly Optimal
Analysis of Privacy Amplification by Shuffling" (FOCS'21). Neighbouring relation:
``replace_one`` (the datasets differ in one user's record). All ε in nats.

**Numerical bound** (their Thm 3.2 reduction). The shuffled output on neighbouring datasets is a
post-processing of the pair (P, Q) below, so δ(ε) ≤ max(D_{e^ε}(P‖Q), D_{e^ε}(Q‖P)):
C ~ Bin(n − 1, e^{−ε0}) counts the other users that act as clones of the differing user,
A ~ Bin(C, ½), α = e^{ε0}/(e^{ε0} + 1); given C = c,

    P_c = α·Bin(c, ½) + (1 − α)·(Bin(c, ½) + 1),   Q_c = (1 − α)·Bin(c, ½) + α·(Bin(c, ½) + 1).

C is observed (it is a function of the released pair), so each divergence is
Σ_c P[C = c]·D_{e^ε}(P_c‖Q_c). With b_c the Bin(c, ½) pmf, β = α − e^ε(1 − α) =
(e^{ε0} − e^ε)/(e^{ε0} + 1) and γ = e^ε α − (1 − α) = (e^{ε+ε0} − 1)/(e^{ε0} + 1),

    P_c(x) − e^ε Q_c(x) = β·b_c(x − 1) − γ·b_c(x),

positive exactly for x ≥ x* = ⌊(c + 1)θ⌋ + 1 with θ = γ/(β + γ), hence the closed form
D(P_c‖Q_c) = β·P[A ≥ x* − 1] − γ·P[A ≥ x*], and symmetrically
D(Q_c‖P_c) = β·P[A ≤ x′] − γ·P[A ≤ x′ − 1] with x′ = ⌈(c + 1)(1 − θ)⌉ − 1. (The map
x ↦ c + 1 − x swaps P_c and Q_c, so the two are equal; both are computed as a check.)
For ε ≥ ε0, β ≤ 0 and δ = 0.

The sum over c is computed **term by term** over a window [c_lo, c_hi] — no monotonicity in c
is assumed (the public reference code takes the max over block endpoints, which is unproven, and
its upper-bound branch has a ``max(deltaq_upperc, deltaq_upperc)`` typo). The binomial mass
outside the window is bounded by the Chernoff bound exp(−(n−1)·KL(k/(n−1) ‖ e^{−ε0})) and
counted at the worst case D_c ≤ β. The binomial pmf / sf / cdf come from SciPy (Boost), whose
relative error we measured at ≤ 1e-12 for c ≤ 10⁶ against mpmath; every D_c is inflated by
η_c = 1e-10 + 4e-16·(c + 1) times the size of the two terms it is the difference of, and the
whole sum by (1 + η). ε is found by Brent's method on this upper bound, and the returned ε (the
upper end of the final bracket) is re-checked: δ_upper(ε) ≤ δ.

**Closed form** (their Thm 3.1 as implemented by the authors): valid when
ε0 ≤ ln(n/(16 ln(4/δ))); with a = 8√(e^{ε0} ln(4/δ)/n), c = 8e^{ε0}/n and e = ln(1 + a + c),

    ε = ln(1 + (1 − e^{−ε0})/(1 + e^{−ε0−e})·(a + c)).

Because e ≥ 0 this is ≥ the printed form ln(1 + (e^{ε0} − 1)/(e^{ε0} + 1)·(a + c)), i.e. the
more conservative of the two; the validity condition uses ln(4/δ), stricter than the printed
ln(2/δ). It is only an upper bound on what the numerical method computes.

**Approximate-DP local randomizers** (their Thm 3.8). If each report is (ε0, δ0)-DP, the shuffled
output is (ε, δ + (e^ε + 1)(1 + e^{−ε0}/2)·n·δ0)-DP whenever (ε, δ) holds for ε0-DP reports. The
total δ(ε) = δ_upper(ε) + term(ε) is the quantity bounded (:func:`shuffle_delta`) and inverted
(:func:`shuffle_numeric_epsilon` with ``delta0``): Brent's method on it, and the returned ε is
re-checked against the total, so the split δ = δ_s + term needs no separate choice.
"""

from __future__ import annotations

import math
from typing import Tuple

import mpmath
import numpy as np
from scipy.optimize import brentq
from scipy.special import rel_entr
from scipy.stats import binom

from ._validation import check_choice, check_delta, check_nonnegative, check_positive, check_positive_int
from .events import MAX_COUNT, UnsupportedEventError
from .result import round_up

__all__ = ["shuffle_closed_form_epsilon", "shuffle_numeric_epsilon", "shuffle_epsilon", "shuffle_delta",
           "local_delta_term", "shuffle_epsilon_local_delta"]

#: relative accuracy assumed for SciPy's binomial pmf/sf/cdf (measured ≤ 1e-12; 100× safety)
_ACCURACY = 1e-10
#: the window leaves out at most this fraction of the target δ on each side (shuffle_epsilon)
_TAIL_FRACTION = 1e-12
#: window tail bound for shuffle_delta, where no target is known
_TAIL_ABSOLUTE = 1e-300
#: most clone counts the numerical bound sums over (memory ~ 100 bytes each)
_MAX_WINDOW = 5_000_000
#: above this ε0 the clone analysis is not evaluated: δ(ε) ≤ β (every D_c ≤ β), and ε = ε0
#: (shuffling never hurts: the shuffled reports are ε0-DP) — e^{−ε0} < 1e-304, no clones to hide among
_MAX_EPSILON0 = 700.0


def _validity_bound(n: int, delta: float) -> float:
    """ln(n/(16 ln(4/δ))): the largest ε0 the closed form (FMT21 Thm 3.1) is proved for."""
    return math.log(n / (16.0 * math.log(4.0 / delta)))


def _chernoff_log_tail(k: int, trials: int, p: float) -> float:
    """log of the Chernoff bound exp(−N·KL(k/N ‖ p)) on P[C ≤ k] (k < Np) or P[C ≥ k] (k > Np).

    C ~ Bin(N = trials, p). The exponent is reduced by a relative 1e-9 plus 1e-12 to absorb its
    float64 rounding; it is 0 (the trivial bound 1) at k = Np.
    """
    a = k / trials
    exponent = trials * (float(rel_entr(a, p)) + float(rel_entr(1.0 - a, 1.0 - p)))
    return -max(0.0, exponent * (1.0 - 1e-9) - 1e-12)


def _first(lo: int, hi: int, predicate) -> int:
    """Smallest k in [lo, hi] with ``predicate(k)`` for a predicate monotone False→True (hi if none)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if predicate(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


class _CloneSum:
    """Upper bound on the FMT21 δ(ε) for fixed (ε0, n): window of c values, weights and tails."""

    def __init__(self, epsilon0: float, n: int, tail: float) -> None:
        self.epsilon0 = epsilon0
        trials = n - 1
        p = math.exp(-epsilon0)
        mean = trials * p
        log_target = math.log(tail)

        def small(k: int) -> bool:
            return _chernoff_log_tail(k, trials, p) <= log_target

        # Lower side: the tail bound grows with k up to the mean; keep every c above the largest
        # k < mean whose bound P[C ≤ k] is ≤ tail. Upper side symmetric. Bisection on integers.
        below = math.ceil(mean) - 1  # largest integer < mean
        if below >= 0 and small(0):
            k_lo = _first(0, below, lambda k: not small(k)) - 1  # last k with a small tail
            self.lo = k_lo + 1
            lower_tail = math.exp(_chernoff_log_tail(k_lo, trials, p))
        else:
            self.lo, lower_tail = 0, 0.0
        above = math.floor(mean) + 1  # smallest integer > mean
        if above <= trials and small(trials):
            k_hi = _first(above, trials, small)
            self.hi = k_hi - 1
            upper_tail = math.exp(_chernoff_log_tail(k_hi, trials, p))
        else:
            self.hi, upper_tail = trials, 0.0
        self.tail_mass = lower_tail + upper_tail
        if self.hi - self.lo + 1 > _MAX_WINDOW:
            raise UnsupportedEventError(
                f"n={n} is beyond the numerical shuffling bound's range: it sums over {self.hi - self.lo + 1} "
                f"clone counts (at most {_MAX_WINDOW}); use method='closed_form' (CLI: --method closed-form)"
            )
        self.c = np.arange(self.lo, self.hi + 1)
        self.weights = binom.pmf(self.c, trials, p)
        self.eta = _ACCURACY + 4e-16 * (self.c + 1.0)

    def coefficients(self, epsilon: float) -> Tuple[float, float]:
        """β and γ at ε (see the module docstring), without cancellation."""
        e0 = self.epsilon0
        beta = -math.expm1(epsilon - e0) / (1.0 + math.exp(-e0))
        if e0 > 1.0:  # (e^{ε+ε0} − 1)/(e^{ε0} + 1) without overflow (ε ≤ ε0 ≤ _MAX_EPSILON0)
            gamma = (math.exp(epsilon) - math.exp(-e0)) / (1.0 + math.exp(-e0))
        else:
            gamma = math.expm1(epsilon + e0) / (1.0 + math.exp(e0))
        return beta, gamma

    def divergences(self, epsilon: float) -> Tuple[float, float]:
        """Upper bounds on (D_{e^ε}(P‖Q), D_{e^ε}(Q‖P)), each summed over every c in the window."""
        beta, gamma = self.coefficients(epsilon)
        if beta <= 0.0:  # ε ≥ ε0 (also when ε0 is so small that β underflows to 0)
            return 0.0, 0.0
        theta = gamma / (beta + gamma)  # β > 0 and γ ≥ 0, so the quotient is defined
        c = self.c
        x_star = np.floor((c + 1) * theta).astype(np.int64) + 1
        s1 = binom.sf(x_star - 2, c, 0.5)  # P[A ≥ x* − 1]
        s2 = binom.sf(x_star - 1, c, 0.5)  # P[A ≥ x*]
        x_prime = np.ceil((c + 1) * (1.0 - theta)).astype(np.int64) - 1
        f1 = binom.cdf(x_prime, c, 0.5)  # P[A ≤ x′]
        f2 = binom.cdf(x_prime - 1, c, 0.5)  # P[A ≤ x′ − 1]
        out = []
        for plus, minus in ((beta * s1, gamma * s2), (beta * f1, gamma * f2)):
            per_c = np.maximum(plus - minus, 0.0) + self.eta * (plus + minus)
            total = math.fsum(self.weights * per_c) * (1.0 + _ACCURACY) + beta * self.tail_mass
            out.append(total)
        return out[0], out[1]

    def delta(self, epsilon: float) -> float:
        return min(1.0, max(self.divergences(epsilon)))


# ------------------------------------------------------------------------------------ public API


def _check_common(epsilon0: object, n: object) -> Tuple[float, int]:
    return check_positive("epsilon0", epsilon0), check_positive_int("n", n, minimum=2, maximum=MAX_COUNT)


def shuffle_closed_form_epsilon(epsilon0: float, n: int, delta: float) -> float:
    """Closed-form shuffled ε of Feldman, McMillan, Talwar (2021), Thm 3.1 (authors' form).

    Parameters
    ----------
    epsilon0 : float
        Local ε0 > 0 of each report, in nats; must satisfy ε0 ≤ ln(n/(16 ln(4/δ))).
    n : int
        Number of users, ≥ 2.
    delta : float
        Target δ in (0, 1).

    Returns
    -------
    float
        Central ε (replace-one) in nats, rounded up.
    """
    eps0, users = _check_common(epsilon0, n)
    dlt = check_delta("delta", delta)
    bound = _validity_bound(users, dlt) if users > 16.0 * math.log(4.0 / dlt) else -math.inf
    if not eps0 <= bound:
        raise ValueError(
            f"epsilon0 must be <= ln(n/(16 ln(4/delta))) = {bound:.6g} for the closed form of Feldman, "
            f"McMillan, Talwar 2021 (Thm 3.1) with n={users}, delta={dlt!r}; got {epsilon0!r}"
        )
    with mpmath.workdps(40):
        e0 = mpmath.mpf(eps0)
        a = 8 * mpmath.sqrt(mpmath.exp(e0) * mpmath.log(4 / mpmath.mpf(dlt)) / users)
        c = 8 * mpmath.exp(e0) / users
        e = mpmath.log(1 + a + c)
        eps = mpmath.log1p(-mpmath.expm1(-e0) / (1 + mpmath.exp(-e0 - e)) * (a + c))
        return round_up(eps * (1 + mpmath.mpf(10) ** -35))


def local_delta_term(epsilon: float, epsilon0: float, n: int, delta0: float) -> float:
    """(e^ε + 1)(1 + e^{−ε0}/2)·n·δ0: what (ε0, δ0)-DP local randomizers add to the shuffled δ
    (Feldman, McMillan, Talwar 2021, Thm 3.8), rounded up (a δ: the safe direction is up; the five
    float operations err by at most 5 units of 2⁻⁵³ relative, 8 are added). 0 when δ0 = 0; inf when
    ε > 700 (e^ε would overflow).

    Parameters
    ----------
    epsilon : float
        Central ε ≥ 0 of the shuffled output, nats.
    epsilon0 : float
        Local ε0 > 0, nats.
    n : int
        Number of users, ≥ 2.
    delta0 : float
        Local δ0 in [0, 1).
    """
    eps0, users = _check_common(epsilon0, n)
    eps = check_nonnegative("epsilon", epsilon)
    d0 = check_nonnegative("delta0", delta0)
    if not d0 < 1.0:
        raise ValueError(f"delta0 must be in [0, 1); got {delta0!r}")
    if d0 == 0.0:
        return 0.0
    if eps > _MAX_EPSILON0:  # e^ε overflows: no finite bound
        return math.inf
    value = (math.exp(eps) + 1.0) * (1.0 + math.exp(-eps0) / 2.0) * users * d0
    return round_up(value * (1.0 + 8.0 * 2.0**-53))


def shuffle_delta(epsilon0: float, n: int, epsilon: float, delta0: float = 0.0) -> float:
    """Rigorous upper bound on δ at ε for shuffling n (ε0, δ0)-DP reports (FMT21 Thm 3.2 reduction,
    plus :func:`local_delta_term` when δ0 > 0).

    Parameters
    ----------
    epsilon0 : float
        Local ε0 > 0, in nats.
    n : int
        Number of users, ≥ 2.
    epsilon : float
        Central ε ≥ 0, in nats.
    delta0 : float, optional
        Local δ0 in [0, 1) (default 0: pure ε0-DP reports).

    Returns
    -------
    float
        δ (replace-one), rounded up, at most 1; when ε ≥ ε0, δ0 (one changed report is (ε0, δ0)-DP).
    """
    eps0, users = _check_common(epsilon0, n)
    eps = check_nonnegative("epsilon", epsilon)
    term = local_delta_term(min(eps, eps0), eps0, users, delta0)
    if eps >= eps0:  # one report changes: (ε0, δ0) by post-processing
        return float(delta0) if term > 0.0 else 0.0
    if eps0 > _MAX_EPSILON0:
        base = min(1.0, round_up(-math.expm1(eps - eps0) / (1.0 + math.exp(-eps0))))  # β
    else:
        base = round_up(_CloneSum(eps0, users, _TAIL_ABSOLUTE).delta(eps))
    if term == 0.0:
        return base
    return min(1.0, round_up(base + term)) if term < 1.0 else 1.0


def shuffle_epsilon_local_delta(epsilon0: float, n: int, delta: float, delta0: float) -> Tuple[float, float, float]:
    """Central ε after shuffling n (ε0, δ0)-DP reports at total δ (FMT21 Thms 3.2 and 3.8).

    Parameters
    ----------
    epsilon0 : float
        Local ε0 > 0, nats.
    n : int
        Number of users, ≥ 2.
    delta : float
        Target total δ in (0, 1).
    delta0 : float
        Local δ0 in [0, 1).

    Returns
    -------
    (epsilon, delta_shuffle, term)
        ε (replace-one, nats, an upper bound; :func:`shuffle_numeric_epsilon`), δ_s = δ − term (the
        numerical bound at ε is ≤ δ_s) and the Thm 3.8 term at ε (rounded up); (ε0, 0, δ0) when no
        amplification is certified (one changed report is (ε0, δ0)-DP, by post-processing).
    """
    eps = shuffle_numeric_epsilon(epsilon0, n, delta, delta0=delta0)
    if eps >= epsilon0:  # the trivial (ε0, δ0) bound of one changed report
        return eps, 0.0, float(delta0)
    term = local_delta_term(eps, epsilon0, n, delta0)
    return eps, float(delta) - term, term


def shuffle_numeric_epsilon(epsilon0: float, n: int, delta: float, *, tol: float = 1e-10,
                            delta0: float = 0.0) -> float:
    """Least ε (up to ``tol``) with the rigorous FMT21 δ upper bound ≤ δ.

    Brent's method on the bound of :func:`shuffle_delta` (window tails ≤ 1e-12·δ), returning the
    upper end of the final bracket after checking δ_upper(ε) ≤ δ there (δ_upper includes the
    Thm 3.8 term when δ0 > 0).

    Parameters
    ----------
    epsilon0 : float
        Local ε0 > 0, in nats.
    n : int
        Number of users, ≥ 2.
    delta : float
        Target δ in (0, 1).
    tol : float, optional
        Absolute tolerance on ε (nats), > 0.
    delta0 : float, optional
        Local δ0 in [0, 1) of each report (default 0: pure ε0-DP reports).

    Returns
    -------
    float
        Central ε (replace-one) in nats; never more than ε0 (shuffling cannot hurt). For
        ε0 > 700 no amplification is evaluated and ε0 is returned.

    Raises
    ------
    ValueError
        If n is so large that the sum over clone counts exceeds 5·10⁶ terms (use the closed form).
    UnsupportedEventError
        If δ0 > δ (then not even the trivial (ε0, δ0) bound meets δ). When δ0 ≤ δ but the Thm 3.8
        term reaches δ at ε = ε0, ε0 is returned (one changed report is (ε0, δ0)-DP).
    """
    eps0, users = _check_common(epsilon0, n)
    dlt = check_delta("delta", delta)
    tolerance = check_positive("tol", tol)
    local_delta_term(0.0, eps0, users, delta0)  # validates δ0
    if delta0 > 0.0 and not local_delta_term(eps0, eps0, users, delta0) < dlt:
        if delta0 <= dlt:  # no amplification certified; one report changes: (ε0, δ0) by post-processing
            return eps0
        raise UnsupportedEventError(
            f"delta0={delta0!r} exceeds delta={delta!r}: with n={users} the term (e^eps+1)(1+e^-eps0/2)*n*delta0 of "
            f"Feldman, McMillan, Talwar 2021 (Thm 3.8) reaches delta at eps=eps0, and one report's own (eps0, delta0) "
            f"does not meet delta either")
    if eps0 > _MAX_EPSILON0:
        return eps0
    bound = _CloneSum(eps0, users, _TAIL_FRACTION * dlt)

    def total(eps: float) -> float:
        term = local_delta_term(eps, eps0, users, delta0)
        return bound.delta(eps) if term == 0.0 else round_up(bound.delta(eps) + term)

    if total(0.0) <= dlt:
        return 0.0

    def excess(eps: float) -> float:
        return total(eps) / dlt - 1.0

    # excess(0) > 0 and excess(ε0) < 0 (β = 0 at ε = ε0; the term is < δ there).
    root = brentq(excess, 0.0, eps0, xtol=tolerance / 4.0, maxiter=200)
    eps = min(eps0, root + tolerance / 2.0)
    step = tolerance / 2.0
    while eps < eps0 and excess(eps) > 0.0:
        eps = min(eps0, eps + step)
        step *= 2.0
    return round_up(eps)


def shuffle_epsilon(epsilon0: float, n: int, delta: float, method: str = "numeric") -> float:
    """Central ε after shuffling n ε0-DP local reports (Feldman, McMillan, Talwar 2021).

    Parameters
    ----------
    epsilon0 : float
        Local ε0 > 0, in nats.
    n : int
        Number of users, ≥ 2.
    delta : float
        Target δ in (0, 1).
    method : {"numeric", "closed_form"}
        ``"numeric"``: the rigorous numerical bound (:func:`shuffle_numeric_epsilon`, tightest);
        ``"closed_form"``: Thm 3.1 (:func:`shuffle_closed_form_epsilon`, refuses outside its
        validity condition).

    Returns
    -------
    float
        Central ε (replace-one) in nats, an upper bound.
    """
    kind = check_choice("method", method, ("numeric", "closed_form"))
    if kind == "closed_form":
        return shuffle_closed_form_epsilon(epsilon0, n, delta)
    return shuffle_numeric_epsilon(epsilon0, n, delta)
