"""Validity of the f-DP one-run audit against a correlated release exactly at its claim.

A one-run audit must hold for every release that is f-DP with respect to each canary *given the
others*, correlated ones included. :class:`FlagRelease` is the simplest correlation (a shared flag):
with probability ``weight`` it reveals every canary through an independent clipped Gaussian channel
(score μ_r·b + N(0, 1) clipped to [−L, μ_r + L]), otherwise nothing (score N(0, 1)). Given the other
canaries the flag is known, so the release's curve for one canary is the flag-revealed mixture,
whose privacy profile (hockey-stick divergence at γ = e^ε) is the weighted sum of the parts':
β(γ) = weight·β_clip(γ) + (1 − weight)·(1 − γ)₊. It is within a μ-GDP claim iff β ≤ β_μ for every
γ > 0 (Dong, Roth, Su 2022, Prop. 2.12). The check runs on a grid of log γ ∈ [0, 16], each point
against the claim's value at the *next* point (both profiles decrease), exact on the grid's range;
beyond it the clipped channel's likelihood ratio is bounded (its profile is 0 past
γ = e^{μ_r (L + μ_r/2)}, required inside the grid); for γ < 1 both curves being symmetric,
β(γ) = 1 − γ + γβ(1/γ) carries the inequality over. A direct computation of the mixture's curve
cross-checks it.

The audits must not reject such a release, exactly at its claim, more often than their level; the
same harness must reject a release outside its claim (half the claim's noise) in most runs.
"""

import dataclasses
import math
from typing import Tuple

import numpy as np
import pytest
from scipy import special

import dpcore
from audits.fdp_claim import CurveFamily
from audits.fdp_one_run import _choose_guesses, fdp_one_run_rejects
from audits.fdp_one_run_lp import lp_rejects
from audits.statistics import _guess_counts


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


DELTA = 1e-5
SIGMA = dpcore.analytic_gaussian_sigma(2.0, DELTA, 1.0)  # the claim: ε = 2, i.e. μ = 1/σ
MU = 1.0 / SIGMA
CANARIES = 2000
RELEASES = [(0.1, 2.0), (0.2, 3.0)]  # (weight, clip L)


def _mixture_curve(release: FlagRelease, a: np.ndarray) -> np.ndarray:
    """TPR of the flag-revealed mixture at FPR a, by direct maximisation over the split of a (w·a₁ + (1 − w)·a₂)."""
    w = release.weight
    a1 = np.linspace(0.0, 1.0, 50_001)
    gain = w * (release._clipped_curve(a1) - a1)
    out = np.empty_like(a)
    for i, x in enumerate(a):
        ok = (w * a1 <= x) & (x - w * a1 <= 1.0 - w)
        out[i] = x + gain[ok].max()
    return out


def _claim_curve(a: np.ndarray) -> np.ndarray:
    return special.ndtr(special.ndtri(a) + MU)


@pytest.mark.parametrize("weight, clip", RELEASES)
def test_flag_release_is_within_the_claim_by_a_direct_computation_of_its_curve(weight, clip):
    release = strongest_release(MU, weight, clip)
    assert release.mu_reveal > MU  # its revealing runs leak more than the claim's own channel
    a = np.concatenate([np.geomspace(1e-6, 0.5, 60), 1.0 - np.geomspace(1e-6, 0.5, 60)])
    assert np.all(_mixture_curve(release, a) <= _claim_curve(a) + 1e-12)
    louder = FlagRelease(weight, release.mu_reveal * 1.05, clip)  # planted: 5 % more shift
    assert not louder.within(MU)
    assert np.any(_mixture_curve(louder, a) > _claim_curve(a))


@pytest.mark.parametrize("weight, clip", RELEASES + [(1.0, math.inf)])
def test_one_run_audits_hold_against_a_correlated_release_at_its_claim(weight, clip):
    """400 runs of a release audited at the estimator's k. At its claim (the strongest flag release of
    this weight and clip): the recursion and the LP reject at most 30 times (a valid level-5 % test:
    P[Bin(400, 0.05) > 30] ≈ 0.012; observed: 0). Planted bug, (1.0, inf): the claim's own channel
    with half its noise (μ_r = 2μ), outside the claim: the same harness rejects it in most runs."""
    family = CurveFamily(dpcore.GaussianEvent(SIGMA))
    k = _choose_guesses(family, CANARIES, 0.05)
    release = FlagRelease(1.0, 2.0 * MU, clip) if weight == 1.0 else strongest_release(MU, weight, clip)
    lo, c_lp = k // 2, k + 1  # least count the LP rejects (bisection; rejection is monotone in c)
    while c_lp - lo > 1:
        mid = (lo + c_lp) // 2
        lo, c_lp = (lo, mid) if lp_rejects(family(1.0), CANARIES, k, mid, 0.05) else (mid, c_lp)
    rng = np.random.default_rng(25)
    runs, recursion, lp = 400, 0, 0
    for _ in range(runs):
        included, scores = release.sample(CANARIES, rng)
        c, _ = _guess_counts(included, scores, k)
        recursion += fdp_one_run_rejects(family(1.0), CANARIES, k, c, 0.05)
        lp += c >= c_lp
    if weight == 1.0:
        assert recursion > runs / 2 and lp >= recursion, (recursion, lp)
    else:
        assert recursion <= 30 and lp <= 30, (recursion, lp)
