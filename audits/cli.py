"""``dpcore audit``: audit a mechanism, a solver, or everything, from the command line.

Contributed to the ``dpcore`` command through the entry-point group ``dpcore.commands``
(``audit = "audits.cli:register"``)::

    dpcore audit mechanism NAME --epsilon E --delta D --trials N [--estimator auto|clopper-pearson|gdp|one-run]
                                [--confidence 0.95] [--workers K] [--planted BUG] [--seed S] [--json]
                                [--results PATH] [--batch-size B] [--plot PATH] [--quiet]
    dpcore audit solver NAME ...          (same options; NAME as in ``algorithms``)
    dpcore audit all [--quick]            (table of every mechanism and solver)

Integer options accept integral floats (``--trials 1e4``). Progress goes to stderr (a bar on a
terminal, a line every few seconds otherwise); ``--quiet`` turns it off.

Exit codes: 0 when every audited claim passes, 1 when one is violated, 3 when a single audit
(``mechanism`` / ``solver``) reads "no power" — it rejected nothing, but its budget could not have shown a
violation (ε_lb = 0, or a predicted power below ½ against half the claimed noise, :mod:`audits.power`), so it
is no evidence and must not pass a CI gate the way a real pass does; rerun with more ``--trials``. (``audit
all`` exits 0 with "no power" rows: its table names them and counts them in its last line.) 2 on bad input (a
``ValueError`` naming the flag; ``dpcore``'s ``main`` prints it as one line), 130 on Ctrl-C (one
line saying how many batches the ``--results`` file keeps: the same command resumes). Bad input includes
a claim outside :data:`EPSILON_RANGE`, a target that cannot be calibrated to the claim, and a
``--results`` path that is missing its directory, is a directory, is unwritable, is locked by a
running audit, or is anything but a results file of the same audit (refused, never overwritten;
see :mod:`audits.results_file`). ``--batch-size`` (default
:data:`audits.runner.DEFAULT_BATCH_SIZE`) is the unit of resuming: a killed audit rerun with the same
arguments loses at most the batches that were in flight. The heavy
imports (targets, solvers) happen when a command runs, not when the parser is built.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, List, Optional, Sequence

from dpcore._validation import check_choice, check_delta, check_open_unit, check_positive, check_positive_int
from dpcore.cli import add_output_options, delta_type, integer_type, main as dpcore_main, real_type, stages
from dpcore.risk_cli import check_plot_path, save_figure

from .report import NO_POWER, AuditResult, format_table

__all__ = ["register", "main"]

ESTIMATOR_CHOICES = ("auto", "clopper-pearson", "gdp", "one-run", "curve", "fdp-one-run")
# ``--plot PATH`` (two-sample estimators) draws :func:`audits.plots.plot_curve_test` for ``curve`` and
# :func:`audits.plots.plot_roc` otherwise into a new image file (never over an existing one).
#: Claimed ε an audit can test: below 1e-3 no feasible audit (≤ 10⁸ trials) resolves the claim and
#: some calibrations take minutes; above 100 no attack with ≤ 10⁸ trials can refute it
#: (ε_lb ≤ ln(trials) for Clopper–Pearson).
EPSILON_RANGE = (1e-3, 100.0)


def _targets():
    """The target catalogue (:mod:`audits.targets`), imported on first use."""
    return importlib.import_module("audits.targets")


def _auto_estimator(target: Any, estimator: str) -> str:
    """``auto``: Gaussian-DP for Gaussian-noise claims (Nasr et al. 2023), the claimed-curve test for
    other claims with a privacy event (:mod:`audits.fdp`), Clopper–Pearson otherwise."""
    if estimator != "auto":
        return estimator
    if target.noise_family == "gaussian":
        return "gdp"
    return "curve" if target.noise_family == "other" and getattr(target, "event", None) is not None else \
        "clopper-pearson"


def _print_result(result: AuditResult, as_json: bool) -> None:
    if as_json:
        print(result.to_json())
        return
    print(f"Audit of {result.target} ({result.relation}, statistic: {result.statistic})")
    rows = [
        ("claimed epsilon", f"{result.claimed_epsilon:.6g}"),
        ("delta", f"{result.delta:.3g}"),
        ("estimator", result.estimator),
        ("trials", str(result.trials)),
        ("confidence", f"{result.confidence:g}"),
        ("eps_lower", f"{result.eps_lower:.6g}"),
        ("p_value", f"{result.p_value:.3g}"),
        ("verdict", result.verdict),
    ]
    if result.verdict == NO_POWER:
        threshold = importlib.import_module("audits.power").POWER_THRESHOLD
        why = ("eps_lower = 0" if result.eps_lower <= 0 else
               f"predicted power {result.details['power']:.2g} < {threshold} against half the claimed noise")
        rows.append(("why", f"no evidence at this budget ({why}); rerun with more --trials"))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _bounded_int(name: str, value: Any, lo: int, hi: int) -> int:
    n = check_positive_int(name, value, minimum=lo)
    if n > hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}]; got {value!r}")
    return n


def _cmd_single(args: argparse.Namespace) -> int:
    runner = importlib.import_module("audits.runner")
    ResultsFileError = importlib.import_module("audits.results_file").ResultsFileError

    tg = _targets()
    names = tg.MECHANISM_NAMES if args.kind == "mechanism" else tg.SOLVER_NAMES
    name = check_choice(f"{args.kind} NAME", args.name, names)
    epsilon = check_positive("--epsilon", args.epsilon)
    if not EPSILON_RANGE[0] <= epsilon <= EPSILON_RANGE[1]:
        raise ValueError(f"--epsilon must be in [{EPSILON_RANGE[0]:g}, {EPSILON_RANGE[1]:g}] (claims an audit can "
                         f"test); got {args.epsilon!r}")
    delta = check_delta("--delta", args.delta)
    trials = _bounded_int("--trials", args.trials, 4, runner.MAX_TRIALS)
    confidence = check_open_unit("--confidence", args.confidence)
    if confidence < 0.5:
        raise ValueError(f"--confidence must be in [0.5, 1); got {args.confidence!r}")
    workers = None if args.workers is None else _bounded_int("--workers", args.workers, 1, runner.MAX_WORKERS)
    seed = check_positive_int("--seed", args.seed, minimum=0)
    batch_size = None if args.batch_size is None else _bounded_int("--batch-size", args.batch_size, 1, trials)
    planted = None if args.planted is None else check_choice("--planted", args.planted, tg.PLANTED_BUGS)
    plot = None if args.plot is None else check_plot_path(args.plot)
    build = tg.mechanism_target if args.kind == "mechanism" else tg.solver_target
    try:
        with stages(args).stage(f"building the audit target {name} (calibrating it to the claim)"):
            target = build(name, epsilon, delta, planted=planted)
    except (ValueError, ArithmeticError) as exc:
        given = f"--epsilon {args.epsilon!r}, --delta {args.delta!r}" + (f", --planted {planted}" if planted else "")
        raise ValueError(f"cannot build the audit target of {args.kind} {name} at {given}: "
                         f"{_first_line(exc)}") from None
    if args.kind == "solver" and args.estimator in ("auto", "curve", "fdp-one-run"):
        target = tg.with_solver_event(target)  # the event the solver reports, for the curve estimators
    estimator = _auto_estimator(target, args.estimator)
    if plot is not None and estimator in ("one-run", "fdp-one-run"):
        raise ValueError(f"--plot draws two-sample audits (clopper-pearson, gdp, curve), not --estimator {estimator}")
    if estimator == "gdp" and target.noise_family != "gaussian":
        raise ValueError(
            f"--estimator gdp needs a Gaussian-noise claim; {target.name} has noise family "
            f"{target.noise_family!r} (use "
            + ("curve — its privacy event's certified trade-off curve — fdp-one-run, "
               if getattr(target, "event", None) is not None else "")
            + "clopper-pearson or one-run)"
        )
    stress = importlib.import_module("audits.solver_targets").NORM_STRESS_NAMES  # targeted: no power rule
    targeted = args.kind == "solver" and name in stress
    try:
        result = runner.run_audit(target, trials, estimator=estimator, confidence=confidence, workers=workers,
                                  seed=seed, progress=args.progress is not False, results_path=args.results,
                                  batch_size=batch_size, targeted=targeted)
    except ResultsFileError as exc:
        raise ValueError("--results" + str(exc)[len("results_path"):]) from None
    except OSError as exc:  # e.g. the disk filled up while appending to the results file
        raise ValueError(f"--results {args.results!r}: {exc.strerror or exc}") from None
    except runner.AuditInterrupted as exc:  # dpcore's main prints it as one line
        kept = (f"the {exc.saved} of {exc.batches} batches done are in --results {args.results}: rerun the same "
                "command to resume" if args.results is not None else
                "nothing was kept (give --results PATH to make an audit resumable)")
        raise KeyboardInterrupt(kept) from None
    if plot is not None:  # the tested points against the claimed curve, or the ROC against the (ε, δ) region
        plots = importlib.import_module("audits.plots")
        save_figure((plots.plot_curve_test if result.estimator == "curve" else plots.plot_roc)(result), plot)
    _print_result(result, args.json)
    if result.verdict == NO_POWER:
        return 3
    return 1 if result.violated else 0


def _cmd_all(args: argparse.Namespace) -> int:
    audit_all = importlib.import_module("audits.library_audit").audit_all
    max_workers = importlib.import_module("audits.runner").MAX_WORKERS
    workers = None if args.workers is None else _bounded_int("--workers", args.workers, 1, max_workers)
    seed = check_positive_int("--seed", args.seed, minimum=0)
    results: List[AuditResult] = audit_all(quick=args.quick, workers=workers, seed=seed,
                                           progress=args.progress is not False, out=None)
    if args.json:
        print("[" + ", ".join(r.to_json() for r in results) + "]")
    else:
        print(format_table(results))
        bad = [r.target for r in results if r.violated]
        weak = sum(r.verdict == "no power" for r in results)
        print(f"{len(results) - len(bad) - weak} of {len(results)} claims pass, {weak} rows have no power at this "
              f"budget (no evidence either way), {len(bad)} violated" + (f": {', '.join(bad)}" if bad else ""))
    return 1 if any(r.violated for r in results) else 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workers", type=integer_type, default=None, help="process-pool size (default: in-process)")
    p.add_argument("--seed", type=integer_type, default=0, help="root seed of the trials, an integer >= 0 (default 0)")
    p.add_argument("--progress", action="store_true", default=None,
                   help="show progress on stderr (the default; a bar on a terminal, needs tqdm)")
    add_output_options(p)


def register(subparsers: Any) -> None:
    """Add the ``audit`` command (with ``mechanism``, ``solver``, ``all``) to ``dpcore``'s subparsers.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``add_subparsers()`` object of the ``dpcore`` parser.
    """
    audit = subparsers.add_parser(
        "audit",
        help="empirically audit a claimed (epsilon, delta)",
        description="Run a mechanism or solver on neighbouring datasets, attack the outputs and test the claim.",
    )
    sub = audit.add_subparsers(dest="audit_command", required=True)
    for kind, what in (("mechanism", "a noise mechanism"), ("solver", "a DP-ERM solver")):
        p = sub.add_parser(kind, help=f"audit {what}")
        p.add_argument("name", metavar="NAME", help=f"{kind} name")
        p.add_argument("--epsilon", type=real_type, required=True,
                       help=f"claimed epsilon in [{EPSILON_RANGE[0]:g}, {EPSILON_RANGE[1]:g}] (the target is "
                            "calibrated to it)")
        p.add_argument("--delta", type=delta_type, required=True, help="claimed delta in (0, 1), at least 2.2e-308")
        p.add_argument("--trials", type=integer_type, required=True,
                       help="runs per side (canaries for one-run), an integer >= 4 (1e4 is accepted)")
        p.add_argument("--estimator", choices=ESTIMATOR_CHOICES, default="auto",
                       help="auto: gdp for Gaussian noise, curve for other claims with a privacy event, "
                            "clopper-pearson otherwise")
        p.add_argument("--confidence", type=real_type, default=0.95,
                       help="confidence of eps_lower, in [0.5, 1) (default 0.95)")
        p.add_argument("--planted", default=None, metavar="BUG",
                       help="audit a deliberately broken variant (a name of audits.targets.PLANTED_BUGS)")
        p.add_argument("--results", default=None, metavar="PATH",
                       help="results file to append batches to and resume from (refused unless new, empty, or "
                            "written by this same audit; locked while running)")
        p.add_argument("--batch-size", type=integer_type, default=None, metavar="B",
                       help="trials per batch, the unit of parallel work and of resuming (default 1000)")
        p.add_argument("--plot", default=None, metavar="PATH",
                       help="draw the audit (curve: tested points against the claimed curve; else the ROC) into a "
                            "new .png/.pdf/.svg file (needs matplotlib)")
        _common(p)
        p.set_defaults(func=_cmd_single, kind=kind, parameter_flags={"results_path": "--results"})
    p = sub.add_parser("all", help="audit every mechanism and solver; exit 1 if any claim is violated")
    p.add_argument("--quick", action="store_true", help="small trial budgets")
    _common(p)
    p.set_defaults(func=_cmd_all)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``audit`` standalone: ``main(["mechanism", "gaussian", ...])``; returns the exit code."""
    return dpcore_main(["audit", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
