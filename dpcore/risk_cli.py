"""``dpcore risk`` and ``dpcore calibrate --max-tpr T --at-fpr F``: certified attack risk on the command line.

::

    dpcore risk --noise-multiplier S (--sampling-rate Q | --sampling none) --steps T [--fpr F [F ...]] [--delta D]
                [--fpr-floor X] [--sampling ...] [--dataset-size N] [--relation ...] [--plot PATH] [--json]
    dpcore calibrate --max-tpr T --at-fpr F --sampling-rate Q (--steps N | --noise-multiplier S)
                [--sampling ...] [--dataset-size N] [--relation ...] [--json]

``risk`` prints certified bounds on the TPR of the best membership-inference attack at each FPR
(either direction), the attack advantage, μ-GDP and the PLD ε at ``--delta`` (:func:`dpcore.risk.risk`);
``--json`` prints one object with ``fpr``, ``tpr_lower``, ``tpr_upper`` (lists) and the rest;
``--plot PATH`` draws the certified curve against the (ε, δ) and μ-GDP curves (PNG, PDF or SVG by
the suffix; an existing path is refused, never overwritten). The calibration mode of ``calibrate``
returns the least noise multiplier (given ``--steps``) or the most steps (given
``--noise-multiplier``) whose certified TPR at ``--at-fpr`` is ≤ ``--max-tpr``
(:func:`dpcore.risk.calibrate_risk`). Registered by one call in :func:`dpcore.cli.build_parser`.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Dict

__all__ = ["register", "add_calibrate_flags", "run_calibrate", "check_plot_path", "save_figure"]

_PLOT_FORMATS = (".png", ".pdf", ".svg")
#: flags of ``calibrate`` that only the (ε, δ) calibration uses
_EPSILON_FLAGS = ("epsilon", "delta", "sensitivity", "method", "accountant", "certify")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_plot_path(path: str, flag: str = "--plot") -> str:
    """A new file in an existing directory with a known image suffix (never overwrite anything);
    a ``ValueError`` naming ``flag`` otherwise."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in _PLOT_FORMATS:
        raise ValueError(f"{flag} must end in one of {', '.join(_PLOT_FORMATS)}; got {path!r}")
    if os.path.lexists(path):
        raise ValueError(f"{flag} {path!r} exists; refusing to overwrite it (give a new file name)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{flag} {path!r}: directory {folder!r} does not exist")
    return path


def save_figure(ax: Any, path: str, flag: str = "--plot") -> None:
    """Write the figure of the matplotlib Axes ``ax`` to the new file ``path`` (format by suffix)."""
    try:
        with open(path, "xb") as fh:  # exclusive: a file created meanwhile is not overwritten
            ax.figure.savefig(fh, format=os.path.splitext(path)[1][1:].lower(), dpi=150, bbox_inches="tight")
    except FileExistsError:
        raise ValueError(f"{flag} {path!r} exists; refusing to overwrite it (give a new file name)") from None
    except OSError as exc:
        raise ValueError(f"{flag} {path!r}: {exc.strerror or exc}") from None


def _cmd_risk(args: argparse.Namespace) -> int:
    from . import cli
    from ._validation import check_delta, check_open_unit
    from .accounting import get_epsilon
    from .calibration import subsampled_gaussian_event
    from .pld.tradeoff import check_fpr
    from .risk import risk

    sampling = cli._check_sampling_flags(args, args.sampling_rate)
    delta = check_delta("--delta", args.delta)
    fpr = check_fpr("--fpr", args.fpr)
    if not check_open_unit("--fpr-floor", args.fpr_floor) < 0.5:
        raise ValueError(f"--fpr-floor must be in (0, 0.5); got {args.fpr_floor!r}")
    plot = None if args.plot is None else check_plot_path(args.plot)
    event = subsampled_gaussian_event(args.noise_multiplier, args.sampling_rate, args.steps, sampling=sampling,
                                      dataset_size=args.dataset_size, relation=args.relation)
    report = risk(event, fpr, fpr_floor=args.fpr_floor)
    eps = get_epsilon(event, delta, accountant="pld").epsilon
    record: Dict[str, Any] = {
        "noise_multiplier": args.noise_multiplier, "sampling_rate": args.sampling_rate, "steps": args.steps,
        "relation": report.relation,
        "fpr": report.fpr.tolist(), "tpr_lower": report.tpr_lower.tolist(), "tpr_upper": report.tpr_upper.tolist(),
        "advantage": list(report.advantage), "gdp_mu": list(report.gdp_mu), "gdp_exact": report.gdp_exact,
        "gdp_statement": report.gdp_statement, "epsilon": eps, "delta": delta,
        "method": report.details["method"], "discretization": report.details["discretization"],
    }
    if plot is not None:
        from .risk import plot_tradeoff

        save_figure(plot_tradeoff(report, epsilon=eps, delta=delta), plot)
        record["plot"] = plot
    if args.json:
        cli.emit(args, record, "")
        return 0
    print(f"Certified attack risk of a (subsampled) Gaussian mechanism ({report.relation}; any attack, "
          "either direction)")
    for key in ("noise_multiplier", "sampling_rate", "steps"):
        print(f"  {key:<18}{cli._shown(record[key])}")
    print(f"  {'fpr':<18}{'tpr_lower':<16}tpr_upper")
    for a, lo, up in zip(report.fpr, report.tpr_lower, report.tpr_upper):
        print(f"  {a:<18.6g}{lo:<16.8g}{up:.8g}")
    print(f"  {'advantage':<18}[{report.advantage[0]:.8g}, {report.advantage[1]:.8g}]  (max TPR - FPR)")
    print(f"  {'gdp_mu':<18}[{report.gdp_mu[0]:.8g}, {report.gdp_mu[1]:.8g}]")
    print(f"  {'gdp':<18}{report.gdp_statement}")
    print(f"  {'epsilon':<18}{eps:.8g}  (PLD, at delta {delta:g})")
    if plot is not None:
        print(f"  {'plot':<18}{plot}")
    return 0


