"""Exact joint test of one threshold's error pair against a trade-off curve, and its lower bound.

A threshold test "guess D′ iff score ≥ t", fixed before the evaluation trials are looked at, makes
X ~ Bin(n₀, a) false positives on D and Y ~ Bin(n₁, c) true positives on D′ (independent). A
privacy claim with parameter θ bounds the pair: c ≤ c_θ(a), with c_θ non-decreasing in a and in θ:

* μ-GDP (Dong, Roth, Su 2019, Def. 2.6): ``c_μ(a) = Φ(μ + Φ⁻¹(a))`` (TPR ≤ 1 − G_μ(FPR));
* (ε, δ)-DP (Kairouz, Oh, Viswanath 2015, Thm. 2.1): ``c_ε(a) = min(1, e^ε a + δ,
  1 − e^{−ε}(1 − δ − a))``.

The statistic is the plug-in parameter T(x, y) (``Φ⁻¹(r_y) − Φ⁻¹(r_x)`` for GDP,
``ln(r_y − δ) − ln(r_x)`` for DP, with r_x = (x + ½)/(n₀ + 1), r_y = (y + ½)/(n₁ + 1)),
increasing in y and decreasing in x. The p-value of H₀(θ) is Berger & Boos's (1994, JASA 89,
"P values maximised over a confidence set for the nuisance parameter")

    p(θ) = γ + sup_{a ∈ C_γ} P_{a, c_θ(a)}[T ≥ t_obs],

where C_γ is the two-sided Clopper–Pearson interval of a at level γ from x. Under H₀ the tail is
largest at c = c_θ(a) (T increases with Y), so P[p(θ) ≤ α] ≤ α exactly, for any sample size:
no normal approximation. The supremum is bounded rigorously: on an interval [a_i, a_{i+1}],
P_a[T ≥ t] ≤ Σ_x Bin(x; n₀, a_i) · P[Bin(n₁, c_θ(a_{i+1})) ≥ y_min(x)] (X grows stochastically
with a and P[Y ≥ y_min(x)] falls with x), and intervals whose bound is undecided are bisected.

Compared with bounding FPR and FNR separately by Clopper–Pearson at α/2 each (a union bound, the
rectangle region), the joint region is about √2 narrower in the statistic: at 10⁵ trials the
Gaussian (ε = 1, δ = 10⁻⁵) audit's ε_lb rises from 0.87–0.97 to ≥ 0.9 (GDP) and from
0.47–0.56 to ≥ 0.5 (DP) on every seed 0–9 (benchmarks/RESULTS.md, "Audit estimators").

The lower bound is θ_lb = sup{θ : p(θ) ≤ α}, found by bisection (p is non-decreasing in θ), and
returned as the lower end of the final bracket: P[θ_lb > θ_true] ≤ α.
"""

from __future__ import annotations

import math
from typing import Callable, Tuple

import numpy as np
from scipy import special, stats

from .clopper_pearson import clopper_pearson_lower, clopper_pearson_upper

__all__ = ["JointTest", "gdp_tpr_bound", "dp_tpr_bound", "NUISANCE_SHARE"]

#: Share γ/α of the error budget spent on the nuisance confidence set C_γ (Berger–Boos).
NUISANCE_SHARE = 0.05
_GRID = 32  # initial intervals over C_γ
_MAX_SPLITS = 10  # bisections of an undecided interval before counting it against rejection
_MAX_INTERVALS = 128  # open intervals beyond which the supremum counts as undecided (no rejection)
_ROUNDING = 1e-10  # added to every computed tail: a bound on the float error of the sums
_TAIL = 1e-12  # probability mass of X left out of the sums (added back as a bound)
_BISECT_TOL = 1e-5  # absolute tolerance of θ_lb
_MAX_THETA = 512.0  # largest θ tried (e^θ of the DP family stays finite)


def gdp_tpr_bound(mu: float) -> Callable[[np.ndarray], np.ndarray]:
    """c_μ(a) = Φ(μ + Φ⁻¹(a)): the largest TPR at FPR a under μ-GDP."""
    return lambda a: special.ndtr(mu + special.ndtri(a))


