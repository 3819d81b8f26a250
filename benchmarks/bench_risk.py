"""Certified attack risk (dpcore.risk): accuracy against exact curves, the DP-SGD gap, and its cost.

1. Single Gaussian (σ = 2, μ = 0.5) and 4 composed Gaussians (σ = 2 each, μ = 1): the certified TPR
   upper bound at FPR ∈ {1e-4, 1e-3, 0.01, 0.1} against the exact Φ(Φ⁻¹(α) + μ) — it must be ≥ the
   exact value and within 1e-4 of it.
2. DP-SGD (q = 0.01, σ = 1.1, T = 10⁴, add_remove): the largest certified gap (upper − lower) over
   FPR ∈ [1e-6, 1) and where it is, for the grid settings tried (``--settings``).
3. CPU time, interleaved over ``--repeats`` rounds in one process: one ε evaluation
   (``dpcore.get_epsilon`` with its default ``accountant="auto"``, and with ``accountant="pld"``)
   against one certified curve (:func:`dpcore.pld.tradeoff.tradeoff_curve` plus the bounds at 1000
   FPRs), and, where dp_accounting is installed, its PLD's δ(ε) on a grid of 200 ε read as TPR(α) =
   min_ε e^ε α + δ(ε) (uncertified) — median seconds and ratios.
4. ``--plot PATH``: draws the DP-SGD curve against its (ε, δ) and μ-GDP curves
   (docs/risk_tradeoff.png).

Run: ``python benchmarks/bench_risk.py [--repeats 5] [--plot docs/risk_tradeoff.png]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import special

import dpcore
from dpcore.pld.tradeoff import RISK_SETTINGS, UPPER_SETTINGS, tradeoff_curve
from dpcore.risk import plot_tradeoff, risk

ALPHAS = (1e-4, 1e-3, 1e-2, 0.1)
DPSGD = dpcore.SelfComposedEvent(dpcore.PoissonSampledEvent(dpcore.GaussianEvent(1.1), 0.01), 10_000)
GRID = np.concatenate([np.geomspace(1e-6, 0.5, 700), 1.0 - np.geomspace(1e-9, 0.5, 300)])


def gaussian_rows() -> None:
    print("| event | FPR | exact TPR | certified upper | upper - exact | lower |")
    print("|---|---|---|---|---|---|")
    for label, event, mu in (("Gaussian sigma=2", dpcore.GaussianEvent(2.0), 0.5),
                             ("4 x Gaussian sigma=2", dpcore.SelfComposedEvent(dpcore.GaussianEvent(2.0), 4), 1.0)):
        report = risk(event, ALPHAS)
        exact = special.ndtr(special.ndtri(np.array(ALPHAS)) + mu)
        for a, e, up, lo in zip(ALPHAS, exact, report.tpr_upper, report.tpr_lower):
            print(f"| {label} | {a:g} | {e:.10f} | {up:.10f} | {up - e:.2e} | {lo:.10f} |")


def gap_rows(settings_list) -> None:
    print("| settings (target gap, longest window) | max gap at FPR >= 1e-6 | at FPR | CPU s |")
    print("|---|---|---|---|")
    for settings in settings_list:
        start = time.process_time()
        curve = tradeoff_curve(DPSGD, settings=settings)
        gap = curve.tpr_upper(GRID) - curve.tpr_lower(GRID)
        seconds = time.process_time() - start
        i = int(np.argmax(gap))
        print(f"| {settings} | {gap[i]:.2e} | {GRID[i]:.3g} | {seconds:.2f} |")


def dp_accounting_tpr():
    """dp_accounting's PLD read as a TPR bound at 1000 FPRs (uncertified), or None if not installed."""
    try:
        from dp_accounting import dp_event, pld
    except ImportError:
        return None
    acc = pld.PLDAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1)), 10_000)
    eps = np.linspace(-4.0, 12.0, 200)
    deltas = np.array([acc.get_delta(float(e)) if e >= 0 else 1.0 - np.exp(e) * (1.0 - acc.get_delta(0.0))
                       for e in eps])
    return np.min(np.exp(eps)[None, :] * GRID[:, None] + deltas[None, :], axis=1)


def timing_rows(repeats: int) -> None:
    tasks = {
        "get_epsilon(auto), one epsilon": lambda: dpcore.get_epsilon(DPSGD, 1e-5),
        "get_epsilon(pld), one epsilon": lambda: dpcore.get_epsilon(DPSGD, 1e-5, accountant="pld"),
        "certified curve (tradeoff_curve + bounds at 1000 FPRs)":
            lambda: (lambda c: (c.tpr_upper(GRID), c.tpr_lower(GRID)))(tradeoff_curve(DPSGD)),
        "dpcore.risk.risk (curve + advantage + mu-GDP)": lambda: risk(DPSGD),
    }
    try:
        import dp_accounting  # noqa: F401

        tasks["dp_accounting PLD, TPR at 1000 FPRs (uncertified)"] = dp_accounting_tpr
    except ImportError:
        print("(dp_accounting not installed: its row is skipped)")
    for task in tasks.values():  # warm-up: imports, compilation
        task()
    times = {name: [] for name in tasks}
    for _ in range(repeats):
        for name, task in tasks.items():
            start = time.process_time()
            task()
            times[name].append(time.process_time() - start)
    base = np.median(times["get_epsilon(auto), one epsilon"])
    pld = np.median(times["get_epsilon(pld), one epsilon"])
    print(f"| DP-SGD q=0.01 sigma=1.1 T=1e4 | median CPU s ({repeats} interleaved rounds) | / auto epsilon | "
          f"/ pld epsilon |  load average {os.getloadavg()[0]:.1f}")
    print("|---|---|---|---|")
    for name, values in times.items():
        m = float(np.median(values))
        print(f"| {name} | {m:.3f} | {m / base:.2f} | {m / pld:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--plot", default=None, help="write the DP-SGD risk plot to this new file")
    args = parser.parse_args()
    gaussian_rows()
    print()
    gap_rows([(4e-3, 1 << 20), UPPER_SETTINGS, (5e-4, 1 << 20), RISK_SETTINGS, (1e-4, 1 << 20)])
    print()
    timing_rows(args.repeats)
    if args.plot:
        if os.path.exists(args.plot):
            raise SystemExit(f"{args.plot} exists; not overwriting it")
        report = risk(DPSGD)
        eps = dpcore.get_epsilon(DPSGD, 1e-5, accountant="pld").epsilon
        ax = plot_tradeoff(report, epsilon=eps, delta=1e-5)
        ax.set_title("DP-SGD q=0.01, sigma=1.1, T=1e4 (add_remove)")
        ax.figure.savefig(args.plot, dpi=150, bbox_inches="tight")
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