def _fprs(text: str) -> float:
    from .cli import real_type

    return real_type(text)


def register(subparsers: Any) -> None:
    """Add the ``risk`` command to ``dpcore``'s subparsers.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``add_subparsers()`` object of the ``dpcore`` parser.
    """
    from .cli import _add_sampling, add_output_options, delta_type, integer_type, real_type
    from .risk import DEFAULT_FPRS

    p = subparsers.add_parser(
        "risk", help="certified TPR of the best membership-inference attack at given FPRs, advantage, mu-GDP",
        description="Certified attack risk of T steps of the (subsampled) Gaussian mechanism (PLD trade-off curve).")
    p.add_argument("--noise-multiplier", type=real_type, required=True, help="sigma / sensitivity, in (0, inf)")
    p.add_argument("--sampling-rate", type=real_type, default=None,
                   help="q in (0, 1] (required unless --sampling none, which is rate 1)")
    p.add_argument("--steps", type=integer_type, required=True, help="number of steps T >= 1 (1e4 is accepted)")
    p.add_argument("--fpr", type=_fprs, nargs="+", default=list(DEFAULT_FPRS),
                   help="false-positive rates in [0, 1] (default 1e-4 1e-3 1e-2 0.1)")
    p.add_argument("--delta", type=delta_type, default=1e-5,
                   help="delta in (0, 1) of the epsilon printed alongside (default 1e-5)")
    p.add_argument("--fpr-floor", type=real_type, default=1e-6,
                   help="least FPR covered by the mu-GDP upper bound, in (0, 0.5) (default 1e-6)")
    p.add_argument("--plot", default=None, metavar="PATH",
                   help="draw the certified curve against the (epsilon, delta) and mu-GDP curves into a new "
                        ".png/.pdf/.svg file (needs matplotlib; an existing file is refused)")
    _add_sampling(p, loaders=False)
    add_output_options(p)
    p.set_defaults(func=_cmd_risk)


def add_calibrate_flags(p: argparse.ArgumentParser) -> None:
    """Add ``--max-tpr``, ``--at-fpr`` and ``--noise-multiplier`` to the ``calibrate`` parser."""
    from .cli import real_type

    p.add_argument("--max-tpr", type=real_type, default=None,
                   help="calibrate to an attack-risk target: certified TPR <= this at --at-fpr (in (FPR, 1))")
    p.add_argument("--at-fpr", type=real_type, default=None, help="the FPR of --max-tpr, in (0, 1)")
    p.add_argument("--noise-multiplier", type=real_type, default=None,
                   help="with --max-tpr: calibrate the number of steps for this sigma/sensitivity instead of sigma")


def run_calibrate(args: argparse.Namespace) -> int:
    """The ``calibrate`` command in risk mode (``--max-tpr`` and ``--at-fpr`` given)."""
    from . import cli
    from .risk import calibrate_risk

    for name in _EPSILON_FLAGS:
        if getattr(args, name, None) is not None:
            raise cli.conflict(_flag(name), "--max-tpr", "an attack-risk target replaces the (epsilon, delta) target")
    if args.mechanism != "subsampled-gaussian":
        raise cli.conflict(f"--mechanism {args.mechanism}", "--max-tpr", "the attack-risk calibration is for the "
                           "(subsampled) Gaussian run of --sampling-rate and --steps / --noise-multiplier")
    for name in ("max_tpr", "at_fpr") + (() if args.sampling == "none" else ("sampling_rate",)):
        if getattr(args, name) is None:
            raise ValueError(f"{_flag(name)} is required to calibrate to an attack-risk target")
    if (args.steps is None) == (args.noise_multiplier is None):
        raise ValueError("give exactly one of --steps (to calibrate the noise multiplier) and --noise-multiplier "
                         "(to calibrate the steps) with --max-tpr")
    sampling = cli._check_sampling_flags(args, args.sampling_rate, need_steps=args.noise_multiplier is None)
    try:
        cal = calibrate_risk(args.max_tpr, args.at_fpr, sampling_rate=args.sampling_rate, steps=args.steps,
                             noise_multiplier=args.noise_multiplier, sampling=sampling,
                             dataset_size=args.dataset_size, relation=args.relation)
    except ValueError as exc:  # name the flags, not the library's arguments
        message = str(exc)
        for name in ("max_tpr", "at_fpr", "noise_multiplier", "steps", "sampling_rate", "dataset_size"):
            message = message.replace(name, _flag(name))
        raise ValueError(message) from None
    record = {cal.parameter: cal.value, "max_tpr": cal.max_tpr, "at_fpr": cal.at_fpr, "tpr_upper": cal.tpr_upper,
              "sampling_rate": args.sampling_rate,
              "steps" if cal.parameter == "noise_multiplier" else "noise_multiplier":
                  args.steps if cal.parameter == "noise_multiplier" else args.noise_multiplier,
              "relation": cal.relation, "evaluations": cal.evaluations,
              "certification": "tpr_upper is the certified PLD trade-off bound of the returned value "
                               "(either direction of attack), <= max_tpr"}
    cli.emit(args, record, "Calibration to an attack-risk target")
    return 0
