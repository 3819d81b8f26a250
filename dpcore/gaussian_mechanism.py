"""The Gaussian mechanism: classic calibration and the exact analytic privacy profile.

Mechanism: ``M(D) = f(D) + N(0, σ² I)`` with ``f`` of ℓ2 sensitivity Δ under the neighbouring
relation the caller states (Δ is the sensitivity *under that relation*; the formulas below hold
for any relation once Δ is right). All privacy parameters are in nats.

* :func:`classic_gaussian_sigma` — σ = Δ·sqrt(2 ln(1.25/δ))/ε, Dwork & Roth (2014), Thm A.1,
  proved only for ε < 1 and refused otherwise.
* :func:`analytic_gaussian_delta` — the exact privacy profile of Balle & Wang (2018), "Improving
  the Gaussian mechanism for differential privacy: analytical calibration and optimal
  denoising", Thm 8: with a = Δ/(2σ) and b = εσ/Δ,

      δ(ε) = Φ(a − b) − e^ε Φ(−a − b).

  Since ε = 2ab, both terms share the factor exp(−(a − b)²/2) when a < b:
  ``δ = ½ e^{−(a−b)²/2} [erfcx((b − a)/√2) − erfcx((a + b)/√2)]``, which is evaluated in float64
  with an explicit rounding-error bound; when that bound is not small (the two terms cancel, or
  the result under/overflows) the value is recomputed with mpmath at a precision that covers
  the cancellation. Every returned δ is rounded up.
* :func:`analytic_gaussian_epsilon` / :func:`analytic_gaussian_sigma` — the least ε (resp. σ) with
  δ(ε; σ) ≤ δ, by a bracketed Brent root find on ``log δ`` (the exact profile is strictly
  decreasing in both ε and σ), then rounded up and re-checked against the rounded-up δ
  (nudged up by ulps until the check passes), so the returned value is always on the safe side.
"""

from __future__ import annotations

import math
from typing import Callable, Tuple

import mpmath
from scipy.optimize import brentq
from scipy.special import erfcx, ndtr

from ._validation import check_delta, check_nonnegative, check_positive
from .result import round_up

__all__ = [
    "classic_gaussian_sigma",
    "analytic_gaussian_delta",
    "analytic_gaussian_epsilon",
    "analytic_gaussian_sigma",
    "gaussian_privacy_profile",
]

_SQRT2 = math.sqrt(2.0)
_ULP = 2.0**-52
#: largest relative error bound accepted from the float64 path before falling back to mpmath
_FLOAT_TOLERANCE = 1e-11
#: mpmath working precision (decimal digits) before adding the digits lost to cancellation
_BASE_DPS = 30
#: |log σ| beyond which σ (or 1/σ) is outside the float64 range
_LOG_SIGMA_MAX = 700.0


# ------------------------------------------------------------------------------ profile kernels


def _terms(s: float, epsilon: float) -> Tuple[float, float, float, float]:
    """Float64 pieces of δ(ε) for noise multiplier s = σ/Δ.

    Returns ``(log_scale, x, y, v)`` with ``δ = exp(log_scale)·(x − y)``, ``x, y ≥ 0`` and
    v = a + b (used in the rounding-error bound).
    """
    a = 0.5 / s
    b = epsilon * s
    u, v = a - b, a + b
    if u < 0.0:
        # Φ(u) = ½ erfcx(−u/√2) e^{−u²/2};  e^ε Φ(−v) = ½ erfcx(v/√2) e^{ε − v²/2} = ½ erfcx(v/√2) e^{−u²/2}
        return -0.5 * u * u, 0.5 * erfcx(-u / _SQRT2), 0.5 * erfcx(v / _SQRT2), v
    # u ≥ 0: Φ(u) ≥ ½ is not scaled; e^ε Φ(−v) = ½ erfcx(v/√2) e^{−u²/2}
    return 0.0, float(ndtr(u)), 0.5 * erfcx(v / _SQRT2) * math.exp(-0.5 * u * u), v


