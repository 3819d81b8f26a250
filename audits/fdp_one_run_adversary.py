"""Correlated releases within a μ-GDP claim: adversaries and ceilings for one-run audits.

A one-run audit is valid only if it holds for every release that is f-DP with respect to each
canary *given the others* — correlated releases included. :class:`FlagRelease` is the simplest
correlation (a shared flag): with probability ``weight`` it reveals every canary through an
independent clipped Gaussian channel (score μ_r·b + N(0, 1) clipped to [−L, μ_r + L]), otherwise
nothing (score N(0, 1)). Given the other canaries the flag is known, so the release's curve for one
canary is the flag-revealed mixture, whose privacy profile (hockey-stick divergence at γ = e^ε) is
the weighted sum of the parts': β(γ) = weight·β_clip(γ) + (1 − weight)·(1 − γ)₊. It is within a
μ-GDP claim iff β ≤ β_μ for every γ > 0 (Dong, Roth, Su 2022, Prop. 2.12, both curves symmetric).
:meth:`FlagRelease.within` checks it on a grid of log γ ∈ [0, 16], each point against the claim's
value at the *next* point (both profiles decrease), exact on the grid's range; beyond it the
clipped channel's likelihood ratio is bounded (its profile is 0 past γ = e^{μ_r (L + μ_r/2)},
required inside the grid); for γ < 1, β(γ) = 1 − γ + γβ(1/γ) carries the inequality over
(tests/audits/test_fdp_one_run_validity.py cross-checks it by a direct computation of the curve).

**Ceiling of any valid one-run audit** (:func:`any_audit_ceiling`). Let the audited release be the
Gaussian mechanism with shift μ on each of m independent canaries, and R the flag release of
weight w whose revealing channel is that mechanism clipped at L. R outputs, with probability w,
scores distributed exactly as the mechanism's clipped ones, which differ from the mechanism's own
with probability at most t = m·(Φ(−L) + Φ(−L − μ)) (a score beyond the clip). If R is within the
claim E(s), any test of E(s) at level α — whatever statistic of (inclusion bits, scores) it uses —
rejects R with probability ≤ α, hence rejects the mechanism with probability ≤ α/w + t. With
w > 2α and t small this is below ½; R is within E(s′) for every s′ ≥ s as well, so the estimate's
s* exceeds s with probability below ½: no valid audit's *median* ε_lb exceeds ε(E(s)). (The converse is
open: a ceiling above a goal does not make the goal reachable.)
"""

from __future__ import annotations

import dataclasses
import math
from typing import Tuple

import numpy as np
from scipy import special

__all__ = ["FlagRelease", "gaussian_profile", "strongest_release", "any_audit_ceiling"]

#: log γ ≥ 0 of the grid on which a release's profile is compared with the claim's (both curves are
#: symmetric, so γ < 1 follows from β(γ) = 1 − γ + γβ(1/γ))
_LOG_GAMMA = np.linspace(0.0, 16.0, 16001)


def gaussian_profile(mu: float, log_gamma: np.ndarray) -> np.ndarray:
    """β_μ(γ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) at ε = log γ (Balle & Wang 2018, Thm 8)."""
    eps = np.asarray(log_gamma, dtype=np.float64)
    return np.maximum(special.ndtr(-eps / mu + mu / 2) - np.exp(eps) * special.ndtr(-eps / mu - mu / 2), 0.0)


