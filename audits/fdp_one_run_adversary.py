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

**Ceiling of every analysis of the count** (:func:`count_audit_ceiling`). The one-run analyses in use —
Steinke, Nasr, Jagielski 2023 (Thm 3.1), Mahloujifar, Melis, Chaudhuri 2024 (Thm 9), the LP of
:mod:`audits.fdp_one_run_lp` — see only the number k of guesses and the number C of right ones. A
:class:`CountRelease` makes C whatever distribution the claim allows: it marks k canaries at random and
places c′ of them, drawn from a distribution p, on their own bit's side, the rest on the other side. Its
privacy profile has an exact closed form (class docstring; checked against a brute-force enumeration in
tests/audits/test_fdp_one_run_count_ceiling.py) which for p free is the LP's constraint itself, so the
strongest such release (:func:`strongest_count_release`, a linear program) is the LP's worst case up to
the LP's relaxations. If it reaches the observed count with probability ≥ α, no analysis of the count can
reject the claim on it by rejecting large counts (as they all do); the least such claim, by bisection,
bounds what any of them reaches on that run. For tests of any shape :func:`count_test_power_bound` gives the
Neyman–Pearson bound on their power against the audited mechanism: below ½ at a claim, no test of the count
rejects it in most runs.
Against the estimator's rule (k − k//2 highest "in", k//2 lowest "out") the release cannot choose how many
of its marked canaries land on each half; a reserve of extra marked canaries fills a short half, the rest
of the shortfall is filled with coin flips (:func:`_seen_tail`), so its bound is looser
(``guessing="halves"``) than for analyses that hold whatever the rule (``guessing="any"``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Optional, Tuple

import numpy as np
from scipy import optimize, sparse, special, stats

__all__ = ["FlagRelease", "gaussian_profile", "strongest_release", "any_audit_ceiling", "CountRelease",
           "strongest_count_release", "count_audit_ceiling", "count_test_power_bound"]

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



#: log γ of the linear program's rows in :func:`strongest_count_release` (:func:`_tangent_bound` makes its
#: solution within the claim between the points too; the fine grid then verifies it)
_COUNT_LP_LOG_GAMMA = np.linspace(0.0, 8.0, 161)
#: the rows stop, and every step's ratio is capped, where m·β(γ) falls below this (far above the LP solver's
#: tolerance, so the tails it leaves at 0 can be restored without breaking a row)
_CAP_LEVEL = 1e-5
#: guessing rules of :meth:`CountRelease.tail`
GUESSING_RULES = ("halves", "any")
#: most guesses :func:`strongest_count_release` takes: 2^-k, the end values of the silent release, stays a normal
#: float64 (at k ≈ 1080 it underflows to 0 next to positive values, and no release passes the ratio check)
MAX_GUESSES = 1000


def _tangent_bound(mu: float, log_gamma: np.ndarray) -> np.ndarray:
    """For consecutive points γ_a < γ_{a+1} of exp(log_gamma): the tangent of the claim's profile β_μ at
    γ_{a+1}, evaluated at γ_a. β_μ is convex in γ (its slope is −Φ(−ε/μ − μ/2), ε = log γ, increasing), so
    the tangent lies below it on [γ_a, γ_{a+1}]; a profile convex in γ that is at most this value at γ_a and at
    most β_μ(γ_{a+1}) at γ_{a+1} — the next point's own value, at most its tangent's — is below its chord, hence
    below the tangent, hence below β_μ on the whole interval."""
    lg = np.asarray(log_gamma, dtype=np.float64)
    nxt = lg[1:]
    slope = special.ndtr(-nxt / mu - mu / 2)
    return gaussian_profile(mu, nxt) + slope * (np.exp(nxt) - np.exp(lg[:-1]))


@dataclasses.dataclass(frozen=True)
class CountRelease:
    """The release that realises a distribution of the number of right guesses on m canaries, and nothing
    else (:func:`count_audit_ceiling`).

    One run draws C′ = c′ with probability ``counts[c′]``, a uniformly random set G of ``marked`` = k′
    canaries and a uniformly random subset R ⊆ G of c′ of them; a canary of R scores on its own bit's side
    ([3, 4) if included, [−4, −3) if not), one of G \\ R on the other side, and any other canary in (−1, 1)
    (positions within the ranges are uniform tie-breakers). Nothing depends on the bits but the sides, so
    negating a canary's score and flipping its bit is a symmetry, and the privacy profile of canary j
    given the others is the same for every value of the others' bits; counting the outcomes,

        β(γ) = (1/m) Σ_s [ ((s + 1) p_{s+1} − γ (k′ − s) p_s)₊ + ((k′ − s) p_s − γ (s + 1) p_{s+1})₊ ]

    for γ ≥ 1 (p = ``counts``; the first sum is "j right and s others right" against "j wrong", as in
    :mod:`audits.fdp_one_run_lp`, whose every feasible count distribution this realises with k′ = k), and
    β(γ) = 1 − γ + γ β(1/γ) for γ < 1, as for the symmetric claim.

    Parameters
    ----------
    canaries : int
        m ≥ ``marked``.
    marked : int
        k′ ≥ 1, the canaries the release places on a side.
    counts : tuple of float
        p_0 … p_k′, the distribution of C′ (non-negative, summing to 1 within 1e-9).
    """

    canaries: int
    marked: int
    counts: Tuple[float, ...]

    def __post_init__(self):
        p = np.asarray(self.counts, dtype=float)
        if not 1 <= self.marked <= self.canaries:
            raise ValueError(f"marked must be in [1, canaries], got {self.marked!r}")
        if p.shape != (self.marked + 1,):
            raise ValueError(f"counts must have marked + 1 = {self.marked + 1} entries, got shape {p.shape}")
        if np.any(~(p >= 0.0)) or abs(float(p.sum()) - 1.0) > 1e-9:
            raise ValueError("counts must be non-negative and sum to 1")

    def _pairs(self) -> Tuple[np.ndarray, np.ndarray]:
        """((s + 1) p_{s+1}, (k′ − s) p_s) for s = 0 … k′ − 1: "j right" and "j wrong" with s others right."""
        p = np.asarray(self.counts, dtype=float)
        s = np.arange(self.marked)
        return (s + 1) * p[1:], (self.marked - s) * p[:-1]

    def profile(self, log_gamma: np.ndarray) -> np.ndarray:
        """β(γ) at γ = exp(log_gamma) ≥ 1 (class docstring)."""
        gamma = np.exp(np.asarray(log_gamma, dtype=np.float64))[:, None]
        right, wrong = self._pairs()
        return (np.maximum(right - gamma * wrong, 0.0).sum(axis=1)
                + np.maximum(wrong - gamma * right, 0.0).sum(axis=1)) / self.canaries

    def within(self, mu_claim: float) -> bool:
        """Whether the release is μ-GDP for ``mu_claim`` with respect to each canary: the profile (convex in
        γ, a sum of positive parts of affine functions) at each point of the fine grid against
        :func:`_tangent_bound`, which covers the interval up to the next point, and 0 beyond the grid (every
        ratio of the pairs at most its end)."""
        right, wrong = self._pairs()
        end = math.exp(_LOG_GAMMA[-1])
        if np.any(right > end * wrong) or np.any(wrong > end * right):
            return False
        # a relative margin of 1e-9 on both sides covers the float rounding of the two sums
        ours = self.profile(_LOG_GAMMA[:-1]) * (1.0 + 1e-9)
        return bool(np.all(ours <= _tangent_bound(mu_claim, _LOG_GAMMA) * (1.0 - 1e-9)))

    def sample(self, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
        """One run: (included, scores) of the m canaries (each included w.p. ½)."""
        m, k = self.canaries, self.marked
        included = rng.random(m) < 0.5
        right = rng.choice(k + 1, p=np.asarray(self.counts) / math.fsum(self.counts))
        marked = rng.permutation(m)[:k]
        looks_in = included[marked].copy()
        looks_in[right:] = ~looks_in[right:]  # the first c′ of the random order are the right ones
        scores = rng.uniform(-1.0, 1.0, m)
        scores[marked] = np.where(looks_in, 3.0, -4.0) + rng.random(k)
        return included, scores

    def tail(self, correct: int, guessing: str = "halves", guesses: Optional[int] = None) -> float:
        """Lower bound on P[C ≥ ``correct``] for an auditor with k = ``guesses`` guesses (default ``marked``),
        less 1e-12 for rounding.

        ``guessing="halves"``: the estimator's rule (its k − k//2 highest scores "in", its k//2 lowest "out";
        :func:`_seen_tail`; k ≤ ``marked``: marked canaries beyond k are a reserve that fills a short half).
        ``guessing="any"``: an auditor that guesses the sign of its k = ``marked`` largest |scores|, which sees
        C = C′ exactly — the bound that an analysis valid whatever the guessing rule (Steinke et al.'s,
        Mahloujifar et al.'s, :mod:`audits.fdp_one_run_lp`: they see only k and C) has to respect."""
        if guessing not in GUESSING_RULES:
            raise ValueError(f"guessing must be one of {GUESSING_RULES}, got {guessing!r}")
        k = self.marked if guesses is None else int(guesses)
        if guessing == "any" and k != self.marked:
            raise ValueError(f"the 'any' rule's auditor guesses on the {self.marked} marked canaries, got guesses={k}")
        if not 1 <= k <= self.marked:
            raise ValueError(f"guesses must be in [1, marked = {self.marked}], got {guesses!r}")
        if guessing == "halves" and self.canaries - self.marked < k - k // 2:
            raise ValueError("the halves rule's tail needs canaries - marked >= guesses - guesses // 2 unmarked canaries "
                             f"to fill a short half (got canaries={self.canaries}, marked={self.marked}, guesses={k})")
        if guessing == "any":
            seen = (np.arange(self.marked + 1) >= int(correct)).astype(float)
        else:
            seen = _seen_tail(self.marked, k, int(correct))
        return max(0.0, float(np.asarray(self.counts) @ seen) - 1e-12)


@functools.lru_cache(maxsize=64)
def _seen_tail(marked: int, guesses: int, correct: int) -> np.ndarray:
    """Lower bounds on P[the auditor's count ≥ ``correct`` | C′ = c′], c′ = 0 … k′, for a :class:`CountRelease`
    with k′ = ``marked`` marked canaries and an auditor with k = ``guesses`` ≤ k′ guesses (its k − k//2 highest and
    k//2 lowest scores, :func:`audits.statistics._guess_counts`).

    The "in" side holds N ~ Binomial(k′, ½) marked canaries (a marked canary's side is its bit's or the other's,
    its bit uniform). The auditor's "in" guesses take min(N, k − k//2) of them, its "out" guesses min(k′ − N, k//2)
    of the others — picked by the tie-breakers, which do not depend on which marked canaries are right — and the
    D guesses left over go to unmarked canaries, each right w.p. ½ independently: given N its count is
    Hypergeometric(k′, c′, k − D) + Binomial(D, ½). Values of N with probability below 1e-15 are left out (hence
    lower bounds)."""
    k_out = guesses // 2
    k_in = guesses - k_out
    sides = stats.binom.pmf(np.arange(marked + 1), marked, 0.5)
    drawn = np.minimum(np.arange(marked + 1), k_in) + np.minimum(marked - np.arange(marked + 1), k_out)
    c_marked = np.arange(marked + 1)[:, None]
    out = np.zeros(marked + 1)
    for picked in np.unique(drawn[sides > 1e-15]):
        j = np.arange(picked + 1)[None, :]
        feasible = (j <= c_marked) & (picked - j <= marked - c_marked)
        log_hyper = (_log_choose(c_marked, np.minimum(j, c_marked))
                     + _log_choose(marked - c_marked, np.clip(picked - j, 0, marked - c_marked))
                     - _log_choose(marked, picked))
        hyper = np.where(feasible, np.exp(log_hyper), 0.0)
        coin_tail = stats.binom.sf(correct - 1 - np.arange(picked + 1), guesses - picked, 0.5)  # P[Bin(D, ½) ≥ c − j]
        out += sides[(drawn == picked) & (sides > 1e-15)].sum() * (hyper @ coin_tail)
    return out


def _log_choose(n, r) -> np.ndarray:
    return special.gammaln(n + 1.0) - special.gammaln(r + 1.0) - special.gammaln(n - r + 1.0)


def _capped_tails(counts: np.ndarray, cap: float) -> np.ndarray:
    """The least distribution above ``counts`` (before normalising) whose every step's ratio of the "right" and
    "wrong" weights (:meth:`CountRelease._pairs`) is at most ``cap`` both ways, so that its profile is 0 for
    γ ≥ ``cap``: the solver leaves values far below its tolerance at 0. An upward pass enforces
    (k − s) p_s ≤ cap (s + 1) p_{s+1}, a downward pass (s + 1) p_{s+1} ≤ cap (k − s) p_s; a value the second
    pass raises keeps the first inequality, as the two factors multiply to 1/cap²."""
    p = counts.copy()
    k = p.size - 1
    for s in range(k):
        p[s + 1] = max(p[s + 1], p[s] * (k - s) / ((s + 1) * cap))
    for s in range(k - 1, -1, -1):
        p[s] = max(p[s], p[s + 1] * (s + 1) / ((k - s) * cap))
    return p / math.fsum(p)


def _strongest_marked(mu_claim: float, m: int, marked: int, seen: np.ndarray) -> Tuple[CountRelease, float]:
    """The release on ``marked`` = k′ marked canaries within ``mu_claim``-GDP maximising ``seen`` · p (the
    auditor's tail given C′; :func:`strongest_count_release`), and that tail."""
    k = marked
    lg = _COUNT_LP_LOG_GAMMA
    bound = m * _tangent_bound(mu_claim, lg)
    used = max(1, int(np.count_nonzero(m * gaussian_profile(mu_claim, lg[1:]) >= _CAP_LEVEL)))
    gamma, bound, cap = np.exp(lg[:used]), bound[:used], math.exp(lg[used])
    g, n = gamma.size, k + 1
    s = np.arange(k)
    rows = g * k  # (γ, s): (s + 1) p_{s+1} − γ (k − s) p_s − u ≤ 0
    gi = np.repeat(np.arange(g), k)
    si = np.tile(s, g)
    aux = n + np.arange(rows)
    r_cap = rows + g + s  # the ratio caps, two per step
    row = np.concatenate([np.arange(rows), np.arange(rows), np.arange(rows), rows + gi, r_cap, r_cap, r_cap + k,
                          r_cap + k])
    col = np.concatenate([si + 1, si, aux, aux, s + 1, s, s, s + 1])
    val = np.concatenate([si + 1.0, -gamma[gi] * (k - si), -np.ones(rows), np.ones(rows), s + 1.0, -cap * (k - s),
                          k - s * 1.0, -cap * (s + 1.0)])
    a_ub = sparse.csr_matrix((val, (row, col)), shape=(rows + g + 2 * k, n + rows))
    b_ub = np.concatenate([np.zeros(rows), bound, np.zeros(2 * k)])
    a_eq = sparse.csr_matrix((np.ones(n), (np.zeros(n, dtype=int), np.arange(n))), shape=(1, n + rows))
    objective = np.zeros(n + rows)
    objective[:n] = -seen
    silent = stats.binom.pmf(np.arange(n), k, 0.5)
    silent_release = CountRelease(m, k, tuple(silent / math.fsum(silent)))
    for method in ("highs-ds", "highs-ipm"):
        res = optimize.linprog(objective, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=(0, None),
                               method=method)
        if res.status == 0:
            break
    else:  # a numerical failure finds no release: the silent one (a ceiling only grows by it)
        return silent_release, float(silent_release.counts @ seen)
    counts = _capped_tails(np.maximum(res.x[:n], 0.0), cap)
    for share in (1.0, 1.0 - 1e-6, 1.0 - 1e-4, 1.0 - 1e-2, 0.9, 0.5):
        mixed = share * counts + (1.0 - share) * silent
        release = CountRelease(m, k, tuple(mixed / math.fsum(mixed)))
        if release.within(mu_claim):
            return release, float(np.asarray(release.counts) @ seen)
    return silent_release, float(np.asarray(silent_release.counts) @ seen)


def strongest_count_release(mu_claim: float, canaries: int, guesses: int, correct: int,
                            guessing: str = "halves") -> CountRelease:
    """The :class:`CountRelease` within ``mu_claim``-GDP (verified by :meth:`CountRelease.within`) that
    makes the auditor's P[C ≥ ``correct``] largest, for its k = ``guesses`` guesses on ``canaries`` canaries
    with the ``guessing`` rule of :meth:`CountRelease.tail` (read it with ``tail(correct, guessing, guesses)``).

    A linear program over the distribution of C′ on k′ marked canaries, its objective the tail of
    :meth:`CountRelease.tail`: the profile's "right − γ wrong" part (one auxiliary variable per positive part)
    at each point γ_a of :data:`_COUNT_LP_LOG_GAMMA` against :func:`_tangent_bound`, up to the point γ_cap
    beyond which m·β(γ) < :data:`_CAP_LEVEL`, and every step's ratio capped at γ_cap both ways so that the
    profile is 0 beyond it. The solution's tails are then restored to those ratios (:func:`_capped_tails`);
    the "wrong − γ right" part left out of the rows is counted by the verification. The result is mixed
    with Binomial(k′, ½) — C′ of a release that reveals nothing, profile 0 for γ ≥ 1; the profile is convex
    in the distribution — until :meth:`CountRelease.within` accepts it; failing that (or if the solver fails)
    the silent release itself (a weaker adversary only raises :func:`count_audit_ceiling`). k′ = k for the
    "any" rule; for the halves rule the best of k′ = k + j·⌈√k / 2⌉, j = 0 … 4 (√k / 2 is the spread of the
    marked canaries' "in" side: the reserve fills a short half with marked canaries instead of coin flips).
    """
    if guessing not in GUESSING_RULES:
        raise ValueError(f"guessing must be one of {GUESSING_RULES}, got {guessing!r}")
    m, k, c = int(canaries), int(guesses), int(correct)
    if not 1 <= k <= MAX_GUESSES:
        raise ValueError(f"guesses must be in [1, {MAX_GUESSES}] (the count distribution is held in float64, whose "
                         f"Binomial(k, 1/2) end values underflow beyond it), got {guesses!r}")
    if guessing == "any":
        return _strongest_marked(mu_claim, m, k, (np.arange(k + 1) >= c).astype(float))[0]
    if m - k < k - k // 2:
        raise ValueError(f"the halves rule needs canaries - guesses >= guesses - guesses // 2 (got {m}, {k})")
    step = math.ceil(math.sqrt(k) / 2.0)
    best, best_tail = None, -1.0
    for marked in range(k, k + 5 * step, step):
        if marked > MAX_GUESSES or m - marked < k - k // 2:
            break
        release, tail = _strongest_marked(mu_claim, m, marked, _seen_tail(marked, k, c))
        if tail > best_tail:
            best, best_tail = release, tail
    return best


def count_audit_ceiling(mu: float, canaries: int, guesses: int, correct: int, alpha: float = 0.05,
                        tolerance: float = 1e-3, guessing: str = "halves") -> Tuple[float, CountRelease]:
    """(μ_c, R): a release R within μ_c-GDP with P[C ≥ ``correct``] ≥ ``alpha`` for an auditor with k =
    ``guesses`` guesses, so no valid test of the count that rejects on many right guesses — a rejection region
    {C ≥ c*}, as every published analysis and ours — rejects a claim of μ_c-GDP (or any weaker claim) at level
    ``alpha`` on ``correct`` right guesses. (A test of another shape can: "reject iff C ∈ {160, 161}" can be valid
    where the ceiling is below 160 — tests/audits/test_count_ceiling_review.py; for tests of any shape,
    :func:`count_test_power_bound` bounds the power instead.) Which analyses:

    - ``guessing="halves"``: no analysis at all of the count of the estimator's own rule (its k − k//2
      highest scores "in", its k//2 lowest "out");
    - ``guessing="any"``: no analysis that holds whatever the guessing rule, i.e. one that sees only k and C —
      Steinke et al.'s binomial, Mahloujifar et al.'s recursion, the LP of :mod:`audits.fdp_one_run_lp` (R is
      then the LP's own worst case, up to its relaxations). A lower ceiling: the halves rule costs R reserve
      canaries or coin-flip guesses (:func:`_seen_tail`), which only an analysis that uses the rule could exploit.

    **Why.** A test of the count with rejection region {C ≥ c*} is valid for a claim only if every release
    within the claim has P[C ≥ c*] ≤ α; if it rejected at ``correct`` (c* ≤ ``correct``), R — within the claim
    — would have P[C ≥ c*] ≥ P[C ≥ ``correct``] ≥ α. R is the strongest :class:`CountRelease`: a release
    whose number of right guesses varies from run to run, which a claim that bounds each canary's leakage
    allows. Bisection in μ_c ∈ (0, ``mu``] (a larger claim admits every smaller one's releases) to
    ``tolerance``·``mu`` (doubling the upper end first while even it admits no such R, up to 16·``mu``: an
    extreme count can be one that valid analyses reject even at the mechanism's own claim); μ_c is the end where
    R was found, so the bound holds as stated. For the halves rule R may mark more canaries than k (a reserve):
    read its tail with ``R.tail(correct, guessing, guesses)``.

    Parameters
    ----------
    mu : float
        Upper end of the search, > 0: the audited mechanism's own μ (1/σ for sensitivity 1); also the unit of
        ``tolerance``.
    canaries : int
        m, canaries in the run (each included w.p. ½).
    guesses : int
        k, the auditor's guesses.
    correct : int
        c, the right guesses observed.
    alpha : float
        Level of the analyses bounded, in (0, 1).
    tolerance : float
        Relative width of the bisection.
    guessing : {"halves", "any"}
        Which analyses are bounded (above).

    Raises
    ------
    ValueError
        If no count release within 16·``mu``-GDP reaches P[C ≥ ``correct``] ≥ ``alpha``.
    """
    lo, hi = 0.0, float(mu)
    found = strongest_count_release(hi, canaries, guesses, correct, guessing)
    while found.tail(correct, guessing, guesses) < alpha:  # an extreme count: the ceiling lies above the mechanism's μ
        if hi >= 16.0 * mu:
            raise ValueError(f"no count release within mu = {hi} reaches P[C >= {correct}] >= {alpha}")
        lo, hi = hi, 2.0 * hi
        found = strongest_count_release(hi, canaries, guesses, correct, guessing)
    while hi - lo > tolerance * mu:
        mid = 0.5 * (lo + hi)
        release = strongest_count_release(mid, canaries, guesses, correct, guessing)
        if release.tail(correct, guessing, guesses) >= alpha:
            hi, found = mid, release
        else:
            lo = mid
    return hi, found


def count_test_power_bound(release: CountRelease, observed: np.ndarray, alpha: float = 0.05,
                           guessing: str = "halves", guesses: Optional[int] = None) -> float:
    """Largest power, against the audited mechanism, of *any* level-``alpha`` test of the count that is valid for a
    claim ``release`` is within — whatever its rejection region, randomised or not.

    A valid test has level ≤ α under every release within the claim, so under ``release``; by the Neyman–Pearson
    lemma no such test has more power against the mechanism than the likelihood-ratio test of ``release``'s count
    distribution q against the mechanism's g, at level α under q. g is the empirical distribution of ``observed``
    (right-guess counts of independent runs of the mechanism at the same k and rule), so the bound is an estimate
    with its Monte Carlo error (about √(p(1 − p)/runs)), biased upwards (the test is fitted to the sample:
    +0.03 at 1000 runs drawn from q itself), which only makes "below ½" harder to show; q comes from
    :meth:`CountRelease.tail` (its left-out mass is below 1e-15). Where this power is below ½, no test of the count rejects the claim in most runs: no
    analysis of the count, of any form, has a median ε_lb above that claim's.

    Parameters
    ----------
    release : CountRelease
        A release within the claim.
    observed : array of int
        Counts of right guesses on independent runs of the audited mechanism (k = ``guesses`` guesses).
    alpha : float
        Level, in (0, 1).
    guessing : {"halves", "any"}
        The auditor's rule (:meth:`CountRelease.tail`).
    guesses : int, optional
        k (default ``release.marked``).
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    k = release.marked if guesses is None else int(guesses)
    counts = np.asarray(observed)
    if counts.ndim != 1 or counts.size == 0 or np.any((counts < 0) | (counts > k)):
        raise ValueError(f"observed must be a non-empty 1-d array of counts in [0, {k}]")
    tails = np.array([release.tail(c, guessing, k) for c in range(k + 2)])
    null = np.maximum(tails[:-1] - tails[1:], 0.0)
    alt = np.bincount(counts.astype(np.int64), minlength=k + 1) / counts.size
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(null > 0, alt / np.where(null > 0, null, 1.0), np.where(alt > 0, np.inf, 0.0))
    power, level = 0.0, 0.0
    for c in np.argsort(-ratio, kind="stable"):
        if alt[c] == 0.0:
            break
        if level + null[c] <= alpha:
            level += null[c]
            power += alt[c]
        else:  # the boundary count, rejected with the probability that fills the level
            power += alt[c] * (alpha - level) / null[c]
            break
    return float(min(power, 1.0))
