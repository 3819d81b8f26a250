"""The ``dpcore`` command line.

Subcommands: ``epsilon``, ``delta``, ``curve``, ``rdp``, ``calibrate``, ``shuffle``, ``compose``;
more are contributed by installed packages through the entry-point group ``dpcore.commands``
(``audits`` adds ``audit``), and ``calibrate --mechanism`` choices through ``dpcore.calibrations``
(``mechanisms`` adds ``laplace``, ``l2-laplace``, ``discrete-laplace``, ``discrete-gaussian``,
``generalized-gaussian``; see :class:`Calibration`), so that this module imports nothing above
``dpcore``.

Output: a readable table, or with ``--json`` one strict JSON object (RFC 8259: no ``Infinity`` or
``NaN`` literals; an infinite value is written as the string ``"inf"``, see
:func:`dpcore.result.jsonable`). Progress: a stage still running after
:data:`dpcore._progress.STAGE_DELAY` seconds gets a line on stderr (audits: a bar), off with
``--quiet``.

Errors: bad input prints one line on stderr and exits with code 2. The line names the flag the
user typed, never the library's parameter: library messages are rewritten through the command's
flag table (:func:`in_flag_terms`). A flag given twice, two flags that set the same thing
(``--optimize-order --no-optimize-order``) and a flag that the others would make ignored or
contradict (``--sampling-rate 0.01 --sampling none``) are refused the same way. Ctrl-C prints one
line and exits with code 130.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from importlib.metadata import entry_points
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import __version__, risk_cli
from ._progress import Stages
from ._validation import MIN_DELTA, SUBNORMAL_DELTA_REASON, check_delta, check_nonnegative, check_positive
from .accounting import ACCOUNTANTS, get_epsilon
from .calibration import calibrate_noise_multiplier, certify_calibration, subsampled_gaussian_event
from .events import GaussianEvent, PoissonSampledEvent, ShuffledEvent
from .result import CertificationError, jsonable, round_down
from .selection_cli import add_tuning_flags, calibrate_tuned, tuning_requested

__all__ = ["main", "build_parser", "Calibration", "iter_commands", "option_actions", "in_flag_terms",
           "flags_given", "real_type", "integer_type", "delta_type", "add_output_options", "stages", "emit",
           "conflict"]

#: Exit code of a command ended by Ctrl-C (SIGINT), as shells report it (128 + 2).
EXIT_INTERRUPTED = 130


# ----------------------------------------------------------------------------- parser machinery


class _GivenOnce(argparse.Action):
    """Mixin of every option action: refuses a flag given twice, and a second flag setting the same
    destination (``--certify --no-certify``); records the flags given in ``namespace._flags_given``."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        if option_string is None:  # a positional argument
            super().__call__(parser, namespace, values, option_string)
            return
        given = flags_given(namespace)
        first = given.get(self.dest)
        if first == option_string:
            parser.error(f"{option_string} is given twice; give it once")
        if first is not None:
            parser.error(f"{option_string} contradicts {first}; give one of them")
        given[self.dest] = option_string
        setattr(namespace, "_flags_given", given)
        super().__call__(parser, namespace, values, option_string)


class _OneLineParser(argparse.ArgumentParser):
    """argparse parser whose errors are one line on stderr and exit code 2, and whose options may be
    given once each (see :class:`_GivenOnce`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("store", "store_const", "store_true", "store_false"):
            base = self._registry_get("action", name)
            self.register("action", name, type(f"Once{base.__name__}", (_GivenOnce, base), {}))
        self.register("action", None, self._registry_get("action", "store"))

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def flags_given(args: argparse.Namespace) -> Dict[str, str]:
    """The options the user typed, as ``{destination: flag}`` (in the order given)."""
    return dict(getattr(args, "_flags_given", {}))


def iter_commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[Tuple[str, argparse.ArgumentParser]]:
    """``(command, parser)`` of every leaf command, e.g. ``("audit mechanism", parser)``."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
        return
    for name, sub in subs[0].choices.items():
        yield from iter_commands(sub, f"{prefix} {name}".strip())


def option_actions(parser: argparse.ArgumentParser) -> List[argparse.Action]:
    """The option (``--flag``) actions of ``parser``, without ``--help``."""
    return [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]


def _flag_table(parser: argparse.ArgumentParser) -> Dict[str, str]:
    table: Dict[str, str] = {}
    for action in option_actions(parser):
        table.setdefault(action.dest, action.option_strings[-1])
    return table


