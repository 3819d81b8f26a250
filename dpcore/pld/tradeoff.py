"""Certified trade-off curves (f-DP) of an event from its composed grid PLDs.

For a dominating pair (P, Q) with privacy-loss distribution L = log dP/dQ under P (one order of
neighbours, :mod:`dpcore.pld.accountant`), a test that rejects "the output came from Q" on a set S
has false-positive rate α = Q(S) and true-positive rate P(S). The largest TPR at FPR α is

    TPR(α) = inf_{ε ∈ ℝ} (e^ε·α + δ(ε)),     δ(ε) = E_P[(1 − e^{ε−L})_+] = H_{e^ε}(P‖Q),

because α ↦ TPR(α) is concave and δ is its convex conjugate: δ(ε) = sup_α (TPR(α) − e^ε α)
(Dong, Roth, Su 2022, Prop. 2.12; the Neyman–Pearson lemma for the "≤" direction: any S has
P(S) − e^ε Q(S) ≤ δ(ε)). The trade-off function of Dong, Roth and Su is f(α) = 1 − TPR(α).
Every ε ∈ ℝ is allowed, negative ones included (they give the curve at large α).

**The grid PLD** is composed untilted (θ = 0, :func:`~dpcore.pld.accountant.untilted_plds`), so
that its error terms are absolute ℓ1 bounds on P-masses, valid at every ε alike.

**Upper bound (certified).** The grid PLD D dominates the exact pair in the Blackwell sense: its
pessimistic splits make the exact (merged) pair a post-processing of the grid pair, truncation,
upward moves and upward rounding only add P-mass or move loss up — which raises
δ(ε) = E_P[(1 − e^{ε−L})_+] at *every* real ε, as (1 − e^{ε−l})_+ increases in l — and
composition preserves both (Zhu, Dong, Wang 2022, Thm 10). Its stored pmf differs from D's masses
by at most ``err`` in ℓ1, so δ_D(ε) ≤ δ_computed(ε) + err at every ε, and

    TPR_exact(α) ≤ inf_ε (e^ε α + δ_computed(ε)) + err = ROC_computed(α) + err.

**Lower bound (certified).** :func:`~dpcore.pld.lower.interval_deficit` gives, for any interval
I = [a, b], a D_I ≥ 0 with δ_exact(ε) ≥ δ_computed(ε) − (its rounding) − D_I for *every* ε ∈ I:
the Scarf second-order optimistic bound of :mod:`dpcore.pld.lower` (the split moves' Jensen gap,
bounded by Scarf's inequality and the moves' sub-Gaussian tails, plus the error, move, rounding and
cut terms), with its window widened by the half-width of I. Cover ℝ by (−∞, e₀], the intervals
Iₖ = [eₖ, eₖ₊₁] (k < N) and [e_N, ∞). On Iₖ, since δ_exact is non-increasing and e^ε increasing,

    inf_{ε∈Iₖ} (e^ε α + δ_exact(ε)) ≥ max(ROC_computed(α), e^{eₖ} α + δ_computed(eₖ₊₁)) − D_{Iₖ}

(the first: δ_exact ≥ δ_computed − D on Iₖ; the second: the same at eₖ₊₁ with e^ε ≥ e^{eₖ}); on
(−∞, e₀] the infimum is ≥ δ_exact(e₀) ≥ δ_computed(e₀) − D_{I₀}; on [e_N, ∞) it is ≥ e^{e_N} α.
TPR_exact(α) is the least of these infima, so

    TPR_exact(α) ≥ max(α, min(δ_computed(e₀) − D_{I₀}, minₖ [max(ROC_computed(α), e^{eₖ}α + δ_computed(eₖ₊₁)) − D_{Iₖ}], e^{e_N}α))

(TPR ≥ α always: a coin flip achieves it). The deficit is second order in the split widths
(O(V), V the splits' Scarf variance, where a Hoeffding shift is O(√(W·log(1/η)))), so the bracket
closes as the grid is refined. The edges eₖ are grid losses, spaced by the Chebyshev window r of
the Scarf bound (widening by about r costs little) but at most :data:`MAX_INTERVALS` across the
grid, then doubling outwards over :data:`LEFT_REACH` / :data:`RIGHT_REACH` nats beyond it. The
grid h is chosen by :func:`~dpcore.pld.accountant.untilted_plds` for a target deficit
(``settings[0]``).

**The grid curve in floating point.** For grid losses ℓ_j = (start + j)·h with P-masses p_j and
p_∞ at +∞, ROC_grid(β) = min(1_P, min_j e^{ℓ_j}β + δ(ℓ_j)), 1_P = Σp_j + p_∞ (the limit ε → −∞),
and g(j) = e^{ℓ_j}β + δ(ℓ_j) has g(j+1) − g(j) = e^{ℓ_j}(e^h − 1)(β − F_{j+1}), F_j = Σ_{k≥j} p_k
e^{−ℓ_k} the Q-tail: g is unimodal with its minimum at the first j with F_{j+1} ≤ β. The values
δ(ℓ_j) = D_j + p_∞ come from the recurrence D_j = (1 − e^{−h})·A_j + e^{−h}·D_{j+1}, A_j = Σ_{k>j}
p_k (all terms non-negative: D_j = Σ_{k>j} p_k (1 − e^{−(k−j)h})), so every computed D_j, A_j, F_j
is within a relative γ_m = m·u/(1 − m·u), m = 4n + 16, of its exact value (Higham 2002, Lemma 3.1),
and e^{ℓ_j} within (|ℓ_j| + 4)·u; the untilted masses p_j = m̃_j·e^{log_scale} add (2|log_scale| + 4)·u.
The minimum is taken over the three grid points on each side of
the computed crossing: the exact crossing lies among them unless F is flat there to within 2γ_m,
and across such a flat stretch g changes by less than a relative 2γ_m. The upper value is rounded
up and the lower value down by 8γ_m (relative) plus 1e-300, which covers all of the above. Below
the grid, δ(ε) = 1_P − e^ε·F_0 exactly (all mass lies above ε); above it, δ(ε) = p_∞.

Two orders of neighbours (Poisson sampling, add_remove) give two curves; a bound for *every*
attack between neighbours, in either direction, is their pointwise maximum (:class:`TradeoffCurve`
keeps both; the second is the reflection of the first, :class:`ReflectedCurve`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from .._jit import jit
from .._validation import check_positive
from ..events import PrivacyEvent
from .accountant import _parts, number_of_orders, untilted_plds
from .lower import RHOS, interval_deficit, interval_deficits, split_terms
from .pmf import GridPld

__all__ = ["RISK_SETTINGS", "UPPER_SETTINGS", "GridCurve", "ReflectedCurve", "TradeoffCurve", "tradeoff_curve", "check_fpr"]

_U = 2.0**-53
#: (target deficit of the lower bound, longest characteristic-function window) of the curves: the
#: grid whose splits' Scarf variance keeps the optimistic bound within about this much of the
#: upper one at any FPR (:func:`~dpcore.pld.accountant.untilted_plds`); chosen by
#: benchmarks/bench_risk.py — the DP-SGD gap (q = 0.01, σ = 1.1, T = 10⁴) is 4.4e-4 at every
#: FPR ≥ 1e-6 (goal ≤ 1e-3) at 1.5× one ``auto`` ε evaluation's CPU time (goal ≤ 2×; 2e-4 gives a
#: 1.7e-4 gap at 2.5×), and the Gaussian upper bounds are within 1e-8 of exact
RISK_SETTINGS = (5e-4, 1 << 20)
#: settings of curves read for their upper bound only (calibration to a risk target, the claimed
#: curves of the f-DP audits): a coarser grid, the upper bound within ~6e-5 of the finest one on
#: the DP-SGD run above at about half the cost (bench_risk.py)
UPPER_SETTINGS = (1e-3, 1 << 20)
#: most intervals of the lower bound's cover across the grid (:class:`GridCurve`)
MAX_INTERVALS = 2048
#: the cover's outer intervals reach this far (nats) below and above the grid: below, e^ε·F_0 is
#: then negligible against δ; above, e^ε·α ≥ 1 for every α ≥ e^{−RIGHT_REACH}
LEFT_REACH = 60.0
RIGHT_REACH = 40.0
_WINDOW = 3
#: wide-split failure probability allowed in the lower bound (absolute, charged in full)
FAIL_PROBABILITY = 1e-15


@jit
def _delta_at_grid(pmf, decay):  # pragma: no cover - compiled
    """D_j = Σ_{k>j} p_k (1 − e^{−(k−j)h}) and A_j = Σ_{k>j} p_k by the non-negative recurrence
    D_j = (1 − e^{−h})·A_j + e^{−h}·D_{j+1} (``decay`` = e^{−h})."""
    n = pmf.size
    d = np.zeros(n)
    a = np.zeros(n)
    rise = 1.0 - decay
    for j in range(n - 2, -1, -1):
        a[j] = a[j + 1] + pmf[j + 1]
        d[j] = rise * a[j] + decay * d[j + 1]
    return d, a


def _gamma(m: int) -> float:
    return m * _U / (1.0 - m * _U)


class GridCurve:
    """The ROC of one untilted grid PLD with certified bounds on the exact pair's TPR (module docstring).

    Parameters
    ----------
    pld : GridPld
        A composed grid PLD (one order of neighbours) with tilt θ = 0.
    """

    def __init__(self, pld: GridPld):
        if pld.theta != 0.0:
            raise ValueError(f"GridCurve needs an untilted grid PLD (theta = 0); got theta={pld.theta!r}")
        self.pld = pld
        scale = pld.error_scale(0.0)  # e^{log_scale}: tilted (normalised) units → P-masses
        pmf = np.asarray(pld.pmf, dtype=np.float64) * scale
        n = pmf.size
        self.ell = (pld.start + np.arange(n)) * pld.h
        d, a = _delta_at_grid(pmf, math.exp(-pld.h))
        self.delta = d + pld.inf_mass  # δ(ℓ_j) of the computed pmf (before the relative rounding)
        self.p_after = a + pld.inf_mass  # T_{j+1} = P-mass of {L > ℓ_j}
        with np.errstate(divide="ignore", over="ignore"):
            q = np.exp(np.log(pmf) - self.ell)
        self.q_tail = np.cumsum(q[::-1])[::-1]  # F_j: Q-mass of {L ≥ ℓ_j}
        self.total = float(np.sum(pmf)) + pld.inf_mass
        self.err = pld.err * scale * (1.0 + 4.0 * _U)  # ℓ1 error of the P-masses
        self.rho = (_gamma(4 * n + 16) + (float(np.max(np.abs(self.ell))) + 4.0) * _U
                    + (2.0 * abs(pld.log_scale) + 4.0) * _U) if n else 0.0
        self._cover: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray, float, float]] = None

    def _window(self, cross: np.ndarray) -> np.ndarray:
        offsets = np.arange(-_WINDOW, _WINDOW + 1)[None, :]
        return np.clip(cross[:, None] + offsets, 0, self.ell.size - 1)

    def _grid_roc(self, beta: np.ndarray, rounding: int) -> np.ndarray:
        """ROC_computed(β) (any shape) rounded up (``rounding`` = +1) or down (−1)."""
        beta = np.asarray(beta, dtype=np.float64)
        # g is minimal at the first j with F_{j+1} ≤ β; F decreases in j
        j = self._window(np.searchsorted(-self.q_tail, -beta.ravel(), side="left") - 1)
        with np.errstate(over="ignore", invalid="ignore"):
            g = np.exp(self.ell[j]) * beta.ravel()[:, None] + self.delta[j]
        best = np.minimum(np.min(np.where(np.isnan(g), math.inf, g), axis=1), self.total).reshape(beta.shape)
        slack = 8.0 * self.rho
        if rounding > 0:
            return best * (1.0 + slack) + 1e-300
        return np.maximum(best * (1.0 - slack) - 1e-300, 0.0)

    def _grid_inverse(self, v: np.ndarray, rounding: int) -> np.ndarray:
        """ROC_computed⁻¹(v) = inf{β : ROC_computed(β) ≥ v} = max(0, max_j (v − δ(ℓ_j))·e^{−ℓ_j}) (+inf
        where v exceeds the total mass), rounded up (+1) or down (−1). The terms are unimodal in j
        with their maximum at the first j with P(L > ℓ_j) ≤ v (their difference is
        (v − P(L > ℓ_j))·e^{−ℓ_j}(e^{−h} − 1)); the window around it is taken, and the absolute
        error of each term — the cancellation in v − δ, plus the drift across a stretch where the
        P-tail is within its rounding of v — is bounded by 8ρ(δ + v)e^{−ℓ_j}."""
        v = np.asarray(v, dtype=np.float64)
        flat = v.ravel()
        j = self._window(np.searchsorted(-self.p_after, -flat, side="left"))
        with np.errstate(over="ignore", invalid="ignore"):
            scale = np.exp(-self.ell[j])
            terms = (flat[:, None] - self.delta[j]) * scale
            slack = 8.0 * self.rho * (self.delta[j] + np.abs(flat[:, None])) * scale + 1e-300
        terms = terms + rounding * slack
        best = np.max(np.where(np.isnan(terms), -math.inf, terms), axis=1)
        best = np.where(flat > self.total * (1.0 - 4.0 * self.rho if rounding > 0 else 1.0 + 4.0 * self.rho),
                        math.inf, np.maximum(best, 0.0))
        return best.reshape(v.shape)

    def _edges(self) -> Tuple[np.ndarray, int, int, int]:
        """The cover's edges e₀ < … < e_N as grid indices (module docstring), and (i, k, s): edges
        i … i + k are the core, k intervals of s grid steps from index 0 across the grid, s the
        Scarf bound's Chebyshev window r (at least one grid step, at most :data:`MAX_INTERVALS`
        intervals); beyond them the intervals double outwards (indices below 0 and above n − 1 are
        grid losses without mass)."""
        p, n = self.pld, self.ell.size
        _, w, _ = split_terms(p, FAIL_PROBABILITY)
        r = RHOS[0] * (math.sqrt(w / 4.0) + w / 8.0) if math.isfinite(w) else 0.0
        step = max(1, int(r / p.h), -(-n // MAX_INTERVALS))
        count = max(1, -(-(n - 1) // step))
        left, right = [-step], [(count + 1) * step]
        while -left[-1] * p.h < LEFT_REACH:
            left.append(2 * left[-1])
        while (right[-1] - count * step) * p.h < RIGHT_REACH:
            right.append(count * step + 2 * (right[-1] - count * step))
        edges = np.concatenate([np.array(left[::-1], dtype=np.int64), np.arange(count + 1, dtype=np.int64) * step,
                                np.array(right, dtype=np.int64)])
        return edges, len(left), count, step

    def _delta_down(self, j: np.ndarray) -> np.ndarray:
        """δ_computed at the grid indices j (any integers), rounded down: the recurrence's values on
        the grid, 1_P − e^{ℓ_j}·F_0 below it, p_∞ above it."""
        n = self.ell.size
        ell = (self.pld.start + j) * self.pld.h
        inside = np.clip(j, 0, n - 1)
        with np.errstate(over="ignore", under="ignore"):
            below = self.total * (1.0 - 8.0 * self.rho) - np.exp(ell) * self.q_tail[0] * (1.0 + 8.0 * self.rho
                                                                                           + 4.0 * _U * np.abs(ell))
        vals = np.where(j < 0, below, np.where(j >= n, self.pld.inf_mass, self.delta[inside] * (1.0 - 8.0 * self.rho)))
        return np.maximum(vals - 1e-300, 0.0)

    def _lower_terms(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
        """(e^{eₖ} rounded down, δ_computed(eₖ₊₁) rounded down, D_{Iₖ}) for k < N, e^{e_N} rounded
        down, and the left term δ_computed(e₀) − D_{I₀} (module docstring); computed once per curve."""
        if self._cover is None:
            p = self.pld
            edges, first, count, step = self._edges()
            loss = (p.start + edges) * p.h
            deficits = np.empty(edges.size - 1)
            deficits[first:first + count] = interval_deficits(p, 0, step, count, FAIL_PROBABILITY)
            for k in [*range(first), *range(first + count, edges.size - 1)]:  # the outer intervals
                a, b = loss[k], loss[k + 1]
                deficits[k] = interval_deficit(p, 0.5 * (a + b), 0.5 * (b - a), FAIL_PROBABILITY)
            with np.errstate(over="ignore"):
                growth = np.exp(loss) * (1.0 - (np.abs(loss) + 4.0) * _U)
            at_first = float(self._delta_down(edges[:1])[0])
            self._cover = (growth[:-1], self._delta_down(edges[1:]), deficits, float(growth[-1]),
                           (at_first - deficits[0]) - 4.0 * _U * (at_first + deficits[0]))
        return self._cover

    def tpr_upper(self, fpr: np.ndarray) -> np.ndarray:
        """Certified upper bound on the exact pair's largest TPR at each FPR (in [0, 1])."""
        fpr = np.asarray(fpr, dtype=np.float64)
        if self.ell.size == 0:
            return np.minimum(1.0, np.maximum(fpr, self.pld.inf_mass + self.err))
        return np.minimum(1.0, self._grid_roc(fpr, +1) + self.err)

    def tpr_lower(self, fpr: np.ndarray) -> np.ndarray:
        """Certified lower bound on the exact pair's largest TPR at each FPR (in [0, 1])."""
        fpr = np.asarray(fpr, dtype=np.float64)
        if self.ell.size == 0:
            return fpr.copy()
        growth, after, deficits, last, left = self._lower_terms()
        flat = fpr.ravel()
        roc = self._grid_roc(flat, -1)
        out = np.empty(flat.size)
        for lo in range(0, flat.size, 256):  # (FPRs × intervals) in chunks
            a, r = flat[lo:lo + 256], roc[lo:lo + 256]
            with np.errstate(over="ignore", invalid="ignore"):
                mono = (growth[None, :] * a[:, None] + after[None, :]) * (1.0 - 4.0 * _U)
                best = np.maximum(r[:, None], mono)
                inner = np.min(best - deficits[None, :] - 4.0 * _U * (best + deficits[None, :]), axis=1)
                out[lo:lo + 256] = np.minimum(np.minimum(inner, last * a * (1.0 - 2.0 * _U)), left)
        return np.clip(np.maximum(out, flat), 0.0, 1.0).reshape(fpr.shape)

    def fpr_reaching_upper(self, tpr: np.ndarray) -> np.ndarray:
        """A lower bound of inf{α : TPR_exact(α) ≥ y} for each y: TPR ≤ ROC_computed + err, so no α
        below ROC_computed⁻¹(y − err) reaches y (capped at 1, where every TPR is 1)."""
        y = np.asarray(tpr, dtype=np.float64)
        if self.ell.size == 0:
            return np.where(y <= self.pld.inf_mass + self.err, 0.0, y)
        v = (y - self.err) * (1.0 - 4.0 * _U)
        return np.minimum(1.0, self._grid_inverse(v, -1))

    def fpr_reaching_lower(self, tpr: np.ndarray) -> np.ndarray:
        """An upper bound of inf{α : TPR_exact(α) ≥ y} for each y: the least α whose
        :meth:`tpr_lower` is ≥ y, rounded up — α = y (a coin flip), or, when the left term is ≥ y,
        the largest over the intervals Iₖ of min(ROC_computed⁻¹(y + D_{Iₖ}), (y + D_{Iₖ} −
        δ_computed(eₖ₊₁))/e^{eₖ}) and y/e^{e_N} (each term of the lower bound is non-decreasing in α)."""
        y = np.asarray(tpr, dtype=np.float64)
        if self.ell.size == 0:
            return y.copy()
        growth, after, deficits, last, left = self._lower_terms()
        flat = y.ravel()
        out = flat.copy()
        floor = self._grid_inverse((flat + float(np.min(deficits))) * (1.0 + 4.0 * _U), +1)  # ≤ every ROC term
        for lo in range(0, flat.size, 256):
            v = flat[lo:lo + 256]
            need = (v[:, None] + deficits[None, :]) * (1.0 + 4.0 * _U)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                excess = need - after[None, :] + 2.0 * _U * (need + after[None, :])
                by_mono = np.maximum(excess, 0.0) / growth[None, :] * (1.0 + 4.0 * _U)
                # max_k min(ROC⁻¹(need_k), by_mono_k): at least base; only k with by_mono_k > base can raise it
                base = np.max(np.minimum(floor[lo:lo + 256, None], by_mono), axis=1)
                rows, cols = np.nonzero(by_mono > base[:, None])
                reach = base.copy()
                if rows.size:
                    terms = np.minimum(self._grid_inverse(need[rows, cols], +1), by_mono[rows, cols])
                    np.maximum.at(reach, rows, terms)
                reach = np.maximum(reach, v / last * (1.0 + 4.0 * _U))
            reach = np.where(left >= v, reach, math.inf)
            out[lo:lo + 256] = np.minimum(reach, v)
        return np.minimum(out, 1.0).reshape(y.shape)


