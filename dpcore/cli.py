"""The ``dpcore`` command line.

Subcommands: ``epsilon``, ``delta``, ``rdp``, ``calibrate``, ``shuffle``, ``compose``; more are contributed by
installed packages through the entry-point group ``dpcore.commands`` (``audits`` adds ``audit``),
so that this module imports nothing above ``dpcore``. Every command prints a readable table, or
with ``--json`` one JSON object. Bad input — including a flag that the other flags would make
ignored or contradict — prints one line on stderr naming the flags and exits with code 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from fractions import Fraction
from importlib.metadata import entry_points
from typing import Any, Dict, List, Optional, Sequence

from . import __version__
from .accounting import ACCOUNTANTS, get_epsilon
from .calibration import calibrate_noise_multiplier, subsampled_gaussian_event
from .events import GaussianEvent, PoissonSampledEvent, ShuffledEvent
from ._validation import check_delta, check_nonnegative, check_positive
from .result import CertificationError, jsonable, round_down

__all__ = ["main", "build_parser"]


class _OneLineParser(argparse.ArgumentParser):
    """argparse parser whose errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def _emit(args: argparse.Namespace, record: Dict[str, Any], title: str) -> None:
    if args.json:
        print(json.dumps(jsonable(record), allow_nan=True))
        return
    print(title)
    width = max(len(k) for k in record)
    for key, value in record.items():
        if key == "rdp":
            print(f"  {'rdp':<{width}}")
            for row in value:
                print(f"    order {row['order']:<10g} {row['value']:.12g}")
        elif key == "details":
            continue
        elif isinstance(value, dict):
            print(f"  {key}")
            inner = max(len(k) for k in value)
            for k, v in value.items():
                print(f"    {k:<{inner}}  {_shown(v)}")
        else:
            print(f"  {key:<{width}}  {_shown(value)}")


def _shown(value: Any) -> str:
    return f"{value:.12g}" if isinstance(value, float) else str(value)


def _privacy_record(result) -> Dict[str, Any]:
    record = {
        "epsilon": result.epsilon,
        "delta": result.delta,
        "relation": result.relation,
        "accountant": result.accountant,
        "method": result.method,
        "order": result.order,
        "precision": result.precision,
        "certified": result.certified,
    }
    if "bounds" in result.details:  # the PLD accountant: [lower, upper] of the reported quantity
        lower, upper = result.details["bounds"]
        record["bounds"] = [lower, upper]
        record["gap"] = result.details["gap"]
    return record


def _sampling(value: str) -> str:
    return value.replace("-", "_")


# ----------------------------------------------------------------------------- commands


def _conflict(flag: str, other: str, why: str) -> ValueError:
    return ValueError(f"{flag} contradicts {other}: {why}")


def _check_sampling_flags(args: argparse.Namespace, sampling_rate: Optional[float]) -> str:
    """The sampling scheme, refusing flags it would ignore or contradict."""
    sampling = _sampling(args.sampling or "poisson")
    if sampling == "none" and sampling_rate is not None and sampling_rate != 1.0:
        raise _conflict(f"--sampling-rate {sampling_rate:g}", "--sampling none",
                        "no sampling means every record is used (pass --sampling-rate 1 or another --sampling)")
    if args.dataset_size is not None and sampling != "without_replacement":
        raise _conflict("--dataset-size", f"--sampling {args.sampling or 'poisson'}",
                        "the dataset size is only used by --sampling without-replacement")
    return sampling


def _check_rdp_flags(args: argparse.Namespace) -> None:
    """--orders / --optimize-order only act through the RDP accountant."""
    if args.accountant not in ("rdp", "auto"):
        for flag, value in (("--orders", args.orders), ("--optimize-order", args.optimize_order)):
            if value is not None:
                raise _conflict(flag, f"--accountant {args.accountant}", "it only applies to the RDP accountant")


def _gaussian_event(args: argparse.Namespace):
    sampling = _check_sampling_flags(args, args.sampling_rate)
    _check_rdp_flags(args)
    return subsampled_gaussian_event(
        args.noise_multiplier, args.sampling_rate, args.steps, sampling=sampling,
        dataset_size=args.dataset_size, relation=args.relation,
    )


def _certification_note(result) -> Optional[str]:
    if result.certified:
        return None
    return f"not applicable: the {result.accountant} result is an exact evaluation rounded up"


def _cmd_epsilon(args: argparse.Namespace) -> int:
    event = _gaussian_event(args)
    result = get_epsilon(event, args.delta, accountant=args.accountant, orders=args.orders,
                         optimize_order=args.optimize_order, certify=args.certify)
    record = {"noise_multiplier": args.noise_multiplier, "sampling_rate": args.sampling_rate,
              "steps": args.steps, **_privacy_record(result)}
    if args.certify and not result.certified:
        record["certification"] = _certification_note(result)
    _emit(args, record, "Privacy of a (subsampled) Gaussian mechanism")
    return 0