def dp_tpr_bound(epsilon: float, delta: float) -> Callable[[np.ndarray], np.ndarray]:
    """c_ε(a) = min(1, e^ε a + δ, 1 − e^{−ε}(1 − δ − a)): the largest TPR at FPR a under (ε, δ)-DP."""
    up, down = math.exp(epsilon), math.exp(-epsilon)
    return lambda a: np.minimum(1.0, np.minimum(up * a + delta, 1.0 - down * (1.0 - delta - a)))


def _log_choose(n: int, k: np.ndarray) -> np.ndarray:
    return special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)


def _rate(k, n):
    return (np.asarray(k, dtype=np.float64) + 0.5) / (n + 1.0)


class JointTest:
    """The exact test above for one observed pair (x false positives, y true positives).

    Parameters
    ----------
    x, n0 : int
        False positives among the n₀ evaluation runs on D.
    y, n1 : int
        True positives among the n₁ evaluation runs on D′.
    kind : str
        ``"gdp"`` or ``"dp"`` (the statistic and the trade-off family).
    delta : float
        δ of the DP family (ignored for GDP).
    gamma : float
        Level of the nuisance confidence set, in (0, α).
    """

    def __init__(self, x: int, n0: int, y: int, n1: int, kind: str, delta: float, gamma: float):
        self.n0, self.n1, self.kind, self.delta, self.gamma = int(n0), int(n1), kind, float(delta), float(gamma)
        self.t_obs = float(self.statistic(x, y))
        lo = float(clopper_pearson_lower(x, n0, gamma / 2))  # two-sided level-γ interval for the FPR
        hi = float(clopper_pearson_upper(x, n0, gamma / 2))
        self.a_range = (lo, hi)
        xl = int(max(0.0, stats.binom.ppf(_TAIL, n0, lo) - 1))
        xh = int(min(float(n0), stats.binom.isf(_TAIL, n0, hi) + 1))
        self.xs = np.arange(xl, xh + 1)
        self.y_min = self._y_min(self.xs) if math.isfinite(self.t_obs) else None
        if self.y_min is not None:
            self._k_lo = int(self.y_min.min())
            self._k_hi = int(min(self.y_min.max(), n1))
            ks = np.arange(self._k_lo, self._k_hi + 1)
            self._log_choose_x = _log_choose(n0, self.xs)
            self._log_choose_y = _log_choose(n1, ks)

    def statistic(self, x, y) -> np.ndarray:
        """T(x, y): plug-in μ (GDP) or ε (DP); −inf where the DP ratio is undefined."""
        rx, ry = _rate(x, self.n0), _rate(y, self.n1)
        if self.kind == "gdp":
            return special.ndtri(ry) - special.ndtri(rx)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(ry > self.delta, np.log(ry - self.delta) - np.log(rx), -np.inf)

    def _y_min(self, xs: np.ndarray) -> np.ndarray:
        """Least y with T(x, y) ≥ t_obs, for each x (inverted, then corrected by one evaluation)."""
        rx = _rate(xs, self.n0)
        if self.kind == "gdp":
            r = special.ndtr(self.t_obs + special.ndtri(rx))
        else:
            r = self.delta + math.exp(self.t_obs) * rx
        y = np.clip(np.ceil((self.n1 + 1.0) * r - 0.5), 0, self.n1 + 1)
        lower_ok = (y > 0) & (self.statistic(xs, np.maximum(y - 1, 0)) >= self.t_obs)
        return y - lower_ok  # never larger than the true least y: the tail is never underestimated

    def _tail(self, a: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Σ_x Bin(x; n₀, a)·P[Bin(n₁, c) ≥ y_min(x)] + (mass of X outside the sum), per (a, c).

        Binomial masses from log-gamma terms; the Y tails as reverse cumulative sums over the range
        of y_min plus one exact upper tail; :data:`_ROUNDING` is added for the float sums.
        """
        n0, n1, xs = self.n0, self.n1, self.xs
        log_px = self._log_choose_x[None, :] + special.xlogy(xs, a[:, None]) + special.xlog1py(n0 - xs, -a[:, None])
        ks = np.arange(self._k_lo, self._k_hi + 1)
        log_py = self._log_choose_y[None, :] + special.xlogy(ks, c[:, None]) + special.xlog1py(n1 - ks, -c[:, None])
        above = special.bdtrc(min(self._k_hi, n1), n1, c) if self._k_hi < n1 else np.zeros_like(c)
        tail_y = np.cumsum(np.exp(log_py)[:, ::-1], axis=1)[:, ::-1] + above[:, None]  # P[Y ≥ k], k ∈ ks
        tail_y = np.concatenate([tail_y, np.zeros((c.size, 1))], axis=1)  # k = n₁ + 1: impossible
        idx = np.clip(self.y_min, self._k_lo, self._k_hi + 1).astype(np.int64) - self._k_lo
        total = (np.exp(log_px) * tail_y[:, idx]).sum(axis=1)
        outside = special.bdtrc(xs[-1], n0, a)
        if xs[0] > 0:
            outside = outside + special.bdtr(xs[0] - 1, n0, a)
        return np.minimum(1.0, total + outside + _ROUNDING)

    def sup_tail(self, bound: Callable[[np.ndarray], np.ndarray], level: float = math.inf) -> Tuple[float, float]:
        """(upper, attained) bounds of sup_{a ∈ C_γ} P_{a, bound(a)}[T ≥ t_obs].

        Refines until the upper bound is within 1e-3 (relative) of a value attained at a grid
        point, or, when ``level`` is given, until the comparison with ``level`` is decided.
        """
        if self.y_min is None:
            return 1.0, 1.0
        edges = np.linspace(*self.a_range, _GRID + 1)
        left, right = edges[:-1], edges[1:]
        points = edges
        attained, closed = 0.0, 0.0  # best value at a grid point; largest bound of settled intervals
        for _ in range(_MAX_SPLITS + 1):
            upper = self._tail(left, bound(right))
            attained = max(attained, float(self._tail(points, bound(points)).max()))
            top = max(closed, float(upper.max()))
            if attained > level or (math.isfinite(level) and top <= level) or top <= attained * (1 + 1e-3):
                break
            open_ = upper > max(attained * (1 + 1e-3), level if math.isfinite(level) else 0.0)
            if 2 * open_.sum() > _MAX_INTERVALS:
                break  # undecided: ``top`` is still a valid (if loose) upper bound
            closed = max(closed, float(upper[~open_].max(initial=0.0)))
            mid = points = 0.5 * (left[open_] + right[open_])
            left, right = np.concatenate([left[open_], mid]), np.concatenate([mid, right[open_]])
        return top, attained

    def p_value(self, bound: Callable[[np.ndarray], np.ndarray]) -> float:
        """Berger–Boos p-value γ + sup_a P[T ≥ t_obs] (an upper bound of it), capped at 1."""
        return min(1.0, self.gamma + self.sup_tail(bound)[0])

    def rejects(self, bound: Callable[[np.ndarray], np.ndarray], alpha: float) -> bool:
        """True when p(θ) ≤ α is certain."""
        level = alpha - self.gamma
        return self.y_min is not None and self.sup_tail(bound, level)[0] <= level

    def lower_bound(self, family: Callable[[float], Callable[[np.ndarray], np.ndarray]], alpha: float) -> float:
        """θ_lb = sup{θ ≥ 0 : H₀(θ) rejected at level α} (0 if H₀(0) is not), lower end of the bracket."""
        if not (self.t_obs > 0 and self.rejects(family(0.0), alpha)):
            return 0.0
        lo, hi = 0.0, self.t_obs
        while self.rejects(family(hi), alpha):
            lo, hi = hi, 2.0 * hi
            if hi > _MAX_THETA:  # beyond any parameter a finite audit can resolve: keep the proven lo
                return lo
        while hi - lo > _BISECT_TOL:
            mid = 0.5 * (lo + hi)
            if self.rejects(family(mid), alpha):
                lo = mid
            else:
                hi = mid
        return lo