def check_fpr(name: str, fpr: object) -> np.ndarray:
    """False-positive rates: a non-empty 1-D array of reals in [0, 1] (numbers only: a string or a
    bool is refused, not converted)."""
    try:
        raw = np.atleast_1d(np.asarray(fpr, dtype=object))
        numbers = all(isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))
                      for x in raw.ravel())
        arr = raw.astype(np.float64) if numbers else None
    except (TypeError, ValueError):
        arr = None
    if arr is None:
        raise ValueError(f"{name} must be a non-empty sequence of false-positive rates (real numbers) in [0, 1]; "
                         f"got {fpr!r}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of false-positive rates in [0, 1]; got {fpr!r}")
    if np.isnan(arr).any() or np.any(arr < 0.0) or np.any(arr > 1.0):
        raise ValueError(f"{name} must contain false-positive rates in [0, 1]; got {fpr!r}")
    return arr


class ReflectedCurve:
    """Bounds for the other order of neighbours from a curve of one order.

    If (P, Q) dominates (M(D′), M(D)) then (Q, P) dominates (M(D), M(D′)): hockey-stick
    dominance at every α ≥ 0 is trade-off dominance T(M(D′), M(D)) ≥ T(P, Q), and inverting both
    (T(Y, X) = T(X, Y)⁻¹, the inverse of a trade-off function; Dong, Roth, Su 2022, §2) keeps the
    order. The ROC of the swapped pair is the reflection (α, TPR) ↦ (1 − TPR, 1 − α): TPR′(α) = 1 − TPR⁻¹(1 − α) with
    TPR⁻¹(y) = inf{x : TPR(x) ≥ y}, bounded on both sides by :meth:`GridCurve.fpr_reaching_upper`
    and :meth:`GridCurve.fpr_reaching_lower`; 1 − α and 1 − x are rounded towards the safe side.

    Parameters
    ----------
    base : GridCurve
        Bounds of one order.
    """

    def __init__(self, base: GridCurve):
        self.base = base

    def tpr_upper(self, fpr: np.ndarray) -> np.ndarray:
        """Certified upper bound of the reflected order's TPR at each FPR."""
        fpr = np.asarray(fpr, dtype=np.float64)
        y = np.nextafter(1.0 - fpr, -np.inf)  # ≤ 1 − α: a smaller inverse, a larger (safe) bound
        x = self.base.fpr_reaching_upper(np.maximum(y, 0.0))
        return np.clip(np.nextafter(1.0 - x, np.inf), fpr, 1.0)

    def tpr_lower(self, fpr: np.ndarray) -> np.ndarray:
        """Certified lower bound of the reflected order's TPR at each FPR."""
        fpr = np.asarray(fpr, dtype=np.float64)
        y = np.minimum(1.0, np.nextafter(1.0 - fpr, np.inf))
        x = self.base.fpr_reaching_lower(y)
        return np.clip(np.nextafter(1.0 - x, -np.inf), fpr, 1.0)