def _cmd_delta(args: argparse.Namespace) -> int:
    from .accounting import get_delta

    event = _gaussian_event(args)
    result = get_delta(event, args.epsilon, accountant=args.accountant, orders=args.orders,
                       optimize_order=args.optimize_order)
    record = {"noise_multiplier": args.noise_multiplier, "sampling_rate": args.sampling_rate,
              "steps": args.steps, **_privacy_record(result)}
    _emit(args, record, "Privacy of a (subsampled) Gaussian mechanism")
    return 0


def _cmd_curve(args: argparse.Namespace) -> int:
    from .pld import delta_curve

    sampling = _check_sampling_flags(args, args.sampling_rate)
    event = subsampled_gaussian_event(args.noise_multiplier, args.sampling_rate, args.steps, sampling=sampling,
                                      dataset_size=args.dataset_size, relation=args.relation)
    curve = delta_curve(event, args.epsilons)
    record = {"noise_multiplier": args.noise_multiplier, "sampling_rate": args.sampling_rate, "steps": args.steps,
              "relation": curve.relation, "accountant": "pld",
              "curve": {f"{e:g}": f"[{lo:.6g}, {up:.6g}]" for e, lo, up in
                        zip(curve.epsilon, curve.delta_lower, curve.delta_upper)}}
    if args.json:
        record["curve"] = [{"epsilon": float(e), "delta_lower": float(lo), "delta_upper": float(up)}
                           for e, lo, up in zip(curve.epsilon, curve.delta_lower, curve.delta_upper)]
    _emit(args, record, "Certified delta(epsilon) bounds [lower, upper] (PLD accountant)")
    return 0


def _cmd_rdp(args: argparse.Namespace) -> int:
    from .rdp_accountant import compute_rdp

    base = GaussianEvent(args.noise_multiplier, "add_remove")
    event = base if args.sampling_rate == 1.0 else PoissonSampledEvent(base, args.sampling_rate)
    values = compute_rdp(event, args.orders)
    record = {
        "noise_multiplier": args.noise_multiplier,
        "sampling_rate": args.sampling_rate,
        "relation": "add_remove",
        "method": "poisson-subsampled Gaussian RDP (Mironov, Talwar, Zhang 2019)",
        "rdp": [{"order": float(a), "value": float(v)} for a, v in zip(args.orders, values)],
    }
    _emit(args, record, "Renyi DP of one step")
    return 0


_GAUSSIAN_ONLY = ("sensitivity", "method")
_SUBSAMPLED_ONLY = ("sampling_rate", "steps", "sampling", "dataset_size", "relation", "accountant", "certify")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _cmd_calibrate(args: argparse.Namespace) -> int:
    check_positive("--epsilon", args.epsilon)  # the library's message would name its own target_epsilon
    if args.mechanism == "gaussian":
        for name in _SUBSAMPLED_ONLY:
            if getattr(args, name) is not None:
                raise _conflict(_flag(name), "--mechanism gaussian",
                                "one Gaussian release has no sampling, steps or accountant choice "
                                "(use --mechanism subsampled-gaussian)")
        return _calibrate_gaussian(args)
    for name in _GAUSSIAN_ONLY:
        if getattr(args, name) is not None:
            raise _conflict(_flag(name), f"--mechanism {args.mechanism}", "it only applies with --mechanism gaussian")
    for name in ("sampling_rate", "steps"):
        if getattr(args, name) is None:
            raise ValueError(f"{_flag(name)} is required unless --mechanism gaussian is given")
    sampling = _check_sampling_flags(args, args.sampling_rate)
    accountant = args.accountant or "auto"
    certify = True if args.certify is None else args.certify
    # the printed ε is the returned σ's own (certified) evaluation under the same accountant and grid
    cal = calibrate_noise_multiplier(
        args.epsilon, args.delta, sampling_rate=args.sampling_rate, steps=args.steps,
        sampling=sampling, dataset_size=args.dataset_size, relation=args.relation,
        accountant=accountant, certify=certify,
    )
    privacy = cal.privacy
    record = {"noise_multiplier": cal.value, "target_epsilon": args.epsilon, **_privacy_record(privacy),
              "evaluations": cal.iterations}
    if privacy.certified:
        record["certification"] = privacy.details.get("certification", "recomputed with mpmath")
    elif certify:
        record["certification"] = _certification_note(privacy)
    _emit(args, record, "Noise calibration")
    return 0


