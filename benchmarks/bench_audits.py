"""Trials per second of a mechanism audit: batched run_audit in one process, on a 2-worker process
pool, and a plain Python loop that runs the mechanism one trial at a time.

One *trial* is one run of the mechanism on D or on D′ plus its attack score; an audit of
``trials`` per side runs 2·``trials`` of them and then the estimator (included in the timings).
The plain loop calls the same target's ``sample(which, 1, rng)`` once per trial, i.e. what a user
without a batched sampler would write, and feeds the scores to the same estimator.

Targets are given by name: ``shift-gaussian`` / ``shift-laplace`` are the textbook location
mechanisms of :func:`audits.target.shift_target` calibrated to (1, 1e-5) and 1-DP (Δ = 1); any
name of ``audits.targets.MECHANISM_NAMES`` audits the library's mechanism through
``audits.targets.mechanism_target``. The DP-GD (solver) audit is benchmarked by
``benchmarks/bench_solver_audits.py``.

Run: ``python benchmarks/bench_audits.py [--trials 1000000] [--loop-trials 20000]
[--targets shift-gaussian shift-laplace gaussian laplace]``.

``--audit-all quick|full [--workers K] [--seed S]`` instead times :func:`audits.library_audit.audit_all` (the
``dpcore audit all`` table): wall and CPU seconds of the whole run (targets built, trials,
estimators, power predictions) against its documented budget (:data:`~audits.library_audit.QUICK_SECONDS`,
:data:`~audits.library_audit.FULL_SECONDS`), one line per row with its wall time, ε_lb and verdict,
and the number of solver rows with ε_lb ≥ 0.3. A warm-up quick run first fills the Numba cache
unless ``--cold``.

``--row-costs`` instead prints the CPU milliseconds per run of every solver and robustness row and what the
quick and full budgets spend on runs (one process, so budgets compare under the same machine load).

``--ideal-dp-gd`` instead prints the ideal final-model attack on DP-GD's release (Gaussian scores at the exact μ
of the event DP-GD reports), calibrated with the RDP accountant and with ``accountant="auto"``: the row's score
is sufficient for that release, so this is the most the row can show (40 seeds at 6 000 runs per side).

``--per-step-power`` instead simulates what white-box per-step canaries (Nasr et al. 2023, §4) would
add to the full-batch DP-GD row of ``audit all``: T = 20 Gaussian steps composed to μ-GDP at the
claim (1, 1e-5) (μ = 1/σ, σ = 3.7306), the canary's per-step statistic N(0, 1) on D and
N(μ/√T, 1) on D′. The final-model audit (what the row runs) sees one sum of the T statistics per
run — N(0, 1) vs N(μ, 1) after scaling; the per-step audit sees all T·N of them, bounds the step's μ
with the GDP estimator and composes μ_lb·√T (Dong, Roth, Su 2022, Cor. 3.3). Both on N runs per
side (the row's quick and full budgets), seeds 0–9, each at the level a row of the table gets
(5 % Bonferroni-split over its 30 rows); median [min, max] of ε_lb.
"""

from __future__ import annotations

import argparse
import time
from typing import List, Tuple

import numpy as np

from audits import AuditTarget, estimate, run_audit
from audits.target import shift_target

SIGMA_1_1E5 = 3.73063163481594  # analytic Gaussian σ for (ε, δ) = (1, 1e-5), Δ = 1


def make_target(name: str, epsilon: float, delta: float) -> AuditTarget:
    """A target by benchmark name (module docstring)."""
    if name == "shift-gaussian":
        return shift_target(name, epsilon, delta, noise="gaussian", scale=SIGMA_1_1E5 / epsilon)
    if name == "shift-laplace":
        return shift_target(name, epsilon, delta, noise="laplace", scale=1.0 / epsilon)
    from audits.targets import mechanism_target

    return mechanism_target(name, epsilon, delta)


def _estimator(target: AuditTarget) -> str:
    return "gdp" if target.noise_family == "gaussian" else "clopper-pearson"


def plain_loop(target: AuditTarget, trials: int, seed: int = 0) -> Tuple[float, float]:
    """(trials per second, ε_lb) of a Python loop drawing one trial per call."""
    rng = np.random.default_rng(seed)
    scores = np.empty((2, trials))
    start = time.perf_counter()
    for which in (0, 1):
        for k in range(trials):
            scores[which, k] = target.sample(which, 1, rng)[0]
    est = estimate(_estimator(target), (scores[0], scores[1]), delta=target.delta,
                   claimed_epsilon=target.claimed_epsilon, noise_family=target.noise_family)
    return 2 * trials / (time.perf_counter() - start), est.eps_lower


def audited(target: AuditTarget, trials: int, workers) -> Tuple[float, float]:
    """(trials per second, ε_lb) of ``run_audit`` (batches of 50 000 trials)."""
    start = time.perf_counter()
    result = run_audit(target, trials, estimator=_estimator(target), workers=workers, seed=0, batch_size=50_000)
    return 2 * trials / (time.perf_counter() - start), result.eps_lower