@dataclass(frozen=True)
class TradeoffCurve:
    """Certified bounds on the largest TPR of any attack at each FPR, for every order of neighbours.

    Attributes
    ----------
    curves : tuple of GridCurve or ReflectedCurve
        One per order of neighbours. Index 0 is the composed PLD's first order (under add_remove
        Poisson sampling: D′ with the record against D without it); with two orders, index 1 is
        its reflection (:class:`ReflectedCurve`, the other direction). A symmetric pair has one.
    relation : str
        Neighbouring relation the bounds hold for.
    discretization : float
        Leaf loss-grid spacing h (nats).
    """

    curves: tuple
    relation: str
    discretization: float

    def tpr_upper(self, fpr: object) -> np.ndarray:
        """Upper bound, for attacks in either direction (maximum over orders)."""
        fpr = check_fpr("fpr", fpr)
        if not self.curves:
            return fpr.copy()
        return np.max([c.tpr_upper(fpr) for c in self.curves], axis=0)

    def tpr_lower(self, fpr: object) -> np.ndarray:
        """Lower bound on the best attack's TPR in either direction (maximum over orders)."""
        fpr = check_fpr("fpr", fpr)
        if not self.curves:
            return fpr.copy()
        return np.max([c.tpr_lower(fpr) for c in self.curves], axis=0)


