"""Issue 21's one-record attack on the ℓp solvers (and its ℓ2 twin at extreme magnitudes): ε lower bounds.

Setting (the issue's): n = d = 20, logistic loss, p = 1.001 (dual q = 1001), D = all-zero rows, D′ = row 0
replaced by 0.4·𝟏 (‖·‖₂ = 1.79 ≤ data_norm_bound 2), clip / truncation 10⁻³, one step, claim ε = 1
(0.99 for the shuffled variant, whose n = 20 reports cannot reach 1), δ = 1e-5; statistic = the sum of the
released weights. The targets are :func:`audits.solver_targets.solver_target`'s ``*_dense`` rows; ``dp_gd_tiny``
is the ℓ2 analogue (rows of 1e-170's, clip 1e-200), a control on which the library clips correctly.

Two lower bounds per row, both at 95 % confidence:

* ``audit``: :func:`audits.run_audit` (Clopper–Pearson, threshold chosen on the first fifth of the trials);
* ``fixed threshold``: the issue's procedure — the threshold separating D from D′ best on ``--calibration``
  separate runs per side, then one-sided Clopper–Pearson bounds (α/2 each) on the error rates of ``--trials``
  fresh runs per side, ε_lb = ln((1 − δ − FNR_up)/FPR_up) (Kairouz, Oh, Viswanath 2015, Thm 2.1).

``--planted`` runs the planted variants (``norm-underflow`` on the ℓp rows, ``clip-skipped-at-zero-norm`` on
``dp_gd_tiny``) instead of the library's solvers. Results: benchmarks/RESULTS.md, "Issue 21 attack".

Run: ``python benchmarks/bench_lp_leak.py [--trials 300] [--calibration 100] [--seed 0] [--planted]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from audits import run_audit
from audits.clopper_pearson import clopper_pearson_upper
from audits.solver_targets import solver_target
from audits.statistics import epsilon_from_error_rates

ROWS = ("noisy_mirror_descent_dense", "batched_truncated_mirror_descent_dense",
        "shuffled_truncated_mirror_descent_dense", "dp_gd_tiny")
PLANTED = {"dp_gd_tiny": "clip-skipped-at-zero-norm"}


def fixed_threshold_bound(target, trials: int, calibration: int, delta: float, seed: int) -> tuple:
    """(ε_lb, false positives, false negatives) of the best threshold on separate calibration runs."""
    rng = np.random.default_rng(seed)
    c0, c1 = target.sample(0, calibration, rng), target.sample(1, calibration, rng)
    grid = np.unique(np.concatenate([c0, c1]))
    errors = [(np.sum(c0 >= t) + np.sum(c1 < t), t) for t in grid]
    t = min(errors)[1]
    s0, s1 = target.sample(0, trials, rng), target.sample(1, trials, rng)
    fp, fn = int(np.sum(s0 >= t)), int(np.sum(s1 < t))
    fpr_up = float(clopper_pearson_upper(fp, trials, 0.025))
    fnr_up = float(clopper_pearson_upper(fn, trials, 0.025))
    return max(0.0, float(epsilon_from_error_rates(fpr_up, fnr_up, delta))), fp, fn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--calibration", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--planted", action="store_true")
    args = parser.parse_args()
    print(f"Issue 21 attack: {args.trials} trials per side (+{args.calibration} calibration runs for the fixed "
          f"threshold), claim epsilon={args.epsilon:g}, delta={args.delta:g}, seed {args.seed}"
          f"{', planted variants' if args.planted else ''}")
    header = f"{'target':<58} {'claimed eps':>11} {'audit eps_lb':>12} {'fixed-threshold eps_lb':>22} " \
             f"{'FP':>4} {'FN':>4} {'seconds':>8}"
    print(header)
    print("-" * len(header))
    for name in ROWS:
        planted = (PLANTED.get(name, "norm-underflow")) if args.planted else None
        start = time.perf_counter()
        target = solver_target(name, args.epsilon, args.delta, planted=planted)
        audit = run_audit(target, args.trials, estimator="clopper-pearson", seed=args.seed)
        eps_fixed, fp, fn = fixed_threshold_bound(target, args.trials, args.calibration, args.delta, args.seed + 1)
        print(f"{target.name:<58} {target.claimed_epsilon:>11.4g} {audit.eps_lower:>12.3f} {eps_fixed:>22.3f} "
              f"{fp:>4} {fn:>4} {time.perf_counter() - start:>8.1f}")
    print("eps_lb above the claimed eps means the claim is refuted at 95% confidence "
          f"(the fixed-threshold ceiling at {args.trials} trials is "
          f"{math.log((1 - args.delta - float(clopper_pearson_upper(0, args.trials, 0.025))) / float(clopper_pearson_upper(0, args.trials, 0.025))):.2f}).")


if __name__ == "__main__":
    main()