@dataclasses.dataclass(frozen=True)
class FlagRelease:
    """With probability ``weight`` a clipped Gaussian channel of shift ``mu_reveal`` on every canary, else nothing
    (module docstring).

    Parameters
    ----------
    weight : float
        Probability of the revealing run, in (0, 1].
    mu_reveal : float
        Shift μ_r of the revealing channel (score of an included canary has mean μ_r, unit noise).
    clip : float
        L ≥ 0: scores are clipped to [−L, μ_r + L] (``math.inf``: not clipped).
    """

    weight: float
    mu_reveal: float
    clip: float

    def _clipped_curve(self, x: np.ndarray) -> np.ndarray:
        mu, c = self.mu_reveal, self.clip
        y = special.ndtr(special.ndtri(np.clip(x, 0.0, 1.0)) + mu)
        if math.isfinite(c):
            x_atom, y_atom = special.ndtr(-(c + mu)), special.ndtr(-c)  # the upper atom under out / in
            y = np.where(x < x_atom, x * (y_atom / x_atom), y)
            y = np.where(x > 1.0 - y_atom, 1.0 - (1.0 - x) * (x_atom / y_atom), y)
        return y

    def profile(self, log_gamma: np.ndarray) -> np.ndarray:
        """The release's privacy profile β(γ) at γ = exp(log_gamma) (module docstring)."""
        lg = np.asarray(log_gamma, dtype=np.float64)
        gamma = np.exp(lg)
        mu, c = self.mu_reveal, self.clip
        # tangent point of the Gaussian part: φ(z + μ)/φ(z) = γ
        z = (-lg - mu * mu / 2) / mu
        x_t = special.ndtr(z)
        candidates = [x_t, np.zeros_like(lg), np.ones_like(lg)]
        if math.isfinite(c):
            x_atom, y_atom = special.ndtr(-(c + mu)), special.ndtr(-c)
            lo, hi = x_atom, 1.0 - y_atom
            candidates = [np.clip(x_t, lo, hi), np.full_like(lg, lo), np.full_like(lg, hi), np.zeros_like(lg),
                          np.ones_like(lg)]
        clip_beta = np.max([self._clipped_curve(x) - gamma * x for x in candidates], axis=0)
        return self.weight * np.maximum(clip_beta, 0.0) + (1.0 - self.weight) * np.maximum(1.0 - gamma, 0.0)

    def within(self, mu_claim: float) -> bool:
        """Whether the release is μ-GDP for ``mu_claim`` with respect to each canary (module docstring)."""
        if math.isfinite(self.clip):
            if self.mu_reveal * (self.clip + self.mu_reveal / 2) >= _LOG_GAMMA[-1]:
                return False  # likelihood ratio beyond the grid
        elif self.mu_reveal > mu_claim:
            return False  # an unclipped Gaussian tail beats a smaller μ at small enough FPR
        ours = self.profile(_LOG_GAMMA[:-1])
        claim = gaussian_profile(mu_claim, _LOG_GAMMA[1:])
        return bool(np.all(ours <= claim))

    def sample(self, m: int, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
        """One run on m canaries (each included w.p. ½): (included, scores)."""
        included = rng.random(m) < 0.5
        noise = rng.standard_normal(m)
        if rng.random() >= self.weight:
            return included, noise
        scores = self.mu_reveal * included + noise
        if math.isfinite(self.clip):
            scores = np.clip(scores, -self.clip, self.mu_reveal + self.clip)
        return included, scores


def strongest_release(mu_claim: float, weight: float, clip: float, tolerance: float = 1e-3) -> FlagRelease:
    """The flag release with the largest μ_r (to ``tolerance``) within ``mu_claim`` for this weight and clip."""
    lo, hi = 0.0, 8.0
    while hi - lo > tolerance:
        mid = 0.5 * (lo + hi)
        if FlagRelease(weight, mid, clip).within(mu_claim):
            lo = mid
        else:
            hi = mid
    return FlagRelease(weight, lo, clip)



def any_audit_ceiling(mu: float, canaries: int, alpha: float = 0.05, weight: float = 0.11,
                      clip_mass: float = 0.005) -> Tuple[float, float]:
    """(μ_s, p): the flag release of the clipped mechanism (shift ``mu``) is within μ_s-GDP, so no
    level-``alpha`` audit rejects a μ_s claim on the mechanism with probability above p = α/w + t
    (module docstring).

    Parameters
    ----------
    mu : float
        Shift of the audited Gaussian mechanism (1/σ for sensitivity 1), > 0.
    canaries : int
        m, canaries in the run.
    alpha : float
        Level of the audits bounded.
    weight : float
        Flag probability w.
    clip_mass : float
        m·Φ(−L), which fixes the clip L (t ≤ 2·``clip_mass``).
    """
    clip = -float(special.ndtri(clip_mass / canaries))
    release = FlagRelease(weight, mu, clip)
    lo, hi = 0.0, mu * (1.0 + 1e-9)
    if not release.within(hi):
        raise ValueError("the flag release of the mechanism is not within its own claim")
    while hi - lo > 1e-4 * mu:
        mid = 0.5 * (lo + hi)
        if release.within(mid):
            hi = mid
        else:
            lo = mid
    return hi, alpha / weight + canaries * float(special.ndtr(-clip) + special.ndtr(-clip - mu))