def _relative_error_bound(x: float, y: float, v: float) -> float:
    """Bound on the relative rounding error of ``exp(log_scale)·(x − y)`` computed in float64.

    Each of x, y carries a few ulps (erfcx / ndtr are accurate to ~1e-15 relative; the exponent
    −u²/2 and the arguments a, b carry relative error ~ulp, which moves the result by ~ulp·v²);
    the subtraction amplifies the first by the cancellation factor (x + y)/(x − y).
    """
    if not x > y:
        return math.inf
    return 64.0 * _ULP * ((x + y) / (x - y) + v * v + 1.0)


def _log_delta_float(s: float, epsilon: float) -> float:
    """``log δ(ε)`` for noise multiplier s, float64 (root-finding objective; ``-inf`` if δ = 0)."""
    log_scale, x, y, _ = _terms(s, epsilon)
    diff = x - y
    if diff <= 0.0:
        return -math.inf
    return log_scale + math.log(diff)


def _delta_mpmath(sigma: float, epsilon: float, sensitivity: float, dps: int) -> mpmath.mpf:
    """δ(ε) of Balle & Wang Thm 8 at ``dps`` decimal digits, from the exact float inputs."""
    with mpmath.workdps(dps):
        s = mpmath.mpf(sigma) / mpmath.mpf(sensitivity)
        eps = mpmath.mpf(epsilon)
        a = 1 / (2 * s)
        b = eps * s
        return mpmath.ncdf(a - b) - mpmath.exp(eps) * mpmath.ncdf(-a - b)


def _delta_upper(sigma: float, epsilon: float, sensitivity: float) -> float:
    """Rounded-up upper bound on δ(ε) (float path with error bound, else mpmath)."""
    log_scale, x, y, v = _terms(sigma / sensitivity, epsilon)
    if log_scale < -800.0:
        # δ ≤ ½ erfcx(·)·e^{−u²/2} ≤ e^{−800}/2: the smallest positive float is an upper bound.
        return 5e-324
    if log_scale == 0.0 and x - y >= 1.0 - _ULP:
        return 1.0  # δ ≤ 1 always, and the estimate is within two ulps of it
    # σ/Δ itself is rounded: one more ulp of relative error in a and b, covered by the v² term.
    rel = _relative_error_bound(x, y, v)
    if rel <= _FLOAT_TOLERANCE:
        value = math.exp(log_scale) * (x - y)
        if value >= 1e-300:  # clear of underflow / subnormals
            return min(1.0, round_up(value * (1.0 + rel)))
    # Digits lost to cancellation, estimated from the float terms; the precision is doubled until
    # two evaluations agree to _BASE_DPS - 5 digits (δ(ε) > 0 for every finite input, so this ends).
    lost = max(0, math.ceil(math.log10((x + y) / (x - y)))) if x > y else 30
    dps = _BASE_DPS + lost
    previous = _delta_mpmath(sigma, epsilon, sensitivity, dps)
    while True:
        dps *= 2
        current = _delta_mpmath(sigma, epsilon, sensitivity, dps)
        with mpmath.workdps(dps):
            slack = mpmath.mpf(10) ** (5 - _BASE_DPS)
            if current > 0 and abs(current - previous) <= current * slack:
                return min(1.0, round_up(current * (1 + slack)))
        previous = current