def audit_all_timing(mode: str, workers, cold: bool, seed: int = 0) -> None:
    """Time one ``audit all`` run and print its rows (module docstring)."""
    import os

    from audits.library_audit import FULL_SECONDS, QUICK_SECONDS, audit_all
    from audits.targets import SOLVER_NAMES

    import resource

    if not cold:
        audit_all(quick=True, out=None)  # warm-up: compilation, caches

    def cpu_seconds() -> float:  # this process and its finished worker processes
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    start, cpu = time.perf_counter(), cpu_seconds()
    results = audit_all(quick=mode == "quick", workers=workers, seed=seed, out=None)
    wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    budget = QUICK_SECONDS if mode == "quick" else FULL_SECONDS
    print(f"audit all ({mode}, seed {seed}, workers={workers}, {'cold' if cold else 'warm'} Numba cache): {wall:.1f} s wall "
          f"(budget {budget} s), {cpu:.1f} CPU seconds (this process and its workers; on an idle machine the "
          f"wall time is about CPU / min(workers, cores)), load average {os.getloadavg()[0]:.1f}")
    print(f"{'row':36s} {'estimator':16s} {'trials':>7s} {'eps_lb':>7s} {'power':>6s} {'seconds':>8s}  verdict")
    for r in results:
        power = r.details.get("power")
        shown = "-" if power is None else f"{power:.2f}"
        print(f"{r.target:36s} {r.estimator:16s} {r.trials:7d} {r.eps_lower:7.3f} {shown:>6s} {r.wall_time:8.1f}  "
              f"{r.verdict}")
    strong = [r.target for r in results if r.target in SOLVER_NAMES and r.eps_lower >= 0.3]
    print(f"solver rows with eps_lb >= 0.3: {len(strong)} ({', '.join(strong)})")
    print(f"no power: {sum(r.verdict == 'no power' for r in results)} of {len(results)} rows")


def per_step_power(seeds=range(10), steps: int = 20, delta: float = 1e-5, rows: int = 30) -> None:
    """Final-model vs per-step canary audit of T composed Gaussian steps (module docstring)."""
    from audits.statistics import gdp_epsilon, gdp_estimate

    mu = 1.0 / SIGMA_1_1E5
    confidence = 1.0 - 0.05 / rows
    print(f"| runs per side | final-model audit eps_lb median [min, max] | per-step audit eps_lb median [min, max] |"
          f"  (T = {steps}, claim (1, {delta:g}), mu = {mu:.4f}, {len(seeds)} seeds, confidence {confidence:.5f})")
    print("|---|---|---|")
    for runs in (300, 6_000):
        final, per_step = [], []
        for seed in seeds:
            rng = np.random.default_rng(seed)
            steps0 = rng.normal(0.0, 1.0, (runs, steps))
            steps1 = rng.normal(mu / np.sqrt(steps), 1.0, (runs, steps))
            scale = 1.0 / np.sqrt(steps)  # the sum of T unit-variance statistics, back to unit variance
            final.append(gdp_estimate(steps0.sum(axis=1) * scale, steps1.sum(axis=1) * scale, delta,
                                      confidence).eps_lower)
            step_fit = gdp_estimate(steps0.ravel(), steps1.ravel(), delta, confidence)
            per_step.append(gdp_epsilon(step_fit.details["mu_lower"] * np.sqrt(steps), delta))
        f, p = np.array(final), np.array(per_step)
        print(f"| {runs} | {np.median(f):.3f} [{f.min():.3f}, {f.max():.3f}] | "
              f"{np.median(p):.3f} [{p.min():.3f}, {p.max():.3f}] |")


def row_costs(runs: int = 200) -> None:
    """CPU milliseconds per solver run of every solver / robustness row of ``audit all`` (``--row-costs``), and the
    CPU seconds its quick and full budgets spend on runs (estimators, targets and calibration not included) —
    comparable between budgets measured in one process, unlike CPU totals of runs under different machine load."""
    import time as _time

    from audits.library_audit import ROBUSTNESS_TRIALS, SOLVER_TRIALS
    from audits.robustness_checks import ROBUSTNESS_NAMES, robustness_target
    from audits.targets import SOLVER_NAMES, solver_target

    rows = [(name, solver_target(name, 1.0, 1e-5), SOLVER_TRIALS[name]) for name in SOLVER_NAMES]
    rows += [(name, robustness_target(name, 1.0, 1e-5), ROBUSTNESS_TRIALS) for name in ROBUSTNESS_NAMES]
    totals = np.zeros(2)
    print(f"{'row':40s} {'ms/run':>7s} {'quick':>6s} {'full':>6s} {'full CPU s':>10s}")
    for name, target, (quick, full) in rows:
        rng = np.random.default_rng(0)
        target.sample(0, 5, rng)  # first call: imports, compilation
        start = _time.process_time()
        target.sample(0, runs, rng)
        target.sample(1, runs, rng)
        per_run = (_time.process_time() - start) / (2 * runs)
        totals += 2 * per_run * np.array([quick, full])
        print(f"{name:40s} {1e3 * per_run:7.2f} {quick:6d} {full:6d} {2 * per_run * full:10.1f}")
    print(f"solver and robustness runs: quick {totals[0]:.1f} CPU s, full {totals[1]:.1f} CPU s")