def _calibrate_gaussian(args: argparse.Namespace) -> int:
    from .gaussian_mechanism import analytic_gaussian_delta, analytic_gaussian_sigma, classic_gaussian_sigma

    if args.sensitivity is None:
        raise ValueError("--sensitivity is required with --mechanism gaussian")
    if args.method == "classic":
        sigma = classic_gaussian_sigma(args.epsilon, args.delta, args.sensitivity)
        method = "classic Gaussian sigma = sensitivity*sqrt(2 ln(1.25/delta))/epsilon (Dwork & Roth Thm A.1)"
    else:
        sigma = analytic_gaussian_sigma(args.epsilon, args.delta, args.sensitivity)
        method = "analytic Gaussian (Balle & Wang 2018, Thm 8), least sigma"
    achieved = analytic_gaussian_delta(sigma, args.epsilon, args.sensitivity)
    if not achieved <= args.delta:  # the record below says so: never report an unchecked claim
        raise ArithmeticError(f"sigma={sigma!r} gives delta={achieved!r} > --delta {args.delta!r}")
    record = {"sigma": sigma, "epsilon": args.epsilon, "delta": args.delta, "sensitivity": args.sensitivity,
              "achieved_delta": achieved, "method": method,
              "certified": f"exact delta(epsilon; sigma) = {achieved:.6g} <= delta re-checked"}
    _emit(args, record, "Gaussian mechanism calibration")
    return 0


def _cmd_shuffle(args: argparse.Namespace) -> int:
    from .shuffling import shuffle_epsilon

    ShuffledEvent(args.epsilon0, args.n)  # validates
    method = _sampling(args.method)
    eps = shuffle_epsilon(args.epsilon0, args.n, args.delta, method=method)
    record = {"epsilon0": args.epsilon0, "n": args.n, "epsilon": eps, "delta": args.delta,
              "relation": "replace_one",
              "method": f"amplification by shuffling, {method.replace('_', ' ')} (Feldman, McMillan, Talwar 2021)"}
    _emit(args, record, "Amplification by shuffling")
    return 0


def _cmd_compose(args: argparse.Namespace) -> int:
    from .composition import advanced_composition, optimal_composition_epsilon

    if args.method == "drv":
        check_delta("target_delta", args.target_delta)
        check_nonnegative("delta", args.delta)
        # The slack delta' = target - k*delta, computed exactly and rounded down, so that
        # k*delta + delta' <= target holds exactly (float subtraction could overshoot by an ulp).
        slack = Fraction(args.target_delta) - args.count * Fraction(args.delta)
        if not slack > 0:
            raise ValueError(f"--target-delta must exceed count*delta = {args.count * args.delta} for method drv")
        eps, _ = advanced_composition(args.epsilon, args.delta, args.count, round_down(slack))
        delta = args.target_delta
        method = "advanced composition (Dwork, Rothblum, Vadhan 2010)"
    else:
        eps = optimal_composition_epsilon(args.epsilon, args.delta, args.count, args.target_delta)
        delta = args.target_delta
        method = "optimal composition (Kairouz, Oh, Viswanath 2015), exact"
    record = {"epsilon": eps, "delta": delta, "count": args.count, "per_step_epsilon": args.epsilon,
              "per_step_delta": args.delta, "method": method}
    _emit(args, record, f"{args.count}-fold composition")
    return 0


# ----------------------------------------------------------------------------- parser


def _positive_float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if math.isnan(x):
        raise argparse.ArgumentTypeError("NaN is not allowed")
    return x


