"""One command that audits every mechanism and solver of the library, and one that shows that every
planted bug is caught.

:func:`audit_all` runs each library mechanism (:data:`audits.targets.MECHANISM_NAMES`) and solver
(:data:`audits.targets.SOLVER_NAMES`) at its claim, plus Mironov's floating-point support attack on
the (secure, default) Laplace release (:func:`audits.targets.float_support_target`), and prints a
table (claimed ε, ε_lb, verdict);
``dpcore audit all`` fails when any row is ``violated``. :func:`planted_bug_suite` runs every entry
of :data:`audits.planted_bugs.CATALOGUE` with its stated estimator and trial budget and prints the
same table, where every row must read ``VIOLATED``.

Estimators: the Gaussian-DP estimator (Nasr et al. 2023) for targets whose every release is an
unsampled Gaussian (``noise_family == "gaussian"``), Clopper–Pearson (Jagielski, Ullman, Oprea 2020)
otherwise. :func:`audit_all` controls the *family-wise* false-alarm rate: each of its k rows is
run at confidence 1 − (1 − confidence)/k (Bonferroni), so a table of correct implementations shows
any "violated" row with probability ≤ 1 − confidence (5% by default).
"""

from __future__ import annotations

import sys
from typing import List, Optional, TextIO

from dpcore._validation import check_delta, check_open_unit, check_positive

from .planted_bugs import CATALOGUE
from .report import AuditResult, format_table
from .robustness_checks import ROBUSTNESS_NAMES, robustness_target
from .runner import run_audit
from .targets import MECHANISM_NAMES, SOLVER_NAMES, float_support_target, mechanism_target, solver_target

__all__ = ["audit_all", "planted_bug_suite", "MECHANISM_TRIALS", "SOLVER_TRIALS", "ROBUSTNESS_TRIALS"]

#: Trials per side (quick, full). Mechanism trials are cheap (vectorised), except the exact
#: discrete Gaussian sampler, which runs a Python loop per draw (both discrete mechanisms share
#: the smaller budget).
MECHANISM_TRIALS = {"default": (5_000, 100_000), "discrete": (1_000, 20_000)}
#: Trials per side (quick, full) per solver; every trial is one solver call on a small problem
#: (about 4 ms for DP-SVRG / DP-SVRG++, 0.15–0.5 ms for the others, the objective-perturbation
#: family's noise calibration memoised). The full budgets are set so that the Gaussian-noise
#: solvers reach a meaningful ε_lb (DP-GD ≈ 0.7 at 2×10⁴ trials per side for a claim of 1).
SOLVER_TRIALS = {name: (150, 20_000) for name in SOLVER_NAMES}
SOLVER_TRIALS.update({name: (150, 2_000) for name in ("dp_svrg", "dp_svrg_pp")})
SOLVER_TRIALS["shuffled_truncated_mirror_descent"] = (150, 2_000)  # ≈ 7 ms per call (one local draw per record)
SOLVER_TRIALS.update({name: (150, 2_000) for name in ("adassp", "adassp_joint")})  # ≈ 10 ms per call
SOLVER_TRIALS.update({name: (1_000, 20_000) for name in ("objective_perturbation", "approximate_minima_perturbation",
                                                         "approx_objective_perturbation")})
# norm-stress rows (issue 21, ~1 ms per call): 1000 trials let the threshold selection pick a separating threshold
# when the clip fails (150 do not, under the Bonferroni level)
SOLVER_TRIALS.update({name: (1_000, 5_000) for name in (
    "noisy_mirror_descent_dense", "batched_truncated_mirror_descent_dense", "shuffled_truncated_mirror_descent_dense",
    "dp_gd_tiny")})
#: Trials per side (quick, full) of each :mod:`audits.robustness_checks` row (a few ms per call).
ROBUSTNESS_TRIALS = (150, 1_000)


def _estimator(target) -> str:
    return "gdp" if target.noise_family == "gaussian" else "clopper-pearson"


def _emit(results: List[AuditResult], title: str, out: Optional[TextIO]) -> None:
    if out is not None:
        print(title, file=out)
        print(format_table(results), file=out)


