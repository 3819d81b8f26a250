"""One command that audits every mechanism and solver of the library, and one that shows that every
planted bug is caught.

:func:`audit_all` runs each library mechanism (:data:`audits.targets.MECHANISM_NAMES`) and solver
(:data:`audits.targets.SOLVER_NAMES`) at its claim, plus Mironov's floating-point support attack on
the (secure, default) Laplace release (:func:`audits.targets.float_support_target`) and the
robustness rows of :mod:`audits.robustness_checks`, and prints a table (claimed ε, ε_lb, verdict);
``dpcore audit all`` fails when any row is ``violated``. :func:`planted_bug_suite` runs every entry
of :data:`audits.planted_bugs.CATALOGUE` with its stated estimator and trial budget and prints the
same table, where every row must read ``VIOLATED``.

Estimators: the Gaussian-DP estimator (Nasr et al. 2023) for targets whose every release is an
unsampled Gaussian (``noise_family == "gaussian"``); the claimed-curve test (:mod:`audits.fdp_curve`)
for other targets that carry a privacy event — subsampled, composed or clipped releases, whose
curve comes certified from dpcore's PLD (solver rows get the event their solver reports,
:func:`audits.targets.with_solver_event`); Clopper–Pearson (Jagielski, Ullman, Oprea 2020)
otherwise. :func:`audit_all` controls the *family-wise* false-alarm rate: each of its k rows is
run at confidence 1 − (1 − confidence)/k (Bonferroni), so a table of correct implementations shows
any "violated" row with probability ≤ 1 − confidence (5% by default).

**Power.** A row's verdict is ``"no power"`` (not ``"pass"``) when its budget could not have shown
a violation: the rule of :func:`audits.power.label_power`, which :func:`audits.run_audit` applies to every
audit — a pass needs ε_lb > 0 and, for rows with a privacy event, a predicted probability
≥ :data:`audits.power.POWER_THRESHOLD` that an ideal (likelihood-ratio) attack at this budget flags a
release with half the claimed noise (``details["power"]``; ``details["power_basis"]`` says which applied).
Exempt (``targeted=True``): the robustness rows and the norm-stress rows of issue 21
(:data:`audits.solver_targets.NORM_STRESS_NAMES`: the three ``*_dense`` rows and ``dp_gd_tiny``) — each runs
one targeted attack whose correct outcome is ε_lb = 0, and whose power its planted variant shows.

**Budget and time** (trials per side, :data:`MECHANISM_TRIALS`, :data:`SOLVER_TRIALS`): chosen so
that the full run gives the Gaussian-noise and curve-tested solvers ε_lb ≥ 0.3 at a claim of 1 and
finishes in :data:`FULL_SECONDS` on 2 cores (``workers=2``, warm Numba cache), the quick run in
:data:`QUICK_SECONDS`; benchmarks/bench_audits.py measures both (benchmarks/RESULTS.md, "audit all").
A cold Numba cache adds the solvers' first-call compilation once.
"""

from __future__ import annotations

import sys
from typing import Dict, List, Optional, TextIO, Tuple

from dpcore._validation import check_delta, check_open_unit, check_positive

from .planted_bugs import CATALOGUE
from .power import NO_POWER
from .report import AuditResult, format_table
from .robustness_checks import ROBUSTNESS_NAMES, robustness_target
from .runner import run_audit
from .solver_targets import NORM_STRESS_NAMES
from .targets import (
    MECHANISM_NAMES,
    SOLVER_NAMES,
    float_support_target,
    mechanism_target,
    solver_target,
    with_solver_event,
)

__all__ = ["audit_all", "planted_bug_suite", "MECHANISM_TRIALS", "SOLVER_TRIALS", "ROBUSTNESS_TRIALS",
           "FULL_SECONDS", "QUICK_SECONDS", "NO_POWER"]

#: Trials per side (quick, full). Mechanism trials are cheap (vectorised), except the exact
#: discrete Gaussian sampler, which runs a Python loop per draw (both discrete mechanisms share
#: the smaller budget).
MECHANISM_TRIALS = {"default": (5_000, 100_000), "discrete": (1_000, 20_000)}
#: Trials per side (quick, full) per solver, from the cost of one call (benchmarks/bench_audits.py:
#: 0.2–2 ms for most, 6–14 ms for DP-SVRG and noisy mirror descent). The full budgets give the
#: solvers whose canary reaches their claim (audits.solver_targets: tight calibration, Gaussian
#: scores) ε_lb ≥ 0.3 at a claim of 1 — 11 rows at seed 0, the spread over seeds in RESULTS.md
#: "audit all"; the slow solvers and the rows whose claim no canary reaches get what the time
#: budget allows, and say so ("no power").
SOLVER_TRIALS: Dict[str, Tuple[int, int]] = {name: (300, 6_000) for name in SOLVER_NAMES}
SOLVER_TRIALS.update({"output_perturbation_gd": (3_000, 6_000), "phased_dp_sgd": (1_000, 10_000),
                      "dp_srm": (300, 5_000), "adassp": (300, 8_000), "adassp_joint": (300, 6_000),
                      "batched_truncated_mirror_descent": (1_000, 20_000)})