# ------------------------------------------------------------------------------------ public API


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Classic Gaussian-mechanism noise σ = Δ·sqrt(2 ln(1.25/δ))/ε.

    Dwork & Roth (2014), "The Algorithmic Foundations of Differential Privacy", Thm A.1: the
    Gaussian mechanism with this σ is (ε, δ)-DP **for ε ∈ (0, 1)** only; larger ε is refused.

    Parameters
    ----------
    epsilon : float
        Target ε in nats, in (0, 1).
    delta : float
        Target δ, in (0, 1).
    sensitivity : float, optional
        ℓ2 sensitivity Δ of the released function under the caller's neighbouring relation, > 0.

    Returns
    -------
    float
        σ (standard deviation of the noise, in the units of the released value), rounded up.
    """
    eps = check_positive("epsilon", epsilon)
    if not eps < 1.0:
        raise ValueError(
            f"epsilon must be in (0, 1) for the classic Gaussian mechanism (Dwork & Roth Thm A.1); got {epsilon!r}"
        )
    dlt = check_delta("delta", delta)
    sens = check_positive("sensitivity", sensitivity)
    with mpmath.workdps(40):
        sigma = mpmath.mpf(sens) * mpmath.sqrt(2 * mpmath.log(mpmath.mpf(1.25) / mpmath.mpf(dlt))) / mpmath.mpf(eps)
        return round_up(sigma * (1 + mpmath.mpf(10) ** -35))


def analytic_gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact δ(ε) of the Gaussian mechanism (Balle & Wang 2018, Thm 8), rounded up.

    ``δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)`` is the hockey-stick divergence
    ``sup_S P[M(D) ∈ S] − e^ε P[M(D′) ∈ S]`` between N(0, σ²) and N(Δ, σ²); the mechanism is
    (ε, δ)-DP iff δ ≥ δ(ε).

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0 (same units as the sensitivity).
    epsilon : float
        ε ≥ 0 in nats (ε = 0 gives the total-variation distance).
    sensitivity : float, optional
        ℓ2 sensitivity Δ > 0.

    Returns
    -------
    float
        An upper bound on δ(ε) within ~1e-11 relative of the exact value (float64 path with a
        rounding-error bound, or mpmath when the two terms cancel / underflow).
    """
    sig = check_positive("sigma", sigma)
    eps = check_nonnegative("epsilon", epsilon)
    sens = check_positive("sensitivity", sensitivity)
    return _delta_upper(sig, eps, sens)


def gaussian_privacy_profile(noise_multiplier: float) -> Callable[[float], float]:
    """Privacy profile ε ↦ δ(ε) of the Gaussian mechanism with Δ = 1 and σ = ``noise_multiplier``.

    Balle & Wang (2018), Thm 8; each value is rounded up (see :func:`analytic_gaussian_delta`).
    """
    sig = check_positive("noise_multiplier", noise_multiplier)

    def profile(epsilon: float) -> float:
        return analytic_gaussian_delta(sig, epsilon, 1.0)

    return profile


def _nudge_up(x: float, ok: Callable[[float], bool]) -> float:
    """Smallest tried value ≥ x with ``ok``: steps of 1, 2, 4, … ulps (relative steps)."""
    step = 1
    while not ok(x):
        x = x + max(abs(x) * _ULP * step, 5e-324 * step)
        step *= 2
    return x


