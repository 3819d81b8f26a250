"""Certified trade-off curves (f-DP) of an event from its composed grid PLDs.

For a dominating pair (P, Q) with privacy-loss distribution L = log dP/dQ under P (one order of
neighbours, :mod:`dpcore.pld.accountant`), a test that rejects "the output came from Q" on a set S
has false-positive rate α = Q(S) and true-positive rate P(S). The largest TPR at FPR α is

    TPR(α) = inf_{ε ∈ ℝ} (e^ε·α + δ(ε)),     δ(ε) = E_P[(1 − e^{ε−L})_+] = H_{e^ε}(P‖Q),

because α ↦ TPR(α) is concave and δ is its convex conjugate: δ(ε) = sup_α (TPR(α) − e^ε α)
(Dong, Roth, Su 2022, Prop. 2.12; the Neyman–Pearson lemma for the "≤" direction: any S has
P(S) − e^ε Q(S) ≤ δ(ε)). The trade-off function of Dong, Roth and Su is f(α) = 1 − TPR(α).
Every ε ∈ ℝ is allowed, negative ones included (they give the curve at large α).

**Upper bound (certified).** The grid PLD of :func:`~dpcore.pld.accountant.composed_plds`
dominates the exact pair in the Blackwell sense: its pessimistic splits make the exact (merged)
pair a post-processing of the grid pair, truncation and upward rounding only move loss up — which
raises δ(ε) = E_P[(1 − e^{ε−L})_+] at *every* real ε, as (1 − e^{ε−l})_+ increases in l — and
composition preserves both (Zhu, Dong, Wang 2022, Thm 10). Its stored pmf differs from the exact
grid pmf by at most ``err`` in ℓ1, so δ_grid(ε) ≤ δ_computed(ε) + err at every ε, and

    TPR_exact(α) ≤ inf_ε (e^ε α + δ_computed(ε)) + err = ROC_computed(α) + err.

**Lower bound (certified).** Each pessimistic split moves a loss by D with E_P[e^{−D}] = 1 within a
window of width w, so the moves sum to more than c = Σw²/8 + sqrt(Σw²·ln(1/η)/2) with probability
≤ η (Azuma–Hoeffding; with wide tail bins, except on an event of probability φ,
:meth:`GridPld._shift`). Coupling the exact (merged) loss with the grid loss gives, at every real ε,
δ_exact(ε) ≥ δ_grid(ε + c) − K with K = η + φ + err + bias + moved + edge (the terms of
:meth:`GridPld.delta_bounds`). Taking the infimum over ε on both sides,

    TPR_exact(α) ≥ inf_ε (e^ε α + δ_grid(ε + c)) − K = ROC_grid(α·e^{−c}) − K,

a shift of the grid curve along the FPR axis (substitute ε′ = ε + c). Every η gives a valid bound;
the best of :data:`ETAS` is kept, and TPR ≥ α always (a coin flip achieves it).

**The grid curve in floating point.** For grid losses ℓ_j = (start + j)·h with P-masses p_j and
p_∞ at +∞, ROC_grid(β) = min(1_P, min_j e^{ℓ_j}β + δ(ℓ_j)), 1_P = Σp_j + p_∞ (the limit ε → −∞),
and g(j) = e^{ℓ_j}β + δ(ℓ_j) has g(j+1) − g(j) = e^{ℓ_j}(e^h − 1)(β − F_{j+1}), F_j = Σ_{k≥j} p_k
e^{−ℓ_k} the Q-tail: g is unimodal with its minimum at the first j with F_{j+1} ≤ β. The values
δ(ℓ_j) = D_j + p_∞ come from the recurrence D_j = (1 − e^{−h})·A_j + e^{−h}·D_{j+1}, A_j = Σ_{k>j}
p_k (all terms non-negative: D_j = Σ_{k>j} p_k (1 − e^{−(k−j)h})), so every computed D_j, A_j, F_j
is within a relative γ_m = m·u/(1 − m·u), m = 4n + 16, of its exact value (Higham 2002, Lemma 3.1),
and e^{ℓ_j} within (|ℓ_j| + 4)·u. The minimum is taken over the three grid points on each side of
the computed crossing: the exact crossing lies among them unless F is flat there to within 2γ_m,
and across such a flat stretch g changes by less than a relative 2γ_m. The upper value is rounded
up and the lower value down by 8γ_m (relative) plus 1e-300, which covers all of the above.

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
from .accountant import _parts, composed_plds, number_of_orders
from .pmf import GridPld

__all__ = ["ETAS", "RISK_SETTINGS", "GridCurve", "ReflectedCurve", "TradeoffCurve", "tradeoff_curve", "check_fpr"]

_U = 2.0**-53
#: failure probabilities η of the Hoeffding shift tried for the lower bound (each gives a valid
#: bound; the largest lower value is kept)
ETAS = (1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 1e-6, 1e-8, 1e-10)
#: (leaf points per loss standard deviation, max bulk, extended uses) of the curves: 8× the
#: accountant's leaf resolution (the lower bound's Hoeffding shift scales with the grid width,
#: the upper bound hardly depends on it) and float64 FFTs only (their error bound, ~1e-8 for
#: DP-SGD, is far below the TPR gap); chosen by benchmarks/bench_risk.py — the least resolution
#: whose DP-SGD gap (q = 0.01, σ = 1.1, T = 10⁴) is ≤ 1e-3 at every FPR ≥ 1e-6
RISK_SETTINGS = (1536, 32768, 1 << 30)
_WINDOW = 3


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
    """The ROC of one grid PLD with certified bounds on the exact pair's TPR (module docstring).

    Parameters
    ----------
    pld : GridPld
        A composed grid PLD (one order of neighbours).
    """

    def __init__(self, pld: GridPld):
        pmf = np.asarray(pld.pmf, dtype=np.float64)
        n = pmf.size
        self.pld = pld
        self.ell = (pld.start + np.arange(n)) * pld.h
        d, a = _delta_at_grid(pmf, math.exp(-pld.h))
        self.delta = d + pld.inf_mass  # δ(ℓ_j) of the computed pmf (before the relative rounding)
        self.p_after = a + pld.inf_mass  # T_{j+1} = P-mass of {L > ℓ_j}
        with np.errstate(divide="ignore", over="ignore"):
            q = np.exp(np.log(pmf) - self.ell)
        self.q_tail = np.cumsum(q[::-1])[::-1]  # F_j: Q-mass of {L ≥ ℓ_j}
        self.total = float(np.sum(pmf)) + pld.inf_mass
        self.rho = _gamma(4 * n + 16) + (float(np.max(np.abs(self.ell))) + 4.0) * _U if n else 0.0

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

    def _lower_terms(self) -> Tuple[np.ndarray, np.ndarray]:
        """(e^{−c_η}, K_η) of the lower bound for every η of :data:`ETAS` (module docstring)."""
        p = self.pld
        shifts = [p._shift(eta) for eta in ETAS]  # (c, φ) per η
        factor = np.array([math.exp(-c) for c, _ in shifts])
        charge = np.array([p.err + p.bias + p.moved + p.edge + eta + fail for eta, (_, fail) in zip(ETAS, shifts)])
        return factor, charge * (1.0 + 8.0 * _U)

    def tpr_upper(self, fpr: np.ndarray) -> np.ndarray:
        """Certified upper bound on the exact pair's largest TPR at each FPR (in [0, 1])."""
        fpr = np.asarray(fpr, dtype=np.float64)
        return np.minimum(1.0, self._grid_roc(fpr, +1) + self.pld.err * (1.0 + 4.0 * _U))

    def tpr_lower(self, fpr: np.ndarray) -> np.ndarray:
        """Certified lower bound on the exact pair's largest TPR at each FPR (in [0, 1])."""
        fpr = np.asarray(fpr, dtype=np.float64)
        factor, charge = self._lower_terms()
        shifted = (factor * (1.0 - 4.0 * _U))[:, None] * fpr.ravel()[None, :]
        best = np.max(self._grid_roc(shifted, -1) - charge[:, None], axis=0).reshape(fpr.shape)
        return np.clip(np.maximum(best, fpr), 0.0, 1.0)

    def fpr_reaching_upper(self, tpr: np.ndarray) -> np.ndarray:
        """A lower bound of inf{α : TPR_exact(α) ≥ y} for each y: TPR ≤ ROC_computed + err, so no α
        below ROC_computed⁻¹(y − err) reaches y (capped at 1, where every TPR is 1)."""
        y = np.asarray(tpr, dtype=np.float64)
        v = (y - self.pld.err * (1.0 + 4.0 * _U)) * (1.0 - 4.0 * _U)
        return np.minimum(1.0, self._grid_inverse(v, -1))

    def fpr_reaching_lower(self, tpr: np.ndarray) -> np.ndarray:
        """An upper bound of inf{α : TPR_exact(α) ≥ y} for each y: TPR(α) ≥ α (a coin flip) and
        TPR(α) ≥ ROC_computed(α e^{−c}) − K, so α = y and α = e^{c}·ROC_computed⁻¹(y + K) reach y."""
        y = np.asarray(tpr, dtype=np.float64)
        factor, charge = self._lower_terms()
        need = (y.ravel()[None, :] + charge[:, None]) * (1.0 + 4.0 * _U)
        reach = self._grid_inverse(need, +1) / (factor * (1.0 - 4.0 * _U))[:, None]
        return np.minimum(np.min(reach, axis=0).reshape(y.shape), y)