def real_type(text: str) -> float:
    """A real number (``inf`` allowed, the command checks ranges); ``nan`` is refused."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {_echo(text)}") from None
    if math.isnan(x):
        raise argparse.ArgumentTypeError("NaN is not allowed")
    return x


def delta_type(text: str) -> float:
    """A δ: a number (:func:`real_type`) that is 0 or at least :data:`dpcore._validation.MIN_DELTA` (the
    rule of :func:`dpcore._validation.check_delta`); the command checks the rest of its range."""
    x = real_type(text)
    if 0 < abs(x) < MIN_DELTA:
        raise argparse.ArgumentTypeError(f"{SUBNORMAL_DELTA_REASON}: give at least {MIN_DELTA!r} (or 0 where "
                                         f"allowed), got {_echo(text)}")
    return x


def _echo(text: str) -> str:
    """``text`` quoted for an error message, shortened if long."""
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text)} characters)"


def integer_type(text: str) -> int:
    """An integer, also written as an integral float (``1e4``) of magnitude ≤ 1.8e308;
    ``1.5``, ``inf`` and ``nan`` are refused."""
    try:
        magnitude = abs(float(text))  # first: Fraction("1e1000000000") would build 10**(10**9)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {_echo(text)}") from None
    if magnitude > sys.float_info.max:
        raise argparse.ArgumentTypeError(f"expected an integer of magnitude at most {sys.float_info.max:.6g}, "
                                         f"got {_echo(text)}")
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):  # nan
        raise argparse.ArgumentTypeError(f"expected an integer, got {_echo(text)}") from None
    if value.denominator != 1:
        raise argparse.ArgumentTypeError(f"expected an integer, got {_echo(text)}")
    return int(value)


_IDENTIFIER = re.compile(r"(?<![\w\-.'\"])([A-Za-z_][A-Za-z0-9_]*)(=?)")
_OPERATORS = "^*/+-<>=!"
_LONG_INTEGER = re.compile(r"(?<![\w.])(-?)(\d{19,})")


def _short_integer(match: "re.Match[str]") -> str:
    sign, digits = match.groups()
    return f"{sign}{digits[0]}.{digits[1:4]}e+{len(digits) - 1} ({len(digits)} digits)"


def in_flag_terms(message: str, flags: Mapping[str, str]) -> str:
    """``message`` (a library error) with the parameter names of ``flags`` replaced by their flags.

    A name is replaced where it is the subject (the first word), a keyword (``name=value`` becomes
    ``--flag value``), a term of a formula (next to one of ``^*/+-<>=!``) or unmistakably an
    identifier (it contains ``_``); a plain word elsewhere in the prose (``"the smallest delta"``)
    is kept. Integers of 19 and more digits are shortened.
    """
    def replace(match: "re.Match[str]") -> str:
        name, equals = match.groups()
        flag = flags.get(name)
        start, end = match.start(), match.end()
        before, after = message[:start].rstrip()[-1:], message[end:].lstrip()[:1]
        in_formula = (before != "" and before in _OPERATORS) or (after != "" and after in _OPERATORS)
        if flag is None or not (start == 0 or equals or "_" in name or in_formula):
            return match.group(0)
        return f"{flag} " if equals else flag

    return _LONG_INTEGER.sub(_short_integer, _IDENTIFIER.sub(replace, message))


def _command_flags(args: argparse.Namespace) -> Dict[str, str]:
    """Library parameter name -> flag, for the command ``args`` belongs to."""
    return {**getattr(args, "_flag_table", {}), **flags_given(args), **getattr(args, "parameter_flags", {})}


def add_output_options(p: argparse.ArgumentParser) -> None:
    """``--json`` and ``--quiet``, which every command takes."""
    p.add_argument("--json", action="store_true", default=None, help="print one JSON object instead of a table "
                   "(strict JSON: an infinite value is the string \"inf\")")
    p.add_argument("--quiet", dest="progress", action="store_false", default=None,
                   help="print no progress on stderr (by default a stage still running after a few seconds "
                        "gets a line)")


def stages(args: argparse.Namespace) -> Stages:
    """Progress lines of this command (none with ``--quiet``)."""
    return Stages(getattr(args, "progress", None) is not False)


def conflict(flag: str, other: str, why: str) -> ValueError:
    """The refusal of ``flag``, which ``other`` makes ignored or contradicts."""
    return ValueError(f"{flag} contradicts {other}: {why}")


# ----------------------------------------------------------------------------- output


def emit(args: argparse.Namespace, record: Dict[str, Any], title: str) -> None:
    """Print ``record`` as a table under ``title``, or as one strict JSON object with ``--json``."""
    if args.json:
        print(json.dumps(jsonable(record), allow_nan=False))
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


# ----------------------------------------------------------------------------- commands


#: --sampling values described by a data loader (--dataset-size, --batch-size, --epochs | --steps;
#: dpcore.sampling): the rate and steps are derived from them, never guessed
_LOADER_SAMPLERS = ("random-allocation", "truncated-poisson", "shuffle", "with-replacement")


def _loader_event(args: argparse.Namespace, noise_multiplier: float):
    """(event, schedule) of --sampling <loader sampler> (dpcore.sampling.sampler_event)."""
    from .sampling import sampler_event

    if args.sampling_rate is not None:
        raise conflict("--sampling-rate", f"--sampling {args.sampling}",
                       "the rate is derived from --batch-size / --dataset-size")
    if args.max_batch_size is not None and args.sampling != "truncated-poisson":
        raise conflict("--max-batch-size", f"--sampling {args.sampling}", "it only applies to truncated-poisson")
    if args.relation is not None:
        raise conflict("--relation", f"--sampling {args.sampling}", "the sampler's analysis fixes the relation")
    if args.sampling == "random-allocation" and getattr(args, "accountant", None) == "auto":
        optimize = {True: "--optimize-order", False: "--no-optimize-order"}.get(getattr(args, "optimize_order", None))
        given = (["--orders"] if getattr(args, "orders", None) is not None else []) + ([optimize] if optimize else [])
        if given:
            raise conflict(given[0], "--sampling random-allocation", "auto reports the PLD bound (the RDP accountant "
                           "has no amplification for random allocation), which has no Renyi orders; give "
                           "--accountant rdp to evaluate those orders")
    for flag, value in (("--dataset-size", args.dataset_size), ("--batch-size", args.batch_size)):
        if value is None:
            raise ValueError(f"{flag} is required with --sampling {args.sampling}")
    if (args.epochs is None) == (args.steps is None):
        raise ValueError(f"give exactly one of --epochs and --steps with --sampling {args.sampling}")
    args.parameter_flags = {**getattr(args, "parameter_flags", {}),  # the composition's count
                            "count": "--steps" if args.steps is not None else "--epochs"}
    return sampler_event(args.sampling, noise_multiplier, dataset_size=args.dataset_size, batch_size=args.batch_size,
                         epochs=args.epochs, steps=args.steps, max_batch_size=args.max_batch_size)


def _check_sampling_flags(args: argparse.Namespace, sampling_rate: Optional[float], need_steps: bool = True) -> str:
    """The sampling scheme, refusing flags it would ignore or contradict (``need_steps``: --steps is
    required, as everywhere but a calibration of the steps)."""
    for flag, value in (("--batch-size", getattr(args, "batch_size", None)), ("--epochs", getattr(args, "epochs", None)),
                        ("--max-batch-size", getattr(args, "max_batch_size", None))):  # loader samplers' flags
        if value is not None:
            raise conflict(flag, f"--sampling {args.sampling or 'poisson'}",
                           "it only applies to --sampling " + "|".join(_LOADER_SAMPLERS))
    sampling = (args.sampling or "poisson").replace("-", "_")
    if sampling == "none" and sampling_rate is None:  # no sampling: every record, rate 1 (no flag needed)
        sampling_rate = args.sampling_rate = 1.0
    for flag, value in (("--sampling-rate", sampling_rate), ("--steps", args.steps if need_steps else 0)):
        if value is None:
            raise ValueError(f"{flag} is required with --sampling {args.sampling or 'poisson'}")
    if sampling == "none" and sampling_rate != 1.0:
        raise conflict(f"--sampling-rate {sampling_rate:g}", "--sampling none",
                       "no sampling means every record is used (pass --sampling-rate 1 or another --sampling)")
    if args.dataset_size is not None and sampling != "without_replacement":
        raise conflict("--dataset-size", f"--sampling {args.sampling or 'poisson'}",
                       "the dataset size is only used by --sampling without-replacement")
    args.parameter_flags = {**getattr(args, "parameter_flags", {}), "count": "--steps"}  # the composition's count
    return sampling


def _gaussian_event(args: argparse.Namespace):
    sampling = _check_sampling_flags(args, args.sampling_rate)
    return subsampled_gaussian_event(
        args.noise_multiplier, args.sampling_rate, args.steps, sampling=sampling,
        dataset_size=args.dataset_size, relation=args.relation,
    )


def _certification_note(result) -> Optional[str]:
    if result.certified:
        return None
    return f"not applicable: the {result.accountant} result is an exact evaluation rounded up"


def _cmd_epsilon(args: argparse.Namespace) -> int:
    if args.sampling in _LOADER_SAMPLERS:
        return _epsilon_loader(args)
    event = _gaussian_event(args)
    with stages(args).stage(f"computing epsilon ({args.accountant} accountant)"):
        result = get_epsilon(event, args.delta, accountant=args.accountant, orders=args.orders,
                             optimize_order=args.optimize_order, certify=bool(args.certify))
    record = {"noise_multiplier": args.noise_multiplier, "sampling_rate": args.sampling_rate,
              "steps": args.steps, **_privacy_record(result)}
    if args.certify and not result.certified:
        record["certification"] = _certification_note(result)
    emit(args, record, "Privacy of a (subsampled) Gaussian mechanism")
    return 0


def _epsilon_loader(args: argparse.Namespace) -> int:
    """``epsilon --sampling <loader sampler>``: the certified ε, the sampler named in the output;
    for shuffle also the lower bound and the Poisson number (labelled: not a guarantee)."""
    event, schedule = _loader_event(args, args.noise_multiplier)
    with stages(args).stage(f"computing epsilon ({args.accountant} accountant, {args.sampling} batches)"):
        result = get_epsilon(event, args.delta, accountant=args.accountant, orders=args.orders,
                             optimize_order=args.optimize_order, certify=bool(args.certify))
    record = {"noise_multiplier": args.noise_multiplier, **schedule, **_privacy_record(result)}
    if args.sampling == "shuffle":
        from .shuffle_bounds import shuffle_bounds

        if schedule["steps"] % schedule["num_batches"]:
            raise ValueError("--steps must be a whole number of epochs for --sampling shuffle (or give --epochs)")
        with stages(args).stage("computing the shuffle lower bound and the Poisson number"):
            bounds = shuffle_bounds(args.noise_multiplier, schedule["num_batches"], schedule["units"], args.delta)
        record["epsilon_lower_bound"] = bounds.lower
        record["epsilon_if_poisson_not_a_guarantee"] = bounds.poisson
        record["note"] = ("epsilon is the valid bound (no amplification) for replace_one neighbours, the noise "
                          "multiplier relative to twice the clip norm (adding a record moves the batch boundaries: "
                          "no add_remove bound is claimed); the true epsilon of the shuffled run is at least "
                          "epsilon_lower_bound; the Poisson number (add_remove, same noise) is not a guarantee for "
                          "shuffling")
    emit(args, record, f"Privacy of DP-SGD with {args.sampling} batches")
    return 0


def _cmd_delta(args: argparse.Namespace) -> int:
    from .accounting import get_delta

    if args.sampling in _LOADER_SAMPLERS:
        event, schedule = _loader_event(args, args.noise_multiplier)
        head = {"noise_multiplier": args.noise_multiplier, **schedule}
    else:
        event = _gaussian_event(args)
        head = {"noise_multiplier": args.noise_multiplier, "sampling_rate": args.sampling_rate, "steps": args.steps}
    with stages(args).stage(f"computing delta ({args.accountant} accountant)"):
        result = get_delta(event, args.epsilon, accountant=args.accountant, orders=args.orders,
                           optimize_order=args.optimize_order)
    record = {**head, **_privacy_record(result)}
    emit(args, record, "Privacy of a (subsampled) Gaussian mechanism")
    return 0


def _cmd_curve(args: argparse.Namespace) -> int:
    from .pld import delta_curve

    event = _gaussian_event(args)
    with stages(args).stage("composing the privacy-loss distribution"):
        curve = delta_curve(event, args.epsilons)
    record = {"noise_multiplier": args.noise_multiplier, "sampling_rate": args.sampling_rate, "steps": args.steps,
              "relation": curve.relation, "accountant": "pld",
              "curve": {f"{e:g}": f"[{lo:.6g}, {up:.6g}]" for e, lo, up in
                        zip(curve.epsilon, curve.delta_lower, curve.delta_upper)}}
    if args.json:
        record["curve"] = [{"epsilon": float(e), "delta_lower": float(lo), "delta_upper": float(up)}
                           for e, lo, up in zip(curve.epsilon, curve.delta_lower, curve.delta_upper)]
    emit(args, record, "Certified delta(epsilon) bounds [lower, upper] (PLD accountant)")
    return 0


def _cmd_rdp(args: argparse.Namespace) -> int:
    from .rdp_accountant import compute_rdp

    base = GaussianEvent(args.noise_multiplier, "add_remove")
    event = base if args.sampling_rate == 1.0 else PoissonSampledEvent(base, args.sampling_rate)
    with stages(args).stage("computing the Renyi DP curve"):
        values = compute_rdp(event, args.orders)
    record = {
        "noise_multiplier": args.noise_multiplier,
        "sampling_rate": args.sampling_rate,
        "relation": "add_remove",
        "method": "poisson-subsampled Gaussian RDP (Mironov, Talwar, Zhang 2019)",
        "rdp": [{"order": float(a), "value": float(v)} for a, v in zip(args.orders, values)],
    }
    emit(args, record, "Renyi DP of one step")
    return 0


@dataclass(frozen=True)
class Calibration:
    """One choice of ``dpcore calibrate --mechanism``.

    Packages contribute more through the entry-point group ``dpcore.calibrations``: the entry point
    is a function ``f(parser) -> sequence of Calibration`` that may first add its own options (with
    help text) to the ``calibrate`` parser.

    Attributes
    ----------
    name : str
        The value of ``--mechanism``.
    help : str
        One line for ``--help``.
    flags : tuple of str
        The ``calibrate`` flags it reads besides ``--epsilon``; any other flag given with it is
        refused as ignored.
    required : tuple of str
        Those of ``flags`` that must be given.
    run : callable
        ``run(args) -> (title, record)``: calibrates (``args.epsilon`` is already checked to be in
        (0, inf)), re-checks the guarantee of the result, and returns what to print.
    parameter_flags : dict
        Library parameter names its errors may use that are not flag destinations
        (``{"norm": "--sensitivity-norm"}``).
    """

    name: str
    help: str
    flags: Tuple[str, ...]
    required: Tuple[str, ...]
    run: Callable[[argparse.Namespace], Tuple[str, Dict[str, Any]]]
    parameter_flags: Mapping[str, str] = field(default_factory=dict)


#: Flags of ``calibrate`` that every mechanism accepts.
_CALIBRATE_COMMON = ("--epsilon", "--mechanism", "--json", "--quiet")


def _cmd_calibrate(args: argparse.Namespace) -> int:
    if args.max_tpr is not None or args.at_fpr is not None:  # an attack-risk target (dpcore.risk_cli)
        return risk_cli.run_calibrate(args)
    if args.epsilon is None:
        raise ValueError("--epsilon is required (or give --max-tpr and --at-fpr for an attack-risk target)")
    check_positive("--epsilon", args.epsilon)
    chosen: Calibration = args.calibrations[args.mechanism]
    args.parameter_flags = {**args.parameter_flags, **dict(chosen.parameter_flags)}
    allowed = set(_CALIBRATE_COMMON) | set(chosen.flags)
    for flag in flags_given(args).values():
        if flag not in allowed:
            raise conflict(flag, f"--mechanism {args.mechanism}",
                           f"that mechanism does not use it (it reads {', '.join(('--epsilon',) + chosen.flags)})")
    for flag in chosen.required:
        if getattr(args, flag[2:].replace("-", "_")) is None:
            raise ValueError(f"{flag} is required with --mechanism {args.mechanism}")
    title, record = chosen.run(args)
    emit(args, record, title)
    return 0


def _calibrate_loader(args: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    """``calibrate --sampling <loader sampler>``: least σ for the run the loader describes."""
    from .sampling import calibrate_sampler_noise

    _loader_event(args, 1.0)  # flag checks
    accountant = args.accountant or "auto"
    with stages(args).stage(f"calibrating the noise multiplier ({accountant} accountant, {args.sampling} batches)"):
        cal = calibrate_sampler_noise(args.sampling, args.epsilon, args.delta, dataset_size=args.dataset_size,
                                      batch_size=args.batch_size, epochs=args.epochs, steps=args.steps,
                                      accountant=accountant, max_batch_size=args.max_batch_size)
    if args.certify is not False:  # the printed ε: the returned σ's certified evaluation, same accountant and grid
        with stages(args).stage(f"certifying the {accountant} epsilon in high precision"):
            cal = certify_calibration(cal, lambda z: _loader_event(args, z)[0], accountant)
    _, schedule = _loader_event(args, cal.value)
    privacy = cal.privacy
    record = {"noise_multiplier": cal.value, "target_epsilon": args.epsilon, **schedule, **_privacy_record(privacy),
              "evaluations": cal.iterations}
    return f"Noise calibration for DP-SGD with {args.sampling} batches", record


def _calibrate_subsampled_gaussian(args: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    if args.sampling in _LOADER_SAMPLERS:
        if tuning_requested(args):
            raise conflict("--tune-candidates", f"--sampling {args.sampling}",
                           "the tuning calibration takes --sampling-rate and --steps")
        return _calibrate_loader(args)
    sampling = _check_sampling_flags(args, args.sampling_rate)
    accountant = args.accountant or "auto"
    certify = True if args.certify is None else args.certify
    if tuning_requested(args):  # the budget split between tuning runs and their selection (dpcore.selection_cli)
        with stages(args).stage("calibrating the noise multiplier of each tuning run"):
            return "Noise calibration with tuning", calibrate_tuned(args, sampling, args.accountant or "rdp", certify)
    # the printed ε is the returned σ's own (certified) evaluation under the same accountant and grid
    with stages(args).stage(f"calibrating the noise multiplier ({accountant} accountant)"):
        cal = calibrate_noise_multiplier(
            args.epsilon, args.delta, sampling_rate=args.sampling_rate, steps=args.steps,
            sampling=sampling, dataset_size=args.dataset_size, relation=args.relation, accountant=accountant,
        )
    if certify:
        with stages(args).stage(f"certifying the {accountant} epsilon in high precision"):
            cal = certify_calibration(cal, lambda s: subsampled_gaussian_event(
                s, args.sampling_rate, args.steps, sampling=sampling, dataset_size=args.dataset_size,
                relation=args.relation), accountant)
    privacy = cal.privacy
    record = {"noise_multiplier": cal.value, "target_epsilon": args.epsilon, **_privacy_record(privacy),
              "evaluations": cal.iterations}
    if privacy.certified:
        record["certification"] = privacy.details.get("certification", "recomputed with mpmath")
    elif certify:
        record["certification"] = _certification_note(privacy)
    return "Noise calibration", record


def _calibrate_gaussian(args: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    from .gaussian_mechanism import analytic_gaussian_delta, analytic_gaussian_sigma, classic_gaussian_sigma

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
              "relation": "the one --sensitivity holds under", "achieved_delta": achieved, "method": method,
              "certified": f"exact delta(epsilon; sigma) = {achieved:.6g} <= delta re-checked"}
    return "Gaussian mechanism calibration", record


_BUILTIN_CALIBRATIONS = (
    Calibration("subsampled-gaussian", "T steps of a (Poisson / without-replacement) subsampled Gaussian: "
                "the least noise multiplier sigma/sensitivity (the default)",
                ("--delta", "--sampling-rate", "--steps", "--accountant", "--certify", "--no-certify", "--sampling",
                 "--dataset-size", "--relation", "--tune-candidates", "--tune-distribution", "--tune-shape",
                 "--batch-size", "--epochs", "--max-batch-size"),
                ("--delta",), _calibrate_subsampled_gaussian,
                {"target_epsilon": "--epsilon", "target_delta": "--delta"}),
    Calibration("gaussian", "one Gaussian release of a query with l2 --sensitivity: the least sigma",
                ("--delta", "--sensitivity", "--method"), ("--delta", "--sensitivity"), _calibrate_gaussian),
)


def _cmd_shuffle(args: argparse.Namespace) -> int:
    from .shuffling import shuffle_epsilon

    ShuffledEvent(args.epsilon0, args.n)  # validates
    method = args.method.replace("-", "_")
    with stages(args).stage("computing the central epsilon of the shuffled reports"):
        eps = shuffle_epsilon(args.epsilon0, args.n, args.delta, method=method)
    record = {"epsilon0": args.epsilon0, "n": args.n, "epsilon": eps, "delta": args.delta,
              "relation": "replace_one",
              "method": f"amplification by shuffling, {method.replace('_', ' ')} (Feldman, McMillan, Talwar 2021)"}
    emit(args, record, "Amplification by shuffling")
    return 0


def _cmd_compose(args: argparse.Namespace) -> int:
    from .composition import advanced_composition, optimal_composition_epsilon

    with stages(args).stage(f"composing {args.count} mechanisms ({args.method})"):
        if args.method == "drv":
            check_delta("target_delta", args.target_delta)
            check_nonnegative("delta", args.delta)
            # The slack delta' = target - k*delta, computed exactly and rounded down, so that
            # k*delta + delta' <= target holds exactly (float subtraction could overshoot by an ulp).
            slack = Fraction(args.target_delta) - args.count * Fraction(args.delta)
            if not slack > 0:
                raise ValueError(f"--target-delta must exceed --count * --delta = {args.count * args.delta} "
                                 "for --method drv")
            eps, _ = advanced_composition(args.epsilon, args.delta, args.count, round_down(slack))
            method = "advanced composition (Dwork, Rothblum, Vadhan 2010)"
        else:
            eps = optimal_composition_epsilon(args.epsilon, args.delta, args.count, args.target_delta)
            method = "optimal composition (Kairouz, Oh, Viswanath 2015), exact"
    record = {"epsilon": eps, "delta": args.target_delta, "count": args.count, "per_step_epsilon": args.epsilon,
              "per_step_delta": args.delta, "method": method}
    emit(args, record, f"{args.count}-fold composition")
    return 0


# ----------------------------------------------------------------------------- parser


def _add_sampling(p: argparse.ArgumentParser, loaders: bool = True) -> None:
    """--sampling and the flags of its schemes; ``loaders``: also the data-loader samplers (dpcore.sampling)."""
    p.add_argument("--sampling", choices=("poisson", "without-replacement", "none") + (_LOADER_SAMPLERS if loaders else ()),
                   default=None,
                   help="batch sampling scheme (default poisson)" + (
                       "; random-allocation (balls-in-bins), truncated-poisson, shuffle and with-replacement take "
                       "--dataset-size, --batch-size and --epochs or --steps (the rate and steps are derived from "
                       "them); shuffle, with-replacement and without-replacement are accounted under replace_one, "
                       "--noise-multiplier relative to twice the clip norm" if loaders else ""))
    p.add_argument("--dataset-size", type=integer_type, default=None,
                   help="n, the number of records (--sampling without-replacement: batch = q*n; the loader samplers)")
    if loaders:
        p.add_argument("--batch-size", type=integer_type, default=None, help="loader batch size b (loader samplers)")
        p.add_argument("--epochs", type=integer_type, default=None, help="passes over the data (loader samplers)")
        p.add_argument("--max-batch-size", type=integer_type, default=None,
                       help="truncated-poisson cap B on the batch size (default ceil(1.2 b))")
    p.add_argument("--relation", choices=("add_remove", "replace_one"), default=None,
                   help="neighbouring relation (default: add_remove for poisson/none, replace_one without replacement)")


def _add_gaussian_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("--noise-multiplier", type=real_type, required=True,
                   help="sigma / l2 sensitivity of each step, in (0, inf)")
    p.add_argument("--sampling-rate", type=real_type, default=None,
                   help="q in (0, 1]: Poisson rate, or batch/n without replacement (1: every record); required "
                        "unless a loader --sampling or --sampling none is given")
    p.add_argument("--steps", type=integer_type, default=None,
                   help="number of steps T >= 1 (1e4 is accepted; required unless a loader --sampling gets --epochs)")


def _add_orders(p: argparse.ArgumentParser) -> None:
    p.add_argument("--orders", type=real_type, nargs="+", default=None,
                   help="Renyi orders > 1 of the RDP accountant (default: its grid; with --accountant rdp or auto)")
    p.add_argument("--optimize-order", dest="optimize_order", action="store_true", default=None,
                   help="refine the optimal order continuously (default: on unless --orders is given)")
    p.add_argument("--no-optimize-order", dest="optimize_order", action="store_false",
                   help="evaluate the orders grid only")


def _add_calibrate(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="least noise meeting a target (epsilon, delta) or attack risk (--max-tpr)",
                       description="The least noise of a mechanism meeting a target (epsilon, delta), re-checked; "
                                   "or of a subsampled Gaussian run meeting an attack-risk target (--max-tpr).")
    p.add_argument("--epsilon", type=real_type, default=None,
                   help="target epsilon in (0, inf), nats (required unless --max-tpr and --at-fpr are given)")
    p.add_argument("--delta", type=delta_type, default=None,
                   help="target delta in (0, 1), at least 2.2e-308 (not for the pure epsilon-DP mechanisms)")
    p.add_argument("--sensitivity", type=real_type, default=None,
                   help="sensitivity of the query (gaussian: l2; see each mechanism)")
    p.add_argument("--method", choices=("analytic", "classic"), default=None,
                   help="with --mechanism gaussian: analytic (default, least sigma) or classic (Dwork & Roth)")
    p.add_argument("--sampling-rate", type=real_type, default=None,
                   help="subsampled-gaussian: q in (0, 1], Poisson rate or batch/n")
    p.add_argument("--steps", type=integer_type, default=None,
                   help="subsampled-gaussian: number of steps T >= 1 (1e4 is accepted)")
    p.add_argument("--accountant", choices=ACCOUNTANTS, default=None,
                   help="accountant of the calibration (default auto: the smallest valid bound)")
    certify = p.add_mutually_exclusive_group()
    certify.add_argument("--certify", dest="certify", action="store_true", default=None,
                         help="subsampled-gaussian: recompute the final epsilon with mpmath (the default)")
    certify.add_argument("--no-certify", dest="certify", action="store_false",
                         help="subsampled-gaussian: skip the high-precision recomputation of the final epsilon")
    _add_sampling(p)
    add_tuning_flags(p, real_type)
    risk_cli.add_calibrate_flags(p)
    add_output_options(p)
    calibrations = {c.name: c for c in _BUILTIN_CALIBRATIONS}
    for ep in entry_points(group="dpcore.calibrations"):
        for c in ep.load()(p):
            calibrations[c.name] = c
    p.add_argument("--mechanism", choices=tuple(calibrations), default="subsampled-gaussian",
                   help="; ".join(f"{c.name}: {c.help}" for c in calibrations.values()))
    p.set_defaults(func=_cmd_calibrate, calibrations=calibrations, parameter_flags={})


def build_parser() -> argparse.ArgumentParser:
    """The full ``dpcore`` argument parser, including plugin subcommands."""
    parser = _OneLineParser(prog="dpcore", description="Differential-privacy accounting with certified results.")
    parser.add_argument("--version", action="version", version=f"dpcore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)

    for name, target, func in (("epsilon", "delta", _cmd_epsilon), ("delta", "epsilon", _cmd_delta)):
        p = sub.add_parser(name, help=f"{name} of T steps of the (subsampled) Gaussian mechanism at a given {target}")
        _add_gaussian_run(p)
        p.add_argument(f"--{target}", type=delta_type if target == "delta" else real_type, required=True,
                       help="delta in (0, 1), at least 2.2e-308" if target == "delta" else "epsilon >= 0 (nats)")
        p.add_argument("--accountant", choices=ACCOUNTANTS, default="auto",
                       help="default auto: the smallest valid bound over every accountant")
        _add_orders(p)
        if name == "epsilon":
            p.add_argument("--certify", action="store_true", default=None,
                           help="recompute with mpmath and refuse if not confirmed")
        _add_sampling(p)
        add_output_options(p)
        p.set_defaults(func=func)

    p = sub.add_parser("curve", help="certified delta(epsilon) bounds of T (subsampled) Gaussian steps (PLD)")
    _add_gaussian_run(p)
    p.add_argument("--epsilons", type=real_type, nargs="+", required=True, help="epsilon values >= 0 (nats)")
    _add_sampling(p, loaders=False)
    add_output_options(p)
    p.set_defaults(func=_cmd_curve)

    p = sub.add_parser("rdp", help="Renyi DP of one Poisson-subsampled Gaussian step")
    p.add_argument("--noise-multiplier", type=real_type, required=True,
                   help="sigma / l2 sensitivity, in (0, inf)")
    p.add_argument("--sampling-rate", type=real_type, required=True, help="Poisson rate q in (0, 1]")
    p.add_argument("--orders", type=real_type, nargs="+", required=True, help="orders alpha > 1")
    add_output_options(p)
    p.set_defaults(func=_cmd_rdp)

    _add_calibrate(sub)

    p = sub.add_parser("shuffle", help="central epsilon of n shuffled epsilon0-DP local reports")
    p.add_argument("--epsilon0", type=real_type, required=True, help="epsilon of each local randomizer, in (0, inf)")
    p.add_argument("--n", type=integer_type, required=True, help="number of users n >= 2 (1e6 is accepted)")
    p.add_argument("--delta", type=delta_type, required=True,
                   help="delta of the central guarantee, in (0, 1), at least 2.2e-308")
    p.add_argument("--method", choices=("numeric", "closed-form"), default="numeric",
                   help="numeric (default, tighter) or closed-form (Feldman, McMillan, Talwar 2021, Thm 3.1)")
    add_output_options(p)
    p.set_defaults(func=_cmd_shuffle)

    p = sub.add_parser("compose", help="k-fold composition of an (epsilon, delta)-DP mechanism")
    p.add_argument("--epsilon", type=real_type, required=True, help="epsilon of each mechanism, in (0, inf)")
    p.add_argument("--delta", type=delta_type, required=True, help="delta of each mechanism, 0 or in [2.2e-308, 1)")
    p.add_argument("--count", type=integer_type, required=True, help="number of mechanisms k >= 1")
    p.add_argument("--target-delta", type=delta_type, required=True,
                   help="delta of the composition, in (0, 1), at least 2.2e-308")
    p.add_argument("--method", choices=("drv", "optimal"), default="optimal",
                   help="optimal (default, exact; Kairouz, Oh, Viswanath 2015) or drv (advanced composition)")
    add_output_options(p)
    p.set_defaults(func=_cmd_compose)

    risk_cli.register(sub)
    for ep in entry_points(group="dpcore.commands"):
        ep.load()(sub)
    for _, leaf in iter_commands(parser):
        leaf.set_defaults(_flag_table=_flag_table(leaf))
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``dpcore`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)

    def say(kind: str, exc: BaseException) -> None:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"dpcore: {kind}{in_flag_terms(text, _command_flags(args))}\n")

    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt as exc:  # one line, no traceback; an audit says what it kept
        sys.stderr.write(f"dpcore: interrupted{': ' + str(exc) if str(exc) else ''}\n")
        return EXIT_INTERRUPTED
    except CertificationError as exc:
        say("certification failed: ", exc)
        return 1
    except ArithmeticError as exc:  # a numerical failure is reported, never papered over
        say("numerical error: ", exc)
        return 1
    except (ValueError, TypeError) as exc:  # includes UnsupportedEventError
        say("error: ", exc)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