def _least_passing(bad: float, good: float, ok: Callable[[float], bool]) -> float:
    """Least float in (bad, good] with ``ok`` (monotone: false below, true above), by bisection."""
    while math.nextafter(bad, math.inf) < good:
        mid = bad + (good - bad) / 2.0
        if not bad < mid < good:
            break
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def analytic_gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """Least ε ≥ 0 with δ(ε) ≤ δ for the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    Brent's method on ``log δ(ε) − log δ`` (strictly decreasing in ε), the root rounded up and
    re-checked with the rounded-up δ of :func:`analytic_gaussian_delta`.

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0.
    delta : float
        Target δ in (0, 1).
    sensitivity : float, optional
        ℓ2 sensitivity Δ > 0.

    Returns
    -------
    float
        ε in nats (an upper bound on the exact least ε; 0.0 if already δ(0) ≤ δ; ``inf`` if the
        least ε exceeds the float64 range, e.g. σ/Δ below ~1e-154).
    """
    sig = check_positive("sigma", sigma)
    dlt = check_delta("delta", delta)
    sens = check_positive("sensitivity", sensitivity)

    def ok(eps: float) -> bool:
        return _delta_upper(sig, eps, sens) <= dlt

    if ok(0.0):
        return 0.0
    s = sig / sens
    target = math.log(dlt)
    hi = 1.0
    while _log_delta_float(s, hi) >= target:
        hi *= 2.0
        if math.isinf(hi):  # the least ε exceeds the float range (σ/Δ below ~1e-154): was brentq's NaN error
            return math.inf
    lo = 0.0 if hi == 1.0 else hi / 2.0

    def f(eps: float) -> float:
        return _log_delta_float(s, eps) - target

    # f(lo) ≤ 0 can only happen when δ(0) lies within the rounding margin of the target.
    if f(lo) <= 0.0:
        return _nudge_up(round_up(lo), ok)
    root = brentq(f, lo, hi, xtol=1e-300, rtol=4 * _ULP, maxiter=200)
    good = _nudge_up(round_up(root), ok)
    # The float root may sit a few ulps above the least ε that passes the rounded-up check;
    # take the least passing float so that ε(σ(ε)) ≤ ε holds for σ from analytic_gaussian_sigma.
    bad = root * (1.0 - 64 * _ULP)
    if ok(bad) or bad <= lo:
        bad = lo
    return _least_passing(bad, good, ok)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Least σ with δ(ε; σ) ≤ δ — the analytic Gaussian calibration (Balle & Wang 2018).

    Solves Thm 8's ``δ(ε; σ) = δ`` by a bracketed Brent root find in log σ (δ is strictly
    decreasing in σ), equivalent to their Alg. 1 but on the exact profile without a separate
    case split. The root is rounded up and re-checked: the returned σ always satisfies
    ``analytic_gaussian_delta(σ, ε, Δ) ≤ δ`` and is within ~1e-14 relative of the exact root.
    Example: ε = 1, δ = 1e-5, Δ = 1 → σ ≈ 3.73063163481594.

    Parameters
    ----------
    epsilon : float
        Target ε > 0 in nats.
    delta : float
        Target δ in (0, 1).
    sensitivity : float, optional
        ℓ2 sensitivity Δ > 0.

    Returns
    -------
    float
        σ, in the units of the sensitivity.
    """
    eps = check_positive("epsilon", epsilon)
    dlt = check_delta("delta", delta)
    sens = check_positive("sensitivity", sensitivity)
    target = math.log(dlt)

    def f(log_s: float) -> float:
        # Outside float range: σ → ∞ is always safe (f < 0); σ → 0 is treated as unsafe (f > 0),
        # which can only move the root up — the safe side, re-checked below.
        if log_s > _LOG_SIGMA_MAX:
            return -1e300
        if log_s < -_LOG_SIGMA_MAX:
            return 1e300
        value = _log_delta_float(math.exp(log_s), eps) - target
        return value if math.isfinite(value) else (-1e300 if value < 0 else 1e300)

    # Bracket around the classic σ (the analytic one is within a small factor of it).
    start = math.log(math.sqrt(2.0 * (math.log(1.25) - math.log(dlt)))) - math.log(eps)  # 1.25/δ overflows at δ < 7e-309
    lo, hi = start - 1.0, start + 1.0
    while f(lo) <= 0.0:
        lo -= 2.0
    while f(hi) > 0.0:
        hi += 2.0
    log_s = brentq(f, lo, hi, xtol=1e-15, rtol=4 * _ULP, maxiter=200)
    sigma = sens * math.exp(min(log_s, _LOG_SIGMA_MAX))
    if not sigma * 2.0 < math.inf:
        raise ValueError(
            f"the least sigma for epsilon={epsilon!r}, delta={delta!r}, sensitivity={sensitivity!r} exceeds the "
            "float64 range; increase epsilon or delta"
        )
    return _nudge_up(sigma, lambda sg: _delta_upper(sg, eps, sens) <= dlt)