def check_fpr(name: str, fpr: object) -> np.ndarray:
    """False-positive rates: a non-empty 1-D array of reals in [0, 1]."""
    try:
        arr = np.atleast_1d(np.asarray(fpr, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a non-empty sequence of false-positive rates in [0, 1]; "
                         f"got {fpr!r}") from None
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
    settings: Tuple[int, int, int] = RISK_SETTINGS,
) -> TradeoffCurve:
    """Compose ``event``'s dominating pairs (first order) once and return the certified curve.

    Parameters
    ----------
    event : PrivacyEvent
        Any event the PLD accountant supports (:mod:`dpcore.pld.leaves`).
    discretization : float, optional
        Leaf loss-grid spacing h (nats); default from ``settings``.
    tail_mass : float
        Total P-mass the truncations may move (> 0); it enters the lower bound.
    settings : (int, int, int)
        (leaf points per loss sd, max bulk, extended uses), see
        :func:`~dpcore.pld.accountant.composed_plds` (default :data:`RISK_SETTINGS`).

    Returns
    -------
    TradeoffCurve
        With two orders of neighbours, the second is the reflection of the first
        (:class:`ReflectedCurve`): valid for any event, and exact for every pair dpcore builds
        (the add order of a Poisson-subsampled leaf is the swap of its remove order).
    """
    tail_mass = check_positive("tail_mass", tail_mass)
    plds, h = composed_plds(event, discretization=discretization, tail_mass=tail_mass, settings=settings,
                            orders=[0])
    curves: list = [GridCurve(p) for p in plds]
    if curves and number_of_orders(_parts(event)) == 2:
        curves.append(ReflectedCurve(curves[0]))
    return TradeoffCurve(tuple(curves), event.relation, h)
