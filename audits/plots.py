"""Pictures of audits (matplotlib is optional: ``pip install dpcore[plot]``).

* :func:`plot_roc` — the attack's empirical ROC against the region an (ε, δ)-DP mechanism allows:
  every test has FPR + e^ε·FNR ≥ 1 − δ and FNR + e^ε·FPR ≥ 1 − δ (Kairouz, Oh, Viswanath 2015,
  Thm. 2.1), i.e. TPR ≤ :func:`max_true_positive_rate` (FPR). A ROC point outside the region is a
  (point-estimate) violation; the audit's verdict uses confidence bounds on top of that.
* :func:`plot_epsilon_sweep` — ε_lb against the claimed ε across a sweep of audits; points above
  the diagonal are violated claims.
* :func:`plot_curve_test` — a ``"curve"`` audit (:mod:`audits.fdp_curve`): each tested empirical
  trade-off point with its confidence box (Clopper–Pearson at the per-test level α/J, so all boxes
  hold together with probability ≥ 1 − α) against the claimed certified curve; a box entirely
  above the curve is a violation.

Both draw on a given ``matplotlib`` Axes or on a new ``Figure`` (no pyplot state, any backend),
and return the Axes.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from dpcore._validation import check_delta
from dpcore.risk import dp_tpr_bound, finish_tradeoff_axes

from .report import AuditResult
from .statistics import roc_curve

__all__ = ["max_true_positive_rate", "plot_roc", "plot_epsilon_sweep", "plot_curve_test"]


def max_true_positive_rate(fpr: Any, epsilon: float, delta: float) -> np.ndarray:
    """Largest TPR an (ε, δ)-DP mechanism allows at false-positive rate ``fpr``.

    ``min(1, e^ε·FPR + δ, 1 − e^{−ε}(1 − δ − FPR))`` (Kairouz, Oh, Viswanath 2015, Thm. 2.1);
    :func:`dpcore.risk.dp_tpr_bound` with δ in (0, 1).

    Parameters
    ----------
    fpr : array of float in [0, 1]
        False-positive rates.
    epsilon : float
        ε > 0 (nats; ``inf`` allows everything).
    delta : float
        δ in (0, 1).
    """
    return dp_tpr_bound(fpr, epsilon, check_delta("delta", delta))


def _axes(ax: Any):
    if ax is not None:
        return ax
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # optional dependency
        raise ImportError("audits.plots needs matplotlib: pip install dpcore[plot]") from exc
    return Figure(figsize=(5, 4.5)).add_subplot()


def plot_roc(result: AuditResult, *, ax: Any = None, log: bool = True) -> Any:
    """Empirical ROC of a two-sample audit against the claimed privacy region.

    Parameters
    ----------
    result : AuditResult
        A ``"clopper-pearson"`` or ``"gdp"`` audit from :func:`audits.run_audit` (its ``samples``
        hold the scores on D and D′).
    ax : matplotlib Axes, optional
        Where to draw (default: a new Figure's Axes).
    log : bool
        Log-log axes, where the tails that carry a DP violation are visible.

    Returns
    -------
    matplotlib Axes
    """
    if result.samples is None or result.estimator == "one-run":
        raise ValueError("result must be a two-sample audit (clopper-pearson or gdp) that kept its samples")
    ax = _axes(ax)
    fpr, tpr = roc_curve(*result.samples)
    lo = 1.0 / max(len(result.samples[0]), 1)
    grid = np.geomspace(lo, 1.0, 400) if log else np.linspace(0.0, 1.0, 400)
    bound = max_true_positive_rate(grid, result.claimed_epsilon, result.delta)
    ax.fill_between(grid, 0.0, bound, alpha=0.2, label=f"allowed by ({result.claimed_epsilon:.3g}, {result.delta:.2g})-DP")
    ax.plot(grid, bound, lw=1)
    ax.plot(fpr, tpr, lw=1.5, label=f"attack ROC ({result.statistic})")
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, 1.0)
        ax.set_ylim(lo, 1.0)
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("true-positive rate")
    ax.set_title(f"{result.target}: eps_lb = {result.eps_lower:.3g} ({result.verdict})")
    ax.legend(loc="lower right", fontsize="small")
    return ax


def plot_epsilon_sweep(results: Iterable[AuditResult], *, ax: Any = None) -> Any:
    """ε_lb (with its confidence) against claimed ε for a sweep of audits; diagonal = tight.

    Parameters
    ----------
    results : iterable of AuditResult
        Audits at several claimed ε (finite).
    ax : matplotlib Axes, optional
        Where to draw.

    Returns
    -------
    matplotlib Axes
    """
    results = list(results)
    if not results:
        raise ValueError("results must hold at least one AuditResult")
    claimed = np.array([r.claimed_epsilon for r in results], dtype=float)
    if not np.all(np.isfinite(claimed)):
        raise ValueError("results must have finite claimed epsilons to be plotted")
    lower = np.array([r.eps_lower for r in results], dtype=float)
    violated = np.array([r.violated for r in results])
    ax = _axes(ax)
    top = float(max(claimed.max(), np.nanmax(np.where(np.isfinite(lower), lower, claimed.max())))) * 1.1
    ax.plot([0, top], [0, top], "k--", lw=1, label="eps_lb = claimed eps")
    ax.scatter(claimed[~violated], lower[~violated], marker="o", label="pass")
    if violated.any():
        ax.scatter(claimed[violated], lower[violated], marker="x", color="red", label="violated")
    ax.set_xlabel("claimed epsilon")
    ax.set_ylabel(f"eps lower bound ({results[0].confidence:.0%} confidence)")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.legend(loc="upper left", fontsize="small")
    return ax


def plot_curve_test(result: AuditResult, *, ax: Any = None, log: bool = True) -> Any:
    """Tested empirical trade-off points with their confidence boxes against the claimed curve.

    Parameters
    ----------
    result : AuditResult
        A ``"curve"`` audit (its ``details`` hold ``points`` and ``claimed_curve``).
    ax : matplotlib Axes, optional
        Where to draw (default: a new Figure's Axes).
    log : bool
        Logarithmic FPR axis.

    Returns
    -------
    matplotlib Axes
    """
    if result.estimator != "curve" or "points" not in result.details:
        raise ValueError("result must be a 'curve' audit (run_audit(..., estimator='curve'))")
    ax = _axes(ax)
    curve = result.details["claimed_curve"]
    x, y = np.asarray(curve["fpr"], dtype=float), np.asarray(curve["tpr"], dtype=float)
    floor = 1.0 / max(sum(result.details["points"][0]["trials"]), 1) if result.details["points"] else 1e-6
    keep = x >= (floor if log else 0.0)
    ax.fill_between(x[keep], 0.0, y[keep], alpha=0.2, label="allowed by the claimed curve (certified)")
    ax.plot(x[keep], y[keep], lw=1)
    level = result.details["level_per_test"]
    for i, point in enumerate(result.details["points"]):
        (f0, f1), (t0, t1) = point["fpr_interval"], point["tpr_interval"]
        ax.add_patch(_rectangle(f0, t0, f1 - f0, t1 - t0, label=None if i else f"{1 - level:.4g} boxes (each)"))
        ax.plot([point["fpr"]], [point["tpr"]], "k.", ms=4)
    return finish_tradeoff_axes(ax, floor=floor, log=log, ylabel="true-positive rate",
                                title=f"{result.target}: p = {result.p_value:.3g} ({result.verdict})")


def _rectangle(x: float, y: float, w: float, h: float, label: Any):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), max(w, 0.0), max(h, 0.0), fill=False, edgecolor="C3", lw=1.2, label=label)