def ideal_final_model(seeds=range(40), runs: int = 6_000, delta: float = 1e-5, rows: int = 30) -> None:
    """The ideal final-model attack on DP-GD's release (``--ideal-dp-gd``): the row's score w·e_d is N(0, 1) on D and
    N(μ, 1) on D′ after scaling, μ = exact_gdp_mu of the event DP-GD reports (20 steps, claim (1, δ)); calibrated
    with the RDP accountant (the solver's default, what the row ran before) and with ``accountant="auto"`` (what
    it runs now). GDP estimator at a row's level of the table, ``runs`` per side, median [min, max] over seeds."""
    from algorithms.dp_gd import dp_gd
    from audits.solver_targets import COMMON_SETTINGS, canary_datasets
    from audits.statistics import gdp_epsilon, gdp_estimate
    from dpcore.risk import exact_gdp_mu

    confidence = 1.0 - 0.05 / rows
    _, (X, y) = canary_datasets(100, 3, "replace_one")
    print(f"| DP-GD calibrated with | exact eps of the release | mu | ideal final-model eps_lb, {runs} runs per side, "
          f"{len(seeds)} seeds: median [min, max] |")
    print("|---|---|---|---|")
    for accountant in ("rdp", "auto"):
        result = dp_gd(X, y, epsilon=1.0, delta=delta, steps=20, tol=None, accountant=accountant, rng=0,
                       **COMMON_SETTINGS)
        mu = exact_gdp_mu(result.event)
        found = []
        for seed in seeds:
            rng = np.random.default_rng(seed)
            found.append(gdp_estimate(rng.normal(0.0, 1.0, runs), rng.normal(mu, 1.0, runs), delta,
                                      confidence).eps_lower)
        f = np.array(found)
        print(f"| {accountant} (claim {result.privacy.epsilon:.3f}) | {gdp_epsilon(mu, delta):.3f} | {mu:.4f} | "
              f"{np.median(f):.3f} [{f.min():.3f}, {f.max():.3f}] |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--audit-all", choices=("quick", "full"), default=None,
                        help="time dpcore audit all instead of the mechanism throughput table")
    parser.add_argument("--workers", type=int, default=None, help="process-pool size for --audit-all")
    parser.add_argument("--cold", action="store_true", help="no warm-up run before --audit-all")
    parser.add_argument("--seed", type=int, default=0, help="root seed of the --audit-all run")
    parser.add_argument("--per-step-power", action="store_true",
                        help="simulate per-step canaries against the final-model audit of composed Gaussian steps")
    parser.add_argument("--row-costs", action="store_true",
                        help="CPU ms per run of every solver row and the CPU its budgets spend on runs")
    parser.add_argument("--ideal-dp-gd", action="store_true",
                        help="the ideal final-model attack on DP-GD's release, RDP- vs tightly calibrated")
    parser.add_argument("--trials", type=int, default=1_000_000, help="trials per side for run_audit")
    parser.add_argument("--loop-trials", type=int, default=20_000, help="trials per side for the plain loop")
    parser.add_argument("--targets", nargs="+", default=["shift-gaussian", "shift-laplace"])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    args = parser.parse_args()
    if args.per_step_power:
        per_step_power()
        return
    if args.row_costs:
        row_costs()
        return
    if args.ideal_dp_gd:
        ideal_final_model()
        return
    if args.audit_all is not None:
        audit_all_timing(args.audit_all, args.workers, args.cold, args.seed)
        return

    rows: List[Tuple[str, str, float, float]] = []
    for name in args.targets:
        target = make_target(name, args.epsilon, args.delta)
        audited(target, 1000, None)  # warm-up: imports, compilation, caches
        rate, eps = plain_loop(target, args.loop_trials)
        rows.append((name, f"plain loop ({args.loop_trials} per side)", rate, eps))
        for label, workers in (("run_audit, 1 process", None), ("run_audit, 2-worker pool", 2)):
            rate, eps = audited(target, args.trials, workers)
            rows.append((name, f"{label} ({args.trials} per side)", rate, eps))
    print(f"Mechanism audits at claimed (epsilon, delta) = ({args.epsilon}, {args.delta})")
    print(f"{'target':16s} {'mode':44s} {'trials/s':>12s} {'eps_lb':>8s}")
    for name, label, rate, eps in rows:
        print(f"{name:16s} {label:44s} {rate:12.0f} {eps:8.3f}")


if __name__ == "__main__":
    main()