def tradeoff_curve(
    event: PrivacyEvent,
    *,
    discretization: Optional[float] = None,
    tail_mass: float = 1e-12,
    settings: Tuple[float, int] = RISK_SETTINGS,
) -> TradeoffCurve:
    """Compose ``event``'s dominating pairs (first order) once, untilted, and return the certified curve.

    Parameters
    ----------
    event : PrivacyEvent
        Any event the PLD accountant supports (:mod:`dpcore.pld.leaves`).
    discretization : float, optional
        Leaf loss-grid spacing h (nats); default from ``settings``.
    tail_mass : float
        Total P-mass the leaf cuts may move and the aliasing budget of each composition (> 0);
        both enter the lower bound.
    settings : (float, int)
        (target deficit of the lower bound, in TPR; longest characteristic-function window), see
        :func:`~dpcore.pld.accountant.untilted_plds` (default :data:`RISK_SETTINGS`).

    Returns
    -------
    TradeoffCurve
        With two orders of neighbours, the second is the reflection of the first
        (:class:`ReflectedCurve`): valid for any event, and exact for every pair dpcore builds
        (the add order of a Poisson-subsampled leaf is the swap of its remove order).
    """
    tail_mass = check_positive("tail_mass", tail_mass)
    gap, points = settings
    plds, h = untilted_plds(event, gap=gap, tail_mass=tail_mass, max_points=points, discretization=discretization,
                            orders=[0])
    curves: list = [GridCurve(p) for p in plds]
    if curves and number_of_orders(_parts(event)) == 2:
        curves.append(ReflectedCurve(curves[0]))
    return TradeoffCurve(tuple(curves), event.relation, h)