def _int(text: str) -> int:
    """An integer, also written as an integral float (``1e4``); ``1.5``, ``inf`` and ``nan`` are refused."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value.denominator != 1:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(value)


def _add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def _add_sampling(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sampling", choices=("poisson", "without-replacement", "none"), default=None,
                   help="batch sampling scheme (default poisson)")
    p.add_argument("--dataset-size", type=_int, default=None, help="n, required for without-replacement")
    p.add_argument("--relation", choices=("add_remove", "replace_one"), default=None,
                   help="neighbouring relation (default: add_remove for poisson/none, replace_one without replacement)")


def build_parser() -> argparse.ArgumentParser:
    """The full ``dpcore`` argument parser, including plugin subcommands."""
    parser = _OneLineParser(prog="dpcore", description="Differential-privacy accounting with certified results.")
    parser.add_argument("--version", action="version", version=f"dpcore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)

    for name, target, func in (("epsilon", "delta", _cmd_epsilon), ("delta", "epsilon", _cmd_delta)):
        p = sub.add_parser(name, help=f"{name} of T steps of the (subsampled) Gaussian mechanism at a given {target}")
        p.add_argument("--noise-multiplier", type=_positive_float, required=True, help="sigma / sensitivity")
        p.add_argument("--sampling-rate", type=_positive_float, required=True, help="q in (0, 1]")
        p.add_argument("--steps", type=_int, required=True, help="number of steps T >= 1 (1e4 is accepted)")
        p.add_argument(f"--{target}", type=_positive_float, required=True,
                       help="delta in (0, 1)" if target == "delta" else "epsilon >= 0 (nats)")
        p.add_argument("--accountant", choices=ACCOUNTANTS, default="auto",
                       help="default auto: the smallest valid bound over every accountant")
        p.add_argument("--orders", type=_positive_float, nargs="+", default=None, help="Renyi orders (default grid)")
        p.add_argument("--optimize-order", dest="optimize_order", action="store_true", default=None,
                       help="refine the optimal order continuously (default: on unless --orders is given)")
        p.add_argument("--no-optimize-order", dest="optimize_order", action="store_false",
                       help="evaluate the orders grid only")
        if name == "epsilon":
            p.add_argument("--certify", action="store_true", help="recompute with mpmath and refuse if not confirmed")
        _add_sampling(p)
        _add_json(p)
        p.set_defaults(func=func)

    p = sub.add_parser("curve", help="certified delta(epsilon) bounds of T (subsampled) Gaussian steps (PLD)")
    p.add_argument("--noise-multiplier", type=_positive_float, required=True, help="sigma / sensitivity")
    p.add_argument("--sampling-rate", type=_positive_float, required=True, help="q in (0, 1]")
    p.add_argument("--steps", type=_int, required=True, help="number of steps T >= 1 (1e4 is accepted)")
    p.add_argument("--epsilons", type=_positive_float, nargs="+", required=True, help="epsilon values >= 0 (nats)")
    _add_sampling(p)
    _add_json(p)
    p.set_defaults(func=_cmd_curve)

    p = sub.add_parser("rdp", help="Renyi DP of one Poisson-subsampled Gaussian step")
    p.add_argument("--noise-multiplier", type=_positive_float, required=True)
    p.add_argument("--sampling-rate", type=_positive_float, required=True)
    p.add_argument("--orders", type=_positive_float, nargs="+", required=True, help="orders alpha > 1")
    _add_json(p)
    p.set_defaults(func=_cmd_rdp)

    p = sub.add_parser("calibrate", help="least noise meeting a target (epsilon, delta)")
    p.add_argument("--epsilon", type=_positive_float, required=True)
    p.add_argument("--delta", type=_positive_float, required=True)
    p.add_argument("--mechanism", choices=("subsampled-gaussian", "gaussian"), default="subsampled-gaussian",
                   help="gaussian: one Gaussian release of a query with --sensitivity (analytic calibration)")
    p.add_argument("--sensitivity", type=_positive_float, default=None, help="l2 sensitivity (with --mechanism gaussian)")
    p.add_argument("--method", choices=("analytic", "classic"), default=None,
                   help="with --mechanism gaussian (default analytic)")
    p.add_argument("--sampling-rate", type=_positive_float, default=None)
    p.add_argument("--steps", type=_int, default=None, help="number of steps T >= 1 (1e4 is accepted)")
    p.add_argument("--accountant", choices=ACCOUNTANTS, default=None, help="default auto")
    certify = p.add_mutually_exclusive_group()
    certify.add_argument("--certify", dest="certify", action="store_true", default=None,
                         help="recompute the final epsilon with mpmath (the default)")
    certify.add_argument("--no-certify", dest="certify", action="store_false",
                         help="skip the high-precision recomputation of the final epsilon")
    _add_sampling(p)
    _add_json(p)
    p.set_defaults(func=_cmd_calibrate)

    p = sub.add_parser("shuffle", help="central epsilon of n shuffled epsilon0-DP local reports")
    p.add_argument("--epsilon0", type=_positive_float, required=True)
    p.add_argument("--n", type=_int, required=True)
    p.add_argument("--delta", type=_positive_float, required=True)
    p.add_argument("--method", choices=("numeric", "closed-form"), default="numeric")
    _add_json(p)
    p.set_defaults(func=_cmd_shuffle)

    p = sub.add_parser("compose", help="k-fold composition of an (epsilon, delta)-DP mechanism")
    p.add_argument("--epsilon", type=_positive_float, required=True)
    p.add_argument("--delta", type=_positive_float, required=True)
    p.add_argument("--count", type=_int, required=True)
    p.add_argument("--target-delta", type=_positive_float, required=True)
    p.add_argument("--method", choices=("drv", "optimal"), default="optimal")
    _add_json(p)
    p.set_defaults(func=_cmd_compose)

    for ep in entry_points(group="dpcore.commands"):
        ep.load()(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``dpcore`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        return int(args.func(args) or 0)
    except CertificationError as exc:
        sys.stderr.write(f"dpcore: certification failed: {exc}\n")
        return 1
    except ArithmeticError as exc:  # a numerical failure is reported, never papered over
        sys.stderr.write(f"dpcore: numerical error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}\n")
        return 1
    except (ValueError, TypeError) as exc:  # includes UnsupportedEventError
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"dpcore: error: {message}\n")
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
