"""f-DP one-run audit with every per-canary test at once: the privacy-profile linear program.

Same game as :mod:`audits.fdp_one_run` (m canaries included independently w.p. ½, exactly k guesses,
C of them right, k − C wrong; the release f-DP with respect to each canary given the others; B the
concave majorant of the TPR bound 1 − f of both directions). This module bounds max P[C ≥ c] over
all such releases by a linear program whose constraints contain both the recursion of Mahloujifar,
Melis, Chaudhuri 2024 (Thm 9) and, for a pure ε-DP claim, the binomial bound of Steinke, Nasr,
Jagielski 2023 (Thm 3.1 with δ = 0): it is never looser than either.

**Proof sketch.** Fix any set S ⊆ {0, …, k − 1} of counts. For canary j let C₋ⱼ be the right guesses
on the other canaries (a function of the output once the others' bits are fixed), and X_j = {guess
"in" on j, C₋ⱼ ∈ S}, Y_j = {guess "out" on j, C₋ⱼ ∈ S}: both are tests of j's membership given the
others, so P[X_j | in] ≤ B(P[X_j | out]) and P[Y_j | out] ≤ B(P[Y_j | in]) (the f-DP definition,
Dong, Roth, Su 2022 Def. 2.3, averaged over the others' bits with Jensen, B concave). "j right and
C₋ⱼ ∈ S" is X_j under "in" and Y_j under "out", and then C = C₋ⱼ + 1; "j wrong and C₋ⱼ ∈ S" is X_j
under "out" and Y_j under "in", and then C = C₋ⱼ. Averaging over the ½/½ inclusion of j and over the
m canaries (Jensen again), with p_c = P[C = c]:

    Σ_{s ∈ S} (s + 1) p_{s+1}  ≤  m · B( Σ_{s ∈ S} (k − s) p_s / m ).

Mahloujifar et al. use only the upper sets S = {i − 1, …, k − 1}. For a concave B, B(x) = min over γ
≥ 0 of β(γ) + γx with β(γ) = max_x B(x) − γx (for γ = e^ε, β is the claim's δ(ε): the inequality for
one γ is the (ε, δ(ε))-DP of each canary). Maximising over S for each γ turns the whole family into

    Σ_{s=0}^{k−1} ( (s + 1) p_{s+1} − γ (k − s) p_s )₊  ≤  m β(γ)     for every γ ≥ 0,

linear in p after one auxiliary variable per (γ, s). Any distribution of C the release can produce
satisfies all of them, so q(c) = max {Σ_{s ≥ c} p_s : p a distribution meeting them} bounds P[C ≥ c]
under the claim, and c right guesses reject the claim at level α when q(c) < α; q(c) itself is a
valid p-value. For a pure ε-DP claim β(γ) = 0 for γ ≥ e^ε, so (s + 1) p_{s+1} ≤ e^ε (k − s) p_s: the
likelihood ratios of Binomial(k, e^ε/(1 + e^ε)), and q(c) is that binomial's tail (Steinke et al.'s
Thm 3.1; pinned in tests/audits/test_fdp_one_run_lp.py).

**Relaxations (each only enlarges the feasible set, so q(c) stays an upper bound).** γ runs over a
fixed grid (:data:`LOG_GAMMAS`, plus some of the majorant's own segment slopes) instead of all γ ≥
0; β(γ) is the support function of the claimed curve's tabulated concave majorant
(:meth:`audits.fdp_claim.ClaimedCurve.hull`, itself above the certified curve); the constraints for
s below c − w (w = :func:`_window`) are dropped and the mass below that level is left free; the value
used is not the solver's primal (solved to a tolerance, it can sit below the optimum) but a weak-duality
bound from its duals (:func:`_dual_bound`), valid whatever the solver's accuracy. With γ restricted
to a grid a few of the recursion's constraints (those of the majorant's other segments) can be
missing, so the bound returned is the smaller of the LP's and the recursion's p-value
(:func:`audits.fdp_one_run._p_value`) — both valid, so never looser than the recursion.

**More counts do not help by themselves (tiers).** Split the k guesses into tiers fixed in advance (tier 1:
the most confident k₁, tier 2: the next k₂), count C_t right per tier, and use the tests "guess on j in
tier t and the others' state ∈ S_t": with p the distribution of (C₁, C₂), for every γ,
Σ_s Σ_t ((s_t + 1) p(s + e_t) − γ (k_t − s_t) p(s))₊ ≤ m β(γ) (:func:`_profile_lp` solves it; the study is
``benchmarks/bench_audit_tightness.py --one-run-tiers``). Splitting a distribution of C meeting this
module's constraints by a hypergeometric draw (as if the k guesses were dealt to the tiers at random)
meets the tiered ones with the *same* left-hand sides (with H(s | c) the hypergeometric probability of the
state s given C = c, (s_t + 1)·H(s + e_t | c + 1) = (k_t − s_t)·H(s | c)·(c + 1)/(k − c), and the weights
(k_t − s_t)·H(s | c)/(k − c) sum to 1 over the (s, t) of each c), so the tiered bound on P[C₁ + C₂ ≥ c] is exactly this one (the benchmark prints
both) and a weighted statistic a·C₁ + C₂ gains only as far as the observed split is unlikely under the
hypergeometric: +1.0–4.7 % ε_lb per seed (median +1.5 %) on the Gaussian at ε = 4, m = 2·10⁴, against the
+7 % issue 25's goal needs (RESULTS.md, "f-DP audits"), so it is not offered as an analysis.

**Cost.** One LP of about (k − c + w)·|grid| variables (HiGHS): 0.3–30 s for k ≤ 2000 on the shared
benchmark machine, so an ε_lb (six to ten LPs) takes 10–120 s where the recursion takes
milliseconds. The gain measured on the Gaussian at m = 2·10⁴ (RESULTS.md, "f-DP audits") is 1–2.4 %
of ε_lb."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, sparse

from .fdp_claim import ClaimedCurve

__all__ = ["lp_tail_bound", "lp_rejects", "lp_least_rejected_count", "LOG_GAMMAS"]

#: log γ of the supporting lines used (γ = e^ε for ε ≥ 0 is the claim's (ε, δ(ε)) at that ε)
LOG_GAMMAS = np.linspace(-1.0, 7.0, 81)
#: at most this many slopes of the majorant's segments join the grid
_HULL_SLOPES = 40
#: larger slopes are left out (coefficients γ·k beyond ~1e7 make HiGHS fail; leaving lines out is valid)
_MAX_GAMMA = math.exp(10.0)
#: relative allowance for the float rounding of the weak-duality bound's dot products (n·u with n ≤ 1e5 terms)
_DUAL_ROUNDING = 1e-10


def _window(k: int) -> int:
    """Levels kept below c: the bulk of any count distribution spans O(√k) levels."""
    return int(20 + 6 * math.sqrt(k))


def _gammas(curve: ClaimedCurve) -> np.ndarray:
    """γ of the supporting lines used: the grid, and up to :data:`_HULL_SLOPES` slopes of the majorant's own
    segments (all of them for a few-segment curve such as ε-DP's, where they are the exact constraints)."""
    hx, hy = curve.hull()
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.diff(hy) / np.diff(hx)
    slopes = slopes[np.isfinite(slopes) & (slopes > 0) & (slopes <= _MAX_GAMMA)]
    if slopes.size > _HULL_SLOPES:
        slopes = slopes[np.linspace(0, slopes.size - 1, _HULL_SLOPES).astype(int)]
    return np.unique(np.concatenate([np.exp(LOG_GAMMAS), slopes]))


def _profile(curve: ClaimedCurve, gammas: np.ndarray) -> np.ndarray:
    """β(γ) = max over the majorant's vertices of y − γx (the majorant is linear between them)."""
    hx, hy = curve.hull()
    return np.max(hy[None, :] - gammas[:, None] * hx[None, :], axis=1)


def _solve(m: int, k: int, c: int, lo: int, gammas: np.ndarray, beta: np.ndarray):
    """max Σ_{s ≥ c} p_s under the constraints of ``gammas`` (levels s ≥ lo); returns (value, p_lo … p_k)."""
    n = k - lo + 1  # p_lo … p_k
    s_rel = np.arange(k - lo)
    s_abs = s_rel + lo
    gain = np.zeros(n)
    gain[c - lo:] = 1.0
    try:
        return _profile_lp(m, s_rel + 1, s_rel, (s_abs + 1).astype(float), (k - s_abs).astype(float), gain,
                          gammas, beta)
    except RuntimeError as error:
        raise RuntimeError(f"the one-run LP did not solve (m={m}, k={k}, c={c}): {error}") from None


def _profile_lp(m: int, upper: np.ndarray, lower: np.ndarray, upper_weight: np.ndarray, lower_weight: np.ndarray,
               gain: np.ndarray, gammas: np.ndarray, beta: np.ndarray):
    """max gainᵀp over distributions p of a count state meeting, for each γ of ``gammas``,

        Σ_r ( upper_weight_r · p[upper_r] − γ · lower_weight_r · p[lower_r] )₊  ≤  m β(γ),

    plus one free mass outside the states (gain 0, no constraint). Row r pairs "canary j right and the
    others' state σ" (state ``upper_r``, weighted by the right guesses that state can hold) with "j wrong
    and the others' state σ" (state ``lower_r``); the module docstring's LP is the one-count case.
    Returns (a weak-duality upper bound on the maximum (:func:`_dual_bound`), the solver's p).

    Parameters
    ----------
    m : int
        Number of canaries.
    upper, lower : int arrays, shape (r,)
        State indices (0 … n − 1, n = ``gain.size``) of each row's two events.
    upper_weight, lower_weight : float arrays, shape (r,)
        Their weights (counts of right / wrong guesses of that kind in that state).
    gain : float array, shape (n,)
        Objective per state (1 on the rejection region).
    gammas, beta : float arrays, shape (g,)
        Slopes γ and the claim's profile β(γ) (:func:`_profile`).
    """
    n = gain.size
    ns = upper.size
    g = gammas.size
    n_var = n + 1 + g * ns  # p, then the free mass, then u[γ, r]
    # rows: a_r p[upper_r] − γ b_r p[lower_r] − u_{γ,r} ≤ 0, then Σ_r u_{γ,r} ≤ m β(γ)
    row_a = np.arange(g * ns)
    gi = np.repeat(np.arange(g), ns)
    ri = np.tile(np.arange(ns), g)
    rows = np.concatenate([row_a, row_a, row_a, g * ns + gi])
    cols = np.concatenate([upper[ri], lower[ri], n + 1 + row_a, n + 1 + row_a])
    vals = np.concatenate([upper_weight[ri], -gammas[gi] * lower_weight[ri], -np.ones(g * ns), np.ones(g * ns)])
    a_ub = sparse.csr_matrix((vals, (rows, cols)), shape=(g * ns + g, n_var))
    b_ub = np.concatenate([np.zeros(g * ns), m * beta])
    a_eq = sparse.csr_matrix((np.ones(n + 1), (np.zeros(n + 1, dtype=int), np.arange(n + 1))), shape=(1, n_var))
    objective = np.zeros(n_var)
    objective[:n] = -gain
    for method in ("highs", "highs-ipm"):
        res = optimize.linprog(objective, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=(0, None),
                               method=method)
        if res.status == 0:
            return _dual_bound(res, a_ub, b_ub, -objective, n, g, ns), res.x[:n]
    # the LP is feasible (all mass outside the states) and bounded: a failure is numerical
    raise RuntimeError(res.message)


def _dual_bound(res, a_ub, b_ub: np.ndarray, gain: np.ndarray, n: int, g: int, ns: int) -> float:
    """A certified upper bound on the LP's maximum from the solver's duals, by weak duality.

    The primal is max gainᵀx s.t. A x ≤ b, Σ_{j ≤ n} x_j = 1 (p and the free mass), x ≥ 0; for any y ≥ 0
    and w with (Aᵀy)_j + w ≥ gain_j on the first n + 1 columns and (Aᵀy)_j ≥ 0 on the u columns, bᵀy + w
    bounds every feasible value. y is the solver's (sign-corrected, clipped) inequality duals with each
    Σ_s u row's dual raised to the largest of its γ's (making every u column feasible: that column is
    −y_{γ,s} + y_sum(γ)), and w the least value that makes the p columns feasible — whatever the
    solver's tolerance, the bound is valid (a primal value solved only to tolerance can sit *below* the
    optimum: 1.4e-5 below Steinke's attained binomial tail at pure ε = 2, k = 2000, c = 1700). The
    products are rounded up by :data:`_DUAL_ROUNDING` of their absolute sums."""
    y = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0)
    per_gamma = y[: g * ns].reshape(g, ns)
    y[g * ns:] = np.maximum(y[g * ns:], per_gamma.max(axis=1) if ns else 0.0)
    aty = a_ub.T @ y
    abs_aty = abs(a_ub).T @ y
    reduced = gain[: n + 1] - aty[: n + 1] + _DUAL_ROUNDING * abs_aty[: n + 1]
    w = float(np.max(reduced))
    value = float(b_ub @ y) + w
    return value + _DUAL_ROUNDING * (float(np.abs(b_ub) @ y) + abs(w))