def audit_all(
    *,
    quick: bool = False,
    workers: Optional[int] = None,
    seed: int = 0,
    progress: bool = False,
    epsilon: float = 1.0,
    delta: float = 1e-5,
    confidence: float = 0.95,
    out: Optional[TextIO] = sys.stdout,
) -> List[AuditResult]:
    """Audit every library mechanism and solver at (``epsilon``, ``delta``) and print a table.

    Parameters
    ----------
    quick : bool
        Small budgets (10–20 s on two cores); the full run (about 70 s) uses 10⁵ mechanism trials
        (2·10⁴ for the exact discrete samplers) and 10³ runs per solver and side (10⁴ for the
        objective-perturbation family).
    workers : int, optional
        Process-pool size passed to :func:`audits.run_audit` (``None``: in-process).
    seed : int
        Root seed of every audit (each audit is reproducible on its own).
    progress : bool
        Progress bars.
    epsilon, delta : float
        The claim every mechanism and solver is calibrated to (nats; δ in (0, 1)).
    confidence : float
        Family-wise confidence of the table, in (0, 1); each row runs at the Bonferroni level.
    out : text stream, optional
        Where the table is printed (``None``: silent).

    Returns
    -------
    list of AuditResult
        One per mechanism, then the float-support row ``laplace[float-support-test]``, then one per
        solver, in :data:`MECHANISM_NAMES` then :data:`SOLVER_NAMES` order, then one per
        :data:`audits.robustness_checks.ROBUSTNESS_NAMES` (deterministic default seed, extreme records).
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    rows = len(MECHANISM_NAMES) + 1 + len(SOLVER_NAMES) + len(ROBUSTNESS_NAMES)
    row_confidence = 1.0 - (1.0 - check_open_unit("confidence", confidence)) / rows
    mechanism_rows = [(mechanism_target(name, epsilon, delta),
                       MECHANISM_TRIALS["discrete" if name.startswith("discrete") else "default"])
                      for name in MECHANISM_NAMES]
    mechanism_rows.append((float_support_target(epsilon, delta), MECHANISM_TRIALS["default"]))
    results = []
    for target, budgets in mechanism_rows:
        results.append(run_audit(target, budgets[0 if quick else 1], estimator=_estimator(target),
                                 confidence=row_confidence, workers=workers, seed=seed, progress=progress))
    for name in SOLVER_NAMES:
        target = solver_target(name, epsilon, delta)
        results.append(run_audit(target, SOLVER_TRIALS[name][0 if quick else 1], estimator=_estimator(target),
                                 confidence=row_confidence, workers=workers, seed=seed, progress=progress,
                                 batch_size=25))
    for name in ROBUSTNESS_NAMES:  # issue 13: deterministic default seed, extreme records
        results.append(run_audit(robustness_target(name, epsilon, delta), ROBUSTNESS_TRIALS[0 if quick else 1],
                                 estimator="clopper-pearson", confidence=row_confidence, workers=workers, seed=seed,
                                 progress=progress, batch_size=25))
    _emit(results, f"Audit of every mechanism and solver at epsilon={epsilon}, delta={delta}:", out)
    return results


def planted_bug_suite(
    *,
    workers: Optional[int] = None,
    seed: int = 0,
    progress: bool = False,
    epsilon: float = 1.0,
    delta: float = 1e-5,
    out: Optional[TextIO] = sys.stdout,
) -> List[AuditResult]:
    """Audit every planted bug with its stated estimator and trial budget; print the table.

    Every row should read ``VIOLATED``: each bug (and each solver variant of it) is caught at 95%
    confidence within the budget stated in :data:`audits.planted_bugs.CATALOGUE`.

    Parameters
    ----------
    workers, seed, progress, epsilon, delta, out
        As in :func:`audit_all`.

    Returns
    -------
    list of AuditResult
        One per bug (then one per solver variant of it, e.g. ``dp_gd[half-noise]``), in catalogue
        order.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    results = []
    for bug in CATALOGUE.values():
        build = mechanism_target if bug.kind == "mechanism" else solver_target
        runs = [(build(bug.base, epsilon, delta, planted=bug.name), bug.trials, None)]
        runs += [(solver_target(s, epsilon, delta, planted=bug.name), bug.solver_trials, 50) for s in bug.solvers]
        for target, trials, batch in runs:
            results.append(run_audit(target, trials, estimator=bug.estimator, workers=workers, seed=seed,
                                     progress=progress, batch_size=batch))
    _emit(results, f"Planted bugs (each must be VIOLATED) at claimed epsilon={epsilon}, delta={delta}:", out)
    return results