SOLVER_TRIALS.update({name: (1_000, 80_000) for name in ("objective_perturbation", "approximate_minima_perturbation",
                                                         "approx_objective_perturbation")})
# norm-stress rows (issue 21, ~1 ms per call): 1000 trials let the threshold selection pick a separating threshold
# when the clip fails (150 do not, under the Bonferroni level)
SOLVER_TRIALS.update({name: (1_000, 2_000) for name in (
    "noisy_mirror_descent_dense", "batched_truncated_mirror_descent_dense", "shuffled_truncated_mirror_descent_dense",
    "dp_gd_tiny")})
# DP-SVRG (~6 ms per run): ε_lb 0 at 1 000 and at 4 000 runs per side (RESULTS.md "audit all"); its time goes to
# the rows that can show something
SOLVER_TRIALS.update({name: (100, 500) for name in ("dp_svrg", "dp_svrg_pp")})
SOLVER_TRIALS.update({"shuffled_truncated_mirror_descent": (100, 1_000)})
SOLVER_TRIALS.update({"noisy_mirror_descent": (50, 500)})
#: Trials per side (quick, full) of each :mod:`audits.robustness_checks` row (a few ms per call).
ROBUSTNESS_TRIALS = (150, 1_000)
#: Documented wall time (seconds) of the full and quick runs on 2 cores with ``workers=2`` and a warm
#: Numba cache (measured by benchmarks/bench_audits.py; RESULTS.md "audit all")
FULL_SECONDS, QUICK_SECONDS = 300, 60


def _estimator(target) -> str:
    if target.noise_family == "gaussian":
        return "gdp"
    if target.noise_family == "other" and getattr(target, "event", None) is not None:
        return "curve"
    return "clopper-pearson"


def _emit(results: List[AuditResult], title: str, out: Optional[TextIO]) -> None:
    if out is not None:
        print(title, file=out)
        print(format_table(results), file=out)


def _rows(epsilon: float, delta: float, quick: bool) -> List[Tuple[object, int, Optional[int], bool]]:
    """(target, trials per side, batch size, targeted) of every row, in table order. A targeted row
    runs one specific attack whose correct outcome is ε_lb = 0 and whose power is shown by its
    planted variant (:mod:`audits.robustness_checks`), so it is not labelled by power."""
    pick = 0 if quick else 1
    rows: List[Tuple[object, int, Optional[int], bool]] = [
        (mechanism_target(name, epsilon, delta),
         MECHANISM_TRIALS["discrete" if name.startswith("discrete") else "default"][pick], None, False)
        for name in MECHANISM_NAMES]
    rows.append((float_support_target(epsilon, delta), MECHANISM_TRIALS["default"][pick], None, False))
    for name in SOLVER_NAMES:  # the norm-stress rows (issue 21) are targeted attacks, like the robustness rows
        rows.append((with_solver_event(solver_target(name, epsilon, delta)), SOLVER_TRIALS[name][pick], 25,
                     name in NORM_STRESS_NAMES))
    for name in ROBUSTNESS_NAMES:  # issue 13: deterministic default seed, extreme records
        rows.append((robustness_target(name, epsilon, delta), ROBUSTNESS_TRIALS[pick], 25, True))
    return rows


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
        The quick budgets (under :data:`QUICK_SECONDS` on 2 cores; most solver rows then read
        "no power"); the full run (under :data:`FULL_SECONDS`) uses 10⁵ mechanism trials (2·10⁴
        for the exact discrete samplers) and :data:`SOLVER_TRIALS` per solver and side.
    workers : int, optional
        Process-pool size passed to :func:`audits.run_audit` (``None``: in-process; the
        documented times are for 2).
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
        :data:`audits.robustness_checks.ROBUSTNESS_NAMES` (deterministic default seed, extreme
        records). ``verdict`` is ``"violated"``, ``"pass"`` or ``"no power"`` (module docstring);
        ``details["power"]`` holds the predicted power where there is one.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    rows = _rows(epsilon, delta, quick)
    level = (1.0 - check_open_unit("confidence", confidence)) / len(rows)
    results = []
    for target, trials, batch, targeted in rows:
        results.append(run_audit(target, trials, estimator=_estimator(target), confidence=1.0 - level,
                                 workers=workers, seed=seed, progress=progress, batch_size=batch, targeted=targeted))
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
