"""The tilt θ and the grid scale of a PLD composition, from the moment generating function of the loss.

The composed loss L of a dominating pair has log-MGF Λ(θ) = log E_P[e^{θL}] = θ·D_{θ+1}(P‖Q),
θ times its Rényi divergence of order θ + 1 (so Λ is the RDP curve of the event summed over the
composition, :func:`dpcore.rdp_accountant.compute_rdp`). The grid PLD is stored tilted by θ
(:mod:`dpcore.pld.pmf`): its error terms reach δ(ε) multiplied by exp(Λ(θ) − θε), the Chernoff
bound of P(L > ε), which is smallest — within a small factor of δ(ε) — near the saddle point
Λ'(θ) = ε. The tilt chosen here is

* for an ε query at δ: the Chernoff-optimal θ = argmin (Λ(θ) + log(1/δ))/θ (the RDP optimal order
  minus one; there Λ'(θ) is the RDP ε, just above the PLD ε, so θ is just above the saddle point);
* for a δ query at ε: θ = argmin Λ(θ) − θε.

Both from Λ on a log-spaced grid of θ (:data:`TILTS`). The error terms will be read near the RDP ε
of the improved conversion (Canonne, Kamath, Steinke 2020, Prop. 12; ε queries) or at ε (δ
queries); exp(Λ(θ) − θε) there is recorded so that error budgets can be set relative to δ. Events the RDP accountant cannot analyse get θ from the
discretised leaves' own MGFs (:func:`leaf_tilt`). Any θ ≥ 0 gives valid bounds; these choices only
make the error terms small. The spread of each *tilted* leaf loss, √K''(θ) with K the leaf's
log-MGF, is returned too: for a subsampled Gaussian at small σ the tilted leaf is dominated by its
rare large losses and is many times wider than the untilted bulk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence, Tuple

import numpy as np
from scipy.special import log_ndtr, logsumexp

from ..events import PrivacyEvent, TruncatedPoissonSampledEvent, UnsupportedEventError
from .pmf import GridPld

__all__ = ["TILTS", "TiltPlan", "leaf_tilt", "rdp_tilt"]

#: tilts tried (per nat of loss); θ + 1 are the Rényi orders evaluated
TILTS = np.geomspace(1e-3, 1e4, 41)
#: largest θ·(typical loss) of a chosen tilt (:func:`rdp_tilt`)
MAX_TILT_LOSS = 200.0


@dataclass(frozen=True)
class TiltPlan:
    """θ, the ε at which the error terms will be read, log of the Chernoff bound exp(Λ(θ) − θε)
    there, and the tilted standard deviation (nats) of each leaf's loss at θ (NaN where it is 0
    to float precision)."""

    theta: float
    epsilon: float
    log_chernoff: float
    spreads: Tuple[float, ...]
    gaussian_epsilon: float = math.inf  # ε of the Gaussian approximation of the composed loss (ε queries)
    gaussian_spread: float = math.inf  # its standard deviation, √Λ''(0)


def _optimum(values: np.ndarray) -> int:
    finite = np.isfinite(values)
    if not np.any(finite):
        return -1
    return int(np.argmin(np.where(finite, values, np.inf)))


def _objective(total: np.ndarray, delta: Optional[float], epsilon: Optional[float]) -> np.ndarray:
    if epsilon is None:
        return (total + math.log(1.0 / delta)) / TILTS
    return total - TILTS * epsilon


def _second_derivative(k: np.ndarray, j: int) -> float:
    """K''(θ_j) by the three-point rule on the non-uniform grid (one-sided at the ends)."""
    j = min(max(j, 1), TILTS.size - 2)
    t0, t1, t2 = TILTS[j - 1], TILTS[j], TILTS[j + 1]
    d1, d2 = (k[j] - k[j - 1]) / (t1 - t0), (k[j + 1] - k[j]) / (t2 - t1)
    return 2.0 * (d2 - d1) / (t2 - t0)


def rdp_tilt(events: Sequence[PrivacyEvent], counts: Sequence[int], delta: Optional[float],
             epsilon: Optional[float]) -> Optional[TiltPlan]:
    """The :class:`TiltPlan` from the leaves' RDP curves, or None when the RDP accountant cannot
    analyse a leaf or the curve gives no finite optimum."""
    cumulants = []
    for event in events:
        k = _cumulant(event)
        if k is None:
            return None
        cumulants.append(k)
    with np.errstate(over="ignore", invalid="ignore"):
        total = sum(float(c) * k for c, k in zip(counts, cumulants))
        objective = _objective(total, delta, epsilon)
    j = _optimum(objective)
    if j < 0:
        return None
    # bounded losses (pure DP) drive the Chernoff optimum to θ → ∞; a tilt beyond MAX_TILT_LOSS nats
    # of θ·loss gains nothing and costs rounding (every exponent carries u·θ·|ℓ|)
    with np.errstate(over="ignore", invalid="ignore"):
        mean = float(sum(float(c) * (k[j] if np.isfinite(k[j]) else 0.0) for c, k in zip(counts, cumulants)) / TILTS[j])
    scale = max(abs(mean), abs(float(epsilon)) if epsilon is not None else 0.0, 1e-12)
    while j > 0 and TILTS[j] * scale > MAX_TILT_LOSS:
        j -= 1
    spreads = []
    for k in cumulants:  # NaN where the tilted loss has (numerically) no spread, e.g. a bounded loss at large θ
        with np.errstate(over="ignore", invalid="ignore"):
            var = float(_second_derivative(k, j))
            level = float(abs(k[j] / TILTS[j])) if np.isfinite(k[j]) else 0.0  # the leaf's tilted mean loss
        ok = math.isfinite(var) and var > 0.0 and math.sqrt(var) > 1e-6 * level
        spreads.append(math.sqrt(var) if ok else math.nan)
    theta = float(TILTS[j])
    if epsilon is None:  # read the errors at the RDP ε of the improved conversion (just above the PLD ε)
        alpha = 1.0 + TILTS
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            improved = (total / TILTS + np.log1p(-1.0 / alpha) - (math.log(delta) + np.log(alpha)) / TILTS)
        k = _optimum(improved)
        at = float(min(improved[k], objective[j])) if k >= 0 else float(objective[j])
    else:
        at = float(epsilon)
    var0 = _gaussian_variance(total)
    spread0 = math.sqrt(var0) if var0 > 0.0 else math.inf
    return TiltPlan(theta, at, float(total[j] - theta * at), tuple(spreads), _gaussian_epsilon(var0, delta), spread0)


def _gaussian_variance(total: np.ndarray) -> float:
    """μ² of the Gaussian approximation of the composed loss, 2Λ(θ)/(θ(θ + 1)) at the smallest tilt
    (exact for a μ-Gaussian pair, whose Λ(θ) = θ(θ + 1)μ²/2; for others 2·KL ≈ Λ''(0) — read off
    the curve's values rather than differenced, as some RDP curves are linear at small orders), or 0."""
    t = float(TILTS[0])
    var = 2.0 * float(total[0]) / (t * (t + 1.0))
    return var if math.isfinite(var) and var > 0.0 else 0.0


def _gaussian_epsilon(var: float, delta: Optional[float]) -> float:
    """ε at δ of the μ-Gaussian pair with μ² = ``var`` (:func:`_gaussian_variance`; the Gaussian
    approximation of the composed loss, Dong, Roth, Su 2022 CLT), or ∞; an estimate of the PLD's ε
    that the RDP bound can exceed several-fold at small sampling rates, used only to choose the grid
    (float64 bisection on log δ(ε) = log(Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)), 1e-6 relative)."""
    if delta is None or not var > 0.0:
        return math.inf
    mu = math.sqrt(var)
    target = math.log(delta)

    def log_delta(eps: float) -> float:
        a, b = float(log_ndtr(0.5 * mu - eps / mu)), float(log_ndtr(-0.5 * mu - eps / mu))
        gap = eps + b - a
        return a + math.log(-math.expm1(gap)) if gap < 0.0 else -math.inf

    if log_delta(0.0) <= target:
        return 0.0
    lo, hi = 0.0, mu * (0.5 * mu + math.sqrt(-2.0 * target)) + mu
    while log_delta(hi) > target:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if log_delta(mid) > target else (lo, mid)
    return hi


@lru_cache(maxsize=256)
def _cumulant(event: PrivacyEvent) -> Optional[np.ndarray]:
    """θ·D_{θ+1} of one leaf on :data:`TILTS` (its log-MGF), or None if the RDP accountant refuses it.

    A truncated-Poisson step (no RDP curve of its own) gets the log-MGF of its dominating direct
    sum Σ wᵢ(Pᵢ, Qᵢ) (:func:`~dpcore.truncation.truncated_poisson_branches`): the MGFs of
    the branches add with their weights, log Σ wᵢ·e^{Λᵢ(θ)} — exactly the untruncated step's curve
    when no batch reaches the cap, so both get the same tilt and grid."""
    from ..rdp_accountant import compute_rdp  # deferred: the RDP accountant imports the event tree

    if isinstance(event, TruncatedPoissonSampledEvent):
        from ..truncation import truncated_poisson_branches

        try:
            branches = truncated_poisson_branches(event)
        except UnsupportedEventError:
            return None
        curves = [_cumulant(step) for _, step in branches]
        if any(c is None for c in curves):
            return None
        if len(curves) == 1:
            return curves[0]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = logsumexp(np.stack(curves), axis=0, b=np.array([w for w, _ in branches])[:, None])
        out.setflags(write=False)
        return out
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            out = TILTS * compute_rdp(event, 1.0 + TILTS)
    except (UnsupportedEventError, ArithmeticError, ValueError, TypeError):
        return None
    out.setflags(write=False)
    return out


def leaf_tilt(leaves: Sequence[Tuple[GridPld, int]], delta: Optional[float], epsilon: Optional[float]) -> float:
    """θ from the exact MGFs of the discretised (untilted) leaves, on the grid :data:`TILTS`
    (0 when none is finite)."""
    total = np.zeros(TILTS.size)
    for leaf, count in leaves:
        keep = leaf.pmf > 0.0
        log_p = np.log(leaf.pmf[keep])
        ell = leaf.losses()[keep]
        for chunk in range(0, TILTS.size, 16):
            t = TILTS[chunk:chunk + 16]
            with np.errstate(over="ignore", invalid="ignore"):
                total[chunk:chunk + 16] += count * logsumexp(log_p[None, :] + t[:, None] * ell[None, :], axis=1)
    j = _optimum(_objective(total, delta, epsilon))
    if j < 0:
        return 0.0
    scale = max(abs(float(epsilon)) if epsilon is not None else 0.0, abs(total[j]) / TILTS[j], 1e-12)
    while j > 0 and TILTS[j] * scale > MAX_TILT_LOSS:
        j -= 1
    return float(TILTS[j])