def lp_tail_bound(curve: ClaimedCurve, canaries: int, guesses: int, correct: int) -> float:
    """Upper bound q(c) on P[C ≥ c] for any release meeting ``curve`` (module docstring), in [0, 1]:
    a p-value of the claim.

    Parameters
    ----------
    curve : ClaimedCurve
        The claimed trade-off curve (certified upper bound of the TPR, both orders of neighbours).
    canaries : int
        m, the number of canaries (each included w.p. ½).
    guesses : int
        k, the number of guesses (1 ≤ k ≤ m).
    correct : int
        c, the observed number of right guesses (0 ≤ c ≤ k).

    """
    m, k, c = int(canaries), int(guesses), int(correct)
    if c <= 0:
        return 1.0
    from .fdp_one_run import _p_value  # the recursion's bound (a module-level import would be circular)

    gammas = _gammas(curve)
    value, _ = _solve(m, k, c, max(0, c - _window(k)), gammas, _profile(curve, gammas))
    return float(min(1.0, value, _p_value(curve, m, k, c)))


def lp_rejects(curve: ClaimedCurve, canaries: int, guesses: int, correct: int, alpha: float) -> bool:
    """Whether ``correct`` right guesses of ``guesses`` reject ``curve`` at level ``alpha`` (q(c) < α)."""
    return lp_tail_bound(curve, canaries, guesses, correct) < alpha


def lp_least_rejected_count(curve: ClaimedCurve, canaries: int, guesses: int, alpha: float) -> int:
    """Least c that :func:`lp_rejects` at ``alpha`` (``guesses`` + 1 if none): rejection is monotone in c,
    so a data-independent k turns many audits into one threshold (bisection, about log₂ k LPs)."""
    lo, hi = guesses // 2, guesses + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if lp_rejects(curve, canaries, guesses, mid, alpha) else (mid, hi)
    return hi
